/*
 * tree.h: the event tree the summary tables are computed from (Paddle's profiler_statistic
 * model, SPEC-seeds §2.1-2.2) over the event model:
 *   - host ranges nest by their depth on their thread: each gets its parent;
 *   - a runtime call (CudaRuntime/CudaDriver range) launched the device ranges (kernels,
 *     copies, memsets) whose correlation id (model_range_correlation: the "correlation"
 *     argument) equals its own, in the same file (0 is no id);
 *   - per host range: its self time (duration minus its children's), and the device time
 *     launched from inside it, kernels only (gpu) and all device work (general gpu).
 * Device ranges without a launching call (launched before the profiling window) belong to no
 * host range; the GPU-side tables count them anyway.
 */
#ifndef OPSCOPE_ANALYZE_TREE_H
#define OPSCOPE_ANALYZE_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "opscope/opscope.h"

#include "model/model.h"

#define TREE_NONE UINT32_MAX

/* A device range launched by a runtime call; launches of one call are chained by next. */
struct tree_launch {
	uint32_t track; /* device track */
	uint64_t range; /* range on it */
	uint32_t next;	/* next launch of the same call, TREE_NONE at the end */
};

/* Per track, per range (host tracks; device tracks get only `launcher`). */
struct tree_track {
	uint64_t *parent;   /* host: enclosing range on the track, MODEL_NONE at the top */
	int64_t *self_ns;   /* host: duration minus the durations of its children */
	int64_t *gpu_ns;    /* host: kernel time launched from inside it (itself included) */
	int64_t *ggpu_ns;   /* host: all device time launched from inside it */
	uint32_t *launches; /* host runtime calls: first launch, TREE_NONE if none */
	bool *launched;	    /* device: a runtime call of the trace launched it */
	bool oom;	    /* building it ran out of memory */
};

struct tree {
	const struct model *m;
	struct tree_track *tracks; /* one per model track */
	struct tree_launch *launches;
	uint32_t nlaunches, launches_cap;
	bool oom;
};

/* Is this device-range category a kernel (NCCL kernels included)? */
static inline bool tree_is_kernel(uint8_t category)
{
	return category == OPSCOPE_CAT_KERNEL || category == OPSCOPE_CAT_COMMUNICATION;
}

/* Is it GPU work (kernel, copy, memset), as opposed to an annotation on the device? */
static inline bool tree_is_device_work(uint8_t category)
{
	return tree_is_kernel(category) || category == OPSCOPE_CAT_MEMCPY ||
	       category == OPSCOPE_CAT_MEMSET;
}

/* Is it a runtime call that may launch device work? */
static inline bool tree_is_runtime(uint8_t category)
{
	return category == OPSCOPE_CAT_CUDA_RUNTIME || category == OPSCOPE_CAT_CUDA_DRIVER;
}

/* Build the tree of model m (read-only, must outlive t). 0 or OPSCOPE_ENOMEM. */
int tree_build(struct tree *t, const struct model *m);
void tree_free(struct tree *t);

#endif
