/*
 * steps.c: the step view of steps.h.
 *
 * The exclusive partition follows the rules of PyTorch's TensorBoard plugin (so that its
 * numbers can be checked against what users already see there), reimplemented here:
 *   1. Role intervals over the whole file, each merged: Kernel, Memcpy, Memset,
 *      Communication (device ranges by category), Runtime (CUDA runtime/driver calls),
 *      DataLoader (Dataloader ranges), CPU Exec (operators, Python functions, phases).
 *   2. Steps are the ProfileStep ranges, sorted. A runtime call lying entirely inside a
 *      step's host span launched that step's GPU work (matched by the "correlation"
 *      argument: tree.h's launch links). When any step launched GPU work, each step
 *      starts no earlier than the previous one ended and ends no earlier than the last GPU
 *      work it launched; GPU work that ran before the first step's and was launched before
 *      the window moves the first start. Trailing steps that launched nothing, or clearly
 *      less than the step before (< 80 %), are dropped: the profiler did not capture all of
 *      their GPU work.
 *   3. Priority: the steps' union is handed out to the roles in the order above; each role
 *      takes what it covers of what is left; the rest is Other.
 */
#include "analyze/steps.h"

#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/intervals.h"
#include "analyze/tree.h"

const char *step_role_name(enum step_role r)
{
	static const char *const names[STEP_NROLES] = {
		"Kernel",  "Memcpy",	 "Memset",   "Communication",
		"Runtime", "DataLoader", "CPU Exec", "Other",
	};
	return r < STEP_NROLES ? names[r] : "?";
}

/* ---------------------------------------------------------------------------------------- */

/* A runtime call that launched device work (tree.h's launch links). */
struct rt_call {
	int64_t s, e;
	uint32_t track;
	uint64_t range;
};

struct named_step {
	int64_t s, e;
	uint32_t name;
	uint32_t track;
};

static int named_cmp(const void *x, const void *y)
{
	const struct named_step *a = x, *b = y;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return (a->e > b->e) - (a->e < b->e);
}

struct steps_ctx {
	const struct model *m;
	const struct tree *tree;
	uint32_t file;
	struct ivec roles[STEP_NROLES];
	struct rt_call *calls;
	size_t ncalls, calls_cap;
	struct ivec steps;	  /* host spans, sorted */
	uint32_t *step_names;	  /* string id per step (sorted like steps) */
	struct named_step *named; /* ProfileStep ranges as found */
	size_t nnamed, named_cap;
	struct ivec dataloaders;    /* Dataloader ranges, merged */
	struct ivec backwards;	    /* Backward ranges, merged */
	struct ivec optimizers;	    /* Optimization ranges, merged */
	int64_t host_min, host_max; /* span of host work, for a trace without steps */
	bool oom;
};

static bool is_cpu_exec(uint8_t c)
{
	switch (c) {
	case OPSCOPE_CAT_OPERATOR:
	case OPSCOPE_CAT_OPERATOR_INNER:
	case OPSCOPE_CAT_FORWARD:
	case OPSCOPE_CAT_BACKWARD:
	case OPSCOPE_CAT_OPTIMIZATION:
	case OPSCOPE_CAT_COMMUNICATION:
	case OPSCOPE_CAT_PYTHON_OP:
	case OPSCOPE_CAT_PYTHON_FUNCTION:
		return true;
	default:
		return false;
	}
}

