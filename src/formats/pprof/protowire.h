/*
 * protowire.h: the protocol buffers wire format, as far as pprof's profile.proto needs it
 * (https://protobuf.dev/programming-guides/encoding/): a reader that walks the fields of one
 * message over a bounds-checked cursor, and a writer that appends fields to a struct buf.
 * No schema compiler and no library: profile.proto is eight small messages.
 *
 * A field is a tag (varint: field number << 3 | wire type) and a value: VARINT (0), I64 (1,
 * eight bytes little-endian), LEN (2, a varint length and that many bytes: strings, nested
 * messages, packed repeated scalars), I32 (5). The group wire types (3, 4) are not used by
 * proto3 and are refused. Repeated scalars come one field per value or packed (one LEN field
 * of values back to back); readers must take both (pw_scalars_next).
 *
 * Reader invariant: nothing is read outside [data, data + len); every error names the offset
 * of the byte it was found at, counted from the start of the whole input (`base`).
 */
#ifndef OPSCOPE_FORMATS_PPROF_PROTOWIRE_H
#define OPSCOPE_FORMATS_PPROF_PROTOWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/cursor.h"

enum pw_wire {
	PW_VARINT = 0,
	PW_I64 = 1,
	PW_LEN = 2,
	PW_SGROUP = 3, /* refused */
	PW_EGROUP = 4, /* refused */
	PW_I32 = 5,
};

/* One field as read. */
struct pw_field {
	uint32_t number;     /* field number, >= 1 */
	uint8_t wire;	     /* enum pw_wire */
	uint64_t value;	     /* VARINT, I64, I32: the value */
	const uint8_t *data; /* LEN: the bytes */
	size_t len;	     /* LEN: their count */
	size_t offset;	     /* offset of the tag in the whole input */
	size_t data_offset;  /* LEN: offset of data in the whole input */
};

/* A reader over the fields of one message. */
struct pw_reader {
	struct cursor c;
	size_t base;	 /* offset of the message's first byte in the whole input */
	const char *err; /* why reading failed (static text), NULL while it has not */
	size_t err_off;	 /* offset of the failure in the whole input */
};

void pw_init(struct pw_reader *r, const void *data, size_t len, size_t base);
/* Read the next field: 1, 0 at the end of the message, -1 on malformed input (r->err,
 * r->err_off: a truncated varint, a varint longer than ten bytes, field number 0, a group or
 * unknown wire type, a length past the end of the message). */
int pw_next(struct pw_reader *r, struct pw_field *f);
/* A reader over the bytes of a LEN field (a nested message). */
void pw_sub(struct pw_reader *sub, const struct pw_field *f);
/* Fail the reader at `offset` (whole input) with a static message; returns -1. */
int pw_fail(struct pw_reader *r, size_t offset, const char *msg);

/* The values of a repeated scalar field, one at a time: a VARINT field gives its one value, a
 * packed LEN field each varint in it. Start with *pos = 0; returns 1 with *v set, 0 after the
 * last, -1 on a malformed packed field or another wire type (r->err). */
int pw_scalars_next(struct pw_reader *r, const struct pw_field *f, size_t *pos, uint64_t *v);

/* Writer: fields appended to b (allocation failure is b->oom, checked once by the owner). */
void pw_put_varint(struct buf *b, uint32_t number, uint64_t v);
/* A varint field only when v is not 0 (proto3 leaves default scalars out). */
void pw_put_varint_nz(struct buf *b, uint32_t number, uint64_t v);
void pw_put_bytes(struct buf *b, uint32_t number, const void *data, size_t n);
/* Packed repeated varints (nothing when n is 0). */
void pw_put_packed(struct buf *b, uint32_t number, const uint64_t *v, size_t n);
/* A nested message: pw_begin appends the tag and returns where the message starts; fields
 * appended after it belong to it until pw_end puts its length in front of them. */
size_t pw_begin(struct buf *b, uint32_t number);
void pw_end(struct buf *b, size_t start);

#endif
