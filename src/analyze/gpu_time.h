/*
 * gpu_time.h: GPU time, explained (after HTA's breakdowns, FINDINGS-analysis §2.3, §2.4,
 * §2.7, §2.9), three analyses over the same devices, steps and window as gpu_util.h:
 *
 *   - the time breakdown: per device and per step (and the window), an exact partition of
 *     the span into compute (kernels that are not communication), communication, copies,
 *     memsets, and idle split by cause (waiting on data, on synchronization, host-bound,
 *     other);
 *   - kernel launch statistics: per name of device work launched by a runtime call, the
 *     call's duration, the delay from the call's end to the work's start, short ones and
 *     outliers against HTA's cutoffs;
 *   - queue length: per stream, the number of device ops launched (runtime call begun) and
 *     not yet started, over the window and over buckets of it.
 *
 * Rules (docs/report.md, `gputime`, `launch`, `queue`, say why):
 *   - classes: a kernel is communication when its category is Communication or its name
 *     contains nccl, rccl, hccl or cross_device_reduce (any case); other kernels are
 *     compute; Memcpy and Memset ranges are copies and memsets. An instant covered by several
 *     goes to the first of compute, communication, copy, memset (overlapped communication
 *     counts as compute, as in HTA's temporal breakdown).
 *   - idle: each instant of the span with no device work of the device goes to the first
 *     cause that holds at it: data (inside a Dataloader range of the file or the data-wait
 *     gap of a step, [step start, end of its last Dataloader range)), sync (inside a
 *     synchronizing runtime call of the file or a Kineto cuda_sync event of the device other
 *     than "Stream Wait Event"), other (some device work of the device was queued: its
 *     launching call had ended and it had not started), host-bound (none was). A gap is
 *     counted once for each cause it gave time to.
 *   - launch delay = max(0, work start - launching call end) (HTA's convention).
 *   - queue: +1 at the launching call's start, -1 at the work's start (HTA's).
 *
 * Invariant: for every span, the parts (GPU_TIME_NPARTS) sum to e - s exactly.
 */
#ifndef OPSCOPE_ANALYZE_GPU_TIME_H
#define OPSCOPE_ANALYZE_GPU_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analysis.h"

#define GPU_TIME_SHORT_NS	   10000  /* ns: a "short" device op runs under 10 µs */
#define GPU_TIME_RUNTIME_CUTOFF_NS 50000  /* ns: HTA's runtime cutoff (launch call length) */
#define GPU_TIME_DELAY_CUTOFF_NS   100000 /* ns: HTA's launch delay cutoff */
#define GPU_TIME_QUEUE_FULL	   1024	  /* HTA's CUDA_MAX_LAUNCH_QUEUE_PER_STREAM */

/* The parts of a span, in the order an instant is given to them. */
enum gpu_time_part {
	GPU_TIME_COMPUTE,    /* some compute kernel ran */
	GPU_TIME_COMM,	     /* else some communication kernel ran */
	GPU_TIME_MEMCPY,     /* else some copy ran */
	GPU_TIME_MEMSET,     /* else some memset ran */
	GPU_TIME_IDLE_DATA,  /* idle, waiting on data */
	GPU_TIME_IDLE_SYNC,  /* else idle inside a synchronization */
	GPU_TIME_IDLE_HOST,  /* else idle with nothing queued: host-bound */
	GPU_TIME_IDLE_OTHER, /* else idle with work queued that did not start */
	GPU_TIME_NPARTS,
};

/* A part's name as a table header ("Compute", ..., "Idle: other"). */
const char *gpu_time_part_name(enum gpu_time_part p);

/* One span (a step, the window) of one device. */
struct gpu_time_span {
	uint32_t name;			/* string id of the step's name (0: the window, or a
					  * step without a ProfileStep range) */
	int64_t s, e;			/* ns: the span [s, e) */
	int64_t part[GPU_TIME_NPARTS];	/* ns per part; they sum to e - s */
	uint64_t gaps[GPU_TIME_NPARTS]; /* idle gaps that gave time to each idle part (0 for the
					 * busy parts) */
};

struct gpu_time_device {
	uint32_t file;		     /* index in model.files */
	uint32_t device;	     /* device id (the pid of its device tracks) */
	uint32_t nsteps;	     /* the Step table's rows */
	struct gpu_time_span *steps; /* one per step */
	struct gpu_time_span window; /* first step's start to last step's end (without
				      * steps: the span of the device work of the file) */
};

