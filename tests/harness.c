// SPDX-License-Identifier: GPL-2.0-only
/* The test runner: runs every registered TEST (or those matching -t),
 * each in a forked child so a crash or a kill fails one test, not the run. */
#include "harness.h"
#include "keyhold.h"
#include "daemon.h"

#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { RESULT_PASS, RESULT_FAIL, RESULT_SKIP };

/* Parts of a test that test_skip_part() recorded; more distinct parts
 * than this fail the test rather than vanish. */
#define MAX_SKIPPED_PARTS 8

struct skipped_part {
	char name[64];
	char reason[256];
};

/* Shared with the forked test child so its verdict survives its exit. */
struct shared_state {
	int result;
	char skip_reason[256];
	int nparts;
	struct skipped_part parts[MAX_SKIPPED_PARTS];
};

/* Bypass cases counted by every test of the run (test_bypass_count()):
 * shared with the forked tests, so that the runner can sum them at the
 * end. More cases than this fail the test that adds one. */
#define MAX_BYPASS_CASES 64

struct bypass_case {
	char name[64];
	char iteration[160];
	long iterations, escapes, wrongful_kills;
};

struct bypass_state {
	int n;
	struct bypass_case c[MAX_BYPASS_CASES];
};

static struct sf_test *tests_head, **tests_tail = &tests_head;
static const struct sf_test *current; /* in a test's process: that test */
static struct shared_state *state;
static struct bypass_state *bypass;
static int verbose;
static char kernel_name[128];

void sf_test_register(struct sf_test *t)
{
	*tests_tail = t;
	tests_tail = &t->next;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	state->result = RESULT_FAIL;
}

void test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(state->skip_reason, sizeof(state->skip_reason), fmt, ap);
	va_end(ap);
	if (state->result != RESULT_FAIL)
		state->result = RESULT_SKIP;
}

void test_skip_part(const char *part, const char *fmt, ...)
{
	struct skipped_part *p;
	va_list ap;
	int i;

	for (i = 0; i < state->nparts; i++)
		if (!strcmp(state->parts[i].name, part))
			return;
	if (state->nparts == MAX_SKIPPED_PARTS) {
		printf("    more than %d skipped parts: %s not recorded\n",
		       MAX_SKIPPED_PARTS, part);
		state->result = RESULT_FAIL;
		return;
	}
	p = &state->parts[state->nparts++];
	snprintf(p->name, sizeof(p->name), "%s", part);
	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
}

bool test_require(const char *file, int line, int probe, const char *part,
		  const char *why)
{
	if (probe > 0)
		return true;
	if (probe < 0)
		test_fail(file, line, "probe%s%s failed: %s", part ? " for " : "",
			  part ? part : "", why);
	else if (part)
		test_skip_part(part, "%s", why);
	else
		test_skip("%s", why);
	return false;
}

void test_bypass_count(const char *case_name, const char *iteration, long iterations,
		       long escapes, long wrongful_kills)
{
	int i = __atomic_fetch_add(&bypass->n, 1, __ATOMIC_SEQ_CST);
	struct bypass_case *c;

	if (i >= MAX_BYPASS_CASES) {
		printf("    more than %d bypass cases: %s not recorded\n", MAX_BYPASS_CASES,
		       case_name);
		state->result = RESULT_FAIL;
		return;
	}
	c = &bypass->c[i];
	snprintf(c->name, sizeof(c->name), "%s", case_name);
	snprintf(c->iteration, sizeof(c->iteration), "%s", iteration);
	c->iterations = iterations;
	c->escapes = escapes;
	c->wrongful_kills = wrongful_kills;
}

/* The bypass suite's summary, one line per case and the total; nothing
 * when no test counted any. */
static void print_bypass_summary(const char *prefix)
{
	long it = 0, esc = 0, wk = 0;
	int i, n = bypass->n < MAX_BYPASS_CASES ? bypass->n : MAX_BYPASS_CASES;

	for (i = 0; i < n; i++) {
		const struct bypass_case *c = &bypass->c[i];

		printf("# %sbypass: %s: %ld iterations (%s), %ld escapes, %ld wrongful kills\n",
		       prefix, c->name, c->iterations, c->iteration, c->escapes,
		       c->wrongful_kills);
		it += c->iterations;
		esc += c->escapes;
		wk += c->wrongful_kills;
	}
	if (n)
		printf("# %sbypass: %d cases, %ld iterations, %ld escapes, %ld wrongful kills\n",
		       prefix, n, it, esc, wk);
}

void test_log(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	fputs("    ", stdout);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fflush(stdout);
}

bool test_failed(void)
{
	return state->result == RESULT_FAIL;
}

const char *test_kernel_name(void)
{
	return kernel_name;
}

const char *test_current_file(void)
{
	return current ? current->file : "";
}

bool test_need_root(const char *why)
{
	if (geteuid() == 0)
		return true;
	if (why)
		test_skip("needs root (%s)", why);
	else
		test_skip("needs root");
	return false;
}

double test_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int test_is_emulated(void)
{
	/* The guest's /init exports this; see tests/guest/init. */
	const char *e = getenv("SF_EMULATED");

	return e && *e == '1';
}

