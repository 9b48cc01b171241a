// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * classic2ebpf: the command line face of libc2e. check, dump, asm, disasm
 * and run (one input or a batch) over classic seccomp filter files, and,
 * with --abi rfc2012 / --compat, over filters of the 2012 proposal.
 *
 * Exit status: 0 success, 1 a filter that seccomp(2) would refuse, 2 usage
 * or input errors (unknown flags, unreadable or truncated files, bad text,
 * bad numbers), 3 translation or kernel failures. Every error is one line
 * on stderr starting with "classic2ebpf: "; a usage error (the command
 * line itself) adds the --help hint as a second line, the sfilter
 * programs' convention (loader/cli/cli.h, kept here on its own: this
 * layer links nothing of theirs). "-" is stdin (FILE, --inputs) or
 * stdout (-o).
 */
#include "c2e.h"
#include "sf_version.h"
#include "grow.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <seccomp.h>

#define EXIT_INVALID 1
#define EXIT_USAGE   2
#define EXIT_KERNEL  3

static const char usage_text[] =
"usage: classic2ebpf COMMAND [ARGS]\n"
"       classic2ebpf --help | --version\n"
"\n"
"Classic seccomp filters, checked exactly as seccomp(2) checks them and run as\n"
"eBPF. A FILE holds raw struct sock_filter[] bytes (what libseccomp's\n"
"seccomp_export_bpf() writes) or the text form that disasm prints; a file\n"
"with a NUL byte is raw; - is stdin.\n"
"\n"
"commands:\n"
"  check FILE             print \"FILE: valid, N instructions\", or the first\n"
"                         rule seccomp(2) would refuse it for (exit 1)\n"
"  dump FILE              classic listing, translated eBPF listing, and the\n"
"                         instruction counts: classic, ours, the kernel's own\n"
"                         conversion\n"
"  asm FILE -o OUT        assemble the text form into raw bytes (OUT -: stdout)\n"
"  disasm FILE            print the text form (also of filters the kernel\n"
"                         refuses)\n"
"  run FILE... (--nr N | --inputs TSV) [options]\n"
"                         run a stack of filters, attach order (newest last),\n"
"                         and print the value the kernel acts on:\n"
"                         \"0xXXXXXXXX ACTION\" or \"0xXXXXXXXX ACTION(data)\"\n"
"\n"
"run options:\n"
"  --nr N                 syscall number: decimal, 0x hex, or a name resolved\n"
"                         for --arch (getpid, __NR_getpid, SYS_getpid)\n"
"  --arch A               seccomp_data.arch: hex (0x optional), x86_64 or\n"
"                         i386; default x86_64 (c000003e)\n"
"  --ip HEX               instruction pointer (0x optional); default 0\n"
"  --args A0,..,A5        up to six arguments, decimal or 0x hex; missing ones\n"
"                         are 0\n"
"  --engine kernel|interp kernel (default): translate the stack to one eBPF\n"
"                         program, load it once, BPF_PROG_TEST_RUN it;\n"
"                         interp: the reference interpreter\n"
"  --inputs TSV           batch mode (\"-\" reads stdin): one input per line,\n"
"                         hex fields (0x optional) separated by tabs or blanks:\n"
"                           nr arch ip a0 a1 a2 a3 a4 a5\n"
"                         trailing fields may be left out (arch then is --arch,\n"
"                         the rest 0). One output line per input line: blank\n"
"                         lines and lines starting with '#' print an empty line,\n"
"                         so the output stays line-aligned with the input.\n"
"\n"
"filter ABI (every command):\n"
"  --abi seccomp|rfc2012|rfc2012-i386\n"
"                         seccomp (default): struct seccomp_data, the kernel's\n"
"                         rules. rfc2012: the 2012 PR_ATTACH_SECCOMP_FILTER\n"
"                         proposal, a filter over the x86-64 user_regs_struct\n"
"                         (216 bytes) that allows a call by returning 216;\n"
"                         rfc2012-i386: the i386 layout (68 bytes)\n"
"  --compat               the same as --abi rfc2012-i386\n"
"  --regs R=V,..          run, RFC ABIs: register values by field name\n"
"                         (orig_rax=39,rdi=1 or, --compat, orig_eax=20,ebx=1),\n"
"                         decimal or 0x hex; unnamed registers are 0 but\n"
"                         rax/eax, which holds -ENOSYS at syscall entry. --nr\n"
"                         sets orig_rax/orig_eax (names resolved for x86_64 or\n"
"                         i386). RFC runs print the verdict and each filter's\n"
"                         raw return: \"0x7fff0000 ALLOW (returned 216)\"\n"
"\n"
"exit status: 0 success, 1 a filter seccomp(2) would refuse, 2 usage or input\n"
"error, 3 translation or kernel failure.\n";

