/*
 * test_json.c: the streaming JSON scanner's inline fast paths (convert/json.h), byte by byte
 * against what the grammar says: where a string ends, where an escape or a control character
 * stops the plain run, and that a window cut anywhere inside a value asks for more input
 * instead of reading past it. The importers' tests (e2e, fuzz corpus) cover whole documents.
 */
#include <stdlib.h>
#include <string.h>

#include "convert/json.h"
#include "harness.h"

/* The text in a buffer of exactly its length, so that ASan sees any read past the end. */
static char *exact_copy(const char *text, size_t n)
{
	char *b = malloc(n ? n : 1);
	if (b && n)
		memcpy(b, text, n);
	return b;
}

/* A string value of `len` plain bytes with `stop` at offset `at` (or none when at >= len),
 * then the closing quote: json_string agrees with a plain byte-by-byte reading, on the whole
 * text and on every shorter window. */
static int check_string(size_t len, size_t at, char stop)
{
	char text[80];
	size_t n = 0;
	text[n++] = '"';
	for (size_t i = 0; i < len; i++) {
		text[n++] = i == at ? stop : (char)(i % 3 == 2 ? 0xc3 : 'a' + i % 26);
		if (i == at && stop == '\\')
			text[n++] = 'n'; /* a valid escape: "\n" */
	}
	text[n++] = '"';
	int bad = 0;
	for (size_t w = 1; w <= n; w++) {
		char *b = exact_copy(text, w);
		struct json_scratch sc = { 0 };
		struct json_cur c = { b, b + w, &sc, NULL, NULL };
		struct json_span out = { 0 };
		int rc = json_string(&c, &out);
		bool ctl = at < len && stop == '\x01';
		bool esc = at < len && stop == '\\';
		if (w < n && !(ctl && w > at + 1)) {
			bad += rc != JSON_MORE; /* cut before the end: never a result */
		} else if (ctl) {
			bad += rc != JSON_ERR || c.errpos != b + 1 + at;
		} else if (esc) {
			bad += rc != JSON_OK || out.len != len || out.s[at] != '\n' || c.p != b + n;
		} else {
			bad += rc != JSON_OK || out.s != b + 1 || out.len != len || c.p != b + n ||
			       memcmp(out.s, text + 1, len) != 0;
		}
		json_scratch_free(&sc);
		free(b);
	}
	return bad;
}

TEST(string_ends_exactly)
{
	int bad = 0;
	for (size_t len = 0; len <= 40; len++) {
		bad += check_string(len, len, 0); /* plain */
		for (size_t at = 0; at < len; at++) {
			bad += check_string(len, at, '\\');
			bad += check_string(len, at, '\x01');
		}
	}
	CHECK_EQ_I(bad, 0);
}

/* Whitespace and members: a run of any length of the four whitespace bytes is skipped, a
 * control character or other byte is not, and a window of only whitespace asks for more. */
TEST(whitespace_runs)
{
	const char ws[4] = { ' ', '\n', '\r', '\t' };
	int bad = 0;
	for (size_t run = 0; run <= 20; run++) {
		for (int last = 0; last < 3; last++) {
			char text[32];
			for (size_t i = 0; i < run; i++)
				text[i] = ws[(i * 7 + run) % 4];
			text[run] = last == 0 ? '{' : last == 1 ? '\x0b' : '"';
			char *b = exact_copy(text, run + 1);
			struct json_cur c = { b, b + run + 1, NULL, NULL, NULL };
			bad += json_ws(&c) != JSON_OK || c.p != b + run;
			struct json_cur d = { b, b + run, NULL, NULL, NULL };
			bad += json_ws(&d) != JSON_MORE;
			free(b);
		}
	}
	CHECK_EQ_I(bad, 0);
}

TEST(members_and_numbers)
{
	const char *text = "{ \"ts\" : 1623142623502118.218,\n    \"dur\":-17, \"x\": 1e3 }";
	size_t n = strlen(text);
	char *b = exact_copy(text, n);
	struct json_cur c = { b + 1, b + n, NULL, NULL, NULL };
	bool first = true;
	struct json_span key, num;
	bool is_int;
	int64_t iv = 0;
	REQUIRE(json_member(&c, &first, &key) == JSON_OK);
	CHECK(key.len == 2 && memcmp(key.s, "ts", 2) == 0);
	REQUIRE(json_ws(&c) == JSON_OK && json_number(&c, &num, &is_int, &iv) == JSON_OK);
	CHECK(!is_int);
	int64_t ns = 0;
	CHECK(json_us_to_ns(num, &ns) && ns == 1623142623502118218ll);
	REQUIRE(json_member(&c, &first, &key) == JSON_OK);
	CHECK(key.len == 3 && memcmp(key.s, "dur", 3) == 0);
	REQUIRE(json_ws(&c) == JSON_OK && json_number(&c, &num, &is_int, &iv) == JSON_OK);
	CHECK(is_int && iv == -17);
	REQUIRE(json_member(&c, &first, &key) == JSON_OK);
	REQUIRE(json_ws(&c) == JSON_OK && json_number(&c, &num, &is_int, &iv) == JSON_OK);
	CHECK(!is_int && json_to_double(num) == 1000.0);
	CHECK_EQ_I(json_member(&c, &first, &key), JSON_END);
	CHECK(c.p == b + n);
	free(b);
}

TEST_MAIN(string_ends_exactly, whitespace_runs, members_and_numbers)