static int run_one(struct sf_test *t)
{
	int status;
	pid_t pid;

	memset(state, 0, sizeof(*state));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return RESULT_FAIL;
	}
	if (pid == 0) {
		/* Its own process group: whatever it leaves running is
		 * killed when it ends (below), not left to load the machine
		 * under the tests after it. */
		setpgid(0, 0);
		/* A hung test fails alone instead of eating the CI budget. */
		alarm(test_is_emulated() ? 400 : 300);
		current = t;
		t->fn();
		fflush(stdout);
		_exit(0);
	}
	setpgid(pid, pid);
	if (waitpid(pid, &status, 0) < 0)
		return RESULT_FAIL;
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(status)) {
		printf("    test process killed by signal %d%s\n", WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timed out)" : "");
		return RESULT_FAIL;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("    test process exited with %d\n", WEXITSTATUS(status));
		return RESULT_FAIL;
	}
	return state->result;
}

/* -t's argument: globs separated by commas, any of which may match. */
static bool name_matches(const char *globs, const char *name)
{
	char buf[1024], *save = NULL, *g;

	snprintf(buf, sizeof(buf), "%s", globs);
	for (g = strtok_r(buf, ",", &save); g; g = strtok_r(NULL, ",", &save))
		if (fnmatch(g, name, 0) == 0)
			return true;
	return false;
}

/* -s SHARDS/N: SHARDS a comma-separated list of residues; 1 when the
 * test of this ordinal (among those -t selects) is this run's. Interleaved,
 * so that every shard gets slow and quick tests alike. */
static int parse_shards(const char *spec, unsigned long long *mask, int *n)
{
	const char *slash = strchr(spec, '/');
	char *end;
	long k;

	*mask = 0;
	if (!slash)
		return -1;
	k = strtol(slash + 1, &end, 10);
	if (end == slash + 1 || *end || k < 1 || k > 64)
		return -1;
	*n = (int)k;
	while (spec < slash) {
		k = strtol(spec, &end, 10);
		if (end == spec || k < 0 || k >= *n || (*end != ',' && end != slash))
			return -1;
		*mask |= 1ULL << k;
		spec = *end == ',' ? end + 1 : end;
	}
	return *mask ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *pattern = NULL, *prefix = "";
	int passed = 0, failed = 0, skipped = 0, opt, i, result, shards = 1, ordinal = 0;
	unsigned long long shard_mask = 1;
	struct timespec t0, t1;
	double secs;
	struct utsname uts;
	struct sf_test *t;

	/* sftest --hold: read standard input to its end, then exit 0. Tests
	 * run a setuid-root copy of the runner this way, as a privileged
	 * program that waits (like su waiting for a password). */
	if (argc == 2 && strcmp(argv[1], "--hold") == 0) {
		char c;

		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	while ((opt = getopt(argc, argv, "vt:p:ls:")) != -1) {
		switch (opt) {
		case 'v':
			verbose = 1;
			break;
		case 't':
			pattern = optarg;
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'l':
			for (t = tests_head; t; t = t->next)
				printf("%s\n", t->name);
			return 0;
		case 's':
			if (parse_shards(optarg, &shard_mask, &shards) == 0)
				break;
			fprintf(stderr, "%s: -s %s: want K[,K...]/N, each K below N (at most 64)\n",
				argv[0], optarg);
			return 2;
		default:
			fprintf(stderr, "usage: %s [-v] [-t GLOB[,GLOB...]] [-s K[,K...]/N] [-p PREFIX] [-l]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&uts);
	snprintf(kernel_name, sizeof(kernel_name), "%s", uts.release);
	state = mmap(NULL, sizeof(*state), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	bypass = mmap(NULL, sizeof(*bypass), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (state == MAP_FAILED || bypass == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	printf("# kernel %s%s\n", uts.release, test_is_emulated() ? " (emulated)" : "");
	if (test_is_emulated() && geteuid() == 0) {
		int err = keyhold_start();

		printf("# sys_enter/sys_exit held enabled for the run%s%s (bpf/keyhold.bpf.c)\n",
		       err ? ": failed: " : "", err ? strerror(-err) : "");
	}
	if ((i = sfd_sweep_stale_pins()) > 0)
		printf("# removed %d pin director%s of test runs that no longer live "
		       "(/sys/fs/bpf/sfilter-test-*)\n", i, i == 1 ? "y" : "ies");
	for (t = tests_head; t; t = t->next) {
		if (pattern && !name_matches(pattern, t->name))
			continue;
		if (!((shard_mask >> (ordinal++ % shards)) & 1))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		result = run_one(t);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* The time each took, so the suite's budget can be watched. */
		secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		switch (result) {
		case RESULT_PASS:
			printf("%sPASS %s (%.1f s)\n", prefix, t->name, secs);
			passed++;
			break;
		case RESULT_SKIP:
			printf("%sSKIP %s: %s\n", prefix, t->name, state->skip_reason);
			skipped++;
			break;
		default:
			printf("%sFAIL %s (%.1f s)\n", prefix, t->name, secs);
			failed++;
		}
		for (i = 0; i < state->nparts; i++)
			printf("%sSKIP %s/%s: %s\n", prefix, t->name,
			       state->parts[i].name, state->parts[i].reason);
		skipped += state->nparts;
	}
	/* Before the closing line, which stays the last (run-all.sh). */
	print_bypass_summary(prefix);
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
