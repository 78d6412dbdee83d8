/*
 * json.c: the streaming JSON scanner of json.h: the refillable input window (plain or gzip'd
 * files through zlib, or memory) and the value parsers that importers build on.
 *
 * Every parser works on [c->p, c->end) and returns JSON_MORE as soon as it would need a byte
 * past the end; nothing it did before matters then, because the caller parses the whole value
 * again after a refill. That keeps the hot loops free of refill logic.
 */
#include "formats/chrome/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "opscope/opscope.h"

#include "util/escape.h"

#define JSON_WINDOW   (4u * 1024 * 1024) /* initial window */
#define SCRATCH_BLOCK (64u * 1024)

/* ---------------------------------------------------------------------------------------- */
/* Input */

int json_in_open_file(struct json_in *in, const char *path, char *err, size_t errsize)
{
	memset(in, 0, sizeof(*in));
	in->name = path;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		return OPSCOPE_EOPEN;
	}
	struct stat st;
	bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (regular)
		in->file_bytes = (uint64_t)st.st_size;
	unsigned char magic[2] = { 0, 0 };
	in->gzipped = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	/* OPSCOPE_JSON_MMAP=0 never maps, =1 maps any size (the tests) */
	const char *map_env = getenv("OPSCOPE_JSON_MMAP");
	const char *window_env = getenv("OPSCOPE_JSON_WINDOW");
	bool map = in->file_bytes >= JSON_MAP_BYTES;
	if (map_env && strcmp(map_env, "0") == 0)
		map = false;
	else if (map_env && strcmp(map_env, "1") == 0)
		map = in->file_bytes > 0;
	if (regular && !in->gzipped && map && in->file_bytes <= SIZE_MAX / 2 &&
	    !(window_env && *window_env)) {
		void *p = mmap(NULL, (size_t)in->file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) { /* else read it */
			close(fd);
			in->buf = p;
			in->len = in->cap = (size_t)in->file_bytes;
			in->eof = true;
			in->mapped = true;
			return 0;
		}
	}
	gzFile gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		snprintf(err, errsize, "%s: out of memory", path);
		return OPSCOPE_ENOMEM;
	}
	gzbuffer(gz, 256 * 1024);
	in->gz = gz;
	/* OPSCOPE_JSON_WINDOW (bytes) shrinks the window: the tests use it to make every value
	 * cross a refill somewhere */
	size_t window = JSON_WINDOW;
	if (window_env && atol(window_env) > 0 && (size_t)atol(window_env) < window)
		window = (size_t)atol(window_env);
	in->buf = malloc(window + 1);
	if (!in->buf) {
		json_in_close(in);
		snprintf(err, errsize, "%s: out of memory", path);
		return OPSCOPE_ENOMEM;
	}
	in->cap = window;
	in->owned = true;
	in->buf[0] = '\0';
	return 0;
}

void json_in_open_mem(struct json_in *in, const char *name, const void *data, size_t size)
{
	memset(in, 0, sizeof(*in));
	in->name = name;
	in->buf = (char *)(uintptr_t)data; /* never written: owned is false */
	in->len = size;
	in->cap = size;
	in->eof = true;
	in->file_bytes = size;
}

void json_in_close(struct json_in *in)
{
	if (in->gz)
		gzclose((gzFile)in->gz);
	if (in->owned)
		free(in->buf);
	if (in->mapped)
		munmap(in->buf, in->len);
	memset(in, 0, sizeof(*in));
}

void json_in_forget(struct json_in *in, const char *from, const char *to)
{
	if (!in->mapped || to <= from)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)from & ~(page - 1), hi = ((uintptr_t)to + page - 1) & ~(page - 1);
	uintptr_t end = ((uintptr_t)in->buf + in->len + page - 1) & ~(page - 1);
	(void)madvise((void *)lo, (hi < end ? hi : end) - lo, MADV_DONTNEED);
}

void json_in_willneed(struct json_in *in, const char *from, const char *to)
{
	if (!in->mapped || to <= from)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)from & ~(page - 1);
	(void)madvise((void *)lo, (uintptr_t)to - lo, MADV_WILLNEED);
}

