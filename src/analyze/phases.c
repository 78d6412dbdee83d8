/*
 * phases.c: calls and times of the model phases (phases.h). The phase calls are collected
 * once (phases_calls); their CPU time is the share of the total time livl_partition gives each
 * of them (intervals.h), so that calls of one phase that overlap (on two threads) count once,
 * phases that overlap count once (the first phase wins), and what lies outside the steps is
 * not counted at all.
 */
#include "analyze/phases.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/steps.h"

static const uint8_t phase_category[PHASE_COUNT] = {
	[PHASE_PROFILE_STEP] = OPSCOPE_CAT_PROFILE_STEP,
	[PHASE_DATALOADER] = OPSCOPE_CAT_DATALOADER,
	[PHASE_FORWARD] = OPSCOPE_CAT_FORWARD,
	[PHASE_BACKWARD] = OPSCOPE_CAT_BACKWARD,
	[PHASE_OPTIMIZATION] = OPSCOPE_CAT_OPTIMIZATION,
};

uint8_t phases_category(enum phase k)
{
	return phase_category[k];
}

bool phases_outermost(const struct tree *tree, uint32_t t, uint64_t i)
{
	const struct model_ranges *r = &tree->m->tracks[t].ranges;
	for (uint64_t p = tree->tracks[t].parent[i]; p != MODEL_NONE; p = tree->tracks[t].parent[p])
		if (phases_is_phase(r->category[p]))
			return false;
	return true;
}

static int phase_of(uint8_t cat)
{
	for (int k = PHASE_DATALOADER; k < PHASE_COUNT; k++)
		if (phase_category[k] == cat)
			return k;
	return -1;
}

static int call_cmp(const void *x, const void *y)
{
	const struct phase_call *a = x, *b = y;
	if (a->phase != b->phase)
		return a->phase < b->phase ? -1 : 1;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->s > b->s) - (a->s < b->s);
}

static bool push_call(struct phase_call **v, size_t *n, size_t *cap, struct phase_call c)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct phase_call *nw = realloc(*v, nc * sizeof(*nw));
		if (!nw)
			return false;
		*v = nw;
		*cap = nc;
	}
	(*v)[(*n)++] = c;
	return true;
}

/* Is a range of this name the autograd engine's work (a backward function)? */
static bool autograd_name(const char *name)
{
	return strstr(name, "Backward") || strncmp(name, "torch::autograd::", 17) == 0 ||
	       strncmp(name, "autograd::", 10) == 0;
}

/* The autograd engine's thread of older Kineto traces runs backward functions
 * (`NllLossBackward`, `torch::autograd::AccumulateGrad`) in no phase range: a host thread
 * with no phase or ProfileStep range and such a range gets, per step of its file, a Backward
 * call spanning its top-level ranges that start in the step. */
static int autograd_calls(const struct analysis *a, uint32_t f, struct phase_call **v, size_t *nv,
			  size_t *cap)
{
	const struct model *m = a->m;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD || (f != PHASES_ALL_FILES && tr->file != f))
			continue;
		const struct model_ranges *r = &tr->ranges;
		bool autograd = false, phased = false;
		for (uint64_t i = 0; i < tr->nranges && !phased; i++) {
			phased = phases_is_phase(r->category[i]) ||
				 r->category[i] == OPSCOPE_CAT_PROFILE_STEP;
			autograd = autograd || autograd_name(model_str(m, r->name[i]));
		}
		if (!autograd || phased)
			continue;
		/* the steps of its file, by start (ProfileStep ranges on its other threads) */
		struct ivec steps = { 0 };
		for (uint32_t u = 0; u < m->ntracks; u++) {
			const struct model_track *su = &m->tracks[u];
			if (su->kind != MODEL_TRACK_THREAD || su->file != tr->file)
				continue;
			for (uint64_t i = 0; i < su->nranges; i++)
				if (su->ranges.category[i] == OPSCOPE_CAT_PROFILE_STEP)
					ivec_push(&steps, su->ranges.start_ns[i],
						  su->ranges.start_ns[i] + su->ranges.dur_ns[i]);
		}
		ivec_merge(&steps);
		if (steps.oom)
			return OPSCOPE_ENOMEM;
		size_t k = 0, open = SIZE_MAX;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (a->tree.tracks[tt].parent[i] != MODEL_NONE)
				continue;
			int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
			while (k < steps.n && steps.v[k].e <= s)
				k++;
			if (k == steps.n || s < steps.v[k].s)
				continue;
			e = e < steps.v[k].e ? e : steps.v[k].e;
			if (open == k) {
				struct phase_call *c = &(*v)[*nv - 1];
				c->e = e > c->e ? e : c->e;
				continue;
			}
			open = k;
			if (!push_call(
				    v, nv, cap,
				    (struct phase_call){ PHASE_BACKWARD, tt, MODEL_NONE, s, e })) {
				ivec_free(&steps);
				return OPSCOPE_ENOMEM;
			}
		}
		ivec_free(&steps);
	}
	return 0;
}

