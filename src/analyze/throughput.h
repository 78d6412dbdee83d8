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

#endif
