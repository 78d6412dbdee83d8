/*
 * json.h: a streaming JSON scanner for importers of large JSON traces.
 *
 * The input (a file, gzip'd or not, or memory) is read through a window that holds a few MB;
 * an importer parses one value at a time (one trace event, one top-level member) with the
 * json_* functions below, which never read past the window's end. When a value runs off the
 * end they return JSON_MORE: the importer calls json_in_refill() keeping the value's first
 * byte, and parses the value again from there. Memory therefore stays bounded by the largest
 * single value (which may grow the window up to JSON_MAX_VALUE), not by the text.
 *
 * Strings are returned as spans: into the window when they hold no escapes (the common case,
 * no copy), or into a scratch buffer holding the unescaped bytes. Spans stay valid until the
 * next refill (or, for a window moved by json_in_rebase(), as long as its buffer) or
 * json_scratch_reset(). The scanner validates as it goes (RFC 8259 grammar,
 * control characters, escapes, nesting depth); it does not validate UTF-8 in strings: bytes
 * pass through and whoever prints them escapes them.
 */
#ifndef OPSCOPE_CONVERT_JSON_H
#define OPSCOPE_CONVERT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define JSON_OK	  0
#define JSON_MORE 1  /* ran off the end of the window: refill and parse the value again */
#define JSON_ERR  -1 /* malformed: json_cur.err says what, at json_cur.errpos */
#define JSON_END  2  /* json_member: the object's closing '}' was read */

#define JSON_MAX_DEPTH 256		     /* deeper nesting is an error, not a stack overflow */
#define JSON_MAX_VALUE (1024u * 1024 * 1024) /* one value may not exceed this many bytes */
#define JSON_MAP_BYTES (1024u * 1024)	     /* plain files this large are mapped */

/* The input and its window. */
struct json_in {
	const char *name;    /* for messages */
	void *gz;	     /* gzFile of a file input (zlib reads plain files transparently) */
	char *buf;	     /* window storage; buf[len] is always a NUL sentinel */
	size_t cap;	     /* bytes of buf, sentinel excluded */
	size_t pos;	     /* first unconsumed byte */
	size_t len;	     /* bytes read into buf */
	uint64_t base;	     /* input offset of buf[0] */
	bool eof;	     /* nothing more to read */
	bool owned;	     /* buf is ours to free / grow */
	uint64_t file_bytes; /* size of the file on disk (compressed size for gzip) */
	bool gzipped;	     /* the file is gzip'd */
	bool mapped;	     /* buf maps the whole (plain) file: nothing is ever read or refilled */
	size_t released;     /* mapped: pages below this offset were given back */
};

/* A string or raw-token span. */
struct json_span {
	const char *s;
	size_t len;
};

/* Scratch memory for unescaped strings and canonical JSON text of one value. */
struct json_scratch {
	char *buf; /* the newest block (struct scratch_block in json.c), NULL before the first */
};

/* A cursor over the window while one value is parsed. */
struct json_cur {
	const char *p, *end;
	struct json_scratch *sc;
	const char *err;    /* static message when JSON_ERR */
	const char *errpos; /* where */
};

/* Open a file (gzip or plain, recognised by content). A plain file of JSON_MAP_BYTES or more
 * is mapped rather than read (OPSCOPE_JSON_MMAP=0 or OPSCOPE_JSON_WINDOW turn that off, =1
 * maps any size): the parser reads the page cache in place, with no copy. Returns 0 or a
 * negative OPSCOPE_E* code with a message in err. */
int json_in_open_file(struct json_in *in, const char *path, char *err, size_t errsize);
/* Read from memory (no copy). */
void json_in_open_mem(struct json_in *in, const char *name, const void *data, size_t size);
void json_in_close(struct json_in *in);
/* A mapped input: the text before `upto` is no longer needed; its pages are given back (in
 * steps of a few MB), so memory stays bounded by what is still in use, not by the file. No-op
 * for other inputs. */
void json_in_release(struct json_in *in, const char *upto);
/* A mapped input: unmap the pages of [from, to) (they stay in the page cache, and come back
 * when touched again). A look here and there over the file (cutting it into chunks) maps
 * whole large folios of the page cache: without this, most of the file would count in
 * memory from the start. No-op for other inputs. */
void json_in_forget(struct json_in *in, const char *from, const char *to);
/* A mapped input: ask the kernel to read [from, to) from disk ahead of its use (a file not in
 * the page cache would otherwise be read a page fault at a time). No-op for other inputs. */
