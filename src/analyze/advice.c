/*
 * advice.c: the advisor (advice.h): one function per rule of advice_rules[], each reading the
 * analyses it needs (the step table, GPU utilization, FLOPs, the event tree) and adding at
 * most one finding per file (per device for the GPU-idle rule), then a ranking by the time at
 * stake. Thresholds are the documented ones of the tools the rules come from, as constants
 * below; docs/advice.md states each with its reason.
 *
 * Invariants: a step rule runs only where the file has ProfileStep ranges (a->has_steps and
 * steps kept), a GPU rule only where the file has device work, the rank rule only where two
 * or more files have a rank and ranks_analyze aligned every clock (it reads that analysis and
 * repeats none of it). A finding's texts are cut at their buffers' sizes (the evidence lists
 * at most TOP_NAMES names, so only very long trace names reach the end); trace names are
 * copied as they are, and the renderers escape them (a name cut inside a UTF-8 character
 * included).
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
#define TOP_NAMES      3     /* operators or steps named in an evidence line */

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

/* The work of one advice_run. */
struct adv {
	const struct analysis *a;
	const struct model *m;
	struct advice *out;
	uint32_t cap; /* findings allocated */
	bool oom;     /* an allocation failed */
};

/* A new finding of rule r about file f (zeroed but for rule and file), NULL when out of
 * memory. */
/* Each rule's threshold, the figure its finding's `measured` is held against. */
static const double rule_threshold[ADVICE_NRULES] = {
	[ADVICE_INPUT_BOUND] = INPUT_SHARE, [ADVICE_GPU_IDLE] = IDLE_BUSY,
	[ADVICE_SYNC] = SYNC_SHARE,	    [ADVICE_PAGEABLE] = PAGEABLE_SHARE,
	[ADVICE_TINY_KERNELS] = TINY_SHARE, [ADVICE_TENSOR_CORES] = TC_SHARE,
	[ADVICE_EXPOSED_COMM] = COMM_SHARE, [ADVICE_FIRST_STEP] = FIRST_RATIO,
	[ADVICE_STRAGGLER] = STRAG_SHARE,
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

static double frac(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0;
}

/* Does file f have device work (kernels, copies, memsets)? */
static bool file_has_gpu(const struct model *m, uint32_t f)
{
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->file != f || tr->kind != MODEL_TRACK_DEVICE)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++)
			if (tree_is_device_work(tr->ranges.category[i]))
				return true;
	}
	return false;
}

/* The step of a host range [s, e): index of a kept step (< t->nrows), or -1. */
static int64_t step_of(const struct step_table *t, int64_t s, int64_t e)
{
	uint32_t k = steps_find(t, s, e);
	return k < t->nrows ? (int64_t)k : -1;
}

static const char *step_name(const struct model *m, const struct step_row *r)
{
	return r->name ? model_str(m, r->name) : "the trace";
}

/* ---------------------------------------------------------------------------------------- */
/* Names summed by key: the evidence lists the top ones. */

struct tally {
	uint32_t name; /* string id */
	uint64_t n;    /* count */
	int64_t ns;    /* time, ns */
};

struct tallies {
	struct tally *v;
	uint32_t n, cap;
	bool oom;
};

/* add() for a rule that tallied its evidence in T: T's lack of memory is the report's, and
 * when the finding cannot be added T is freed and NULL comes back. */
static struct advice_finding *add_tallied(struct adv *X, struct tallies *T, enum advice_rule_id r,
					  uint32_t f, int64_t at_stake_ns, int64_t base_ns,
					  double measured)
{
	if (T->oom)
		X->oom = true;
	struct advice_finding *x = add(X, r, f, at_stake_ns, base_ns, measured);
	if (!x) {
		free(T->v);
		T->v = NULL;
	}
	return x;
}

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
		struct tally *v = realloc(T->v, cap * sizeof(*v));
		if (!v) {
			T->oom = true;
			return;
		}
		T->v = v;
		T->cap = cap;
	}
	T->v[T->n++] = (struct tally){ name, n, ns };
}

static void tally_add(struct tallies *T, uint32_t name, int64_t ns)
{
	tally_addn(T, name, 1, ns);
}

