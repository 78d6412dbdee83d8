/*
 * views.c: the views of `opscope report` (views.h), after Paddle's profiler_statistic
 * (SPEC-seeds §2), nvprof's summary (§5.2) and the step view (steps.h). Each view reads the
 * model and the tree and adds tables to the context; report_run_views runs the views asked
 * for side by side, one per CPU. docs/report.md states every definition and where we differ
 * from Paddle.
 */
#include "report/views.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/aggregate.h"
#include "analyze/intervals.h"
#include "analyze/steps.h"
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

static bool is_phase(uint8_t cat)
{
	return cat == OPSCOPE_CAT_DATALOADER || cat == OPSCOPE_CAT_FORWARD ||
	       cat == OPSCOPE_CAT_BACKWARD || cat == OPSCOPE_CAT_OPTIMIZATION;
}

int report_ctx_init(struct report_ctx *c, const struct model *m, const struct report_opts *o)
{
	memset(c, 0, sizeof(*c));
	c->m = m;
	c->o = o;
	if (tree_build(&c->tree, m) != 0)
		return OPSCOPE_ENOMEM;
	struct ivec steps = { 0 };
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_THREAD)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int64_t s = tr->ranges.start_ns[i], e = s + tr->ranges.dur_ns[i];
			lo = s < lo ? s : lo;
			hi = e > hi ? e : hi;
			if (tr->ranges.category[i] != OPSCOPE_CAT_PROFILE_STEP)
				continue;
			ivec_push(&steps, s, e);
			c->step_gpu_ns += c->tree.tracks[t].gpu_ns[i];
			c->step_ggpu_ns += c->tree.tracks[t].ggpu_ns[i];
		}
	}
	ivec_merge(&steps);
	c->has_steps = steps.n > 0;
	c->total_ns = c->has_steps ? ivec_sum(&steps) : hi > lo ? hi - lo : 0;
	bool oom = steps.oom;
	ivec_free(&steps);
	if (oom) {
		tree_free(&c->tree);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

/* One view run by report_run_views: a shallow copy of the context, with its own tables. */
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
		n += !want || want(v->name, arg);
	struct view_job *jobs = calloc(n ? n : 1, sizeof(*jobs));
	uint32_t *order = calloc(n ? n : 1, sizeof(*order));
	if (!jobs || !order) {
		free(jobs);
		free(order);
		return OPSCOPE_ENOMEM;
	}
	uint32_t k = 0;
	for (const struct report_view *v = report_views; v->name; v++) {
		if (want && !want(v->name, arg))
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
	/* the views only read the model and the context: as many at once as there are CPUs
	 * (the calling thread is one of them) */
	parallel_for(k, order, parallel_cpus(), run_view, jobs);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct view_job *j = &jobs[i];
		if (j->rc && !rc)
			rc = j->rc;
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
	tree_free(&c->tree);
	memset(c, 0, sizeof(*c));
}

static double ratio(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0.0;
}

static void set_stats(struct rcell *x, const struct agg_item *it, bool gpu, int64_t whole)
{
	int64_t total = gpu ? it->gpu_ns : it->cpu_ns;
	x->st.total = total;
	x->st.avg = it->calls ? total / (int64_t)it->calls : 0;
	x->st.max = gpu ? it->gpu_max_ns : it->cpu_max_ns;
	x->st.min = gpu ? it->gpu_min_ns : it->cpu_min_ns;
	if (x->st.min == INT64_MAX)
		x->st.min = 0;
	x->st.ratio = ratio(total, whole);
}

static void set_text(struct rrow *r, int col, const struct model *m, uint32_t id)
{
	rcell_text(r, col, model_str(m, id), model_strlen(m, id));
}

static void set_cstr(struct rrow *r, int col, const char *s)
{
	rcell_text(r, col, s, strlen(s));
}

/* ---------------------------------------------------------------------------------------- */
/* Device */

static int view_device(struct report_ctx *c)
{
	const struct model *m = c->m;
	struct rtable *t = ctx_table(c, "device", "Device Summary");
	if (!t)
		return OPSCOPE_ENOMEM;
	int name = rtable_col(t, "Device", "device", RCOL_TEXT, 25);
	int util = rtable_col(t, "Utilization (%)", "utilization", RCOL_RATIO, 20);
	static const struct {
		const char *key, *label;
	} cpu[] = { { "cpu.process_utilization", "CPU(Process)" },
		    { "cpu.system_utilization", "CPU(System)" } };
	/* one row per process that recorded it (several files: several processes), labelled
	 * with the pid when there is more than one */
	for (int k = 0; k < 2; k++) {
		uint32_t key = model_find_str(m, cpu[k].key), n = 0;
		for (uint32_t i = 0; key && i < m->nmeta; i++)
			n += m->meta[i].key == key;
		for (uint32_t i = 0; key && i < m->nmeta; i++) {
			if (m->meta[i].key != key)
				continue;
			struct rrow *r = rtable_row(t, 0);
			if (!r)
				return OPSCOPE_ENOMEM;
			if (n == 1) {
				set_cstr(r, name, cpu[k].label);
			} else {
				char label[64];
				int len = snprintf(label, sizeof(label), "%s (pid %u)",
						   cpu[k].label, m->meta[i].pid);
				rcell_text(r, name, rtable_str(t, label, (size_t)len), (size_t)len);
			}
			r->cells[util].ratio = strtod(model_str(m, m->meta[i].value), NULL);
		}
	}
	/* one GPU per (file, device id): the union of its kernels over the total time */
	for (uint32_t f = 0; f < m->nfiles; f++) {
		uint32_t seen[64];
		uint32_t nseen = 0;
		for (uint32_t tt = 0; tt < m->ntracks; tt++) {
			const struct model_track *tr = &m->tracks[tt];
			if (tr->kind != MODEL_TRACK_DEVICE || tr->file != f)
				continue;
			bool dup = false;
			for (uint32_t k = 0; k < nseen; k++)
				dup = dup || seen[k] == tr->pid;
			if (dup || nseen == 64)
				continue;
			seen[nseen++] = tr->pid;
			struct ivec k = { 0 };
			for (uint32_t t2 = tt; t2 < m->ntracks; t2++) {
				const struct model_track *d = &m->tracks[t2];
				if (d->kind != MODEL_TRACK_DEVICE || d->file != f ||
				    d->pid != tr->pid)
					continue;
				for (uint64_t i = 0; i < d->nranges; i++)
					if (tree_is_kernel(d->ranges.category[i]))
						ivec_push(&k, d->ranges.start_ns[i],
							  d->ranges.start_ns[i] +
								  d->ranges.dur_ns[i]);
			}
			ivec_merge(&k);
			struct rrow *r = rtable_row(t, 0);
			if (!r || k.oom) {
				ivec_free(&k);
				return OPSCOPE_ENOMEM;
			}
			char label[64];
			int n = m->nfiles > 1 ? snprintf(label, sizeof(label), "GPU%u (file %u)",
							 tr->pid, f)
					      : snprintf(label, sizeof(label), "GPU%u", tr->pid);
			rcell_text(r, name, rtable_str(t, label, (size_t)n), (size_t)n);
			r->cells[util].ratio = ratio(ivec_sum(&k), c->total_ns);
			ivec_free(&k);
		}
	}
	if (t->nrows == 0 && !t->oom) { /* nothing recorded, no GPU: no table */
		c->ntables--;
		rtable_free(t);
		return 0;
	}
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

/* Is range i of track t outermost among the phases (no phase above it)? */
static bool outermost_phase(const struct report_ctx *c, uint32_t t, uint64_t i)
{
	const struct model_ranges *r = &c->m->tracks[t].ranges;
	for (uint64_t p = c->tree.tracks[t].parent[i]; p != MODEL_NONE;
	     p = c->tree.tracks[t].parent[p])
		if (is_phase(r->category[p]))
			return false;
	return true;
}

static void comm_sets(const struct report_ctx *c, struct ivec *cpu_comm, struct ivec *gpu_comm,
		      struct ivec *comp);

static int view_overview(struct report_ctx *c)
{
	const struct model *m = c->m;
	struct rtable *t = ctx_table(c, "overview", "Overview Summary");
	if (!t)
		return OPSCOPE_ENOMEM;
	int ctype = rtable_col(t, "Event Type", "type", RCOL_TEXT, 25);
	int csec = rtable_col(t, "Where", "section", RCOL_TEXT, 5);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 10);
	int ctime = rtable_col(t, "Time", "time_ns", RCOL_TIME, 15);
	int cratio = rtable_col(t, "Ratio (%)", "ratio", RCOL_RATIO, 10);
	struct ivec cpu[OPSCOPE_CAT_COUNT_], gpu[OPSCOPE_CAT_COUNT_], busy = { 0 };
	uint64_t ccount[OPSCOPE_CAT_COUNT_] = { 0 }, gcount[OPSCOPE_CAT_COUNT_] = { 0 };
	uint64_t phase_calls[OPSCOPE_CAT_COUNT_] = { 0 };
	int64_t phase_sum[OPSCOPE_CAT_COUNT_] = { 0 };
	memset(cpu, 0, sizeof(cpu));
	memset(gpu, 0, sizeof(gpu));
	bool oom = false;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		const struct model_ranges *r = &tr->ranges;
		if (tr->kind == MODEL_TRACK_ASYNC)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t cat = r->category[i] < OPSCOPE_CAT_COUNT_
					      ? r->category[i]
					      : OPSCOPE_CAT_USER_DEFINED;
			int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
			if (tr->kind == MODEL_TRACK_DEVICE) {
				if (!tree_is_device_work(cat))
					continue;
				/* an NCCL kernel is a kernel, and communication too */
				uint8_t k = tree_is_kernel(cat) ? OPSCOPE_CAT_KERNEL : cat;
				ivec_add(&gpu[k], s, e);
				gcount[k]++;
				ivec_add(&busy, s, e);
				continue;
			}
			ivec_add(&cpu[cat], s, e);
			ccount[cat]++;
			if (is_phase(cat) && outermost_phase(c, tt, i)) {
				phase_calls[cat]++;
				phase_sum[cat] += r->dur_ns[i];
			}
		}
	}
	/* Communication rows: the ranges of the Distribution table (host: Communication ranges
	 * and operators named like allreduce; GPU: NCCL kernels and kernels launched under
	 * those), merged; calls = distinct ranges (Paddle's cpu_calls / gpu_calls) */
	struct ivec comm[2] = { { 0 }, { 0 } }, comp = { 0 };
	comm_sets(c, &comm[0], &comm[1], &comp);
	ivec_free(&comp);
	for (int k = 0; k < 2; k++) {
		uint8_t cat = OPSCOPE_CAT_COMMUNICATION;
		struct ivec *v = k ? &gpu[cat] : &cpu[cat];
		ivec_free(v);
		*v = comm[k];
		*(k ? &gcount[cat] : &ccount[cat]) = ivec_count_distinct(v);
	}
	struct orow {
		uint8_t cat;
		bool gpu;
		uint64_t calls;
		int64_t time;
	} rows[2 * OPSCOPE_CAT_COUNT_];
	int nrows = 0;
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++) {
		ivec_merge(&cpu[k]);
		ivec_merge(&gpu[k]);
		oom = oom || cpu[k].oom || gpu[k].oom;
		if (ccount[k]) {
			/* phases: calls and summed (not merged) time of the outermost ones */
			bool ph = is_phase((uint8_t)k);
			rows[nrows++] =
				(struct orow){ (uint8_t)k, false, ph ? phase_calls[k] : ccount[k],
					       ph ? phase_sum[k] : ivec_sum(&cpu[k]) };
		}
	}
	/* CPU rows by time, ProfileStep first; then GPU rows in a fixed order */
	for (int a = 0; a < nrows; a++)
		for (int b = a + 1; b < nrows; b++) {
			bool swap = rows[b].cat == OPSCOPE_CAT_PROFILE_STEP ||
				    (rows[a].cat != OPSCOPE_CAT_PROFILE_STEP &&
				     rows[b].time > rows[a].time);
			if (swap) {
				struct orow x = rows[a];
				rows[a] = rows[b];
				rows[b] = x;
			}
		}
	static const uint8_t gpu_order[] = { OPSCOPE_CAT_KERNEL, OPSCOPE_CAT_MEMCPY,
					     OPSCOPE_CAT_MEMSET, OPSCOPE_CAT_COMMUNICATION };
	for (size_t k = 0; k < sizeof(gpu_order); k++)
		if (gcount[gpu_order[k]])
			rows[nrows++] = (struct orow){ gpu_order[k], true, gcount[gpu_order[k]],
						       ivec_sum(&gpu[gpu_order[k]]) };
	for (int k = 0; k < nrows && !oom; k++) {
		struct rrow *r = rtable_row(t, rows[k].cat == OPSCOPE_CAT_PROFILE_STEP ? 0 : 1);
		if (!r) {
			oom = true;
			break;
		}
		set_cstr(r, ctype, opscope_category_name(rows[k].cat));
		set_cstr(r, csec, rows[k].gpu ? "gpu" : "cpu");
		r->cells[ccalls].i = (int64_t)rows[k].calls;
		r->cells[ctime].i = rows[k].time;
		r->cells[cratio].ratio = ratio(rows[k].time, c->total_ns);
	}
	ivec_merge(&busy);
	rtable_total(t, "total_ns", c->total_ns);
	rtable_total(t, "gpu_busy_ns", ivec_sum(&busy));
	oom = oom || busy.oom;
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++) {
		ivec_free(&cpu[k]);
		ivec_free(&gpu[k]);
	}
	ivec_free(&busy);
	t->note =
		c->has_steps
			? "Overlapping events of one type are merged before they are summed, so a "
			  "type's time is the time\nsomething of that type ran. Types may overlap "
			  "each other: ratios do not add up to 100%.\nRatio = time / total time "
			  "(the union of the ProfileStep ranges). Dataloader, Forward, Backward\nand "
			  "Optimization count their outermost ranges (summed, not merged)."
			: "Overlapping events of one type are merged before they are summed. There "
			  "are no ProfileStep\nranges: ratio = time / the span of the host ranges.";
	return oom || t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Model */

