/*
 * grow.h: arrays that grow by doubling, for tables appended to one element at a time. A
 * capacity only grows; on failure (out of memory, or a size that would overflow) the array
 * and its capacity are as they were.
 */
#ifndef OPSCOPE_UTIL_GROW_H
#define OPSCOPE_UTIL_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Grow *p (elements of `size` bytes, capacity *cap) to hold `need` elements. */
static inline bool grow_array(void **p, size_t size, uint64_t *cap, uint64_t need)
{
	if (need <= *cap)
		return true;
	uint64_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / size)
		return false;
	void *q = realloc(*p, (size_t)(n * size));
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

/* The same with a 32-bit capacity (tables indexed by uint32_t: at most UINT32_MAX / 2). */
static inline bool grow_array32(void **p, size_t size, uint32_t *cap, uint64_t need)
{
	uint64_t c = *cap;
	if (need > UINT32_MAX / 2)
		return false;
	bool ok = grow_array(p, size, &c, need);
	*cap = (uint32_t)c;
	return ok;
}

#endif
