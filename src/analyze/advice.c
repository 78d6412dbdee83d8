/*
 * advice.c: the advisor (advice.h), in two parts. advice_measure reads one file: for each
 * rule of advice_rules[] the numbers and the names (at most ADVICE_TOP, in evidence order) its
 * finding would be made of, and the file's FLOPs rows; advice_combine holds them against the
 * thresholds, with what only the whole model knows, and writes the findings (at most one per
 * rule and file, per device for the GPU-idle rule), ranked by the time at stake. A report
 * runs both (advice_run); `opscope merge` runs the second on measurements read from partials,
 * so that its findings are the report's byte for byte. Thresholds are the documented ones of
 * the tools the rules come from, as constants below; docs/advice.md states each with its
 * reason.
 *
 * Invariants: a step rule fires only where the model has ProfileStep ranges (some file: a
 * file without any is then one step) and the file kept steps, a GPU rule only where the file
 * has device work, the rank rule only where two or more files have a rank and the rank
 * analysis aligned every clock (it reads that analysis and repeats none of it); a second copy
 * of a rank gets no finding. Nothing a measurement holds depends on another file: names are
 * ordered by their text, never by string id (a merge interns them in another order). A
 * finding's texts are cut at their buffers' sizes (the evidence lists at most ADVICE_TOP
 * names, so only very long trace names reach the end); trace names are copied as they are,
 * and the renderers escape them (a name cut inside a UTF-8 character included).
 */
#include "analyze/advice.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/flops.h"
#include "analyze/gpu_util.h"
#include "analyze/ranks.h"
#include "analyze/steps.h"
#include "analyze/tree.h"

/* Thresholds (docs/advice.md says why each). */
#define INPUT_SHARE    0.05  /* data wait / step: the TensorBoard plugin's DataLoader rule */
#define IDLE_BUSY      0.50  /* kernel busy share of a step: Nsight's gpu_time_util, TB */
#define SYNC_SHARE     0.01  /* blocked time in syncs / step time */
#define PAGEABLE_SHARE 0.01  /* pageable copy time / total time */
#define TINY_NS	       10000 /* a tiny kernel: under 10 us (TraceLens, HTA) */
#define TINY_SHARE     0.50  /* tiny kernels / kernels */
#define TINY_PER_STEP  100   /* tiny kernels per step, at least */
#define TC_SHARE       0.05  /* eligible kernel time off tensor cores / modelled kernel time */
#define COMM_SHARE     0.10  /* exposed communication / step: the TB plugin's rule */
#define FIRST_RATIO    1.5   /* first step / median of the others */
#define STRAG_SHARE    0.05  /* a straggler's margin / its step time, per step */
#define STRAG_STEPS    0.50  /* steps one rank led above STRAG_SHARE / steps compared */

const struct advice_rule advice_rules[ADVICE_NRULES] = {
	[ADVICE_INPUT_BOUND] = { "input_bound", "Input-bound steps",
				 "data wait > 5% of the step time (average over the steps)",
				 "TensorBoard plugin (DataLoader > 5%), MindInsight step_trace" },
	[ADVICE_GPU_IDLE] = { "gpu_idle", "GPU idle while the host works",
			      "kernels busy < 50% of a step",
			      "Nsight Systems gpu_time_util (50%), TensorBoard plugin (< 50%)" },
	[ADVICE_SYNC] = { "sync_in_step", "Synchronizations inside the steps",
			  "host blocked in syncs >= 1% of the step time",
			  "Nsight Systems cuda_api_sync, cuda_memcpy_sync" },
	[ADVICE_PAGEABLE] = { "pageable_copy", "Copies with pageable host memory",
			      "pageable copy time >= 1% of the total time",
			      "Nsight Systems cuda_memcpy_async" },
	[ADVICE_TINY_KERNELS] = { "tiny_kernels", "Many tiny kernels (launch-bound)",
				  ">= 50% of the kernels under 10 us and >= 100 of them per step",
				  "TraceLens short kernels (10 us), HTA kernel launch statistics" },
	[ADVICE_TENSOR_CORES] = { "tensor_cores", "Tensor-core eligible work off tensor cores",
				  "eligible kernel time without tensor cores >= 5% of the "
				  "modelled operators' kernel time",
				  "TensorBoard plugin (tensor cores unused), PyProf" },
	[ADVICE_EXPOSED_COMM] = { "exposed_comm", "Communication not overlapped with compute",
				  "exposed communication > 10% of the step time (average)",
				  "TensorBoard plugin (communication > 10%), HTA overlap" },
	[ADVICE_FIRST_STEP] = { "first_step_slow", "First step far slower than the rest",
				"first step > 1.5x the median of the other steps (3 steps or more)",
				"opscope (warm-up in the window)" },
	[ADVICE_STRAGGLER] = { "straggler", "A straggler rank",
			       "one rank last by > 5% of the step in >= half the steps (2+ ranks)",
			       "HTA straggler analysis, TensorBoard plugin distributed view" },
};

/* Each rule's threshold, the figure its finding's `measured` is held against. */
static const double rule_threshold[ADVICE_NRULES] = {
	[ADVICE_INPUT_BOUND] = INPUT_SHARE, [ADVICE_GPU_IDLE] = IDLE_BUSY,
	[ADVICE_SYNC] = SYNC_SHARE,	    [ADVICE_PAGEABLE] = PAGEABLE_SHARE,
	[ADVICE_TINY_KERNELS] = TINY_SHARE, [ADVICE_TENSOR_CORES] = TC_SHARE,
	[ADVICE_EXPOSED_COMM] = COMM_SHARE, [ADVICE_FIRST_STEP] = FIRST_RATIO,
	[ADVICE_STRAGGLER] = STRAG_SHARE,
};

