// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a profile may hold, and what json-c does not say about the text.
 *
 * The keys: every one the runtime-spec (config-linux.md, specs-go's
 * LinuxSeccomp, LinuxSyscall, LinuxSeccompArg), moby (profiles/seccomp:
 * Seccomp, Architecture, Filter, Syscall) and containers/common
 * (pkg/seccomp/types.go) define, in one table. Go's encoding/json skips a
 * key it does not know, so "sycalls" would leave a profile with no rule
 * at all; here it is an error, unless the caller asks for lenience.
 *
 * The text: json-c keeps the last of a repeated key and clamps an integer
 * of 2^64 or more to UINT64_MAX (and one below INT64_MIN to INT64_MIN)
 * without a word, JSON_TOKENER_STRICT or not for the former, and with no
 * path for the latter. So the text json-c accepted is read once more,
 * keys and numbers only, with the path of each.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pf_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define O_ROOT    "(profile)"
#define O_SYSCALL "syscalls[]"
#define O_ARG     "syscalls[].args[]"
#define O_INC     "syscalls[].includes"
#define O_EXC     "syscalls[].excludes"
#define O_ARCHMAP "archMap[]"

#define RS_ALL "runtime-spec, moby, containers/common"
#define MOBY_CC "moby, containers/common"

static const struct sf_profile_key keys[] = {
	{ O_ROOT, "defaultAction", RS_ALL, "used: the action of a call no rule takes" },
	{ O_ROOT, "defaultErrnoRet", RS_ALL, "used: the default's errno (EPERM when absent)" },
	{ O_ROOT, "defaultErrno", "containers/common",
	  "used: the default's errno by name; must agree with defaultErrnoRet" },
	{ O_ROOT, "architectures", RS_ALL, "used: the filter's architectures" },
	{ O_ROOT, "archMap", MOBY_CC,
	  "used: the native architecture's entry and its subArchitectures" },
	{ O_ROOT, "flags", RS_ALL, "used: SECCOMP_FILTER_FLAG_TSYNC and _LOG; others refused" },
	{ O_ROOT, "listenerPath", RS_ALL,
	  "refused when set (sfilter has no SCMP_ACT_NOTIFY), but in a gate" },
	{ O_ROOT, "listenerMetadata", RS_ALL,
	  "accepted, ignored: the seccomp agent's data (refused without listenerPath)" },
	{ O_ROOT, "syscalls", RS_ALL, "used: the rules" },
	{ O_SYSCALL, "names", RS_ALL, "used: the syscalls of the rule; not empty" },
	{ O_SYSCALL, "name", MOBY_CC, "used: one syscall (moby's older form of names)" },
	{ O_SYSCALL, "action", RS_ALL, "used: the rule's action" },
	{ O_SYSCALL, "errnoRet", RS_ALL, "used: the action's errno (EPERM when absent)" },
	{ O_SYSCALL, "errno", "containers/common",
	  "used: the action's errno by name; must agree with errnoRet" },
	{ O_SYSCALL, "args", RS_ALL, "used: the rule's conditions on arguments" },
	{ O_SYSCALL, "comment", MOBY_CC, "accepted, ignored: a note" },
	{ O_SYSCALL, "includes", MOBY_CC, "used: the rule applies only when all of it holds" },
	{ O_SYSCALL, "excludes", MOBY_CC, "used: the rule is skipped when any of it holds" },
	{ O_ARG, "index", RS_ALL, "used: the argument, 0 to 5" },
	{ O_ARG, "value", RS_ALL, "used: an unsigned 64-bit integer" },
	{ O_ARG, "valueTwo", RS_ALL, "used: SCMP_CMP_MASKED_EQ's value (value is the mask)" },
	{ O_ARG, "op", RS_ALL, "used: SCMP_CMP_*" },
	{ O_INC, "caps", MOBY_CC, "used: every capability is held" },
	{ O_INC, "arches", MOBY_CC, "used: the native architecture is one (moby's names)" },
	{ O_INC, "minKernel", "moby", "used: the kernel is at least this major.minor" },
	{ O_EXC, "caps", MOBY_CC, "used: any capability is held" },
	{ O_EXC, "arches", MOBY_CC, "used: the native architecture is one" },
	{ O_EXC, "minKernel", "moby", "used: the kernel is at least this major.minor" },
	{ O_ARCHMAP, "architecture", MOBY_CC, "used: SCMP_ARCH_*, matched to the native one" },
	{ O_ARCHMAP, "subArchitectures", MOBY_CC, "used: added when the entry is the native one" },
};

