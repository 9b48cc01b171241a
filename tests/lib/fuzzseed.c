// SPDX-License-Identifier: GPL-2.0-only
/* Seed corpora for the libFuzzer targets: see fuzzseed.h. */
#include "fuzzseed.h"

#include <stdio.h>
#include <stdlib.h>

void fuzz_seed_from_env(const char *name, void (*write_seeds)(const char *dir))
{
	const char *dir = getenv("SF_FUZZ_SEED_DIR");

	if (!dir || !*dir)
		return;
	write_seeds(dir);
	fprintf(stderr, "%s: seeds written to %s\n", name, dir);
	exit(0);
}

void fuzz_seed_write_head(const char *dir, const char *file, const void *head,
			  size_t head_len, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return;
	}
	if ((head_len && fwrite(head, 1, head_len, f) != head_len) ||
	    (len && fwrite(data, 1, len, f) != len))
		perror(path);
	if (fclose(f))
		perror(path);
}

void fuzz_seed_write(const char *dir, const char *file, const void *data, size_t len)
{
	fuzz_seed_write_head(dir, file, NULL, 0, data, len);
}
