// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading a reply as a client does (loader/client/reply.c), without a
 * daemon: the framing check refuses anything that is not one whole reply
 * of this version, and the message comes back byte for byte from the JSON
 * the daemon writes (json-c, plain, with its escapes), wherever it sits in
 * the object, cut to the caller's buffer; a text that is not such JSON
 * gives an empty message, never a read past the text.
 */
#include "harness.h"
#include "client.h"
#include "proto.h"

#include <errno.h>
#include <string.h>
#include <json-c/json.h>

static union {
	struct sf_reply r;
	char b[SF_PROTO_MAX_MSG];
} buf;

/* buf as a reply whose text is text, then data_len bytes; its length. */
static size_t make_reply(const char *text, uint32_t data_len)
{
	size_t tlen = strlen(text), len = SF_PROTO_GREPLY_SIZE + tlen + 1 + data_len;

	memset(&buf.r, 0, sizeof(buf.r));
	sf_proto_header(&buf.r.hdr, SF_MSG_REPLY, (uint32_t)len, 1);
	buf.r.data_len = data_len;
	memcpy(buf.r.text, text, tlen + 1);
	memset(buf.r.text + tlen + 1, 'x', data_len);
	return len;
}

static const char *message_of(const char *text, char *out, size_t size)
{
	make_reply(text, 0);
	memset(out, 0x5a, size);
	sf_proto_reply_message(&buf.r, out, size);
	return out;
}

TEST(a_reply_is_checked_whole_before_it_is_read)
{
	size_t len = make_reply("{\"error\":22}", 4);

	ASSERT_OK(sf_proto_check_reply(&buf, len), "a well-formed reply with data");
	ASSERT_EQ(sf_proto_check_reply(&buf, len - 1), -EPROTO, "length != hdr.length");
	ASSERT_EQ(sf_proto_check_reply(&buf, SF_PROTO_GREPLY_SIZE), -EPROTO, "no text at all");
	buf.r.hdr.version = 2;
	ASSERT_EQ(sf_proto_check_reply(&buf, len), -EPROTO, "another version");
	len = make_reply("{}", 0);
	buf.r.hdr.type = 2;
	ASSERT_EQ(sf_proto_check_reply(&buf, len), -EPROTO, "type 2 (version 2's ATTACH reply)");
	len = make_reply("{}", 0);
	buf.r.hdr.magic ^= 1;
	ASSERT_EQ(sf_proto_check_reply(&buf, len), -EPROTO, "wrong magic");
	len = make_reply("{}", 0);
	buf.r.data_len = 3;
	ASSERT_EQ(sf_proto_check_reply(&buf, len), -EPROTO, "data_len over the text");
	len = make_reply("{}", 2);
	buf.b[len - 3] = '}';
	ASSERT_EQ(sf_proto_check_reply(&buf, len), -EPROTO, "text not NUL-terminated");
}

TEST(a_reply_message_reads_back_what_the_daemon_wrote)
{
	static const char *const msgs[] = {
		"filter 7 attached to thread 1234",
		"insn 0 (code 0x0020): load at offset 3: /sys/fs/bpf/sfilter",
		"quotes \" backslashes \\ tab\t newline\n controls \x01\x1f\x7f",
		"UTF-8 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7 stays",
	};
	char out[SF_PROTO_MAX_TEXT];
	size_t i;

	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		struct json_object *o = json_object_new_object(), *a = json_object_new_array();

		/* Values of every kind before it, with commas and braces in
		 * strings, as ADMIN_ATTACH's reply has them. */
		json_object_object_add(o, "filter", json_object_new_int64(7));
		json_object_array_add(a, json_object_new_string("tsync,}]\""));
		json_object_object_add(o, "flags", a);
		json_object_object_add(o, "nested", json_tokener_parse("{\"m\":[1,{\"x\":\"}\"}]}"));
		json_object_object_add(o, "message", json_object_new_string(msgs[i]));
		json_object_object_add(o, "error", json_object_new_int(22));
		ASSERT_STREQ(message_of(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
					out, sizeof(out)), msgs[i], msgs[i]);
		json_object_put(o);
	}
	ASSERT_STREQ(message_of("{\"message\":\"abcdefghij\"}", out, 8), "abcdefg",
		     "cut to the buffer, NUL-terminated");
	ASSERT_STREQ(message_of(" { \"message\" : \"\\u00e9\\u20ac\\ud800\\/\" } ", out,
				sizeof(out)), "\xc3\xa9\xe2\x82\xac?/", "\\u escapes as UTF-8");
	ASSERT_STREQ(message_of("{\"error\":22}", out, sizeof(out)), "", "none: empty");
	ASSERT_STREQ(message_of("{\"messages\":\"no\"}", out, sizeof(out)), "", "another key");
	ASSERT_STREQ(message_of("{\"a\":\"\\q\",\"message\":\"x\"}", out, sizeof(out)), "",
		     "a bad escape before it: empty");
	ASSERT_STREQ(message_of("{\"message\":\"abc", out, sizeof(out)), "", "unterminated");
	ASSERT_STREQ(message_of("{\"message\":\"\\u12", out, sizeof(out)), "", "short \\u");
	ASSERT_STREQ(message_of("{\"message\":1}", out, sizeof(out)), "", "not a string");
	ASSERT_STREQ(message_of("plain text", out, sizeof(out)), "", "not JSON");
	ASSERT_STREQ(message_of("{\"a\":[1,2", out, sizeof(out)), "", "cut in a value");
}
