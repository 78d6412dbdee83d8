/*
 * gpu_mem.h: GPU memory from allocation records: per device of each file, the bytes
 * allocated over time, the peak and when, allocations and frees counted, the largest
 * allocations with their lifetime and the host range that made them, and those never freed.
 *
 * Sources, one analysis: "[memory]" instants, as opscope's loader makes them from CUPTI's
 * MEMORY2 records (on the device's track: "device", "bytes" signed, "Addr" "0x..", "Total
 * Allocated", "correlation" of the cudaMalloc/cudaFree call) and as PyTorch's profiler
 * writes them (on the host thread: "Device Type" 1 for CUDA, "Device Id", "Bytes" signed,
 * and in newer traces "Addr" and "Total Allocated"). A positive size is an allocation, a
 * negative one a free. docs/report.md, `gpumem`, has the exact rules.
 *
 * Invariants: devices come file by file, by device id; `largest` and `never_freed` are
 * sorted by size, largest first (ties: earlier first), GPU_MEM_TOP at most.
 */
#ifndef OPSCOPE_ANALYZE_GPU_MEM_H
#define OPSCOPE_ANALYZE_GPU_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analysis.h"

#define GPU_MEM_TOP 10 /* allocations listed per device and list */

struct gpu_mem_alloc {
	int64_t ts_ns;	   /* ns: when it was allocated */
	int64_t bytes;	   /* its size, bytes */
	int64_t freed_ns;  /* ns: when it was freed, INT64_MIN when not in the trace */
	uint64_t address;  /* its address, 0 if not recorded */
	uint32_t launcher; /* string id of the innermost host range around it (not a runtime
			    * call or a step), 0 if none */
};

/* The allocated bytes over one bucket of the series. */
struct gpu_mem_bucket {
	int64_t s, e;	   /* ns: the bucket [s, e) */
	int64_t end_bytes; /* allocated at its end (after the last event before e) */
	int64_t max_bytes; /* the most allocated at any time in it */
};

struct gpu_mem_device {
	uint32_t file;		   /* index in model.files */
	uint32_t device;	   /* device id */
	uint64_t allocs;	   /* allocation records */
	uint64_t frees;		   /* free records */
	int64_t alloc_bytes;	   /* bytes, summed over the allocations */
	int64_t free_bytes;	   /* bytes, summed over the frees (positive) */
	bool totals;		   /* every record carried "Total Allocated": the allocated
				    * bytes are the allocator's, memory from before the
				    * trace included; else the running sum from 0 */
	bool addresses;		   /* every record carried an address: frees matched */
	int64_t first_ns, last_ns; /* ns: first and last record */
	int64_t start_bytes;	   /* allocated just before the first record */
	int64_t end_bytes;	   /* allocated after the last record */
	int64_t peak_bytes;	   /* the most allocated after any record */
	int64_t peak_ns;	   /* ns: the first record that reached it */
	uint64_t never_freed;	   /* allocations with no free in the trace (addresses only) */
	int64_t never_freed_bytes; /* their bytes */
	uint32_t nlargest;	   /* entries in largest */
	struct gpu_mem_alloc largest[GPU_MEM_TOP]; /* the largest allocations */
	uint32_t nleaks;			   /* entries in leaks */
	struct gpu_mem_alloc leaks[GPU_MEM_TOP];   /* the largest never freed */
	int64_t bucket_ns;			   /* ns: bucket length (gpu_util_bucket_ns) */
	uint32_t nbuckets;			   /* buckets over [first_ns, last_ns] */
	struct gpu_mem_bucket *buckets;
};

struct gpu_mem {
	struct gpu_mem_device *dev; /* one per (file, device) with records */
	uint32_t ndev;		    /* entries in dev */
};

/* The GPU memory of a's model. 0, or OPSCOPE_ENOMEM (out is then empty). */
int gpu_mem_analyze(const struct analysis *a, struct gpu_mem *out);
void gpu_mem_free(struct gpu_mem *g);

#endif
