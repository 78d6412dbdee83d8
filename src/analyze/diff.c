/*
 * diff.c: two sides compared, row by row (diff.h). Each side is worked out on its own (both
 * at once, on two threads: they only read their analyses): its step tables (steps.h), the
 * report's aggregations for the totals, and one pass over its ranges that puts each range's
 * time into the step it belongs to, a matrix of items x steps per kind, indexed like the
 * aggregation's items (the pass looks each range's item up by the aggregation's own key, so
 * both count the same ranges under the same item). The sides' rows are then joined by
 * (kind, name, shape) text, since the two models have string tables of their own.
 *
 * Invariants: a side's per-step vectors have one slot per step compared (the range, or all
 * kept steps); a step index is the step's position among its file's kept steps, the same
 * index across the files of a side (rank r's step k and rank q's step k are one step).
 */
#include "analyze/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/aggregate.h"
#include "analyze/phases.h"
#include "analyze/steps.h"
#include "util/hashmap.h"
#include "util/parallel.h"

static const char *const kind_names[DIFF_NKINDS] = {
	[DIFF_STEP] = "step",	  [DIFF_PHASE] = "phase",   [DIFF_OP] = "op",
	[DIFF_MODULE] = "module", [DIFF_KERNEL] = "kernel", [DIFF_NVTX] = "nvtx",
	[DIFF_USER] = "user",
};

const char *diff_kind_name(enum diff_kind k)
{
	return k < DIFF_NKINDS ? kind_names[k] : "?";
}

bool diff_kind_parse(const char *s, size_t n, enum diff_kind *k)
{
	for (int i = 0; i < DIFF_NKINDS; i++)
		if (strlen(kind_names[i]) == n && memcmp(kind_names[i], s, n) == 0) {
			*k = (enum diff_kind)i;
			return true;
		}
	return false;
}

/* t(0.975, df) for df = 1..30 (Student's t table, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2). */
static const double t_table[30] = {
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201,	2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080,	2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
};

double diff_t_crit(double df)
{
	if (!(df >= 1))
		return t_table[0];
	if (df < 31)
		return t_table[(int)df - 1];
	if (df < 40)
		return 2.042;
	if (df < 60)
		return 2.021;
	if (df < 120)
		return 2.000;
	return df < INFINITY ? 1.980 : 1.960;
}

/* ---------------------------------------------------------------------------------------- */
/* One side */

/* Per kind: the aggregation's items x the steps compared. */
struct side_mat {
	uint32_t nitems;  /* items of the kind's aggregation (rows of the matrix) */
	int64_t *time_ns; /* ns: [item * nsel + step - first], the item's time in that step */
	uint32_t *calls;  /* the same for its calls */
};

struct side {
	const struct diff_side *ds;
	const struct analysis *an;
	const struct diff_opts *o;
	uint32_t nfiles;
	struct step_table *st; /* per file */
	uint32_t nsteps;       /* kept steps: the most of any file */
	bool has_steps;	       /* the trace has ProfileStep ranges */
	uint32_t first, nsel;  /* steps compared: [first, first + nsel) */
	struct agg op, user, mod, kern;
	struct agg_nvtx nv;
	struct phases ph;
	int64_t *step_time_ns;		  /* ns: per step compared, the step's time (all files) */
	uint32_t *step_calls;		  /* per step compared: the files that have it */
	struct side_mat mat[DIFF_NKINDS]; /* DIFF_OP .. DIFF_USER; DIFF_PHASE by enum phase */
	uint32_t shape_key;		  /* string id of "Input Dims" (by_shape), else 0 */
	int rc;				  /* 0, OPSCOPE_ENOMEM or OPSCOPE_EINVAL */
};

static bool mat_alloc(struct side_mat *x, uint32_t nitems, uint32_t nsel)
{
	x->nitems = nitems;
	size_t n = (size_t)nitems * nsel;
	x->time_ns = calloc(n ? n : 1, sizeof(*x->time_ns));
	x->calls = calloc(n ? n : 1, sizeof(*x->calls));
	return x->time_ns && x->calls;
}