/* "classic2ebpf: " and the message on stderr, then tail. */
static void say(const char *tail, const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("classic2ebpf: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(tail, stderr);
}

static void die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("\n", fmt, ap);
	va_end(ap);
	exit(status);
}

/* A usage error: the line, then where the usage is; exit 2. */
static void usage_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("\nTry 'classic2ebpf --help' for more information.\n", fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

/* ---- numbers ----------------------------------------------------------- */

/* Decimal, or hex with 0x; optionally negative (two's complement). */
static bool parse_int(const char *s, int bits, uint64_t *v)
{
	uint64_t max = bits == 64 ? UINT64_MAX : (1ULL << bits) - 1;
	unsigned long long u;
	bool neg = false;
	char *end;
	int base = 10;

	if (*s == '-') {
		neg = true;
		s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s))
		return false;
	errno = 0;
	u = strtoull(s, &end, base);
	if (*end || errno)
		return false;
	if (!neg && u > max)
		return false;
	if (neg && u > (max >> 1) + 1)
		return false;
	*v = neg ? (0 - (uint64_t)u) & max : u;
	return true;
}

/* Hex with the 0x optional. */
static bool parse_hex(const char *s, int bits, uint64_t *v)
{
	uint64_t max = bits == 64 ? UINT64_MAX : (1ULL << bits) - 1;
	unsigned long long u;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)*s))
		return false;
	errno = 0;
	u = strtoull(s, &end, 16);
	if (*end || errno || u > max)
		return false;
	*v = u;
	return true;
}

static uint32_t parse_arch(const char *s)
{
	uint64_t v;

	if (!strcasecmp(s, "x86_64") || !strcasecmp(s, "AUDIT_ARCH_X86_64"))
		return C2E_AUDIT_ARCH_X86_64;
	if (!strcasecmp(s, "i386") || !strcasecmp(s, "x86") ||
	    !strcasecmp(s, "AUDIT_ARCH_I386"))
		return C2E_AUDIT_ARCH_I386;
	if (!parse_hex(s, 32, &v))
		usage_fail("bad --arch '%s' (hex, x86_64 or i386)", s);
	return v;
}

static uint32_t parse_nr(const char *s, uint32_t arch)
{
	const char *name = s;
	uint64_t v;
	int nr;

	if (parse_int(s, 32, &v))
		return v;
	if (!strncmp(name, "__NR_", 5))
		name += 5;
	else if (!strncmp(name, "SYS_", 4))
		name += 4;
	if (!*name || !(isalpha((unsigned char)*name) || *name == '_'))
		usage_fail("bad --nr '%s' (a number or a syscall name)", s);
	nr = seccomp_syscall_resolve_name_arch(arch, name);
	if (nr < 0)
		usage_fail("unknown syscall '%s' for arch 0x%08x", name,
		    arch);
	return nr;
}

static void parse_args(const char *s, uint64_t args[6])
{
	char *copy = strdup(s), *tok, *rest;
	int n = 0;

	if (!copy)
		die(EXIT_KERNEL, "out of memory");
	/* strsep, not strtok: "1,,2" is an empty second value, refused,
	 * never two values that shift a2 into a1. */
	for (rest = copy; (tok = strsep(&rest, ",")); n++) {
		if (n == 6)
			usage_fail("--args takes at most 6 values: '%s'", s);
		if (!*tok)
			usage_fail("--args '%s': value %d is empty", s, n + 1);
		if (!parse_int(tok, 64, &args[n]))
			usage_fail("bad number '%s' in --args", tok);
	}
	free(copy);
}

/* ---- files ------------------------------------------------------------- */

struct filter {
	const char *path;
	struct sock_filter *insns;
	size_t len;
};

/* --abi: which data the filters read, for every command. */
static enum c2e_abi abi = C2E_ABI_SECCOMP;

static void load(struct filter *f, const char *path)
{
	struct c2e_error err = { .index = -1 };
	char buf[300];
	int ret;

	f->path = path;
	ret = c2e_load_file_abi(path, abi, &f->insns, &f->len, &err);
	if (!ret)
		return;
	if (err.msg[0] && (ret == -EINVAL || ret == -EFBIG))
		die(EXIT_USAGE, "%s: %s", path, c2e_error_str(&err, buf, sizeof(buf)));
	die(EXIT_USAGE, "%s: %s", path, strerror(-ret));
}