void json_in_willneed(struct json_in *in, const char *from, const char *to);
/* Keep the bytes from `keep` (a pointer into the window) on, read more after them. Returns
 * 1 if bytes were added, 0 at the end of the input, or a negative OPSCOPE_E* code with a
 * message in err (read error, corrupt gzip data, a value larger than JSON_MAX_VALUE). */
int json_in_refill(struct json_in *in, const char *keep, char *err, size_t errsize);
/* Move the window to buf (cap bytes plus one for the sentinel; cap at least the bytes kept):
 * the bytes from `keep` on are copied to its start, and the old buffer is left as it was, for
 * spans that still point into it. Whoever calls this owns both buffers (in->owned is false). */
void json_in_rebase(struct json_in *in, const char *keep, char *buf, size_t cap);
/* Input offset of a pointer into the window. */
static inline uint64_t json_in_offset(const struct json_in *in, const char *p)
{
	return in->base + (uint64_t)(p - in->buf);
}
/* A cursor over the unconsumed window. */
static inline struct json_cur json_in_cursor(struct json_in *in, struct json_scratch *sc)
{
	return (struct json_cur){ in->buf + in->pos, in->buf + in->len, sc, NULL, NULL };
}

void json_scratch_reset(struct json_scratch *sc);
void json_scratch_free(struct json_scratch *sc);

/* Skip whitespace; JSON_MORE if the window ends first. */
static inline int json_ws(struct json_cur *c)
{
	while (c->p < c->end) {
		char ch = *c->p;
		if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t')
			return JSON_OK;
		c->p++;
	}
	return JSON_MORE;
}

static inline int json_fail(struct json_cur *c, const char *at, const char *msg)
{
	c->err = msg;
	c->errpos = at;
	return JSON_ERR;
}

/* Expect byte `ch` after whitespace and step over it. */
static inline int json_expect(struct json_cur *c, char ch, const char *what)
{
	int rc = json_ws(c);
	if (rc)
		return rc;
	if (*c->p != ch)
		return json_fail(c, c->p, what);
	c->p++;
	return JSON_OK;
}

/* The string at q (just after its opening quote) has escapes: unescape it into scratch. */
int json_string_slow(struct json_cur *c, const char *q, struct json_span *out);

/* Nonzero when one of the 8 bytes of w is '"', '\\' or a control character (< 0x20); its
 * lowest set bit is the high bit of the first such byte (the zero-byte trick can flag bytes
 * above a real hit, through the borrow, never below one). */
static inline uint64_t json_special_bytes(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
	/* a byte is zero in x when (x - 1) & ~x has its high bit set; w < 0x20 likewise */
	uint64_t zq = (q - ones) & ~q, zb = (b - ones) & ~b, lt = (w - ones * 0x20) & ~w;
	return (zq | zb | lt) & high;
}

/* A string at the cursor (which must be at '"'). Inline: the importers' hottest path. */
static inline int json_string(struct json_cur *c, struct json_span *out)
{
	const char *q = c->p + 1;
	const char *s = q;
	const char *end = c->end;
	/* eight bytes at a time to the first byte that may end the plain run; on little-endian
	 * hosts the mask's lowest bit says which one (the first byte in memory is the lowest) */
	while (end - s >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		uint64_t m = json_special_bytes(w);
		if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			s += __builtin_ctzll(m) >> 3;
#endif
			break;
		}
		s += 8;
	}
	while (s < end && *s != '"' && *s != '\\' && (unsigned char)*s >= 0x20)
		s++;
	if (s >= end)
		return JSON_MORE;
	if (*s == '"') {
		out->s = q;
		out->len = (size_t)(s - q);
		c->p = s + 1;
		return JSON_OK;
	}
	if (*s == '\\')
		return json_string_slow(c, q, out);
	return json_fail(c, s, "control character in a string");
}

/* Members of an object, one at a time, with the cursor just past its '{':
 *	bool first = true;
 *	struct json_span key;
 *	while ((rc = json_member(c, &first, &key)) == JSON_OK)
 *		... parse the value ...
 *	return rc == JSON_END ? JSON_OK : rc;
 * Each call steps over the ',' before the member (or the closing '}': JSON_END), the key and
 * its ':'. A ',' before the '}' is an error, as the grammar says. */