struct gpu_time {
	struct gpu_time_device *dev; /* one per (file, device), as gpu_util.h */
	uint32_t ndev;		     /* entries in dev */
};

/* The breakdown of a's model. 0, or OPSCOPE_ENOMEM (out is then empty). */
int gpu_time_analyze(const struct analysis *a, struct gpu_time *out);
void gpu_time_free(struct gpu_time *t);

/* Launch statistics of one name (or of all: the total). */
struct gpu_launch_row {
	uint32_t name;		 /* string id of the device op's name (0: the total) */
	uint8_t category;	 /* enum opscope_category of its first op */
	uint64_t count;		 /* device ops of that name with a launching call */
	int64_t cpu_sum_ns;	 /* ns: sum of their launching calls' durations */
	int64_t cpu_max_ns;	 /* ns: the longest */
	int64_t delay_sum_ns;	 /* ns: sum of the launch delays */
	int64_t delay_max_ns;	 /* ns: the longest */
	int64_t gpu_sum_ns;	 /* ns: sum of the ops' durations */
	uint64_t short_ops;	 /* ops shorter than GPU_TIME_SHORT_NS */
	uint64_t shorter;	 /* HTA's short kernels: call <= runtime cutoff, op < call */
	uint64_t cpu_outliers;	 /* calls longer than the runtime cutoff */
	uint64_t delay_outliers; /* delays longer than the delay cutoff */
};

struct gpu_launch {
	struct gpu_launch_row *rows; /* by count (most first), then name */
	uint32_t nrows;		     /* entries in rows */
	struct gpu_launch_row total; /* all ops together */
	uint64_t unlaunched;	     /* device ops with no launching call (not counted) */
};

/* The launch statistics of a's model (every file). 0, or OPSCOPE_ENOMEM. */
int gpu_launch_analyze(const struct analysis *a, struct gpu_launch *out);
/* The same of one file's device ops (file UINT32_MAX: every file): a partial's share. */
int gpu_launch_analyze_file(const struct analysis *a, uint32_t file, struct gpu_launch *out);
/* Add row x into `into` (the merge of the rows of one name from several files): counts and
 * sums added, maxima kept; as if x's ops had been counted into it one by one. The sums must
 * fit (the caller checks). */
void gpu_launch_row_add(struct gpu_launch_row *into, const struct gpu_launch_row *x);
/* Order l's rows as gpu_launch_analyze does (count, most first, then name in m). 0, or
 * OPSCOPE_ENOMEM. */
int gpu_launch_order(const struct model *m, struct gpu_launch *l);
void gpu_launch_free(struct gpu_launch *l);

/* The queue of one stream over one span. */
struct gpu_queue_span {
	int64_t s, e;	   /* ns: the span */
	uint32_t max;	   /* the largest queue length in it */
	int64_t queued_ns; /* ops x ns: the integral of the queue length over it (divide by
			    * e - s for the time-weighted mean) */
	int64_t full_ns;   /* ns: time with GPU_TIME_QUEUE_FULL or more queued */
};

struct gpu_queue_stream {
	uint32_t file;	 /* index in model.files */
	uint32_t device; /* device id */
	uint64_t stream; /* stream id on the device */
	uint32_t name;	 /* string id of the track's name (Kineto: a string tid), 0 if none */
	uint64_t ops;	 /* ops of the stream with a launching call */
	struct gpu_queue_span window;	/* the device's window (as gpu_time_device's) */
	int64_t bucket_ns;		/* ns: bucket length (gpu_util_bucket_ns), 0: none */
	uint32_t nbuckets;		/* buckets over the window */
	struct gpu_queue_span *buckets; /* the series */
};

struct gpu_queue {
	struct gpu_queue_stream *st; /* per device track of work, by file, device, stream */
	uint32_t nst;		     /* entries in st */
};

/* The queue lengths of a's model. 0, or OPSCOPE_ENOMEM (out is then empty). */
int gpu_queue_analyze(const struct analysis *a, struct gpu_queue *out);
void gpu_queue_free(struct gpu_queue *q);

/* Does a runtime call of this name make the host wait for the device (cuda/hip/cu
 * ...Synchronize, and blocking copies: ...Memcpy... without Async)? */
bool gpu_time_is_sync_call(const char *name);
/* Is this kernel name a collective's (nccl, rccl, hccl, cross_device_reduce; any case)? */
bool gpu_time_is_comm_name(const char *name);

#endif
