/*
 * escape.h: the one place where strings from a trace are escaped for where they go: JSON
 * (the report, the Chrome exporter, the JSON importer's canonical text of argument values),
 * CSV (RFC 4180), the terminal (the report's text tables, dump, info) and plain valid UTF-8
 * (the SQLite exporter). One function per target syntax; where two outputs of the same
 * syntax differ (the report's JSON escapes DEL, the Chrome export does not), a documented
 * flag says how, so that every output stays byte for byte what it was.
 *
 * Invariants: whatever the bytes, the output is valid in its syntax and valid UTF-8 (invalid
 * UTF-8 as U+FFFD, or as \xNN on a terminal; utf8_seq_len decides what is valid). The
 * escapers write through a sink (a put function and its context) so that each output keeps
 * its own buffer; bytes that need no escape go to the sink in runs, one call per run, so the
 * common all-ASCII string costs one scan and one copy.
 */
#ifndef OPSCOPE_UTIL_ESCAPE_H
#define OPSCOPE_UTIL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/utf8.h"

/* Where escaped text goes: put(ctx, s, n) appends n bytes. Errors are the sink's to keep. */
struct esc_sink {
	void (*put)(void *ctx, const char *s, size_t n);
	void *ctx;
};

/* Sinks for the project's byte buffer and for a stdio stream (fwrite; errors left in the
 * stream). */
struct esc_sink esc_sink_buf(struct buf *b);
struct esc_sink esc_sink_file(FILE *f);

/* escape_json flags. Default (0): \" \\ \n \t \r, other controls below 0x20 as \u00XX
 * (lower-case hex), DEL and valid UTF-8 as they are, each invalid byte as \ufffd. */
enum {
	ESC_JSON_DEL = 1u << 0,	     /* DEL (0x7f) as \u007f too (the report) */
	ESC_JSON_NO_SHORT = 1u << 1, /* \n \t \r as \u000a \u0009 \u000d (canonical values) */
};

/* s[0..n) as a JSON string, quotes included. */
void escape_json(struct esc_sink o, const char *s, size_t n, unsigned flags);

/* escape_json inlined into the caller: where the sink's put function is known there, it is
 * called directly, even inlined (the Chrome export writes millions of names; through a
 * function pointer each name cost a tenth more instructions). Runs of printable ASCII other
 * than " and \ (and DEL with ESC_JSON_DEL) and of valid UTF-8 go whole; the rest as short
 * or \u00XX escapes, invalid bytes as \ufffd. */
static inline void escape_json_inline(struct esc_sink o, const char *s, size_t n, unsigned flags)
{
	static const char hex_digits[] = "0123456789abcdef";
	const uint8_t *u = (const uint8_t *)s;
	const uint8_t plain_end = (flags & ESC_JSON_DEL) ? 0x7f : 0x80; /* ASCII below is plain */
	o.put(o.ctx, "\"", 1);
	size_t run = 0; /* start of the bytes not yet put */
	for (size_t i = 0; i < n;) {
		uint8_t c = u[i];
		if (c >= 0x20 && c < plain_end && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t l = utf8_seq_len(u + i, n - i);
			if (l) {
				i += l;
				continue;
			}
		}
		if (i > run)
			o.put(o.ctx, s + run, i - run);
		char e[6] = { '\\', 'u', '0', '0', hex_digits[c >> 4], hex_digits[c & 15] };
		size_t len = 6;
		if (c == '"' || c == '\\') {
			e[1] = (char)c;
			len = 2;
		} else if (c >= 0x80) {
			memcpy(e, "\\ufffd", 6);
		} else if (!(flags & ESC_JSON_NO_SHORT) && (c == '\n' || c == '\t' || c == '\r')) {
			e[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			len = 2;
		}
		o.put(o.ctx, e, len);
		run = ++i;
	}
	if (n > run)
		o.put(o.ctx, s + run, n - run);
	o.put(o.ctx, "\"", 1);
}

/* s[0..n) as one CSV field (RFC 4180): quoted when it holds , " CR or LF, quotes doubled,
 * each invalid UTF-8 byte as U+FFFD; other bytes (controls too) as they are. */
void escape_csv(struct esc_sink o, const char *s, size_t n);
/* escape_csv for a cell that a spreadsheet will open: a text starting with = + - @, a tab or
 * a carriage return would be run as a formula (OWASP "CSV Injection"), so it is written
 * quoted with a ' first ("'=1+2"), which spreadsheets show as text; a plain decimal number
 * ("-1.5", "+3", "2e-3") stays as it is, a number. */
void escape_csv_cell(struct esc_sink o, const char *s, size_t n);

/* escape_terminal flags. Default (0): \\ as \\\\, \n \t as \n \t, every other control
 * (C0, DEL, and C1 = U+0080..U+009F, both of its bytes) and each invalid UTF-8 byte as \xNN
 * (lower-case hex). */
enum {
	ESC_TERM_CR = 1u << 0, /* \r as \r rather than \x0d (the report) */
};

/* s[0..n) made safe for a terminal: nothing in it can move the cursor or start an escape
 * sequence. Returns the display width in columns, counting one per code point. */
size_t escape_terminal(struct esc_sink o, const char *s, size_t n, unsigned flags);

/* s[0..n) as valid UTF-8: each invalid byte as U+FFFD, everything else as it is. */
void escape_utf8(struct esc_sink o, const char *s, size_t n);

/* Is s[0..n) valid UTF-8 (escape_utf8 would copy it unchanged)? */
bool utf8_valid(const char *s, size_t n);

#endif
