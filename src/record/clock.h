/*
 * clock.h: internal clock helpers of the record stage (see clock.c). record_ticks() and
 * the conversions are declared in record.h.
 */
#ifndef OPSCOPE_RECORD_CLOCK_H
#define OPSCOPE_RECORD_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "record/record.h"

/* 1 when ticks are TSC cycles, 0 when they are CLOCK_MONOTONIC ns. */
extern int clock_use_tsc;

struct clock_pair {
	uint64_t ticks;	      /* tick counter */
	uint64_t mono_ns;     /* CLOCK_MONOTONIC at the same moment */
	uint64_t realtime_ns; /* CLOCK_REALTIME, read just after */
};

void clock_pair(struct clock_pair *out);

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* record_ticks() inlined, for the hot path. */
static inline uint64_t clock_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(clock_use_tsc, 1))
		return __rdtsc();
#endif
	return record_ticks();
}
uint64_t clock_mono_ns(void);
/* CPU time of the calling thread, ns. */
uint64_t clock_thread_cpu_ns(void);
uint64_t clock_realtime_ns(void);
/* The kernel's current clocksource ("tsc", "kvm-clock", ...) or "" if unknown. */
const char *clock_source_name(char *buf, size_t size);

#endif
