/*
 * views.h: the views of `opscope report`: each turns the results of an analysis (src/analyze)
 * into one or more tables (table.h), computing nothing itself. The registry below is the one
 * list of views: the CLI reads names, order and help from it. Exact definitions:
 * docs/report.md.
 */
#ifndef OPSCOPE_REPORT_VIEWS_H
#define OPSCOPE_REPORT_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/aggregate.h"
#include "analyze/analysis.h"
#include "analyze/device.h"
#include "analyze/distributed.h"
#include "analyze/flops.h"
#include "analyze/gpu_mem.h"
#include "analyze/gpu_time.h"
#include "analyze/gpu_util.h"
#include "analyze/hardware.h"
#include "analyze/overview.h"
#include "analyze/phases.h"
#include "analyze/ranks.h"
#include "analyze/samples.h"
#include "analyze/steps.h"
#include "analyze/throughput.h"
#include "model/model.h"
#include "report/table.h"

/* Sort keys of the operator and user-defined tables (Paddle's SortedKeys, plus Calls). */
enum report_sort {
	SORT_CPU_TOTAL,
	SORT_CPU_AVG,
	SORT_CPU_MAX,
	SORT_CPU_MIN,
	SORT_GPU_TOTAL,
	SORT_GPU_AVG,
	SORT_GPU_MAX,
	SORT_GPU_MIN,
	SORT_CALLS,
	SORT_FLOPS,  /* the flops view: FLOPs */
	SORT_BYTES,  /* the flops view: bytes moved */
	SORT_TFLOPS, /* the flops view: achieved FLOP/s */
};

/* What the operator table groups its rows by, besides the name. */
enum report_group {
	REPORT_GROUP_NAME,	  /* the name alone */
	REPORT_GROUP_INPUT_SHAPE, /* name and input shapes ("Input Dims"), as torch's
				   * key_averages(group_by_input_shape=True) */
};

struct advice_file;

struct report_opts {
	enum report_sort sort; /* row order of the operator, user-defined and kernel tables */
	bool op_detail;	       /* operator table: inner phases and kernels under each operator */
	bool thread_sep;       /* operator / user-defined / Python / module tables per thread */
	bool views_explicit;   /* the views were asked for by name: one with nothing to show
				* gives an empty table that says so (report_view.empty) */
	enum report_group group_by; /* operator rows by name, or by name and input shapes */
	const char *under; /* samples view: only samples inside ranges of this name, or NULL */
	const struct hardware_peaks *peaks; /* flops view: peaks given by hand (--peak), or
					     * NULL to find each device in the table */
	bool want_flops;		    /* the flops view runs: load the arguments it reads */
	bool html; /* the report is the HTML page: the samples view adds its flame graphs and
		    * the operator view its table by input shape, which the other formats leave
		    * out */
};

/* Results read from partials (`opscope merge`, report/partial.h) that the views show instead
 * of analysing the model, which then holds only the
 * files and the strings these results name. */
struct report_pre {
	struct ranks_file *ranks;  /* one per model file, in the order of model.files */
	uint32_t nranks;	   /* entries of ranks: model.nfiles */
	struct agg kernels;	   /* the kernel aggregation of every file (agg_kernels) */
	int64_t kernels_ns;	   /* ns: the sum of every kernel's duration */
	struct agg nvprof;	   /* nvprof's GPU work and API calls of every file (agg_nvprof) */
	int64_t nvprof_ns[2];	   /* ns: their summed durations: GPU work, API calls */
	struct agg ops;		   /* the operator aggregation of every file, with the inner
				   * phases and kernels under each (agg_host_ranges, detail) */
	struct step_table *steps;  /* one per model file (steps_analyze's rows, dropped and
				   * average), or NULL when a partial did not carry them
				   * (version 1): then the step view shows nothing */
	struct gpu_time *gputime;  /* the GPU time breakdown of every file (its devices in file
				   * order), or NULL when a partial did not carry it (before
				   * version 3): then the gputime view shows nothing */
	struct gpu_util *gpu;	   /* the GPU utilization of every file (its devices in file
				   * order), or NULL when a partial did not carry it (before
				   * version 4): then the gpu view shows nothing */
	struct gpu_launch *launch; /* the launch statistics of every file (rows by name, summed
				    * over the files, ordered), or NULL when a partial did not
				    * carry them (before version 5): then the launch view shows
				    * nothing */
	struct gpu_queue *queue;   /* the queue lengths of every file (its streams in file
				    * order), or NULL when a partial did not carry them (before
				    * version 6): then the queue view shows nothing */
	struct gpu_mem *gpumem;	   /* the GPU memory of every file (its devices in file order),
				    * or NULL when a partial did not carry it (before version 7):
				    * then the gpumem view shows nothing */
	struct agg host[AGG_PYTHON_FUNCTIONS + 1]; /* by enum agg_select: the user-defined,
						    * memory and Python function ranges of
						    * every file by name ([AGG_OPERATORS]
						    * unused: ops) */
	bool has_host;		     /* host and the totals below are carried (version 8 on) */
	struct agg modules;	     /* the module hierarchy of every file (agg_modules) */
	bool has_modules;	     /* modules is carried (version 9 on) */
	struct throughput perf;	     /* the Perf Summary of every file's steps */
	bool has_perf;		     /* perf is carried (version 10 on) */
	struct agg_nvtx nvtx;	     /* the NVTX ranges of every file (agg_nvtx) */
	bool has_nvtx;		     /* nvtx is carried (version 11 on) */
	int64_t total_ns;	     /* ns: analysis.total_ns of every file (the union of their
					 * steps, or the span of their host ranges) */
	int64_t step_kernel_ns;	     /* ns: analysis.step_kernel_ns, summed over the files */
	int64_t step_device_ns;	     /* ns: analysis.step_device_ns, summed over the files */
	bool has_steps;		     /* analysis.has_steps of every file: a file has ProfileSteps */
	struct device_usage *device; /* the device view's rows, or NULL (not carried) */
	struct distributed *distributed; /* the distributed view's numbers, or NULL */
	struct overview *overview;	 /* the overview view's numbers, or NULL */
	struct phases *phases;		 /* the model view's numbers, or NULL */

