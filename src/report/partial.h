/*
 * partial.h: mergeable partial summaries (`opscope report --format partial`, `opscope merge`;
 * the format and its version rule: docs/merge.md). A partial holds, per trace file, what
 * every view of the report reads of that file: its row of the Trace Files table, its share of
 * the rank analysis (ranks_file), its aggregations by name, its step rows, and each analysis's
 * per-file part. Most of it is bounded by the file's distinct names, steps and collective
 * kernels; the views made of unions of intervals (overview, distributed) and of medians (nvtx)
 * carry merged interval lists and durations, which grow with the events (docs/merge.md).
 *
 * Merging reads partials into a small model (files and strings only) and a report_pre; the
 * views then render them with the same code as `opscope report`, so that the merge of the
 * partials of some files prints what a report of those files prints.
 */
#ifndef OPSCOPE_REPORT_PARTIAL_H
#define OPSCOPE_REPORT_PARTIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "model/model.h"
#include "report/views.h"

struct partial_flops;

#define PARTIAL_MAGIC "opscope-partial"
/* The newest version this build writes and reads: 2 added the step view's sv and sr records,
 * 3 the gputime view's gv, gt and gs records, 4 the gpu view's uv, ut, us and ub records, 5
 * the launch view's lv and lr records, 6 the queue view's qv, qt and qb records, 7 the gpumem
 * view's mv, md, ml and mb records, 8 the totals (tv, ti) and the user-defined, memory and
 * Python function ranges by name (h), 9 the module hierarchy (mm, mo), 10 the steps'
 * throughput (pv, pt), 11 the records of samples, flops, device, overview, distributed,
 * model, nvtx and advice: nxv nxr nxd (nvtx), dv dvc dvg (device), di dih dig dic
 * (distributed), ov ovb ovt ovi ovu (overview), ph phc (model), ad adw adf adg ads adp ade adk
 * (advice), sa saf sae (samples), fl flc flp flr flg (flops). */
#define PARTIAL_VERSION 11

/* Write the partial of a's model (every file of it) to out; `inputs` are the paths the user
 * gave (the report's JSON "inputs"). 0, OPSCOPE_ENOMEM, or -1 on a write error. */
int partial_write(FILE *out, const struct analysis *a, const char *const *inputs, size_t ninputs);

/* A run of NVTX ranges of one file (nxd records): `count` ranges of `dur` ns of a domain,
 * name and style. */
struct partial_nvtx_run {
	uint32_t domain; /* string id of the domain (in partial_set.m), 0 for the default */
	uint32_t name;	 /* string id of the range name */
	int64_t dur;	 /* ns: the duration of each */
	uint64_t count;	 /* ranges */
	uint8_t style;	 /* AGG_NVTX_PUSHPOP or AGG_NVTX_STARTEND */
};

/* One trace file read from a partial, before the merge orders the files. */
struct partial_file {
	uint32_t path;		     /* string id (in partial_set.m) of the trace's path */
	uint32_t format;	     /* string id of its format ("chrome-json", "opscope") */
	uint64_t events;	     /* events read */
	uint64_t dropped;	     /* events lost by the recorder */
	uint64_t discarded_bytes;    /* bytes of torn tail not read */
	bool complete;		     /* the file ended cleanly */
	uint32_t tail_msg;	     /* string id of why reading stopped early, 0 if it did not */
	struct ranks_file ranks;     /* its share of the rank analysis (ranks.file set by the
				   * merge) */
	struct agg_item *kern;	     /* its kernel aggregation's items, first-seen order (name:
				   * a string id of m) */
	uint32_t nkern;		     /* items in kern */
	int64_t kern_ns;	     /* ns: the sum of its kernels' durations */
	int64_t kern_sum;	     /* ns: the sum of kern[].gpu_ns read so far (<= kern_ns) */
	struct agg_item *ops;	     /* its operator aggregation's items (agg_host_ranges, detail),
				   * index order; parent: an index in ops, or AGG_NONE */
	uint32_t nops;		     /* items in ops */
	struct agg_item *nv;	     /* its nvprof aggregation's items (agg_nvprof), first-seen
				   * order (name: a string id of m, or a copy key) */
	uint32_t nnv;		     /* items in nv */
	int64_t nv_sum[2];	     /* ns: the summed durations of its GPU work and API calls */
	int64_t nv_seen[2];	     /* ns: the same of nv[] read so far (<= nv_sum) */
	struct step_table steps;     /* its step view's rows and steps dropped (sv, sr records;
				   * the average made by partial_finish) */
	bool has_steps;		     /* an sv record was read (version 2 on) */
	int64_t steps_dur;	     /* ns: the summed durations of steps.rows (<= 2^62) */
	int64_t steps_events;	     /* the summed GPU events of steps.rows (<= 2^62) */
	struct gpu_time gputime;     /* its GPU time breakdown's devices (gt, gs records) */
	bool has_gputime;	     /* a gv record was read (version 3 on) */
	struct gpu_util gpu;	     /* its GPU utilization's devices (ut, us, ub records) */
	bool has_gpu;		     /* a uv record was read (version 4 on) */
	struct gpu_launch launch;    /* its launch statistics' rows by name (lr records) */
	bool has_launch;	     /* an lv record was read (version 5 on) */
	struct gpu_queue queue;	     /* its queue lengths' streams (qt, qb records) */
	bool has_queue;		     /* a qv record was read (version 6 on) */
	struct gpu_mem gpumem;	     /* its GPU memory's devices (md, ml, mb records) */
	bool has_gpumem;	     /* an mv record was read (version 7 on) */
	bool has_total;		     /* a tv record was read (version 8 on) */
	struct analysis_total total; /* its total's parts (tv, ti records) */
	struct agg_item *host;	     /* its user-defined, memory and Python function ranges by
				   * name (h records; kind: the enum agg_select) */
	uint32_t nhost;		     /* items in host */
	bool has_modules;	     /* an mm record was read (version 9 on) */
	struct agg_item *mods;	     /* its module hierarchy's items (mo records), index order;
				   * parent: an index in mods, or AGG_NONE */
	uint32_t nmods;		     /* items in mods */
	bool has_perf;		     /* a pv record was read (version 10 on) */
	int64_t (*perf)[3];	     /* its steps with num_samples (pt records): Dataloader ns,
				   * duration ns, samples; in the order of the file's threads */
	uint32_t nperf;		     /* entries of perf */
	bool has_nvtx;		     /* an nxv record was read (version 11 on) */
	struct partial_nvtx_run *nvtx; /* its NVTX ranges (nxd records), in record order */
	uint32_t nnvtx;		       /* entries of nvtx */
	uint64_t nvtx_ranges;	       /* the ranges of nvtx, summed (<= 2^32) */
	int64_t nvtx_ns;	       /* ns: their durations, summed (<= 2^62) */
	struct partial_unions *unions; /* its device, distributed, overview and model records
				     * (partial_unions.c), NULL before version 11 */
	struct partial_advice *advice; /* its advisor measurement (ad* records, version 11
					* on; partial_advice.c), NULL without */
	uint32_t source; /* index in partial_set.sources of the partial it came from */
	uint64_t offset; /* byte offset of its `file` record in that partial */

