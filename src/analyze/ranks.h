/*
 * ranks.h: many ranks side by side (`opscope report DIR`, one trace per rank; docs/ranks.md).
 *
 * From the model's process table it finds each file's rank and host (the loaders fill them
 * from distributedInfo, the recorder's metadata and our exports), says in one line each what
 * does not fit (files without a rank, duplicate ranks, missing ranks, world sizes that
 * disagree), and then, over the files kept (one per rank):
 *   - clock alignment: the collectives are matched across ranks (the n-th collective kernel
 *     of one name on each rank is one collective); a rank's clock offset is the median, over
 *     the collectives it shares with the reference rank (the lowest), of the reference's
 *     kernel end minus its own. Applied only here; the model's times stay as recorded;
 *   - per step k (the k-th kept step of every rank): each rank's step time, compute,
 *     communication, data wait and collective wait; the straggler, its margin and why;
 *   - per rank: communication, computation and their overlap (distributed.h, on its file);
 *   - per collective across ranks: bytes, algorithm, transfer time (the minimum duration,
 *     TensorBoard's definition), wait, arrival spread and bus bandwidth (nccl-tests' factors).
 */
#ifndef OPSCOPE_ANALYZE_RANKS_H
#define OPSCOPE_ANALYZE_RANKS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "analyze/distributed.h"
#include "analyze/steps.h"

#define RANKS_NOTES_MAX 32  /* notes kept; more are counted in nnotes_dropped */
#define RANKS_NOTE_LEN	192 /* bytes of one note, NUL included */

/* Why a step's straggler ended last (docs/ranks.md, "Stragglers"). */
enum ranks_why {
	RANKS_WHY_NONE,	   /* one rank, or no rank stood out */
	RANKS_WHY_DATA,	   /* it waited longer for data (step-trace gap) */
	RANKS_WHY_COMPUTE, /* its compute (GPU kernels, copies, memsets) took longer */
	RANKS_WHY_LATE,	   /* it arrived last at a collective, compute and data alike */
};

/* One step of one file, as the comparison reads it (from steps.h's step_row). */
struct ranks_steprow {
	uint32_t name;	    /* string id of the step's range name, 0 for none */
	int64_t start_ns;   /* ns: the step as analysed (stretched to its GPU work) */
	int64_t end_ns;	    /* ns: its end */
	int64_t compute_ns; /* ns: the partition's Kernel + Memcpy + Memset time */
	int64_t comm_ns;    /* ns: the partition's Communication time */
	int64_t gap_ns;	    /* ns: step start -> compute start (data wait) */
};

/* One collective kernel of one file, as the comparison reads it. */
struct ranks_kernel {
	uint32_t name;	/* string id of the kernel name */
	uint32_t seq;	/* n-th kernel of this name in its file, 0-based */
	int64_t s, e;	/* ns, as recorded: its start and end */
	const char *op; /* ranks_coll_op of its "Collective name", else of its name (static) */
	int32_t group;	/* its "Group size" argument, -1 if none */
	int64_t bytes;	/* bytes by nccl-tests' convention, -1 if not known */
};

/* One file's share of the rank analysis: all that the comparison reads of it. Small
 * (bounded by its steps and collective kernels), so that `opscope report --format partial`
 * can write it and `opscope merge` read it back (docs/merge.md). */
struct ranks_file {
	uint32_t file;		      /* index in model.files */
	int32_t rank;		      /* distributed rank, -1 if the file has none */
	uint32_t host;		      /* string id of the host name, 0 if not known */
	int32_t world_size;	      /* world size its metadata gives, -1 if not known */
	uint32_t nsteps;	      /* steps to compare, 0 without ProfileStep ranges */
	struct ranks_steprow *steps;  /* nsteps, in start order */
	uint32_t nkernels;	      /* collective kernels in the file */
	struct ranks_kernel *kernels; /* nkernels, sorted by (name, seq) */
	struct distributed dist;      /* its communication, computation and their overlap */
};

/* One rank: the file kept for it. */
struct ranks_rank {
	uint32_t file;			    /* index in model.files */
	int32_t rank;			    /* distributed rank */
	uint32_t host;			    /* string id of the host name, 0 if not known */
	int32_t world_size;		    /* world size its metadata gives, -1 if not known */
	int64_t offset_ns;		    /* ns added to its times: the reference clock */
	bool aligned;			    /* offset_ns came from shared collectives (else 0) */
	uint32_t ncolls;		    /* collective kernels in its file */
	const struct ranks_steprow *steps;  /* its steps (the ranks_file's) */
	uint32_t nsteps;		    /* its steps to compare, 0 without ProfileStep */
	const struct ranks_kernel *kernels; /* its collective kernels, by (name, seq) */
	struct distributed dist;	    /* its communication, computation and their overlap */
};

/* One rank in one step. */
struct ranks_cell {
	int64_t step_ns;    /* ns: the step as analysed (end - start) */
	int64_t compute_ns; /* ns: the partition's Kernel + Memcpy + Memset time */
	int64_t comm_ns;    /* ns: the partition's Communication time (not under compute) */
	int64_t data_ns;    /* ns: step start -> compute start (step trace gap) */
	int64_t wait_ns;    /* ns: time it waited at the step's collectives for later ranks */
	int64_t end_ns;	    /* ns, aligned: the step's end on the reference clock */
	int64_t ready_ns;   /* ns, aligned: end_ns - wait_ns, when it would have ended alone */
};