static int tally_cmp(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Append "name (n, time)" of the TOP_NAMES largest tallies to buf. */
static void tally_list(const struct model *m, struct tallies *T, char *buf, size_t size)
{
	qsort(T->v, T->n, sizeof(*T->v), tally_cmp);
	char b[32];
	for (uint32_t i = 0; i < T->n && i < TOP_NAMES; i++)
		cat(buf, size, "%s%s (%llu, %s)", i ? ", " : "", model_str(m, T->v[i].name),
		    (unsigned long long)T->v[i].n, tm(b, sizeof(b), T->v[i].ns));
}

/* ---------------------------------------------------------------------------------------- */
/* Step rules */

/* Rule 1: the data wait of a step is its gap before compute (MindSpore's step trace: up to the
 * end of the last Dataloader range) or its DataLoader time, the larger. */
static void rule_input(struct adv *X, const struct step_table *t)
{
	int64_t wait = 0, total = 0, worst = -1;
	uint32_t over = 0, wk = 0;
	for (uint32_t k = 0; k < t->nrows; k++) {
		const struct step_row *r = &t->rows[k];
		int64_t w = r->gap_ns > r->role_ns[STEP_DATALOADER] ? r->gap_ns
								    : r->role_ns[STEP_DATALOADER];
		int64_t d = r->end_ns - r->start_ns;
		wait += w;
		total += d;
		over += frac(w, d) > INPUT_SHARE;
		if (w > worst) {
			worst = w;
			wk = k;
		}
	}
	double share = frac(wait, total);
	if (share <= INPUT_SHARE || wait <= 0)
		return;
	struct advice_finding *x = add(X, ADVICE_INPUT_BOUND, t->file, wait, total, share);
	if (!x)
		return;
	const struct step_row *r = &t->rows[wk];
	char b1[32], b2[32], b3[32];
	x->steps = over;
	x->start_ns = r->start_ns;
	x->end_ns = r->end_ns;
	snprintf(x->finding, sizeof(x->finding),
		 "steps wait for input data %.1f%% of their time (%s of %s over %u steps)",
		 share * 100, tm(b1, sizeof(b1), wait), tm(b2, sizeof(b2), total), t->nrows);
	snprintf(x->evidence, sizeof(x->evidence),
		 "%u of %u steps above 5%%; worst %s: %s of data wait in %s (gap before compute "
		 "or DataLoader time)",
		 over, t->nrows, step_name(X->m, r), tm(b1, sizeof(b1), worst),
		 tm(b3, sizeof(b3), r->end_ns - r->start_ns));
	x->change = "load data in parallel with the step: DataLoader(num_workers=N, "
		    "pin_memory=True, prefetch_factor=2, persistent_workers=True), and move "
		    "decoding and augmentation off the training process";
}

/* Rule 7: the step view's Communication column is communication no kernel, copy or memset
 * covered: the exposed part. */
static void rule_comm(struct adv *X, const struct step_table *t)
{
	int64_t comm = 0, total = 0, worst = -1;
	uint32_t over = 0, wk = 0;
	for (uint32_t k = 0; k < t->nrows; k++) {
		const struct step_row *r = &t->rows[k];
		int64_t c = r->role_ns[STEP_COMMUNICATION], d = r->end_ns - r->start_ns;
		comm += c;
		total += d;
		over += frac(c, d) > COMM_SHARE;
		if (c > worst) {
			worst = c;
			wk = k;
		}
	}
	double share = frac(comm, total);
	if (share <= COMM_SHARE)
		return;
	struct advice_finding *x = add(X, ADVICE_EXPOSED_COMM, t->file, comm, total, share);
	if (!x)
		return;
	const struct step_row *r = &t->rows[wk];
	char b1[32], b2[32];
	x->steps = over;
	x->start_ns = r->start_ns;
	x->end_ns = r->end_ns;
	snprintf(x->finding, sizeof(x->finding),
		 "communication not overlapped with compute takes %.1f%% of the steps (%s of %s)",
		 share * 100, tm(b1, sizeof(b1), comm), tm(b2, sizeof(b2), total));
	snprintf(x->evidence, sizeof(x->evidence),
		 "%u of %u steps above 10%%; worst %s: %s exposed", over, t->nrows,
		 step_name(X->m, r), tm(b1, sizeof(b1), worst));
	x->change = "overlap gradient all-reduce with backward (DDP bucket_cap_mb, "
		    "gradient_as_bucket_view), accumulate gradients over more micro-batches "
		    "(no_sync), or compress gradients";
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Rule 8: the first step against the median of the others (of an even count, the mean of the
 * two middle ones). */
static void rule_first(struct adv *X, const struct step_table *t)
{
	if (t->nrows < 3)
		return;
	int64_t *d = malloc((t->nrows - 1) * sizeof(*d));
	if (!d) {
		X->oom = true;
		return;
	}
	/* steps of no length (a ProfileStep range with no duration) say nothing of the others:
	 * left out of the median, and two of the others must remain */
	uint32_t n = 0;
	for (uint32_t k = 1; k < t->nrows; k++)
		if (t->rows[k].end_ns > t->rows[k].start_ns)
			d[n++] = t->rows[k].end_ns - t->rows[k].start_ns;
	if (n < 2) {
		free(d);
		return;
	}
	qsort(d, n, sizeof(*d), cmp_i64);
	int64_t med = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
	free(d);
	const struct step_row *r = &t->rows[0];
	int64_t first = r->end_ns - r->start_ns;
	if (med <= 0 || (double)first <= FIRST_RATIO * (double)med)
		return;
	struct advice_finding *x =
		add(X, ADVICE_FIRST_STEP, t->file, first - med, first, (double)first / (double)med);
	if (!x)
		return;
	char b1[32], b2[32];
	x->steps = 1;
	x->start_ns = r->start_ns;
	x->end_ns = r->end_ns;
	snprintf(x->finding, sizeof(x->finding),
		 "the first step took %.2fx the median of the other %u steps (%s against %s)",
		 x->measured, n, tm(b1, sizeof(b1), first), tm(b2, sizeof(b2), med));
	snprintf(x->evidence, sizeof(x->evidence),
		 "%s: warm-up (cuDNN autotuning, allocator growth, lazy init, compilation) "
		 "inside the profiled window skews the averages",
		 step_name(X->m, r));
	x->change = "keep warm-up out of the window: torch.profiler.schedule(wait=1, warmup=1, "
		    "active=N), or start recording after the first iterations";
}

/* ---------------------------------------------------------------------------------------- */
/* GPU rules */

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

/* Rule 2: per device of the file, the steps where kernels ran < 50% of the time. The time at
 * stake is the idle time of those steps less their data wait (rule 1's). Evidence: the
 * operators with the most CPU time and no device work in those steps. */
static void rule_idle(struct adv *X, const struct step_table *t, const struct gpu_util *u)
{
	const struct model *m = X->m;
	for (uint32_t g = 0; g < u->ndev; g++) {
		const struct gpu_util_device *dv = &u->dev[g];
		if (dv->file != t->file || dv->nsteps != t->nrows || dv->kernels == 0)
			continue;
		bool *low = calloc(t->nrows, sizeof(*low));
		if (!low) {
			X->oom = true;
			return;
		}
		int64_t idle = 0, total = 0, busy = 0, worst = -1;
		uint32_t over = 0, wk = 0;
		for (uint32_t k = 0; k < t->nrows; k++) {
			const struct gpu_util_span *sp = &dv->steps[k];
			const struct step_row *r = &t->rows[k];
			int64_t d = sp->e - sp->s;
			if (frac(sp->kernel_ns, d) >= IDLE_BUSY)
				continue;
			int64_t w = r->gap_ns > r->role_ns[STEP_DATALOADER]
					    ? r->gap_ns
					    : r->role_ns[STEP_DATALOADER];
			int64_t i = d - sp->kernel_ns - w;
			low[k] = true;
			over++;
			total += d;
			busy += sp->kernel_ns;
			idle += i > 0 ? i : 0;
			if (i > worst) {
				worst = i;
				wk = k;
			}
		}
		if (over == 0 || idle <= 0) {
			free(low);
			continue;
		}
		struct tallies T = { 0 };
		for (uint32_t tk = 0; tk < m->ntracks; tk++) {
			const struct model_track *tr = &m->tracks[tk];
			if (tr->file != t->file || tr->kind != MODEL_TRACK_THREAD)
				continue;
			for (uint64_t i = 0; i < tr->nranges; i++) {
				if (!idle_operator(&X->a->tree, m, tk, i))
					continue;
				int64_t s = tr->ranges.start_ns[i], e = s + tr->ranges.dur_ns[i];
				int64_t k = step_of(t, s, e);
				if (k >= 0 && low[k])
					tally_add(&T, tr->ranges.name[i], e - s);
			}
		}
		free(low);
		struct advice_finding *x = add_tallied(X, &T, ADVICE_GPU_IDLE, t->file, idle, total,
						       frac(busy, total));
		if (!x)
			return;
		const struct step_row *r = &t->rows[wk];
		char b1[32], b2[32];
		x->steps = over;
		x->start_ns = r->start_ns;
		x->end_ns = r->end_ns;
		snprintf(x->finding, sizeof(x->finding),
			 "GPU%u ran no kernel for %s of %s in %u of %u steps (kernels busy < 50%%; "
			 "data wait not counted)",
			 dv->device, tm(b1, sizeof(b1), idle), tm(b2, sizeof(b2), total), over,
			 t->nrows);
		snprintf(x->evidence, sizeof(x->evidence), "worst %s: %.1f%% busy; ",
			 step_name(m, r),
			 100 * frac(dv->steps[wk].kernel_ns, r->end_ns - r->start_ns));
		if (T.n) {
			cat(x->evidence, sizeof(x->evidence),
			    "operators with CPU time and no device work: ");
			tally_list(m, &T, x->evidence, sizeof(x->evidence));
		} else {
			cat(x->evidence, sizeof(x->evidence),
			    "no operator without device work: launch overhead or Python between "
			    "operators");
		}
		free(T.v);
		x->change = "feed the GPU faster: larger batches, CUDA graphs or torch.compile "
			    "(mode=\"reduce-overhead\") for launch overhead, and move the CPU "
			    "operators listed to the GPU or out of the step";
	}
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
 * enclosing operator (aten::item, aten::to for .cpu()), or to itself. */
static void rule_sync(struct adv *X, const struct step_table *t)
{
	const struct model *m = X->m;
	const struct tree *tr = &X->a->tree;
	struct tallies T = { 0 };
	int64_t blocked = 0, total = 0, worst = -1, ws = 0, we = 0;
	uint64_t calls = 0;
	uint32_t *per = calloc(t->nrows, sizeof(*per));
	if (!per) {
		X->oom = true;
		return;
	}
	for (uint32_t k = 0; k < t->nrows; k++)
		total += t->rows[k].end_ns - t->rows[k].start_ns;
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
			calls++;
			blocked += e - s;
			if (e - s > worst) {
				worst = e - s;
				ws = s;
				we = e;
			}
		}
	}
	uint32_t steps = 0;
	for (uint32_t k = 0; k < t->nrows; k++)
		steps += per[k] > 0;
	free(per);
	double share = frac(blocked, total);
	if (calls == 0 || share < SYNC_SHARE) {
		free(T.v);
		return;
	}
	struct advice_finding *x = add_tallied(X, &T, ADVICE_SYNC, t->file, blocked, total, share);
	if (!x)
		return;
	char b1[32], b2[32];
	x->steps = steps;
	x->start_ns = ws;
	x->end_ns = we;
	snprintf(x->finding, sizeof(x->finding),
		 "the host waited on the GPU in %llu synchronizations inside the steps: %s, "
		 "%.1f%% of the step time (%.1f per step, %s per step)",
		 (unsigned long long)calls, tm(b1, sizeof(b1), blocked), share * 100,
		 (double)calls / t->nrows, tm(b2, sizeof(b2), blocked / t->nrows));
	snprintf(x->evidence, sizeof(x->evidence), "in %u of %u steps, from: ", steps, t->nrows);
	tally_list(m, &T, x->evidence, sizeof(x->evidence));
	cat(x->evidence, sizeof(x->evidence), "; longest %s", tm(b1, sizeof(b1), worst));
	free(T.v);
	x->change = "drop per-step .item(), .cpu(), print and torch.cuda.synchronize() from the "
		    "loop (accumulate metrics on the GPU, read them every N steps), and use "
		    "non_blocking copies";
}

/* Rule 4: copies whose name says a side was pageable ("Memcpy HtoD (Pageable -> Device)"),
 * with their "bytes" argument where the trace has it. */
static void rule_pageable(struct adv *X, uint32_t f)
{
	const struct model *m = X->m;
	uint32_t kb = model_find_str(m, "bytes");
	int64_t ns = 0, worst = -1, ws = 0, we = 0;
	uint64_t n = 0, bytes = 0;
	struct tallies T = { 0 };
	for (uint32_t tk = 0; tk < m->ntracks; tk++) {
		const struct model_track *tr = &m->tracks[tk];
		if (tr->file != f || tr->kind != MODEL_TRACK_DEVICE)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (r->category[i] != OPSCOPE_CAT_MEMCPY ||
			    !strstr(model_str(m, r->name[i]), "Pageable"))
				continue;
			n++;
			ns += r->dur_ns[i];
			tally_add(&T, r->name[i], r->dur_ns[i]);
			uint64_t a = kb ? model_range_arg(m, tk, i, kb) : MODEL_NONE;
			if (a != MODEL_NONE &&
			    (m->args.type[a] == MODEL_ARG_I64 || m->args.type[a] == MODEL_ARG_U64))
				bytes += m->args.bits[a];
			if (r->dur_ns[i] > worst) {
				worst = r->dur_ns[i];
				ws = r->start_ns[i];
				we = ws + worst;
			}
		}
	}
	int64_t total = X->a->total_ns;
	double share = frac(ns, total);
	if (n == 0 || share < PAGEABLE_SHARE) {
		free(T.v);
		return;
	}
	struct advice_finding *x = add_tallied(X, &T, ADVICE_PAGEABLE, f, ns, total, share);
	if (!x)
		return;
	char b1[32];
	x->start_ns = ws;
	x->end_ns = we;
	snprintf(x->finding, sizeof(x->finding),
		 "%llu copies used pageable host memory: %s, %.1f%% of the total time",
		 (unsigned long long)n, tm(b1, sizeof(b1), ns), share * 100);
	if (bytes)
		snprintf(x->evidence, sizeof(x->evidence), "%.1f MB moved; ", (double)bytes / 1e6);
	tally_list(m, &T, x->evidence, sizeof(x->evidence));
	cat(x->evidence, sizeof(x->evidence), "; longest %s", tm(b1, sizeof(b1), worst));
	free(T.v);
	x->change = "copy from pinned memory: DataLoader(pin_memory=True) or tensor.pin_memory(), "
		    "then .to(device, non_blocking=True)";
}

