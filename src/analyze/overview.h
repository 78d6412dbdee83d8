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
#include "analyze/distributed.h"

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

/* Ranges of one file set aside: their calls depend on the total time of every file. */
struct overview_open {
	int64_t s, e; /* ns: the range */
	uint64_t n;   /* ranges with these very times */
};

/* One type of one side (host or GPU) of one file. */
struct overview_side {
	uint64_t ranges;	    /* its ranges (phases: every phase range) */
	uint64_t calls;		    /* those that touch the `sure` list of overview_file */
	struct ivec time;	    /* the union of its ranges, merged (not for the phases) */
	struct overview_open *open; /* the others, by start then end, equal ones once */
	size_t nopen, open_cap;	    /* entries of open, and allocated */
};

/* What one file (or every file) gives the overview, but for the phase calls and the
 * communication ranges (phases.h, distributed.h), which overview_combine takes apart. */
struct overview_part {
	struct overview_side host[OPSCOPE_CAT_COUNT_]; /* by OPSCOPE_CAT_* (Communication:
							* unused) */
	struct overview_side gpu[OPSCOPE_CAT_COUNT_];  /* Kernel, Memcpy, Memset */
	struct ivec busy;			       /* the union of all its GPU work, merged */
};

/* The part of file f (OVERVIEW_ALL_FILES: every file). `sure` is a merged list known to lie
 * inside the total time (the file's own steps, or the total time itself): a range that
 * touches it is a call; the others are kept in open. 0, or OPSCOPE_ENOMEM. */
#define OVERVIEW_ALL_FILES UINT32_MAX
int overview_file(const struct analysis *a, uint32_t f, const struct ivec *sure,
		  struct overview_part *out);
void overview_part_free(struct overview_part *p);
/* The overview of the files of parts (every file once) against merged list total (the total
 * time): the types' unions and calls, the phase calls' (phases_calls of every file) and the
 * communication ranges (distributed_lists' pairs of every file, in any order: both lists are
 * sorted here). 0, or OPSCOPE_ENOMEM. */
struct phase_call;
int overview_combine(const struct overview_part *parts, size_t nparts, const struct ivec *total,
		     const struct phase_call *calls, size_t ncalls, struct ivec *comm_host,
		     struct ivec *comm_gpu, struct overview *out);

#endif
