/*
 * buf.h: a growable byte buffer. Used to build records and text before one write.
 * Allocation failure is sticky: `oom` is set, later appends do nothing, and the owner
 * checks it once before using the bytes.
 */
#ifndef OPSCOPE_UTIL_BUF_H
#define OPSCOPE_UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *data; /* bytes, owned */
	size_t len;    /* bytes used */
	size_t cap;    /* bytes allocated */
	bool oom;      /* an allocation failed */
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_clear(struct buf *b);
/* Make room for n more bytes; returns a pointer to them or NULL (and sets oom). */
uint8_t *buf_reserve(struct buf *b, size_t n);
void buf_append(struct buf *b, const void *data, size_t n);
void buf_u8(struct buf *b, uint8_t v);
void buf_u32(struct buf *b, uint32_t v);
void buf_u64(struct buf *b, uint64_t v);
void buf_varint(struct buf *b, uint64_t v);
/* u32 length + bytes */
void buf_str(struct buf *b, const char *s, size_t n);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
