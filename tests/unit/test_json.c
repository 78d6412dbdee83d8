/*
 * test_json.c: the streaming JSON scanner's inline fast paths (formats/chrome/json.h), byte by byte
 * against what the grammar says: where a string ends, where an escape or a control character
 * stops the plain run, and that a window cut anywhere inside a value asks for more input
 * instead of reading past it. The importers' tests (e2e, fuzz corpus) cover whole documents.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/chrome/json.h"
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

/* Integers at and past the limits of int64 (19 digits are read without an overflow check,
 * the ones after with it), and up to 25 random digits against strtoll. */
TEST(integer_limits)
{
	static const struct {
		const char *text;
		bool is_int;
		int64_t v;
	} cases[] = {
		{ "9223372036854775807", true, INT64_MAX },
		{ "-9223372036854775808", true, INT64_MIN },
		{ "9223372036854775808", false, 0 },
		{ "-9223372036854775809", false, 0 },
		{ "9999999999999999999", false, 0 },	  /* 19 digits, fits uint64 only */
		{ "18446744073709551615", false, 0 },	  /* UINT64_MAX */
		{ "18446744073709551616", false, 0 },	  /* past it */
		{ "123456789012345678901234", false, 0 }, /* far past it */
		{ "1234567890123456789", true, 1234567890123456789ll },
		{ "0", true, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[64];
		size_t n = (size_t)snprintf(text, sizeof(text), "%s,", cases[i].text);
		char *b = exact_copy(text, n);
		struct json_cur c = { b, b + n, NULL, NULL, NULL };
		struct json_span num;
		bool is_int = !cases[i].is_int;
		int64_t iv = 0;
		CHECK_EQ_I(json_number(&c, &num, &is_int, &iv), JSON_OK);
		CHECK(is_int == cases[i].is_int);
		CHECK(!is_int || iv == cases[i].v);
		CHECK(num.len == n - 1);
		free(b);
	}
	uint64_t seed = 99;
	int bad = 0;
	for (int i = 0; i < 100000; i++) {
		char text[40];
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		size_t n = 0, digits = 1 + (seed >> 20) % 25;
		if (seed >> 63)
			text[n++] = '-';
		for (size_t d = 0; d < digits; d++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			text[n++] =
				(char)('0' + (d == 0 ? 1 + (seed >> 33) % 9 : (seed >> 33) % 10));
		}
		text[n++] = ']';
		text[n] = '\0';
		char *b = exact_copy(text, n);
		struct json_cur c = { b, b + n, NULL, NULL, NULL };
		struct json_span num;
		bool is_int;
		int64_t iv = 0;
		errno = 0;
		long long want = strtoll(text, NULL, 10);
		bool fits = errno != ERANGE;
		bad += json_number(&c, &num, &is_int, &iv) != JSON_OK || is_int != fits ||
		       (fits && iv != want);
		free(b);
	}
	CHECK_EQ_I(bad, 0);
}

/* A random number as JSON writes it: [-]digits[.digits], sometimes with an exponent or a
 * leading zero, 1 to 19 digits in all. */
static size_t random_number(char *out, uint64_t *seed)
{
	size_t n = 0;
	uint64_t r = *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	if (r >> 63)
		out[n++] = '-';
	int ints = 1 + (int)((r >> 8) % 17), decs = (int)((r >> 16) % 6) - 1;
	for (int i = 0; i < ints; i++)
		out[n++] = (char)('0' + (i == 0 && (r >> 24) % 5 ? 1 + (r >> 28) % 9
								 : (r >> (i + 30)) % 10));
	if (decs >= 0) {
		out[n++] = '.';
		for (int i = 0; i <= decs; i++)
			out[n++] = (char)('0' + (r >> (i * 3 + 40)) % 10);
	}
	if ((r >> 20) % 23 == 0)
		n += (size_t)sprintf(out + n, "e%d", (int)((r >> 50) % 30) - 10);
	out[n] = '\0';
	return n;
}

TEST(fast_numbers_match_the_general_ones)
{
	uint64_t seed = 7;
	int fast_us = 0, mismatches = 0;
	for (int i = 0; i < 200000; i++) {
		char text[64];
		size_t n = random_number(text, &seed);
		/* doubles: the short-decimal path against strtod, bit for bit */
		double want = strtod(text, NULL),
		       got = json_to_double((struct json_span){ text, n });
		if (memcmp(&want, &got, sizeof(want)) != 0 && mismatches++ < 5)
			fprintf(stderr, "# json_to_double(%s) = %.17g, strtod: %.17g\n", text, got,
				want);
		/* times: the one-pass path against json_number + json_us_to_ns, on text padded so
		 * that it may take the fast path, and followed by a ',' */
		char padded[64];
		memset(padded, ' ', sizeof(padded));
		memcpy(padded, text, n);
		padded[n] = ',';
		struct json_cur c = { padded, padded + sizeof(padded), NULL, NULL, NULL };
		int64_t fast = 0;
		bool took = json_us_fast(&c, &fast);
		struct json_cur g = { padded, padded + sizeof(padded), NULL, NULL, NULL };
		struct json_span num;
		bool is_int;
		int64_t iv, slow = 0;
		bool ok =
			json_number(&g, &num, &is_int, &iv) == JSON_OK && json_us_to_ns(num, &slow);
		if (took) {
			fast_us++;
			if ((!ok || fast != slow || c.p != g.p) && mismatches++ < 5)
				fprintf(stderr, "# json_us_fast(%s) = %lld, general: %lld\n", text,
					(long long)fast, (long long)slow);
		} else if (c.p != padded && mismatches++ < 5) {
			fprintf(stderr, "# json_us_fast(%s) declined but moved the cursor\n", text);
		}
	}
	CHECK_EQ_I(mismatches, 0);
	CHECK(fast_us > 20000); /* the fast path was taken, not only declined */
	/* and Kineto's forms take it */
	char ts[48] = "1623142623502118.218,                    ";
	struct json_cur c = { ts, ts + sizeof(ts) - 1, NULL, NULL, NULL };
	int64_t ns = 0;
	CHECK(json_us_fast(&c, &ns) && ns == 1623142623502118218ll && *c.p == ',');
}

TEST_MAIN(string_ends_exactly, whitespace_runs, members_and_numbers, integer_limits,
	  fast_numbers_match_the_general_ones)