static int view_model(struct report_ctx *c)
{
	const struct model *m = c->m;
	static const uint8_t order[] = { OPSCOPE_CAT_PROFILE_STEP, OPSCOPE_CAT_DATALOADER,
					 OPSCOPE_CAT_FORWARD, OPSCOPE_CAT_BACKWARD,
					 OPSCOPE_CAT_OPTIMIZATION };
	struct agg a = { 0 };
	uint32_t item[sizeof(order)];
	for (size_t k = 0; k < sizeof(order); k++)
		item[k] = AGG_NONE;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t cat = tr->ranges.category[i];
			size_t k = 0;
			while (k < sizeof(order) && order[k] != cat)
				k++;
			if (k == sizeof(order) || (k > 0 && !outermost_phase(c, tt, i)))
				continue;
			if (item[k] == AGG_NONE)
				item[k] = agg_get(&a, AGG_NONE, cat, 0);
			agg_add(&a, item[k], tr->ranges.dur_ns[i], c->tree.tracks[tt].gpu_ns[i]);
		}
	}
	int nitems = 0;
	for (size_t k = 1; k < sizeof(order); k++)
		nitems += item[k] != AGG_NONE;
	if (a.oom) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	if (nitems == 0) { /* only ProfileStep (or nothing): Paddle prints no model table */
		agg_free(&a);
		return 0;
	}
	struct rtable *t = ctx_table(c, "model", "Model Summary");
	if (!t) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 15);
	int ccalls = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	int ccpu = rtable_col(t, "CPU Total / Avg / Max / Min / Ratio(%)", "cpu", RCOL_STATS, 40);
	int cgpu = rtable_col(t, "GPU Total / Avg / Max / Min / Ratio(%)", "gpu", RCOL_STATS, 40);
	int64_t step_gpu = item[0] != AGG_NONE ? a.v[item[0]].gpu_ns : 0;
	int64_t phase_cpu = 0, phase_gpu = 0;
	for (size_t k = 0; k < sizeof(order); k++) {
		if (item[k] == AGG_NONE)
			continue;
		const struct agg_item *it = &a.v[item[k]];
		struct rrow *r = rtable_row(t, k ? 1 : 0);
		if (!r)
			break;
		set_cstr(r, cname, opscope_category_name(order[k]));
		r->cells[ccalls].i = (int64_t)it->calls;
		set_stats(&r->cells[ccpu], it, false, c->total_ns);
		set_stats(&r->cells[cgpu], it, true, step_gpu);
		if (k) {
			phase_cpu += it->cpu_ns;
			phase_gpu += it->gpu_ns;
		}
	}
	struct rrow *r = rtable_row(t, 1);
	if (r) {
		set_cstr(r, cname, "Others");
		r->cells[ccalls].empty = true;
		int64_t ocpu = c->total_ns - phase_cpu, ogpu = step_gpu - phase_gpu;
		r->cells[ccpu].st =
			(struct rstats){ ocpu, 0, 0, 0, ratio(ocpu, c->total_ns), true };
		r->cells[cgpu].st = (struct rstats){ ogpu, 0, 0, 0, ratio(ogpu, step_gpu), true };
	}
	t->note = "CPU ratio = time / total time (the ProfileStep ranges). GPU: kernel time "
		  "launched from inside the\nranges; GPU ratio = kernel time / the ProfileStep "
		  "kernel time. Kernels on different streams\nare summed, not merged. Others = "
		  "total - the four phases.";
	agg_free(&a);
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Distributed */

