/*
 * views.c: the views of `opscope report` (views.h): their registry, and the runner that runs
 * the views asked for side by side, one per CPU, over one analysis computed before and
 * read-only while they run. The views themselves, after Paddle's profiler_statistic
 * (SPEC-seeds §2), nvprof's summary (§5.2) and the step view (steps.h), are in
 * views_summary.c (files, device, overview, model, distributed, step, perf), views_ranges.c
 * (operators, user-defined, memory, Python functions, modules, NVTX, kernels, nvprof),
 * views_gpu.c (GPU utilization, GPU memory), views_gputime.c (GPU time breakdown, launch
 * statistics, queue length), views_samples.c (stack samples), views_flops.c (FLOPs per
 * operator), views_ranks.c (many ranks) and views_advice.c (the advisor), with the cell
 * helpers of views_cells.c
 * (views_internal.h). Each view calls the analysis its table shows (src/analyze) and turns
 * the result into tables: it reads fields, orders rows, labels and fills cells, and computes
 * nothing else. docs/report.md states every definition and where we differ from Paddle.
 */
#include "report/views.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "report/views_internal.h"
#include "util/parallel.h"
#include "util/strlist.h"

/* ---------------------------------------------------------------------------------------- */
/* Context */

/* Append t to the context's tables; 0, or -1 (out of memory, c->oom set). */
static int ctx_append(struct report_ctx *c, struct rtable *t)
{
	if (c->ntables == c->tables_cap) {
		size_t cap = c->tables_cap ? c->tables_cap * 2 : 16;
		struct rtable **v = realloc(c->tables, cap * sizeof(*v));
		if (!v) {
			c->oom = true;
			return -1;
		}
		c->tables = v;
		c->tables_cap = cap;
	}
	c->tables[c->ntables++] = t;
	return 0;
}

struct rtable *ctx_table(struct report_ctx *c, const char *view, const char *title)
{
	struct rtable *t = rtable_new(view, title);
	if (!t) {
		c->oom = true;
		return NULL;
	}
	if (ctx_append(c, t) != 0) {
		rtable_free(t);
		return NULL;
	}
	return t;
}

int report_ctx_init(struct report_ctx *c, const struct model *m, const struct report_opts *o)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	return analysis_run(&c->an, m);
}

/* One view run by report_run_views: a shallow copy of the context (the analysis is shared,
 * read-only), with its own tables. */
struct view_job {
	const struct report_view *view;
	struct report_ctx ctx;
	int rc;
};

/* One view on one of parallel_for's threads. */
static void run_view(void *arg, uint32_t i)
{
	struct view_job *j = &((struct view_job *)arg)[i];
	j->rc = j->view->fn(&j->ctx);
	if (j->rc == 0 && j->ctx.oom)
		j->rc = OPSCOPE_ENOMEM;
}

int report_run_views(struct report_ctx *c, bool (*want)(const char *view, void *arg), void *arg)
{
	size_t n = 0;
	for (const struct report_view *v = report_views; v->name; v++)
		n += !want || v->always || want(v->name, arg);
	struct view_job *jobs = calloc(n ? n : 1, sizeof(*jobs));
	uint32_t *order = calloc(n ? n : 1, sizeof(*order));
	if (!jobs || !order) {
		free(jobs);
		free(order);
		return OPSCOPE_ENOMEM;
	}
	uint32_t k = 0;
	for (const struct report_view *v = report_views; v->name; v++) {
		if (want && !v->always && !want(v->name, arg))
			continue;
		/* costliest first, so that the light views fill in beside it (the step view
		 * taken last on 2 CPUs was a fifth of the report's time on a 1 GB trace) */
		uint32_t at = k;
		while (at > 0 && jobs[order[at - 1]].view->cost < v->cost) {
			order[at] = order[at - 1];
			at--;
		}
		order[at] = k;
		jobs[k].view = v;
		jobs[k].ctx = *c;
		jobs[k].ctx.tables = NULL;
		jobs[k].ctx.ntables = jobs[k].ctx.tables_cap = 0;
		jobs[k].ctx.oom = false;
		k++;
	}
	/* the views only read the model and the analysis: as many at once as there are CPUs
	 * (the calling thread is one of them) */
	parallel_for(k, order, parallel_cpus(), run_view, jobs);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct view_job *j = &jobs[i];
		if (j->rc && !rc)
			rc = j->rc;
		/* a view asked for by name that has nothing to show says so, in every format */
		if (rc == 0 && j->ctx.ntables == 0 && c->o && c->o->views_explicit && want &&
		    want(j->view->name, arg) && j->view->empty) {
			struct rtable *t = ctx_table(c, j->view->name, j->view->title);
			if (t)
				t->empty = j->view->empty;
			continue;
		}
		for (size_t t = 0; t < j->ctx.ntables; t++) {
			if (rc == 0 && ctx_append(c, j->ctx.tables[t]) == 0)
				continue;
			rtable_free(j->ctx.tables[t]);
		}
		free(j->ctx.tables);
	}
	free(jobs);
	free(order);
	if (rc == 0 && c->oom)
		rc = OPSCOPE_ENOMEM;
	return rc;
}

