/*
 * agg.h: aggregation of ranges by name for the report's tables: per item the number of
 * calls and total / max / min of a CPU and a GPU time, keyed by (parent item, name, kind) so
 * that an item can have children (an operator's inner phases and kernels), kept in the order
 * they were first seen.
 */
#ifndef OPSCOPE_REPORT_AGG_H
#define OPSCOPE_REPORT_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGG_NONE UINT32_MAX

struct agg_item {
	uint32_t name;	 /* string id */
	uint32_t parent; /* AGG_NONE at the top */
	uint8_t kind;	 /* the caller's: e.g. inner phase or kernel */
	uint64_t calls;
	int64_t cpu, cpu_max, cpu_min;
	int64_t gpu, gpu_max, gpu_min;
	uint32_t first_child, last_child, next; /* children in first-seen order */
};

struct agg {
	struct agg_item *v;
	uint32_t n, cap;
	uint32_t *slots; /* open addressing: item index + 1, 0 = empty */
	uint32_t slots_cap;
	uint32_t first_top, last_top; /* top-level items in first-seen order */
	bool oom;
};

/* The item for (parent, name, kind), made on first use; AGG_NONE when out of memory. */
uint32_t agg_get(struct agg *a, uint32_t parent, uint32_t name, uint8_t kind);
/* Count one call with its CPU and GPU times. */
void agg_add(struct agg *a, uint32_t item, int64_t cpu, int64_t gpu);
void agg_free(struct agg *a);

#endif