void json_in_release(struct json_in *in, const char *upto)
{
	if (!in->mapped)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t to = (size_t)(upto - in->buf) / page * page;
	if (to < in->released + (4u << 20)) /* a few MB at a time: fewer calls */
		return;
	/* the mapping is private and read-only: dropped pages read the file again if touched */
	(void)madvise(in->buf + in->released, to - in->released, MADV_DONTNEED);
	in->released = to;
}

int json_in_refill(struct json_in *in, const char *keep, char *err, size_t errsize)
{
	if (in->eof)
		return 0;
	size_t from = (size_t)(keep - in->buf);
	size_t kept = in->len - from;
	if (from > 0) {
		memmove(in->buf, in->buf + from, kept);
		in->base += from;
		in->len = kept;
		in->pos = in->pos > from ? in->pos - from : 0;
	}
	if (in->len == in->cap) { /* one value fills the whole window: grow it */
		if (in->cap >= JSON_MAX_VALUE) {
			snprintf(err, errsize,
				 "%s: offset %llu: a single JSON value is larger than %u MB",
				 in->name, (unsigned long long)in->base, JSON_MAX_VALUE >> 20);
			return OPSCOPE_EFORMAT;
		}
		char *nb = realloc(in->buf, 2 * in->cap + 1);
		if (!nb) {
			snprintf(err, errsize, "%s: out of memory", in->name);
			return OPSCOPE_ENOMEM;
		}
		in->buf = nb;
		in->cap *= 2;
	}
	size_t want = in->cap - in->len;
	int n = gzread((gzFile)in->gz, in->buf + in->len,
		       (unsigned)(want > INT32_MAX ? INT32_MAX : want));
	if (n < 0) {
		int zerr = 0;
		const char *msg = gzerror((gzFile)in->gz, &zerr);
		snprintf(err, errsize, "%s: offset %llu: %s%s", in->name,
			 (unsigned long long)(in->base + in->len),
			 in->gzipped ? "corrupt gzip data: " : "read error: ",
			 zerr == Z_ERRNO ? strerror(errno) : msg);
		return zerr == Z_ERRNO ? OPSCOPE_EIO : OPSCOPE_EFORMAT;
	}
	if (n == 0) {
		int zerr = 0;
		const char *msg = gzerror((gzFile)in->gz, &zerr);
		if (zerr != Z_OK && zerr != Z_STREAM_END) {
			snprintf(err, errsize, "%s: offset %llu (uncompressed): %s", in->name,
				 (unsigned long long)(in->base + in->len),
				 zerr == Z_BUF_ERROR ? "gzip data is truncated" : msg);
			return OPSCOPE_ETRUNCATED;
		}
		in->eof = true;
		in->buf[in->len] = '\0';
		return 0;
	}
	in->len += (size_t)n;
	in->buf[in->len] = '\0';
	return 1;
}

void json_in_rebase(struct json_in *in, const char *keep, char *buf, size_t cap)
{
	size_t from = (size_t)(keep - in->buf);
	size_t kept = in->len - from;
	memcpy(buf, keep, kept);
	buf[kept] = '\0';
	in->base += from;
	in->pos = in->pos > from ? in->pos - from : 0;
	in->len = kept;
	in->buf = buf;
	in->cap = cap;
}

/* ---------------------------------------------------------------------------------------- */
/* Scratch: a list of blocks that never move, so spans into it stay valid until a reset. */

struct scratch_block {
	struct scratch_block *next;
	size_t cap, len;
	char data[];
};

static char *scratch_alloc(struct json_scratch *sc, size_t n)
{
	struct scratch_block *b = (struct scratch_block *)sc->buf;
	if (!b || b->cap - b->len < n) {
		size_t cap = n > SCRATCH_BLOCK ? n : SCRATCH_BLOCK;
		struct scratch_block *nb = malloc(sizeof(*nb) + cap);
		if (!nb)
			return NULL; /* the caller reports "out of memory" */
		nb->next = b;
		nb->cap = cap;
		nb->len = 0;
		sc->buf = (char *)nb;
		b = nb;
	}
	char *p = b->data + b->len;
	b->len += n;
	return p;
}

/* Give back the unused tail of the last allocation (it was sized for the worst case). */
static void scratch_trim(struct json_scratch *sc, const char *start, size_t used)
{
	struct scratch_block *b = (struct scratch_block *)sc->buf;
	b->len = (size_t)(start - b->data) + used;
}

