/*
 * checked.h: integer sums that say when they leave their type, for the analyses and the
 * merge of partials, which refuse a total they cannot hold instead of wrapping it.
 */
#ifndef OPSCOPE_UTIL_CHECKED_H
#define OPSCOPE_UTIL_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

/* Add a + b into *sum; false when it leaves int64. */
static inline bool checked_add_i64(int64_t *sum, int64_t a, int64_t b)
{
	return !__builtin_add_overflow(a, b, sum);
}

#endif
