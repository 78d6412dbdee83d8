/*
 * bytes.h: little-endian fixed-width encoding, LEB128 varints and zigzag, as inline helpers.
 *
 * Used by the trace writer (encode into a growable buffer) and, through cursor.h, by every
 * reader. Encoders assume the caller reserved room: a varint needs at most 10 bytes.
 */
#ifndef OPSCOPE_UTIL_BYTES_H
#define OPSCOPE_UTIL_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VARINT_MAX_BYTES 10

static inline uint8_t *put_u16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	return p + 2;
}

static inline uint8_t *put_u32le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 4;
}

static inline uint8_t *put_u64le(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 8;
}

static inline uint16_t get_u16le(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t get_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static inline uint64_t get_u64le(const uint8_t *p)
{
	return (uint64_t)get_u32le(p) | ((uint64_t)get_u32le(p + 4) << 32);
}

/* The first n bytes at p (all 8 when n >= 8) as a little-endian word, zero above them,
 * without reading past p + n. Two overlapping loads instead of a copy of n bytes into a
 * word: the copy's byte stores cannot forward to the word's load, which then waits for
 * them (two fifths of the committer's samples in commit_args sat on that load). */
static inline uint64_t get_upto8le(const uint8_t *p, size_t n)
{
	if (n >= 8)
		return get_u64le(p);
	if (n >= 4)
		return (uint64_t)get_u32le(p) | (uint64_t)get_u32le(p + n - 4) << (8 * (n - 4));
	if (n == 0)
		return 0;
	return (uint64_t)p[0] | (uint64_t)p[n / 2] << (8 * (n / 2)) |
	       (uint64_t)p[n - 1] << (8 * (n - 1));
}

/* Unsigned LEB128; returns the byte after the last one written. */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t zigzag_encode(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t zigzag_decode(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint64_t f64_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

static inline double f64_from_bits(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

#endif
