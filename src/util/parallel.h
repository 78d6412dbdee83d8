/*
 * parallel.h: run one function over the items 0..n-1 on a few threads (the caller's
 * included), each item taken by exactly one thread, for the stages after loading that work
 * per track (nesting, the event tree). Items are taken in the order given, so a caller lists
 * its largest first and the small ones fill in beside them.
 */
#ifndef OPSCOPE_UTIL_PARALLEL_H
#define OPSCOPE_UTIL_PARALLEL_H

#include <stdint.h>

#define PARALLEL_THREADS_MAX 8

/* Call fn(arg, order[k]) (fn(arg, k) when order is NULL) for every k in [0, n), on up to
 * `threads` threads; returns when all calls have. A thread that cannot start leaves its
 * share to the others. fn must only touch what its item owns, or synchronize. */
void parallel_for(uint32_t n, const uint32_t *order, unsigned threads,
		  void (*fn)(void *arg, uint32_t item), void *arg);

/* The CPUs online, at least 1 (threads worth starting for work that scales with them). */
unsigned parallel_cpus(void);

#endif