/* Count `t` ns and one call (calls false: time only) for item of kind k in step `step`. */
static inline void mat_add(struct side *S, int k, uint32_t item, uint32_t step, int64_t t,
			   bool call)
{
	struct side_mat *x = &S->mat[k];
	if (item >= x->nitems || step < S->first || step - S->first >= S->nsel)
		return;
	size_t at = (size_t)item * S->nsel + (step - S->first);
	x->time_ns[at] += t;
	x->calls[at] += call;
}

/* The kept step of file table t whose host span holds instant s, or UINT32_MAX. */
static uint32_t step_at(const struct step_table *t, int64_t s)
{
	uint32_t k = steps_find(t, s, s + 1);
	return k < t->nrows ? k : UINT32_MAX;
}

/* The module item of the nearest enclosing module call of range i (item_of: per range of the
 * track, its module item or AGG_NONE), AGG_NONE if none: agg_modules's parent rule. */
static uint32_t module_parent(const struct tree_track *tk, const uint32_t *item_of, uint64_t i)
{
	for (uint64_t p = tk->parent[i]; p != MODEL_NONE; p = tk->parent[p])
		if (item_of[p] != AGG_NONE)
			return item_of[p];
	return AGG_NONE;
}

/* The per-step pass over the host ranges of thread or async track tt of file f. */
static void side_track(struct side *S, uint32_t tt, const struct step_table *st)
{
	const struct model *m = S->an->m;
	const struct model_track *tr = &m->tracks[tt];
	const struct tree_track *tk = &S->an->tree.tracks[tt];
	const struct model_ranges *r = &tr->ranges;
	uint32_t dom_key = model_find_str(m, "domain");
	uint32_t *item_of = NULL; /* module items per range, made at the first module call */
	bool thread = tr->kind == MODEL_TRACK_THREAD;
	for (uint64_t i = 0; i < tr->nranges; i++) {
		uint8_t cat = r->category[i];
		if (cat == OPSCOPE_CAT_NVTX) {
			uint32_t step = step_at(st, r->start_ns[i]);
			uint32_t dom = agg_get(&S->nv.a, AGG_NONE, agg_arg_group(m, tt, i, dom_key),
					       AGG_NVTX_DOMAIN);
			uint32_t it = dom == AGG_NONE ? AGG_NONE
						      : agg_get(&S->nv.a, dom, r->name[i],
								thread ? AGG_NVTX_PUSHPOP
								       : AGG_NVTX_STARTEND);
			if (step != UINT32_MAX)
				mat_add(S, DIFF_NVTX, it, step, r->dur_ns[i], true);
			continue;
		}
		if (!thread)
			continue;
		if (tree_is_runtime(cat) && tk->launches && tk->launches[i] != TREE_NONE) {
			/* kernels count for the step whose host span holds their launch */
			uint32_t step =
				steps_find(st, r->start_ns[i], r->start_ns[i] + r->dur_ns[i]);
			if (step >= st->nrows)
				continue;
			for (uint32_t l = tk->launches[i]; l != TREE_NONE;
			     l = S->an->tree.launches[l].next) {
				const struct tree_launch *L = &S->an->tree.launches[l];
				const struct model_ranges *d = &m->tracks[L->track].ranges;
				if (!tree_is_kernel(d->category[L->range]))
					continue;
				uint32_t it = agg_get(&S->kern, AGG_NONE, d->name[L->range],
						      AGG_KIND_RANGE);
				mat_add(S, DIFF_KERNEL, it, step, d->dur_ns[L->range], true);
			}
			continue;
		}
		const char *name = model_str(m, r->name[i]);
		bool module = agg_is_module(cat, name);
		if (module) {
			if (!item_of) {
				item_of = malloc(tr->nranges * sizeof(*item_of));
				if (!item_of) {
					S->rc = OPSCOPE_ENOMEM;
					return;
				}
				memset(item_of, 0xff,
				       tr->nranges * sizeof(*item_of)); /* AGG_NONE */
			}
			uint32_t it = agg_get(&S->mod, module_parent(tk, item_of, i), r->name[i],
					      AGG_KIND_RANGE);
			item_of[i] = it;
		}
		uint32_t step = step_at(st, r->start_ns[i]);
		if (step == UINT32_MAX)
			continue;
		if (module)
			mat_add(S, DIFF_MODULE, item_of[i], step, r->dur_ns[i], true);
		if (cat == OPSCOPE_CAT_OPERATOR) {
			uint32_t g = agg_arg_group(m, tt, i, S->shape_key);
			uint32_t it =
				agg_get_group(&S->op, AGG_NONE, r->name[i], g, AGG_KIND_RANGE);
			mat_add(S, DIFF_OP, it, step, r->dur_ns[i], true);
		} else if (agg_selects(m, AGG_USER_DEFINED, cat, r->name[i])) {
			uint32_t it = agg_get(&S->user, AGG_NONE, r->name[i], AGG_KIND_RANGE);
			mat_add(S, DIFF_USER, it, step, r->dur_ns[i], true);
		}
	}
	free(item_of);
}

