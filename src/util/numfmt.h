/*
 * numfmt.h: numbers as text for people and for parsers at once: a double as the shortest of
 * %.15g, %.16g and %.17g that reads back as the same double, so 0.074074 prints as 0.074074
 * (not %.17g's 0.074074000000000001) and nothing is lost. Non-finite values print as printf
 * prints them (inf, nan): callers writing JSON handle those first.
 */
#ifndef OPSCOPE_UTIL_NUMFMT_H
#define OPSCOPE_UTIL_NUMFMT_H

#include <stdio.h>
#include <stdlib.h>

/* Write v into buf (at least 32 bytes); returns the length. */
static inline int numfmt_double(char *buf, size_t size, double v)
{
	int n = 0;
	for (int digits = 15; digits <= 17; digits++) {
		n = snprintf(buf, size, "%.*g", digits, v);
		if (v != v || strtod(buf, NULL) == v) /* NaN never compares equal */
			break;
	}
	return n;
}

#endif
