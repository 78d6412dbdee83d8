/*
 * phases.h: the model phases of a training loop (Paddle's Model Summary): ProfileStep, and the
 * Dataloader, Forward, Backward and Optimization ranges inside the steps, each with its calls
 * and its CPU and GPU time; Others is what the steps spent outside the four phases.
 *
 * The four phases and Others partition the total time (analysis.h): a phase's CPU time is
 * what its calls cover of the steps (ranges clipped to the steps, overlapping calls counted
 * once); an instant covered by calls of two phases goes to the first in Dataloader, Forward,
 * Backward, Optimization order, and Others is what no call covers. So no row is negative and
 * the rows add up to the total. A phase range nested in another phase range (Forward inside
 * Forward, or inside Backward) is no call of its own: only the outermost phases count. Every
 * ProfileStep range counts.
 *
 * GPU time partitions each step's kernel time the same way: a step's GPU time is the time
 * its span (the step view's, steps.h) had a kernel running (NCCL kernels are Communication,
 * not counted), exactly the step view's Kernel column; each instant goes to the phase call
 * that launched the kernel running then (the first by phase and call when several ran),
 * else to Others. A kernel's launch belongs to a call when the runtime call that launched
 * it lies in a step (steps.h's rule) and inside the call on its own thread, or, when its
 * thread has no call then, inside the call of the step's own thread running then. The
 * autograd engine's thread has no phase ranges in older Kineto traces: per step, the span
 * of its top-level ranges is a Backward call there.
 */
#ifndef OPSCOPE_ANALYZE_PHASES_H
#define OPSCOPE_ANALYZE_PHASES_H

#include <stdbool.h>
#include <stdint.h>

#include "opscope/opscope.h"

#include "analyze/analysis.h"

enum phase {
	PHASE_PROFILE_STEP,
	PHASE_DATALOADER,
	PHASE_FORWARD,
	PHASE_BACKWARD,
	PHASE_OPTIMIZATION,
	PHASE_COUNT,
};

struct phase_time {
	uint8_t category;   /* OPSCOPE_CAT_* of the phase */
	uint64_t calls;	    /* calls inside the total time (0: the phase does not occur) */
	int64_t cpu_ns;	    /* ns: the phase's share of the total time (ProfileStep: the total
			     * time) */
	int64_t cpu_max_ns; /* ns: the largest share of one call (ProfileStep: duration) */
	int64_t cpu_min_ns; /* ns: the smallest (INT64_MAX when calls is 0) */
	int64_t gpu_ns;	    /* ns: kernel time launched from inside them, summed */
	int64_t gpu_max_ns; /* ns: the most of one range */
	int64_t gpu_min_ns; /* ns: the least of one range (INT64_MAX when calls is 0) */
};

/* The GPU time of one step (steps.h: the step view's spans, the steps it drops included),
 * shared out among the phases. */
struct phase_step {
	uint32_t file;			   /* the step's file */
	int64_t s, e;			   /* ns: its span, stretched to its GPU work */
	int64_t gpu_ns;			   /* ns: the kernels that ran in the span, overlaps once
					 * (the step view's Kernel column) */
	int64_t phase_gpu_ns[PHASE_COUNT]; /* ns: its share per phase (ProfileStep: 0) */
	int64_t others_gpu_ns;		   /* ns: what no phase launched */
};

struct phases {
	struct phase_time phase[PHASE_COUNT]; /* indexed by enum phase */
	uint32_t nphases;      /* phases other than ProfileStep that occur (0: Paddle prints
			       * no Model Summary) */
	int64_t others_cpu_ns; /* ns: the analysis's total time - the four phases' CPU time
				* (what no phase call covers, >= 0) */
	int64_t others_gpu_ns; /* ns: ProfileStep GPU time - the four phases' GPU time */
	uint32_t nsteps;       /* steps of every file, as the step view forms them */
	struct phase_step *steps;
};

/* Is the category one of the four phases inside a step (ProfileStep is not)? */
static inline bool phases_is_phase(uint8_t category)
{
	return category == OPSCOPE_CAT_DATALOADER || category == OPSCOPE_CAT_FORWARD ||
	       category == OPSCOPE_CAT_BACKWARD || category == OPSCOPE_CAT_OPTIMIZATION;
}

/* The category of a phase. */
uint8_t phases_category(enum phase k);

/* Is range i of host track t outermost among the phases (no phase range above it)? */
bool phases_outermost(const struct tree *tree, uint32_t t, uint64_t i);

/* One call of a phase: an outermost phase range of a host thread. */
struct phase_call {
	uint8_t phase;	/* enum phase, never PHASE_PROFILE_STEP */
	uint32_t track; /* the host track */
	uint64_t range; /* its range (MODEL_NONE: the autograd engine's Backward, made of
			 * the thread's top-level ranges in a step) */
	int64_t s, e;	/* ns: the time it spans */
};

/* Every phase call of a's model, sorted by phase, then track, then start (so an index is a
 * priority: the lower one wins an instant two calls cover). *out is malloc'd (NULL when
 * n is 0). 0, or OPSCOPE_ENOMEM. */
int phases_calls(const struct analysis *a, struct phase_call **out, size_t *n);

/* The same of file f's tracks (PHASES_ALL_FILES: every file). A file's calls are its own:
 * the calls of several files, sorted again, are those of all of them. */
#define PHASES_ALL_FILES UINT32_MAX
int phases_calls_file(const struct analysis *a, uint32_t f, struct phase_call **out, size_t *n);

/* What one file (or every file) gives the phases: its calls (phases_calls_file), each
 * call's GPU time, and its ProfileStep row. The GPU time of a step goes to the calls of its
 * own file only, so a file's shares do not depend on the other files; the CPU time does
 * (calls of two files may cover one instant), which phases_combine shares out. */
struct phases_part {
	struct phase_call *calls; /* its calls, in the order of phases_calls */
	int64_t *gpu_share;	  /* ns: per call, its share of its steps' kernel time */
	size_t ncalls;		  /* entries of calls and gpu_share */
	struct phase_time step;	  /* ProfileStep: calls = its ranges, cpu max/min their
				   * durations (cpu_ns unused), gpu_* of its steps' kernel time */
	struct phase_step *steps; /* its steps (phases.steps) */
	uint32_t nsteps;	  /* entries of steps */
};
int phases_file(const struct analysis *a, uint32_t f, struct phases_part *out);
void phases_part_free(struct phases_part *p);
/* Add ProfileStep row x of one file into `into` (counts and sums added, extremes kept). */
void phases_step_join(struct phase_time *into, const struct phase_time *x);
/* The phases of the files whose calls and shares are given (every file's, in any order:
 * sorted here, with their shares), with their ProfileStep rows joined into *step, against
 * merged list total (the total time, of length total_ns). out->steps is left empty. 0, or
 * OPSCOPE_ENOMEM. */
int phases_combine(struct phase_call *calls, int64_t *gpu_share, size_t ncalls,
		   const struct phase_time *step, const struct ivec *total, int64_t total_ns,
		   struct phases *out);

/* The phases of a's model. 0, or OPSCOPE_ENOMEM. phases_free releases the steps. */
int phases_analyze(const struct analysis *a, struct phases *out);
void phases_free(struct phases *p);

#endif