static int track_start_cmp(const void *x, const void *y)
{
	const struct phase_call *a = x, *b = y;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->s > b->s) - (a->s < b->s);
}

/* (file, start) pairs of step starts, in order. */
static int pair_cmp(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return (a[1] > b[1]) - (a[1] < b[1]);
}

/* Does a step of file f start in (after, upto]? */
static bool step_starts_in(const int64_t *starts, size_t ns, uint32_t f, int64_t after,
			   int64_t upto)
{
	size_t lo = 0, hi = ns; /* first pair after (f, after) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const int64_t *p = &starts[2 * mid];
		if (p[0] < (int64_t)f || (p[0] == (int64_t)f && p[1] <= after))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ns && starts[2 * lo] == (int64_t)f && starts[2 * lo + 1] <= upto;
}

/* One Forward: the outermost module calls of a training step are one forward pass (the
 * model, then the loss module). On each thread, Forward calls that follow each other with
 * no other phase call and no step start between them become one call, from the first one's
 * start to the last one's end. v is sorted by track, then start. */
static int merge_forwards(const struct analysis *a, uint32_t f, struct phase_call *v, size_t *nv)
{
	const struct model *m = a->m;
	int64_t *starts = NULL; /* (file, start) of the ProfileStep ranges, sorted */
	size_t ns = 0, cap = 0;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_THREAD || (f != PHASES_ALL_FILES && tr->file != f))
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (tr->ranges.category[i] != OPSCOPE_CAT_PROFILE_STEP)
				continue;
			if (ns == cap) {
				cap = cap ? cap * 2 : 64;
				int64_t *n = realloc(starts, cap * 2 * sizeof(*n));
				if (!n) {
					free(starts);
					return OPSCOPE_ENOMEM;
				}
				starts = n;
			}
			starts[2 * ns] = (int64_t)tr->file;
			starts[2 * ns + 1] = tr->ranges.start_ns[i];
			ns++;
		}
	}
	if (ns)
		qsort(starts, ns, 2 * sizeof(*starts), pair_cmp);
	size_t o = 0, open = SIZE_MAX;
	for (size_t i = 0; i < *nv; i++) {
		struct phase_call c = v[i];
		if (open != SIZE_MAX && (v[open].track != c.track || c.phase != PHASE_FORWARD))
			open = SIZE_MAX;
		if (c.phase == PHASE_FORWARD && open != SIZE_MAX &&
		    !step_starts_in(starts, ns, m->tracks[c.track].file, v[open].e, c.s)) {
			v[open].e = c.e > v[open].e ? c.e : v[open].e;
			continue;
		}
		v[o] = c;
		open = c.phase == PHASE_FORWARD ? o : SIZE_MAX;
		o++;
	}
	*nv = o;
	free(starts);
	return 0;
}

int phases_calls(const struct analysis *a, struct phase_call **out, size_t *n)
{
	return phases_calls_file(a, PHASES_ALL_FILES, out, n);
}

