/*
 * overview.h: time per event type (Paddle's Overview Summary), on the host and on the GPU.
 *
 * A type's time is the union of its ranges inside the total time (analysis.h: the steps):
 * overlapping ranges of one type (nested, on other threads or streams) count once, and what
 * ran outside the steps not at all, so the time is how long something of that type ran
 * during the steps, never more than the total. Types overlap each other; their times do not
 * add up to the total. The phases (Dataloader, Forward, Backward, Optimization) count their
 * calls (phases.h: a phase nested in another is none); Communication is the ranges of the
 * distributed analysis (distributed.h). Calls are the ranges (or calls) that lie at least
 * partly inside the total time; Communication counts distinct ranges (Paddle's cpu_calls /
 * gpu_calls). On the GPU, NCCL kernels count as kernels, and the annotations on device tracks
 * (not GPU work) not at all. Async tracks are left out.
 */
#ifndef OPSCOPE_ANALYZE_OVERVIEW_H
#define OPSCOPE_ANALYZE_OVERVIEW_H

#include <stdint.h>

#include "opscope/opscope.h"

#include "analyze/analysis.h"

struct overview_type {
	uint64_t ranges; /* ranges of the type anywhere (0: the type does not occur);
			  * Communication: distinct ranges */
	uint64_t calls;	 /* those inside the total time; the phases count their calls only
			  * (a phase nested in another phase has ranges but may have no calls) */
	int64_t time_ns; /* ns: the union of its ranges (phases: calls) inside the total time */
};

struct overview {
	struct overview_type host[OPSCOPE_CAT_COUNT_]; /* host ranges, by OPSCOPE_CAT_* (an
							* unknown category as UserDefined) */
	struct overview_type gpu[OPSCOPE_CAT_COUNT_];  /* GPU work: Kernel (NCCL kernels too),
							* Memcpy, Memset, Communication */
	int64_t gpu_busy_ns; /* ns: the union of all GPU work, every device and stream */
};

/* The overview of a's model. 0, or OPSCOPE_ENOMEM. */
int overview_analyze(const struct analysis *a, struct overview *out);

#endif