/* Rule 5: kernels launched from inside the steps (the whole trace without steps), by their
 * duration; the time at stake is the host time of the runtime calls that launched the tiny
 * ones. */
static void rule_tiny(struct adv *X, const struct step_table *t)
{
	const struct model *m = X->m;
	const struct tree *tr = &X->a->tree;
	uint64_t kernels = 0, tiny = 0;
	int64_t launch_ns = 0, tiny_ns = 0;
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
				kernels++;
				if (d->dur_ns[j] < TINY_NS) {
					tiny++;
					tiny_ns += d->dur_ns[j];
					any = true;
				}
			}
			if (any)
				launch_ns += r->dur_ns[i];
		}
	}
	uint32_t nsteps = t->nrows ? t->nrows : 1;
	double share = kernels ? (double)tiny / (double)kernels : 0;
	if (share < TINY_SHARE || tiny < (uint64_t)TINY_PER_STEP * nsteps)
		return;
	int64_t total = 0;
	for (uint32_t k = 0; k < t->nrows; k++)
		total += t->rows[k].end_ns - t->rows[k].start_ns;
	struct advice_finding *x = add(X, ADVICE_TINY_KERNELS, t->file, launch_ns, total, share);
	if (!x)
		return;
	char b1[32], b2[32];
	x->steps = t->nrows;
	if (t->nrows) {
		x->start_ns = t->rows[0].start_ns;
		x->end_ns = t->rows[t->nrows - 1].end_ns;
	}
	snprintf(x->finding, sizeof(x->finding),
		 "%.1f%% of the kernels ran under 10 us (%llu of %llu, %.0f per step): "
		 "launch-bound",
		 share * 100, (unsigned long long)tiny, (unsigned long long)kernels,
		 (double)tiny / nsteps);
	snprintf(x->evidence, sizeof(x->evidence),
		 "the tiny kernels ran %s in all; the runtime calls that launched them took %s "
		 "of host time",
		 tm(b1, sizeof(b1), tiny_ns), tm(b2, sizeof(b2), launch_ns));
	x->change = "launch fewer, larger kernels: torch.compile or fused operators (fused "
		    "optimizers: foreach=True / fused=True), CUDA graphs, larger batches";
}