	/* the advisor's measurement of every file (advice_measure), in file order, or NULL when
	 * a partial did not carry it (before version 11): then the advice view shows nothing */
	struct advice_file *advice;

	/* samples and flops (version 11 on) */
	struct samples_profile *samples; /* the stack samples of every file (samples_combine),
					  * or NULL when a partial did not carry them (before
					  * version 11): then the samples view shows nothing */
	struct flops_result *flops; /* the FLOPs analysis of every file (flops_combine), or NULL
				     * when a partial did not carry it (before version 11) */
};

/* What every view reads, computed once, and the tables they give. */
struct report_ctx {
	const struct report_opts *o;  /* the caller's options */
	const struct report_pre *pre; /* NULL, or the merged partials (opscope merge): the
				       * views read them, not the model */
	struct analysis an;	      /* the shared analysis (the model is an.m): written by
				      * report_ctx_init, read-only while the views run */
	struct rtable **tables;	      /* output, in the order of report_views */
	size_t ntables;		      /* tables in `tables` */
	size_t tables_cap;	      /* tables allocated */
	bool oom;		      /* a table could not be added */
};

struct report_view {
	const char *name;		 /* --views name */
	const char *summary;		 /* one line of help */
	int (*fn)(struct report_ctx *c); /* adds its tables to c; 0 or OPSCOPE_ENOMEM */
	int cost;	   /* rough rank of its time on a large trace: costlier views start first */
	bool always;	   /* run whatever --views asks for (the files and what they lost) */
	const char *title; /* its table's title */
	const char *empty; /* asked for by name with nothing to show: the line that says so
			    * ("UserDefined: no ranges of this kind in the trace") */
};

/* Every view, in the order they print; ends with a NULL name. */
extern const struct report_view report_views[];
/* The argument keys the views read ("num_samples", "domain"; NULL ends the list): set as
 * model.keep_arg_keys before loading a trace for a report. The event tree's launch links
 * come from the model's correlation column, which the importer fills from the "correlation"
 * argument whether it keeps the argument or not. */
extern const char *const report_arg_keys[];
/* The same for a report with options o: "Input Dims" too when grouping by input shapes. */
const char *const *report_arg_keys_for(const struct report_opts *o);
/* Do the views of `views` (a comma list, NULL: every view) read the flops arguments (the flops
 * view, and the advisor's tensor-core rule)? What report_opts.want_flops is set from. */
bool report_views_want_flops(const char *views);
const struct report_view *report_view_find(const char *name);
/* Parse a sort key name (case-insensitive: CPUTotal ... GPUMin, Calls); -1 if unknown. */
int report_sort_from_name(const char *name);

/* Bytes of kernel name s (n bytes) that the Kernel table shows: Paddle's regex rule keeps the
 * template arguments and drops the parameter list; names of another shape stay whole. */
size_t report_kernel_display_len(const char *s, size_t n);

/* Analyse model m (read-only, must outlive c) for the views: analysis_run (analysis.h). 0, or
 * OPSCOPE_ENOMEM. */
int report_ctx_init(struct report_ctx *c, const struct model *m, const struct report_opts *o);
/* Run the views `want` accepts (all when want is NULL) and add their tables to c->tables in
 * the order of report_views. The views run in parallel, up to one per CPU (util/parallel.h):
 * they only read the model and the analysis. 0, or OPSCOPE_ENOMEM. */
int report_run_views(struct report_ctx *c, bool (*want)(const char *view, void *arg), void *arg);
/* A filter for report_run_views: `list` is a comma-separated list of view names (a const
 * char *), NULL for every view. */
bool report_view_listed(const char *view, void *list);
void report_ctx_free(struct report_ctx *c);

#endif
