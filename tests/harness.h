/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The test harness, in the manner of the kernel's test_progs: one file per
 * feature, each TEST() registered automatically, ASSERT_* expressions that
 * print the name, the actual and the expected value on failure and return a
 * bool so a test can stop early. A missing kernel feature is a visible skip
 * (test_skip("no BPF LSM")), never a silent pass.
 *
 * The runner (harness.c) prints one line per test:
 *   PASS name (seconds)
 *   FAIL name (seconds)
 *   SKIP name: reason
 * then one line per part of it that was skipped (test_skip_part(), like
 * test_progs' subtests):
 *   SKIP name/part: reason
 * then, when any test counted bypass attempts (test_bypass_count()), one
 * line per case and a total, each starting with "# " so that no parser
 * takes them for a verdict:
 *   # bypass: NAME: N iterations (what one is), N escapes, N wrongful kills
 *   # bypass: N cases, N iterations, N escapes, N wrongful kills
 * and, last, the closing line "N passed, N failed, N skipped", where every
 * skipped part counts as one skip.
 */
#ifndef SF_TEST_HARNESS_H
#define SF_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

/* The number of elements of an array (not of a pointer). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct sf_test {
	const char *name;
	const char *file;
	void (*fn)(void);
	struct sf_test *next;
};

void sf_test_register(struct sf_test *t);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Skips one part of the test, which goes on with its other parts and still
 * passes or fails on them: for a step or an input class the kernel refuses
 * (part "i386-real-kernel", reason "int $0x80 from a 64-bit task is
 * refused by this kernel (SIGSEGV)"). A part skipped twice is recorded
 * once, with its first reason. The reason names the missing feature.
 */
void test_skip_part(const char *part, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * A probe's answer (tests/lib/probe.h: 1 the kernel has the feature, 0 it
 * refuses it, -1 the probe itself failed) as the test's verdict: true when
 * the feature is there; otherwise a skip of the whole test (part NULL) or
 * of the part, with reason why, or a failure when the probe failed.
 */
bool test_require(const char *file, int line, int probe, const char *part,
		  const char *why);
#define TEST_REQUIRE(probe, part, why) \
	test_require(__FILE__, __LINE__, (probe), (part), (why))
/* True as root; otherwise the test is skipped with "needs root (why)"
 * ("needs root" when why is NULL). */
bool test_need_root(const char *why);
/*
 * Records the outcome of one case of the bypass suite (tests/test_bypass_*.c)
 * for the summary the runner prints at the end of the run: iterations
 * attempts to get a denied call past sfilter, of which escapes ran a denied
 * call and lived on, and wrongful_kills killed a task for an allowed call.
 * iteration says what one attempt is, in a few words. Callable from the
 * test's process or any process it forks, as often as it has cases; the
 * test still asserts its own counts.
 */
void test_bypass_count(const char *case_name, const char *iteration, long iterations,
		       long escapes, long wrongful_kills);
/* Diagnostic output, shown with -v or when the test fails. */
void test_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool test_failed(void);
/* Name of the kernel the suite runs on ("host 6.18.44" / "guest 6.1.0"). */
const char *test_kernel_name(void);
/* Scale for expensive loops: 1 on the host, smaller under emulation.
 * Tests that promise a figure (e.g. 10,000 programs) must not scale it
 * below that figure; see harness.c. */
int test_is_emulated(void);
/* The source file of the test this process runs ("" in the runner). */
const char *test_current_file(void);
/* CLOCK_MONOTONIC in seconds and in milliseconds, for deadlines and
 * timings. */
double test_now_s(void);
double test_now_ms(void);

#define TEST(name)                                                        \
	static void test_##name(void);                                     \
	static struct sf_test sf_test_##name = { #name, __FILE__,          \
						test_##name, NULL };       \
	__attribute__((constructor)) static void sf_test_reg_##name(void)  \
	{                                                                  \
		sf_test_register(&sf_test_##name);                         \
	}                                                                  \
	static void test_##name(void)

#define ASSERT_TRUE(cond, what) ({                                        \
	bool ___ok = !!(cond);                                             \
	if (!___ok)                                                        \
		test_fail(__FILE__, __LINE__, "%s: expected true", (what)); \
	___ok; })

#define ASSERT_FALSE(cond, what) ({                                       \
	bool ___ok = !(cond);                                              \
	if (!___ok)                                                        \
		test_fail(__FILE__, __LINE__, "%s: expected false", (what)); \
	___ok; })

#define ASSERT_EQ(actual, expected, what) ({                              \
	long long ___a = (long long)(actual), ___e = (long long)(expected); \
	bool ___ok = ___a == ___e;                                         \
	if (!___ok)                                                        \
		test_fail(__FILE__, __LINE__,                              \
			  "%s: actual %lld (0x%llx) != expected %lld (0x%llx)", \
			  (what), ___a, (unsigned long long)___a, ___e,    \
			  (unsigned long long)___e);                       \
	___ok; })

#define ASSERT_NEQ(actual, expected, what) ({                             \
	long long ___a = (long long)(actual), ___e = (long long)(expected); \
	bool ___ok = ___a != ___e;                                         \
	if (!___ok)                                                        \
		test_fail(__FILE__, __LINE__, "%s: unexpected %lld",       \
			  (what), ___a);                                   \
	___ok; })

#define ASSERT_OK(err, what) ({                                           \
	long long ___r = (long long)(err);                                 \
	bool ___ok = ___r == 0;                                            \
	if (!___ok)                                                        \
		test_fail(__FILE__, __LINE__, "%s: returned %lld (%s)",    \
			  (what), ___r, strerror(___r < 0 ? (int)-___r : errno)); \
	___ok; })

#define ASSERT_GE(actual, expected, what) ({                              \
	long long ___a = (long long)(actual), ___e = (long long)(expected); \
	bool ___ok = ___a >= ___e;                                         \
	if (!___ok)                                                        \
		test_fail(__FILE__, __LINE__, "%s: actual %lld < %lld",    \
			  (what), ___a, ___e);                             \
	___ok; })

#define ASSERT_STREQ(actual, expected, what) ({                           \
	const char *___a = (actual), *___e = (expected);                   \
	bool ___ok = ___a && ___e && strcmp(___a, ___e) == 0;              \
	if (!___ok)                                                        \
		test_fail(__FILE__, __LINE__, "%s: actual \"%s\" != \"%s\"", \
			  (what), ___a ? ___a : "(null)", ___e ? ___e : "(null)"); \
	___ok; })

#define ASSERT_OK_PTR(ptr, what) ({                                       \
	const void *___p = (ptr);                                          \
	bool ___ok = ___p != NULL;                                         \
	if (!___ok)                                                        \
		test_fail(__FILE__, __LINE__, "%s: NULL (%s)", (what),     \
			  strerror(errno));                                \
	___ok; })

#endif
