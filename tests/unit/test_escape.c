/*
 * test_escape.c: util/escape.h. Every class of byte (plain ASCII, quotes, backslash, C0
 * controls, DEL, C1 controls, valid 2-, 3- and 4-byte UTF-8, invalid bytes, overlong forms,
 * surrogates, code points above U+10FFFF, truncated sequences) for each target and flag,
 * against expected strings; then random strings of such bytes against byte-at-a-time
 * reference escapers, which pins the run-copying fast path to the simple definition.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/escape.h"
#include "util/utf8.h"

enum { T_JSON, T_CSV, T_TERM, T_UTF8 };

/* The escape of s[0..n) for target t with flags, NUL-terminated in a static buffer; *cols
 * gets the terminal width. */
static const char *esc(int t, const char *s, size_t n, unsigned flags, size_t *cols)
{
	static struct buf b;
	buf_clear(&b);
	struct esc_sink o = esc_sink_buf(&b);
	size_t w = 0;
	if (t == T_JSON)
		escape_json(o, s, n, flags);
	else if (t == T_CSV)
		escape_csv(o, s, n);
	else if (t == T_TERM)
		w = escape_terminal(o, s, n, flags);
	else
		escape_utf8(o, s, n);
	buf_u8(&b, 0);
	if (cols)
		*cols = w;
	return b.oom ? "(oom)" : (const char *)b.data;
}

#define ESC(t, lit, flags) esc((t), (lit), sizeof(lit) - 1, (flags), NULL)