/* The phases' per-step shares: per kept step, the phase calls of its file clipped to its host
 * span, shared out first phase first (livl_partition), as phases.c shares the total time. */
static int side_phases(struct side *S)
{
	const struct model *m = S->an->m;
	struct phase_call *calls = NULL;
	size_t ncalls = 0;
	if (phases_calls(S->an, &calls, &ncalls) != 0)
		return OPSCOPE_ENOMEM;
	struct livl *v = malloc((ncalls ? ncalls : 1) * sizeof(*v));
	if (!v) {
		free(calls);
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t f = 0; f < S->nfiles; f++) {
		const struct step_table *st = &S->st[f];
		for (uint32_t k = 0; k < st->nrows; k++) {
			int64_t hs = st->spans[k].host_s, he = st->spans[k].host_e;
			size_t n = 0;
			for (size_t c = 0; c < ncalls; c++) {
				const struct phase_call *pc = &calls[c];
				if (m->tracks[pc->track].file != f || pc->e <= hs || pc->s >= he)
					continue;
				v[n++] = (struct livl){ pc->s < hs ? hs : pc->s,
							pc->e > he ? he : pc->e, pc->phase };
				if (pc->s >= hs)
					mat_add(S, DIFF_PHASE, pc->phase, k, 0, true);
			}
			int64_t share[PHASE_COUNT] = { 0 };
			if (livl_partition(v, n, PHASE_COUNT, share) != 0) {
				free(v);
				free(calls);
				return OPSCOPE_ENOMEM;
			}
			for (int p = PHASE_DATALOADER; p < PHASE_COUNT; p++)
				mat_add(S, DIFF_PHASE, (uint32_t)p, k, share[p], false);
		}
	}
	free(v);
	free(calls);
	return 0;
}