const struct sf_profile_key *sf_profile_keys(size_t *n)
{
	*n = sizeof(keys) / sizeof(keys[0]);
	return keys;
}

/* The path of key in the object at path, or the object's own path when
 * that would not fit in an error's path (a path cut short would name
 * nothing that is there). */
static void key_path(struct pf *c, char *out, size_t size, const char *path, const char *key)
{
	size_t room = sizeof(c->err->path) < size ? sizeof(c->err->path) : size;

	if (strlen(path) + 1 + strlen(key) < room)
		pf_path(out, size, "%s%s%s", path, path[0] ? "." : "", key);
	else
		pf_path(out, size, "%s", path);
}

/* Damerau-Levenshtein (optimal string alignment) without case: a key
 * with two letters swapped or in the wrong case is one step away. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[33][33], i, j;

	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			size_t m = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < m)
				m = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < m)
				m = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < m)
				m = d[i - 2][j - 2] + 1;
			d[i][j] = m;
		}
	return d[la][lb];
}

static const struct sf_profile_key *find_key(const char *object, const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(keys[i].object, object) && !strcmp(keys[i].key, key))
			return &keys[i];
	return NULL;
}

static int unknown_key(struct pf *c, const char *object, const char *path, const char *key)
{
	const char *best = NULL;
	size_t i, d, bd = SIZE_MAX;
	char p[128], hint[64] = "", name[48] = "";

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(keys[i].object, object))
			continue;
		d = distance(key, keys[i].key);
		if (d < bd) {
			bd = d;
			best = keys[i].key;
		}
	}
	/* Close enough to be a slip: at most two steps, and fewer than half
	 * the letters of the key meant. */
	if (best && bd <= 2 && bd * 2 < strlen(best))
		snprintf(hint, sizeof(hint), "; did you mean \"%s\"?", best);
	key_path(c, p, sizeof(p), path, key);
	if (strcmp(p, path) == 0 || !p[0])
		snprintf(name, sizeof(name), " \"%.32s%s\"", key, strlen(key) > 32 ? "..." : "");
	return pf_refuse(c, p, "unknown key%s%s%s", name, c->lenient ? ", ignored" : "", hint);
}

static int check_object(struct pf *c, struct json_object *o, const char *object,
			const char *path);

/* Each object of array v (at path) as object. */
static int check_array(struct pf *c, struct json_object *v, const char *object,
		       const char *path)
{
	char p[128];
	size_t i;
	int r;

	if (json_object_get_type(v) != json_type_array)
		return 0;
	for (i = 0; i < json_object_array_length(v); i++) {
		pf_path(p, sizeof(p), "%s[%zu]", path, i);
		if ((r = check_object(c, json_object_array_get_idx(v, i), object, p)))
			return r;
	}
	return 0;
}

/* A value that is not an object is left to the compiler, which names
 * the type it expected. */
