/*
 * escape.c: the escapers of escape.h. Each one scans for the next byte that needs an escape,
 * hands the run before it to the sink in one call, then the escape; valid multi-byte UTF-8
 * stays inside a run. Output is the same whatever the sink: only the number of put calls
 * depends on where the escapes are.
 */
#include "util/escape.h"

#include <string.h>

#include "util/utf8.h"

static const char hex_digits[] = "0123456789abcdef";

static void put_buf(void *ctx, const char *s, size_t n)
{
	buf_append(ctx, s, n);
}

static void put_file(void *ctx, const char *s, size_t n)
{
	fwrite(s, 1, n, ctx);
}

/* A sink appending to b (errors: b->oom). */
struct esc_sink esc_sink_buf(struct buf *b)
{
	return (struct esc_sink){ put_buf, b };
}

/* A sink writing to f (errors: ferror(f)). */
struct esc_sink esc_sink_file(FILE *f)
{
	return (struct esc_sink){ put_file, f };
}

/* Length of the valid UTF-8 sequence at u[i] (a byte >= 0x80), 0 if invalid. */
static inline size_t seq_at(const uint8_t *u, size_t i, size_t n)
{
	return utf8_seq_len(u + i, n - i);
}

/* JSON string: escape_json_inline, called through the sink. */
void escape_json(struct esc_sink o, const char *s, size_t n, unsigned flags)
{
	escape_json_inline(o, s, n, flags);
}

/* CSV field body: ASCII other than " and valid UTF-8 go in runs; " doubled; invalid bytes
 * as U+FFFD. */
static void csv_body(struct esc_sink o, const char *s, size_t n)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t run = 0;
	for (size_t i = 0; i < n;) {
		uint8_t c = u[i];
		if (c < 0x80 && c != '"') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t l = seq_at(u, i, n);
			if (l) {
				i += l;
				continue;
			}
		}
		if (i > run)
			o.put(o.ctx, s + run, i - run);
		if (c == '"')
			o.put(o.ctx, "\"\"", 2);
		else
			o.put(o.ctx, "\xef\xbf\xbd", 3);
		run = ++i;
	}
	if (n > run)
		o.put(o.ctx, s + run, n - run);
}

/* CSV field: quoted when a separator, quote or line break is inside. */
void escape_csv(struct esc_sink o, const char *s, size_t n)
{
	const uint8_t *u = (const uint8_t *)s;
	bool quote = false;
	for (size_t i = 0; i < n && !quote; i++)
		quote = u[i] == ',' || u[i] == '"' || u[i] == '\n' || u[i] == '\r';
	if (quote)
		o.put(o.ctx, "\"", 1);
	csv_body(o, s, n);
	if (quote)
		o.put(o.ctx, "\"", 1);
}

/* Is s[0..n) a plain decimal number: [+-]digits[.digits][e[+-]digits], a digit at least
 * before the exponent? (Not strtod: no locale, no "inf", "nan" or hex.) */
static bool csv_is_number(const char *s, size_t n)
{
	size_t i = 0, digits = 0;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (!digits)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t exp = 0;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			exp++;
		if (!exp)
			return false;
	}
	return i == n;
}

/* A cell a spreadsheet would run as a formula starts with one of these (OWASP, "CSV
 * Injection"): it gets a ' first, inside quotes, unless it is a plain number. */
void escape_csv_cell(struct esc_sink o, const char *s, size_t n)
{
	if (n == 0 || s[0] == '\0' || !strchr("=+-@\t\r", s[0]) || csv_is_number(s, n)) {
		escape_csv(o, s, n);
		return;
	}
	o.put(o.ctx, "\"'", 2);
	csv_body(o, s, n);
	o.put(o.ctx, "\"", 1);
}

/* Terminal: printable ASCII but \ and valid UTF-8 other than C1 controls go in runs, one
 * column per code point; the rest as \\, \n, \t, (\r,) \xNN. */
size_t escape_terminal(struct esc_sink o, const char *s, size_t n, unsigned flags)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t cols = 0;
	size_t run = 0;
	for (size_t i = 0; i < n;) {
		uint8_t c = u[i];
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			i++;
			cols++;
			continue;
		}
		if (c >= 0x80) {
			size_t l = seq_at(u, i, n);
			/* C1 controls (U+0080..U+009F) are terminal escapes: both bytes as \xNN */
			if (l && !(l == 2 && c == 0xc2 && u[i + 1] < 0xa0)) {
				i += l;
				cols++;
				continue;
			}
		}
		if (i > run)
			o.put(o.ctx, s + run, i - run);
		char e[4] = { '\\', 'x', hex_digits[c >> 4], hex_digits[c & 15] };
		size_t len = 4;
		if (c == '\\' || c == '\n' || c == '\t' || (c == '\r' && (flags & ESC_TERM_CR))) {
			e[1] = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			len = 2;
		}
		o.put(o.ctx, e, len);
		cols += len;
		run = ++i;
	}
	if (n > run)
		o.put(o.ctx, s + run, n - run);
	return cols;
}

/* Valid UTF-8: everything in runs but invalid bytes, each as U+FFFD. */
void escape_utf8(struct esc_sink o, const char *s, size_t n)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t run = 0;
	for (size_t i = 0; i < n;) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		size_t l = seq_at(u, i, n);
		if (l) {
			i += l;
			continue;
		}
		if (i > run)
			o.put(o.ctx, s + run, i - run);
		o.put(o.ctx, "\xef\xbf\xbd", 3);
		run = ++i;
	}
	if (n > run)
		o.put(o.ctx, s + run, n - run);
}

/* Valid UTF-8 throughout? */
bool utf8_valid(const char *s, size_t n)
{
	const uint8_t *u = (const uint8_t *)s;
	for (size_t i = 0; i < n;) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		size_t l = seq_at(u, i, n);
		if (!l)
			return false;
		i += l;
	}
	return true;
}
