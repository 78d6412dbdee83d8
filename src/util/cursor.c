/*
 * cursor.c: bounds-checked reads for every parser of untrusted bytes (see cursor.h).
 * Invariant: pos <= len at all times; after a failure every read returns 0 and pos stays.
 */
#include "util/cursor.h"

#include <string.h>

#include "util/bytes.h"

void cursor_init(struct cursor *c, const void *base, size_t len)
{
	c->base = base;
	c->len = len;
	c->pos = 0;
	c->failed = false;
	c->fail_pos = 0;
}

size_t cursor_left(const struct cursor *c)
{
	return c->len - c->pos;
}

void cursor_fail(struct cursor *c)
{
	if (!c->failed) {
		c->failed = true;
		c->fail_pos = c->pos;
	}
}

const uint8_t *cursor_bytes(struct cursor *c, size_t n)
{
	if (c->failed || n > c->len - c->pos) {
		cursor_fail(c);
		return NULL;
	}
	const uint8_t *p = c->base + c->pos;
	c->pos += n;
	return p;
}

uint16_t cursor_u16(struct cursor *c)
{
	const uint8_t *p = cursor_bytes(c, 2);
	return p ? get_u16le(p) : 0;
}

uint32_t cursor_u32(struct cursor *c)
{
	const uint8_t *p = cursor_bytes(c, 4);
	return p ? get_u32le(p) : 0;
}

uint64_t cursor_u64(struct cursor *c)
{
	const uint8_t *p = cursor_bytes(c, 8);
	return p ? get_u64le(p) : 0;
}

double cursor_f64(struct cursor *c)
{
	return f64_from_bits(cursor_u64(c));
}

uint64_t cursor_varint_slow(struct cursor *c)
{
	uint64_t v = 0;
	if (c->failed)
		return 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (c->pos >= c->len) {
			cursor_fail(c);
			return 0;
		}
		uint8_t b = c->base[c->pos++];
		if (shift == 63 && b > 1) { /* the 10th byte may only hold the top bit */
			cursor_fail(c);
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	cursor_fail(c);
	return 0;
}

const char *cursor_str(struct cursor *c, uint32_t *len)
{
	uint32_t n = cursor_u32(c);
	const uint8_t *p = cursor_bytes(c, n);
	*len = p ? n : 0;
	return (const char *)p;
}
