/*
 * aggregate.h: aggregation of ranges by name: per item the number of calls and the total /
 * max / min of a CPU and a GPU time, keyed by (parent item, name, kind) so that an item can
 * have children (an operator's inner phases and kernels), kept in the order they were first
 * seen. The report's operator, user-defined, memory, kernel and nvprof tables are made of
 * these.
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
	struct agg_item *v; /* the items, in first-seen order */
	uint32_t n;	    /* items used */
	uint32_t cap;	    /* items allocated */
	uint32_t *slots;    /* open addressing: item index + 1, 0 = empty */
	uint32_t slots_cap; /* slots allocated (a power of 2) */
	uint32_t first_top; /* first top-level item (valid when n > 0) */
	uint32_t last_top;  /* last top-level item (valid when n > 0) */
	bool oom;	    /* an allocation failed: items are missing */
};

/* The item for (parent, name, kind), made on first use; AGG_NONE when out of memory. */
uint32_t agg_get(struct agg *a, uint32_t parent, uint32_t name, uint8_t kind);
/* Count one call with its CPU and GPU times. */
void agg_add(struct agg *a, uint32_t item, int64_t cpu, int64_t gpu);
void agg_free(struct agg *a);

#endif
