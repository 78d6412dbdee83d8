/*
 * views_gpu.c: the GPU views of views.c's registry: GPU Utilization (gpu_util.h: busy shares
 * and SM efficiency per step and over the window, then the same over buckets) and GPU Memory
 * (gpu_mem.h: the allocated bytes per device, the largest allocations, those never freed,
 * and the bytes over buckets). They render the analyses' fields and compute nothing else;
 * docs/report.md defines every number. Times of events are given from the start of what
 * they belong to (the window; the device's first allocation record), since absolute clock
 * values mean nothing to a reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/gpu_mem.h"
#include "analyze/gpu_util.h"
#include "report/views_internal.h"

/* "GPU<id>", or "GPU<id> (file <n>)" when several files are loaded. */
static void device_label(struct rtable *t, struct rrow *r, int col, const struct model *m,
			 uint32_t file, uint32_t device)
{
	if (m->nfiles > 1)
		set_label(t, r, col, "GPU%u (file %u)", device, file);
	else
		set_label(t, r, col, "GPU%u", device);
}

/* ---------------------------------------------------------------------------------------- */
/* GPU Utilization */

/* Columns shared by the two utilization tables. */
struct util_cols {
	int dev, step, start, dur, kernel, work, sm, kernels; /* column indexes; step -1: none */
	int kernel_ns, work_ns, sm_ns; /* the same as times, for exact use (JSON, CSV) */
};

static void util_cells(struct rrow *r, const struct util_cols *c, const struct gpu_util_device *g,
		       const struct gpu_util_span *sp)
{
	int64_t len = sp->e - sp->s;
	r->cells[c->start].i = sp->s - g->window.s;
	r->cells[c->dur].i = len;
	r->cells[c->kernel].ratio = ratio(sp->kernel_ns, len);
	r->cells[c->work].ratio = ratio(sp->work_ns, len);
	if (g->sm_known && len > 0)
		r->cells[c->sm].ratio = sp->sm_eff_ns / (double)len;
	else
		r->cells[c->sm].empty = true;
	r->cells[c->kernels].i = (int64_t)sp->kernels;
	r->cells[c->kernel_ns].i = sp->kernel_ns;
	r->cells[c->work_ns].i = sp->work_ns;
	if (g->sm_known) /* the integral, to the nearest ns */
		r->cells[c->sm_ns].i = (int64_t)(sp->sm_eff_ns + 0.5);
	else
		r->cells[c->sm_ns].empty = true;
}

static struct util_cols util_table_cols(struct rtable *t, bool steps)
{
	struct util_cols c;
	c.dev = rtable_col(t, "Device", "device", RCOL_TEXT, 8);
	c.step = steps ? rtable_col(t, "Step", "step", RCOL_TEXT, 16) : -1;
	c.start = rtable_col(t, "Start", "start_ns", RCOL_TIME, 10);
	c.dur = rtable_col(t, "Duration", "duration_ns", RCOL_TIME, 10);
	c.kernel = rtable_col(t, "Kernel busy (%)", "kernel_busy", RCOL_RATIO, 15);
	c.work = rtable_col(t, "Device busy (%)", "device_busy", RCOL_RATIO, 15);
	c.sm = rtable_col(t, "SM Efficiency (%)", "sm_efficiency", RCOL_RATIO, 17);
	c.kernels = rtable_col(t, "Kernels", "kernels", RCOL_COUNT, 8);
	c.kernel_ns = rtable_col(t, "Kernel busy", "kernel_busy_ns", RCOL_TIME, 10);
	c.work_ns = rtable_col(t, "Device busy", "device_busy_ns", RCOL_TIME, 10);
	c.sm_ns = rtable_col(t, "SM busy", "sm_busy_ns", RCOL_TIME, 10);
	rtable_col_flags(t, c.kernel_ns, RCOL_F_TEXT_HIDDEN);
	rtable_col_flags(t, c.work_ns, RCOL_F_TEXT_HIDDEN);
	rtable_col_flags(t, c.sm_ns, RCOL_F_TEXT_HIDDEN);
	if (steps) /* the step's name says where it is */
		rtable_col_flags(t, c.start, RCOL_F_TEXT_HIDDEN);
	return c;
}

