/*
 * distributed.h: communication against computation (Paddle's Distribution Summary).
 *
 * Communication: host communication ranges (category Communication, or an Operator named like
 * allreduce / broadcast / rpc), and GPU communication (NCCL kernels, and every kernel launched
 * from inside a host communication range). Computation: every other kernel. Kernels launched
 * before the profiling window (no launching call) count by their category. Overlap is the
 * time both ran at once. Paddle also counts a kernel launched under a communication range as
 * computation; we do not (docs/report.md).
 */
#ifndef OPSCOPE_ANALYZE_DISTRIBUTED_H
#define OPSCOPE_ANALYZE_DISTRIBUTED_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "analyze/intervals.h"

struct distributed {
	bool has_communication;	  /* any communication range (Paddle prints the table only then) */
	int64_t communication_ns; /* ns: the union of host and GPU communication */
	int64_t computation_ns;	  /* ns: the union of the computation kernels */
	int64_t overlap_ns;	  /* ns: communication ∩ computation */
};

/* The ranges above, not merged, pushed onto host_comm, gpu_comm and compute (compute may be
 * NULL when not wanted). Out of memory sets the lists' oom. */
void distributed_ranges(const struct analysis *a, struct ivec *host_comm, struct ivec *gpu_comm,
			struct ivec *compute);

/* Communication, computation and their overlap in a's model. 0, or OPSCOPE_ENOMEM. */
int distributed_analyze(const struct analysis *a, struct distributed *out);
/* The same over the tracks of one file (index in model.files; one rank of many: ranks.h), or
 * of every file with DISTRIBUTED_ALL_FILES. */
#define DISTRIBUTED_ALL_FILES UINT32_MAX
int distributed_analyze_file(const struct analysis *a, uint32_t file, struct distributed *out);

/* What the numbers above are made of, for one file or several. */
struct distributed_lists {
	struct ivec host_comm; /* host communication ranges: sorted, one of each (start, end) */
	struct ivec gpu_comm;  /* GPU communication ranges: the same */
	struct ivec comp;      /* the computation kernels, merged */
};
/* The lists of file `file` (DISTRIBUTED_ALL_FILES: every file). 0, or OPSCOPE_ENOMEM. The
 * lists of several files, joined (pairs pushed, comp merged again), are those of all. */
int distributed_file_lists(const struct analysis *a, uint32_t file, struct distributed_lists *out);
/* Communication (host and GPU pairs, in any order), computation (comp, merged) and their
 * overlap from lists l. 0, or OPSCOPE_ENOMEM. */
int distributed_from_lists(const struct distributed_lists *l, struct distributed *out);
void distributed_lists_free(struct distributed_lists *l);

#endif
