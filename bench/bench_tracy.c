/*
 * bench_tracy.c: the peer measurement for range cost: Tracy's C API zone begin+end, timed
 * exactly like bench_record's loop. Built by bench/run.sh against Tracy's public source
 * fetched outside this repository (TRACY_SRC); none of Tracy's code is part of opscope.
 */
#include <stdio.h>
#include <time.h>

#include "tracy/TracyC.h"

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
	enum { ROUNDS = 7, PAIRS = 2000000 };
	double best = 1e30;
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();
		for (int i = 0; i < PAIRS; i++) {
			TracyCZoneN(ctx, "pair", 1);
			TracyCZoneEnd(ctx);
		}
		double ns = (now_ns() - t0) / PAIRS;
		if (ns < best)
			best = ns;
	}
	printf("tracy_pair_ns %.2f\n", best);
	return 0;
}