static bool name_has_ci(const char *s, const char *needle)
{
	size_t n = strlen(needle);
	for (; *s; s++) {
		size_t k = 0;
		while (k < n && s[k] && tolower((unsigned char)s[k]) == needle[k])
			k++;
		if (k == n)
			return true;
	}
	return false;
}

static bool is_comm_host(const struct model *m, uint8_t cat, uint32_t name)
{
	if (cat == OPSCOPE_CAT_COMMUNICATION)
		return true;
	if (cat != OPSCOPE_CAT_OPERATOR)
		return false;
	const char *s = model_str(m, name);
	return name_has_ci(s, "allreduce") || name_has_ci(s, "broadcast") || name_has_ci(s, "rpc");
}

/* is_comm_host through a cache of the answer per Operator name (0: not asked yet, 1: no,
 * 2: yes): the names are few, the ranges asking (and their ancestors) many. Without a cache
 * (out of memory) every range asks. */
static bool comm_host_cached(const struct model *m, uint8_t *by_name, uint8_t cat, uint32_t name)
{
	if (cat != OPSCOPE_CAT_OPERATOR || !by_name || name >= m->nstrings)
		return is_comm_host(m, cat, name);
	if (!by_name[name])
		by_name[name] = is_comm_host(m, cat, name) ? 2 : 1;
	return by_name[name] == 2;
}

