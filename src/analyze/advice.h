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
struct ranks;

/* The findings on a's model; fo: the FLOPs analysis's options (peaks given by hand), NULL for
 * none. advice_measure of every file, then advice_combine. 0, or OPSCOPE_ENOMEM (out is then
 * empty). */
int advice_run(const struct analysis *a, const struct flops_opts *fo, struct advice *out);
void advice_free(struct advice *ad);

/* The advisor in two parts, so that `opscope merge` makes the findings of partials with the
 * code of a report (docs/merge.md): advice_measure reads one file and keeps the numbers and
 * the names its findings are made of (what a partial carries), advice_combine holds them
 * against the thresholds with what only the whole model knows (whether any file has steps,
 * the total time, the second copies of a rank, the rank analysis, the FLOPs rows of every
 * file) and writes the findings. Names are string ids of the model the caller gives
 * advice_combine. */

#define ADVICE_TOP 3 /* names an evidence line lists (operators, copies, calls) */

/* A name of an evidence list: its count and time. */
struct advice_tally {
	uint32_t name; /* string id */
	uint64_t n;    /* count */
	int64_t ns;    /* ns: time */
};

/* A step a finding names. */
struct advice_step {
	uint32_t name;	  /* string id of its range name, 0: "the trace" (no ProfileStep) */
	int64_t start_ns; /* ns: the step as analysed */
	int64_t end_ns;	  /* ns: its end */
};

/* Rules 1 and 7 of one file: a part of each step (data wait, exposed communication). */
struct advice_part {
	int64_t part_ns;	  /* ns: the part summed over the steps */
	int64_t worst_ns;	  /* ns: the largest of one step (-1 without steps) */
	uint32_t over;		  /* steps whose part exceeds the rule's share */
	struct advice_step worst; /* that step */
};

/* Rule 2 of one device of a file: its steps with kernels busy under 50%. */
struct advice_idle {
	uint32_t device;		     /* device id */
	uint32_t over;			     /* steps under 50% busy */
	int64_t idle_ns;		     /* ns: their idle time less their data wait (> 0) */
	int64_t span_ns;		     /* ns: their durations (the device's step spans) */
	int64_t busy_ns;		     /* ns: their kernel busy time */
	int64_t worst_busy_ns;		     /* ns: kernel busy time of the worst of them */
	struct advice_step worst;	     /* the one with the most idle time */
	uint32_t ntop;			     /* entries of top */
	struct advice_tally top[ADVICE_TOP]; /* operators with CPU time and no device work */
};

/* One row of the FLOPs analysis of one file (flops.h), as rule 6 reads it. */
struct advice_tc_row {
	uint32_t name;	   /* string id of the operator name */
	uint32_t shapes;   /* string id of its "Input Dims" text, 0 if none */
	uint32_t dtypes;   /* string id of its "Input type" text, 0 if none */
	bool backward;	   /* inside an autograd node */
	bool eligible;	   /* its first call is tensor-core eligible */
	bool tc;	   /* some kernel of it used tensor cores */
	uint8_t peaks;	   /* the device its first kernel ran on: 0 none yet, 1 not in the table,
			    * 2 peaks without TF32, 3 peaks with TF32 */
	uint64_t calls;	   /* calls counted */
	int64_t kernel_ns; /* ns: kernel time they launched */
};

/* What the findings of one file are made of. */
struct advice_file {
	uint32_t file;	    /* index in model.files */
	bool own_steps;	    /* the file has ProfileStep ranges (analysis.has_steps: any file) */
	bool gpu;	    /* it has device work (kernels, copies, memsets) */
	bool device_tracks; /* it has a device track with ranges (flops: device time) */
	uint32_t nrows;	    /* its Step table's rows (steps kept) */
	int64_t steps_ns;   /* ns: their durations summed */
	int64_t steps_s;    /* ns: the first row's start (0 without rows) */
	int64_t steps_e;    /* ns: the last row's end */
	/* rules 1, 7 (when nrows) */
	struct advice_part input, comm;
	/* rule 8: the first step against the median of the others of non-zero length */
	uint32_t first_n;	  /* others counted, 0: not measured (under 3 rows, or 2 others) */
	int64_t first_ns;	  /* ns: the first step */
	int64_t median_ns;	  /* ns: the median of the others */
	struct advice_step first; /* the first step */
	/* rule 2 (gpu and nrows): the devices with idle steps */
	struct advice_idle *idle; /* nidle */
	uint32_t nidle;		  /* entries of idle */
	/* rule 3 (gpu and nrows) */
	uint64_t sync_calls;			  /* synchronizing calls inside the steps */
	int64_t sync_ns;			  /* ns: their durations summed */
	uint32_t sync_steps;			  /* steps with one */
	int64_t sync_worst_ns;			  /* ns: the longest (-1: none) */
	int64_t sync_s, sync_e;			  /* ns: where it is */
	uint32_t sync_ntop;			  /* entries of sync_top */
	struct advice_tally sync_top[ADVICE_TOP]; /* by outermost operator, or the call */
	/* rule 4 (gpu) */
	uint64_t page_n;			  /* copies with pageable memory */
	int64_t page_ns;			  /* ns: their durations summed */
	uint64_t page_bytes;			  /* their "bytes" summed (those that have one) */
	int64_t page_worst_ns;			  /* ns: the longest (-1: none) */
	int64_t page_s, page_e;			  /* ns: where it is */
	uint32_t page_ntop;			  /* entries of page_top */
	struct advice_tally page_top[ADVICE_TOP]; /* by copy name */
	/* rule 5 (gpu) */
	uint64_t kernels;  /* kernels launched inside the steps */
	uint64_t tiny;	   /* of which under 10 us */
	int64_t tiny_ns;   /* ns: their durations */
	int64_t launch_ns; /* ns: host time of the calls that launched them */
	/* rule 6 */
	struct advice_tc_row *tc; /* ntc: the FLOPs rows of the file, first-seen order */
	uint32_t ntc;		  /* entries of tc */
};

struct gpu_util;

/* af->tc: the tensor-core rule's rows from fr, the FLOPs analysis of af's file alone (its
 * flops_file share combined alone: what a partial's flops records carry). 0, or
 * OPSCOPE_ENOMEM. */
struct flops_result;
int advice_tc_rows(const struct flops_result *fr, struct advice_file *af);
/* File f of a's model, all but the tensor-core rule's rows (u: gpu_util_analyze of a, which
 * the GPU-idle rule reads; the rows: advice_tc_rows of the file's FLOPs, which advice_run
 * and the merge each take from where they have them). 0, or OPSCOPE_ENOMEM (out then
 * empty). */
int advice_measure(const struct analysis *a, const struct gpu_util *u, uint32_t f,
		   struct advice_file *out);
void advice_file_free(struct advice_file *af);

/* What only the whole model knows. */
struct advice_whole {
	bool has_steps;		   /* some file has ProfileStep ranges (analysis.has_steps) */
	int64_t total_ns;	   /* ns: analysis.total_ns */
	const bool *keep;	   /* per model file: counted (ranks_kept_files) */
	const struct ranks *ranks; /* the rank analysis, NULL when under two files have a rank */
};

/* The findings of n files' measurements (files[i].file ascending, strings of m). 0, or
 * OPSCOPE_ENOMEM (out is then empty). */
int advice_combine(const struct model *m, const struct advice_file *files, uint32_t n,
		   const struct advice_whole *w, struct advice *out);

#endif
