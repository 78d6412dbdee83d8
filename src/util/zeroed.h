/*
 * zeroed.h: zeroed arrays that are read before they are written (open-addressing tables).
 *
 * calloc hands out large blocks as fresh pages, which the kernel maps to its shared zero page
 * on a first read. A table probed before it is filled then takes a second fault per page on
 * the first write to it, and while other threads of the process run, that fault flushes the
 * TLB of every CPU they run on (an interrupt each). Writing the zeros up front maps each page
 * once, writable. Measured on a Kineto import, where the parser thread runs beside the model
 * builder: bench/RESULTS.md.
 */
#ifndef OPSCOPE_UTIL_ZEROED_H
#define OPSCOPE_UTIL_ZEROED_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* n elements of `size` bytes, all zero and already written; NULL if out of memory. */
static inline void *zeroed_table(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t bytes = n * size;
	void *p = malloc(bytes ? bytes : 1);
	if (p)
		memset(p, 0, bytes);
	return p;
}

#endif
