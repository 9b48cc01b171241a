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

void fuzz_seed_write(const char *dir, const char *file, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (!f)
		return;
	fwrite(data, 1, len, f);
	fclose(f);
}
