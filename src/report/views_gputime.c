/*
 * views_gputime.c: the views of GPU time, explained (gpu_time.h), for views.c's registry:
 * GPU Time Breakdown (per device, each step and the window: busy parts and idle by cause),
 * Kernel Launch Statistics (per device op name) and Queue Length (per stream, then over
 * buckets of the window). They render the analyses' fields and compute nothing else;
 * docs/report.md defines every number. The queue's time series is left out of the text
 * report unless a view was asked for by name (CSV and JSON always have it), so that the
 * default report stays readable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/gpu_time.h"
#include "report/views_internal.h"

/* "GPU<id>", or "GPU<id> (file <n>)" when several files are loaded (as views_gpu.c). */
static void dev_label(struct rtable *t, struct rrow *r, int col, const struct model *m,
		      uint32_t file, uint32_t device)
{
	if (m->nfiles > 1)
		set_label(t, r, col, "GPU%u (file %u)", device, file);
	else
		set_label(t, r, col, "GPU%u", device);
}

/* ---------------------------------------------------------------------------------------- */
/* GPU Time Breakdown */

static const char *const part_keys[GPU_TIME_NPARTS] = {
	"compute",   "communication", "memcpy",	   "memset",
	"idle_data", "idle_sync",     "idle_host", "idle_other",
};

static const char *const part_titles[GPU_TIME_NPARTS] = {
	"Compute (%)",	 "Comm (%)",	  "Memcpy (%)",	   "Memset (%)",
	"Idle data (%)", "Idle sync (%)", "Idle host (%)", "Idle other (%)",
};

/* Columns of the breakdown table. */
struct bd_cols {
	int dev, step, start, dur;     /* column indexes */
	int share[GPU_TIME_NPARTS];    /* the parts as shares of the duration */
	int ns[GPU_TIME_NPARTS];       /* the same in ns (JSON, CSV) */
	int gaps[GPU_TIME_NPARTS - 4]; /* idle gaps per idle part (JSON, CSV) */
};

static void bd_cells(struct rrow *r, const struct bd_cols *c, const struct gpu_time_device *g,
		     const struct gpu_time_span *sp)
{
	int64_t len = sp->e - sp->s;
	r->cells[c->start].i = sp->s - g->window.s;
	r->cells[c->dur].i = len;
	for (int p = 0; p < GPU_TIME_NPARTS; p++) {
		r->cells[c->share[p]].ratio = ratio(sp->part[p], len);
		r->cells[c->ns[p]].i = sp->part[p];
	}
	for (int p = 4; p < GPU_TIME_NPARTS; p++)
		r->cells[c->gaps[p - 4]].i = (int64_t)sp->gaps[p];
}