/* Rule 6: operators the FLOPs model calls tensor-core eligible whose kernels never used them. */
static void rule_tc(struct adv *X, const struct flops_result *fr)
{
	const struct model *m = X->m;
	if (!fr->device_time)
		return;
	int64_t all = 0, off = 0;
	int tf32 = -1; /* the devices have TF32: 1, do not: 0, not known: -1 */
	struct tallies T = { 0 };
	for (uint32_t i = 0; i < fr->nrows; i++) {
		const struct flops_row *r = &fr->rows[i];
		all += r->kernel_ns;
		if (!r->tc_eligible || r->tc_ns != 0 || r->kernel_ns <= 0)
			continue;
		off += r->kernel_ns;
		if (r->peaks)
			tf32 = r->peaks->tf32_flops > 0 ? 1 : tf32 < 0 ? 0 : tf32;
		tally_addn(&T, r->name, r->calls, r->kernel_ns);
	}
	double share = frac(off, all);
	if (off == 0 || share < TC_SHARE) {
		free(T.v);
		return;
	}
	struct advice_finding *x =
		add_tallied(X, &T, ADVICE_TENSOR_CORES, ADVICE_NO_FILE, off, all, share);
	if (!x)
		return;
	char b1[32], b2[32];
	snprintf(x->finding, sizeof(x->finding),
		 "%s of kernel time (%.1f%% of the modelled operators') was tensor-core eligible "
		 "but ran without tensor cores (of %s)",
		 tm(b1, sizeof(b1), off), share * 100, tm(b2, sizeof(b2), all));
	snprintf(x->evidence, sizeof(x->evidence), "operators (calls, kernel time): ");
	tally_list(m, &T, x->evidence, sizeof(x->evidence));
	free(T.v);
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
static void rule_straggler(struct adv *X)
{
	const struct model *m = X->m;
	if (!ranks_present(m))
		return;
	struct ranks R;
	if (ranks_analyze(X->a, &R) != 0) {
		X->oom = true;
		return;
	}
	uint32_t *led = calloc(R.nranks ? R.nranks : 1, sizeof(*led));
	int64_t *sum = calloc(R.nranks ? R.nranks : 1, sizeof(*sum));
	if (!led || !sum) {
		X->oom = true;
		goto out;
	}
	if (R.nranks < 2 || R.nsteps == 0 || !R.aligned)
		goto out;
	/* the steps each rank led above the threshold, and its margins there */
	for (uint32_t k = 0; k < R.nsteps; k++) {
		const struct ranks_step *s = &R.steps[k];
		if ((double)s->margin_ns > STRAG_SHARE * (double)s->per[s->straggler].step_ns) {
			led[s->straggler]++;
			sum[s->straggler] += s->margin_ns;
		}
	}
	uint32_t w = 0; /* the rank that led the most steps */
	for (uint32_t r = 1; r < R.nranks; r++)
		if (led[r] > led[w])
			w = r;
	if (led[w] == 0 || (double)led[w] < STRAG_STEPS * (double)R.nsteps)
		goto out;
	for (uint32_t r = 0; r < R.nranks; r++)
		if (r != w && led[r] == led[w])
			goto out; /* two ranks share the role (1 of 2 steps each): no one straggler */
	/* per cause: steps and margins; the worst step; the steps by margin for the evidence */
	uint32_t ncause[4] = { 0 };
	int64_t mcause[4] = { 0 }, xcause[4] = { 0 }, total = 0, flagged = 0;
	int64_t late_worst = -1;
	uint64_t late_coll = UINT64_MAX;
	uint32_t worst = UINT32_MAX, top[TOP_NAMES], ntop = 0;
	for (uint32_t k = 0; k < R.nsteps; k++) {
		const struct ranks_step *s = &R.steps[k];
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
		if (worst == UINT32_MAX || s->margin_ns > R.steps[worst].margin_ns)
			worst = k;
		/* keep the TOP_NAMES largest margins, largest first (ties: the earlier step) */
		uint32_t at = ntop < TOP_NAMES ? ntop++ : TOP_NAMES;
		while (at > 0 && R.steps[top[at - 1]].margin_ns < s->margin_ns) {
			if (at < TOP_NAMES)
				top[at] = top[at - 1];
			at--;
		}
		if (at < TOP_NAMES)
			top[at] = k;
	}
	enum ranks_why cause = RANKS_WHY_NONE; /* the cause with the largest margins summed */
	for (int c = RANKS_WHY_DATA; c <= RANKS_WHY_LATE; c++)
		if (mcause[c] > mcause[cause])
			cause = (enum ranks_why)c;
	const struct ranks_rank *rk = &R.ranks[w];
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
		 R.nsteps, tm(b1, sizeof(b1), sum[w] / led[w]), x->measured * 100,
		 tm(b2, sizeof(b2), sum[w]));
	snprintf(x->evidence, sizeof(x->evidence), "steps (margin): ");
	for (uint32_t i = 0; i < ntop; i++) {
		const struct ranks_step *s = &R.steps[top[i]];
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
	if (late_coll < R.ncolls) {
		const char *kn = model_str(m, R.colls[late_coll].name);
		cat(x->evidence, sizeof(x->evidence), "; latest at #%u %.*s (%s)",
		    R.colls[late_coll].seq, (int)strcspn(kn, "("), kn,
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
	ranks_free(&R);
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

int advice_run(const struct analysis *a, const struct flops_opts *fo, struct advice *out)
{
	memset(out, 0, sizeof(*out));
	struct adv X = { a, a->m, out, 0, false };
	const struct model *m = a->m;
	struct gpu_util u = { 0 };
	bool any_gpu = false;
	bool *gpu = calloc(m->nfiles ? m->nfiles : 1, sizeof(*gpu));
	bool *keep = malloc((m->nfiles ? m->nfiles : 1) * sizeof(*keep));
	if (!gpu || !keep || ranks_kept_files(m, keep) == UINT32_MAX) {
		free(gpu);
		free(keep);
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t f = 0; f < m->nfiles; f++)
		any_gpu |= gpu[f] = file_has_gpu(m, f);
	if (any_gpu && gpu_util_analyze(a, &u) != 0)
		X.oom = true;
	for (uint32_t f = 0; f < m->nfiles && !X.oom; f++) {
		if (!keep[f]) /* a second copy of a rank: the ranks view notes it; count it once */
			continue;
		struct step_table t;
		if (steps_analyze(&a->tree, f, &t) != 0) {
			X.oom = true;
			break;
		}
		if (a->has_steps && t.nrows) {
			rule_input(&X, &t);
			rule_comm(&X, &t);
			rule_first(&X, &t);
			if (gpu[f]) {
				rule_idle(&X, &t, &u);
				rule_sync(&X, &t);
			}
		}
		if (gpu[f]) {
			rule_pageable(&X, f);
			rule_tiny(&X, &t);
		}
		steps_free(&t);
	}
	gpu_util_free(&u);
	free(gpu);
	free(keep);
	if (!X.oom)
		rule_straggler(&X);
	if (any_gpu && !X.oom) {
		struct flops_result fr;
		struct flops_opts none = { NULL };
		if (flops_run(a, fo ? fo : &none, &fr) != 0)
			X.oom = true;
		else
			rule_tc(&X, &fr);
		flops_free(&fr);
	}
	if (X.oom) {
		advice_free(out);
		return OPSCOPE_ENOMEM;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), finding_cmp);
	return 0;
}

void advice_free(struct advice *ad)
{
	free(ad->v);
	memset(ad, 0, sizeof(*ad));
}