static int check_object(struct pf *c, struct json_object *o, const char *object,
			const char *path)
{
	char p[128];
	int r = 0;

	if (json_object_get_type(o) != json_type_object)
		return 0;
	json_object_object_foreach(o, key, v) {
		if (!find_key(object, key)) {
			r = unknown_key(c, object, path, key);
		} else {
			pf_path(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", key);
			if (!strcmp(object, O_ROOT) && !strcmp(key, "syscalls"))
				r = check_array(c, v, O_SYSCALL, p);
			else if (!strcmp(object, O_ROOT) && !strcmp(key, "archMap"))
				r = check_array(c, v, O_ARCHMAP, p);
			else if (!strcmp(object, O_SYSCALL) && !strcmp(key, "args"))
				r = check_array(c, v, O_ARG, p);
			else if (!strcmp(object, O_SYSCALL) && !strcmp(key, "includes"))
				r = check_object(c, v, O_INC, p);
			else if (!strcmp(object, O_SYSCALL) && !strcmp(key, "excludes"))
				r = check_object(c, v, O_EXC, p);
		}
		if (r)
			return r;
	}
	return 0;
}

int pf_check_keys(struct pf *c, struct json_object *root)
{
	return check_object(c, root, O_ROOT, "");
}

/* ---- the text: repeated keys, integers out of range ---------------------- */

#define SCAN_DEPTH 64 /* json-c's own limit is 32 */

struct frame {
	bool obj, want_key;
	size_t idx;           /* an array's element */
	char *key;            /* an object's current key */
	char **keys;          /* the keys the object has had */
	size_t n_keys;
	/* Lenient: the warnings made inside each key's last value (keys[i]'s:
	 * warns[span[i].from..span[i].to]), and the current key's index. */
	struct { size_t from, to; } *span;
	size_t cur;
};

/* A repeated key, warned of (lenient) unless a later repeat of a key
 * around it replaces the value it is in: then it is not in the document
 * json-c reads. */
struct dup_warn {
	char path[128], key[36];
	bool dead;
};

struct scan {
	struct pf *c;
	struct frame st[SCAN_DEPTH];
	int top;              /* -1: outside the document */
	bool numbers;         /* this pass: numbers (else keys) */
	int dup_top;          /* the shallowest repeated key's depth, -1: none */
	char dup_path[128], dup_key[36];
	struct dup_warn *warns;
	size_t n_warns;
};

static void pop(struct scan *s)
{
	struct frame *f = &s->st[s->top--];

	pf_free_lines(f->keys, f->n_keys);
	free(f->key);
	free(f->span);
	memset(f, 0, sizeof(*f));
}

/* The path of where the scan is, cut at the last whole step that fits an
 * error's path: what it names is there. */
static void scan_path(struct scan *s, char *out, size_t size)
{
	size_t room = sizeof(s->c->err->path) < size ? sizeof(s->c->err->path) : size, n = 0;
	char step[128];
	int i, k;

	out[0] = '\0';
	for (i = 0; i <= s->top; i++) {
		const struct frame *f = &s->st[i];

		if (f->obj && !f->key)
			break;
		/* Every key but the document's first has its dot, an empty
		 * key too: {"":{"e":..}} is ".e", as a path is read. */
		if (f->obj)
			k = snprintf(step, sizeof(step), "%s%s", i ? "." : "", f->key);
		else
			k = snprintf(step, sizeof(step), "[%zu]", f->idx);
		if (k < 0 || (size_t)k >= sizeof(step) || n + (size_t)k >= room)
			break;
		memcpy(out + n, step, (size_t)k + 1);
		n += (size_t)k;
	}
}

/* A key as json-c reads it (its escapes undone): a string of its own. */
static char *decode_key(const char *raw, size_t len)
{
	char *text = strndup(raw, len), *key = NULL;
	struct json_object *o = text ? json_tokener_parse(text) : NULL;

	if (o && json_object_get_type(o) == json_type_string)
		key = strdup(json_object_get_string(o));
	else if (text && len >= 2)
		key = strndup(raw + 1, len - 2);
	json_object_put(o);
	free(text);
	return key;
}

/* Key i of frame f repeated (at path): the warnings made inside its
 * earlier value die with that value; this one is made. */
static int lenient_repeat(struct scan *s, struct frame *f, size_t i, const char *path,
			  const char *key)
{
	struct dup_warn *w = realloc(s->warns, (s->n_warns + 1) * sizeof(*w));
	size_t k;

	if (!w)
		return -ENOMEM;
	s->warns = w;
	for (k = f->span[i].from; k < f->span[i].to; k++)
		w[k].dead = true;
	w = &w[s->n_warns++];
	*w = (struct dup_warn){ .dead = false };
	snprintf(w->path, sizeof(w->path), "%s", path);
	snprintf(w->key, sizeof(w->key), "%.32s", key);
	f->span[i].from = f->span[i].to = s->n_warns;
	f->cur = i;
	return 0;
}

static int scan_key(struct scan *s, const char *raw, size_t len)
{
	struct frame *f = &s->st[s->top];
	char *key = decode_key(raw, len), path[128];
	size_t i;

	if (!key)
		return -ENOMEM;
	free(f->key);
	f->key = key;
	f->want_key = false;
	/* The value of the key before this one has ended. */
	if (f->n_keys)
		f->span[f->cur].to = s->n_warns;
	for (i = 0; i < f->n_keys && strcmp(f->keys[i], key); i++)
		;
	if (i == f->n_keys) {
		void *span = realloc(f->span, (f->n_keys + 1) * sizeof(*f->span));

		if (!span)
			return -ENOMEM;
		f->span = span;
		f->span[f->n_keys].from = f->span[f->n_keys].to = s->n_warns;
		f->cur = f->n_keys;
		return pf_append(&f->keys, &f->n_keys, "%s", key);
	}
	scan_path(s, path, sizeof(path));
	if (s->c->lenient)
		return lenient_repeat(s, f, i, path, key);
	/* The shallowest is refused: a repeat inside a value that a later
	 * repeat of its own key replaces is not in the document json-c
	 * reads, and naming the outer key names the place to mend. */
	if (s->dup_top < 0 || s->top < s->dup_top) {
		s->dup_top = s->top;
		snprintf(s->dup_path, sizeof(s->dup_path), "%s", path);
		snprintf(s->dup_key, sizeof(s->dup_key), "%.32s", key);
	}
	return 0;
}

/* An integer's digits: whether it fits in 64 bits (signed when negative). */
static int scan_number(struct scan *s, const char *t, size_t len)
{
	char num[96], path[128];
	size_t i;

	for (i = t[0] == '-'; i < len; i++)
		if (!isdigit((unsigned char)t[i]))
			return 0; /* a fraction or an exponent: a double, refused where used */
	if (len >= sizeof(num))
		len = sizeof(num) - 1;
	memcpy(num, t, len);
	num[len] = '\0';
	errno = 0;
	if (num[0] == '-')
		(void)strtoll(num, NULL, 10);
	else
		(void)strtoull(num, NULL, 10);
	if (errno != ERANGE)
		return 0;
	scan_path(s, path, sizeof(path));
	return pf_fail(s->c, path, "%.40s%s is out of range: integers are %s", num,
		       strlen(num) > 40 ? "..." : "",
		       num[0] == '-' ? "at least -2^63" : "at most 2^64-1 (18446744073709551615)");
}

/* The end of a string token that starts at t[0] (its quote). */
static size_t string_end(const char *t, size_t len)
{
	size_t i;

	for (i = 1; i < len; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == t[0])
			return i + 1;
	}
	return len;
}

