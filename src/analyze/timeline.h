/*
 * timeline.h: the HTML report's timeline, aggregated so that its size depends on the number of
 * windows and distinct names, never on the number of events: the trace's span cut into
 * `nwin` equal windows, and per window and lane (phases, operators, kernels) the busy time and
 * the name that took most of it; plus every step as it is (ProfileStep ranges: one per step).
 *
 * Lanes: phases are the outermost Forward / Backward / Optimization / DataLoader ranges of each
 * host thread; operators the outermost operator ranges of each host thread (an operator inside
 * another counts in its outer one only); kernels every kernel on the device tracks. Busy time
 * sums over threads or streams, so it may exceed a window's length. Pure: reads the model only.
 */
#ifndef OPSCOPE_ANALYZE_TIMELINE_H
#define OPSCOPE_ANALYZE_TIMELINE_H

#include <stdint.h>

#include "model/model.h"

enum timeline_lane {
	TIMELINE_PHASES,
	TIMELINE_OPERATORS,
	TIMELINE_KERNELS,
	TIMELINE_NLANES,
};

/* One window of one lane that has some busy time. */
struct timeline_cell {
	uint8_t lane;	 /* enum timeline_lane */
	uint32_t win;	 /* window index: [t0 + win * win_ns, + win_ns) */
	int64_t busy_ns; /* ns of the lane's ranges inside the window, summed */
	uint32_t top;	 /* string id of the name with the most of busy_ns (ties: smaller id) */
	int64_t top_ns;	 /* ns of that name inside the window */
};

/* A step: a ProfileStep range of a host thread. */
struct timeline_step {
	uint32_t name;	  /* string id ("ProfilerStep#5") */
	int64_t start_ns; /* ns */
	int64_t dur_ns;	  /* ns */
};

struct timeline {
	int64_t t0_ns;		     /* start of the first window: the earliest range start */
	int64_t win_ns;		     /* length of each window, ns (>= 1) */
	uint32_t nwin;		     /* windows */
	struct timeline_cell *cells; /* by lane, then window; only windows with busy time */
	uint64_t ncells;
	struct timeline_step *steps; /* in start order */
	uint64_t nsteps;
};

/* Name of a lane ("phases", "operators", "kernels"). */
const char *timeline_lane_name(enum timeline_lane l);
/* The timeline of model m in nwin windows (>= 1). 0, or OPSCOPE_ENOMEM (tl is then empty). A
 * model without ranges gives no windows and no cells. */
int timeline_run(const struct model *m, uint32_t nwin, struct timeline *tl);
void timeline_free(struct timeline *tl);

#endif
