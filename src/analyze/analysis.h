/*
 * analysis.h: what every analysis of a loaded model starts from, computed once: the event
 * tree (tree.h), the total time that ratios are taken of, and the device time launched from
 * inside the steps. The other analyses (device.h, overview.h, phases.h, distributed.h,
 * aggregate.h, throughput.h, steps.h) are pure functions of it; a report, an advisor, a diff
 * or an HTML page call the ones they need.
 *
 * Thread safety: analysis_run writes it; from then on it is read-only until analysis_free,
 * and any number of threads may run analyses over it at once (the report's views do).
 */
#ifndef OPSCOPE_ANALYZE_ANALYSIS_H
#define OPSCOPE_ANALYZE_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/intervals.h"
#include "analyze/tree.h"
#include "model/model.h"

struct analysis {
	const struct model *m;	/* the model analysed (read-only, outlives the analysis) */
	struct tree tree;	/* its event tree: parents, self times, launches */
	int64_t total_ns;	/* ns: the union of the ProfileStep ranges; without any, the span
				 * of the host ranges (first start to last end) */
	struct ivec total;	/* the intervals total_ns is the length of (merged): the tables
				 * that partition the total clip what they count to them */
	bool has_steps;		/* ProfileStep ranges exist */
	int64_t step_kernel_ns; /* ns: kernel time launched from inside the ProfileStep ranges */
	int64_t step_device_ns; /* ns: all device time (kernels, copies, memsets) launched from
				 * inside them */
};

/* What total_ns and the step times are made of, for one file or all. */
struct analysis_total {
	struct ivec steps;	/* the ProfileStep ranges, merged (steps.oom: out of memory) */
	int64_t lo, hi;		/* ns: the first start and last end of the host ranges
				 * (INT64_MAX, INT64_MIN: none) */
	int64_t step_kernel_ns; /* ns: kernel time launched from inside the ProfileStep ranges */
	int64_t step_device_ns; /* ns: all device time launched from inside them */
};

/* The total's parts of file `file` of a's model (UINT32_MAX: every file), as analysis_run
 * makes total_ns of them: the union of the steps, or without any, hi - lo (opscope merge
 * makes the union over the files). The caller frees out->steps (ivec_free). */
void analysis_file_total(const struct analysis *a, uint32_t file, struct analysis_total *out);
/* Analyse model m (read-only, must outlive a). 0, or OPSCOPE_ENOMEM (a is then empty). */
int analysis_run(struct analysis *a, const struct model *m);
void analysis_free(struct analysis *a);

/* Does name contain `needle` (lower case), ignoring the case of ASCII letters? How the
 * analyses recognise ranges by name ("allreduce", "memcpy"), as Paddle does. */
bool analysis_name_has(const char *name, const char *needle);

#endif
