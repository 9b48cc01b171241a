/* SPDX-License-Identifier: GPL-2.0-only */
/* One descriptor over a Unix socket (SCM_RIGHTS), with one byte of data:
 * how a confined child hands its seccomp listener to the test. */
#ifndef SF_TEST_FDPASS_H
#define SF_TEST_FDPASS_H

/* Sends fd on sock (the caller keeps its copy). 0 or -1. */
int fdpass_send(int sock, int fd);
/* The next descriptor from sock (close-on-exec), or -1. */
int fdpass_recv(int sock);

struct msghdr;
/* Points mh's control data at cbuf, which has room for
 * CMSG_SPACE(nfds * sizeof(int)) bytes, holding one SCM_RIGHTS message
 * with the nfds descriptors of fds (nfds >= 1). */
void fdpass_rights(struct msghdr *mh, void *cbuf, const int *fds, int nfds);

struct sock_fprog;
/* In a child: sets no_new_privs, installs prog with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER and sends the listener on sock,
 * keeping no copy (a confined task must never hold its own listener).
 * 0; 100 + errno when the install failed; 2 when the send did. */
int fdpass_listener(int sock, const struct sock_fprog *prog);

#endif