int phases_calls_file(const struct analysis *a, uint32_t f, struct phase_call **out, size_t *n)
{
	const struct model *m = a->m;
	struct phase_call *v = NULL;
	size_t nv = 0, cap = 0;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD || (f != PHASES_ALL_FILES && tr->file != f))
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int k = phase_of(r->category[i]);
			if (k < 0 || !phases_outermost(&a->tree, tt, i))
				continue;
			if (!push_call(&v, &nv, &cap,
				       (struct phase_call){ (uint8_t)k, tt, i, r->start_ns[i],
							    r->start_ns[i] + r->dur_ns[i] })) {
				free(v);
				return OPSCOPE_ENOMEM;
			}
		}
	}
	if (nv)
		qsort(v, nv, sizeof(*v), track_start_cmp);
	if (merge_forwards(a, f, v, &nv) != 0 || autograd_calls(a, f, &v, &nv, &cap) != 0) {
		free(v);
		return OPSCOPE_ENOMEM;
	}
	if (nv)
		qsort(v, nv, sizeof(*v), call_cmp);
	*out = v;
	*n = nv;
	return 0;
}

static void phase_add(struct phase_time *p, int64_t cpu, int64_t gpu)
{
	p->calls++;
	p->cpu_ns += cpu;
	p->cpu_max_ns = cpu > p->cpu_max_ns ? cpu : p->cpu_max_ns;
	p->cpu_min_ns = cpu < p->cpu_min_ns ? cpu : p->cpu_min_ns;
	p->gpu_ns += gpu;
	p->gpu_max_ns = gpu > p->gpu_max_ns ? gpu : p->gpu_max_ns;
	p->gpu_min_ns = gpu < p->gpu_min_ns ? gpu : p->gpu_min_ns;
}

/* The calls per host track, by start: where a launch finds its call. */
struct call_ref {
	uint32_t track;
	uint32_t call; /* index in the calls */
	int64_t s;
};

struct call_index {
	const struct phase_call *calls;
	struct call_ref *order; /* by track, then start */
	size_t *first;		/* per track: its first entry in order; first[ntracks] = ncalls */
};

static int by_track_cmp(const void *x, const void *y)
{
	const struct call_ref *a = x, *b = y;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->s > b->s) - (a->s < b->s);
}

/* The call on track t running at time `at` (a call of no length: starting then), or
 * UINT32_MAX. The calls of one track do not overlap (they are outermost). */
static uint32_t call_at(const struct call_index *ix, uint32_t t, int64_t at)
{
	size_t lo = ix->first[t], hi = ix->first[t + 1];
	while (lo < hi) { /* first call starting after `at` */
		size_t mid = lo + (hi - lo) / 2;
		if (ix->order[mid].s <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ix->first[t])
		return UINT32_MAX;
	const struct phase_call *c = &ix->calls[ix->order[lo - 1].call];
	return at < c->e || at == c->s ? ix->order[lo - 1].call : UINT32_MAX;
}

static int label_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return (a > b) - (a < b);
}

/* Share the kernel time of one step (its pieces, v[0..n)) out among the labels: global
 * labels are renumbered in order to 0..distinct-1 for the partition. */