static void validate_or_die(const struct filter *f)
{
	struct c2e_error err = { .index = -1 };
	char buf[300];

	if (c2e_validate_abi(f->insns, f->len, abi, &err))
		die(EXIT_INVALID, "%s: %s", f->path,
		    c2e_error_str(&err, buf, sizeof(buf)));
}

/* ---- commands ---------------------------------------------------------- */

static int cmd_check(const char *path)
{
	struct filter f;

	load(&f, path);
	validate_or_die(&f);
	printf("%s: valid, %zu instruction%s\n", path, f.len,
	       f.len == 1 ? "" : "s");
	free(f.insns);
	return 0;
}

static int cmd_dump(const char *path)
{
	struct c2e_ebpf prog = { 0 };
	struct filter f;
	int ret, kcount;

	load(&f, path);
	printf("; %s: %zu classic instruction%s\n", path, f.len,
	       f.len == 1 ? "" : "s");
	c2e_disasm_classic_abi(f.insns, f.len, abi, stdout);
	validate_or_die(&f);
	ret = c2e_translate_abi(f.insns, f.len, abi, 0, &prog);
	if (ret)
		die(EXIT_KERNEL, "%s: translation failed: %s", path, strerror(-ret));
	printf("; eBPF test frame: %zu instruction%s\n", prog.len,
	       prog.len == 1 ? "" : "s");
	c2e_disasm_ebpf(prog.insns, prog.len, stdout);
	/* The kernel never converted RFC filters: no count to compare. */
	kcount = abi == C2E_ABI_SECCOMP ? c2e_kernel_insn_count(f.insns, f.len) :
		 -EOPNOTSUPP;
	if (kcount == -EOPNOTSUPP)
		printf("; counts: classic %zu, ours %zu, kernel none (%s filters never ran in Linux)\n",
		       f.len, prog.len, c2e_abi_name(abi));
	else if (kcount < 0)
		printf("; counts: classic %zu, ours %zu, kernel ? (%s)\n", f.len,
		       prog.len, strerror(-kcount));
	else
		printf("; counts: classic %zu, ours %zu, kernel %d\n", f.len,
		       prog.len, kcount);
	c2e_ebpf_free(&prog);
	free(f.insns);
	return 0;
}

static int cmd_asm(const char *path, const char *out)
{
	struct c2e_error err = { .index = -1 };
	struct filter f;
	char buf[300];
	int ret;

	load(&f, path);
	ret = c2e_save_raw(out, f.insns, f.len);
	if (ret)
		die(EXIT_USAGE, "%s: %s", out, strerror(-ret));
	/* Writing a filter the kernel refuses is allowed (tests need them),
	 * but worth saying. */
	if (c2e_validate_abi(f.insns, f.len, abi, &err))
		fprintf(stderr, "classic2ebpf: warning: %s: seccomp(2) would refuse it: %s\n",
			path, c2e_error_str(&err, buf, sizeof(buf)));
	free(f.insns);
	return 0;
}

static int cmd_disasm(const char *path)
{
	struct filter f;

	load(&f, path);
	c2e_disasm_classic_abi(f.insns, f.len, abi, stdout);
	free(f.insns);
	return 0;
}

/* Loads a translated program (prefix names the file, or is ""); on a
 * refusal the verifier's last lines say why. */
static int load_or_die(struct c2e_ebpf *prog, const char *prefix)
{
	static char log[1 << 16];
	int fd = c2e_kernel_load_abi(prog, abi, log, sizeof(log));

	c2e_ebpf_free(prog);
	if (fd < 0) {
		size_t len = strlen(log);

		if (len)
			fprintf(stderr, "%s", log + (len > 4000 ? len - 4000 : 0));
		die(EXIT_KERNEL, "%sthe kernel refused the translated program: %s",
		    prefix, strerror(-fd));
	}
	return fd;
}

struct run_opts {
	bool have_nr, have_arch, have_ip, have_args;
	const char *nr, *inputs;
	uint32_t arch;
	uint64_t ip;
	uint64_t args[6];
	bool interp;
	const char *regs;
};

/* One input line of --inputs, already split; defaults fill the rest. */
struct input {
	bool skip;
	struct seccomp_data d;
};

