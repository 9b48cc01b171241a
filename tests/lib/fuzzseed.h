/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Seed corpora for the libFuzzer targets (fuzz/): tests/run-fuzz.sh runs a
 * fuzzer once with SF_FUZZ_SEED_DIR=DIR when its corpus is empty.
 */
#ifndef SF_TEST_FUZZSEED_H
#define SF_TEST_FUZZSEED_H

#include <stddef.h>

/* From LLVMFuzzerInitialize(): when SF_FUZZ_SEED_DIR is set, calls
 * write_seeds(dir), says so on stderr under name, and exits 0. */
void fuzz_seed_from_env(const char *name, void (*write_seeds)(const char *dir));
/* Defines the fuzzer's LLVMFuzzerInitialize() as just that. Seeds are
 * written before fuzzing starts: an exit() inside a test input would be
 * reported by libFuzzer as a crash (and leave an artifact). */
#define FUZZ_SEED_INITIALIZE(name, write_seeds)                          \
	int LLVMFuzzerInitialize(int *argc, char ***argv);                \
	int LLVMFuzzerInitialize(int *argc, char ***argv)                 \
	{                                                                 \
		(void)argc;                                               \
		(void)argv;                                               \
		fuzz_seed_from_env((name), (write_seeds));                \
		return 0;                                                 \
	}
/* Writes DIR/file with len bytes of data (best effort: a seed; a file
 * that cannot be written is said on stderr). */
void fuzz_seed_write(const char *dir, const char *file, const void *data, size_t len);
/* The same with head_len bytes of head first: for fuzzers whose input is
 * a fixed-size header (a seccomp_data, a selector byte) then a body. */
void fuzz_seed_write_head(const char *dir, const char *file, const void *head,
			  size_t head_len, const void *data, size_t len);

#endif