static double frac(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Names summed by key: the evidence lists the top ones. */

struct tallies {
	struct advice_tally *v;
	uint32_t n, cap;
	bool oom;
};

static void tally_addn(struct tallies *T, uint32_t name, uint64_t n, int64_t ns)
{
	for (uint32_t i = 0; i < T->n; i++)
		if (T->v[i].name == name) {
			T->v[i].n += n;
			T->v[i].ns += ns;
			return;
		}
	if (T->n == T->cap) {
		uint32_t cap = T->cap ? T->cap * 2 : 16;
		struct advice_tally *v = realloc(T->v, cap * sizeof(*v));
		if (!v) {
			T->oom = true;
			return;
		}
		T->v = v;
		T->cap = cap;
	}
	T->v[T->n++] = (struct advice_tally){ name, n, ns };
}

static void tally_add(struct tallies *T, uint32_t name, int64_t ns)
{
	tally_addn(T, name, 1, ns);
}

/* Does x come before y in an evidence list: more time first, then by name's text (not its
 * string id: a merge interns the names in another order than a report). */
static bool tally_before(const struct model *m, const struct advice_tally *x,
			 const struct advice_tally *y)
{
	if (x->ns != y->ns)
		return x->ns > y->ns;
	return strcmp(model_str(m, x->name), model_str(m, y->name)) < 0;
}

/* The ADVICE_TOP first tallies of T in evidence order into top; their count. Frees T. */
static uint32_t tally_top(const struct model *m, struct tallies *T, struct advice_tally *top)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < T->n; i++) {
		uint32_t at = n < ADVICE_TOP ? n++ : ADVICE_TOP;
		while (at > 0 && tally_before(m, &T->v[i], &top[at - 1])) {
			if (at < ADVICE_TOP)
				top[at] = top[at - 1];
			at--;
		}
		if (at < ADVICE_TOP)
			top[at] = T->v[i];
	}
	free(T->v);
	T->v = NULL;
	T->n = T->cap = 0;
	return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Measuring one file */

/* Does file f have device work (kernels, copies, memsets)? Device tracks with ranges? */
static void file_device(const struct model *m, uint32_t f, bool *work, bool *tracks)
{
	*work = *tracks = false;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->file != f || tr->kind != MODEL_TRACK_DEVICE)
			continue;
		*tracks |= tr->nranges > 0;
		for (uint64_t i = 0; i < tr->nranges && !*work; i++)
			*work = tree_is_device_work(tr->ranges.category[i]);
	}
}

/* The step of a host range [s, e): index of a kept step (< t->nrows), or -1. */
static int64_t step_of(const struct step_table *t, int64_t s, int64_t e)
{
	uint32_t k = steps_find(t, s, e);
	return k < t->nrows ? (int64_t)k : -1;
}

static struct advice_step step_at(const struct step_row *r)
{
	return (struct advice_step){ r->name, r->start_ns, r->end_ns };
}

/* A step's data wait: its gap before compute (MindSpore's step trace: up to the end of the
 * last Dataloader range) or its DataLoader time, the larger. */
static int64_t data_wait(const struct step_row *r)
{
	return r->gap_ns > r->role_ns[STEP_DATALOADER] ? r->gap_ns : r->role_ns[STEP_DATALOADER];
}

/* Rules 1 and 7: per step, its data wait (comm false) or its exposed communication (the step
 * view's Communication column: communication no kernel, copy or memset covered). */
