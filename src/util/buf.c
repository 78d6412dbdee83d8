/*
 * buf.c: growable byte buffer (see buf.h). Growth doubles, so appends are amortized O(1).
 */
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

void buf_init(struct buf *b)
{
	memset(b, 0, sizeof(*b));
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void buf_clear(struct buf *b)
{
	b->len = 0;
}

uint8_t *buf_reserve(struct buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	/* an empty buffer gets its first block even for n == 0: no pointer arithmetic on NULL */
	if (n > b->cap - b->len || !b->data) {
		size_t want = b->cap ? b->cap : 256;
		while (want - b->len < n) {
			if (want > SIZE_MAX / 2) {
				b->oom = true;
				return NULL;
			}
			want *= 2;
		}
		uint8_t *p = realloc(b->data, want);
		if (!p) {
			b->oom = true;
			return NULL;
		}
		b->data = p;
		b->cap = want;
	}
	return b->data + b->len;
}

void buf_append(struct buf *b, const void *data, size_t n)
{
	uint8_t *p = buf_reserve(b, n);
	if (p && n) {
		memcpy(p, data, n);
		b->len += n;
	}
}

void buf_u8(struct buf *b, uint8_t v)
{
	buf_append(b, &v, 1);
}

void buf_u32(struct buf *b, uint32_t v)
{
	uint8_t *p = buf_reserve(b, 4);
	if (p)
		b->len += (size_t)(put_u32le(p, v) - p);
}

void buf_u64(struct buf *b, uint64_t v)
{
	uint8_t *p = buf_reserve(b, 8);
	if (p)
		b->len += (size_t)(put_u64le(p, v) - p);
}

void buf_varint(struct buf *b, uint64_t v)
{
	uint8_t *p = buf_reserve(b, VARINT_MAX_BYTES);
	if (p)
		b->len += (size_t)(put_varint(p, v) - p);
}

void buf_str(struct buf *b, const char *s, size_t n)
{
	buf_u32(b, (uint32_t)n);
	buf_append(b, s, n);
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char small[256];
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		buf_append(b, small, (size_t)n);
		return;
	}
	uint8_t *p = buf_reserve(b, (size_t)n + 1);
	if (!p)
		return;
	va_start(ap, fmt);
	vsnprintf((char *)p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}