TEST(json)
{
	CHECK_STR(ESC(T_JSON, "", 0), "\"\"");
	CHECK_STR(ESC(T_JSON, "abc def/~", 0), "\"abc def/~\"");
	CHECK_STR(ESC(T_JSON, "a\"b\\c", 0), "\"a\\\"b\\\\c\"");
	CHECK_STR(ESC(T_JSON, "\n\t\r\x01\x1f\x08", 0), "\"\\n\\t\\r\\u0001\\u001f\\u0008\"");
	CHECK_STR(ESC(T_JSON, "a\0b", 0), "\"a\\u0000b\"");
	/* DEL: as it is by default, escaped with ESC_JSON_DEL */
	CHECK_STR(ESC(T_JSON, "x\x7fy", 0), "\"x\x7fy\"");
	CHECK_STR(ESC(T_JSON, "x\x7fy", ESC_JSON_DEL), "\"x\\u007fy\"");
	/* no short forms */
	CHECK_STR(ESC(T_JSON, "\n\t\r\"", ESC_JSON_NO_SHORT), "\"\\u000a\\u0009\\u000d\\\"\"");
	CHECK_STR(ESC(T_JSON, "\x1b", ESC_JSON_NO_SHORT | ESC_JSON_DEL), "\"\\u001b\"");
	/* valid UTF-8 as it is, C1 controls included (JSON allows them) */
	CHECK_STR(ESC(T_JSON, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc2\x85", 0),
		  "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc2\x85\"");
	/* invalid: each byte one U+FFFD */
	CHECK_STR(ESC(T_JSON, "\xff", 0), "\"\\ufffd\"");
	CHECK_STR(ESC(T_JSON, "a\x80z", 0), "\"a\\ufffdz\"");
	CHECK_STR(ESC(T_JSON, "\xc0\xaf", 0), "\"\\ufffd\\ufffd\"");		/* overlong */
	CHECK_STR(ESC(T_JSON, "\xe0\x80\xaf", 0), "\"\\ufffd\\ufffd\\ufffd\""); /* overlong */
	CHECK_STR(ESC(T_JSON, "\xed\xa0\x80", 0), "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
	CHECK_STR(ESC(T_JSON, "\xf4\x90\x80\x80", 0),
		  "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");				/* above U+10FFFF */
	CHECK_STR(ESC(T_JSON, "\xe2\x82", 0), "\"\\ufffd\\ufffd\"");		/* truncated */
	CHECK_STR(ESC(T_JSON, "\xf0\x9f\x98", 0), "\"\\ufffd\\ufffd\\ufffd\""); /* truncated */
}

TEST(csv)
{
	CHECK_STR(ESC(T_CSV, "", 0), "");
	CHECK_STR(ESC(T_CSV, "plain text", 0), "plain text");
	CHECK_STR(ESC(T_CSV, "a,b", 0), "\"a,b\"");
	CHECK_STR(ESC(T_CSV, "say \"hi\"", 0), "\"say \"\"hi\"\"\"");
	CHECK_STR(ESC(T_CSV, "a\nb", 0), "\"a\nb\"");
	CHECK_STR(ESC(T_CSV, "a\rb", 0), "\"a\rb\"");
	/* controls, DEL, backslash and C1 as they are; no quotes for them */
	CHECK_STR(ESC(T_CSV, "\x01\t\x7f\\\xc2\x85", 0), "\x01\t\x7f\\\xc2\x85");
	CHECK_STR(ESC(T_CSV, "\xe2\x82\xac\xf0\x9f\x98\x80", 0), "\xe2\x82\xac\xf0\x9f\x98\x80");
	/* invalid bytes as U+FFFD */
	CHECK_STR(ESC(T_CSV, "a\xff", 0), "a\xef\xbf\xbd");
	CHECK_STR(ESC(T_CSV, "\xc0\xaf", 0), "\xef\xbf\xbd\xef\xbf\xbd");
	CHECK_STR(ESC(T_CSV, "\xed\xbf\xbf", 0), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	CHECK_STR(ESC(T_CSV, "\"\xff,", 0), "\"\"\"\xef\xbf\xbd,\"");
}

TEST(terminal)
{
	size_t cols = 99;
	CHECK_STR(esc(T_TERM, "", 0, 0, &cols), "");
	CHECK_EQ_U(cols, 0);
	CHECK_STR(esc(T_TERM, "a\\b", 3, 0, &cols), "a\\\\b");
	CHECK_EQ_U(cols, 4);
	CHECK_STR(esc(T_TERM, "\n\t\r", 3, 0, &cols), "\\n\\t\\x0d");
	CHECK_EQ_U(cols, 8);
	CHECK_STR(esc(T_TERM, "\n\t\r", 3, ESC_TERM_CR, &cols), "\\n\\t\\r");
	CHECK_EQ_U(cols, 6);
	CHECK_STR(ESC(T_TERM, "\x1b[31mred", 0), "\\x1b[31mred");
	CHECK_STR(ESC(T_TERM, "\x7f\"", 0), "\\x7f\"");
	CHECK_STR(ESC(T_TERM, "a\0b", 0), "a\\x00b");
	/* C1 controls: both bytes; U+00A0 is not one */
	CHECK_STR(esc(T_TERM, "\xc2\x9b\xc2\xa0", 4, 0, &cols), "\\xc2\\x9b\xc2\xa0");
	CHECK_EQ_U(cols, 9);
	/* one column per code point */
	CHECK_STR(esc(T_TERM, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, 0, &cols),
		  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	CHECK_EQ_U(cols, 3);
	/* invalid bytes as \xNN */
	CHECK_STR(ESC(T_TERM, "\xff", 0), "\\xff");
	CHECK_STR(ESC(T_TERM, "\xc0\xaf", 0), "\\xc0\\xaf");
	CHECK_STR(ESC(T_TERM, "\xed\xa0\x80", 0), "\\xed\\xa0\\x80");
	CHECK_STR(ESC(T_TERM, "\xf4\x90\x80\x80", 0), "\\xf4\\x90\\x80\\x80");
	CHECK_STR(ESC(T_TERM, "\xe2\x82z", 0), "\\xe2\\x82z");
}

TEST(utf8_repair)
{
	CHECK_STR(ESC(T_UTF8, "plain \x01\x7f\"\\", 0), "plain \x01\x7f\"\\");
	CHECK_STR(ESC(T_UTF8, "\xf0\x9f\x98\x80\xc2\x85", 0), "\xf0\x9f\x98\x80\xc2\x85");
	CHECK_STR(ESC(T_UTF8, "\xff!\xc0\xaf", 0), "\xef\xbf\xbd!\xef\xbf\xbd\xef\xbf\xbd");
	CHECK_STR(ESC(T_UTF8, "\xed\xa0\x80", 0), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	CHECK(utf8_valid("", 0));
	CHECK(utf8_valid("a\xc3\xa9\xf0\x9f\x98\x80", 8));
	CHECK(!utf8_valid("a\xc3", 2));
	CHECK(!utf8_valid("\xed\xa0\x80", 3));
	CHECK(!utf8_valid("\xc1\xbf", 2));
	CHECK(!utf8_valid("\xf5\x80\x80\x80", 4));
}

TEST(file_sink)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	REQUIRE(f);
	escape_terminal(esc_sink_file(f), "a\x1b!", 3, 0);
	escape_json(esc_sink_file(f), "\"", 1, 0);
	REQUIRE(fclose(f) == 0);
	CHECK_STR(text, "a\\x1b!\"\\\"\"");
	free(text);
}

/* ---------------------------------------------------------------------------------------- */
/* Byte-at-a-time references: what each escaper means, without runs. */

static void ref_put(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

static void ref_json(struct buf *b, const uint8_t *u, size_t n, unsigned flags)
{
	ref_put(b, "\"");
	for (size_t i = 0; i < n;) {
		uint8_t c = u[i];
		size_t l = utf8_seq_len(u + i, n - i);
		char e[8];
		if (c == '"' || c == '\\') {
			snprintf(e, sizeof(e), "\\%c", c);
		} else if (!(flags & ESC_JSON_NO_SHORT) && (c == '\n' || c == '\t' || c == '\r')) {
			snprintf(e, sizeof(e), "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
		} else if (c < 0x20 || (c == 0x7f && (flags & ESC_JSON_DEL))) {
			snprintf(e, sizeof(e), "\\u%04x", c);
		} else if (!l) {
			snprintf(e, sizeof(e), "\\ufffd");
		} else {
			buf_append(b, u + i, l);
			i += l;
			continue;
		}
		ref_put(b, e);
		i++;
	}
	ref_put(b, "\"");
}

static void ref_csv(struct buf *b, const uint8_t *u, size_t n)
{
	bool q = memchr(u, ',', n) || memchr(u, '"', n) || memchr(u, '\n', n) || memchr(u, '\r', n);
	if (q)
		ref_put(b, "\"");
	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len(u + i, n - i);
		if (u[i] == '"') {
			ref_put(b, "\"\"");
		} else if (!l) {
			ref_put(b, "\xef\xbf\xbd");
		} else {
			buf_append(b, u + i, l);
			i += l;
			continue;
		}
		i++;
	}
	if (q)
		ref_put(b, "\"");
}

static size_t ref_term(struct buf *b, const uint8_t *u, size_t n, unsigned flags)
{
	size_t cols = 0;
	for (size_t i = 0; i < n;) {
		uint8_t c = u[i];
		size_t l = utf8_seq_len(u + i, n - i);
		if (l == 2 && c == 0xc2 && u[i + 1] < 0xa0)
			l = 0;
		char e[8];
		if (c == '\\')
			snprintf(e, sizeof(e), "\\\\");
		else if (c == '\n')
			snprintf(e, sizeof(e), "\\n");
		else if (c == '\t')
			snprintf(e, sizeof(e), "\\t");
		else if (c == '\r' && (flags & ESC_TERM_CR))
			snprintf(e, sizeof(e), "\\r");
		else if (c < 0x20 || c == 0x7f || !l)
			snprintf(e, sizeof(e), "\\x%02x", c);
		else {
			buf_append(b, u + i, l);
			i += l;
			cols++;
			continue;
		}
		ref_put(b, e);
		cols += strlen(e);
		i++;
	}
	return cols;
}

static void ref_utf8(struct buf *b, const uint8_t *u, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len(u + i, n - i);
		if (!l) {
			ref_put(b, "\xef\xbf\xbd");
			i++;
		} else {
			buf_append(b, u + i, l);
			i += l;
		}
	}
}

TEST(random_against_reference)
{
	/* pieces: each class of byte and sequence, valid and not */
	static const char *const pieces[] = { "a",
					      "Z",
					      " ",
					      ",",
					      "\"",
					      "\\",
					      "/",
					      "\n",
					      "\t",
					      "\r",
					      "\x01",
					      "\x1f",
					      "\x7f",
					      "\xc3\xa9",
					      "\xc2\x85",
					      "\xc2\xa0",
					      "\xe2\x82\xac",
					      "\xf0\x9f\x98\x80",
					      "\x80",
					      "\xff",
					      "\xc0\xaf",
					      "\xed\xa0\x80",
					      "\xf4\x90\x80\x80",
					      "\xe2\x82",
					      "\xf0\x9f" };
	enum { NPIECES = sizeof(pieces) / sizeof(pieces[0]) };
	struct buf in, want, got;
	buf_init(&in);
	buf_init(&want);
	buf_init(&got);
	uint64_t s = 12345;
	int bad = 0;
	for (int iter = 0; iter < 20000; iter++) {
		buf_clear(&in);
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		int len = (int)(s >> 59); /* 0..31 pieces */
		for (int k = 0; k < len; k++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			ref_put(&in, pieces[(s >> 33) % NPIECES]);
		}
		const uint8_t *u = in.data ? in.data : (const uint8_t *)"";
		const char *c = (const char *)u;
		unsigned flags = (unsigned)(iter & 3);
		int t = (iter >> 2) & 3;
		buf_clear(&want);
		buf_clear(&got);
		size_t wc = 0, gc = 0;
		if (t == T_JSON) {
			ref_json(&want, u, in.len, flags);
			escape_json(esc_sink_buf(&got), c, in.len, flags);
		} else if (t == T_CSV) {
			ref_csv(&want, u, in.len);
			escape_csv(esc_sink_buf(&got), c, in.len);
		} else if (t == T_TERM) {
			wc = ref_term(&want, u, in.len, flags & ESC_TERM_CR);
			gc = escape_terminal(esc_sink_buf(&got), c, in.len, flags & ESC_TERM_CR);
		} else {
			ref_utf8(&want, u, in.len);
			escape_utf8(esc_sink_buf(&got), c, in.len);
			bad += utf8_valid(c, in.len) !=
			       (want.len == in.len && memcmp(want.data, u, in.len) == 0);
		}
		bad += want.len != got.len || wc != gc ||
		       (want.len && memcmp(want.data, got.data, want.len) != 0);
		/* every output is valid UTF-8 */
		bad += !utf8_valid((const char *)got.data, got.len);
	}
	CHECK_EQ_I(bad, 0);
	buf_free(&in);
	buf_free(&want);
	buf_free(&got);
}

/* A cell a spreadsheet would run as a formula is quoted text with a ' first; numbers stay. */
TEST(csv_cell)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "=1+2", "\"'=1+2\"" },
		{ "+cmd|' /C calc'!A0", "\"'+cmd|' /C calc'!A0\"" },
		{ "-2+3", "\"'-2+3\"" },
		{ "@SUM(A1)", "\"'@SUM(A1)\"" },
		{ "\tx", "\"'\tx\"" },
		{ "\rx", "\"'\rx\"" },
		{ "=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"" },
		{ "-", "\"'-\"" },
		{ "-e5", "\"'-e5\"" },
		{ "-1.5", "-1.5" },
		{ "+3", "+3" },
		{ "-2e-3", "-2e-3" },
		{ "-.5", "-.5" },
		{ "conv2d", "conv2d" },
		{ "a,b", "\"a,b\"" },
		{ "a=b", "a=b" },
		{ "", "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b;
		buf_init(&b);
		escape_csv_cell(esc_sink_buf(&b), cases[i].in, strlen(cases[i].in));
		buf_u8(&b, 0);
		CHECK_STR((const char *)b.data, cases[i].want);
		buf_free(&b);
	}
}

TEST_MAIN(json, csv, csv_cell, terminal, utf8_repair, file_sink, random_against_reference)