static void measure_part(const struct step_table *t, bool comm, double share, struct advice_part *p)
{
	p->worst_ns = -1;
	uint32_t wk = 0;
	for (uint32_t k = 0; k < t->nrows; k++) {
		const struct step_row *r = &t->rows[k];
		int64_t w = comm ? r->role_ns[STEP_COMMUNICATION] : data_wait(r);
		p->part_ns += w;
		p->over += frac(w, r->end_ns - r->start_ns) > share;
		if (w > p->worst_ns) {
			p->worst_ns = w;
			wk = k;
		}
	}
	if (t->nrows)
		p->worst = step_at(&t->rows[wk]);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Rule 8: the first step and the median of the others (of an even count, the mean of the two
 * middle ones). 0 or OPSCOPE_ENOMEM. */
static int measure_first(const struct step_table *t, struct advice_file *af)
{
	if (t->nrows < 3)
		return 0;
	int64_t *d = malloc((t->nrows - 1) * sizeof(*d));
	if (!d)
		return OPSCOPE_ENOMEM;
	/* steps of no length (a ProfileStep range with no duration) say nothing of the others:
	 * left out of the median, and two of the others must remain */
	uint32_t n = 0;
	for (uint32_t k = 1; k < t->nrows; k++)
		if (t->rows[k].end_ns > t->rows[k].start_ns)
			d[n++] = t->rows[k].end_ns - t->rows[k].start_ns;
	if (n >= 2) {
		qsort(d, n, sizeof(*d), cmp_i64);
		af->first_n = n;
		af->median_ns = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
		af->first = step_at(&t->rows[0]);
		af->first_ns = t->rows[0].end_ns - t->rows[0].start_ns;
	}
	free(d);
	return 0;
}

/* Is range i of track t an outermost operator without device work (no enclosing operator
 * without device work either)? */
static bool idle_operator(const struct tree *tr, const struct model *m, uint32_t t, uint64_t i)
{
	const struct model_ranges *r = &m->tracks[t].ranges;
	const struct tree_track *tt = &tr->tracks[t];
	if (r->category[i] != OPSCOPE_CAT_OPERATOR || tt->ggpu_ns[i] != 0)
		return false;
	for (uint64_t p = tt->parent[i]; p != MODEL_NONE; p = tt->parent[p])
		if (r->category[p] == OPSCOPE_CAT_OPERATOR && tt->ggpu_ns[p] == 0)
			return false;
	return true;
}

/* Rule 2: per device of the file, the steps where kernels ran < 50% of the time, their idle
 * time less their data wait (rule 1's), and the operators with the most CPU time and no
 * device work in them. Only the devices with such steps and idle time are kept. 0 or
 * OPSCOPE_ENOMEM. */
static int measure_idle(const struct analysis *a, const struct step_table *t,
			const struct gpu_util *u, struct advice_file *af)
{
	const struct model *m = a->m;
	for (uint32_t g = 0; g < u->ndev; g++) {
		const struct gpu_util_device *dv = &u->dev[g];
		if (dv->file != t->file || dv->nsteps != t->nrows || dv->kernels == 0)
			continue;
		bool *low = calloc(t->nrows, sizeof(*low));
		if (!low)
			return OPSCOPE_ENOMEM;
		struct advice_idle x = { .device = dv->device };
		int64_t worst = -1;
		uint32_t wk = 0;
		for (uint32_t k = 0; k < t->nrows; k++) {
			const struct gpu_util_span *sp = &dv->steps[k];
			int64_t d = sp->e - sp->s;
			if (frac(sp->kernel_ns, d) >= IDLE_BUSY)
				continue;
			int64_t i = d - sp->kernel_ns - data_wait(&t->rows[k]);
			low[k] = true;
			x.over++;
			x.span_ns += d;
			x.busy_ns += sp->kernel_ns;
			x.idle_ns += i > 0 ? i : 0;
			if (i > worst) {
				worst = i;
				wk = k;
			}
		}
		if (x.over == 0 || x.idle_ns <= 0) {
			free(low);
			continue;
		}
		struct tallies T = { 0 };
		for (uint32_t tk = 0; tk < m->ntracks; tk++) {
			const struct model_track *tr = &m->tracks[tk];
			if (tr->file != t->file || tr->kind != MODEL_TRACK_THREAD)
				continue;
			for (uint64_t i = 0; i < tr->nranges; i++) {
				if (!idle_operator(&a->tree, m, tk, i))
					continue;
				int64_t s = tr->ranges.start_ns[i], e = s + tr->ranges.dur_ns[i];
				int64_t k = step_of(t, s, e);
				if (k >= 0 && low[k])
					tally_add(&T, tr->ranges.name[i], e - s);
			}
		}
		free(low);
		bool oom = T.oom;
		x.ntop = tally_top(m, &T, x.top);
		x.worst = step_at(&t->rows[wk]);
		x.worst_busy_ns = dv->steps[wk].kernel_ns;
		struct advice_idle *v =
			oom ? NULL : realloc(af->idle, (af->nidle + 1) * sizeof(*v));
		if (!v)
			return OPSCOPE_ENOMEM;
		af->idle = v;
		af->idle[af->nidle++] = x;
	}
	return 0;
}

/* The synchronizing runtime calls: device/stream/event synchronize, and the blocking (not
 * Async) cudaMemcpy family. */
static bool is_sync_call(const char *s)
{
	if (strncmp(s, "cudaDeviceSynchronize", 21) == 0 ||
	    strncmp(s, "cudaStreamSynchronize", 21) == 0 ||
	    strncmp(s, "cudaEventSynchronize", 20) == 0)
		return true;
	return strncmp(s, "cudaMemcpy", 10) == 0 && !strstr(s, "Async");
}

/* Rule 3: synchronizing runtime calls inside the steps; each is credited to its outermost
 * enclosing operator (aten::item, aten::to for .cpu()), or to itself. 0 or OPSCOPE_ENOMEM. */
static int measure_sync(const struct analysis *a, const struct step_table *t,
			struct advice_file *af)
{
	const struct model *m = a->m;
	const struct tree *tr = &a->tree;
	struct tallies T = { 0 };
	uint32_t *per = calloc(t->nrows, sizeof(*per));
	if (!per)
		return OPSCOPE_ENOMEM;
	af->sync_worst_ns = -1;
	for (uint32_t tk = 0; tk < m->ntracks; tk++) {
		const struct model_track *trk = &m->tracks[tk];
		if (trk->file != t->file || trk->kind != MODEL_TRACK_THREAD)
			continue;
		const struct model_ranges *r = &trk->ranges;
		for (uint64_t i = 0; i < trk->nranges; i++) {
			if (!tree_is_runtime(r->category[i]) ||
			    !is_sync_call(model_str(m, r->name[i])))
				continue;
			int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
			int64_t k = step_of(t, s, e);
			if (k < 0)
				continue;
			uint32_t who = r->name[i];
			for (uint64_t p = tr->tracks[tk].parent[i]; p != MODEL_NONE;
			     p = tr->tracks[tk].parent[p])
				if (r->category[p] == OPSCOPE_CAT_OPERATOR)
					who = r->name[p];
			tally_add(&T, who, e - s);
			per[k]++;
			af->sync_calls++;
			af->sync_ns += e - s;
			if (e - s > af->sync_worst_ns) {
				af->sync_worst_ns = e - s;
				af->sync_s = s;
				af->sync_e = e;
			}
		}
	}
	for (uint32_t k = 0; k < t->nrows; k++)
		af->sync_steps += per[k] > 0;
	free(per);
	bool oom = T.oom;
	af->sync_ntop = tally_top(m, &T, af->sync_top);
	return oom ? OPSCOPE_ENOMEM : 0;
}

/* Rule 4: copies whose name says a side was pageable ("Memcpy HtoD (Pageable -> Device)"),
 * with their "bytes" argument where the trace has it. 0 or OPSCOPE_ENOMEM. */
static int measure_pageable(const struct model *m, uint32_t f, struct advice_file *af)
{
	uint32_t kb = model_find_str(m, "bytes");
	struct tallies T = { 0 };
	af->page_worst_ns = -1;
	for (uint32_t tk = 0; tk < m->ntracks; tk++) {
		const struct model_track *tr = &m->tracks[tk];
		if (tr->file != f || tr->kind != MODEL_TRACK_DEVICE)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (r->category[i] != OPSCOPE_CAT_MEMCPY ||
			    !strstr(model_str(m, r->name[i]), "Pageable"))
				continue;
			af->page_n++;
			af->page_ns += r->dur_ns[i];
			tally_add(&T, r->name[i], r->dur_ns[i]);
			uint64_t x = kb ? model_range_arg(m, tk, i, kb) : MODEL_NONE;
			if (x != MODEL_NONE &&
			    (m->args.type[x] == MODEL_ARG_I64 || m->args.type[x] == MODEL_ARG_U64))
				af->page_bytes += m->args.bits[x];
			if (r->dur_ns[i] > af->page_worst_ns) {
				af->page_worst_ns = r->dur_ns[i];
				af->page_s = r->start_ns[i];
				af->page_e = af->page_s + r->dur_ns[i];
			}
		}
	}
	bool oom = T.oom;
	af->page_ntop = tally_top(m, &T, af->page_top);
	return oom ? OPSCOPE_ENOMEM : 0;
}

/* Rule 5: kernels launched from inside the steps (the whole trace without steps), by their
 * duration, and the host time of the runtime calls that launched the tiny ones. */
static void measure_tiny(const struct analysis *a, const struct step_table *t,
			 struct advice_file *af)
{
	const struct model *m = a->m;
	const struct tree *tr = &a->tree;
	for (uint32_t tk = 0; tk < m->ntracks; tk++) {
		const struct model_track *trk = &m->tracks[tk];
		if (trk->file != t->file || trk->kind != MODEL_TRACK_THREAD)
			continue;
		const struct model_ranges *r = &trk->ranges;
		for (uint64_t i = 0; i < trk->nranges; i++) {
			if (!tree_is_runtime(r->category[i]))
				continue;
			uint32_t l =
				tr->tracks[tk].launches ? tr->tracks[tk].launches[i] : TREE_NONE;
			if (l == TREE_NONE ||
			    step_of(t, r->start_ns[i], r->start_ns[i] + r->dur_ns[i]) < 0)
				continue;
			bool any = false;
			for (; l != TREE_NONE; l = tr->launches[l].next) {
				const struct model_ranges *d =
					&m->tracks[tr->launches[l].track].ranges;
				uint64_t j = tr->launches[l].range;
				if (d->category[j] != OPSCOPE_CAT_KERNEL)
					continue;
				af->kernels++;
				if (d->dur_ns[j] < TINY_NS) {
					af->tiny++;
					af->tiny_ns += d->dur_ns[j];
					any = true;
				}
			}
			if (any)
				af->launch_ns += r->dur_ns[i];
		}
	}
}

