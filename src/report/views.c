/*
 * views.c: the views of `opscope report` (views.h), after Paddle's profiler_statistic
 * (SPEC-seeds §2), nvprof's summary (§5.2) and the step view (steps.h). Each view calls the
 * analysis its table shows (src/analyze: device.h, overview.h, phases.h, distributed.h,
 * aggregate.h, steps.h, throughput.h) and turns the result into tables: it reads fields,
 * orders rows, labels and fills cells, and computes nothing else. report_run_views runs the
 * views asked for side by side, one per CPU, over one analysis computed before and read-only
 * while they run. docs/report.md states every definition and where we differ from Paddle.
 */
#include "report/views.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/aggregate.h"
#include "analyze/device.h"
#include "analyze/distributed.h"
#include "analyze/overview.h"
#include "analyze/phases.h"
#include "analyze/samples.h"
#include "analyze/steps.h"
#include "analyze/throughput.h"
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

static struct rtable *ctx_table(struct report_ctx *c, const char *view, const char *title)
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
/* Cells */

static double ratio(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0.0;
}

/* A statistics cell: total, average per call, max, min (INT64_MAX, no call: 0), and the
 * ratio of the total to `whole`. */
static void set_stats(struct rcell *x, uint64_t calls, int64_t total, int64_t max, int64_t min,
		      int64_t whole)
{
	x->st.total = total;
	x->st.avg = calls ? total / (int64_t)calls : 0;
	x->st.max = max;
	x->st.min = min == INT64_MAX ? 0 : min;
	x->st.ratio = ratio(total, whole);
}

/* The CPU (gpu false) or GPU statistics of an aggregated item. */
static void set_item_stats(struct rcell *x, const struct agg_item *it, bool gpu, int64_t whole)
{
	if (gpu)
		set_stats(x, it->calls, it->gpu_ns, it->gpu_max_ns, it->gpu_min_ns, whole);
	else
		set_stats(x, it->calls, it->cpu_ns, it->cpu_max_ns, it->cpu_min_ns, whole);
}

static void set_text(struct rrow *r, int col, const struct model *m, uint32_t id)
{
	rcell_text(r, col, model_str(m, id), model_strlen(m, id));
}

static void set_cstr(struct rrow *r, int col, const char *s)
{
	rcell_text(r, col, s, strlen(s));
}