int view_gputime(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct gpu_time u;
	if (c->pre && !c->pre->gputime)
		return 0; /* merged partials that do not carry it */
	if (c->pre)	  /* merged: the files' devices as their partials gave them (not freed) */
		u = *c->pre->gputime;
	else if (gpu_time_analyze(&c->an, &u) != 0)
		return OPSCOPE_ENOMEM;
	if (u.ndev == 0) {
		if (!c->pre)
			gpu_time_free(&u);
		return 0;
	}
	struct rtable *t = ctx_table(c, "gputime", "GPU Time Breakdown");
	if (!t) {
		if (!c->pre)
			gpu_time_free(&u);
		return OPSCOPE_ENOMEM;
	}
	struct bd_cols cs;
	cs.dev = rtable_col(t, "Device", "device", RCOL_TEXT, 8);
	cs.step = rtable_col(t, "Step", "step", RCOL_TEXT, 16);
	cs.start = rtable_col(t, "Start", "start_ns", RCOL_TIME, 10);
	cs.dur = rtable_col(t, "Duration", "duration_ns", RCOL_TIME, 10);
	rtable_col_flags(t, cs.start, RCOL_F_TEXT_HIDDEN); /* the step's name says where */
	for (int p = 0; p < GPU_TIME_NPARTS; p++)
		cs.share[p] = rtable_col(t, part_titles[p], part_keys[p], RCOL_RATIO, 8);
	for (int p = 0; p < GPU_TIME_NPARTS; p++) {
		char key[32];
		snprintf(key, sizeof(key), "%s_ns", part_keys[p]);
		cs.ns[p] = rtable_col(t, gpu_time_part_name((enum gpu_time_part)p),
				      rtable_str(t, key, strlen(key)), RCOL_TIME, 10);
		rtable_col_flags(t, cs.ns[p], RCOL_F_TEXT_HIDDEN);
	}
	for (int p = 4; p < GPU_TIME_NPARTS; p++) {
		char key[32];
		snprintf(key, sizeof(key), "%s_gaps", part_keys[p]);
		cs.gaps[p - 4] =
			rtable_col(t, "Gaps", rtable_str(t, key, strlen(key)), RCOL_COUNT, 6);
		rtable_col_flags(t, cs.gaps[p - 4], RCOL_F_TEXT_HIDDEN);
	}
	for (uint32_t d = 0; d < u.ndev && !t->oom; d++) {
		const struct gpu_time_device *g = &u.dev[d];
		/* the steps, unless the one step is the whole trace (no ProfileStep range) */
		bool list = g->nsteps > 1 || (g->nsteps == 1 && g->steps[0].name);
		for (uint32_t k = 0; list && k < g->nsteps; k++) {
			struct rrow *r = rtable_row(t, 0);
			if (!r)
				break;
			dev_label(t, r, cs.dev, m, g->file, g->device);
			if (g->steps[k].name)
				set_text(r, cs.step, m, g->steps[k].name);
			else
				set_cstr(r, cs.step, "(step)");
			bd_cells(r, &cs, g, &g->steps[k]);
		}
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		dev_label(t, r, cs.dev, m, g->file, g->device);
		set_cstr(r, cs.step, g->nsteps ? "Window" : "Window (device work)");
		r->summary = true;
		bd_cells(r, &cs, g, &g->window);
	}
	t->note = "Per device, each step of the Step table, then the window (as GPU Utilization). "
		  "Each instant goes to the\nfirst of: Compute (kernels that are not "
		  "communication), Comm (NCCL/RCCL/HCCL kernels), Memcpy,\nMemset; else it is "
		  "idle, and goes to the first cause that holds at that instant: data (in a\n"
		  "Dataloader range or the step's data wait), sync (in a synchronizing call or a "
		  "cuda_sync event),\nother (work was queued and had not started), host (nothing "
		  "was queued). The parts sum to the\nduration.";
	if (!c->pre)
		gpu_time_free(&u);
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Kernel Launch Statistics */

/* Columns of the launch table. */
struct ln_cols {
	int name, count, cpu_avg, cpu_max, delay_avg, delay_max, shrt, shorter, cpu_out, delay_out,
		cpu_sum, delay_sum, gpu_sum; /* column indexes */
};

static void ln_cells(struct rrow *r, const struct ln_cols *c, const struct gpu_launch_row *x)
{
	int64_t n = (int64_t)x->count;
	r->cells[c->count].i = n;
	r->cells[c->cpu_avg].i = n ? x->cpu_sum_ns / n : 0;
	r->cells[c->cpu_max].i = x->cpu_max_ns;
	r->cells[c->delay_avg].i = n ? x->delay_sum_ns / n : 0;
	r->cells[c->delay_max].i = x->delay_max_ns;
	r->cells[c->shrt].i = (int64_t)x->short_ops;
	r->cells[c->shorter].i = (int64_t)x->shorter;
	r->cells[c->cpu_out].i = (int64_t)x->cpu_outliers;
	r->cells[c->delay_out].i = (int64_t)x->delay_outliers;
	r->cells[c->cpu_sum].i = x->cpu_sum_ns;
	r->cells[c->delay_sum].i = x->delay_sum_ns;
	r->cells[c->gpu_sum].i = x->gpu_sum_ns;
}

int view_launch(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct gpu_launch l;
	if (c->pre && !c->pre->launch)
		return 0; /* merged partials that do not carry it */
	if (c->pre)	  /* merged: the rows summed over the files' partials (not freed) */
		l = *c->pre->launch;
	else if (gpu_launch_analyze(&c->an, &l) != 0)
		return OPSCOPE_ENOMEM;
	if (l.nrows == 0) {
		if (!c->pre)
			gpu_launch_free(&l);
		return 0;
	}
	struct rtable *t = ctx_table(c, "launch", "Kernel Launch Statistics");
	if (!t) {
		if (!c->pre)
			gpu_launch_free(&l);
		return OPSCOPE_ENOMEM;
	}
	struct ln_cols cs;
	cs.name = rtable_col(t, "Name", "name", RCOL_TEXT, 40);
	rtable_col_flags(t, cs.name, RCOL_F_CUT);
	cs.count = rtable_col(t, "Count", "count", RCOL_COUNT, 7);
	cs.cpu_avg = rtable_col(t, "Launch avg", "launch_avg_ns", RCOL_TIME, 10);
	cs.cpu_max = rtable_col(t, "Launch max", "launch_max_ns", RCOL_TIME, 10);
	cs.delay_avg = rtable_col(t, "Delay avg", "delay_avg_ns", RCOL_TIME, 10);
	cs.delay_max = rtable_col(t, "Delay max", "delay_max_ns", RCOL_TIME, 10);
	cs.shrt = rtable_col(t, "< 10us", "short", RCOL_COUNT, 7);
	cs.shorter = rtable_col(t, "< launch", "shorter_than_launch", RCOL_COUNT, 8);
	cs.cpu_out = rtable_col(t, "Launch > 50us", "launch_outliers", RCOL_COUNT, 13);
	cs.delay_out = rtable_col(t, "Delay > 100us", "delay_outliers", RCOL_COUNT, 13);
	cs.cpu_sum = rtable_col(t, "Launch total", "launch_total_ns", RCOL_TIME, 10);
	cs.delay_sum = rtable_col(t, "Delay total", "delay_total_ns", RCOL_TIME, 10);
	cs.gpu_sum = rtable_col(t, "Op total", "op_total_ns", RCOL_TIME, 10);
	rtable_col_flags(t, cs.cpu_sum, RCOL_F_TEXT_HIDDEN);
	rtable_col_flags(t, cs.delay_sum, RCOL_F_TEXT_HIDDEN);
	rtable_col_flags(t, cs.gpu_sum, RCOL_F_TEXT_HIDDEN);
	for (uint32_t i = 0; i < l.nrows && !t->oom; i++) {
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		set_text(r, cs.name, m, l.rows[i].name);
		ln_cells(r, &cs, &l.rows[i]);
	}
	struct rrow *r = rtable_row(t, 0);
	if (r) {
		set_cstr(r, cs.name, "All");
		r->summary = true;
		ln_cells(r, &cs, &l.total);
	}
	t->note = "Device ops (kernels, copies, memsets) launched by a runtime call, by name, most "
		  "first. Launch = the call's\nduration; Delay = op start - call end, 0 if "
		  "negative (HTA's launch delay). < 10us: ops shorter than\n10 us; < launch: "
		  "HTA's short kernels (call <= 50 us and op shorter than the call); outliers: "
		  "HTA's\ncutoffs, call > 50 us, delay > 100 us. Ops without a launching call "
		  "are not counted.";
	if (!c->pre)
		gpu_launch_free(&l);
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Queue Length */

/* Columns shared by the two queue tables. */
struct q_cols {
	int dev, stream, start, dur, max, mean, full, integral; /* column indexes */
};

static struct q_cols q_table_cols(struct rtable *t, bool series)
{
	struct q_cols c;
	c.dev = rtable_col(t, "Device", "device", RCOL_TEXT, 8);
	c.stream = rtable_col(t, "Stream", "stream", RCOL_TEXT, 8);
	c.start = rtable_col(t, "Start", "start_ns", RCOL_TIME, 10);
	c.dur = rtable_col(t, "Duration", "duration_ns", RCOL_TIME, 10);
	c.max = rtable_col(t, "Max queued", "max", RCOL_COUNT, 10);
	c.mean = rtable_col(t, "Mean queued", "mean", RCOL_NUMBER, 11);
	c.full = rtable_col(t, "Full (>= 1024)", "full_ns", RCOL_TIME, 14);
	c.integral = rtable_col(t, "Queued x time", "queued_ns", RCOL_COUNT, 12);
	rtable_col_flags(t, c.integral, RCOL_F_TEXT_HIDDEN);
	if (!series)
		rtable_col_flags(t, c.start, RCOL_F_TEXT_HIDDEN);
	return c;
}

/* The stream's track name where it has one (Kineto's string tids and thread names: "stream
 * 7"), else "stream <number>", as the Chrome export names the track: the label survives a
 * round trip through it. */
static void stream_label(struct rtable *t, struct rrow *r, int col, const struct model *m,
			 const struct gpu_queue_stream *q)
{
	if (q->name)
		set_text(r, col, m, q->name);
	else
		set_label(t, r, col, "stream %llu", (unsigned long long)q->stream);
}

static void q_cells(struct rrow *r, const struct q_cols *c, const struct gpu_queue_stream *q,
		    const struct gpu_queue_span *sp)
{
	int64_t len = sp->e - sp->s;
	r->cells[c->start].i = sp->s - q->window.s;
	r->cells[c->dur].i = len;
	r->cells[c->max].i = sp->max;
	r->cells[c->mean].num = len > 0 ? (double)sp->queued_ns / (double)len : 0;
	r->cells[c->full].i = sp->full_ns;
	r->cells[c->integral].i = sp->queued_ns;
}

int view_queue(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct gpu_queue q;
	if (c->pre && !c->pre->queue)
		return 0; /* merged partials that do not carry it */
	if (c->pre)	  /* merged: the files' streams as their partials gave them (not freed) */
		q = *c->pre->queue;
	else if (gpu_queue_analyze(&c->an, &q) != 0)
		return OPSCOPE_ENOMEM;
	bool any = false;
	for (uint32_t i = 0; i < q.nst; i++)
		any = any || q.st[i].ops > 0;
	if (!any) {
		if (!c->pre)
			gpu_queue_free(&q);
		return 0;
	}
	struct rtable *t = ctx_table(c, "queue", "Queue Length");
	if (!t) {
		if (!c->pre)
			gpu_queue_free(&q);
		return OPSCOPE_ENOMEM;
	}
	struct q_cols cs = q_table_cols(t, false);
	int cops = rtable_col(t, "Ops", "ops", RCOL_COUNT, 7);
	for (uint32_t i = 0; i < q.nst && !t->oom; i++) {
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		dev_label(t, r, cs.dev, m, q.st[i].file, q.st[i].device);
		stream_label(t, r, cs.stream, m, &q.st[i]);
		q_cells(r, &cs, &q.st[i], &q.st[i].window);
		r->cells[cops].i = (int64_t)q.st[i].ops;
	}
	t->note =
		"Per stream over the window (as GPU Utilization): the device ops launched and not "
		"yet started, +1 at the\nstart of the launching call, -1 at the op's start "
		"(HTA's queue length). Mean: weighted by time.\nFull: time with 1024 or more "
		"queued, where launches block (HTA). Ops: launched ops of the stream.";
	struct rtable *s = ctx_table(c, "queue", "Queue Length over time");
	if (!s) {
		if (!c->pre)
			gpu_queue_free(&q);
		return OPSCOPE_ENOMEM;
	}
	/* a long series: in the text report only when asked for */
	s->text_hidden = !(c->o && c->o->views_explicit);
	struct q_cols cb = q_table_cols(s, true);
	for (uint32_t i = 0; i < q.nst && !s->oom; i++) {
		for (uint32_t b = 0; b < q.st[i].nbuckets; b++) {
			struct rrow *r = rtable_row(s, 0);
			if (!r)
				break;
			dev_label(s, r, cb.dev, m, q.st[i].file, q.st[i].device);
			stream_label(s, r, cb.stream, m, &q.st[i]);
			q_cells(r, &cb, &q.st[i], &q.st[i].buckets[b]);
		}
	}
	s->note = "The window cut into at most 100 buckets of a power of 10 us; Start is from the "
		  "window's start.";
	if (!c->pre)
		gpu_queue_free(&q);
	return t->oom || s->oom ? OPSCOPE_ENOMEM : 0;
}
