/*
 * advice.h: the advisor: rules that read the other analyses (steps.h, gpu_util.h, flops.h,
 * the event tree) and say what to change, each finding with the time at stake, the numbers
 * that made it fire, where in the trace (steps, operators, kernels, a time range) and a
 * concrete change to try. After Nsight Systems' expert rules, MindInsight's advisor and the
 * TensorBoard plugin's recommendations (FINDINGS-analysis §4, §5, §6.3); docs/advice.md states
 * every rule, its threshold and why.
 *
 * A rule fires only where the trace supports it: the GPU rules stay silent on a trace with no
 * device work, the step rules on a trace with no ProfileStep ranges, the straggler rule on
 * fewer than two ranks (it reads the rank analysis, ranks.h). Findings are ranked by the time
 * at stake, most first.
 *
 * Thread safety: advice_run reads the analysis and model only; the result is the caller's.
 */
#ifndef OPSCOPE_ANALYZE_ADVICE_H
#define OPSCOPE_ANALYZE_ADVICE_H

#include <stdint.h>

#include "analyze/analysis.h"

enum advice_rule_id {
	ADVICE_INPUT_BOUND,  /* data wait > 5% of the step */
	ADVICE_GPU_IDLE,     /* kernels busy < 50% of a step while the host works */
	ADVICE_SYNC,	     /* synchronizations inside the steps */
	ADVICE_PAGEABLE,     /* copies from or to pageable host memory */
	ADVICE_TINY_KERNELS, /* most kernels under 10 us: launch-bound */
	ADVICE_TENSOR_CORES, /* tensor-core eligible work that ran without them */
	ADVICE_EXPOSED_COMM, /* communication not overlapped with compute > 10% of the step */
	ADVICE_FIRST_STEP,   /* first step > 1.5x the median of the others */
	ADVICE_STRAGGLER,    /* one rank last by > 5% of the step in >= half the steps */
	ADVICE_NRULES,
};

/* One rule of the table. */
struct advice_rule {
	const char *id;	       /* stable key ("input_bound") */
	const char *title;     /* short title ("Input-bound steps") */
	const char *threshold; /* the documented threshold, as text */
	const char *source;    /* where the rule comes from (tool and rule) */
};

/* The rule table, indexed by enum advice_rule_id. */
extern const struct advice_rule advice_rules[ADVICE_NRULES];

#define ADVICE_NO_FILE UINT32_MAX /* a finding about every file at once */

/* One finding. The texts are complete sentences with their numbers (times in ms or us). */
struct advice_finding {
	uint8_t rule;	     /* enum advice_rule_id */
	uint32_t file;	     /* index in model.files, ADVICE_NO_FILE for the whole model */
	int64_t at_stake_ns; /* ns: the time the change could save at most (ranking key) */
	int64_t base_ns;     /* ns: the time at_stake_ns is a share of (steps, total) */
	double measured;     /* the measured value the threshold applies to (a fraction, or a
			       * ratio for the first-step rule; for the straggler rule the
			       * margins over the step time of the steps it led) */
	double threshold;    /* the threshold it passed */
	uint32_t steps;	     /* steps where it holds (0: not a per-step rule) */
	int64_t start_ns;    /* ns: where to look in the trace: start of the worst instance */
	int64_t end_ns;	     /* ns: its end */
	char finding[256];   /* one line: what was measured */
	char evidence[512];  /* which steps, operators, kernels */
	const char *change;  /* static: the change to try */
};

struct advice {
	struct advice_finding *v; /* ranked: most time at stake first, then rule order */
	uint32_t n;		  /* findings */
};

struct flops_opts;

/* The findings on a's model; fo: the FLOPs analysis's options (peaks given by hand), NULL for
 * none. 0, or OPSCOPE_ENOMEM (out is then empty). */
int advice_run(const struct analysis *a, const struct flops_opts *fo, struct advice *out);
void advice_free(struct advice *ad);

#endif