static size_t read_inputs(const char *path, uint32_t arch,
			  struct input **out)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct input *v = NULL;
	size_t n = 0, cap = 0, lineno = 0, linecap = 0;
	char *line = NULL;

	if (!in)
		die(EXIT_USAGE, "%s: %s", path, strerror(errno));
	while (getline(&line, &linecap, in) >= 0) {
		char *tok, *save = NULL, *s = line;
		struct input *i;
		int field = 0;

		lineno++;
		if (C2E_GROW(v, cap, n + 1))
			die(EXIT_KERNEL, "out of memory");
		i = &v[n++];
		memset(i, 0, sizeof(*i));
		i->d.arch = arch;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s || *s == '#') {
			i->skip = true;
			continue;
		}
		for (tok = strtok_r(s, " \t\r\n", &save); tok;
		     tok = strtok_r(NULL, " \t\r\n", &save), field++) {
			uint64_t x;

			if (field == 9)
				die(EXIT_USAGE, "%s:%zu: more than 9 fields (nr arch ip a0..a5)",
				    path, lineno);
			if (!parse_hex(tok, field < 2 ? 32 : 64, &x))
				die(EXIT_USAGE, "%s:%zu: bad number '%s' in field %d",
				    path, lineno, tok, field + 1);
			if (field == 0)
				i->d.nr = (int)(uint32_t)x;
			else if (field == 1)
				i->d.arch = x;
			else if (field == 2)
				i->d.instruction_pointer = x;
			else
				i->d.args[field - 3] = x;
		}
	}
	if (ferror(in))
		die(EXIT_USAGE, "%s: %s", path, strerror(errno));
	free(line);
	if (in != stdin)
		fclose(in);
	*out = v;
	return n;
}

static int cmd_run(char **paths, int n_paths, struct run_opts *o)
{
	struct sock_fprog *chain = calloc(n_paths, sizeof(*chain));
	struct filter *f = calloc(n_paths, sizeof(*f));
	struct input single = { 0 }, *inputs = &single;
	size_t n_inputs = 1, i;
	int fd = -1, ret, k;
	char buf[64];

	if (!chain || !f)
		die(EXIT_KERNEL, "out of memory");
	/* Usage errors first (exit 2), then files (2), then validity (1). */
	if (o->inputs) {
		n_inputs = read_inputs(o->inputs, o->arch, &inputs);
	} else {
		single.d.nr = (int)parse_nr(o->nr, o->arch);
		single.d.arch = o->arch;
		single.d.instruction_pointer = o->ip;
		memcpy(single.d.args, o->args, sizeof(o->args));
	}
	for (k = 0; k < n_paths; k++)
		load(&f[k], paths[k]);
	for (k = 0; k < n_paths; k++) {
		validate_or_die(&f[k]);
		chain[k].filter = f[k].insns;
		chain[k].len = f[k].len;
	}

	if (!o->interp) {
		struct c2e_ebpf prog = { 0 };

		ret = c2e_translate_chain(chain, n_paths, &prog);
		if (ret)
			die(EXIT_KERNEL, "translation failed: %s", strerror(-ret));
		fd = load_or_die(&prog, "");
	}
	for (i = 0; i < n_inputs; i++) {
		uint32_t r;

		if (inputs[i].skip) {
			putchar('\n');
			continue;
		}
		if (o->interp) {
			r = c2e_stack_eval(chain, n_paths, &inputs[i].d);
		} else {
			ret = c2e_kernel_run(fd, &inputs[i].d, &r);
			if (ret)
				die(EXIT_KERNEL, "BPF_PROG_TEST_RUN failed: %s",
				    strerror(-ret));
		}
		printf("%s\n", c2e_verdict_str(r, buf, sizeof(buf)));
	}
	if (fd >= 0)
		close(fd);
	if (inputs != &single)
		free(inputs);
	for (k = 0; k < n_paths; k++)
		free(f[k].insns);
	free(f);
	free(chain);
	return 0;
}

/* ---- RFC 2012 runs ------------------------------------------------------ */

/* Stores v in the field at off: 8 bytes (x86-64) or 4 (i386). */
static void set_reg(unsigned char *regs, unsigned int off, uint64_t v)
{
	uint32_t w = v;

	if (abi == C2E_ABI_RFC_I386)
		memcpy(regs + off, &w, sizeof(w));
	else
		memcpy(regs + off, &v, sizeof(v));
}

/* The registers at syscall entry: rax/eax is -ENOSYS, the rest from
 * --nr and --regs. */