int advice_tc_rows(const struct flops_result *fr, struct advice_file *af)
{
	if (fr->nrows && !(af->tc = calloc(fr->nrows, sizeof(*af->tc))))
		return OPSCOPE_ENOMEM;
	for (uint32_t i = 0; i < fr->nrows; i++) {
		const struct flops_row *r = &fr->rows[i];
		/* without device time flops_run gives CPU rows the peaks by hand: no device's */
		uint8_t peaks = !fr->device_time ? 0
				: r->peaks	 ? (r->peaks->tf32_flops > 0 ? 3 : 2)
				: r->device_name ? 1
						 : 0;
		af->tc[af->ntc++] =
			(struct advice_tc_row){ r->name,     r->shapes,	     r->dtypes,
						r->backward, r->tc_eligible, r->tc_ns != 0,
						peaks,	     r->calls,	     r->kernel_ns };
	}
	return 0;
}

/* Rule 6: the FLOPs rows of the file alone: its share (flops_file) combined alone, as a model
 * of that file gives them. 0 or OPSCOPE_ENOMEM. */
static int measure_tc(const struct analysis *a, const struct flops_opts *fo, uint32_t f,
		      struct advice_file *af)
{
	struct flops_opts o = { .peaks = fo ? fo->peaks : NULL };
	struct flops_part part;
	struct flops_result fr;
	memset(&fr, 0, sizeof(fr));
	int rc = flops_file(a, f, &part);
	if (rc == 0)
		rc = flops_combine(&o, &part, 1, &fr) == 0 ? 0 : OPSCOPE_ENOMEM;
	if (rc == 0)
		rc = advice_tc_rows(&fr, af);
	flops_free(&fr);
	flops_part_free(&part);
	return rc;
}

int advice_measure(const struct analysis *a, const struct gpu_util *u, uint32_t f,
		   struct advice_file *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	out->file = f;
	file_device(m, f, &out->gpu, &out->device_tracks);
	struct analysis_total at;
	analysis_file_total(a, f, &at);
	out->own_steps = at.steps.n > 0;
	ivec_free(&at.steps);
	struct step_table t;
	if (steps_analyze(&a->tree, f, &t) != 0)
		return OPSCOPE_ENOMEM;
	out->nrows = t.nrows;
	for (uint32_t k = 0; k < t.nrows; k++)
		out->steps_ns += t.rows[k].end_ns - t.rows[k].start_ns;
	if (t.nrows) {
		out->steps_s = t.rows[0].start_ns;
		out->steps_e = t.rows[t.nrows - 1].end_ns;
	}
	measure_part(&t, false, INPUT_SHARE, &out->input);
	measure_part(&t, true, COMM_SHARE, &out->comm);
	int rc = measure_first(&t, out);
	if (rc == 0 && out->gpu && t.nrows) {
		rc = measure_idle(a, &t, u, out);
		if (rc == 0)
			rc = measure_sync(a, &t, out);
	}
	if (rc == 0 && out->gpu) {
		rc = measure_pageable(m, f, out);
		measure_tiny(a, &t, out);
	}
	steps_free(&t);
	if (rc != 0)
		advice_file_free(out);
	return rc;
}

void advice_file_free(struct advice_file *af)
{
	free(af->idle);
	free(af->tc);
	memset(af, 0, sizeof(*af));
}

/* ---------------------------------------------------------------------------------------- */
/* Findings */

/* The work of one advice_combine. */
struct adv {
	const struct model *m; /* the strings of the measurements */
	struct advice *out;    /* the findings */
	uint32_t cap;	       /* findings allocated */
	bool oom;	       /* an allocation failed */
};

/* A new finding of rule r about file f (ADVICE_NO_FILE: every file), with the time at stake,
 * the time it is a share of and the measured figure (held against the rule's threshold);
 * NULL when out of memory (X->oom set). */
static struct advice_finding *add(struct adv *X, enum advice_rule_id r, uint32_t f,
				  int64_t at_stake_ns, int64_t base_ns, double measured)
{
	if (X->out->n == X->cap) {
		uint32_t cap = X->cap ? X->cap * 2 : 8;
		struct advice_finding *v = realloc(X->out->v, cap * sizeof(*v));
		if (!v) {
			X->oom = true;
			return NULL;
		}
		X->out->v = v;
		X->cap = cap;
	}
	struct advice_finding *x = &X->out->v[X->out->n++];
	memset(x, 0, sizeof(*x));
	x->rule = (uint8_t)r;
	x->file = f;
	x->at_stake_ns = at_stake_ns;
	x->base_ns = base_ns;
	x->measured = measured;
	x->threshold = rule_threshold[r];
	return x;
}

