// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Framing shared by both ends of the protocol (loader/proto/proto.h): the
 * header every message starts with, and the control messages (credentials,
 * descriptors) a request or a reply carries.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

void sf_proto_header(struct sf_msg_hdr *h, uint16_t type, uint32_t len, uint32_t request_id)
{
	*h = (struct sf_msg_hdr){ .magic = SF_PROTO_MAGIC, .version = SF_PROTO_VERSION,
				  .type = type, .length = len, .request_id = request_id };
}

void sf_proto_add_cmsg(struct msghdr *mh, int type, const void *data, size_t len)
{
	struct cmsghdr *cm = (struct cmsghdr *)((char *)mh->msg_control + mh->msg_controllen);

	memset(cm, 0, CMSG_SPACE(len));
	cm->cmsg_len = CMSG_LEN(len);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = type;
	memcpy(CMSG_DATA(cm), data, len);
	mh->msg_controllen += CMSG_SPACE(len);
}

int sf_proto_agent_path(const char *socket_path, char *out, size_t size)
{
	int n = snprintf(out, size, "%s%s", socket_path, SF_PROTO_AGENT_SUFFIX);

	if (n < 0 || (size_t)n >= size ||
	    (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

const char *sf_proto_socket_path(void)
{
	const char *p = getenv(SF_PROTO_SOCKET_ENV);

	return p && *p ? p : SF_PROTO_DEFAULT_SOCKET;
}
