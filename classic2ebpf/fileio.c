// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Filter files: raw struct sock_filter[] bytes, as libseccomp's
 * seccomp_export_bpf() writes them, or the text form of asm.c.
 *
 * Every struct sock_filter starts with a 16-bit code whose high byte is 0
 * for every opcode classic BPF defines, so a raw file practically always
 * holds a NUL byte and a text file never does: that is the whole test.
 */
#include "c2e.h"
#include "fail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Far above any filter (4096 instructions are 32 KiB raw, a few hundred
 * KiB as text); it only stops us from slurping a wrong file whole. */
#define MAX_FILE_BYTES (1u << 20)

#define file_error(err, ret, ...) c2e_fail(err, -1, 0, ret, __VA_ARGS__)

/* Reads at most MAX_FILE_BYTES + 1 bytes, so an oversized file is seen. */
static int read_capped(const char *path, char **buf, size_t *size)
{
	size_t cap = MAX_FILE_BYTES + 1, n = 0;
	char *b;
	int fd, ret = 0;

	/* "-" is stdin, as for every file the command lines read. */
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	if (fd < 0)
		return -errno;
	b = malloc(cap);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	while (n < cap) {
		ssize_t r = read(fd, b + n, cap - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	if (ret) {
		free(b);
		return ret;
	}
	*buf = b;
	*size = n;
	return 0;
}

int c2e_load_file(const char *path, struct sock_filter **out, size_t *len,
		  struct c2e_error *err)
{
	return c2e_load_file_abi(path, C2E_ABI_SECCOMP, out, len, err);
}

int c2e_load_buf_abi(const char *buf, size_t size, enum c2e_abi abi,
		     struct sock_filter **out, size_t *len, struct c2e_error *err)
{
	struct sock_filter *insns;

	*out = NULL;
	*len = 0;
	if (size == 0)
		return file_error(err, -EINVAL, "file is empty");
	if (size > MAX_FILE_BYTES)
		return file_error(err, -EFBIG,
				  "file is larger than %u bytes, too large for a filter",
				  MAX_FILE_BYTES);
	if (!memchr(buf, '\0', size))
		return c2e_asm_parse_abi(buf, size, abi, out, len, err);
	if (size % sizeof(struct sock_filter))
		return file_error(err, -EINVAL,
				  "file is %zu bytes, not a multiple of %zu (struct sock_filter)",
				  size, sizeof(struct sock_filter));
	/* No length limit here: a raw file of more than 4096 instructions
	 * loads, and c2e_validate() refuses it with its own message. */
	insns = malloc(size);
	if (!insns)
		return -ENOMEM;
	memcpy(insns, buf, size);
	*out = insns;
	*len = size / sizeof(struct sock_filter);
	return 0;
}

int c2e_load_file_abi(const char *path, enum c2e_abi abi,
		      struct sock_filter **out, size_t *len,
		      struct c2e_error *err)
{
	char *buf = NULL;
	size_t size = 0;
	int ret;

	*out = NULL;
	*len = 0;
	ret = read_capped(path, &buf, &size);
	if (ret)
		return ret;
	ret = c2e_load_buf_abi(buf, size, abi, out, len, err);
	free(buf);
	return ret;
}

int c2e_save_raw(const char *path, const struct sock_filter *insns,
		 size_t len)
{
	const char *p = (const char *)insns;
	size_t left = len * sizeof(*insns);
	int fd, ret = 0;

	fd = strcmp(path, "-") ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
			       : dup(STDOUT_FILENO);
	if (fd < 0)
		return -errno;
	while (left) {
		ssize_t w = write(fd, p, left);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		p += w;
		left -= w;
	}
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}
