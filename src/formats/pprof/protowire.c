/*
 * protowire.c: the protocol buffers wire format reader and writer of protowire.h, written
 * from the encoding spec (base-128 varints, little-endian groups of seven bits, the high bit
 * saying more follow; a tag is number << 3 | wire type; LEN values carry a varint length).
 */
#include "formats/pprof/protowire.h"

#include <string.h>

void pw_init(struct pw_reader *r, const void *data, size_t len, size_t base)
{
	cursor_init(&r->c, data, len);
	r->base = base;
	r->err = NULL;
	r->err_off = 0;
}

int pw_fail(struct pw_reader *r, size_t offset, const char *msg)
{
	if (!r->err) {
		r->err = msg;
		r->err_off = offset;
	}
	return -1;
}

/* A varint at the cursor; false (r failed) when truncated or longer than ten bytes. */
static bool read_varint(struct pw_reader *r, uint64_t *v)
{
	size_t at = r->c.pos;
	*v = cursor_varint(&r->c);
	if (!r->c.failed)
		return true;
	bool truncated = r->c.len - at < 10;
	for (size_t i = at; i < r->c.len && i < at + 10; i++)
		if (!(r->c.base[i] & 0x80))
			truncated = false;
	pw_fail(r, r->base + at, truncated ? "truncated varint" : "varint longer than 64 bits");
	return false;
}

int pw_next(struct pw_reader *r, struct pw_field *f)
{
	if (r->err)
		return -1;
	if (cursor_left(&r->c) == 0)
		return 0;
	memset(f, 0, sizeof(*f));
	f->offset = r->base + r->c.pos;
	uint64_t tag;
	if (!read_varint(r, &tag))
		return -1;
	if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
		return pw_fail(r, f->offset, "invalid field number");
	f->number = (uint32_t)(tag >> 3);
	f->wire = (uint8_t)(tag & 7);
	switch (f->wire) {
	case PW_VARINT:
		return read_varint(r, &f->value) ? 1 : -1;
	case PW_I64:
	case PW_I32: {
		size_t n = f->wire == PW_I64 ? 8 : 4;
		const uint8_t *p = cursor_bytes(&r->c, n);
		if (!p)
			return pw_fail(r, f->offset, "truncated fixed-width field");
		for (size_t i = 0; i < n; i++)
			f->value |= (uint64_t)p[i] << (8 * i);
		return 1;
	}
	case PW_LEN: {
		size_t at = r->c.pos;
		uint64_t len;
		if (!read_varint(r, &len))
			return -1;
		if (len > cursor_left(&r->c))
			return pw_fail(r, r->base + at, "length runs past the end of the message");
		f->data_offset = r->base + r->c.pos;
		f->len = (size_t)len;
		f->data = cursor_bytes(&r->c, f->len);
		return 1;
	}
	case PW_SGROUP:
	case PW_EGROUP:
		return pw_fail(r, f->offset, "group wire type (not used by profile.proto)");
	default:
		return pw_fail(r, f->offset, "invalid wire type");
	}
}

void pw_sub(struct pw_reader *sub, const struct pw_field *f)
{
	pw_init(sub, f->data, f->len, f->data_offset);
}

int pw_scalars_next(struct pw_reader *r, const struct pw_field *f, size_t *pos, uint64_t *v)
{
	if (f->wire == PW_VARINT) {
		if (*pos)
			return 0;
		*pos = 1;
		*v = f->value;
		return 1;
	}
	if (f->wire != PW_LEN)
		return pw_fail(r, f->offset, "wrong wire type for a repeated integer");
	if (*pos >= f->len)
		return 0;
	struct pw_reader p;
	pw_init(&p, f->data, f->len, f->data_offset);
	p.c.pos = *pos;
	if (!read_varint(&p, v))
		return pw_fail(r, p.err_off, p.err);
	*pos = p.c.pos;
	return 1;
}

void pw_put_varint(struct buf *b, uint32_t number, uint64_t v)
{
	buf_varint(b, (uint64_t)number << 3 | PW_VARINT);
	buf_varint(b, v);
}

void pw_put_varint_nz(struct buf *b, uint32_t number, uint64_t v)
{
	if (v)
		pw_put_varint(b, number, v);
}

void pw_put_bytes(struct buf *b, uint32_t number, const void *data, size_t n)
{
	buf_varint(b, (uint64_t)number << 3 | PW_LEN);
	buf_varint(b, n);
	buf_append(b, data, n);
}

void pw_put_packed(struct buf *b, uint32_t number, const uint64_t *v, size_t n)
{
	if (!n)
		return;
	size_t at = pw_begin(b, number);
	for (size_t i = 0; i < n; i++)
		buf_varint(b, v[i]);
	pw_end(b, at);
}

size_t pw_begin(struct buf *b, uint32_t number)
{
	buf_varint(b, (uint64_t)number << 3 | PW_LEN);
	return b->len;
}

void pw_end(struct buf *b, size_t start)
{
	if (b->oom)
		return;
	size_t len = b->len - start;
	uint8_t v[10];
	size_t k = 0;
	uint64_t x = len;
	do {
		v[k++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
		x >>= 7;
	} while (x);
	if (!buf_reserve(b, k))
		return;
	/* the message's bytes move up to make room for its length in front of them */
	memmove(b->data + start + k, b->data + start, len);
	memcpy(b->data + start, v, k);
	b->len += k;
}