static int side_run(struct side *S)
{
	const struct analysis *an = S->an;
	const struct model *m = an->m;
	S->nfiles = m->nfiles;
	S->has_steps = an->has_steps;
	S->st = calloc(m->nfiles ? m->nfiles : 1, sizeof(*S->st));
	if (!S->st)
		return OPSCOPE_ENOMEM;
	for (uint32_t f = 0; f < m->nfiles; f++) {
		if (steps_analyze(&an->tree, f, &S->st[f]) != 0)
			return OPSCOPE_ENOMEM;
		if (S->st[f].nrows > S->nsteps)
			S->nsteps = S->st[f].nrows;
	}
	if (S->ds->ranged) {
		if (S->ds->first_step > S->ds->last_step || S->ds->last_step >= S->nsteps)
			return OPSCOPE_EINVAL;
		S->first = S->ds->first_step;
		S->nsel = S->ds->last_step - S->ds->first_step + 1;
	} else {
		S->first = 0;
		S->nsel = S->nsteps;
	}
	S->shape_key = S->o->by_shape ? model_find_str(m, "Input Dims") : 0;
	int64_t ktotal;
	if (agg_host_ranges(an, AGG_OPERATORS, MODEL_NO_TRACK, false, S->shape_key, &S->op) ||
	    agg_host_ranges(an, AGG_USER_DEFINED, MODEL_NO_TRACK, false, 0, &S->user) ||
	    agg_modules(an, MODEL_NO_TRACK, &S->mod) || agg_kernels(m, &S->kern, &ktotal) ||
	    agg_nvtx(m, &S->nv) || phases_analyze(an, &S->ph))
		return OPSCOPE_ENOMEM;
	S->step_time_ns = calloc(S->nsel ? S->nsel : 1, sizeof(*S->step_time_ns));
	S->step_calls = calloc(S->nsel ? S->nsel : 1, sizeof(*S->step_calls));
	if (!S->step_time_ns || !S->step_calls ||
	    !mat_alloc(&S->mat[DIFF_PHASE], PHASE_COUNT, S->nsel) ||
	    !mat_alloc(&S->mat[DIFF_OP], S->op.n, S->nsel) ||
	    !mat_alloc(&S->mat[DIFF_MODULE], S->mod.n, S->nsel) ||
	    !mat_alloc(&S->mat[DIFF_KERNEL], S->kern.n, S->nsel) ||
	    !mat_alloc(&S->mat[DIFF_NVTX], S->nv.a.n, S->nsel) ||
	    !mat_alloc(&S->mat[DIFF_USER], S->user.n, S->nsel))
		return OPSCOPE_ENOMEM;
	for (uint32_t f = 0; f < m->nfiles; f++) {
		const struct step_table *st = &S->st[f];
		for (uint32_t k = S->first; k < st->nrows && k - S->first < S->nsel; k++) {
			S->step_time_ns[k - S->first] += st->rows[k].end_ns - st->rows[k].start_ns;
			S->step_calls[k - S->first]++;
		}
	}
	for (uint32_t tt = 0; tt < m->ntracks && S->rc == 0; tt++)
		if (m->tracks[tt].kind != MODEL_TRACK_DEVICE)
			side_track(S, tt, &S->st[m->tracks[tt].file]);
	if (S->rc)
		return S->rc;
	/* the per-step lookups found every item the aggregations made, and made none */
	if (S->op.oom || S->user.oom || S->mod.oom || S->kern.oom || S->nv.a.oom)
		return OPSCOPE_ENOMEM;
	return side_phases(S);
}

static void side_free(struct side *S)
{
	for (uint32_t f = 0; S->st && f < S->nfiles; f++)
		steps_free(&S->st[f]);
	free(S->st);
	agg_free(&S->op);
	agg_free(&S->user);
	agg_free(&S->mod);
	agg_free(&S->kern);
	agg_nvtx_free(&S->nv);
	phases_free(&S->ph);
	free(S->step_time_ns);
	free(S->step_calls);
	for (int k = 0; k < DIFF_NKINDS; k++) {
		free(S->mat[k].time_ns);
		free(S->mat[k].calls);
	}
}

static void side_task(void *arg, uint32_t i)
{
	struct side *S = &((struct side *)arg)[i];
	S->rc = side_run(S);
}

/* ---------------------------------------------------------------------------------------- */
/* The join */

/* A row being joined: the diff row and each side's per-step totals. */
struct jrow {
	struct diff_row r;
	int64_t *steps[2]; /* ns per step compared, per side (NULL: the side had no item) */
};

struct join {
	struct jrow *v;
	size_t n, cap;
	struct hindex index; /* rows by (kind, name, shape) */
	const char *kname;   /* the key being looked up */
	const char *kshape;
	uint8_t kkind;
	bool oom;
};