static int share_step(struct livl *v, size_t n, const struct phase_call *calls, size_t ncalls,
		      int64_t *gpu_share, struct phase_step *st)
{
	uint32_t *labels = malloc((n ? n : 1) * sizeof(*labels));
	int64_t *share = calloc(n ? n : 1, sizeof(*share));
	if (!labels || !share) {
		free(labels);
		free(share);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		labels[i] = v[i].label;
	qsort(labels, n, sizeof(*labels), label_cmp);
	size_t nl = 0;
	for (size_t i = 0; i < n; i++)
		if (!nl || labels[nl - 1] != labels[i])
			labels[nl++] = labels[i];
	for (size_t i = 0; i < n; i++) {
		uint32_t *p = bsearch(&v[i].label, labels, nl, sizeof(*labels), label_cmp);
		v[i].label = (uint32_t)(p - labels);
	}
	int rc = livl_partition(v, n, (uint32_t)(nl ? nl : 1), share);
	for (size_t l = 0; l < nl && rc == 0; l++) {
		st->gpu_ns += share[l];
		gpu_share[labels[l]] += share[l];
		if (labels[l] < ncalls)
			st->phase_gpu_ns[calls[labels[l]].phase] += share[l];
		else
			st->others_gpu_ns += share[l];
	}
	free(labels);
	free(share);
	return rc;
}

/* The GPU side of one file: its steps (the step view's spans) and each call's share of
 * their kernel time, added to gpu_share (one slot per call, and one for Others). */
static int file_gpu(const struct analysis *a, uint32_t f, const struct call_index *ix,
		    size_t ncalls, int64_t *gpu_share, struct phases *out)
{
	const struct model *m = a->m;
	const struct tree *tree = &a->tree;
	struct step_table st;
	if (steps_analyze(tree, f, &st) != 0)
		return OPSCOPE_ENOMEM;
	struct ivec spans = { 0 };
	for (uint32_t k = 0; k < st.nspans; k++)
		ivec_push(&spans, st.spans[k].s, st.spans[k].e);
	struct livl *pieces = NULL;
	size_t np = 0, cap = 0;
	uint8_t **seen = calloc(m->ntracks ? m->ntracks : 1, sizeof(*seen));
	bool ok = seen && !spans.oom;
	uint32_t others = (uint32_t)ncalls;
	/* kernels launched in a step: the call of the launch's thread, or of the step's */
	for (uint32_t t = 0; t < m->ntracks && ok && st.nspans; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->file != f || tr->kind != MODEL_TRACK_THREAD)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges && ok; i++) {
			uint32_t l0 = tree->tracks[t].launches[i];
			if (l0 == TREE_NONE)
				continue;
			int64_t cs = r->start_ns[i], ce = cs + r->dur_ns[i];
			uint32_t k = steps_find(&st, cs, ce), label = others;
			if (k < st.nspans) {
				uint32_t c = call_at(ix, t, cs);
				uint32_t home = st.spans[k].track;
				if (c == UINT32_MAX && home != UINT32_MAX && home != t)
					c = call_at(ix, home, cs);
				label = c == UINT32_MAX ? others : c;
			}
			for (uint32_t l = l0; l != TREE_NONE && ok; l = tree->launches[l].next) {
				const struct tree_launch *la = &tree->launches[l];
				const struct model_ranges *d = &m->tracks[la->track].ranges;
				if (d->category[la->range] != OPSCOPE_CAT_KERNEL)
					continue;
				if (!seen[la->track])
					seen[la->track] = calloc(m->tracks[la->track].nranges, 1);
				if (!seen[la->track]) {
					ok = false;
					break;
				}
				seen[la->track][la->range] = 1;
				int64_t s = d->start_ns[la->range], e = s + d->dur_ns[la->range];
				ok = livl_push_clipped(&pieces, &np, &cap, s, e, label, &spans);
			}
		}
	}
	/* kernels no call of a step launched: Others */
	for (uint32_t t = 0; t < m->ntracks && ok && st.nspans; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->file != f || tr->kind != MODEL_TRACK_DEVICE)
			continue;
		const struct model_ranges *d = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges && ok; i++) {
			if (d->category[i] != OPSCOPE_CAT_KERNEL || (seen[t] && seen[t][i]))
				continue;
			ok = livl_push_clipped(&pieces, &np, &cap, d->start_ns[i],
					       d->start_ns[i] + d->dur_ns[i], others, &spans);
		}
	}
	/* per step: its pieces (each lies in one span: the spans do not overlap) */
	struct phase_step *steps = NULL;
	if (ok && st.nspans) {
		steps = realloc(out->steps, (out->nsteps + st.nspans) * sizeof(*steps));
		ok = steps != NULL;
		if (ok)
			out->steps = steps;
	}
	if (ok && np)
		qsort(pieces, np, sizeof(*pieces), livl_start_cmp);
	size_t p = 0;
	for (uint32_t k = 0; k < st.nspans && ok; k++) {
		struct phase_step *ps = &out->steps[out->nsteps++];
		memset(ps, 0, sizeof(*ps));
		ps->file = f;
		ps->s = st.spans[k].s;
		ps->e = st.spans[k].e;
		while (p < np && pieces[p].s < ps->s)
			p++;
		size_t q = p;
		while (q < np && pieces[q].s < ps->e)
			q++;
		/* no pieces at all: pieces is NULL, and NULL + 0 is undefined (clang's UBSan) */
		ok = share_step(np ? pieces + p : NULL, q - p, ix->calls, ncalls, gpu_share, ps) ==
		     0;
		p = q;
	}
	for (uint32_t t = 0; seen && t < m->ntracks; t++)
		free(seen[t]);
	free(seen);
	free(pieces);
	ivec_free(&spans);
	steps_free(&st);
	return ok ? 0 : OPSCOPE_ENOMEM;
}

