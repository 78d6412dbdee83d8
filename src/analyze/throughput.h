/*
 * throughput.h: Paddle's benchmark summary (its Perf Summary) from recorded steps: per
 * ProfileStep range that carries an integer num_samples argument and lasts more than 0 ns,
 * the batch cost (its duration), the reader cost (the Dataloader ranges directly inside it)
 * and the throughput (samples per second). Every such step counts (Paddle skips the first 10
 * of a live run).
 */
#ifndef OPSCOPE_ANALYZE_THROUGHPUT_H
#define OPSCOPE_ANALYZE_THROUGHPUT_H

#include <stdint.h>

#include "analyze/analysis.h"

struct throughput_stat {
	double avg; /* mean over the steps (ips: all samples / all batch time) */
	double max; /* the largest of one step (0 without steps) */
	double min; /* the smallest of one step (1e300 without steps) */
};

struct throughput {
	uint64_t steps;			      /* steps counted (0: no table) */
	int64_t samples;		      /* their num_samples, summed */
	int64_t batch_ns;		      /* ns: their durations, summed */
	struct throughput_stat reader_cost_s; /* s: Dataloader time inside a step */
	struct throughput_stat batch_cost_s;  /* s: a step's duration */
	struct throughput_stat ips;	      /* samples per second of a step */
};

/* The throughput of a's model. Needs no memory: always 0. */
int throughput_analyze(const struct analysis *a, struct throughput *out);

/* Running sum, max and min of one statistic (s, s, or samples per s). */
struct throughput_running {
	double sum; /* the values added, in the order added */
	double max; /* the largest (0 before any) */
	double min; /* the smallest (1e300 before any) */
};

/* A throughput summed step by step: throughput_analyze's, and opscope merge's over the files'
 * steps in file order, which is the order throughput_analyze adds them in (the threads of a
 * file come one after the other), so the doubles come out the same. */
struct throughput_acc {
	struct throughput_running st[3]; /* reader cost, batch cost, ips */
	struct throughput t;		 /* steps, samples and batch_ns so far */
};
void perf_summary_start(struct throughput_acc *acc);
/* Add one step: its Dataloader time, duration (> 0) and num_samples. The caller keeps the
 * sums inside int64. */
void perf_summary_add_step(struct throughput_acc *acc, int64_t reader_ns, int64_t dur_ns,
			   int64_t samples);
void perf_summary_finish(const struct throughput_acc *acc, struct throughput *out);
/* fn(ctx, reader, duration, num_samples) for each step that counts of file `file` of a's model
 * (UINT32_MAX: every file), in the order throughput_analyze takes them. */
void throughput_file_steps(const struct analysis *a, uint32_t file,
			   void (*fn)(void *arg, int64_t reader_ns, int64_t dur_ns,
				      int64_t samples),
			   void *arg);

#endif
