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

/* CSV field: ASCII other than " and valid UTF-8 go in runs; " doubled; invalid bytes as
 * U+FFFD; quoted when a separator, quote or line break is inside. */
void escape_csv(struct esc_sink o, const char *s, size_t n)
{
	const uint8_t *u = (const uint8_t *)s;
	bool quote = false;
	for (size_t i = 0; i < n && !quote; i++)
		quote = u[i] == ',' || u[i] == '"' || u[i] == '\n' || u[i] == '\r';
	if (quote)
		o.put(o.ctx, "\"", 1);
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
	if (quote)
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