static void phase_init(struct phase_time *p, int k)
{
	memset(p, 0, sizeof(*p));
	p->category = phase_category[k];
	p->cpu_min_ns = INT64_MAX;
	p->gpu_min_ns = INT64_MAX;
}

int phases_file(const struct analysis *a, uint32_t f, struct phases_part *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	phase_init(&out->step, PHASE_PROFILE_STEP);
	if (phases_calls_file(a, f, &out->calls, &out->ncalls) != 0)
		return OPSCOPE_ENOMEM;
	size_t ncalls = out->ncalls;
	const struct phase_call *calls = out->calls;
	out->gpu_share = calloc(ncalls + 1, sizeof(*out->gpu_share));
	struct call_index ix = { calls, malloc((ncalls ? ncalls : 1) * sizeof(struct call_ref)),
				 calloc(m->ntracks + 1, sizeof(size_t)) };
	bool oom = !out->gpu_share || !ix.order || !ix.first;
	/* GPU: each call's share of its steps' kernel time: the steps of a file are shared
	 * among that file's calls only, so a file's shares are its own */
	for (size_t c = 0; c < ncalls && !oom; c++) {
		ix.order[c] = (struct call_ref){ calls[c].track, (uint32_t)c, calls[c].s };
		ix.first[calls[c].track + 1]++;
	}
	for (uint32_t t = 0; t < m->ntracks && !oom; t++)
		ix.first[t + 1] += ix.first[t];
	if (!oom && ncalls)
		qsort(ix.order, ncalls, sizeof(*ix.order), by_track_cmp);
	struct phases st = { 0 };
	for (uint32_t g = 0; g < m->nfiles && !oom; g++)
		if (f == PHASES_ALL_FILES || g == f)
			oom = file_gpu(a, g, &ix, ncalls, out->gpu_share, &st) != 0;
	out->steps = st.steps;
	out->nsteps = st.nsteps;
	free(ix.order);
	free(ix.first);
	if (oom) {
		phases_part_free(out);
		return OPSCOPE_ENOMEM;
	}
	/* ProfileStep: every range; GPU = its steps' kernel time */
	struct phase_time *ps = &out->step;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD || (f != PHASES_ALL_FILES && tr->file != f))
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++)
			if (tr->ranges.category[i] == OPSCOPE_CAT_PROFILE_STEP)
				phase_add(ps, tr->ranges.dur_ns[i], 0);
	}
	ps->gpu_max_ns = 0;
	ps->gpu_min_ns = INT64_MAX;
	for (uint32_t k = 0; k < out->nsteps; k++) {
		int64_t g = out->steps[k].gpu_ns;
		ps->gpu_ns += g;
		ps->gpu_max_ns = g > ps->gpu_max_ns ? g : ps->gpu_max_ns;
		ps->gpu_min_ns = g < ps->gpu_min_ns ? g : ps->gpu_min_ns;
	}
	return 0;
}

void phases_part_free(struct phases_part *p)
{
	free(p->calls);
	free(p->gpu_share);
	free(p->steps);
	memset(p, 0, sizeof(*p));
}

void phases_step_join(struct phase_time *into, const struct phase_time *x)
{
	into->calls += x->calls;
	into->cpu_ns += x->cpu_ns;
	into->cpu_max_ns = x->cpu_max_ns > into->cpu_max_ns ? x->cpu_max_ns : into->cpu_max_ns;
	into->cpu_min_ns = x->cpu_min_ns < into->cpu_min_ns ? x->cpu_min_ns : into->cpu_min_ns;
	into->gpu_ns += x->gpu_ns;
	into->gpu_max_ns = x->gpu_max_ns > into->gpu_max_ns ? x->gpu_max_ns : into->gpu_max_ns;
	into->gpu_min_ns = x->gpu_min_ns < into->gpu_min_ns ? x->gpu_min_ns : into->gpu_min_ns;
}