bool report_view_listed(const char *view, void *list)
{
	return !list || strlist_has(list, view, strlen(view));
}

void report_ctx_free(struct report_ctx *c)
{
	for (size_t i = 0; i < c->ntables; i++)
		rtable_free(c->tables[i]);
	free(c->tables);
	analysis_free(&c->an);
	memset(c, 0, sizeof(*c));
}

/* ---------------------------------------------------------------------------------------- */
/* Registry */

/* Keep these lists to what the views read: a report of a JSON trace loads no other argument
 * (tests/e2e compares reports with and without it on every corpus trace). "Input Dims" only
 * when the operators are grouped by input shapes: most of a Kineto trace's operators carry
 * one. The GPU views read kernels' grids and blocks per SM, and the [memory] events' device,
 * size, address and allocator total; the flops view shapes, dtypes, scalar arguments and the
 * forward-backward link (the advice view too, for tensor cores), and the advice view the
 * copies' bytes. */
#define GPU_ARG_KEYS                                                                             \
	"grid", "blocks per SM", "Device Type", "Device Id", "Bytes", "Addr", "Total Allocated", \
		"bytes", RANKS_ARG_KEYS
/* The ranks view: the NCCL kernels' message sizes, dtype, group size and collective */
#define RANKS_ARG_KEYS "In msg nelems", "Out msg nelems", "dtype", "Group size", "Collective name"
const char *const report_arg_keys[] = { "num_samples", "domain", GPU_ARG_KEYS, NULL };
static const char *const report_arg_keys_shapes[] = { "num_samples", "domain", GPU_ARG_KEYS,
						      "Input Dims", NULL };
static const char *const report_arg_keys_flops[] = { "num_samples",	"domain",
						     GPU_ARG_KEYS,	"Input Dims",
						     "Input type",	"Concrete Inputs",
						     "Sequence number", NULL };

const char *const *report_arg_keys_for(const struct report_opts *o)
{
	if (o && o->want_flops)
		return report_arg_keys_flops;
	/* the HTML page's operator table by input shapes needs them too */
	return o && (o->group_by == REPORT_GROUP_INPUT_SHAPE || o->html) ? report_arg_keys_shapes
									 : report_arg_keys;
}

bool report_views_want_flops(const char *views)
{
	return !views || strlist_has(views, "flops", 5) || strlist_has(views, "advice", 6);
}

/* Each row: name, help, function, cost, always, title, and the line a view asked for by name
 * prints when it has nothing to show. `opscope merge` makes every one of them from partials
 * (docs/merge.md). */
