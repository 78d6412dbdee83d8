/*
 * throughput.h: the training throughput of the profiler (throughput.c): reader cost, batch
 * cost and ips per step, the Perf Summary and step_info (paddle's timer-only "benchmark"; the
 * public API keeps that word: opscope_profiler_bench_summary). Private to the record stage.
 */
#ifndef OPSCOPE_RECORD_THROUGHPUT_H
#define OPSCOPE_RECORD_THROUGHPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pthread.h>

#include "opscope/opscope.h"

/* Min/max/total of one per-step series (ns, or samples/s for throughput). */
struct throughput_series {
	uint64_t n;   /* values seen */
	double total; /* sum of values */
	double max;   /* largest value (valid when n > 0) */
	double min;   /* smallest value (valid when n > 0) */
};

struct throughput {
	pthread_mutex_t lock;	  /* the reader hooks may run on another thread */
	int skip_steps;		  /* steps left out of the summary */
	int running;		  /* between throughput_begin and throughput_end */
	int samples_mode;	  /* 1 until a step comes without num_samples */
	uint64_t step_start_ns;	  /* end of the previous step (or throughput_begin) */
	uint64_t reader_start_ns; /* last throughput_reader_begin */
	int reader_open;	  /* throughput_reader_begin seen, throughput_reader_end not yet */
	uint64_t step_reader_ns;  /* reader time inside the current step */
	uint64_t steps;		  /* steps ended since throughput_begin */

	/* The summary: steps after the first skip_steps. */
	struct throughput_series reader;      /* reader cost per step, ns */
	struct throughput_series batch;	      /* batch cost per step, ns */
	struct throughput_series ips_samples; /* num_samples / batch cost, per step */
	struct throughput_series ips_steps;   /* 1 / batch cost, per step */
	uint64_t samples;		      /* sum of num_samples of the kept steps */

	/* step_info: totals since its previous call. */
	uint64_t info_steps;
	uint64_t info_reader_ns;
	uint64_t info_batch_ns;
	uint64_t info_samples;
	char speed_unit[64]; /* IPS unit of the Perf Summary: "samples/s", or step_info's */
};

void throughput_init(struct throughput *b, int skip_steps);
void throughput_destroy(struct throughput *b);
/* Start timing: the first batch cost is measured from here (paddle: Profiler.start). */
void throughput_begin(struct throughput *b);
/* End one step; num_samples < 0 means not given. */
void throughput_step(struct throughput *b, int64_t num_samples);
/* Stop timing and print the Perf Summary to `out` when more than skip_steps steps ended. */
void throughput_end(struct throughput *b, FILE *out);
void throughput_reader_begin(struct throughput *b);
void throughput_reader_end(struct throughput *b);
void throughput_summary(struct throughput *b, struct opscope_bench_summary *out);
void throughput_print(struct throughput *b, FILE *out);
int throughput_step_info(struct throughput *b, const char *unit, char *buf, size_t size);

/* Tests: replace the benchmark clock (CLOCK_MONOTONIC ns) by `now_ns`; NULL restores it. */
void throughput_set_clock_for_test(uint64_t (*now_ns)(void));

#endif