static uint64_t key_hash(uint8_t kind, const char *name, const char *shape)
{
	uint64_t h = 0xcbf29ce484222325ull ^ kind;
	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (const char *p = shape ? shape : ""; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	return hash_u64(h);
}

static bool join_eq(const void *ctx, uint32_t i)
{
	const struct join *J = ctx;
	const struct diff_row *r = &J->v[i].r;
	return r->kind == J->kkind && strcmp(r->name, J->kname) == 0 &&
	       strcmp(r->shape ? r->shape : "", J->kshape ? J->kshape : "") == 0;
}

static uint64_t join_hash(const void *ctx, uint32_t i)
{
	const struct diff_row *r = &((const struct join *)ctx)->v[i].r;
	return key_hash(r->kind, r->name, r->shape);
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

/* The row of (kind, name, shape), made on first use; NULL when out of memory. */
static struct jrow *join_row(struct join *J, uint8_t kind, const char *name, const char *shape)
{
	uint64_t h = key_hash(kind, name, shape);
	J->kkind = kind;
	J->kname = name;
	J->kshape = shape && *shape ? shape : NULL;
	uint32_t i = hindex_find(&J->index, h, join_eq, J);
	if (i != HINDEX_NONE)
		return &J->v[i];
	if (J->n >= UINT32_MAX - 1 || !hindex_reserve(&J->index, join_hash, J))
		return NULL;
	if (J->n == J->cap) {
		size_t cap = J->cap ? J->cap * 2 : 256;
		struct jrow *v = realloc(J->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		J->v = v;
		J->cap = cap;
	}
	struct jrow *w = &J->v[J->n];
	memset(w, 0, sizeof(*w));
	w->r.kind = kind;
	w->r.gpu = kind == DIFF_KERNEL;
	w->r.name = dup_str(name);
	w->r.shape = J->kshape ? dup_str(J->kshape) : NULL;
	if (!w->r.name || (J->kshape && !w->r.shape)) {
		free(w->r.name);
		free(w->r.shape);
		return NULL;
	}
	hindex_insert(&J->index, h, (uint32_t)J->n);
	J->n++;
	return w;
}

/* Add item `item` of kind k of side s (whole-trace totals calls/time) to the join. */
static void join_add(struct join *J, const struct side *S, int s, uint8_t kind, uint32_t item,
		     const char *name, const char *shape, uint64_t calls, int64_t time)
{
	const int64_t *steps = NULL;
	const uint32_t *scalls = NULL;
	if (kind == DIFF_STEP) {
		steps = S->step_time_ns;
		scalls = S->step_calls;
	} else if (item < S->mat[kind].nitems) {
		steps = S->mat[kind].time_ns + (size_t)item * S->nsel;
		scalls = S->mat[kind].calls + (size_t)item * S->nsel;
	}
	if (S->ds->ranged) { /* the totals of the steps compared */
		calls = 0;
		time = 0;
		for (uint32_t k = 0; steps && k < S->nsel; k++) {
			calls += scalls[k];
			time += steps[k];
		}
	}
	if (calls == 0 && time == 0)
		return;
	struct jrow *w = join_row(J, kind, name, shape);
	if (!w) {
		J->oom = true;
		return;
	}
	if (!w->steps[s] && S->nsel) {
		w->steps[s] = calloc(S->nsel, sizeof(*w->steps[s]));
		if (!w->steps[s]) {
			J->oom = true;
			return;
		}
	}
	w->r.side[s].calls += calls;
	w->r.side[s].time_ns += time;
	for (uint32_t k = 0; steps && k < S->nsel; k++)
		w->steps[s][k] += steps[k];
}

/* The nn.Module path of module item i: the names of it and its parents, outermost first,
 * without the "nn.Module: " prefix, joined by " > ". false when out of memory. */
static bool module_path(const struct model *m, const struct agg *a, uint32_t i, char **buf,
			size_t *cap)
{
	size_t len = 0;
	uint32_t chain[256];
	size_t depth = 0;
	for (uint32_t p = i; p != AGG_NONE && depth < 256; p = a->v[p].parent)
		chain[depth++] = p;
	for (size_t d = depth; d-- > 0;) {
		const char *nm = model_str(m, a->v[chain[d]].name);
		nm += agg_module_prefix_len(nm);
		size_t n = strlen(nm);
		if (len + n + 4 > *cap) {
			size_t nc = (len + n + 4) * 2;
			char *b = realloc(*buf, nc);
			if (!b)
				return false;
			*buf = b;
			*cap = nc;
		}
		if (len) {
			memcpy(*buf + len, " > ", 3);
			len += 3;
		}
		memcpy(*buf + len, nm, n);
		len += n;
	}
	if (!*buf) {
		*buf = malloc(1);
		if (!*buf)
			return false;
		*cap = 1;
	}
	(*buf)[len] = '\0';
	return true;
}

static void join_side(struct join *J, const struct side *S, int s)
{
	const struct model *m = S->an->m;
	uint64_t nst = 0;
	int64_t tst = 0;
	for (uint32_t f = 0; f < S->nfiles; f++)
		for (uint32_t k = 0; k < S->st[f].nrows; k++) {
			nst++;
			tst += S->st[f].rows[k].end_ns - S->st[f].rows[k].start_ns;
		}
	join_add(J, S, s, DIFF_STEP, 0, "ProfileStep", NULL, nst, tst);
	for (int p = PHASE_DATALOADER; p < PHASE_COUNT; p++) {
		static const char *const names[PHASE_COUNT] = { "ProfileStep", "Dataloader",
								"Forward", "Backward",
								"Optimization" };
		join_add(J, S, s, DIFF_PHASE, (uint32_t)p, names[p], NULL, S->ph.phase[p].calls,
			 S->ph.phase[p].cpu_ns);
	}
	for (uint32_t i = 0; i < S->op.n; i++) {
		const struct agg_item *it = &S->op.v[i];
		join_add(J, S, s, DIFF_OP, i, model_str(m, it->name),
			 it->group ? model_str(m, it->group) : NULL, it->calls, it->cpu_ns);
	}
	for (uint32_t i = 0; i < S->user.n; i++) {
		const struct agg_item *it = &S->user.v[i];
		join_add(J, S, s, DIFF_USER, i, model_str(m, it->name), NULL, it->calls,
			 it->cpu_ns);
	}
	for (uint32_t i = 0; i < S->kern.n; i++) {
		const struct agg_item *it = &S->kern.v[i];
		join_add(J, S, s, DIFF_KERNEL, i, model_str(m, it->name), NULL, it->calls,
			 it->gpu_ns);
	}
	char *buf = NULL;
	size_t cap = 0;
	for (uint32_t i = 0; i < S->mod.n && !J->oom; i++) {
		const struct agg_item *it = &S->mod.v[i];
		if (!module_path(m, &S->mod, i, &buf, &cap)) {
			J->oom = true;
			break;
		}
		join_add(J, S, s, DIFF_MODULE, i, buf, NULL, it->calls, it->cpu_ns);
	}
	for (uint32_t i = 0; i < S->nv.a.n && !J->oom; i++) {
		const struct agg_item *it = &S->nv.a.v[i];
		if (it->kind == AGG_NVTX_DOMAIN)
			continue;
		/* nsys's name@domain for a range outside the default domain */
		const char *nm = model_str(m, it->name);
		uint32_t dom = S->nv.a.v[it->parent].name;
		const char *key = nm;
		if (dom) {
			size_t need = strlen(nm) + model_strlen(m, dom) + 2;
			if (need > cap) {
				char *b = realloc(buf, need);
				if (!b) {
					J->oom = true;
					break;
				}
				buf = b;
				cap = need;
			}
			memcpy(buf, nm, strlen(nm));
			buf[strlen(nm)] = '@';
			memcpy(buf + strlen(nm) + 1, model_str(m, dom), model_strlen(m, dom) + 1);
			key = buf;
		}
		join_add(J, S, s, DIFF_NVTX, i, key, NULL, it->calls, it->cpu_ns);
	}
	free(buf);
}

/* Mean and sample standard deviation of n values (sd 0 for one). */
static void mean_sd(const int64_t *x, uint32_t n, double *mean, double *sd)
{
	*mean = *sd = 0;
	if (!n)
		return;
	double sum = 0;
	for (uint32_t k = 0; k < n; k++)
		sum += (double)(x ? x[k] : 0);
	*mean = sum / n;
	if (n < 2)
		return;
	double ss = 0;
	for (uint32_t k = 0; k < n; k++) {
		double d = (double)(x ? x[k] : 0) - *mean;
		ss += d * d;
	}
	*sd = sqrt(ss / (n - 1));
}

static void row_stats(struct diff_row *r, int64_t *const steps[2], const uint32_t nsel[2])
{
	for (int s = 0; s < 2; s++) {
		r->side[s].nsteps = nsel[s];
		mean_sd(steps[s], nsel[s], &r->side[s].mean_ns, &r->side[s].sd_ns);
	}
	const struct diff_stat *A = &r->side[0], *B = &r->side[1];
	r->status = A->calls == 0 ? DIFF_ADDED : B->calls == 0 ? DIFF_REMOVED : DIFF_BOTH;
	r->change_ns = B->time_ns - A->time_ns;
	r->change = A->time_ns	 ? (double)r->change_ns / (double)A->time_ns
		    : B->time_ns ? INFINITY
				 : 0;
	/* a row with no time in any step compared (outside the steps) has no spread to judge by */
	bool in_steps = A->mean_ns != 0 || B->mean_ns != 0;
	if (A->nsteps < 2 || B->nsteps < 2 || (!in_steps && r->change_ns != 0)) {
		r->noise = DIFF_NOISE_UNKNOWN;
		r->se_ns = r->t = r->df = NAN;
		return;
	}
	double va = A->sd_ns * A->sd_ns / A->nsteps, vb = B->sd_ns * B->sd_ns / B->nsteps;
	double d = B->mean_ns - A->mean_ns;
	r->se_ns = sqrt(va + vb);
	if (r->se_ns == 0) { /* no spread: any difference is beyond noise */
		r->t = d == 0 ? 0 : d > 0 ? INFINITY : -INFINITY;
		r->df = A->nsteps + B->nsteps - 2;
	} else {
		r->t = d / r->se_ns;
		r->df = (va + vb) * (va + vb) /
			(va * va / (A->nsteps - 1) + vb * vb / (B->nsteps - 1));
	}
	r->noise = fabs(r->t) <= diff_t_crit(r->df) ? DIFF_NOISE_WITHIN : DIFF_NOISE_BEYOND;
}

static int row_cmp(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	int64_t ca = a->change_ns < 0 ? -a->change_ns : a->change_ns;
	int64_t cb = b->change_ns < 0 ? -b->change_ns : b->change_ns;
	if (ca != cb)
		return ca > cb ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return strcmp(a->shape ? a->shape : "", b->shape ? b->shape : "");
}

int diff_compute(const struct diff_side *a, const struct diff_side *b, const struct diff_opts *o,
		 struct diff *out)
{
	memset(out, 0, sizeof(*out));
	struct side S[2];
	memset(S, 0, sizeof(S));
	S[0].ds = a;
	S[1].ds = b;
	for (int s = 0; s < 2; s++) {
		S[s].an = S[s].ds->an;
		S[s].o = o;
	}
	parallel_for(2, NULL, 2, side_task, S);
	int rc = 0;
	for (int s = 0; s < 2; s++) {
		out->nsteps[s] = S[s].nsteps;
		out->has_steps[s] = S[s].has_steps;
		if (S[s].rc && (rc == 0 || S[s].rc == OPSCOPE_ENOMEM))
			rc = S[s].rc;
	}
	struct join J;
	memset(&J, 0, sizeof(J));
	if (rc == 0) {
		join_side(&J, &S[0], 0);
		join_side(&J, &S[1], 1);
		if (J.oom)
			rc = OPSCOPE_ENOMEM;
	}
	uint32_t nsel[2] = { S[0].nsel, S[1].nsel };
	if (rc == 0) {
		out->rows = malloc((J.n ? J.n : 1) * sizeof(*out->rows));
		if (!out->rows)
			rc = OPSCOPE_ENOMEM;
	}
	for (size_t i = 0; i < J.n; i++) {
		if (rc == 0) {
			row_stats(&J.v[i].r, J.v[i].steps, nsel);
			out->rows[out->n++] = J.v[i].r;
		} else {
			free(J.v[i].r.name);
			free(J.v[i].r.shape);
		}
		free(J.v[i].steps[0]);
		free(J.v[i].steps[1]);
	}
	free(J.v);
	hindex_free(&J.index);
	side_free(&S[0]);
	side_free(&S[1]);
	if (rc) {
		uint32_t ns[2] = { out->nsteps[0], out->nsteps[1] };
		bool hs[2] = { out->has_steps[0], out->has_steps[1] };
		diff_free(out);
		memcpy(out->nsteps, ns, sizeof(ns));
		memcpy(out->has_steps, hs, sizeof(hs));
		return rc;
	}
	qsort(out->rows, out->n, sizeof(*out->rows), row_cmp);
	return 0;
}

void diff_free(struct diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->rows[i].name);
		free(d->rows[i].shape);
	}
	free(d->rows);
	memset(d, 0, sizeof(*d));
}
