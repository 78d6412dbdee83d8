/*
 * phases.h: the model phases of a training loop (Paddle's Model Summary): ProfileStep, and the
 * Dataloader, Forward, Backward and Optimization ranges inside the steps, each with its calls
 * and its CPU and GPU time; Others is what the steps spent outside the four phases.
 *
 * A phase range nested in another phase range (Forward inside Forward, or inside Backward)
 * is counted by neither this nor the overview (overview.h): only the outermost phases count,
 * so that no time is counted twice. Every ProfileStep range counts. GPU time is the kernel
 * time launched from inside a range (tree.h), streams summed, not merged.
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
	uint64_t calls;	    /* ranges counted (0: the phase does not occur) */
	int64_t cpu_ns;	    /* ns: their summed durations */
	int64_t cpu_max_ns; /* ns: the longest */
	int64_t cpu_min_ns; /* ns: the shortest (INT64_MAX when calls is 0) */
	int64_t gpu_ns;	    /* ns: kernel time launched from inside them, summed */
	int64_t gpu_max_ns; /* ns: the most of one range */
	int64_t gpu_min_ns; /* ns: the least of one range (INT64_MAX when calls is 0) */
};

struct phases {
	struct phase_time phase[PHASE_COUNT]; /* indexed by enum phase */
	uint32_t nphases;      /* phases other than ProfileStep that occur (0: Paddle prints
			       * no Model Summary) */
	int64_t others_cpu_ns; /* ns: the analysis's total time - the four phases' CPU time */
	int64_t others_gpu_ns; /* ns: ProfileStep GPU time - the four phases' GPU time */
};

/* Is the category one of the four phases inside a step (ProfileStep is not)? */
static inline bool phases_is_phase(uint8_t category)
{
	return category == OPSCOPE_CAT_DATALOADER || category == OPSCOPE_CAT_FORWARD ||
	       category == OPSCOPE_CAT_BACKWARD || category == OPSCOPE_CAT_OPTIMIZATION;
}

/* Is range i of host track t outermost among the phases (no phase range above it)? */
bool phases_outermost(const struct tree *tree, uint32_t t, uint64_t i);

/* The phases of a's model. Needs no memory: always 0. */
int phases_analyze(const struct analysis *a, struct phases *out);

#endif