/* A time as text: "12.34 ms" from 1 ms up, else "123.4 us". */
static const char *tm(char *buf, size_t size, int64_t ns)
{
	if (ns >= 1000000 || ns <= -1000000)
		snprintf(buf, size, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.1f us", (double)ns / 1e3);
	return buf;
}

/* Append printf text to buf (size bytes, NUL-terminated), cutting what does not fit. */
__attribute__((format(printf, 3, 4))) static void cat(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	if (n + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

static const char *step_name(const struct model *m, const struct advice_step *s)
{
	return s->name ? model_str(m, s->name) : "the trace";
}

/* Append "name (n, time)" of the n tallies of top (in evidence order) to buf. */
static void tally_list(const struct model *m, const struct advice_tally *top, uint32_t n, char *buf,
		       size_t size)
{
	char b[32];
	for (uint32_t i = 0; i < n; i++)
		cat(buf, size, "%s%s (%llu, %s)", i ? ", " : "", model_str(m, top[i].name),
		    (unsigned long long)top[i].n, tm(b, sizeof(b), top[i].ns));
}

/* Rule 1: data wait over the steps' time. */
static void rule_input(struct adv *X, const struct advice_file *af)
{
	const struct advice_part *p = &af->input;
	double share = frac(p->part_ns, af->steps_ns);
	if (share <= INPUT_SHARE)
		return;
	struct advice_finding *x =
		add(X, ADVICE_INPUT_BOUND, af->file, p->part_ns, af->steps_ns, share);
	if (!x)
		return;
	char b1[32], b2[32], b3[32];
	x->steps = p->over;
	x->start_ns = p->worst.start_ns;
	x->end_ns = p->worst.end_ns;
	snprintf(x->finding, sizeof(x->finding),
		 "steps wait for input data %.1f%% of their time (%s of %s over %u steps)",
		 share * 100, tm(b1, sizeof(b1), p->part_ns), tm(b2, sizeof(b2), af->steps_ns),
		 af->nrows);
	snprintf(x->evidence, sizeof(x->evidence),
		 "%u of %u steps above 5%%; worst %s: %s of data wait in %s (gap before compute "
		 "or DataLoader time)",
		 p->over, af->nrows, step_name(X->m, &p->worst), tm(b1, sizeof(b1), p->worst_ns),
		 tm(b3, sizeof(b3), p->worst.end_ns - p->worst.start_ns));
	x->change = "load data in parallel with the step: DataLoader(num_workers=N, "
		    "pin_memory=True, prefetch_factor=2, persistent_workers=True), and move "
		    "decoding and augmentation off the training process";
}

/* Rule 7: exposed communication over the steps' time. */
static void rule_comm(struct adv *X, const struct advice_file *af)
{
	const struct advice_part *p = &af->comm;
	double share = frac(p->part_ns, af->steps_ns);
	if (share <= COMM_SHARE)
		return;
	struct advice_finding *x =
		add(X, ADVICE_EXPOSED_COMM, af->file, p->part_ns, af->steps_ns, share);
	if (!x)
		return;
	char b1[32], b2[32];
	x->steps = p->over;
	x->start_ns = p->worst.start_ns;
	x->end_ns = p->worst.end_ns;
	snprintf(x->finding, sizeof(x->finding),
		 "communication not overlapped with compute takes %.1f%% of the steps (%s of %s)",
		 share * 100, tm(b1, sizeof(b1), p->part_ns), tm(b2, sizeof(b2), af->steps_ns));
	snprintf(x->evidence, sizeof(x->evidence),
		 "%u of %u steps above 10%%; worst %s: %s exposed", p->over, af->nrows,
		 step_name(X->m, &p->worst), tm(b1, sizeof(b1), p->worst_ns));
	x->change = "overlap gradient all-reduce with backward (DDP bucket_cap_mb, "
		    "gradient_as_bucket_view), accumulate gradients over more micro-batches "
		    "(no_sync), or compress gradients";
}

/* Rule 8: the first step against the median of the others. */
static void rule_first(struct adv *X, const struct advice_file *af)
{
	int64_t first = af->first_ns, med = af->median_ns;
	if (af->first_n == 0 || med <= 0 || (double)first <= FIRST_RATIO * (double)med)
		return;
	struct advice_finding *x = add(X, ADVICE_FIRST_STEP, af->file, first - med, first,
				       (double)first / (double)med);
	if (!x)
		return;
	char b1[32], b2[32];
	x->steps = 1;
	x->start_ns = af->first.start_ns;
	x->end_ns = af->first.end_ns;
	snprintf(x->finding, sizeof(x->finding),
		 "the first step took %.2fx the median of the other %u steps (%s against %s)",
		 x->measured, af->first_n, tm(b1, sizeof(b1), first), tm(b2, sizeof(b2), med));
	snprintf(x->evidence, sizeof(x->evidence),
		 "%s: warm-up (cuDNN autotuning, allocator growth, lazy init, compilation) "
		 "inside the profiled window skews the averages",
		 step_name(X->m, &af->first));
	x->change = "keep warm-up out of the window: torch.profiler.schedule(wait=1, warmup=1, "
		    "active=N), or start recording after the first iterations";
}

/* Rule 2: per device, the steps where kernels ran < 50% of the time. The time at stake is
 * the idle time of those steps less their data wait (rule 1's). */
static void rule_idle(struct adv *X, const struct advice_file *af)
{
	const struct model *m = X->m;
	for (uint32_t g = 0; g < af->nidle; g++) {
		const struct advice_idle *d = &af->idle[g];
		struct advice_finding *x = add(X, ADVICE_GPU_IDLE, af->file, d->idle_ns, d->span_ns,
					       frac(d->busy_ns, d->span_ns));
		if (!x)
			return;
		char b1[32], b2[32];
		x->steps = d->over;
		x->start_ns = d->worst.start_ns;
		x->end_ns = d->worst.end_ns;
		snprintf(x->finding, sizeof(x->finding),
			 "GPU%u ran no kernel for %s of %s in %u of %u steps (kernels busy < 50%%; "
			 "data wait not counted)",
			 d->device, tm(b1, sizeof(b1), d->idle_ns), tm(b2, sizeof(b2), d->span_ns),
			 d->over, af->nrows);
		snprintf(x->evidence, sizeof(x->evidence), "worst %s: %.1f%% busy; ",
			 step_name(m, &d->worst),
			 100 * frac(d->worst_busy_ns, d->worst.end_ns - d->worst.start_ns));
		if (d->ntop) {
			cat(x->evidence, sizeof(x->evidence),
			    "operators with CPU time and no device work: ");
			tally_list(m, d->top, d->ntop, x->evidence, sizeof(x->evidence));
		} else {
			cat(x->evidence, sizeof(x->evidence),
			    "no operator without device work: launch overhead or Python between "
			    "operators");
		}
		x->change = "feed the GPU faster: larger batches, CUDA graphs or torch.compile "
			    "(mode=\"reduce-overhead\") for launch overhead, and move the CPU "
			    "operators listed to the GPU or out of the step";
	}
}

/* Rule 3: synchronizing runtime calls inside the steps. */
static void rule_sync(struct adv *X, const struct advice_file *af)
{
	int64_t blocked = af->sync_ns, total = af->steps_ns;
	double share = frac(blocked, total);
	if (af->sync_calls == 0 || share < SYNC_SHARE)
		return;
	struct advice_finding *x = add(X, ADVICE_SYNC, af->file, blocked, total, share);
	if (!x)
		return;
	char b1[32], b2[32];
	x->steps = af->sync_steps;
	x->start_ns = af->sync_s;
	x->end_ns = af->sync_e;
	snprintf(x->finding, sizeof(x->finding),
		 "the host waited on the GPU in %llu synchronizations inside the steps: %s, "
		 "%.1f%% of the step time (%.1f per step, %s per step)",
		 (unsigned long long)af->sync_calls, tm(b1, sizeof(b1), blocked), share * 100,
		 (double)af->sync_calls / af->nrows, tm(b2, sizeof(b2), blocked / af->nrows));
	snprintf(x->evidence, sizeof(x->evidence), "in %u of %u steps, from: ", af->sync_steps,
		 af->nrows);
	tally_list(X->m, af->sync_top, af->sync_ntop, x->evidence, sizeof(x->evidence));
	cat(x->evidence, sizeof(x->evidence), "; longest %s",
	    tm(b1, sizeof(b1), af->sync_worst_ns));
	x->change = "drop per-step .item(), .cpu(), print and torch.cuda.synchronize() from the "
		    "loop (accumulate metrics on the GPU, read them every N steps), and use "
		    "non_blocking copies";
}

/* Rule 4: pageable copies over the total time of every file. */
static void rule_pageable(struct adv *X, const struct advice_file *af, int64_t total)
{
	int64_t ns = af->page_ns;
	double share = frac(ns, total);
	if (af->page_n == 0 || share < PAGEABLE_SHARE)
		return;
	struct advice_finding *x = add(X, ADVICE_PAGEABLE, af->file, ns, total, share);
	if (!x)
		return;
	char b1[32];
	x->start_ns = af->page_s;
	x->end_ns = af->page_e;
	snprintf(x->finding, sizeof(x->finding),
		 "%llu copies used pageable host memory: %s, %.1f%% of the total time",
		 (unsigned long long)af->page_n, tm(b1, sizeof(b1), ns), share * 100);
	if (af->page_bytes)
		snprintf(x->evidence, sizeof(x->evidence), "%.1f MB moved; ",
			 (double)af->page_bytes / 1e6);
	tally_list(X->m, af->page_top, af->page_ntop, x->evidence, sizeof(x->evidence));
	cat(x->evidence, sizeof(x->evidence), "; longest %s",
	    tm(b1, sizeof(b1), af->page_worst_ns));
	x->change = "copy from pinned memory: DataLoader(pin_memory=True) or tensor.pin_memory(), "
		    "then .to(device, non_blocking=True)";
}

/* Rule 5: most kernels under 10 us, and many of them per step; the time at stake is the host
 * time of the runtime calls that launched them. */
static void rule_tiny(struct adv *X, const struct advice_file *af)
{
	uint32_t nsteps = af->nrows ? af->nrows : 1;
	double share = af->kernels ? (double)af->tiny / (double)af->kernels : 0;
	if (share < TINY_SHARE || af->tiny < (uint64_t)TINY_PER_STEP * nsteps)
		return;
	struct advice_finding *x =
		add(X, ADVICE_TINY_KERNELS, af->file, af->launch_ns, af->steps_ns, share);
	if (!x)
		return;
	char b1[32], b2[32];
	x->steps = af->nrows;
	if (af->nrows) {
		x->start_ns = af->steps_s;
		x->end_ns = af->steps_e;
	}
	snprintf(x->finding, sizeof(x->finding),
		 "%.1f%% of the kernels ran under 10 us (%llu of %llu, %.0f per step): "
		 "launch-bound",
		 share * 100, (unsigned long long)af->tiny, (unsigned long long)af->kernels,
		 (double)af->tiny / nsteps);
	snprintf(x->evidence, sizeof(x->evidence),
		 "the tiny kernels ran %s in all; the runtime calls that launched them took %s "
		 "of host time",
		 tm(b1, sizeof(b1), af->tiny_ns), tm(b2, sizeof(b2), af->launch_ns));
	x->change = "launch fewer, larger kernels: torch.compile or fused operators (fused "
		    "optimizers: foreach=True / fused=True), CUDA graphs, larger batches";
}

/* A FLOPs row of one file, for pooling the files' rows by key. */
struct tc_ref {
	uint32_t name, shapes, dtypes;	 /* the key's string ids */
	bool backward;			 /* the key's direction */
	uint32_t file;			 /* index in the files given (model order) */
	const struct advice_tc_row *row; /* the row */
};

static int tc_ref_cmp(const void *a, const void *b)
{
	const struct tc_ref *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->shapes != y->shapes)
		return x->shapes < y->shapes ? -1 : 1;
	if (x->dtypes != y->dtypes)
		return x->dtypes < y->dtypes ? -1 : 1;
	if (x->backward != y->backward)
		return x->backward < y->backward ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

/* Rule 6: operators the FLOPs model calls tensor-core eligible whose kernels never used them,
 * over the rows of every file pooled as flops_run of the whole model pools them: a row's
 * calls and times summed, its eligibility that of its first call (the first file's), its
 * tensor-core use any file's, its device that of its first kernel (the first file that ran
 * one). */
static void rule_tc(struct adv *X, const struct advice_file *files, uint32_t n)
{
	size_t nref = 0;
	for (uint32_t i = 0; i < n; i++)
		nref += files[i].ntc;
	if (nref == 0)
		return;
	struct tc_ref *ref = malloc(nref * sizeof(*ref));
	if (!ref) {
		X->oom = true;
		return;
	}
	nref = 0;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < files[i].ntc; j++) {
			const struct advice_tc_row *r = &files[i].tc[j];
			ref[nref++] =
				(struct tc_ref){ r->name, r->shapes, r->dtypes, r->backward, i, r };
		}
	qsort(ref, nref, sizeof(*ref), tc_ref_cmp);
	int64_t all = 0, off = 0;
	int tf32 = -1; /* the devices have TF32: 1, do not: 0, not known: -1 */
	struct tallies T = { 0 };
	for (size_t g = 0, e; g < nref; g = e) {
		bool tc = false;
		uint8_t peaks = 0;
		uint64_t calls = 0;
		int64_t kernel_ns = 0;
		for (e = g;
		     e < nref && ref[e].name == ref[g].name && ref[e].shapes == ref[g].shapes &&
		     ref[e].dtypes == ref[g].dtypes && ref[e].backward == ref[g].backward;
		     e++) {
			const struct advice_tc_row *r = ref[e].row;
			tc |= r->tc;
			peaks = peaks ? peaks : r->peaks;
			calls += r->calls;
			kernel_ns += r->kernel_ns;
		}
		all += kernel_ns;
		if (!ref[g].row->eligible || tc || kernel_ns <= 0)
			continue;
		off += kernel_ns;
		if (peaks >= 2)
			tf32 = peaks == 3 ? 1 : tf32 < 0 ? 0 : tf32;
		tally_addn(&T, ref[g].name, calls, kernel_ns);
	}
	free(ref);
	double share = frac(off, all);
	if (T.oom)
		X->oom = true;
	struct advice_tally top[ADVICE_TOP];
	uint32_t ntop = tally_top(X->m, &T, top);
	if (off == 0 || share < TC_SHARE || X->oom)
		return;
	struct advice_finding *x = add(X, ADVICE_TENSOR_CORES, ADVICE_NO_FILE, off, all, share);
	if (!x)
		return;
	char b1[32], b2[32];
	snprintf(x->finding, sizeof(x->finding),
		 "%s of kernel time (%.1f%% of the modelled operators') was tensor-core eligible "
		 "but ran without tensor cores (of %s)",
		 tm(b1, sizeof(b1), off), share * 100, tm(b2, sizeof(b2), all));
	snprintf(x->evidence, sizeof(x->evidence), "operators (calls, kernel time): ");
	tally_list(X->m, top, ntop, x->evidence, sizeof(x->evidence));
	x->change = tf32 == 1	? "allow TF32 for float32 matrix work "
				  "(torch.backends.cuda.matmul.allow_tf32 = True, "
				  "torch.backends.cudnn.allow_tf32 = True), or run it under "
				  "torch.autocast(\"cuda\", dtype=torch.bfloat16)"
		    : tf32 == 0 ? "run matrix work in float16: torch.autocast(\"cuda\", "
				  "dtype=torch.float16) with a GradScaler (this GPU has no TF32 or "
				  "bfloat16 tensor cores)"
				: "run matrix work in reduced precision: torch.autocast(\"cuda\") "
				  "(bfloat16, or float16 with a GradScaler), or allow TF32 on GPUs "
				  "that have it";
}

/* ---------------------------------------------------------------------------------------- */
/* Rank rule */

/* Rule 9: over the steps ranks.h compares, the rank that ended last (its ready time: the
 * step's end less its waits at collectives) by more than STRAG_SHARE of its step, in at least
 * STRAG_STEPS of the steps, and more of them than any other rank. The time at stake is its
 * margins summed: how long the next rank, and so every other rank, waited for it. Silent when
 * the clocks could not all be aligned from collectives: the margins would then be clock skew. */
static void rule_straggler(struct adv *X, const struct ranks *R)
{
	const struct model *m = X->m;
	uint32_t *led = calloc(R->nranks ? R->nranks : 1, sizeof(*led));
	int64_t *sum = calloc(R->nranks ? R->nranks : 1, sizeof(*sum));
	if (!led || !sum) {
		X->oom = true;
		goto out;
	}
	if (R->nranks < 2 || R->nsteps == 0 || !R->aligned)
		goto out;
	/* the steps each rank led above the threshold, and its margins there */
	for (uint32_t k = 0; k < R->nsteps; k++) {
		const struct ranks_step *s = &R->steps[k];
		if ((double)s->margin_ns > STRAG_SHARE * (double)s->per[s->straggler].step_ns) {
			led[s->straggler]++;
			sum[s->straggler] += s->margin_ns;
		}
	}
	uint32_t w = 0; /* the rank that led the most steps */
	for (uint32_t r = 1; r < R->nranks; r++)
		if (led[r] > led[w])
			w = r;
	if (led[w] == 0 || (double)led[w] < STRAG_STEPS * (double)R->nsteps)
		goto out;
	for (uint32_t r = 0; r < R->nranks; r++)
		if (r != w && led[r] == led[w])
			goto out; /* two ranks share the role (1 of 2 steps each): no one straggler */
	/* per cause: steps and margins; the worst step; the steps by margin for the evidence */
	uint32_t ncause[4] = { 0 };
	int64_t mcause[4] = { 0 }, xcause[4] = { 0 }, total = 0, flagged = 0;
	int64_t late_worst = -1;
	uint64_t late_coll = UINT64_MAX;
	uint32_t worst = UINT32_MAX, top[ADVICE_TOP], ntop = 0;
	for (uint32_t k = 0; k < R->nsteps; k++) {
		const struct ranks_step *s = &R->steps[k];
		total += s->per[w].step_ns;
		if (s->straggler != w ||
		    (double)s->margin_ns <= STRAG_SHARE * (double)s->per[w].step_ns)
			continue;
		flagged += s->per[w].step_ns;
		ncause[s->why]++;
		mcause[s->why] += s->margin_ns;
		xcause[s->why] += s->why_ns;
		if (s->why == RANKS_WHY_LATE && s->why_ns > late_worst) {
			late_worst = s->why_ns;
			late_coll = s->why_coll;
		}
		if (worst == UINT32_MAX || s->margin_ns > R->steps[worst].margin_ns)
			worst = k;
		/* keep the ADVICE_TOP largest margins, largest first (ties: the earlier step) */
		uint32_t at = ntop < ADVICE_TOP ? ntop++ : ADVICE_TOP;
		while (at > 0 && R->steps[top[at - 1]].margin_ns < s->margin_ns) {
			if (at < ADVICE_TOP)
				top[at] = top[at - 1];
			at--;
		}
		if (at < ADVICE_TOP)
			top[at] = k;
	}
	enum ranks_why cause = RANKS_WHY_NONE; /* the cause with the largest margins summed */
	for (int c = RANKS_WHY_DATA; c <= RANKS_WHY_LATE; c++)
		if (mcause[c] > mcause[cause])
			cause = (enum ranks_why)c;
	const struct ranks_rank *rk = &R->ranks[w];
	struct advice_finding *x =
		add(X, ADVICE_STRAGGLER, rk->file, sum[w], total, frac(sum[w], flagged));
	if (!x)
		goto out;
	char b1[32], b2[32], b3[32];
	x->steps = led[w];
	x->start_ns = rk->steps[worst].start_ns;
	x->end_ns = rk->steps[worst].end_ns;
	snprintf(x->finding, sizeof(x->finding),
		 "rank %d%s%s ended last in %u of %u steps, by %s on average (%.1f%% of its step): "
		 "the other ranks waited %s for it",
		 rk->rank, rk->host ? " on " : "", rk->host ? model_str(m, rk->host) : "", led[w],
		 R->nsteps, tm(b1, sizeof(b1), sum[w] / led[w]), x->measured * 100,
		 tm(b2, sizeof(b2), sum[w]));
	snprintf(x->evidence, sizeof(x->evidence), "steps (margin): ");
	for (uint32_t i = 0; i < ntop; i++) {
		const struct ranks_step *s = &R->steps[top[i]];
		cat(x->evidence, sizeof(x->evidence), "%s%s (%s)", i ? ", " : "",
		    s->name ? model_str(m, s->name) : "step", tm(b1, sizeof(b1), s->margin_ns));
	}
	cat(x->evidence, sizeof(x->evidence), "; why:");
	bool first = true;
	for (int c = RANKS_WHY_DATA; c <= RANKS_WHY_LATE; c++) {
		if (!ncause[c])
			continue;
		tm(b1, sizeof(b1), xcause[c] / ncause[c]);
		if (c == RANKS_WHY_LATE)
			cat(x->evidence, sizeof(x->evidence),
			    "%s arrived late at a collective in %u (%s after the next rank, on "
			    "average)",
			    first ? "" : ",", ncause[c], b1);
		else
			cat(x->evidence, sizeof(x->evidence),
			    "%s %s in %u (%s more than the other ranks' median, on average)",
			    first ? "" : ",",
			    c == RANKS_WHY_DATA ? "waited for data" : "longer compute", ncause[c],
			    b1);
		first = false;
	}
	if (ncause[RANKS_WHY_NONE])
		cat(x->evidence, sizeof(x->evidence), "%s no cause found in %u", first ? "" : ",",
		    ncause[RANKS_WHY_NONE]);
	if (late_coll < R->ncolls) {
		const char *kn = model_str(m, R->colls[late_coll].name);
		cat(x->evidence, sizeof(x->evidence), "; latest at #%u %.*s (%s)",
		    R->colls[late_coll].seq, (int)strcspn(kn, "("), kn,
		    tm(b3, sizeof(b3), late_worst));
	}
	static const char *const change[4] = {
		[RANKS_WHY_NONE] = "look at that rank's host (other jobs, thermal throttling, "
				   "clocks: nvidia-smi -q -d PERFORMANCE) and at how the data and "
				   "the model are split across ranks",
		[RANKS_WHY_DATA] = "feed that rank faster: more DataLoader workers (num_workers) "
				   "and pin_memory on its host, prefetch_factor; check that host's "
				   "CPU load (other jobs) and its storage or network filesystem",
		[RANKS_WHY_COMPUTE] =
			"balance the work: the same batch size and sequence lengths on every rank "
			"(bucket by length), even pipeline or model-parallel stages; if the work "
			"is the same, look at that GPU (thermal throttling, clocks: nvidia-smi -q "
			"-d PERFORMANCE, other processes on it)",
		[RANKS_WHY_LATE] =
			"look at that rank's host between compute and the collective: CPU load "
			"from other jobs, per-rank logging or checkpointing, Python GC; and NCCL's "
			"setup (NCCL_DEBUG=INFO; NCCL_SOCKET_IFNAME, NCCL_IB_HCA on the right "
			"interface)",
	};
	x->change = change[cause];
out:
	free(led);
	free(sum);
}

/* ---------------------------------------------------------------------------------------- */

static int finding_cmp(const void *a, const void *b)
{
	const struct advice_finding *x = a, *y = b;
	if (x->at_stake_ns != y->at_stake_ns)
		return x->at_stake_ns > y->at_stake_ns ? -1 : 1;
	if (x->rule != y->rule)
		return x->rule < y->rule ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

int advice_combine(const struct model *m, const struct advice_file *files, uint32_t n,
		   const struct advice_whole *w, struct advice *out)
{
	memset(out, 0, sizeof(*out));
	struct adv X = { m, out, 0, false };
	bool any_gpu = false, device_time = false;
	for (uint32_t i = 0; i < n && !X.oom; i++) {
		const struct advice_file *af = &files[i];
		any_gpu |= af->gpu;
		device_time |= af->device_tracks;
		if (!w->keep[af->file]) /* a second copy of a rank: the ranks view notes it */
			continue;
		if (w->has_steps && af->nrows) {
			rule_input(&X, af);
			rule_comm(&X, af);
			rule_first(&X, af);
			if (af->gpu) {
				rule_idle(&X, af);
				rule_sync(&X, af);
			}
		}
		if (af->gpu) {
			rule_pageable(&X, af, w->total_ns);
			rule_tiny(&X, af);
		}
	}
	if (!X.oom && w->ranks)
		rule_straggler(&X, w->ranks);
	/* the FLOPs rows of every file, the second copies of a rank too (flops_run reads
	 * every track) */
	if (!X.oom && any_gpu && device_time)
		rule_tc(&X, files, n);
	if (X.oom) {
		advice_free(out);
		return OPSCOPE_ENOMEM;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), finding_cmp);
	return 0;
}

int advice_run(const struct analysis *a, const struct flops_opts *fo, struct advice *out)
{
	memset(out, 0, sizeof(*out));
	const struct model *m = a->m;
	struct advice_file *files = calloc(m->nfiles ? m->nfiles : 1, sizeof(*files));
	bool *keep = malloc((m->nfiles ? m->nfiles : 1) * sizeof(*keep));
	struct gpu_util u = { 0 };
	struct ranks R;
	bool have_ranks = false;
	int rc = OPSCOPE_ENOMEM;
	if (!files || !keep || ranks_kept_files(m, keep) == UINT32_MAX ||
	    gpu_util_analyze(a, &u) != 0)
		goto out;
	uint32_t n = 0;
	for (; n < m->nfiles; n++)
		if (advice_measure(a, &u, n, &files[n]) != 0 ||
		    measure_tc(a, fo, n, &files[n]) != 0)
			goto out;
	if (ranks_present(m)) {
		if (ranks_analyze(a, &R) != 0)
			goto out;
		have_ranks = true;
	}
	struct advice_whole w = { a->has_steps, a->total_ns, keep, have_ranks ? &R : NULL };
	rc = advice_combine(m, files, n, &w, out);
out:
	if (have_ranks)
		ranks_free(&R);
	for (uint32_t f = 0; files && f < m->nfiles; f++)
		advice_file_free(&files[f]);
	free(files);
	free(keep);
	gpu_util_free(&u);
	return rc;
}

void advice_free(struct advice *ad)
{
	free(ad->v);
	memset(ad, 0, sizeof(*ad));
}