/* Paddle's distributed ranges, not merged: host communication ranges (category
 * Communication, or an Operator named like allreduce / broadcast / rpc); GPU communication
 * (NCCL kernels, and every kernel launched from inside a host communication range); GPU
 * computation (every other kernel). Kernels launched before the window count by category. */
static void comm_sets(const struct report_ctx *c, struct ivec *cpu_comm, struct ivec *gpu_comm,
		      struct ivec *comp)
{
	const struct model *m = c->m;
	uint8_t *by_name = calloc(m->nstrings ? m->nstrings : 1, 1);
	/* host side: communication ranges, and the kernels launched under them */
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD)
			continue;
		const struct tree_track *tk = &c->tree.tracks[tt];
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (comm_host_cached(m, by_name, tr->ranges.category[i],
					     tr->ranges.name[i]))
				ivec_push(cpu_comm, tr->ranges.start_ns[i],
					  tr->ranges.start_ns[i] + tr->ranges.dur_ns[i]);
			if (!tree_is_runtime(tr->ranges.category[i]))
				continue;
			bool under_comm = false;
			for (uint64_t p = tk->parent[i]; p != MODEL_NONE && !under_comm;
			     p = tk->parent[p])
				under_comm = comm_host_cached(m, by_name, tr->ranges.category[p],
							      tr->ranges.name[p]);
			for (uint32_t l = tk->launches[i]; l != TREE_NONE;
			     l = c->tree.launches[l].next) {
				const struct tree_launch *L = &c->tree.launches[l];
				const struct model_ranges *d = &m->tracks[L->track].ranges;
				uint8_t cat = d->category[L->range];
				if (!tree_is_kernel(cat))
					continue;
				int64_t s = d->start_ns[L->range], e = s + d->dur_ns[L->range];
				if (under_comm || cat == OPSCOPE_CAT_COMMUNICATION)
					ivec_push(gpu_comm, s, e);
				else
					ivec_push(comp, s, e);
			}
		}
	}
	/* kernels nobody launched in the window: by their category */
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_DEVICE)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t cat = tr->ranges.category[i];
			if (c->tree.tracks[tt].launched[i] || !tree_is_kernel(cat))
				continue;
			int64_t s = tr->ranges.start_ns[i], e = s + tr->ranges.dur_ns[i];
			ivec_push(cat == OPSCOPE_CAT_COMMUNICATION ? gpu_comm : comp, s, e);
		}
	}
	free(by_name);
}