static inline int json_member(struct json_cur *c, bool *first, struct json_span *key)
{
	int rc = json_ws(c);
	if (rc)
		return rc;
	if (*c->p == '}') {
		c->p++;
		return JSON_END;
	}
	if (!*first) {
		if (*c->p != ',')
			return json_fail(c, c->p, "expected ',' or '}'");
		c->p++;
		if ((rc = json_ws(c)) != 0)
			return rc;
	}
	*first = false;
	if (*c->p != '"')
		return json_fail(c, c->p, "expected a string key");
	if ((rc = json_string(c, key)) != 0)
		return rc;
	return json_expect(c, ':', "expected ':'");
}

/* A number at the cursor: its text in `out`; *is_int when it is an integer that fits in
 * int64 (value in *iv). */
static inline int json_number(struct json_cur *c, struct json_span *out, bool *is_int, int64_t *iv)
{
	const char *s = c->p, *p = s, *end = c->end;
	bool neg = false;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (p >= end)
		return JSON_MORE;
	if (*p < '0' || *p > '9')
		return json_fail(c, p, "bad number");
	uint64_t v = 0;
	bool fits = true;
	if (*p == '0') {
		p++;
	} else {
		/* 19 digits always fit in 64 bits: only the ones after need the overflow check
		 * (a division per digit was on the parser's critical path) */
		const char *safe = end - p > 19 ? p + 19 : end;
		while (p < safe && *p >= '0' && *p <= '9')
			v = v * 10 + (unsigned)(*p++ - '0');
		while (p < end && *p >= '0' && *p <= '9') {
			unsigned d = (unsigned)(*p - '0');
			if (v > (UINT64_MAX - d) / 10)
				fits = false;
			else
				v = v * 10 + d;
			p++;
		}
	}
	bool integral = true;
	if (p < end && *p == '.') {
		integral = false;
		p++;
		const char *f = p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p < end && p == f)
			return json_fail(c, p, "bad number: no digits after '.'");
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		integral = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		const char *f = p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p < end && p == f)
			return json_fail(c, p, "bad number: no digits in the exponent");
	}
	if (p >= end)
		return JSON_MORE; /* the number may go on */
	out->s = s;
	out->len = (size_t)(p - s);
	*is_int = integral && fits && (neg ? v <= (uint64_t)INT64_MAX + 1 : v <= INT64_MAX);
	if (*is_int)
		*iv = neg ? (int64_t)(0 - v) : (int64_t)v;
	c->p = p;
	return JSON_OK;
}

/* Skip any value, validating it. */
int json_skip(struct json_cur *c, int depth);
/* Parse any value and append its compact canonical text to the scratch buffer (strings
 * re-escaped, invalid UTF-8 replaced by U+FFFD); the text is in *out. */
int json_canon(struct json_cur *c, struct json_span *out);
/* Any value as JSON text: the text itself when it is printable ASCII on one line (valid as it
 * is, since it was parsed), else its canonical form (json_canon). */
int json_value_text(struct json_cur *c, struct json_span *out);
/* The JSON number text of span `num` (µs, as Kineto writes ts/dur) as integer ns, exactly
 * for up to 3 decimals and rounded beyond; false when it is out of range (> ~106 days of
 * epoch µs is fine: the limit is ±9.2e15 µs). */
bool json_us_to_ns(struct json_span num, int64_t *ns);

/* A time as Kineto writes it, µs with up to three decimals ("1623142623502118.218"), in one
 * pass over its digits: true with *ns and the cursor after it. False, with nothing done, for
 * any other form (a sign, a leading zero, more decimals, an exponent, more than 16 digits) or
 * a number near the end of the window: json_number and json_us_to_ns take those, with the
 * same result. */
static inline bool json_us_fast(struct json_cur *c, int64_t *ns)
{
	const char *p = c->p;
	if (c->end - p < 32 || *p < '1' || *p > '9')
		return false;
	uint64_t us = 0;
	int digits = 0;
	while (*p >= '0' && *p <= '9') {
		if (++digits > 16)
			return false;
		us = us * 10 + (uint64_t)(*p++ - '0');
	}
	int64_t frac = 0;
	int decimals = 0;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			if (decimals == 3)
				return false; /* rounding: the general path */
			frac = frac * 10 + (*p++ - '0');
			decimals++;
		}
		if (decimals == 0)
			return false; /* "1." is an error: the general path reports it */
	}
	if (*p == 'e' || *p == 'E' || us > (uint64_t)(INT64_MAX / 1000 - 1))
		return false;
	static const int64_t scale[4] = { 1000, 100, 10, 1 };
	*ns = (int64_t)us * 1000 + frac * scale[decimals];
	c->p = p;
	return true;
}
/* The number text as a double. */
double json_to_double(struct json_span num);

#endif