void json_scratch_reset(struct json_scratch *sc)
{
	struct scratch_block *b = (struct scratch_block *)sc->buf;
	if (!b)
		return;
	while (b->next) { /* keep the oldest (first) block only */
		struct scratch_block *n = b->next;
		free(b);
		b = n;
	}
	b->len = 0;
	sc->buf = (char *)b;
}

void json_scratch_free(struct json_scratch *sc)
{
	struct scratch_block *b = (struct scratch_block *)sc->buf;
	while (b) {
		struct scratch_block *n = b->next;
		free(b);
		b = n;
	}
	memset(sc, 0, sizeof(*sc));
}

/* ---------------------------------------------------------------------------------------- */
/* Values */

static int fail(struct json_cur *c, const char *at, const char *msg)
{
	return json_fail(c, at, msg);
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Four hex digits at p (which has at least 4 bytes before end). */
static long hex4(const char *p)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t put_utf8(char *o, unsigned long cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The string starting at q (just after the opening quote) has escapes: unescape it into the
 * scratch buffer. */
int json_string_slow(struct json_cur *c, const char *q, struct json_span *out)
{
	/* find the closing quote first: the unescaped text is never longer than the source */
	const char *e = q;
	while (e < c->end && *e != '"') {
		if ((unsigned char)*e < 0x20)
			return fail(c, e, "control character in a string");
		e += *e == '\\' ? 2 : 1;
	}
	if (e >= c->end)
		return JSON_MORE;
	char *o = scratch_alloc(c->sc, (size_t)(e - q) + 1);
	if (!o)
		return fail(c, q, "out of memory");
	size_t n = 0;
	for (const char *s = q; s < e;) {
		if (*s != '\\') {
			o[n++] = *s++;
			continue;
		}
		char esc = s[1];
		s += 2;
		switch (esc) {
		case '"':
		case '\\':
		case '/':
			o[n++] = esc;
			break;
		case 'b':
			o[n++] = '\b';
			break;
		case 'f':
			o[n++] = '\f';
			break;
		case 'n':
			o[n++] = '\n';
			break;
		case 'r':
			o[n++] = '\r';
			break;
		case 't':
			o[n++] = '\t';
			break;
		case 'u': {
			if (e - s < 4)
				return fail(c, s - 2, "bad \\u escape");
			long cp = hex4(s);
			if (cp < 0)
				return fail(c, s - 2, "bad \\u escape");
			s += 4;
			if (cp >= 0xd800 && cp <= 0xdbff && e - s >= 6 && s[0] == '\\' &&
			    s[1] == 'u') {
				long lo = hex4(s + 2);
				if (lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					s += 6;
				}
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp = 0xfffd; /* a lone surrogate */
			/* \uXXXX is 6 source bytes, its UTF-8 at most 4 (a pair: 12 -> 4) */
			n += put_utf8(o + n, (unsigned long)cp);
			break;
		}
		default:
			return fail(c, s - 2, "bad escape in a string");
		}
	}
	scratch_trim(c->sc, o, n);
	out->s = o;
	out->len = n;
	c->p = e + 1;
	return JSON_OK;
}

/* A literal (true, false, null) at the cursor. */
static int literal(struct json_cur *c, struct json_span *out)
{
	static const char *const lits[] = { "true", "false", "null" };
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(lits[i]);
		if (*c->p != lits[i][0])
			continue;
		if ((size_t)(c->end - c->p) < n)
			return JSON_MORE;
		if (memcmp(c->p, lits[i], n) != 0)
			return fail(c, c->p, "unexpected character");
		out->s = c->p;
		out->len = n;
		c->p += n;
		return JSON_OK;
	}
	return fail(c, c->p, "unexpected character");
}

int json_skip(struct json_cur *c, int depth)
{
	int rc = json_ws(c);
	if (rc)
		return rc;
	struct json_span sp;
	char ch = *c->p;
	if (ch == '"')
		return json_string(c, &sp);
	if (ch == '-' || (ch >= '0' && ch <= '9')) {
		bool is_int;
		int64_t iv;
		return json_number(c, &sp, &is_int, &iv);
	}
	if (ch != '[' && ch != '{')
		return literal(c, &sp);
	if (depth >= JSON_MAX_DEPTH)
		return fail(c, c->p, "nesting too deep");
	char close = ch == '[' ? ']' : '}';
	c->p++;
	if ((rc = json_ws(c)) != 0)
		return rc;
	if (*c->p == close) {
		c->p++;
		return JSON_OK;
	}
	for (;;) {
		if (close == '}') {
			if ((rc = json_ws(c)) != 0)
				return rc;
			if (*c->p != '"')
				return fail(c, c->p, "expected a string key");
			if ((rc = json_string(c, &sp)) != 0)
				return rc;
			if ((rc = json_expect(c, ':', "expected ':'")) != 0)
				return rc;
		}
		if ((rc = json_skip(c, depth + 1)) != 0)
			return rc;
		if ((rc = json_ws(c)) != 0)
			return rc;
		if (*c->p == close) {
			c->p++;
			return JSON_OK;
		}
		if (*c->p != ',')
			return fail(c, c->p,
				    close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
		c->p++;
	}
}

/* Append s[0..n) to the canonical text being built in [*o, *o + *cap). */
struct canon {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void canon_put(struct canon *k, const char *s, size_t n)
{
	if (k->len + n > k->cap) {
		size_t cap = k->cap ? k->cap : 256;
		while (cap < k->len + n)
			cap *= 2;
		char *nb = realloc(k->buf, cap);
		if (!nb) {
			k->oom = true;
			return;
		}
		k->buf = nb;
		k->cap = cap;
	}
	memcpy(k->buf + k->len, s, n);
	k->len += n;
}

/* canon_put as the put function of an escaper's sink. */
static void canon_sink_put(void *ctx, const char *s, size_t n)
{
	canon_put(ctx, s, n);
}

/* A string of canonical JSON: every control as \u00XX, DEL as it is (util/escape.h). */
static void canon_string(struct canon *k, struct json_span sp)
{
	escape_json((struct esc_sink){ canon_sink_put, k }, sp.s, sp.len, ESC_JSON_NO_SHORT);
}

static int canon_value(struct json_cur *c, struct canon *k, int depth)
{
	int rc = json_ws(c);
	if (rc)
		return rc;
	struct json_span sp;
	char ch = *c->p;
	if (ch == '"') {
		if ((rc = json_string(c, &sp)) != 0)
			return rc;
		canon_string(k, sp);
		return JSON_OK;
	}
	if (ch == '-' || (ch >= '0' && ch <= '9')) {
		bool is_int;
		int64_t iv;
		if ((rc = json_number(c, &sp, &is_int, &iv)) != 0)
			return rc;
		canon_put(k, sp.s, sp.len);
		return JSON_OK;
	}
	if (ch != '[' && ch != '{') {
		if ((rc = literal(c, &sp)) != 0)
			return rc;
		canon_put(k, sp.s, sp.len);
		return JSON_OK;
	}
	if (depth >= JSON_MAX_DEPTH)
		return fail(c, c->p, "nesting too deep");
	char close = ch == '[' ? ']' : '}';
	canon_put(k, &ch, 1);
	c->p++;
	if ((rc = json_ws(c)) != 0)
		return rc;
	if (*c->p == close) {
		c->p++;
		canon_put(k, &close, 1);
		return JSON_OK;
	}
	for (;;) {
		if (close == '}') {
			if ((rc = json_ws(c)) != 0)
				return rc;
			if (*c->p != '"')
				return fail(c, c->p, "expected a string key");
			if ((rc = json_string(c, &sp)) != 0)
				return rc;
			canon_string(k, sp);
			if ((rc = json_expect(c, ':', "expected ':'")) != 0)
				return rc;
			canon_put(k, ":", 1);
		}
		if ((rc = canon_value(c, k, depth + 1)) != 0)
			return rc;
		if ((rc = json_ws(c)) != 0)
			return rc;
		if (*c->p == close) {
			c->p++;
			canon_put(k, &close, 1);
			return JSON_OK;
		}
		if (*c->p != ',')
			return fail(c, c->p,
				    close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
		c->p++;
		canon_put(k, ",", 1);
	}
}

int json_canon(struct json_cur *c, struct json_span *out)
{
	struct canon k = { NULL, 0, 0, false };
	const char *start = c->p;
	int rc = canon_value(c, &k, 0);
	if (rc == JSON_OK && k.oom)
		rc = fail(c, start, "out of memory");
	if (rc == JSON_OK) {
		char *o = scratch_alloc(c->sc, k.len ? k.len : 1);
		if (!o) {
			rc = fail(c, start, "out of memory");
		} else {
			memcpy(o, k.buf, k.len);
			out->s = o;
			out->len = k.len;
		}
	}
	free(k.buf);
	return rc;
}

int json_value_text(struct json_cur *c, struct json_span *out)
{
	struct json_cur probe = *c;
	if (json_ws(&probe))
		return JSON_MORE;
	const char *start = probe.p;
	int rc = json_skip(&probe, 0);
	if (rc) {
		*c = probe;
		return rc;
	}
	/* printable ASCII only: no line breaks, no bytes that might not be UTF-8 */
	const unsigned char *q = (const unsigned char *)start, *e = (const unsigned char *)probe.p;
	while (q < e && *q >= 0x20 && *q < 0x7f)
		q++;
	if (q == e) {
		out->s = start;
		out->len = (size_t)(probe.p - start);
		c->p = probe.p;
		return JSON_OK;
	}
	return json_canon(c, out);
}

/* ---------------------------------------------------------------------------------------- */
/* Numbers */

bool json_us_to_ns(struct json_span num, int64_t *ns)
{
	const char *p = num.s, *end = num.s + num.len;
	bool neg = p < end && *p == '-';
	p += neg;
	int64_t us = 0;
	int digits = 0;
	while (p < end && *p >= '0' && *p <= '9') {
		if (++digits > 16)
			goto slow;
		us = us * 10 + (*p++ - '0');
	}
	int64_t frac = 0;
	int fd = 0;
	bool round_up = false;
	if (p < end && *p == '.') {
		p++;
		while (p < end && *p >= '0' && *p <= '9') {
			if (fd < 3) {
				frac = frac * 10 + (*p - '0');
				fd++;
			} else if (fd == 3) {
				round_up = *p >= '5'; /* half away from zero on the 4th decimal */
				fd++;
			}
			p++;
		}
	}
	if (p != end || us > INT64_MAX / 1000 - 1)
		goto slow; /* an exponent, or too large for ns in int64 */
	for (int i = fd < 3 ? fd : 3; i < 3; i++)
		frac *= 10;
	int64_t v = us * 1000 + frac + (round_up ? 1 : 0);
	*ns = neg ? -v : v;
	return true;
slow : {
	double d = json_to_double(num) * 1000.0;
	if (!(d > -9.2e18 && d < 9.2e18)) /* NaN fails too */
		return false;
	*ns = (int64_t)llround(d);
	return true;
}
}

/* The exact double of a short decimal without strtod: when the digits, read as an integer m,
 * are below 2^53 and the power of ten e has |e| <= 22, both m and 10^|e| are doubles exactly,
 * and one multiplication or division rounds correctly (Clinger's fast path). Kineto's floats
 * ("0.400000", "89.5") all take it. False for anything else. */
static bool short_decimal(struct json_span num, double *out)
{
	static const double pow10[23] = { 1e0,	1e1,  1e2,  1e3,  1e4,	1e5,  1e6,  1e7,
					  1e8,	1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
					  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	const char *p = num.s, *end = num.s + num.len;
	bool neg = p < end && *p == '-';
	p += neg;
	uint64_t m = 0;
	int digits = 0, exp10 = 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++)
		m = m * 10 + (uint64_t)(*p - '0');
	if (p < end && *p == '.')
		for (p++; p < end && *p >= '0' && *p <= '9'; p++, digits++, exp10--)
			m = m * 10 + (uint64_t)(*p - '0');
	if (p != end || digits == 0 || digits > 15 || exp10 < -22)
		return false; /* an exponent, or more digits than are surely exact */
	double d = (double)m;
	d = exp10 < 0 ? d / pow10[-exp10] : d;
	*out = neg ? -d : d;
	return true;
}

double json_to_double(struct json_span num)
{
	double fast;
	if (short_decimal(num, &fast))
		return fast;
	char tmp[64];
	if (num.len < sizeof(tmp)) {
		memcpy(tmp, num.s, num.len);
		tmp[num.len] = '\0';
		return strtod(tmp, NULL);
	}
	char *big = malloc(num.len + 1);
	if (!big)
		return NAN;
	memcpy(big, num.s, num.len);
	big[num.len] = '\0';
	double d = strtod(big, NULL);
	free(big);
	return d;
}
