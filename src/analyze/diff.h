/*
 * diff.h: the comparison of two analysed traces (or two step ranges of one): rows aligned by
 * kind and key (the step time, the model phases, operators, nn.Module paths, kernels, NVTX
 * and user-defined ranges), each with its calls and time on both sides, the change, and the
 * spread of the row's time over the steps of each side, so that a change the steps' own
 * noise explains is said to be one (a Welch t-test; docs/diff.md has every formula).
 *
 * A side's totals come from the report's aggregations (aggregate.h, phases.h, steps.h): the
 * same numbers `opscope report` prints for the whole trace. The spread needs each row's time
 * in each step: a range counts for the step whose host span holds its start (kernels: the
 * step whose host span holds the runtime call that launched them, steps.h's rule; a kernel
 * no call of the trace launched is in no step); a phase's time in a step is its share of the
 * step's host span, first phase first (phases.h's rule, per step). With a step range, a
 * side's totals are the sums over its steps instead.
 *
 * diff_rules (diffrules.c): the --fail-if rules over the rows.
 */
#ifndef OPSCOPE_ANALYZE_DIFF_H
#define OPSCOPE_ANALYZE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"

/* What a row stands for, in the order the kinds are computed. */
enum diff_kind {
	DIFF_STEP,   /* the step time itself (key "ProfileStep") */
	DIFF_PHASE,  /* Dataloader, Forward, Backward, Optimization (phases.h) */
	DIFF_OP,     /* an operator by name (and input shapes with by_shape) */
	DIFF_MODULE, /* an nn.Module path ("Net > Sequential > Conv2d") */
	DIFF_KERNEL, /* a GPU kernel by name (NCCL kernels included) */
	DIFF_NVTX,   /* an NVTX range by name ("name@domain" outside the default domain) */
	DIFF_USER,   /* a user-defined range by name (record_function, RecordEvent) */
	DIFF_NKINDS,
};

/* The kind's name in rules and tables ("step", "phase", "op", "module", "kernel", "nvtx",
 * "user"). */
const char *diff_kind_name(enum diff_kind k);
/* The kind named by the n bytes at s; false when none is. */
bool diff_kind_parse(const char *s, size_t n, enum diff_kind *k);

enum diff_status {
	DIFF_BOTH,    /* calls on both sides */
	DIFF_ADDED,   /* only in B */
	DIFF_REMOVED, /* only in A */
};

/* Whether the change is more than the steps' spread explains. */
enum diff_noise {
	DIFF_NOISE_UNKNOWN, /* a side has fewer than 2 steps: no spread to judge by */
	DIFF_NOISE_WITHIN,  /* |t| <= the critical t of Welch's test at 5%, two-sided */
	DIFF_NOISE_BEYOND,  /* |t| above it: a change the steps' noise does not explain */
};

/* One side of a diff: an analysis and the steps of it compared. */
struct diff_side {
	const struct analysis *an; /* the side's analysis (read-only, outlives the diff) */
	bool ranged;		   /* only steps [first_step, last_step]; else the whole trace */
	uint32_t first_step;	   /* first step compared, 0 = the trace's first (ranged only) */
	uint32_t last_step;	   /* last step compared, inclusive (ranged only) */
};

struct diff_opts {
	bool by_shape; /* operators by name and "Input Dims", not by name alone */
};

/* One side of a row. */
struct diff_stat {
	uint64_t calls;	 /* calls (the step row: steps; a phase: its calls) */
	int64_t time_ns; /* ns: total time (CPU time, or GPU time for kernels) */
	uint32_t nsteps; /* steps the spread is taken over */
	double mean_ns;	 /* ns: mean of the row's per-step totals */
	double sd_ns;	 /* ns: their sample standard deviation (n - 1; 0 with one step) */
};

struct diff_row {
	uint8_t kind;		  /* enum diff_kind */
	uint8_t status;		  /* enum diff_status */
	uint8_t noise;		  /* enum diff_noise */
	bool gpu;		  /* time_ns is GPU time (kernels), else CPU time */
	char *name;		  /* the key's name, NUL-terminated (owned) */
	char *shape;		  /* operators by shape: the "Input Dims" text, else NULL (owned) */
	struct diff_stat side[2]; /* A, B */
	int64_t change_ns;	  /* ns: time B - time A */
	double change;		  /* change_ns / time A as a fraction; +inf when A is 0 and B not,
				  * 0 when both are 0 */
	double se_ns;		  /* ns: Welch's standard error sqrt(sdA^2/nA + sdB^2/nB) (NaN
				  * when noise is unknown) */
	double t;		  /* (mean B - mean A) / se_ns (0 when both are 0; NaN unknown) */
	double df;		  /* Welch-Satterthwaite degrees of freedom (NaN unknown) */
};

struct diff {
	struct diff_row *rows; /* sorted by |change_ns| descending, then kind, then name */
	size_t n;	       /* rows */
	uint32_t nsteps[2];    /* steps of each side's trace (all of them, before a range) */
	bool has_steps[2];     /* each side's trace has ProfileStep ranges (else it is one
				* step, the whole trace) */
};

/* Compare side a (A) with side b (B). 0; OPSCOPE_ENOMEM; OPSCOPE_EINVAL when a ranged side
 * selects steps the trace does not have (out->nsteps says how many it has). out is empty
 * on error except for nsteps and has_steps. */
int diff_compute(const struct diff_side *a, const struct diff_side *b, const struct diff_opts *o,
		 struct diff *out);
void diff_free(struct diff *d);

/* The critical value of Student's t at 97.5 % (two-sided 5 %) for df degrees of freedom:
 * the value of the table for the largest tabulated df <= df (so never below the exact one),
 * 12.706 below 1. */
double diff_t_crit(double df);

/* ---------------------------------------------------------------------------------------- */
/* Rules (diffrules.c): `KIND[:GLOB] (>|<) [+|-]AMOUNT(%|ns|us|ms|s)` */

struct diff_rule {
	char text[128]; /* the rule as given (cut to fit), for messages */
	uint8_t kind;	/* enum diff_kind */
	char glob[96];	/* fnmatch(3) pattern over the row's name; "*" when none given */
	bool greater;	/* '>': fires above the amount; '<': below it */
	bool percent;	/* the amount is a fraction of time A, else ns */
	double amount;	/* fraction (0.05 for 5 %) or ns, signed */
};

/* Parse rule text s into r. 0, or -1 with why in err (one line, no newline). */
int diff_rule_parse(const char *s, struct diff_rule *r, char *err, size_t errsize);
/* Does the rule fire on row w: its kind and name match, its change passes the amount, and
 * (noise_check) the change is not within noise? */
bool diff_rule_fires(const struct diff_rule *r, const struct diff_row *w, bool noise_check);

#endif