static int view_distributed(struct report_ctx *c)
{
	struct ivec cpu_comm = { 0 }, gpu_comm = { 0 }, comp = { 0 };
	comm_sets(c, &cpu_comm, &gpu_comm, &comp);
	ivec_merge(&cpu_comm);
	ivec_merge(&gpu_comm);
	ivec_merge(&comp);
	struct ivec comm = { 0 }, overlap = { 0 };
	for (size_t i = 0; i < cpu_comm.n; i++)
		ivec_push(&comm, cpu_comm.v[i].s, cpu_comm.v[i].e);
	for (size_t i = 0; i < gpu_comm.n; i++)
		ivec_push(&comm, gpu_comm.v[i].s, gpu_comm.v[i].e);
	ivec_merge(&comm);
	ivec_intersect(&comm, &comp, &overlap);
	int rc = cpu_comm.oom || gpu_comm.oom || comp.oom || comm.oom || overlap.oom
			 ? OPSCOPE_ENOMEM
			 : 0;
	if (rc == 0 && comm.n) { /* printed only when there is communication */
		struct rtable *t = ctx_table(c, "distributed", "Distribution Summary");
		if (!t) {
			rc = OPSCOPE_ENOMEM;
		} else {
			int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 25);
			int ctime = rtable_col(t, "Total Time", "time_ns", RCOL_TIME, 25);
			int cratio = rtable_col(t, "Ratio (%)", "ratio", RCOL_RATIO, 25);
			const char *names[] = { "ProfileStep", "Communication", "Computation",
						"Overlap" };
			int64_t v[] = { c->total_ns, ivec_sum(&comm), ivec_sum(&comp),
					ivec_sum(&overlap) };
			for (int k = 0; k < 4; k++) {
				struct rrow *r = rtable_row(t, k ? 1 : 0);
				if (!r)
					break;
				set_cstr(r, cname, names[k]);
				r->cells[ctime].i = v[k];
				r->cells[cratio].ratio = ratio(v[k], c->total_ns);
			}
			rc = t->oom ? OPSCOPE_ENOMEM : 0;
		}
	}
	ivec_free(&cpu_comm);
	ivec_free(&gpu_comm);
	ivec_free(&comp);
	ivec_free(&comm);
	ivec_free(&overlap);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Tables of aggregated items: operator, user-defined, memory manipulation */

enum { KIND_ITEM, KIND_INNER, KIND_KERNEL };

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

/* Thread groups: all host threads merged, or one per thread. */
struct group {
	uint32_t track; /* MODEL_NO_TRACK: every track */
};

static bool in_group(const struct group *g, uint32_t t)
{
	return g->track == MODEL_NO_TRACK || g->track == t;
}

static void group_title(const struct report_ctx *c, const struct group *g, char *buf, size_t n)
{
	if (g->track == MODEL_NO_TRACK) {
		snprintf(buf, n, "Thread: All threads merged");
		return;
	}
	const struct model_track *tr = &c->m->tracks[g->track];
	snprintf(buf, n, "Thread: %llu (pid %u)", (unsigned long long)tr->tid, tr->pid);
}

/* Device ranges launched by the direct runtime children of range i: kernel rows under item. */
static void add_kernels(struct report_ctx *c, struct agg *a, uint32_t item, uint32_t t, uint64_t i)
{
	const struct model *m = c->m;
	const struct model_track *tr = &m->tracks[t];
	const struct tree_track *tk = &c->tree.tracks[t];
	/* children follow their parent in a track's order, until the parent ends */
	int64_t end = tr->ranges.start_ns[i] + tr->ranges.dur_ns[i];
	for (uint64_t j = i + 1; j < tr->nranges && tr->ranges.start_ns[j] <= end; j++) {
		if (tk->parent[j] != i || !tree_is_runtime(tr->ranges.category[j]))
			continue;
		for (uint32_t l = tk->launches[j]; l != TREE_NONE; l = c->tree.launches[l].next) {
			const struct tree_launch *L = &c->tree.launches[l];
			const struct model_ranges *d = &m->tracks[L->track].ranges;
			uint32_t k = agg_get(a, item, d->name[L->range], KIND_KERNEL);
			agg_add(a, k, 0, d->dur_ns[L->range]);
		}
	}
}