static void collect(struct steps_ctx *X)
{
	const struct model *m = X->m;
	X->host_min = INT64_MAX;
	X->host_max = INT64_MIN;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->file != X->file)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
			uint8_t c = r->category[i];
			if (tr->kind == MODEL_TRACK_DEVICE) {
				enum step_role role;
				if (c == OPSCOPE_CAT_KERNEL)
					role = STEP_KERNEL;
				else if (c == OPSCOPE_CAT_MEMCPY)
					role = STEP_MEMCPY;
				else if (c == OPSCOPE_CAT_MEMSET)
					role = STEP_MEMSET;
				else if (c == OPSCOPE_CAT_COMMUNICATION)
					role = STEP_COMMUNICATION;
				else
					continue; /* annotations on the GPU are not work */
				ivec_add(&X->roles[role], s, e);
				continue;
			}
			if (tr->kind != MODEL_TRACK_THREAD)
				continue;
			if (c == OPSCOPE_CAT_CUDA_RUNTIME || c == OPSCOPE_CAT_CUDA_DRIVER) {
				ivec_add(&X->roles[STEP_RUNTIME], s, e);
				if (X->tree->tracks[t].launches[i] != TREE_NONE) {
					if (X->ncalls == X->calls_cap) {
						size_t cap = X->calls_cap ? X->calls_cap * 2 : 1024;
						struct rt_call *n =
							realloc(X->calls, cap * sizeof(*n));
						if (!n) {
							X->oom = true;
							return;
						}
						X->calls = n;
						X->calls_cap = cap;
					}
					X->calls[X->ncalls++] = (struct rt_call){ s, e, t, i };
				}
				continue;
			}
			if (c == OPSCOPE_CAT_PROFILE_STEP) {
				if (X->nnamed == X->named_cap) {
					size_t cap = X->named_cap ? X->named_cap * 2 : 64;
					struct named_step *n = realloc(X->named, cap * sizeof(*n));
					if (!n) {
						X->oom = true;
						return;
					}
					X->named = n;
					X->named_cap = cap;
				}
				X->named[X->nnamed++] = (struct named_step){ s, e, r->name[i], t };
			} else if (c == OPSCOPE_CAT_DATALOADER) {
				ivec_add(&X->roles[STEP_DATALOADER], s, e);
				ivec_add(&X->dataloaders, s, e);
			} else if (is_cpu_exec(c)) {
				ivec_add(&X->roles[STEP_CPU_EXEC], s, e);
				if (c == OPSCOPE_CAT_BACKWARD)
					ivec_add(&X->backwards, s, e);
				else if (c == OPSCOPE_CAT_OPTIMIZATION)
					ivec_add(&X->optimizers, s, e);
			} else {
				continue;
			}
			X->host_min = s < X->host_min ? s : X->host_min;
			X->host_max = e > X->host_max ? e : X->host_max;
		}
	}
	/* steps, sorted, with their names alongside */
	if (X->nnamed)
		qsort(X->named, X->nnamed, sizeof(*X->named), named_cmp);
	X->step_names = X->nnamed ? malloc(X->nnamed * sizeof(*X->step_names)) : NULL;
	if (X->nnamed && !X->step_names)
		X->oom = true;
	for (size_t i = 0; i < X->nnamed && !X->oom; i++) {
		ivec_push(&X->steps, X->named[i].s, X->named[i].e);
		X->step_names[i] = X->named[i].name;
	}
	if (X->steps.n == 0 && X->host_min < X->host_max) {
		ivec_push(&X->steps, X->host_min, X->host_max);
		X->step_names = malloc(sizeof(*X->step_names));
		if (X->step_names)
			X->step_names[0] = 0;
		else
			X->oom = true;
	}
	for (int r = 0; r < STEP_NROLES; r++) {
		ivec_merge(&X->roles[r]);
		X->oom |= X->roles[r].oom;
	}
	ivec_merge(&X->dataloaders);
	ivec_merge(&X->backwards);
	ivec_merge(&X->optimizers);
	X->oom |= X->steps.oom || X->dataloaders.oom || X->backwards.oom || X->optimizers.oom;
}

/* The step whose host span holds a runtime call entirely, or ns for none: the first step, in
 * start order, that ends after the call starts (or where a call of no length starts: that
 * one is inside it) is the only one to hold it, if any does. With steps that overlap, ends
 * are not in order, so the search runs over their running maximum. */
static size_t call_step(const struct ivl *st, const int64_t *max_end, size_t ns,
			const struct rt_call *c)
{
	size_t lo = 0, hi = ns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (max_end[mid] < c->s || (max_end[mid] == c->s && c->e > c->s))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ns && c->s >= st[lo].s && c->e <= st[lo].e ? lo : ns;
}

/* Stretch steps to the GPU work they launched (rule 2); returns how many steps to keep and
 * fills gpu_events per step. */
