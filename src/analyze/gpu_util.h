/*
 * gpu_util.h: how busy each GPU was over time: per device of each file, per step and over the
 * window of the steps, the share of time some kernel ran, the share some device work ran
 * (kernels, copies, memsets), and the estimated SM efficiency of PyTorch's TensorBoard plugin
 * (FINDINGS-analysis §6.4); and the same over fixed buckets of the window, a time series.
 *
 * The steps are the Step table's (steps.h: ProfileStep ranges stretched to the GPU work they
 * launched, trailing steps without all their GPU work dropped; without ProfileStep ranges the
 * whole trace is one step). The window runs from the first step's start to the last one's
 * end; gaps between steps count as idle. Busy shares are unions of intervals, so concurrent
 * kernels never count twice. SM efficiency: each kernel is worth min(1, blocks / SMs) (blocks
 * = grid x*y*z, SMs from the device properties in the metadata; else Kineto's "blocks per
 * SM" argument), overlapping kernels add up, the sum is capped at 1 at every instant, and the
 * integral over a span is divided by its length (idle counts as 0). docs/report.md, `gpu`.
 *
 * Invariants: devices come file by file, each file's in the order of their first track;
 * buckets are GPU_UTIL_MAX_BUCKETS at most, all bucket_ns long but the last.
 */
#ifndef OPSCOPE_ANALYZE_GPU_UTIL_H
#define OPSCOPE_ANALYZE_GPU_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "analyze/steps.h"

#define GPU_UTIL_MAX_BUCKETS 100 /* buckets of a time series, at most (the plugin's) */

/* One span of time (a step, the window, a bucket) of one device. */
struct gpu_util_span {
	uint32_t name;	   /* string id of the step's name (0: the window, a bucket, or a
			     * step without a ProfileStep range) */
	int64_t s, e;	   /* ns: the span [s, e) */
	int64_t kernel_ns; /* ns: covered by some kernel (NCCL kernels included) */
	int64_t work_ns;   /* ns: covered by some device work (kernels, copies, memsets) */
	double sm_eff_ns;  /* ns: the integral of the capped SM use over the span (divide
			     * by e - s for the efficiency) */
	uint64_t kernels;  /* kernels that overlap the span */
};

struct gpu_util_device {
	uint32_t file;	     /* index in model.files */
	uint32_t device;     /* device id (the pid of its device tracks) */
	uint32_t sm_count;   /* SMs from the file's metadata, 0 if not known */
	bool sm_known;	     /* some kernel of the device has an SM value: sm_eff_ns means
			       * something */
	uint64_t kernels;    /* kernels of the device in the file */
	uint64_t kernels_sm; /* of those, with an SM value (the others count as 0) */
	uint32_t nsteps;     /* the steps (the Step table's rows) */
	struct gpu_util_span *steps;
	struct gpu_util_span window; /* first step's start to last step's end */
	int64_t bucket_ns;	     /* ns: bucket length (a power of 10 µs), 0 for none */
	uint32_t nbuckets;	     /* buckets over the window */
	struct gpu_util_span *buckets;
};

struct gpu_util {
	struct gpu_util_device *dev; /* one per (file, device) with device work or tracks */
	uint32_t ndev;		     /* entries in dev */
};

/* The bucket length for a series over span_ns: the smallest power of 10 µs (1 µs up) that
 * cuts it into at most GPU_UTIL_MAX_BUCKETS buckets; 0 when span_ns <= 0. */
int64_t gpu_util_bucket_ns(int64_t span_ns);
/* The buckets of the series of [s, e): their count (at most GPU_UTIL_MAX_BUCKETS, the last
 * one may be shorter) and their length in *bucket_ns; 0 (and 0) when e <= s or e - s does not
 * fit an int64. */
uint32_t gpu_util_nbuckets(int64_t s, int64_t e, int64_t *bucket_ns);

/* The window of file f: its steps' first start to last end (st: the file's step table),
 * else the span of its device work; [0, 0) when it has neither. gpu_time.h uses the same. */
void gpu_util_window(const struct model *m, uint32_t f, const struct step_table *st, int64_t *s,
		     int64_t *e);

/* The GPU utilization of a's model. 0, or OPSCOPE_ENOMEM (out is then empty). */
int gpu_util_analyze(const struct analysis *a, struct gpu_util *out);
void gpu_util_free(struct gpu_util *u);

/* The value of metadata `key` ("gpu.0.sm_count") of a process of file `file`, or NULL. */
const char *gpu_util_file_meta(const struct model *m, uint32_t file, const char *key);

#endif
