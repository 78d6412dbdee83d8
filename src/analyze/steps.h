/*
 * steps.h: the step view: where the time of each training step went.
 *
 * Per ProfileStep range of a file, two breakdowns:
 *   - an exclusive partition of the step's time (the one PyTorch's TensorBoard plugin shows):
 *     every instant of the step goes to the first of Kernel, Memcpy, Memset, Communication,
 *     Runtime, DataLoader, CPU Exec that is busy then, else to Other; device activity counts
 *     for the step whose host span launched it, and a step is stretched to the end of the GPU
 *     work it launched (docs/report.md has the exact rules);
 *   - MindSpore's step trace: the gap before the step's compute (waiting for data), the
 *     compute (forward and backward), and the tail (optimizer, gradient all-reduce) up to
 *     the end of the host step; then the GPU drain, from there to the end of the GPU work
 *     the step launched.
 * Without ProfileStep ranges the whole trace is one step.
 */
#ifndef OPSCOPE_ANALYZE_STEPS_H
#define OPSCOPE_ANALYZE_STEPS_H

#include <stdint.h>

#include "model/model.h"

struct tree;

enum step_role {
	STEP_KERNEL,
	STEP_MEMCPY,
	STEP_MEMSET,
	STEP_COMMUNICATION,
	STEP_RUNTIME,
	STEP_DATALOADER,
	STEP_CPU_EXEC,
	STEP_OTHER,
	STEP_NROLES,
};

struct step_row {
	uint32_t name;		  /* string id of the step's range name ("ProfilerStep#5") */
	int64_t start_ns, end_ns; /* the step as analysed (stretched to its GPU work) */
	int64_t host_start_ns;	  /* the ProfileStep range on the host */
	int64_t host_end_ns;
	int64_t role_ns[STEP_NROLES]; /* exclusive partition of [start, end) */
	uint64_t gpu_events;	      /* kernels, copies, memsets launched from inside the step */
	int64_t gap_ns;		      /* step start -> compute start (data wait) */
	int64_t compute_ns;	      /* compute start -> end of backward */
	int64_t tail_ns;	      /* end of backward -> end of the host step (optimizer,
				       * gradient all-reduce) */
	int64_t drain_ns;	      /* end of the host step -> step end: the GPU finishing
				       * the work the step queued */
};

/* A step as the partition sees it, for every step, the dropped ones too (phases.c shares
 * its kernel time out among the phases over the same spans). */
struct step_span {
	int64_t s, e;		/* ns: the step as analysed (stretched to its GPU work) */
	int64_t host_s, host_e; /* ns: its ProfileStep range (the trace's span without one) */
	int64_t max_host_e;	/* ns: the latest host_e of this step and those before it */
	uint32_t track;		/* host track of the ProfileStep range (MODEL_NONE-like
				 * UINT32_MAX without one) */
};

struct step_table {
	uint32_t file;	 /* index in model.files */
	uint32_t nspans; /* every step, kept or dropped, in start order (rows are the first
			   * nrows of them) */
	struct step_span *spans;
	uint32_t nrows;	  /* steps kept */
	uint32_t dropped; /* trailing steps dropped: their GPU work was not all captured */
	struct step_row *rows;
	struct step_row avg; /* the average of the rows (name 0) */
};

/* Role names as table headers ("Kernel", ..., "CPU Exec", "Other"). */
const char *step_role_name(enum step_role r);

/* The step whose host span holds a runtime call [s, e) entirely, as the partition decides
 * (docs/report.md, step rule 2), or t->nspans for none. */
uint32_t steps_find(const struct step_table *t, int64_t s, int64_t e);

/* The step table of file `file` of the tree's model (the launch links come from the tree).
 * Returns 0 or OPSCOPE_ENOMEM. */
int steps_analyze(const struct tree *tree, uint32_t file, struct step_table *out);
/* Set t->avg to the average of t's rows (name 0, the duration in end_ns, each sum divided
 * by nrows in integers; all 0 without rows): steps_analyze's, and the merge's of a file's
 * rows read from a partial. The sums must fit int64 (the partial reader bounds them). */
void steps_average(struct step_table *t);
void steps_free(struct step_table *t);

#endif
