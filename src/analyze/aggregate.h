/*
 * aggregate.h: aggregation of ranges by name: per item the number of calls and the total /
 * max / min of a CPU and a GPU time, keyed by (parent item, name, kind) so that an item can
 * have children (an operator's inner phases and kernels), kept in the order they were first
 * seen; and the aggregations the report's operator, user-defined, memory manipulation, kernel
 * and nvprof tables are made of.
 *
 * Invariants: items are only appended, so an item's index never changes; the top-level items
 * and the children of each item are chained in first-seen order; a min is INT64_MAX until the
 * item's first call. Out of memory sets `oom`; agg_get then returns AGG_NONE, which agg_add
 * ignores.
 */
#ifndef OPSCOPE_ANALYZE_AGGREGATE_H
#define OPSCOPE_ANALYZE_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "util/hashmap.h"

#define AGG_NONE UINT32_MAX

struct agg_item {
	uint32_t name;	      /* string id (or the caller's key: nvprof's copy kinds) */
	uint32_t parent;      /* index of the parent item, AGG_NONE at the top */
	uint8_t kind;	      /* the caller's: e.g. inner phase or kernel */
	uint64_t calls;	      /* ranges counted */
	int64_t cpu_ns;	      /* sum of the CPU times, ns */
	int64_t cpu_max_ns;   /* longest CPU time, ns */
	int64_t cpu_min_ns;   /* shortest CPU time, ns (INT64_MAX before the first call) */
	int64_t gpu_ns;	      /* sum of the GPU times, ns */
	int64_t gpu_max_ns;   /* longest GPU time, ns */
	int64_t gpu_min_ns;   /* shortest GPU time, ns (INT64_MAX before the first call) */
	uint32_t first_child; /* first child item, AGG_NONE if none */
	uint32_t last_child;  /* last child item, AGG_NONE if none */
	uint32_t next;	      /* next sibling in first-seen order, AGG_NONE at the end */
};

struct agg {
	struct agg_item *v;  /* the items, in first-seen order */
	uint32_t n;	     /* items used */
	uint32_t cap;	     /* items allocated */
	struct hindex index; /* items by (parent, name, kind) */
	uint32_t first_top;  /* first top-level item (valid when n > 0) */
	uint32_t last_top;   /* last top-level item (valid when n > 0) */
	bool oom;	     /* an allocation failed: items are missing */
};

/* The item for (parent, name, kind), made on first use; AGG_NONE when out of memory. */
uint32_t agg_get(struct agg *a, uint32_t parent, uint32_t name, uint8_t kind);
/* Count one call with its CPU and GPU times. */
void agg_add(struct agg *a, uint32_t item, int64_t cpu, int64_t gpu);
void agg_free(struct agg *a);
/* The summed CPU and GPU times of the top-level items (ns): the whole that the operator table
 * takes its ratios of. */
void agg_top_sums(const struct agg *a, int64_t *cpu_ns, int64_t *gpu_ns);

/* Which host ranges agg_host_ranges aggregates. */
enum agg_select {
	AGG_OPERATORS,	  /* Operator ranges */
	AGG_USER_DEFINED, /* PythonUserDefined ranges not named like a copy (below) */
	AGG_MEMORY,	  /* UserDefined and PythonUserDefined ranges named like memcpy,
			   * memorycopy or memset, any case */
};

/* Item kinds of the aggregations below. */
enum agg_kind {
	AGG_KIND_RANGE,	 /* a selected range, or a kernel of the kernel aggregation */
	AGG_KIND_INNER,	 /* an operator's inner phase */
	AGG_KIND_KERNEL, /* device work launched from inside an operator or inner phase */
};

/* The selected host ranges of thread track `track` (MODEL_NO_TRACK: every thread), by name:
 * CPU time = duration, GPU time = all device time launched from inside (tree.h). With
 * `detail`, each item's children are its inner phases (direct children that are neither
 * operators nor runtime calls), each with the device work its runtime calls launched
 * (AGG_KIND_KERNEL, GPU time only), and the device work of the item's own runtime calls.
 * 0, or OPSCOPE_ENOMEM (out is then empty). */
int agg_host_ranges(const struct analysis *a, enum agg_select sel, uint32_t track, bool detail,
		    struct agg *out);

/* Every kernel (NCCL kernels included) by name, GPU time = its duration; *total_ns = the sum
 * of their durations. 0, or OPSCOPE_ENOMEM (out is then empty). */
int agg_kernels(const struct model *m, struct agg *out, int64_t *total_ns);

/* Item kinds of the nvprof aggregation. */
enum agg_nvprof_kind {
	AGG_NVPROF_GPU,	 /* GPU work by name */
	AGG_NVPROF_API,	 /* runtime calls by name */
	AGG_NVPROF_COPY, /* copies of one kind, or memsets: `name` is a key for
			  * agg_nvprof_copy_name, not a string id */
};

/* nvprof's summary: GPU work (kernels, copies, memsets) and runtime calls, by name, GPU time
 * = duration; copies by kind ("[CUDA memcpy HtoD]" for "Memcpy HtoD (Pageable -> Device)"),
 * memsets all one item. *gpu_ns and *api_ns are the summed durations of each side. 0, or
 * OPSCOPE_ENOMEM (out is then empty). */
int agg_nvprof(const struct model *m, struct agg *out, int64_t *gpu_ns, int64_t *api_ns);

/* nvprof's name of an AGG_NVPROF_COPY item ("[CUDA memcpy HtoD]", "[CUDA memset]"). */
const char *agg_nvprof_copy_name(uint32_t key);

#endif
