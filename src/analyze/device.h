/*
 * device.h: how busy each processor was. CPUs: the utilization a recording sampled, per
 * process, as the trace's metadata states it ("cpu.process_utilization",
 * "cpu.system_utilization"). GPUs: per device of each file, the union of its kernels over
 * all its streams (its busy time); utilization is that over the analysis's total time.
 *
 * Invariants: CPU entries come process ones first, then system ones, each kind in metadata
 * order; GPUs come file by file, each file's in the order of their first track, at most
 * DEVICE_MAX_GPUS per file.
 */
#ifndef OPSCOPE_ANALYZE_DEVICE_H
#define OPSCOPE_ANALYZE_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analysis.h"

#define DEVICE_MAX_GPUS 64 /* GPUs per file; more are left out */

/* The GPUs of file f: the device ids of its device tracks, in the order of their first track,
 * DEVICE_MAX_GPUS at most, into dev[] and (first not NULL) each one's first track into
 * first[]; how many. The device, GPU utilization and GPU time analyses list devices so. */
uint32_t device_file_gpus(const struct model *m, uint32_t f, uint32_t *dev, uint32_t *first);

enum device_cpu_kind {
	DEVICE_CPU_PROCESS, /* the recording process's CPU time over elapsed time */
	DEVICE_CPU_SYSTEM,  /* all processes' busy time over busy + idle time */
};

struct device_cpu {
	enum device_cpu_kind kind; /* what was measured */
	uint32_t file;		   /* index in model.files of the file that holds it */
	uint32_t pid;		   /* the process that recorded it */
	double utilization;	   /* fraction; a process's is over one core, so up to ncores */
};

struct device_gpu {
	uint32_t file;	 /* index in model.files */
	uint32_t device; /* device id (the pid of its device tracks) */
	int64_t busy_ns; /* ns: the union of its kernels (NCCL ones included) over its streams */
};

struct device_usage {
	struct device_cpu *cpu; /* CPU entries, process ones first */
	uint32_t ncpu;		/* entries in cpu */
	uint32_t ncpu_of[2];	/* entries of each device_cpu_kind */
	struct device_gpu *gpu; /* GPU entries */
	uint32_t ngpu;		/* entries in gpu */
};

/* The CPU and GPU usage of a's model. 0, or OPSCOPE_ENOMEM (out is then empty). */
int device_analyze(const struct analysis *a, struct device_usage *out);
/* The same of file f (DEVICE_ALL_FILES: every file, as device_analyze): its GPUs, and the CPU
 * entries of its metadata. */
#define DEVICE_ALL_FILES UINT32_MAX
int device_file(const struct analysis *a, uint32_t f, struct device_usage *out);
/* Append CPU entry (kind, file, pid) to d (*cap: entries allocated); the metadata it comes
 * from holds one value per file, pid and key. 0, or OPSCOPE_ENOMEM. device_cpu_order then
 * puts process entries first, each kind in the order added. */
int device_cpu_add(struct device_usage *d, uint32_t *cap, enum device_cpu_kind kind, uint32_t file,
		   uint32_t pid, double utilization);
void device_cpu_order(struct device_usage *d);
void device_free(struct device_usage *d);

#endif