const struct report_view report_views[] = {
	{ "files", "each trace file: events, dropped, torn tail, complete (always shown)",
	  view_files, 0, true, "Trace Files", "Trace Files: no file was read" },
	{ "advice", "ranked findings: what to change, with evidence (docs/advice.md)", view_advice,
	  3, false, "Advice", "Advice: no rule fired on this trace" },
	{ "device", "utilization of the CPU (where recorded) and of each GPU", view_device, 0,
	  false, "Device Summary", "Device: no CPU utilization recorded and no GPU in the trace" },
	{ "overview", "time per event type, overlaps merged; GPU busy time", view_overview, 2,
	  false, "Overview Summary", "Overview: no events in the trace" },
	{ "model", "Dataloader / Forward / Backward / Optimization / Others", view_model, 0, false,
	  "Model Summary",
	  "Model: no Dataloader, Forward, Backward or Optimization ranges in the trace" },
	{ "distributed", "communication, computation and their overlap", view_distributed, 1, false,
	  "Distribution Summary", "Distributed: no communication in the trace" },
	{ "ranks", "many ranks: clocks aligned, steps side by side, stragglers, collectives",
	  view_ranks, 2, false, "Ranks",
	  "Ranks: fewer than two ranks in the loaded files (one trace per rank: report DIR)" },
	{ "operator", "operators, with their inner phases and kernels", view_operator, 1, false,
	  "Operator Summary", "Operator: no ranges of this kind in the trace" },
	{ "kernel", "every GPU kernel by name", view_kernel, 0, false, "Kernel Summary",
	  "Kernel: no GPU kernels in the trace" },
	{ "memcpy", "memory manipulation ranges (memcpy, memset)", view_memcpy, 0, false,
	  "Memory Manipulation Summary",
	  "Memory Manipulation: no ranges of this kind in the trace" },
	{ "userdefined", "user-defined ranges (C API, RecordEvent, record_function)",
	  view_userdefined, 0, false, "UserDefined Summary",
	  "UserDefined: no ranges of this kind in the trace" },
	{ "nvtx", "NVTX ranges by domain and name (nsys stats' nvtx_sum)", view_nvtx, 0, false,
	  "NVTX Range Summary", "NVTX: no ranges of this kind in the trace" },
	{ "python", "Python functions by name (total and self time)", view_python, 0, false,
	  "PythonFunction Summary", "PythonFunction: no ranges of this kind in the trace" },
	{ "module", "the nn.Module hierarchy: calls, total and self time", view_module, 1, false,
	  "Module Summary", "Module: no nn.Module calls in the trace" },
	{ "nvprof", "GPU activities and API calls, as nvprof prints them", view_nvprof, 0, false,
	  "GPU activities and API calls", "nvprof: no GPU activities or API calls in the trace" },
	{ "step", "each step: time per kind of work, data wait, compute, tail, GPU drain",
	  view_step, 3, false, "Step Summary", "Step: no steps in the trace" },
	{ "perf", "reader cost, batch cost, throughput of steps with num_samples", view_perf, 0,
	  false, "Perf Summary", "Perf: no ProfileStep ranges with num_samples in the trace" },
	{ "gpu", "GPU busy share and SM efficiency per step, window and over time", view_gpu, 1,
	  false, "GPU Utilization", "GPU Utilization: no GPU in the trace" },
	{ "gputime", "GPU time per step: compute, communication, copies, idle by cause",
	  view_gputime, 1, false, "GPU Time Breakdown", "GPU Time Breakdown: no GPU in the trace" },
	{ "launch", "per kernel: launch call time, launch-to-start delay, short kernels",
	  view_launch, 1, false, "Kernel Launch Statistics",
	  "Kernel Launch Statistics: no device work launched by a runtime call in the trace" },
	{ "queue", "per stream: kernels launched and not started, and over time", view_queue, 1,
	  false, "Queue Length",
	  "Queue Length: no device work launched by a runtime call in the trace" },
	{ "gpumem", "GPU memory: allocated and peak over time, largest allocations, leaks",
	  view_gpumem, 0, false, "GPU Memory",
	  "GPU Memory: no GPU allocation records in the trace" },
	{ "samples", "CPU stack samples: top functions (flat, cum), callers and callees",
	  view_samples, 1, false, "Samples: Top Functions",
	  "Samples: no stack samples in the trace (with --under: none inside such a range)" },
	{ "flops", "FLOPs, bytes, achieved throughput, % of peak and tensor cores per operator",
	  view_flops, 2, false, "FLOPs per Operator",
	  "FLOPs: no operators with input shapes in the trace (record with record_shapes)" },
	{ NULL, NULL, NULL, 0, false, NULL, NULL },
};

const struct report_view *report_view_find(const char *name)
{
	for (const struct report_view *v = report_views; v->name; v++)
		if (strcmp(v->name, name) == 0)
			return v;
	return NULL;
}

int report_sort_from_name(const char *name)
{
	static const char *const names[] = { "cputotal", "cpuavg", "cpumax", "cpumin",
					     "gputotal", "gpuavg", "gpumax", "gpumin",
					     "calls",	 "flops",  "bytes",  "tflops" };
	char low[16];
	size_t n = strlen(name);
	if (n >= sizeof(low))
		return -1;
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (strcmp(low, names[i]) == 0)
			return i;
	return -1;
}
