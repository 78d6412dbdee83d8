/*
 * bench.h: the step benchmark of the profiler (bench.c): reader cost, batch cost and
 * throughput per step, the Perf Summary and step_info. Private to the record stage.
 */
#ifndef OPSCOPE_RECORD_BENCH_H
#define OPSCOPE_RECORD_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pthread.h>

#include "opscope/opscope.h"

/* Min/max/total of one per-step series (ns, or samples/s for throughput). */
struct bench_series {
	uint64_t n;   /* values seen */
	double total; /* sum of values */
	double max;   /* largest value (valid when n > 0) */
	double min;   /* smallest value (valid when n > 0) */
};

struct bench {
	pthread_mutex_t lock;	  /* the reader hooks may run on another thread */
	int skip_steps;		  /* steps left out of the summary */
	int running;		  /* between bench_begin and bench_end */
	int samples_mode;	  /* 1 until a step comes without num_samples */
	uint64_t step_start_ns;	  /* end of the previous step (or bench_begin) */
	uint64_t reader_start_ns; /* last bench_reader_begin */
	int reader_open;	  /* bench_reader_begin seen, bench_reader_end not yet */
	uint64_t step_reader_ns;  /* reader time inside the current step */
	uint64_t steps;		  /* steps ended since bench_begin */

	/* The summary: steps after the first skip_steps. */
	struct bench_series reader;	 /* reader cost per step, ns */
	struct bench_series batch;	 /* batch cost per step, ns */
	struct bench_series ips_samples; /* num_samples / batch cost, per step */
	struct bench_series ips_steps;	 /* 1 / batch cost, per step */
	uint64_t samples;		 /* sum of num_samples of the kept steps */

	/* step_info: totals since its previous call. */
	uint64_t info_steps;
	uint64_t info_reader_ns;
	uint64_t info_batch_ns;
	uint64_t info_samples;
	char speed_unit[64]; /* IPS unit of the Perf Summary: "samples/s", or step_info's */
};

void bench_init(struct bench *b, int skip_steps);
void bench_destroy(struct bench *b);
/* Start timing: the first batch cost is measured from here (paddle: Profiler.start). */
void bench_begin(struct bench *b);
/* End one step; num_samples < 0 means not given. */
void bench_step(struct bench *b, int64_t num_samples);
/* Stop timing and print the Perf Summary to `out` when more than skip_steps steps ended. */
void bench_end(struct bench *b, FILE *out);
void bench_reader_begin(struct bench *b);
void bench_reader_end(struct bench *b);
void bench_summary(struct bench *b, struct opscope_bench_summary *out);
void bench_print(struct bench *b, FILE *out);
int bench_step_info(struct bench *b, const char *unit, char *buf, size_t size);

/* Tests: replace the benchmark clock (CLOCK_MONOTONIC ns) by `now_ns`; NULL restores it. */
void bench_set_clock_for_test(uint64_t (*now_ns)(void));

#endif