	/* samples and flops (version 11 on) */
	bool has_samples;		/* an sa record was read */
	struct samples_profile samples; /* its stack samples' profile (sa, saf, sae records) */
	struct partial_flops *flops;	/* its share of the FLOPs analysis (fl* records; in
					 * partial_flops.c), NULL when not carried */
};

struct partial_advice;

/* Partials being merged. */
struct partial_set {
	struct model *m;	    /* the strings and (after partial_finish) the files */
	struct partial_file *files; /* every file of every partial read */
	uint32_t nfiles;	    /* entries of files */
	uint32_t files_cap;	    /* entries allocated */
	char **sources;		    /* the partials' paths, in the order read */
	uint32_t nsources;	    /* entries of sources */
	char **inputs;		    /* the `input` paths of every partial (the JSON inputs;
				      * sorted by partial_finish) */
	size_t ninputs;		    /* entries of inputs */
	size_t inputs_cap;	    /* entries allocated */
	struct report_pre pre;	    /* after partial_finish: what the mergeable views read */
	int64_t ops_cpu;	    /* ns: the merged top-level operators' CPU time, summed */
	int64_t ops_gpu;	    /* ns: the same of their GPU time */
};

/* Start a set; 0 or OPSCOPE_ENOMEM. */
int partial_set_init(struct partial_set *ps);
/* Read the partial at `path` into ps. 0; else one line in err ("PATH: offset N: what"),
 * and the set must only be freed. */
int partial_read(struct partial_set *ps, const char *path, char *err, size_t errsize);
/* The same from a stream (`path` names it in messages; the stream is not closed). */
int partial_read_stream(struct partial_set *ps, FILE *in, const char *path, char *err,
			size_t errsize);
/* Order the files by path (as `opscope report DIR` loads a directory), refuse a trace read
 * twice, and build ps->m's files and ps->pre. 0; else one line in err. */
int partial_finish(struct partial_set *ps, char *err, size_t errsize);
/* Can the view be made from the finished set: is it carried by every partial?
 * The step view is not by partials of version 1, gputime not by those before version 3, gpu
 * not before 4, launch not before 5, queue not before 6, gpumem not before 7, userdefined,
 * memcpy and python not before 8, module not before 9, perf not before 10; nvtx, device,
 * distributed, model, advice, samples,
 * flops not before 11, and overview neither, nor when some files have
 * ProfileStep ranges and others none. */
bool partial_carries(const struct partial_set *ps, const char *view);
/* Why a view is not carried (partial_carries false): the rest of the line that says so. */
const char *partial_why_not(const struct partial_set *ps, const char *view);
/* Set the totals of an (the analysis of ps->m, whose files have no events) to the merged
 * partials': total_ns and the step times the views' ratios are of. */
void partial_analysis(const struct partial_set *ps, struct analysis *an);
void partial_set_free(struct partial_set *ps);

#endif