static bool is_memcpy_name(const char *s)
{
	return name_has_ci(s, "memcpy") || name_has_ci(s, "memorycopy") || name_has_ci(s, "memset");
}

enum agg_view { AV_OPERATOR, AV_USERDEFINED, AV_MEMCPY };

static bool agg_selects(const struct model *m, enum agg_view v, uint8_t cat, uint32_t name)
{
	switch (v) {
	case AV_OPERATOR:
		return cat == OPSCOPE_CAT_OPERATOR;
	case AV_USERDEFINED:
		return cat == OPSCOPE_CAT_PYTHON_USER_DEFINED &&
		       !is_memcpy_name(model_str(m, name));
	case AV_MEMCPY:
		return (cat == OPSCOPE_CAT_USER_DEFINED ||
			cat == OPSCOPE_CAT_PYTHON_USER_DEFINED) &&
		       is_memcpy_name(model_str(m, name));
	}
	return false;
}

/* Rows of one item's children (inner phases, their kernels, its kernels). */
static void detail_rows(struct report_ctx *c, struct rtable *t, const struct agg *a, uint32_t op,
			int cols[4])
{
	const struct agg_item *it = &a->v[op];
	/* inner phases first, each with its kernels; then the operator's own kernels */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t ch = it->first_child; ch != AGG_NONE; ch = a->v[ch].next) {
			const struct agg_item *x = &a->v[ch];
			if ((pass == 0) != (x->kind == KIND_INNER))
				continue;
			struct rrow *r = rtable_row(t, 1);
			if (!r)
				return;
			set_text(r, cols[0], c->m, x->name);
			r->cells[cols[1]].i = (int64_t)x->calls;
			if (x->kind == KIND_INNER) {
				set_stats(&r->cells[cols[2]], x, false, it->cpu_ns);
			} else {
				r->cells[cols[2]].empty = true;
			}
			set_stats(&r->cells[cols[3]], x, true, it->gpu_ns);
			for (uint32_t k = x->first_child; k != AGG_NONE; k = a->v[k].next) {
				const struct agg_item *y = &a->v[k];
				struct rrow *rk = rtable_row(t, 2);
				if (!rk)
					return;
				set_text(rk, cols[0], c->m, y->name);
				rk->cells[cols[1]].i = (int64_t)y->calls;
				rk->cells[cols[2]].empty = true;
				set_stats(&rk->cells[cols[3]], y, true, x->gpu_ns);
			}
		}
	}
}

static int view_agg_group(struct report_ctx *c, enum agg_view v, const struct group *g)
{
	const struct model *m = c->m;
	struct agg a = { 0 };
	bool detail = v == AV_OPERATOR && c->o->op_detail;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD || !in_group(g, tt))
			continue;
		const struct tree_track *tk = &c->tree.tracks[tt];
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (!agg_selects(m, v, r->category[i], r->name[i]))
				continue;
			uint32_t item = agg_get(&a, AGG_NONE, r->name[i], KIND_ITEM);
			agg_add(&a, item, r->dur_ns[i], tk->ggpu_ns[i]);
			if (!detail || item == AGG_NONE)
				continue;
			/* inner phases: direct children that are neither operators nor calls */
			int64_t end = r->start_ns[i] + r->dur_ns[i];
			for (uint64_t j = i + 1; j < tr->nranges && r->start_ns[j] <= end; j++) {
				if (tk->parent[j] != i || r->category[j] == OPSCOPE_CAT_OPERATOR ||
				    tree_is_runtime(r->category[j]))
					continue;
				uint32_t in = agg_get(&a, item, r->name[j], KIND_INNER);
				agg_add(&a, in, r->dur_ns[j], tk->ggpu_ns[j]);
				if (in != AGG_NONE)
					add_kernels(c, &a, in, tt, j);
			}
			add_kernels(c, &a, item, tt, i);
		}
	}
	if (a.oom) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	if (a.n == 0) {
		agg_free(&a);
		return 0;
	}
	static const char *const titles[] = { "Operator Summary", "UserDefined Summary",
					      "Memory Manipulation Summary" };
	static const char *const views[] = { "operator", "userdefined", "memcpy" };
	struct rtable *t = ctx_table(c, views[v], titles[v]);
	if (!t) {
		agg_free(&a);
		return OPSCOPE_ENOMEM;
	}
	if (v != AV_MEMCPY)
		group_title(c, g, t->group, sizeof(t->group));
	int cols[4];
	cols[0] = rtable_col(t, "Name", "name", RCOL_TEXT, v == AV_OPERATOR ? 52 : 0);
	cols[1] = rtable_col(t, "Calls", "calls", RCOL_COUNT, 6);
	cols[2] = rtable_col(t, "CPU Total / Avg / Max / Min / Ratio(%)", "cpu", RCOL_STATS, 40);
	cols[3] = rtable_col(t, "GPU Total / Avg / Max / Min / Ratio(%)", "gpu", RCOL_STATS, 40);
	uint32_t n;
	uint32_t *top = sorted_top(&a, c->o->sort, v != AV_MEMCPY, &n);
	int64_t cpu_all = 0, gpu_all = 0;
	for (uint32_t k = 0; top && k < n; k++) {
		cpu_all += a.v[top[k]].cpu_ns;
		gpu_all += a.v[top[k]].gpu_ns;
	}
	/* operators: ratios of all operators' time; the others: of the total (step) time */
	int64_t cpu_whole = v == AV_OPERATOR ? cpu_all : c->total_ns;
	int64_t gpu_whole = v == AV_OPERATOR ? gpu_all : c->step_ggpu_ns;
	for (uint32_t k = 0; top && k < n; k++) {
		const struct agg_item *it = &a.v[top[k]];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		set_text(r, cols[0], m, it->name);
		r->cells[cols[1]].i = (int64_t)it->calls;
		set_stats(&r->cells[cols[2]], it, false, cpu_whole);
		set_stats(&r->cells[cols[3]], it, true, gpu_whole);
		if (detail)
			detail_rows(c, t, &a, top[k], cols);
	}
	int rc = !top || t->oom ? OPSCOPE_ENOMEM : 0;
	free(top);
	agg_free(&a);
	return rc;
}