static size_t adjust_steps(struct steps_ctx *X, uint64_t *gpu_events)
{
	const struct model *m = X->m;
	const struct tree *tree = X->tree;
	size_t ns = X->steps.n;
	struct ivl *st = X->steps.v;
	size_t n1 = ns ? ns : 1;
	int64_t *dmin = malloc(n1 * sizeof(*dmin)), *dmax = malloc(n1 * sizeof(*dmax));
	int64_t *max_end = malloc(n1 * sizeof(*max_end));
	/* per device track of the file: which ranges a call inside a step launched */
	uint8_t **matched = calloc(m->ntracks ? m->ntracks : 1, sizeof(*matched));
	bool ok = dmin && dmax && max_end && matched;
	for (uint32_t t = 0; t < m->ntracks && ok; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->file == X->file && tr->kind == MODEL_TRACK_DEVICE)
			ok = (matched[t] = calloc(tr->nranges ? tr->nranges : 1, 1)) != NULL;
	}
	bool any = false;
	for (size_t k = 0; k < ns && ok; k++) {
		dmin[k] = INT64_MAX;
		dmax[k] = INT64_MIN;
		gpu_events[k] = 0;
		max_end[k] = k && max_end[k - 1] > st[k].e ? max_end[k - 1] : st[k].e;
	}
	for (size_t i = 0; i < X->ncalls && ok; i++) {
		const struct rt_call *c = &X->calls[i];
		size_t k = call_step(st, max_end, ns, c);
		if (k == ns)
			continue;
		for (uint32_t l = tree->tracks[c->track].launches[c->range]; l != TREE_NONE;
		     l = tree->launches[l].next) {
			const struct tree_launch *la = &tree->launches[l];
			const struct model_ranges *r = &m->tracks[la->track].ranges;
			int64_t s = r->start_ns[la->range], e = s + r->dur_ns[la->range];
			dmin[k] = s < dmin[k] ? s : dmin[k];
			dmax[k] = e > dmax[k] ? e : dmax[k];
			gpu_events[k]++;
			matched[la->track][la->range] = 1;
			any = true;
		}
	}
	size_t keep = ns;
	if (ok && any) {
		/* GPU work that ran before the first step's and was not launched inside a step */
		int64_t prev_end = st[0].s;
		for (uint32_t t = 0; t < m->ntracks && dmin[0] != INT64_MAX; t++) {
			const struct model_track *tr = &m->tracks[t];
			if (!matched[t])
				continue;
			const struct model_ranges *r = &tr->ranges;
			for (uint64_t i = 0; i < tr->nranges; i++) {
				int64_t e = r->start_ns[i] + r->dur_ns[i];
				if (!matched[t][i] && tree_is_device_work(r->category[i]) &&
				    e < dmin[0] && e > prev_end)
					prev_end = e;
			}
		}
		for (size_t k = 0; k < ns; k++) {
			int64_t start = prev_end > st[k].s ? prev_end : st[k].s;
			int64_t end = st[k].e;
			if (dmin[k] == INT64_MAX)
				end = end > start ? end : start;
			else
				end = dmax[k] > end ? dmax[k] : end;
			if (end < start)
				end = start;
			st[k].s = start;
			st[k].e = end;
			prev_end = end;
		}
		if (ns > 1) {
			size_t last = ns;
			while (last-- > 0 && gpu_events[last] == 0)
				;
			if (last < ns) {
				keep = last + 1;
				if (last > 0 &&
				    (double)gpu_events[last - 1] * 0.8 > (double)gpu_events[last])
					keep = last;
			}
		}
	}
	X->oom |= !ok;
	for (uint32_t t = 0; matched && t < m->ntracks; t++)
		free(matched[t]);
	free(matched);
	free(max_end);
	free(dmin);
	free(dmax);
	return keep;
}

/* Latest end of the merged ranges of `a` that start in [s, e), or `dflt`. */
static int64_t last_end_within(const struct ivec *a, int64_t s, int64_t e, int64_t dflt)
{
	int64_t r = dflt;
	for (size_t i = 0; i < a->n && a->v[i].s < e; i++)
		if (a->v[i].s >= s)
			r = a->v[i].e < e ? a->v[i].e : e;
	return r;
}

/* Latest start of the merged ranges of `a` that start in [s, e), or `dflt`. */
static int64_t last_start_within(const struct ivec *a, int64_t s, int64_t e, int64_t dflt)
{
	int64_t r = dflt;
	for (size_t i = 0; i < a->n && a->v[i].s < e; i++)
		if (a->v[i].s >= s)
			r = a->v[i].s;
	return r;
}

void steps_average(struct step_table *t)
{
	struct step_row *a = &t->avg;
	memset(a, 0, sizeof(*a));
	if (!t->nrows)
		return;
	int64_t n = (int64_t)t->nrows;
	for (uint32_t k = 0; k < t->nrows; k++) {
		const struct step_row *row = &t->rows[k];
		a->end_ns += row->end_ns - row->start_ns; /* the average duration */
		for (int r = 0; r < STEP_NROLES; r++)
			a->role_ns[r] += row->role_ns[r];
		a->gpu_events += row->gpu_events;
		a->gap_ns += row->gap_ns;
		a->compute_ns += row->compute_ns;
		a->tail_ns += row->tail_ns;
		a->drain_ns += row->drain_ns;
	}
	a->end_ns /= n;
	for (int r = 0; r < STEP_NROLES; r++)
		a->role_ns[r] /= n;
	a->gpu_events /= (uint64_t)n;
	a->gap_ns /= n;
	a->compute_ns /= n;
	a->tail_ns /= n;
	a->drain_ns /= n;
}

