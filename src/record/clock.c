/*
 * clock.c: the tick clock of every event, and its calibration against CLOCK_MONOTONIC.
 *
 * On x86-64 with an invariant TSC (CPUID 0x80000007 EDX bit 8) ticks are raw `rdtsc`
 * values: 9 ns a read here against 21 ns for the vDSO clock (FINDINGS-collectors §2.1).
 * Elsewhere ticks are CLOCK_MONOTONIC nanoseconds. Trace files store ticks plus CLOCK
 * records (tick/monotonic pairs); readers map ticks to ns, so the hot path never converts.
 *
 * The tick rate is estimated from two (ticks, monotonic) pairs as far apart as possible:
 * the first is taken when the library loads, the second whenever a rate is asked for; the
 * estimate is frozen once the baseline exceeds one second.
 */
#include "record/clock.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define CLOCK_HAVE_TSC 1
#else
#define CLOCK_HAVE_TSC 0
#endif

int clock_use_tsc;

/* First calibration pair, taken at load. */
static uint64_t base_ticks, base_mono_ns;
/* Tick rate estimate in ticks per second, as a double's bits (0 until first estimated);
 * the tick value after which to estimate again; and whether it is final. */
static _Atomic uint64_t rate_bits;
static _Atomic uint64_t rate_refresh_ticks;
static _Atomic int rate_frozen;

static int rate_frozen_flag(void)
{
	return atomic_load_explicit(&rate_frozen, memory_order_relaxed);
}

uint64_t clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t clock_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t clock_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t record_ticks(void)
{
#if CLOCK_HAVE_TSC
	if (clock_use_tsc)
		return __rdtsc();
#endif
	return clock_mono_ns();
}

static int clock_tsc_invariant(void)
{
#if CLOCK_HAVE_TSC
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1u;
#else
	return 0;
#endif
}

void clock_pair(struct clock_pair *out)
{
	/* Bracket a monotonic read between two tick reads; keep the tightest of three tries
	 * so the pair is off by at most half the bracket. */
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = record_ticks();
		uint64_t mono = clock_mono_ns();
		uint64_t t1 = record_ticks();
		if (t1 - t0 < best) {
			best = t1 - t0;
			out->ticks = t0 + (t1 - t0) / 2;
			out->mono_ns = mono;
		}
	}
	out->realtime_ns = clock_realtime_ns();
}

__attribute__((constructor(101))) static void clock_init(void)
{
	clock_use_tsc = clock_tsc_invariant();
	struct clock_pair p;
	clock_pair(&p);
	base_ticks = p.ticks;
	base_mono_ns = p.mono_ns;
}

double record_ticks_per_second(void)
{
	if (!clock_use_tsc)
		return 1e9;
	/* Until the baseline is a second long, an estimate is reused until the baseline has
	 * doubled since it was made: one tick read per call, not a clock pair. */
	uint64_t bits = atomic_load_explicit(&rate_bits, memory_order_relaxed);
	if (bits &&
	    (rate_frozen_flag() ||
	     record_ticks() < atomic_load_explicit(&rate_refresh_ticks, memory_order_relaxed))) {
		double r;
		memcpy(&r, &bits, sizeof(r));
		return r;
	}
	struct clock_pair p;
	clock_pair(&p);
	/* A baseline under 10 ms gives a poor rate: wait until there is one (once). */
	while (p.mono_ns - base_mono_ns < 10000000u)
		clock_pair(&p);
	double rate = (double)(p.ticks - base_ticks) * 1e9 / (double)(p.mono_ns - base_mono_ns);
	memcpy(&bits, &rate, sizeof(bits));
	atomic_store_explicit(&rate_refresh_ticks, p.ticks + (p.ticks - base_ticks),
			      memory_order_relaxed);
	atomic_store_explicit(&rate_bits, bits, memory_order_relaxed);
	if (p.mono_ns - base_mono_ns >= 1000000000u)
		atomic_store_explicit(&rate_frozen, 1, memory_order_relaxed);
	return rate;
}

uint64_t record_ticks_to_ns(uint64_t ticks)
{
	if (!clock_use_tsc)
		return ticks;
	return (uint64_t)((double)ticks * 1e9 / record_ticks_per_second() + 0.5);
}

const char *clock_source_name(char *buf, size_t size)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}