/* json-c takes C comments in the text, so the scan skips them too. */
static size_t comment_end(const char *t, size_t len)
{
	const char *e;

	if (len < 2 || t[0] != '/' || (t[1] != '*' && t[1] != '/'))
		return 0;
	if (t[1] == '/') {
		e = memchr(t, '\n', len);
		return e ? (size_t)(e - t) + 1 : len;
	}
	e = memmem(t + 2, len - 2, "*/", 2);
	return e ? (size_t)(e - t) + 2 : len;
}

static int scan_token(struct scan *s, const char *json, size_t len, size_t *at)
{
	const char *t = json + *at;
	struct frame *f = s->top >= 0 ? &s->st[s->top] : NULL;
	size_t n, rest = len - *at;

	if ((n = comment_end(t, rest))) {
		*at += n;
		return 0;
	}
	*at += 1;
	switch (t[0]) {
	case '{':
	case '[':
		if (s->top + 1 >= SCAN_DEPTH)
			return 1; /* deeper than json-c goes: nothing more to read */
		f = &s->st[++s->top];
		f->obj = t[0] == '{';
		f->want_key = f->obj;
		return 0;
	case '}':
	case ']':
		if (s->top >= 0)
			pop(s);
		return s->top < 0; /* the document's end */
	case ',':
		if (f && f->obj)
			f->want_key = true;
		else if (f)
			f->idx++;
		return 0;
	case '"':
	case '\'':
		n = string_end(t, rest);
		*at += n - 1;
		if (!f || !f->obj || !f->want_key)
			return 0;
		if (!s->numbers)
			return scan_key(s, t, n);
		f->want_key = false;
		free(f->key);
		return (f->key = decode_key(t, n)) ? 0 : -ENOMEM;
	default:
		break;
	}
	if (t[0] != '-' && !isdigit((unsigned char)t[0]))
		return 0;
	for (n = 1; n < rest && (isalnum((unsigned char)t[n]) || strchr(".+-", t[n])); n++)
		;
	*at += n - 1;
	return s->numbers ? scan_number(s, t, n) : 0;
}

/* Repeated keys first: a number's path then names what json-c kept. */
int pf_scan_text(struct pf *c, const char *json, size_t len)
{
	struct scan s = { .c = c, .top = -1, .dup_top = -1 };
	size_t at;
	int r, pass;

	for (pass = 0; pass < 2; pass++) {
		s.numbers = pass == 1;
		for (at = 0, r = 0; !r && at < len && json[at];)
			r = scan_token(&s, json, len, &at);
		while (s.top >= 0)
			pop(&s);
		for (at = 0; r >= 0 && at < s.n_warns; at++)
			if (!s.warns[at].dead)
				r = pf_warn(c, s.warns[at].path, "duplicate key \"%s\": the last one "
					    "is taken", s.warns[at].key);
		free(s.warns);
		s.warns = NULL;
		s.n_warns = 0;
		if (r < 0)
			return r;
		if (s.dup_top >= 0)
			return pf_fail(c, s.dup_path, "duplicate key \"%s\" (JSON parsers differ "
				       "on which one counts)", s.dup_key);
	}
	return 0;
}