/* qsort order of call indices: the calls' order (call_cmp). */
static _Thread_local const struct phase_call *order_calls;

static int index_cmp(const void *x, const void *y)
{
	return call_cmp(&order_calls[*(const size_t *)x], &order_calls[*(const size_t *)y]);
}

int phases_combine(struct phase_call *calls, int64_t *gpu_share, size_t ncalls,
		   const struct phase_time *step, const struct ivec *total, int64_t total_ns,
		   struct phases *out)
{
	memset(out, 0, sizeof(*out));
	for (int k = 0; k < PHASE_COUNT; k++)
		phase_init(&out->phase[k], k);
	/* the calls in their order, their shares with them */
	size_t *idx = malloc((ncalls ? ncalls : 1) * sizeof(*idx));
	struct phase_call *c2 = malloc((ncalls ? ncalls : 1) * sizeof(*c2));
	int64_t *g2 = malloc((ncalls ? ncalls : 1) * sizeof(*g2));
	int64_t *share = calloc(ncalls + 1, sizeof(*share));
	struct livl *pieces = NULL;
	size_t npieces = 0, cap = 0;
	bool oom = !idx || !c2 || !g2 || !share;
	for (size_t c = 0; c < ncalls && !oom; c++)
		idx[c] = c;
	order_calls = calls;
	if (!oom && ncalls)
		qsort(idx, ncalls, sizeof(*idx), index_cmp);
	for (size_t c = 0; c < ncalls && !oom; c++) {
		c2[c] = calls[idx[c]];
		g2[c] = gpu_share[idx[c]];
	}
	if (!oom && ncalls) {
		memcpy(calls, c2, ncalls * sizeof(*calls));
		memcpy(gpu_share, g2, ncalls * sizeof(*gpu_share));
	}
	free(idx);
	free(c2);
	free(g2);
	/* CPU: each call's share of the total time */
	for (size_t c = 0; c < ncalls && !oom; c++)
		oom = !livl_push_clipped(&pieces, &npieces, &cap, calls[c].s, calls[c].e,
					 (uint32_t)c, total);
	if (!oom)
		oom = livl_partition(pieces, npieces, (uint32_t)(ncalls + 1), share) != 0;
	int64_t phase_cpu = 0, phase_gpu = 0;
	for (size_t c = 0; c < ncalls && !oom; c++) {
		if (!ivec_touches(total, calls[c].s, calls[c].e) && !gpu_share[c])
			continue;
		phase_add(&out->phase[calls[c].phase], share[c], gpu_share[c]);
		phase_cpu += share[c];
		phase_gpu += gpu_share[c];
	}
	free(pieces);
	free(share);
	if (oom)
		return OPSCOPE_ENOMEM;
	/* ProfileStep: CPU total = the total time */
	struct phase_time *ps = &out->phase[PHASE_PROFILE_STEP];
	*ps = *step;
	ps->category = phase_category[PHASE_PROFILE_STEP];
	if (ps->calls)
		ps->cpu_ns = total_ns;
	for (int k = PHASE_DATALOADER; k < PHASE_COUNT; k++)
		out->nphases += out->phase[k].calls > 0;
	out->others_cpu_ns = total_ns - phase_cpu;
	out->others_gpu_ns = ps->gpu_ns - phase_gpu;
	return 0;
}

int phases_analyze(const struct analysis *a, struct phases *out)
{
	memset(out, 0, sizeof(*out));
	struct phases_part part;
	if (phases_file(a, PHASES_ALL_FILES, &part) != 0)
		return OPSCOPE_ENOMEM;
	int rc = phases_combine(part.calls, part.gpu_share, part.ncalls, &part.step, &a->total,
				a->total_ns, out);
	if (rc == 0) {
		out->steps = part.steps;
		out->nsteps = part.nsteps;
		part.steps = NULL;
	}
	phases_part_free(&part);
	return rc;
}

void phases_free(struct phases *p)
{
	free(p->steps);
	p->steps = NULL;
	p->nsteps = 0;
}