static int view_agg(struct report_ctx *c, enum agg_view v)
{
	struct group g = { MODEL_NO_TRACK };
	if (!c->o->thread_sep || v == AV_MEMCPY)
		return view_agg_group(c, v, &g);
	for (uint32_t t = 0; t < c->m->ntracks; t++) {
		if (c->m->tracks[t].kind != MODEL_TRACK_THREAD)
			continue;
		g.track = t;
		int rc = view_agg_group(c, v, &g);
		if (rc)
			return rc;
	}
	return 0;
}

static int view_operator(struct report_ctx *c)
{
	return view_agg(c, AV_OPERATOR);
}

static int view_userdefined(struct report_ctx *c)
{
	return view_agg(c, AV_USERDEFINED);
}

static int view_memcpy(struct report_ctx *c)
{
	return view_agg(c, AV_MEMCPY);
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
	const struct model *m = c->m;
	struct agg a = { 0 };
	int64_t all = 0;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_DEVICE)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (!tree_is_kernel(tr->ranges.category[i]))
				continue;
			uint32_t it = agg_get(&a, AGG_NONE, tr->ranges.name[i], KIND_KERNEL);
			agg_add(&a, it, 0, tr->ranges.dur_ns[i]);
			all += tr->ranges.dur_ns[i];
		}
	}
	if (a.oom || a.n == 0) {
		agg_free(&a);
		return a.oom ? OPSCOPE_ENOMEM : 0;
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
		set_stats(&r->cells[cgpu], it, true, all);
	}
	int rc = !top || t->oom ? OPSCOPE_ENOMEM : 0;
	free(top);
	agg_free(&a);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* nvprof */