static void build_regs(const struct run_opts *o, unsigned char *regs)
{
	int bits = abi == C2E_ABI_RFC_I386 ? 32 : 64;
	char *copy, *tok, *save = NULL;
	uint64_t v;
	int off;

	memset(regs, 0, C2E_ABI_MAX_SIZE);
	set_reg(regs, c2e_rfc_reg_offset(abi, bits == 32 ? "eax" : "rax"),
		(uint64_t)-ENOSYS);
	if (o->nr)
		set_reg(regs, c2e_rfc_nr_offset(abi),
			parse_nr(o->nr, bits == 32 ? C2E_AUDIT_ARCH_I386 :
						     C2E_AUDIT_ARCH_X86_64));
	if (!o->regs)
		return;
	copy = strdup(o->regs);
	if (!copy)
		die(EXIT_KERNEL, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			usage_fail("bad --regs item '%s' (NAME=VALUE)", tok);
		*eq = '\0';
		off = c2e_rfc_reg_offset(abi, tok);
		if (off < 0)
			usage_fail("unknown register '%s' for %s", tok,
			    c2e_abi_name(abi));
		if (!parse_int(eq + 1, bits, &v))
			usage_fail("bad value '%s' for %s (a %d-bit number)",
			    eq + 1, tok, bits);
		set_reg(regs, off, v);
	}
	free(copy);
}

/* One raw return per filter, from the interpreter or the kernel. */
static uint32_t run_rfc_filter(const struct filter *f, const void *regs,
			       bool interp)
{
	struct c2e_ebpf prog = { 0 };
	char prefix[300];
	uint32_t raw;
	int fd, ret;

	if (interp)
		return c2e_interpret_abi(f->insns, f->len, abi, regs);
	ret = c2e_translate_abi(f->insns, f->len, abi, 0, &prog);
	if (ret)
		die(EXIT_KERNEL, "%s: translation failed: %s", f->path, strerror(-ret));
	snprintf(prefix, sizeof(prefix), "%s: ", f->path);
	fd = load_or_die(&prog, prefix);
	ret = c2e_kernel_run_abi(fd, abi, regs, &raw);
	close(fd);
	if (ret)
		die(EXIT_KERNEL, "BPF_PROG_TEST_RUN failed: %s", strerror(-ret));
	return raw;
}

/* Every filter runs, newest first, and the verdicts stack as seccomp's. */
static int cmd_run_rfc(char **paths, int n_paths, const struct run_opts *o)
{
	unsigned char regs[C2E_ABI_MAX_SIZE];
	struct filter *f = calloc(n_paths, sizeof(*f));
	uint32_t *raw = calloc(n_paths, sizeof(*raw)), verdict = SECCOMP_RET_ALLOW;
	char buf[64];
	int k;

	if (!f || !raw)
		die(EXIT_KERNEL, "out of memory");
	build_regs(o, regs);
	for (k = 0; k < n_paths; k++)
		load(&f[k], paths[k]);
	for (k = 0; k < n_paths; k++)
		validate_or_die(&f[k]);
	for (k = n_paths; k-- > 0;) {
		raw[k] = run_rfc_filter(&f[k], regs, o->interp);
		verdict = c2e_stack_combine(verdict, c2e_rfc_verdict(abi, raw[k]));
	}
	printf("%s (returned", c2e_verdict_str(verdict, buf, sizeof(buf)));
	for (k = 0; k < n_paths; k++)
		printf("%s %" PRIu32, k ? "," : "", raw[k]);
	printf(")\n");
	for (k = 0; k < n_paths; k++)
		free(f[k].insns);
	free(f);
	free(raw);
	return 0;
}

/* ---- options ----------------------------------------------------------- */

enum {
	OPT_NR = 256, OPT_ARCH, OPT_IP, OPT_ARGS, OPT_ENGINE, OPT_INPUTS,
	OPT_ABI, OPT_COMPAT, OPT_REGS,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "output", required_argument, NULL, 'o' },
	{ "nr", required_argument, NULL, OPT_NR },
	{ "arch", required_argument, NULL, OPT_ARCH },
	{ "ip", required_argument, NULL, OPT_IP },
	{ "args", required_argument, NULL, OPT_ARGS },
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "inputs", required_argument, NULL, OPT_INPUTS },
	{ "abi", required_argument, NULL, OPT_ABI },
	{ "compat", no_argument, NULL, OPT_COMPAT },
	{ "regs", required_argument, NULL, OPT_REGS },
	{ NULL, 0, NULL, 0 },
};