/* Step k across the ranks. */
struct ranks_step {
	uint32_t name;		/* string id of the reference rank's step name */
	uint32_t straggler;	/* index in ranks.ranks of the rank with the latest ready_ns */
	int64_t margin_ns;	/* ns: its ready_ns minus the next latest */
	enum ranks_why why;	/* the cause */
	int64_t why_ns;		/* ns: how much more data wait / compute than the others'
				 * median, or how much after the next arrival it arrived */
	uint64_t why_coll;	/* RANKS_WHY_LATE: index in ranks.colls of the collective */
	struct ranks_cell *per; /* nranks cells, in the order of ranks.ranks */
};

/* One collective matched across every rank. */
struct ranks_coll {
	uint32_t name;	     /* string id of the kernel name */
	uint32_t seq;	     /* 0-based: the seq-th kernel of that name on each rank */
	const char *op;	     /* "allreduce", "allgather", ... (static), "" when not known */
	char algo[24];	     /* algorithm and protocol from the name ("RING LL"), "" if none */
	int64_t bytes;	     /* bytes by nccl-tests' convention, -1 if not known */
	int32_t group;	     /* ranks in the collective (Group size, else ranks loaded) */
	double busbw_factor; /* bus bandwidth / algorithm bandwidth for op and group, 0 unknown */
	int64_t transfer_ns; /* ns: the shortest duration across ranks */
	int64_t mean_ns;     /* ns: the mean duration across ranks */
	int64_t spread_ns;   /* ns: last aligned arrival (kernel start) - first */
	uint32_t last;	     /* index in ranks.ranks of the last to arrive */
	uint32_t step;	     /* step index on the reference rank holding its start, or
			       * UINT32_MAX */
	int64_t *arrive_ns;  /* nranks aligned kernel starts */
};

struct ranks {
	uint32_t nranks;	  /* ranks kept (one file each), by rank */
	struct ranks_rank *ranks; /* nranks */
	uint32_t nsteps;	  /* steps compared: the fewest kept steps of the ranks with any */
	struct ranks_step *steps; /* nsteps */
	uint64_t ncolls;	  /* collectives matched on every rank */
	struct ranks_coll *colls; /* ncolls, in the reference rank's start order */
	uint64_t unmatched;	  /* collective kernels left out: not on every rank */
	bool aligned;		  /* every rank's clock was aligned */
	uint32_t nnotes;	  /* notes kept */
	uint32_t nnotes_dropped;  /* notes beyond RANKS_NOTES_MAX */
	char notes[RANKS_NOTES_MAX][RANKS_NOTE_LEN]; /* one line each: what does not fit */
	struct ranks_file *owned; /* the files' shares when ranks_analyze made them (freed with
				   * it), NULL when the caller's (ranks_combine) */
	uint32_t nowned;	  /* entries of owned */
};

/* Does the model hold two or more files with a known rank (the view's condition)? */
bool ranks_present(const struct model *m);
/* Which files the per-file analyses count (advice, gputime, diff): keep[f] (m->nfiles
 * entries) is false for a file whose rank a file before it has, as the ranks view keeps the
 * first copy of a rank (a directory holding one rank twice) and notes the others. Returns
 * the number left out, or UINT32_MAX when out of memory (keep then all true). */
uint32_t ranks_kept_files(const struct model *m, bool *keep);
/* The same from the files' shares (rf[i] of file i, n files in model order; the merge of
 * partials, which has no events): keep[i] false for a share whose rank one before it has. */
uint32_t ranks_kept_shares(const struct ranks_file *rf, uint32_t n, bool *keep);

/* The rank analysis of a's model (docs/ranks.md): ranks_file_extract of every file, then
 * ranks_combine. 0, or OPSCOPE_ENOMEM. */
int ranks_analyze(const struct analysis *a, struct ranks *out);
void ranks_free(struct ranks *r);

/* The share of file `file` of a's model: its rank, host and world size, its steps, its
 * collective kernels and its distributed numbers (without a rank: the rank alone, -1). 0, or
 * OPSCOPE_ENOMEM. */
int ranks_file_extract(const struct analysis *a, uint32_t file, struct ranks_file *out);
void ranks_file_free(struct ranks_file *f);
/* Sort f's kernels by (name, seq) again: after their names were interned into another model
 * (opscope merge), whose string ids order differently. */
void ranks_file_index(struct ranks_file *f);
/* Do two or more of the n files have a rank (the view's condition)? */
bool ranks_files_present(const struct ranks_file *files, uint32_t n);
/* The rank analysis of n files' shares, one per file of m in the order of model.files (m
 * gives the strings and the file paths; its tracks are not read). `out` points into files,
 * which must outlive it. 0, or OPSCOPE_ENOMEM. */
int ranks_combine(const struct model *m, const struct ranks_file *files, uint32_t n,
		  struct ranks *out);

/* The NCCL collective of a kernel name or "Collective name" argument ("allreduce",
 * "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv"), "" if none. */
const char *ranks_coll_op(const char *name);
/* nccl-tests' bus bandwidth factor of op over n ranks: allreduce 2(n-1)/n, allgather,
 * reducescatter and alltoall (n-1)/n, broadcast, reduce and sendrecv 1; 0 unknown. */
double ranks_busbw_factor(const char *op, int32_t n);
/* Bytes per element of a dtype as Kineto writes it ("Float", "BFloat16", "c10::Half",
 * "long int"), 0 if not known. */
int ranks_dtype_bytes(const char *dtype);

#endif