static const char *const copy_kinds[] = { "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "DtoA", "AtoD" };
#define NCOPY_KINDS (sizeof(copy_kinds) / sizeof(copy_kinds[0]))

/* nvprof names copies by kind ("[CUDA memcpy HtoD]" for "Memcpy HtoD (Pageable -> Device)")
 * and all memsets "[CUDA memset]": 1 + the kind's index for a copy, NCOPY_KINDS + 1 for a
 * memset, 0 for anything else (named as itself). */
static uint32_t nvprof_kind(const struct model *m, uint8_t cat, uint32_t name)
{
	if (cat == OPSCOPE_CAT_MEMSET)
		return NCOPY_KINDS + 1;
	if (cat != OPSCOPE_CAT_MEMCPY)
		return 0;
	const char *s = model_str(m, name);
	for (size_t k = 0; k < NCOPY_KINDS; k++)
		if (strstr(s, copy_kinds[k]))
			return 1 + (uint32_t)k;
	return 0;
}

enum { NV_GPU, NV_API, NV_COPY };

static int view_nvprof(struct report_ctx *c)
{
	const struct model *m = c->m;
	struct agg a = { 0 };
	int64_t sum[2] = { 0, 0 };
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t cat = tr->ranges.category[i];
			bool gpu = tr->kind == MODEL_TRACK_DEVICE && tree_is_device_work(cat);
			if (!gpu && !(tr->kind == MODEL_TRACK_THREAD && tree_is_runtime(cat)))
				continue;
			/* copies of one kind share a row: keyed by kind, not by name */
			uint32_t kind = gpu ? nvprof_kind(m, cat, tr->ranges.name[i]) : 0;
			uint32_t it = kind ? agg_get(&a, AGG_NONE, kind, NV_COPY)
					   : agg_get(&a, AGG_NONE, tr->ranges.name[i],
						     gpu ? NV_GPU : NV_API);
			agg_add(&a, it, 0, tr->ranges.dur_ns[i]);
			sum[gpu ? 0 : 1] += tr->ranges.dur_ns[i];
		}
	}
	if (a.oom || a.n == 0) {
		agg_free(&a);
		return a.oom ? OPSCOPE_ENOMEM : 0;
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
			if ((it->kind == NV_API) != (api == 1))
				continue;
			struct rrow *r = rtable_row(t, 0);
			if (!r)
				break;
			set_cstr(r, csec, api ? "api" : "gpu");
			if (it->kind != NV_COPY) {
				set_text(r, cname, m, it->name);
			} else {
				char buf[32];
				int len = it->name > NCOPY_KINDS
						  ? snprintf(buf, sizeof(buf), "[CUDA memset]")
						  : snprintf(buf, sizeof(buf), "[CUDA memcpy %s]",
							     copy_kinds[it->name - 1]);
				rcell_text(r, cname, rtable_str(t, buf, (size_t)len), (size_t)len);
			}
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
	const struct model *m = c->m;
	for (uint32_t f = 0; f < m->nfiles; f++) {
		struct step_table st;
		if (steps_analyze(&c->tree, f, &st) != 0)
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
			r->cells[ctot].i = k < st.nrows ? row->end_ns - row->start_ns : row->end_ns;
			for (int q = 0; q < STEP_NROLES; q++)
				r->cells[crole[q]].i = row->role_ns[q];
			r->cells[cgap].i = row->gap_ns;
			r->cells[ccomp].i = row->compute_ns;
			r->cells[ctail].i = row->tail_ns;
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

/* Paddle's benchmark summary from recorded steps that carry num_samples: per step the batch
 * cost (its duration), the reader cost (Dataloader time inside it) and the throughput. */
static int view_perf(struct report_ctx *c)
{
	const struct model *m = c->m;
	uint32_t key = model_find_str(m, "num_samples");
	if (!key)
		return 0;
	struct stat3 {
		double sum, max, min;
		uint64_t n;
	} st[3] = { { 0, 0, 1e300, 0 }, { 0, 0, 1e300, 0 }, { 0, 0, 1e300, 0 } };
	int64_t samples = 0, batch_total = 0;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint64_t a;
			if (r->category[i] != OPSCOPE_CAT_PROFILE_STEP ||
			    (a = model_range_arg(m, tt, i, key)) == MODEL_NONE ||
			    m->args.type[a] != MODEL_ARG_I64 || r->dur_ns[i] <= 0)
				continue;
			int64_t reader = 0, end = r->start_ns[i] + r->dur_ns[i];
			for (uint64_t j = i + 1; j < tr->nranges && r->start_ns[j] < end; j++)
				if (r->category[j] == OPSCOPE_CAT_DATALOADER &&
				    c->tree.tracks[tt].parent[j] == i)
					reader += r->dur_ns[j];
			double v[3] = { (double)reader / 1e9, (double)r->dur_ns[i] / 1e9,
					(double)(int64_t)m->args.bits[a] * 1e9 /
						(double)r->dur_ns[i] };
			for (int k = 0; k < 3; k++) {
				st[k].sum += v[k];
				st[k].max = v[k] > st[k].max ? v[k] : st[k].max;
				st[k].min = v[k] < st[k].min ? v[k] : st[k].min;
				st[k].n++;
			}
			samples += (int64_t)m->args.bits[a];
			batch_total += r->dur_ns[i];
		}
	}
	if (st[1].n == 0)
		return 0;
	struct rtable *t = ctx_table(c, "perf", "Perf Summary");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cname = rtable_col(t, "", "name", RCOL_TEXT, 12);
	int cavg = rtable_col(t, "avg", "avg", RCOL_NUMBER, 12);
	int cmax = rtable_col(t, "max", "max", RCOL_NUMBER, 12);
	int cmin = rtable_col(t, "min", "min", RCOL_NUMBER, 12);
	int cunit = rtable_col(t, "unit", "unit", RCOL_TEXT, 10);
	static const char *const names[] = { "reader_cost", "batch_cost", "ips" };
	for (int k = 0; k < 3; k++) {
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		set_cstr(r, cname, names[k]);
		set_cstr(r, cunit, k == 2 ? "samples/s" : "s");
		/* Paddle's units: seconds, and samples per second */
		r->cells[cavg].num = k == 2 ? (double)samples * 1e9 / (double)batch_total
					    : st[k].sum / (double)st[k].n;
		r->cells[cmax].num = st[k].max;
		r->cells[cmin].num = st[k].min;
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

/* Keep this list to what the views read: a report of a JSON trace loads no other argument
 * (tests/e2e compares reports with and without it on every corpus trace). */
const char *const report_arg_keys[] = { "correlation", "num_samples", NULL };

const struct report_view report_views[] = {
	{ "device", "utilization of the CPU (where recorded) and of each GPU", view_device, 0 },
	{ "overview", "time per event type, overlaps merged; GPU busy time", view_overview, 2 },
	{ "model", "Dataloader / Forward / Backward / Optimization / Others", view_model, 0 },
	{ "distributed", "communication, computation and their overlap", view_distributed, 1 },
	{ "operator", "operators, with their inner phases and kernels", view_operator, 1 },
	{ "kernel", "every GPU kernel by name", view_kernel, 0 },
	{ "memcpy", "memory manipulation ranges (memcpy, memset)", view_memcpy, 0 },
	{ "userdefined", "user-defined ranges (RecordEvent, record_function)", view_userdefined,
	  0 },
	{ "nvprof", "GPU activities and API calls, as nvprof prints them", view_nvprof, 0 },
	{ "step", "each step: time per kind of work, data wait, compute, tail", view_step, 3 },
	{ "perf", "reader cost, batch cost, throughput of steps with num_samples", view_perf, 0 },
	{ NULL, NULL, NULL, 0 },
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