/* A label made with printf's format, owned by the table. */
static void set_label(struct rtable *t, struct rrow *r, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_label(struct rtable *t, struct rrow *r, int col, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
	rcell_text(r, col, rtable_str(t, buf, len), len);
}

/* ---------------------------------------------------------------------------------------- */
/* Files: what was read, and what was lost */

/* One row per loaded file: its events, the events the recorder dropped, the bytes of a torn
 * tail that could not be read, and whether the file ended cleanly. Every report has it, in
 * every format (report_run_views runs it whatever --views asks for), so that no number below
 * is read without knowing what it lacks. */
static int view_files(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "files", "Trace Files");
	if (!t)
		return OPSCOPE_ENOMEM;
	int name = rtable_col(t, "File", "file", RCOL_TEXT, 30);
	int format = rtable_col(t, "Format", "format", RCOL_TEXT, 12);
	int events = rtable_col(t, "Events", "events", RCOL_COUNT, 10);
	int dropped = rtable_col(t, "Dropped", "dropped", RCOL_COUNT, 10);
	int share = rtable_col(t, "Dropped (%)", "dropped_ratio", RCOL_RATIO, 12);
	int torn = rtable_col(t, "Torn tail (bytes)", "torn_tail_bytes", RCOL_COUNT, 18);
	int status = rtable_col(t, "Status", "status", RCOL_TEXT, 10);
	int why = rtable_col(t, "Why incomplete", "incomplete_reason", RCOL_TEXT, 20);
	rtable_col_flags(t, name, RCOL_F_CUT);
	bool loss = false;
	for (uint32_t i = 0; i < m->nfiles; i++) {
		const struct model_file *f = &m->files[i];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			return OPSCOPE_ENOMEM;
		set_text(r, name, m, f->path);
		set_text(r, format, m, f->format);
		r->cells[events].i = (int64_t)f->events;
		r->cells[dropped].i = (int64_t)f->dropped;
		/* of the events there were: those read and those lost */
		r->cells[share].ratio =
			ratio((int64_t)f->dropped, (int64_t)(f->events + f->dropped));
		r->cells[torn].i = (int64_t)f->discarded_bytes;
		set_cstr(r, status, f->complete ? "complete" : "INCOMPLETE");
		if (f->complete)
			r->cells[why].empty = true;
		else if (f->tail_msg)
			set_text(r, why, m, f->tail_msg);
		else
			set_cstr(r, why, "no END record: the recording did not stop cleanly");
		loss |= f->dropped > 0 || f->discarded_bytes > 0 || !f->complete;
	}
	t->note =
		loss ? "Events were lost: the tables below count only what was recorded and read.\n"
		       "Dropped events: the recorder's buffers were full (record --buffer-size MB, or\n"
		       "fewer events). An incomplete file: the program was killed or crashed; it is\n"
		       "read up to its last complete record."
		     : "Every event recorded was read; no file lost any.";
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Device */

static int view_device(struct report_ctx *c)
{
	const struct analysis *a = &c->an;
	struct device_usage d;
	if (device_analyze(a, &d) != 0)
		return OPSCOPE_ENOMEM;
	if (d.ncpu == 0 && d.ngpu == 0) { /* nothing recorded, no GPU: no table */
		device_free(&d);
		return 0;
	}
	struct rtable *t = ctx_table(c, "device", "Device Summary");
	if (!t) {
		device_free(&d);
		return OPSCOPE_ENOMEM;
	}
	int name = rtable_col(t, "Device", "device", RCOL_TEXT, 25);
	int util = rtable_col(t, "Utilization (%)", "utilization", RCOL_RATIO, 20);
	static const char *const cpu_label[] = {
		[DEVICE_CPU_PROCESS] = "CPU(Process)", [DEVICE_CPU_SYSTEM] = "CPU(System)"
	};
	/* one row per process that recorded it, labelled with the pid when there are several */
	for (uint32_t i = 0; i < d.ncpu; i++) {
		const struct device_cpu *cpu = &d.cpu[i];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		if (d.ncpu_of[cpu->kind] == 1)
			set_cstr(r, name, cpu_label[cpu->kind]);
		else
			set_label(t, r, name, "%s (pid %u)", cpu_label[cpu->kind], cpu->pid);
		r->cells[util].ratio = cpu->utilization;
	}
	/* GPU utilization: its busy time over the total time */
	for (uint32_t i = 0; i < d.ngpu; i++) {
		const struct device_gpu *gpu = &d.gpu[i];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		if (a->m->nfiles > 1)
			set_label(t, r, name, "GPU%u (file %u)", gpu->device, gpu->file);
		else
			set_label(t, r, name, "GPU%u", gpu->device);
		r->cells[util].ratio = ratio(gpu->busy_ns, a->total_ns);
	}
	device_free(&d);
	t->note =
		"CPU(Process) Utilization = Current process CPU time over all cpu cores / elapsed "
		"time, so max utilization can be reached 100% * number of cpu cores.\n"
		"CPU(System) Utilization = All processes CPU time over all cpu cores(busy time) / "
		"(busy time + idle time).\n"
		"GPU Utilization = Current process GPU time / elapsed time.";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Overview */

static int view_overview(struct report_ctx *c)
{
	const struct analysis *a = &c->an;
	struct overview ov;
	if (overview_analyze(a, &ov) != 0)
		return OPSCOPE_ENOMEM;
	struct rtable *t = ctx_table(c, "overview", "Overview Summary");
	if (!t)
		return OPSCOPE_ENOMEM;
	int ctype = rtable_col(t, "Event Type", "type", RCOL_TEXT, 25);
	int csec = rtable_col(t, "Where", "section", RCOL_TEXT, 5);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 10);
	int ctime = rtable_col(t, "Time", "time_ns", RCOL_TIME, 15);
	int cratio = rtable_col(t, "Ratio (%)", "ratio", RCOL_RATIO, 10);
	struct orow {
		uint8_t cat;
		bool gpu;
		const struct overview_type *v;
	} rows[2 * OPSCOPE_CAT_COUNT_];
	int nrows = 0;
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++)
		if (ov.host[k].ranges)
			rows[nrows++] = (struct orow){ (uint8_t)k, false, &ov.host[k] };
	/* CPU rows by time, ProfileStep first; then GPU rows in a fixed order */
	for (int x = 0; x < nrows; x++)
		for (int y = x + 1; y < nrows; y++) {
			bool swap = rows[y].cat == OPSCOPE_CAT_PROFILE_STEP ||
				    (rows[x].cat != OPSCOPE_CAT_PROFILE_STEP &&
				     rows[y].v->time_ns > rows[x].v->time_ns);
			if (swap) {
				struct orow tmp = rows[x];
				rows[x] = rows[y];
				rows[y] = tmp;
			}
		}
	static const uint8_t gpu_order[] = { OPSCOPE_CAT_KERNEL, OPSCOPE_CAT_MEMCPY,
					     OPSCOPE_CAT_MEMSET, OPSCOPE_CAT_COMMUNICATION };
	for (size_t k = 0; k < sizeof(gpu_order); k++)
		if (ov.gpu[gpu_order[k]].ranges)
			rows[nrows++] = (struct orow){ gpu_order[k], true, &ov.gpu[gpu_order[k]] };
	for (int k = 0; k < nrows; k++) {
		struct rrow *r = rtable_row(t, rows[k].cat == OPSCOPE_CAT_PROFILE_STEP ? 0 : 1);
		if (!r)
			break;
		set_cstr(r, ctype, opscope_category_name(rows[k].cat));
		set_cstr(r, csec, rows[k].gpu ? "gpu" : "cpu");
		r->cells[ccalls].i = (int64_t)rows[k].v->calls;
		r->cells[ctime].i = rows[k].v->time_ns;
		r->cells[cratio].ratio = ratio(rows[k].v->time_ns, a->total_ns);
	}
	rtable_total(t, "total_ns", a->total_ns);
	rtable_total(t, "gpu_busy_ns", ov.gpu_busy_ns);
	t->note =
		a->has_steps
			? "Overlapping events of one type are merged before they are summed, so a "
			  "type's time is the time\nsomething of that type ran during the steps "
			  "(what ran outside them is not counted).\nTypes may overlap each other: "
			  "ratios do not add up to 100%. Ratio = time / total time\n(the union of "
			  "the ProfileStep ranges). Dataloader, Forward, Backward and Optimization "
			  "count\ntheir outermost ranges."
			: "Overlapping events of one type are merged before they are summed. There "
			  "are no ProfileStep\nranges: ratio = time / the span of the host ranges.";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Model */

static int view_model(struct report_ctx *c)
{
	const struct analysis *a = &c->an;
	struct phases ph;
	if (phases_analyze(a, &ph) != 0)
		return OPSCOPE_ENOMEM;
	if (ph.nphases == 0) { /* only ProfileStep (or nothing): Paddle prints no model table */
		phases_free(&ph);
		return 0;
	}
	struct rtable *t = ctx_table(c, "model", "Model Summary");
	if (!t) {
		phases_free(&ph);
		return OPSCOPE_ENOMEM;
	}
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 15);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	int ccpu = rtable_col(t, "CPU Total / Avg / Max / Min / Ratio(%)", "cpu", RCOL_STATS, 40);
	int cgpu = rtable_col(t, "GPU Total / Avg / Max / Min / Ratio(%)", "gpu", RCOL_STATS, 40);
	int64_t step_gpu = ph.phase[PHASE_PROFILE_STEP].gpu_ns;
	for (int k = 0; k < PHASE_COUNT; k++) {
		const struct phase_time *p = &ph.phase[k];
		if (!p->calls)
			continue;
		struct rrow *r = rtable_row(t, k == PHASE_PROFILE_STEP ? 0 : 1);
		if (!r)
			break;
		set_cstr(r, cname, opscope_category_name(p->category));
		r->cells[ccalls].i = (int64_t)p->calls;
		set_stats(&r->cells[ccpu], p->calls, p->cpu_ns, p->cpu_max_ns, p->cpu_min_ns,
			  a->total_ns);
		set_stats(&r->cells[cgpu], p->calls, p->gpu_ns, p->gpu_max_ns, p->gpu_min_ns,
			  step_gpu);
	}
	struct rrow *r = rtable_row(t, 1);
	if (r) {
		set_cstr(r, cname, "Others");
		r->cells[ccalls].empty = true;
		r->cells[ccpu].st = (struct rstats){
			ph.others_cpu_ns, 0, 0, 0, ratio(ph.others_cpu_ns, a->total_ns), true
		};
		r->cells[cgpu].st = (struct rstats){
			ph.others_gpu_ns, 0, 0, 0, ratio(ph.others_gpu_ns, step_gpu), true
		};
	}
	t->note = "CPU: the time of the steps each phase covers (overlaps counted once, the first "
		  "phase\nlisted wins); the phases and Others add up to the total time. CPU ratio "
		  "= time / total time\n(the ProfileStep ranges). GPU: the time a kernel ran in "
		  "the steps (the Step Summary's Kernel),\neach instant to the phase that "
		  "launched the kernel then (launched from any thread);\nGPU ratio = / the "
		  "ProfileStep GPU time. The rows add up to it.";
	phases_free(&ph);
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Distributed */

static int view_distributed(struct report_ctx *c)
{
	const struct analysis *a = &c->an;
	struct distributed d;
	if (distributed_analyze(a, &d) != 0)
		return OPSCOPE_ENOMEM;
	if (!d.has_communication) /* printed only when there is communication */
		return 0;
	struct rtable *t = ctx_table(c, "distributed", "Distribution Summary");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 25);
	int ctime = rtable_col(t, "Total Time", "time_ns", RCOL_TIME, 25);
	int cratio = rtable_col(t, "Ratio (%)", "ratio", RCOL_RATIO, 25);
	const char *names[] = { "ProfileStep", "Communication", "Computation", "Overlap" };
	int64_t v[] = { a->total_ns, d.communication_ns, d.computation_ns, d.overlap_ns };
	for (int k = 0; k < 4; k++) {
		struct rrow *r = rtable_row(t, k ? 1 : 0);
		if (!r)
			break;
		set_cstr(r, cname, names[k]);
		r->cells[ctime].i = v[k];
		r->cells[cratio].ratio = ratio(v[k], a->total_ns);
	}
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Tables of aggregated items: operator, user-defined, memory manipulation */

static int64_t sort_value(const struct agg_item *it, enum report_sort s)
{
	int64_t n = it->calls ? (int64_t)it->calls : 1;
	switch (s) {
	case SORT_CPU_TOTAL:
		return it->cpu_ns;
	case SORT_CPU_AVG:
		return it->cpu_ns / n;
	case SORT_CPU_MAX:
		return it->cpu_max_ns;
	case SORT_CPU_MIN:
		return -it->cpu_min_ns; /* ascending */
	case SORT_GPU_TOTAL:
		return it->gpu_ns;
	case SORT_GPU_AVG:
		return it->gpu_ns / n;
	case SORT_GPU_MAX:
		return it->gpu_max_ns;
	case SORT_GPU_MIN:
		return -it->gpu_min_ns;
	case SORT_CALLS:
		return (int64_t)it->calls;
	}
	return it->cpu_ns;
}

/* qsort's comparison takes no context: per thread, since views run in parallel */
static _Thread_local const struct agg *sort_agg;
static _Thread_local enum report_sort sort_key;

static int item_cmp(const void *x, const void *y)
{
	const struct agg_item *a = &sort_agg->v[*(const uint32_t *)x];
	const struct agg_item *b = &sort_agg->v[*(const uint32_t *)y];
	int64_t va = sort_value(a, sort_key), vb = sort_value(b, sort_key);
	if (va != vb)
		return va > vb ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Top-level items of a, sorted by the report's key (or kept in first-seen order). */
static uint32_t *sorted_top(const struct agg *a, enum report_sort key, bool sort, uint32_t *n)
{
	*n = 0;
	for (uint32_t i = a->n ? a->first_top : AGG_NONE; i != AGG_NONE; i = a->v[i].next)
		(*n)++;
	uint32_t *v = malloc((*n ? *n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	uint32_t k = 0;
	for (uint32_t i = a->n ? a->first_top : AGG_NONE; i != AGG_NONE; i = a->v[i].next)
		v[k++] = i;
	if (sort && *n > 1) {
		sort_agg = a;
		sort_key = key;
		qsort(v, *n, sizeof(*v), item_cmp);
	}
	return v;
}

/* "Thread: All threads merged", or the thread of track t. */
static void group_title(const struct model *m, uint32_t track, char *buf, size_t n)
{
	if (track == MODEL_NO_TRACK) {
		snprintf(buf, n, "Thread: All threads merged");
		return;
	}
	const struct model_track *tr = &m->tracks[track];
	snprintf(buf, n, "Thread: %llu (pid %u)", (unsigned long long)tr->tid, tr->pid);
}

/* Rows of one item's children (inner phases, their kernels, its kernels). */
static void detail_rows(const struct model *m, struct rtable *t, const struct agg *a, uint32_t op,
			int cols[4])
{
	const struct agg_item *it = &a->v[op];
	/* inner phases first, each with its kernels; then the operator's own kernels */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t ch = it->first_child; ch != AGG_NONE; ch = a->v[ch].next) {
			const struct agg_item *x = &a->v[ch];
			if ((pass == 0) != (x->kind == AGG_KIND_INNER))
				continue;
			struct rrow *r = rtable_row(t, 1);
			if (!r)
				return;
			set_text(r, cols[0], m, x->name);
			r->cells[cols[1]].i = (int64_t)x->calls;
			if (x->kind == AGG_KIND_INNER)
				set_item_stats(&r->cells[cols[2]], x, false, it->cpu_ns);
			else
				r->cells[cols[2]].empty = true;
			set_item_stats(&r->cells[cols[3]], x, true, it->gpu_ns);
			for (uint32_t k = x->first_child; k != AGG_NONE; k = a->v[k].next) {
				const struct agg_item *y = &a->v[k];
				struct rrow *rk = rtable_row(t, 2);
				if (!rk)
					return;
				set_text(rk, cols[0], m, y->name);
				rk->cells[cols[1]].i = (int64_t)y->calls;
				rk->cells[cols[2]].empty = true;
				set_item_stats(&rk->cells[cols[3]], y, true, x->gpu_ns);
			}
		}
	}
}

/* The table of the ranges `sel` selects on thread track `track` (MODEL_NO_TRACK: all). */
static int view_agg_group(struct report_ctx *c, enum agg_select sel, uint32_t track)
{
	const struct analysis *an = &c->an;
	struct agg a;
	bool detail = sel == AGG_OPERATORS && c->o->op_detail;
	/* operators by input shapes too (--group-by input-shape): the recorders' and Kineto's
	 * "Input Dims" argument */
	bool shapes = sel == AGG_OPERATORS && c->o->group_by == REPORT_GROUP_INPUT_SHAPE;
	uint32_t group_key = shapes ? model_find_str(an->m, "Input Dims") : 0;
	if (agg_host_ranges(an, sel, track, detail, group_key, &a) != 0)
		return OPSCOPE_ENOMEM;
	if (a.n == 0) {
		agg_free(&a);
		return 0;
	}
	static const char *const titles[] = { [AGG_OPERATORS] = "Operator Summary",
					      [AGG_USER_DEFINED] = "UserDefined Summary",
					      [AGG_MEMORY] = "Memory Manipulation Summary",
					      [AGG_PYTHON_FUNCTIONS] = "PythonFunction Summary" };
	static const char *const views[] = { [AGG_OPERATORS] = "operator",
					     [AGG_USER_DEFINED] = "userdefined",
					     [AGG_MEMORY] = "memcpy",
					     [AGG_PYTHON_FUNCTIONS] = "python" };
	struct rtable *t = ctx_table(c, views[sel], titles[sel]);
	if (!t) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	if (sel != AGG_MEMORY)
		group_title(an->m, track, t->group, sizeof(t->group));
	int cols[4];
	cols[0] = rtable_col(t, "Name", "name", RCOL_TEXT, sel == AGG_OPERATORS ? 52 : 0);
	int cshape = shapes ? rtable_col(t, "Input Shapes", "input_shapes", RCOL_TEXT, 12) : -1;
	cols[1] = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	cols[2] = rtable_col(t, "CPU Total / Avg / Max / Min / Ratio(%)", "cpu", RCOL_STATS, 40);
	/* a Python function's own time, as pstats' tottime beside its cumtime */
	int cself = sel == AGG_PYTHON_FUNCTIONS
			    ? rtable_col(t, "Self CPU", "self_cpu_ns", RCOL_TIME, 10)
			    : -1;
	cols[3] = rtable_col(t, "GPU Total / Avg / Max / Min / Ratio(%)", "gpu", RCOL_STATS, 40);
	uint32_t n;
	uint32_t *top = sorted_top(&a, c->o->sort, sel != AGG_MEMORY, &n);
	int64_t cpu_all, gpu_all;
	agg_top_sums(&a, &cpu_all, &gpu_all);
	/* operators: ratios of all operators' time; the others: of the total (step) time */
	int64_t cpu_whole = sel == AGG_OPERATORS ? cpu_all : an->total_ns;
	int64_t gpu_whole = sel == AGG_OPERATORS ? gpu_all : an->step_device_ns;
	for (uint32_t k = 0; top && k < n; k++) {
		const struct agg_item *it = &a.v[top[k]];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		set_text(r, cols[0], an->m, it->name);
		if (cshape >= 0)
			set_text(r, cshape, an->m, it->group); /* "" without shapes */
		r->cells[cols[1]].i = (int64_t)it->calls;
		set_item_stats(&r->cells[cols[2]], it, false, cpu_whole);
		if (cself >= 0)
			r->cells[cself].i = it->self_ns;
		set_item_stats(&r->cells[cols[3]], it, true, gpu_whole);
		if (detail)
			detail_rows(an->m, t, &a, top[k], cols);
	}
	if (sel == AGG_PYTHON_FUNCTIONS)
		t->note = "CPU: the calls' durations (a recursive function's nested calls count "
			  "again, as in torch);\nSelf CPU: their durations less those of the "
			  "ranges directly inside them. Ratio = / total time.";
	int rc = !top || t->oom ? OPSCOPE_ENOMEM : 0;
	free(top);
	agg_free(&a);
	return rc;
}

/* One table of all threads merged, or (--thread-sep) one per thread; the memory
 * manipulation table is always merged. */
static int view_agg(struct report_ctx *c, enum agg_select sel)
{
	const struct model *m = c->an.m;
	if (!c->o->thread_sep || sel == AGG_MEMORY)
		return view_agg_group(c, sel, MODEL_NO_TRACK);
	for (uint32_t t = 0; t < m->ntracks; t++) {
		if (m->tracks[t].kind != MODEL_TRACK_THREAD)
			continue;
		int rc = view_agg_group(c, sel, t);
		if (rc)
			return rc;
	}
	return 0;
}

static int view_operator(struct report_ctx *c)
{
	return view_agg(c, AGG_OPERATORS);
}

static int view_userdefined(struct report_ctx *c)
{
	return view_agg(c, AGG_USER_DEFINED);
}

static int view_memcpy(struct report_ctx *c)
{
	return view_agg(c, AGG_MEMORY);
}

static int view_python(struct report_ctx *c)
{
	return view_agg(c, AGG_PYTHON_FUNCTIONS);
}

/* ---------------------------------------------------------------------------------------- */
/* Module hierarchy */

/* The items of the module tree in depth-first order (parents before children, siblings in
 * first-seen order): the next item after i. */
static uint32_t module_next(const struct agg *a, uint32_t i, int *depth)
{
	if (a->v[i].first_child != AGG_NONE) {
		(*depth)++;
		return a->v[i].first_child;
	}
	while (i != AGG_NONE && a->v[i].next == AGG_NONE) {
		i = a->v[i].parent;
		(*depth)--;
	}
	return i == AGG_NONE ? AGG_NONE : a->v[i].next;
}

static int view_module_group(struct report_ctx *c, uint32_t track)
{
	const struct analysis *an = &c->an;
	struct agg a;
	if (agg_modules(an, track, &a) != 0)
		return OPSCOPE_ENOMEM;
	if (a.n == 0) {
		agg_free(&a);
		return 0;
	}
	struct rtable *t = ctx_table(c, "module", "Module Summary");
	if (!t) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	group_title(an->m, track, t->group, sizeof(t->group));
	int cname = rtable_col(t, "Module", "name", RCOL_TEXT, 30);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	int ccpu = rtable_col(t, "CPU Total / Avg / Max / Min / Ratio(%)", "cpu", RCOL_STATS, 40);
	int cself = rtable_col(t, "Self CPU", "self_cpu_ns", RCOL_TIME, 10);
	int cgpu = rtable_col(t, "GPU Total / Avg / Max / Min / Ratio(%)", "gpu", RCOL_STATS, 40);
	int cgself = rtable_col(t, "Self GPU", "self_gpu_ns", RCOL_TIME, 10);
	int depth = 0;
	for (uint32_t i = a.first_top; i != AGG_NONE; i = module_next(&a, i, &depth)) {
		const struct agg_item *it = &a.v[i];
		struct rrow *r = rtable_row(t, depth);
		if (!r)
			break;
		const char *s = model_str(an->m, it->name);
		size_t skip = agg_module_prefix_len(s); /* the class: "nn.Module: " is no news */
		rcell_text(r, cname, s + skip, model_strlen(an->m, it->name) - skip);
		r->cells[ccalls].i = (int64_t)it->calls;
		set_item_stats(&r->cells[ccpu], it, false, an->total_ns);
		r->cells[cself].i = it->self_ns;
		set_item_stats(&r->cells[cgpu], it, true, an->step_device_ns);
		r->cells[cgself].i = it->gpu_self_ns;
	}
	t->note = "Each row is a module path: a module's calls inside the calls of the module "
		  "above it, in the order\nfirst called. CPU: the calls' durations; GPU: the "
		  "device time launched inside them (ratio = /\nthe ProfileStep device time). "
		  "Self: less the modules directly inside. CPU ratio = / total time.";
	int rc = t->oom ? OPSCOPE_ENOMEM : 0;
	agg_free(&a);
	return rc;
}

static int view_module(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	if (!c->o->thread_sep)
		return view_module_group(c, MODEL_NO_TRACK);
	for (uint32_t t = 0; t < m->ntracks; t++) {
		if (m->tracks[t].kind != MODEL_TRACK_THREAD)
			continue;
		int rc = view_module_group(c, t);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* NVTX */

static int nvtx_cmp(const void *x, const void *y)
{
	const struct agg_item *a = &sort_agg->v[*(const uint32_t *)x];
	const struct agg_item *b = &sort_agg->v[*(const uint32_t *)y];
	if (a->cpu_ns != b->cpu_ns)
		return a->cpu_ns > b->cpu_ns ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* nsys stats' nvtx_sum: per domain and range name, sorted by total time. */
static int view_nvtx(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct agg_nvtx nv;
	if (agg_nvtx(m, &nv) != 0)
		return OPSCOPE_ENOMEM;
	uint32_t n = 0, *rows = malloc((nv.a.n ? nv.a.n : 1) * sizeof(*rows));
	if (!rows) {
		agg_nvtx_free(&nv);
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t i = 0; i < nv.a.n; i++)
		if (nv.a.v[i].kind != AGG_NVTX_DOMAIN)
			rows[n++] = i;
	struct rtable *t = n ? ctx_table(c, "nvtx", "NVTX Range Summary") : NULL;
	if (!t) {
		free(rows);
		agg_nvtx_free(&nv);
		return n ? OPSCOPE_ENOMEM : 0;
	}
	sort_agg = &nv.a;
	qsort(rows, n, sizeof(*rows), nvtx_cmp);
	int cratio = rtable_col(t, "Time (%)", "ratio", RCOL_RATIO, 8);
	int ctot = rtable_col(t, "Total Time", "total_ns", RCOL_TIME, 10);
	int ccalls = rtable_col(t, "Instances", "instances", RCOL_COUNT, 9);
	int cavg = rtable_col(t, "Avg", "avg_ns", RCOL_TIME, 8);
	int cmed = rtable_col(t, "Med", "med_ns", RCOL_TIME, 8);
	int cmin = rtable_col(t, "Min", "min_ns", RCOL_TIME, 8);
	int cmax = rtable_col(t, "Max", "max_ns", RCOL_TIME, 8);
	int csd = rtable_col(t, "StdDev", "stddev_ns", RCOL_TIME, 8);
	int cstyle = rtable_col(t, "Style", "style", RCOL_TEXT, 8);
	int crange = rtable_col(t, "Range", "range", RCOL_TEXT, 0);
	int cdom = rtable_col(t, "Domain", "domain", RCOL_TEXT, 0);
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 0);
	rtable_col_flags(t, cdom, RCOL_F_TEXT_HIDDEN);
	rtable_col_flags(t, cname, RCOL_F_TEXT_HIDDEN);
	for (uint32_t k = 0; k < n; k++) {
		const struct agg_item *it = &nv.a.v[rows[k]];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		r->cells[cratio].ratio = ratio(it->cpu_ns, nv.total_ns);
		r->cells[ctot].i = it->cpu_ns;
		r->cells[ccalls].i = (int64_t)it->calls;
		r->cells[cavg].i = it->calls ? it->cpu_ns / (int64_t)it->calls : 0;
		r->cells[cmed].i = nv.median_ns[rows[k]];
		r->cells[cmin].i = it->cpu_min_ns;
		r->cells[cmax].i = it->cpu_max_ns;
		r->cells[csd].i = nv.stddev_ns[rows[k]];
		set_cstr(r, cstyle, it->kind == AGG_NVTX_STARTEND ? "StartEnd" : "PushPop");
		uint32_t dom = nv.a.v[it->parent].name;
		set_text(r, cdom, m, dom);
		set_text(r, cname, m, it->name);
		/* nsys names a range of a domain "domain:name" */
		size_t dl = model_strlen(m, dom), nl = model_strlen(m, it->name);
		char *s = dom ? malloc(dl + 1 + nl) : NULL;
		if (s) {
			memcpy(s, model_str(m, dom), dl);
			s[dl] = ':';
			memcpy(s + dl + 1, model_str(m, it->name), nl);
			rcell_text(r, crange, rtable_str(t, s, dl + 1 + nl), dl + 1 + nl);
			free(s);
		} else if (dom) {
			t->oom = true;
		} else {
			set_text(r, crange, m, it->name);
		}
	}
	t->note = "Per NVTX domain and range name (\"domain:name\"; the default domain: the "
		  "name alone), as\nnsys stats -r nvtx_sum. Time (%) = total / the total of every "
		  "NVTX range. PushPop: push/pop\nranges; StartEnd: start/end ranges. Med: the "
		  "median (an even count: the mean of the middle\ntwo); StdDev: the sample "
		  "standard deviation.";
	int rc = t->oom ? OPSCOPE_ENOMEM : 0;
	free(rows);
	agg_nvtx_free(&nv);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Kernel */

/* Paddle's display name: re.match(r'(.+?)(<.*>)(\(.*\))', name), group 1 + group 2: the
 * template arguments stay, the parameter list goes. As in Python, the pattern is anchored at
 * the start only and '.' matches anything but '\n'. Group 1 is lazy, so only the first '<'
 * after the first character can start group 2 (a later one has less room); group 2 is greedy:
 * it ends at the last ">(" whose '(' has a ')' after it on the same line. Names without that
 * shape stay whole. Linear in the length. */
size_t report_kernel_display_len(const char *s, size_t n)
{
	size_t eol = 0;
	while (eol < n && s[eol] != '\n')
		eol++;
	const char *lt = eol > 1 ? memchr(s + 1, '<', eol - 1) : NULL;
	if (!lt)
		return n;
	size_t l = (size_t)(lt - s), rp = eol; /* rp: the last ')' of the line */
	while (rp > l && s[rp - 1] != ')')
		rp--;
	if (rp == l)
		return n;
	rp--;
	for (size_t g = rp; g-- > l + 1;)
		if (s[g] == '>' && g + 1 < rp && s[g + 1] == '(')
			return g + 1;
	return n;
}

static int view_kernel(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct agg a;
	int64_t all;
	if (agg_kernels(m, &a, &all) != 0)
		return OPSCOPE_ENOMEM;
	if (a.n == 0) {
		agg_free(&a);
		return 0;
	}
	struct rtable *t = ctx_table(c, "kernel", "Kernel Summary");
	if (!t) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	int cdisp = rtable_col(t, "Name", "display_name", RCOL_TEXT, 90);
	rtable_col_flags(t, cdisp, RCOL_F_CUT);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	int cgpu = rtable_col(t, "GPU Total / Avg / Max / Min / Ratio(%)", "", RCOL_STATS, 40);
	int cname = rtable_col(t, "Full name", "name", RCOL_TEXT, 0);
	rtable_col_flags(t, cname, RCOL_F_TEXT_HIDDEN);
	/* GPU keys sort as themselves; every other key by total GPU time */
	enum report_sort key = c->o->sort;
	if (key != SORT_GPU_AVG && key != SORT_GPU_MAX && key != SORT_GPU_MIN)
		key = SORT_GPU_TOTAL;
	uint32_t n;
	uint32_t *top = sorted_top(&a, key, true, &n);
	for (uint32_t k = 0; top && k < n; k++) {
		const struct agg_item *it = &a.v[top[k]];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		const char *s = model_str(m, it->name);
		size_t len = model_strlen(m, it->name);
		rcell_text(r, cdisp, s, report_kernel_display_len(s, len));
		rcell_text(r, cname, s, len);
		r->cells[ccalls].i = (int64_t)it->calls;
		set_item_stats(&r->cells[cgpu], it, true, all);
	}
	int rc = !top || t->oom ? OPSCOPE_ENOMEM : 0;
	free(top);
	agg_free(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* nvprof */

static int view_nvprof(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct agg a;
	int64_t sum[2]; /* GPU activities, API calls */
	if (agg_nvprof(m, &a, &sum[0], &sum[1]) != 0)
		return OPSCOPE_ENOMEM;
	if (a.n == 0) {
		agg_free(&a);
		return 0;
	}
	struct rtable *t = ctx_table(c, "nvprof", "GPU activities and API calls");
	if (!t) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	t->style = RSTYLE_NVPROF;
	int csec = rtable_col(t, "Type", "section", RCOL_TEXT, 0);
	int cratio = rtable_col(t, "Time(%)", "ratio", RCOL_RATIO, 0);
	int ctot = rtable_col(t, "Time", "total_ns", RCOL_TIME, 0);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 0);
	int cavg = rtable_col(t, "Avg", "avg_ns", RCOL_TIME, 0);
	int cmin = rtable_col(t, "Min", "min_ns", RCOL_TIME, 0);
	int cmax = rtable_col(t, "Max", "max_ns", RCOL_TIME, 0);
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 0);
	uint32_t n;
	uint32_t *top = sorted_top(&a, SORT_GPU_TOTAL, true, &n);
	for (int api = 0; api < 2 && top; api++) {
		for (uint32_t k = 0; k < n; k++) {
			const struct agg_item *it = &a.v[top[k]];
			if ((it->kind == AGG_NVPROF_API) != (api == 1))
				continue;
			struct rrow *r = rtable_row(t, 0);
			if (!r)
				break;
			set_cstr(r, csec, api ? "api" : "gpu");
			if (it->kind == AGG_NVPROF_COPY)
				set_cstr(r, cname, agg_nvprof_copy_name(it->name));
			else
				set_text(r, cname, m, it->name);
			r->cells[cratio].ratio = ratio(it->gpu_ns, sum[api]);
			r->cells[ctot].i = it->gpu_ns;
			r->cells[ccalls].i = (int64_t)it->calls;
			r->cells[cavg].i = it->calls ? it->gpu_ns / (int64_t)it->calls : 0;
			r->cells[cmin].i = it->gpu_min_ns;
			r->cells[cmax].i = it->gpu_max_ns;
		}
	}
	int rc = !top || t->oom ? OPSCOPE_ENOMEM : 0;
	free(top);
	agg_free(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Steps */

static int view_step(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	for (uint32_t f = 0; f < m->nfiles; f++) {
		struct step_table st;
		if (steps_analyze(&c->an.tree, f, &st) != 0)
			return OPSCOPE_ENOMEM;
		if (st.nrows == 0) {
			steps_free(&st);
			continue;
		}
		struct rtable *t = ctx_table(c, "step", "Step Summary");
		if (!t) {
			steps_free(&st);
			return OPSCOPE_ENOMEM;
		}
		if (m->nfiles > 1) {
			const char *p = model_str(m, m->files[f].path);
			snprintf(t->group, sizeof(t->group), "File: %s", p);
		}
		int cname = rtable_col(t, "Step", "step", RCOL_TEXT, 16);
		int ctot = rtable_col(t, "Total", "total_ns", RCOL_TIME, 10);
		static const char *const keys[STEP_NROLES] = {
			"kernel_ns",  "memcpy_ns",     "memset_ns",   "communication_ns",
			"runtime_ns", "dataloader_ns", "cpu_exec_ns", "other_ns",
		};
		int crole[STEP_NROLES];
		for (int k = 0; k < STEP_NROLES; k++)
			crole[k] = rtable_col(t, step_role_name(k), keys[k], RCOL_TIME, 8);
		int cgap = rtable_col(t, "Gap", "gap_ns", RCOL_TIME, 8);
		int ccomp = rtable_col(t, "Compute", "compute_ns", RCOL_TIME, 8);
		int ctail = rtable_col(t, "Tail", "tail_ns", RCOL_TIME, 8);
		int cdrain = rtable_col(t, "GPU Drain", "drain_ns", RCOL_TIME, 9);
		int cev = rtable_col(t, "GPU events", "gpu_events", RCOL_COUNT, 10);
		for (uint32_t k = 0; k <= st.nrows; k++) {
			const struct step_row *row = k < st.nrows ? &st.rows[k] : &st.avg;
			struct rrow *r = rtable_row(t, 0);
			if (!r)
				break;
			if (k < st.nrows && row->name)
				set_text(r, cname, m, row->name);
			else
				set_cstr(r, cname, k < st.nrows ? "(whole trace)" : "Average");
			r->summary = k == st.nrows;
			r->cells[ctot].i = k < st.nrows ? row->end_ns - row->start_ns : row->end_ns;
			for (int q = 0; q < STEP_NROLES; q++)
				r->cells[crole[q]].i = row->role_ns[q];
			r->cells[cgap].i = row->gap_ns;
			r->cells[ccomp].i = row->compute_ns;
			r->cells[ctail].i = row->tail_ns;
			r->cells[cdrain].i = row->drain_ns;
			r->cells[cev].i = (int64_t)row->gpu_events;
		}
		if (st.dropped)
			t->note =
				"The last steps launched no GPU work, or clearly less than the step "
				"before them: their GPU work\nwas not all captured, and they are left "
				"out (as the TensorBoard plugin does).";
		steps_free(&st);
		if (t->oom)
			return OPSCOPE_ENOMEM;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Perf Summary */

static int view_perf(struct report_ctx *c)
{
	struct throughput tp;
	if (throughput_analyze(&c->an, &tp) != 0)
		return OPSCOPE_ENOMEM;
	if (tp.steps == 0)
		return 0;
	struct rtable *t = ctx_table(c, "perf", "Perf Summary");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cname = rtable_col(t, "", "name", RCOL_TEXT, 12);
	int cavg = rtable_col(t, "avg", "avg", RCOL_NUMBER, 12);
	int cmax = rtable_col(t, "max", "max", RCOL_NUMBER, 12);
	int cmin = rtable_col(t, "min", "min", RCOL_NUMBER, 12);
	int cunit = rtable_col(t, "unit", "unit", RCOL_TEXT, 10);
	/* Paddle's units: seconds, and samples per second */
	const struct {
		const char *name, *unit;
		const struct throughput_stat *st;
	} rows[] = { { "reader_cost", "s", &tp.reader_cost_s },
		     { "batch_cost", "s", &tp.batch_cost_s },
		     { "ips", "samples/s", &tp.ips } };
	for (int k = 0; k < 3; k++) {
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		set_cstr(r, cname, rows[k].name);
		set_cstr(r, cunit, rows[k].unit);
		r->cells[cavg].num = rows[k].st->avg;
		r->cells[cmax].num = rows[k].st->max;
		r->cells[cmin].num = rows[k].st->min;
	}
	t->note =
		"From the ProfileStep ranges that carry num_samples: batch_cost = the step's "
		"duration,\nreader_cost = its Dataloader time, ips = samples per second (avg = all "
		"samples / all batch time).\nEvery recorded step counts (Paddle skips "
		"the first 10 of a live run).";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Registry */

/* Keep these lists to what the views read: a report of a JSON trace loads no other argument
 * (tests/e2e compares reports with and without it on every corpus trace). "Input Dims" only
 * when the operators are grouped by input shapes: most of a Kineto trace's operators carry
 * one. */
const char *const report_arg_keys[] = { "num_samples", "domain", NULL };
static const char *const report_arg_keys_shapes[] = { "num_samples", "domain", "Input Dims", NULL };

const char *const *report_arg_keys_for(const struct report_opts *o)
{
	return o && o->group_by == REPORT_GROUP_INPUT_SHAPE ? report_arg_keys_shapes
							    : report_arg_keys;
}

/* ---------------------------------------------------------------------------------------- */
/* samples */

/* A function's name cell: its name, "?" when not known. */
static void samples_name(struct rrow *r, int col, const struct model *m, uint32_t name)
{
	if (name)
		rcell_text(r, col, model_str(m, name), model_strlen(m, name));
	else
		rcell_text(r, col, "?", 1);
}

static double share(int64_t part, int64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

/* Like pprof -top: per function, flat and cum weight with their shares of all samples. */
static int samples_top(struct report_ctx *c, const struct samples_profile *p)
{
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "samples", "Samples: Top Functions");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cname = rtable_col(t, "Function", "name", RCOL_TEXT, 48);
	rtable_col_flags(t, cname, RCOL_F_CUT);
	int cflat = rtable_col(t, "Flat", "flat", RCOL_COUNT, 8);
	int cflatr = rtable_col(t, "Flat(%)", "flat_ratio", RCOL_RATIO, 8);
	int csum = rtable_col(t, "Sum(%)", "sum_ratio", RCOL_RATIO, 8);
	int ccum = rtable_col(t, "Cum", "cum", RCOL_COUNT, 8);
	int ccumr = rtable_col(t, "Cum(%)", "cum_ratio", RCOL_RATIO, 8);
	int cfile = rtable_col(t, "File", "file", RCOL_TEXT, 0);
	rtable_col_flags(t, cfile, RCOL_F_TEXT_HIDDEN);
	int64_t sum = 0;
	for (uint32_t i = 0; i < p->nfns; i++) {
		const struct samples_fn *f = &p->fns[i];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		sum += f->flat;
		samples_name(r, cname, m, f->name);
		r->cells[cflat].i = f->flat;
		r->cells[cflatr].ratio = share(f->flat, p->total);
		r->cells[csum].ratio = share(sum, p->total);
		r->cells[ccum].i = f->cum;
		r->cells[ccumr].ratio = share(f->cum, p->total);
		rcell_text(r, cfile, model_str(m, f->file), model_strlen(m, f->file));
	}
	rtable_total(t, "weight", p->total);
	rtable_total(t, "samples", (int64_t)p->samples);
	rtable_total(t, "truncated", (int64_t)p->truncated);
	rtable_total(t, "no_stack", (int64_t)p->no_stack);
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* Rows of function fn's callers (role 0) or callees (role 1), heaviest first: edges are
 * sorted by weight already. */
static void samples_peers(struct rtable *t, const struct model *m, const struct samples_profile *p,
			  uint32_t fn, int role, const int *col)
{
	for (uint64_t e = 0; e < p->nedges; e++) {
		const struct samples_edge *ed = &p->edges[e];
		if ((role ? ed->caller : ed->callee) != fn)
			continue;
		struct rrow *r = rtable_row(t, 1);
		if (!r)
			return;
		samples_name(r, col[0], m, p->fns[role ? ed->callee : ed->caller].name);
		rcell_text(r, col[1], role ? "callee" : "caller", 6);
		r->cells[col[2]].empty = true;
		r->cells[col[3]].i = ed->weight;
		r->cells[col[4]].ratio = share(ed->weight, p->fns[fn].cum);
	}
}

/* Like pprof -peek: each function (in flat order), under it its callers and then its callees,
 * each with the weight of the samples whose stack holds that call and its share of the
 * function's cum. */
static int samples_tree(struct report_ctx *c, const struct samples_profile *p)
{
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "samples", "Samples: Callers and Callees");
	if (!t)
		return OPSCOPE_ENOMEM;
	int col[5];
	col[0] = rtable_col(t, "Function", "name", RCOL_TEXT, 48);
	rtable_col_flags(t, col[0], RCOL_F_CUT);
	col[1] = rtable_col(t, "Role", "role", RCOL_TEXT, 6);
	col[2] = rtable_col(t, "Flat", "flat", RCOL_COUNT, 8);
	col[3] = rtable_col(t, "Cum", "cum", RCOL_COUNT, 8);
	col[4] = rtable_col(t, "Share(%)", "share", RCOL_RATIO, 8);
	for (uint32_t i = 0; i < p->nfns && !t->oom; i++) {
		const struct samples_fn *f = &p->fns[i];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		samples_name(r, col[0], m, f->name);
		rcell_text(r, col[1], "self", 4);
		r->cells[col[2]].i = f->flat;
		r->cells[col[3]].i = f->cum;
		r->cells[col[4]].ratio = share(f->cum, p->total);
		samples_peers(t, m, p, i, 0, col);
		samples_peers(t, m, p, i, 1, col);
	}
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

static int view_samples(struct report_ctx *c)
{
	struct samples_profile p;
	if (samples_profile(c->an.m, c->o->under, &p) != 0)
		return OPSCOPE_ENOMEM;
	int rc = 0;
	if (p.samples) {
		rc = samples_top(c, &p);
		if (!rc)
			rc = samples_tree(c, &p);
	}
	samples_profile_free(&p);
	return rc;
}

/* Each row: name, help, function, cost, always, title, and the line a view asked for by
 * name prints when it has nothing to show. */
const struct report_view report_views[] = {
	{ "files", "each trace file: events, dropped, torn tail, complete (always shown)",
	  view_files, 0, true, "Trace Files", "Trace Files: no file was read" },
	{ "device", "utilization of the CPU (where recorded) and of each GPU", view_device, 0,
	  false, "Device Summary", "Device: no CPU utilization recorded and no GPU in the trace" },
	{ "overview", "time per event type, overlaps merged; GPU busy time", view_overview, 2,
	  false, "Overview Summary", "Overview: no events in the trace" },
	{ "model", "Dataloader / Forward / Backward / Optimization / Others", view_model, 0, false,
	  "Model Summary",
	  "Model: no Dataloader, Forward, Backward or Optimization ranges in the trace" },
	{ "distributed", "communication, computation and their overlap", view_distributed, 1, false,
	  "Distribution Summary", "Distributed: no communication in the trace" },
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
	{ "step", "each step: time per kind of work, data wait, compute, tail", view_step, 3, false,
	  "Step Summary", "Step: no steps in the trace" },
	{ "perf", "reader cost, batch cost, throughput of steps with num_samples", view_perf, 0,
	  false, "Perf Summary", "Perf: no ProfileStep ranges with num_samples in the trace" },
	{ "samples", "CPU stack samples: top functions (flat, cum), callers and callees",
	  view_samples, 1, false, "Samples: Top Functions",
	  "Samples: no stack samples in the trace (with --under: none inside such a range)" },
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
	static const char *const names[] = { "cputotal", "cpuavg", "cpumax", "cpumin", "gputotal",
					     "gpuavg",	 "gpumax", "gpumin", "calls" };
	char low[16];
	size_t n = strlen(name);
	if (n >= sizeof(low))
		return -1;
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	for (int i = 0; i < 9; i++)
		if (strcmp(low, names[i]) == 0)
			return i;
	return -1;
}