static void want_files(const char *cmd, int n, int want)
{
	if (n < want)
		usage_fail("%s: missing FILE", cmd);
	if (n > want)
		usage_fail("%s takes one FILE, got %d", cmd, n);
}

int main(int argc, char **argv)
{
	struct run_opts ro = { .arch = C2E_AUDIT_ARCH_X86_64 };
	const char *cmd, *out = NULL, *run_only = NULL, *seccomp_only = NULL;
	int c, n_files;
	uint64_t v;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("classic2ebpf (sfilter) %s\n", SF_VERSION);
		return 0;
	}
	if (argc < 2)
		usage_fail("missing COMMAND");
	cmd = argv[1];
	if (strcmp(cmd, "check") && strcmp(cmd, "dump") && strcmp(cmd, "asm") &&
	    strcmp(cmd, "disasm") && strcmp(cmd, "run"))
		usage_fail("unknown command '%s'", cmd);

	opterr = 0;
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, ":ho:", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("classic2ebpf (sfilter) %s\n", SF_VERSION);
			return 0;
		case 'o':
			out = optarg;
			break;
		case OPT_NR:
			ro.nr = optarg;
			run_only = "--nr";
			break;
		case OPT_ARCH:
			ro.arch = parse_arch(optarg);
			run_only = "--arch";
			seccomp_only = "--arch";
			break;
		case OPT_IP:
			if (!parse_hex(optarg, 64, &v))
				usage_fail("bad --ip '%s' (hex)", optarg);
			ro.ip = v;
			run_only = "--ip";
			seccomp_only = "--ip";
			break;
		case OPT_ARGS:
			parse_args(optarg, ro.args);
			run_only = "--args";
			seccomp_only = "--args";
			break;
		case OPT_ENGINE:
			if (!strcmp(optarg, "kernel"))
				ro.interp = false;
			else if (!strcmp(optarg, "interp"))
				ro.interp = true;
			else
				usage_fail("bad --engine '%s' (kernel or interp)",
				    optarg);
			run_only = "--engine";
			break;
		case OPT_INPUTS:
			ro.inputs = optarg;
			run_only = "--inputs";
			seccomp_only = "--inputs";
			break;
		case OPT_ABI:
			if (c2e_abi_parse(optarg, &abi))
				usage_fail("bad --abi '%s' (seccomp, rfc2012 or rfc2012-i386)",
				    optarg);
			break;
		case OPT_COMPAT:
			abi = C2E_ABI_RFC_I386;
			break;
		case OPT_REGS:
			ro.regs = optarg;
			run_only = "--regs";
			break;
		case ':':
			usage_fail("option '%s' needs an argument",
			    argv[optind - 1]);
		default:
			usage_fail("unknown option '%s'",
			    argv[optind - 1]);
		}
	}
	n_files = argc - optind;
	if (strcmp(cmd, "run") && run_only)
		usage_fail("%s is an option of run, not of %s", run_only, cmd);
	if (strcmp(cmd, "asm") && out)
		usage_fail("-o is an option of asm, not of %s", cmd);
	if (abi != C2E_ABI_SECCOMP && seccomp_only)
		usage_fail("%s is for seccomp_data filters, not %s (use --regs)",
		    seccomp_only, c2e_abi_name(abi));
	if (abi == C2E_ABI_SECCOMP && ro.regs)
		usage_fail("--regs is for the RFC ABIs (--abi rfc2012 or --compat)");

	if (!strcmp(cmd, "check")) {
		want_files(cmd, n_files, 1);
		return cmd_check(argv[optind]);
	}
	if (!strcmp(cmd, "dump")) {
		want_files(cmd, n_files, 1);
		return cmd_dump(argv[optind]);
	}
	if (!strcmp(cmd, "disasm")) {
		want_files(cmd, n_files, 1);
		return cmd_disasm(argv[optind]);
	}
	if (!strcmp(cmd, "asm")) {
		want_files(cmd, n_files, 1);
		if (!out)
			usage_fail("asm: missing -o OUTPUT");
		return cmd_asm(argv[optind], out);
	}
	if (n_files == 0)
		usage_fail("run: missing FILE");
	if (abi != C2E_ABI_SECCOMP)
		return cmd_run_rfc(argv + optind, n_files, &ro);
	if (!ro.nr && !ro.inputs)
		usage_fail("run: missing --nr N or --inputs TSV");
	if (ro.nr && ro.inputs)
		usage_fail("run: --nr and --inputs exclude each other");
	return cmd_run(argv + optind, n_files, &ro);
}
