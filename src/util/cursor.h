/*
 * cursor.h: a bounds-checked reader over a byte range.
 *
 * Every reader of untrusted bytes goes through a cursor. A read past the end, or a varint
 * longer than 10 bytes, sets `failed` and returns 0; callers check `failed` once after a
 * group of reads. The offset of the first failure is kept for error messages.
 */
#ifndef OPSCOPE_UTIL_CURSOR_H
#define OPSCOPE_UTIL_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cursor {
	const uint8_t *base; /* start of the range */
	size_t len;	     /* bytes in the range */
	size_t pos;	     /* next byte to read */
	bool failed;	     /* a read went out of bounds or was malformed */
	size_t fail_pos;     /* pos at the first failure */
};

void cursor_init(struct cursor *c, const void *base, size_t len);
size_t cursor_left(const struct cursor *c);
/* Mark the cursor failed at the current position (for semantic errors). */
void cursor_fail(struct cursor *c);
uint64_t cursor_varint_slow(struct cursor *c);

/* The two reads of every event are inline: the loader decodes tens of millions of them. */
static inline uint8_t cursor_u8(struct cursor *c)
{
	if (!c->failed && c->pos < c->len)
		return c->base[c->pos++];
	cursor_fail(c);
	return 0;
}

static inline uint64_t cursor_varint(struct cursor *c)
{
	if (!c->failed && c->len - c->pos >= 2) {
		uint8_t b0 = c->base[c->pos];
		if (!(b0 & 0x80)) {
			c->pos++;
			return b0;
		}
		uint8_t b1 = c->base[c->pos + 1];
		if (!(b1 & 0x80)) {
			c->pos += 2;
			return (uint64_t)(b0 & 0x7f) | (uint64_t)b1 << 7;
		}
	}
	return cursor_varint_slow(c);
}

uint16_t cursor_u16(struct cursor *c);
uint32_t cursor_u32(struct cursor *c);
uint64_t cursor_u64(struct cursor *c);
double cursor_f64(struct cursor *c);
/* A pointer to the next n bytes, advancing past them; NULL (and failed) if fewer remain. */
const uint8_t *cursor_bytes(struct cursor *c, size_t n);
/* A "str" (u32 length + bytes); sets *len. NULL on failure. */
const char *cursor_str(struct cursor *c, uint32_t *len);
#endif