int view_gpu(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct gpu_util u;
	if (c->pre && !c->pre->gpu)
		return 0; /* merged partials that do not carry it */
	if (c->pre)	  /* merged: the files' devices as their partials gave them (not freed) */
		u = *c->pre->gpu;
	else if (gpu_util_analyze(&c->an, &u) != 0)
		return OPSCOPE_ENOMEM;
	if (u.ndev == 0) {
		if (!c->pre)
			gpu_util_free(&u);
		return 0;
	}
	struct rtable *t = ctx_table(c, "gpu", "GPU Utilization");
	if (!t) {
		if (!c->pre)
			gpu_util_free(&u);
		return OPSCOPE_ENOMEM;
	}
	struct util_cols cs = util_table_cols(t, true);
	int cstep = cs.step;
	for (uint32_t d = 0; d < u.ndev && !t->oom; d++) {
		const struct gpu_util_device *g = &u.dev[d];
		/* the steps, unless the one step is the whole trace (no ProfileStep range) */
		bool list = g->nsteps > 1 || (g->nsteps == 1 && g->steps[0].name);
		for (uint32_t k = 0; list && k < g->nsteps; k++) {
			struct rrow *r = rtable_row(t, 0);
			if (!r)
				break;
			device_label(t, r, cs.dev, m, g->file, g->device);
			if (g->steps[k].name)
				set_text(r, cstep, m, g->steps[k].name);
			else
				set_cstr(r, cstep, "(step)");
			util_cells(r, &cs, g, &g->steps[k]);
		}
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		device_label(t, r, cs.dev, m, g->file, g->device);
		set_cstr(r, cstep, g->nsteps ? "Window" : "Window (device work)");
		r->summary = true;
		util_cells(r, &cs, g, &g->window);
	}
	t->note = "Per device: each step of the Step table (ProfileStep ranges stretched to the "
		  "GPU work they launched),\nthen the window, from the first step's start to the "
		  "last step's end (the whole trace without steps).\nKernel busy = time some "
		  "kernel ran / duration; Device busy counts copies and memsets too.\nSM "
		  "Efficiency = per kernel min(1, blocks / SMs), overlapping kernels summed and "
		  "capped at 1,\naveraged over the duration (idle = 0): TensorBoard's Est. SM "
		  "Efficiency; '-' where no kernel gives blocks.";
	/* the series, for plots */
	struct rtable *s = ctx_table(c, "gpu", "GPU Utilization over time");
	if (!s) {
		if (!c->pre)
			gpu_util_free(&u);
		return OPSCOPE_ENOMEM;
	}
	struct util_cols cb = util_table_cols(s, false);
	for (uint32_t d = 0; d < u.ndev && !s->oom; d++) {
		const struct gpu_util_device *g = &u.dev[d];
		for (uint32_t b = 0; b < g->nbuckets; b++) {
			struct rrow *r = rtable_row(s, 0);
			if (!r)
				break;
			device_label(s, r, cb.dev, m, g->file, g->device);
			util_cells(r, &cb, g, &g->buckets[b]);
		}
	}
	s->note = "The window cut into at most 100 buckets of a power of 10 us (as TensorBoard's "
		  "plugin does); Start is\nfrom the window's start; the last bucket may be "
		  "shorter, and its shares are of its own duration.";
	if (!c->pre)
		gpu_util_free(&u);
	return t->oom || s->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* GPU Memory */

/* A table of allocations: the largest, or those never freed (lifetime false). */
static int alloc_table(struct report_ctx *c, const struct gpu_mem *gm, const char *title,
		       bool leaks)
{
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "gpumem", title);
	if (!t)
		return OPSCOPE_ENOMEM;
	int cdev = rtable_col(t, "Device", "device", RCOL_TEXT, 8);
	int cbytes = rtable_col(t, "Bytes", "bytes", RCOL_COUNT, 12);
	int cat = rtable_col(t, "At", "at_ns", RCOL_TIME, 10);
	int clife = leaks ? -1 : rtable_col(t, "Lifetime", "lifetime_ns", RCOL_TIME, 10);
	int cfreed = leaks ? -1 : rtable_col(t, "Freed", "freed", RCOL_TEXT, 8);
	int cby = rtable_col(t, "Launched by", "launched_by", RCOL_TEXT, 30);
	rtable_col_flags(t, cby, RCOL_F_CUT);
	for (uint32_t d = 0; d < gm->ndev; d++) {
		const struct gpu_mem_device *g = &gm->dev[d];
		uint32_t n = leaks ? g->nleaks : g->nlargest;
		for (uint32_t k = 0; k < n; k++) {
			const struct gpu_mem_alloc *al = leaks ? &g->leaks[k] : &g->largest[k];
			struct rrow *r = rtable_row(t, 0);
			if (!r)
				return OPSCOPE_ENOMEM;
			device_label(t, r, cdev, m, g->file, g->device);
			r->cells[cbytes].i = al->bytes;
			r->cells[cat].i = al->ts_ns - g->first_ns;
			if (al->launcher)
				set_text(r, cby, m, al->launcher);
			else
				r->cells[cby].empty = true;
			if (leaks)
				continue;
			if (al->freed_ns != INT64_MIN) {
				r->cells[clife].i = al->freed_ns - al->ts_ns;
				set_cstr(r, cfreed, "yes");
			} else {
				r->cells[clife].empty = true;
				set_cstr(r, cfreed, g->addresses ? "no" : "unknown");
			}
		}
	}
	t->note =
		leaks ? "Allocations with no free at their address later in the trace, "
			"largest first (at most 10 per device);\nAt is from the device's first "
			"allocation record."
		      : "At most 10 per device, largest first; At is from the device's first record; "
			"Lifetime runs to the free at\nthe same address ('unknown': the "
			"records carry no addresses). Launched by: the innermost host\nrange "
			"around the allocation on its thread (for CUPTI records, around the "
			"cudaMalloc call).";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

int view_gpumem(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct gpu_mem gm;
	if (c->pre && !c->pre->gpumem)
		return 0; /* merged partials that do not carry it */
	if (c->pre)	  /* merged: the files' devices as their partials gave them (not freed) */
		gm = *c->pre->gpumem;
	else if (gpu_mem_analyze(&c->an, &gm) != 0)
		return OPSCOPE_ENOMEM;
	if (gm.ndev == 0) {
		if (!c->pre)
			gpu_mem_free(&gm);
		return 0;
	}
	int rc = OPSCOPE_ENOMEM;
	struct rtable *t = ctx_table(c, "gpumem", "GPU Memory");
	if (!t)
		goto out;
	int cdev = rtable_col(t, "Device", "device", RCOL_TEXT, 8);
	int cal = rtable_col(t, "Allocations", "allocations", RCOL_COUNT, 11);
	int cfr = rtable_col(t, "Frees", "frees", RCOL_COUNT, 8);
	int calb = rtable_col(t, "Allocated (bytes)", "allocated_bytes", RCOL_COUNT, 14);
	int cfrb = rtable_col(t, "Freed (bytes)", "freed_bytes", RCOL_COUNT, 14);
	int cst = rtable_col(t, "At start (bytes)", "start_bytes", RCOL_COUNT, 14);
	int cen = rtable_col(t, "At end (bytes)", "end_bytes", RCOL_COUNT, 14);
	int cpk = rtable_col(t, "Peak (bytes)", "peak_bytes", RCOL_COUNT, 14);
	int cpat = rtable_col(t, "Peak at", "peak_at_ns", RCOL_TIME, 10);
	int cnf = rtable_col(t, "Never freed", "never_freed", RCOL_COUNT, 11);
	int cnfb = rtable_col(t, "Never freed (bytes)", "never_freed_bytes", RCOL_COUNT, 14);
	int cbasis = rtable_col(t, "Allocated from", "basis", RCOL_TEXT, 16);
	bool any_leaks = false;
	for (uint32_t d = 0; d < gm.ndev; d++) {
		const struct gpu_mem_device *g = &gm.dev[d];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			goto out;
		device_label(t, r, cdev, m, g->file, g->device);
		r->cells[cal].i = (int64_t)g->allocs;
		r->cells[cfr].i = (int64_t)g->frees;
		r->cells[calb].i = g->alloc_bytes;
		r->cells[cfrb].i = g->free_bytes;
		r->cells[cst].i = g->start_bytes;
		r->cells[cen].i = g->end_bytes;
		r->cells[cpk].i = g->peak_bytes;
		r->cells[cpat].i = g->peak_ns - g->first_ns;
		if (g->addresses) {
			r->cells[cnf].i = (int64_t)g->never_freed;
			r->cells[cnfb].i = g->never_freed_bytes;
		} else {
			r->cells[cnf].empty = r->cells[cnfb].empty = true;
		}
		set_cstr(r, cbasis, g->totals ? "Total Allocated" : "sum from 0");
		any_leaks = any_leaks || g->nleaks > 0;
	}
	t->note =
		"From the allocation records (CUPTI's, or PyTorch's [memory] events of CUDA "
		"devices). Allocated bytes:\nthe allocator's own total where every record "
		"carries one (memory from before the trace included),\nelse the sum of the "
		"records from 0. Peak at is from the device's first record. Never freed: no free at "
		"the\nsame address later in the trace ('-': the records carry no addresses).";
	if ((rc = alloc_table(c, &gm, "GPU Memory: Largest Allocations", false)) != 0)
		goto out;
	if (any_leaks && (rc = alloc_table(c, &gm, "GPU Memory: Never Freed", true)) != 0)
		goto out;
	rc = OPSCOPE_ENOMEM;
	struct rtable *s = ctx_table(c, "gpumem", "GPU Memory over time");
	if (!s)
		goto out;
	int sdev = rtable_col(s, "Device", "device", RCOL_TEXT, 8);
	int sst = rtable_col(s, "Start", "start_ns", RCOL_TIME, 10);
	int sdur = rtable_col(s, "Duration", "duration_ns", RCOL_TIME, 10);
	int send = rtable_col(s, "Allocated at end (bytes)", "end_bytes", RCOL_COUNT, 14);
	int smax = rtable_col(s, "Most allocated (bytes)", "max_bytes", RCOL_COUNT, 14);
	for (uint32_t d = 0; d < gm.ndev; d++) {
		const struct gpu_mem_device *g = &gm.dev[d];
		for (uint32_t b = 0; b < g->nbuckets; b++) {
			struct rrow *r = rtable_row(s, 0);
			if (!r)
				goto out;
			device_label(s, r, sdev, m, g->file, g->device);
			r->cells[sst].i = g->buckets[b].s - g->first_ns;
			r->cells[sdur].i = g->buckets[b].e - g->buckets[b].s;
			r->cells[send].i = g->buckets[b].end_bytes;
			r->cells[smax].i = g->buckets[b].max_bytes;
		}
	}
	s->note = "Per device, from its first allocation record to its last, cut into at most "
		  "100 buckets of a power\nof 10 us; Start is from the first record.";
	rc = t->oom || s->oom ? OPSCOPE_ENOMEM : 0;
out:
	if (!c->pre)
		gpu_mem_free(&gm);
	return rc;
}
