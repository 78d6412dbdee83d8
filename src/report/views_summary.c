/*
 * views_summary.c: the views of the whole run (views.c's registry): Trace Files, Device,
 * Overview, Model and Distribution summaries after Paddle's profiler_statistic, and the Step
 * and Perf summaries (steps.h, throughput.h). docs/report.md defines every number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/device.h"
#include "analyze/distributed.h"
#include "analyze/overview.h"
#include "analyze/phases.h"
#include "analyze/steps.h"
#include "analyze/throughput.h"
#include "analyze/timeline.h"
#include "report/views_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* Files: what was read, and what was lost */

/* One row per loaded file: its events, the events the recorder dropped, the bytes of a torn
 * tail that could not be read, and whether the file ended cleanly. Every report has it, in
 * every format (report_run_views runs it whatever --views asks for), so that no number below
 * is read without knowing what it lacks. */
int view_files(struct report_ctx *c)
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

int view_device(struct report_ctx *c)
{
	const struct analysis *a = &c->an;
	struct device_usage d;
	if (c->pre && !c->pre->device)
		return 0; /* merged partials that do not carry it */
	if (c->pre)	  /* merged: the rows the partials gave (not freed) */
		d = *c->pre->device;
	else if (device_analyze(a, &d) != 0)
		return OPSCOPE_ENOMEM;
	if (d.ncpu == 0 && d.ngpu == 0) { /* nothing recorded, no GPU: no table */
		if (!c->pre)
			device_free(&d);
		return 0;
	}
	struct rtable *t = ctx_table(c, "device", "Device Summary");
	if (!t) {
		if (!c->pre)
			device_free(&d);
		return OPSCOPE_ENOMEM;
	}
	/* wide enough for "CPU(System) (file 1023, pid 4194304)" when several files are loaded */
	int name = rtable_col(t, "Device", "device", RCOL_TEXT, a->m->nfiles > 1 ? 38 : 25);
	int util = rtable_col(t, "Utilization (%)", "utilization", RCOL_RATIO, 20);
	static const char *const cpu_label[] = {
		[DEVICE_CPU_PROCESS] = "CPU(Process)", [DEVICE_CPU_SYSTEM] = "CPU(System)"
	};
	/* one row per process that recorded it, labelled with the pid when there are several
	 * (and the file, when several files may hold one pid) */
	for (uint32_t i = 0; i < d.ncpu; i++) {
		const struct device_cpu *cpu = &d.cpu[i];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		if (d.ncpu_of[cpu->kind] == 1)
			set_cstr(r, name, cpu_label[cpu->kind]);
		else if (a->m->nfiles > 1)
			set_label(t, r, name, "%s (file %u, pid %u)", cpu_label[cpu->kind],
				  cpu->file, cpu->pid);
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
	if (!c->pre)
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

int view_overview(struct report_ctx *c)
{
	const struct analysis *a = &c->an;
	struct overview ov;
	if (c->pre && !c->pre->overview)
		return 0; /* merged partials that do not carry it */
	if (c->pre)
		ov = *c->pre->overview;
	else if (overview_analyze(a, &ov) != 0)
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

int view_model(struct report_ctx *c)
{
	const struct analysis *a = &c->an;
	struct phases ph;
	if (c->pre && !c->pre->phases)
		return 0; /* merged partials that do not carry them */
	if (c->pre)	  /* merged: no steps (not freed) */
		ph = *c->pre->phases;
	else if (phases_analyze(a, &ph) != 0)
		return OPSCOPE_ENOMEM;
	if (ph.nphases == 0) { /* only ProfileStep (or nothing): Paddle prints no model table */
		if (!c->pre)
			phases_free(&ph);
		return 0;
	}
	struct rtable *t = ctx_table(c, "model", "Model Summary");
	if (!t) {
		if (!c->pre)
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
	if (!c->pre)
		phases_free(&ph);
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Distributed */

int view_distributed(struct report_ctx *c)
{
	const struct analysis *a = &c->an;
	struct distributed d;
	if (c->pre && !c->pre->distributed)
		return 0; /* merged partials that do not carry it */
	if (c->pre)
		d = *c->pre->distributed;
	else if (distributed_analyze(a, &d) != 0)
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
/* Steps */

/* Windows of the HTML page's timeline (analyze/timeline.h). */
#define STEP_TIMELINE_WINDOWS 400

/* The HTML page's timeline: its steps, and per window and lane the busy time and top name
 * (analyze/timeline.h), in two tables the other formats leave out. */
static int step_timeline(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct timeline tl;
	if (timeline_run(m, STEP_TIMELINE_WINDOWS, &tl) != 0)
		return OPSCOPE_ENOMEM;
	if (!tl.ncells && !tl.nsteps) {
		timeline_free(&tl);
		return 0;
	}
	struct rtable *t = ctx_table(c, "step", "Timeline: Steps");
	struct rtable *w = t ? ctx_table(c, "step", "Timeline") : NULL;
	if (!w) {
		timeline_free(&tl);
		return OPSCOPE_ENOMEM;
	}
	int cname = rtable_col(t, "Step", "step", RCOL_TEXT, 16);
	int cstart = rtable_col(t, "Start", "start_ns", RCOL_TIME, 10);
	int cdur = rtable_col(t, "Duration", "duration_ns", RCOL_TIME, 10);
	for (uint64_t i = 0; i < tl.nsteps; i++) {
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		set_text(r, cname, m, tl.steps[i].name);
		r->cells[cstart].i = tl.steps[i].start_ns;
		r->cells[cdur].i = tl.steps[i].dur_ns;
	}
	int clane = rtable_col(w, "Lane", "lane", RCOL_TEXT, 10);
	int wstart = rtable_col(w, "Start", "start_ns", RCOL_TIME, 10);
	int wdur = rtable_col(w, "Duration", "duration_ns", RCOL_TIME, 10);
	int cbusy = rtable_col(w, "Busy", "busy_ns", RCOL_TIME, 10);
	int ctop = rtable_col(w, "Top Name", "name", RCOL_TEXT, 32);
	int ctopns = rtable_col(w, "Top Time", "name_ns", RCOL_TIME, 10);
	for (uint64_t i = 0; i < tl.ncells; i++) {
		const struct timeline_cell *x = &tl.cells[i];
		struct rrow *r = rtable_row(w, 0);
		if (!r)
			break;
		set_cstr(r, clane, timeline_lane_name(x->lane));
		r->cells[wstart].i = tl.t0_ns + (int64_t)x->win * tl.win_ns;
		r->cells[wdur].i = tl.win_ns;
		r->cells[cbusy].i = x->busy_ns;
		set_text(r, ctop, m, x->top);
		r->cells[ctopns].i = x->top_ns;
	}
	t->text_hidden = w->text_hidden = true;
	timeline_free(&tl);
	return t->oom || w->oom ? OPSCOPE_ENOMEM : 0;
}

int view_step(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	if (c->pre && !c->pre->steps)
		return 0; /* merged partials that do not carry the steps */
	for (uint32_t f = 0; f < m->nfiles; f++) {
		struct step_table st;
		if (c->pre) /* merged: the file's rows as its partial gave them (not freed) */
			st = c->pre->steps[f];
		else if (steps_analyze(&c->an.tree, f, &st) != 0)
			return OPSCOPE_ENOMEM;
		if (st.nrows == 0) {
			if (!c->pre)
				steps_free(&st);
			continue;
		}
		struct rtable *t = ctx_table(c, "step", "Step Summary");
		if (!t) {
			if (!c->pre)
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
		if (!c->pre)
			steps_free(&st);
		if (t->oom)
			return OPSCOPE_ENOMEM;
	}
	return c->o->html ? step_timeline(c) : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Perf Summary */

int view_perf(struct report_ctx *c)
{
	struct throughput tp;
	if (c->pre && !c->pre->has_perf)
		return 0; /* merged partials that do not carry the steps' throughput */
	if (c->pre)
		tp = c->pre->perf;
	else if (throughput_analyze(&c->an, &tp) != 0)
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