int steps_analyze(const struct tree *tree, uint32_t file, struct step_table *out)
{
	memset(out, 0, sizeof(*out));
	out->file = file;
	struct steps_ctx X;
	memset(&X, 0, sizeof(X));
	X.m = tree->m;
	X.tree = tree;
	X.file = file;
	collect(&X);
	size_t ns = X.steps.n;
	uint64_t *gpu_events = calloc(ns ? ns : 1, sizeof(*gpu_events));
	struct ivl *host = malloc((ns ? ns : 1) * sizeof(*host));
	if (!gpu_events || !host)
		X.oom = true;
	size_t keep = 0;
	if (!X.oom) {
		if (ns) /* no steps and no host range: X.steps.v is NULL */
			memcpy(host, X.steps.v, ns * sizeof(*host));
		keep = adjust_steps(&X, gpu_events);
	}
	/* rule 3: the priority partition over the union of the steps */
	struct ivec slots = { 0 }, cost[STEP_NROLES];
	memset(cost, 0, sizeof(cost));
	if (!X.oom) {
		for (size_t k = 0; k < ns; k++)
			ivec_push(&slots, X.steps.v[k].s, X.steps.v[k].e);
		ivec_merge(&slots);
		for (int r = 0; r < STEP_OTHER; r++) {
			ivec_intersect(&slots, &X.roles[r], &cost[r]);
			struct ivec rest = { 0 };
			ivec_subtract(&slots, &cost[r], &rest);
			free(slots.v);
			slots = rest;
			X.oom |= cost[r].oom || rest.oom;
		}
		cost[STEP_OTHER] = slots;
		slots.v = NULL;
	}
	if (!X.oom && keep) {
		out->rows = calloc(keep, sizeof(*out->rows));
		X.oom = !out->rows;
	}
	if (!X.oom && ns) {
		out->spans = malloc(ns * sizeof(*out->spans));
		X.oom = !out->spans;
	}
	for (size_t k = 0; k < ns && !X.oom; k++) {
		int64_t before = k ? out->spans[k - 1].max_host_e : INT64_MIN;
		out->spans[k] = (struct step_span){
			X.steps.v[k].s,
			X.steps.v[k].e,
			host[k].s,
			host[k].e,
			before > host[k].e ? before : host[k].e,
			X.nnamed ? X.named[k].track : UINT32_MAX,
		};
		out->nspans = (uint32_t)(k + 1);
	}
	for (size_t k = 0; k < keep && !X.oom; k++) {
		struct step_row *row = &out->rows[k];
		int64_t s = X.steps.v[k].s, e = X.steps.v[k].e;
		row->name = X.step_names[k];
		row->start_ns = s;
		row->end_ns = e;
		row->host_start_ns = host[k].s;
		row->host_end_ns = host[k].e;
		for (int r = 0; r < STEP_NROLES; r++)
			row->role_ns[r] = ivec_sum_within(&cost[r], s, e);
		row->gpu_events = gpu_events[k];
		/* step trace: compute starts when the step's data is there, ends with backward
		 * (without a Backward range: where the last optimizer call starts; zero_grad
		 * often comes before the backward pass) */
		int64_t fp = last_end_within(&X.dataloaders, host[k].s, host[k].e, s);
		fp = fp < s ? s : fp;
		int64_t bp = last_end_within(&X.backwards, host[k].s, host[k].e, INT64_MIN);
		if (bp == INT64_MIN)
			bp = last_start_within(&X.optimizers, host[k].s, host[k].e, e);
		bp = bp < fp ? fp : bp > e ? e : bp;
		/* the host step ends the tail; the GPU may still run the step's work after */
		int64_t he = host[k].e < bp ? bp : host[k].e > e ? e : host[k].e;
		row->gap_ns = fp - s;
		row->compute_ns = bp - fp;
		row->tail_ns = he - bp;
		row->drain_ns = e - he;
	}
	if (!X.oom && keep) {
		out->nrows = (uint32_t)keep;
		out->dropped = (uint32_t)(ns - keep);
		steps_average(out);
	}
	for (int r = 0; r < STEP_NROLES; r++) {
		free(X.roles[r].v);
		free(cost[r].v);
	}
	free(slots.v);
	free(X.calls);
	free(X.steps.v);
	free(X.step_names);
	free(X.named);
	free(X.dataloaders.v);
	free(X.backwards.v);
	free(X.optimizers.v);
	free(gpu_events);
	free(host);
	if (X.oom) {
		steps_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void steps_free(struct step_table *t)
{
	free(t->rows);
	free(t->spans);
	t->rows = NULL;
	t->spans = NULL;
	t->nrows = 0;
	t->nspans = 0;
}

uint32_t steps_find(const struct step_table *t, int64_t s, int64_t e)
{
	uint32_t lo = 0, hi = t->nspans; /* as call_step, over the host spans */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int64_t me = t->spans[mid].max_host_e;
		if (me < s || (me == s && e > s))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nspans && s >= t->spans[lo].host_s && e <= t->spans[lo].host_e ? lo
										      : t->nspans;
}
