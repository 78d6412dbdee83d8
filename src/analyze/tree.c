/*
 * tree.c: the event tree of tree.h: parents from depths, launch links from correlation ids,
 * then self and inclusive device times in one backward pass per track (children come after
 * their parents in a track's (start, depth) order).
 */
#include "analyze/tree.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/parallel.h"

/* A runtime call with a correlation id: where it is. track == TREE_NONE marks a free slot. */
struct corr_slot {
	int64_t corr;
	uint32_t track;
	uint64_t range;
};

/* Correlation id -> runtime call, for one file. Kineto numbers ids upward from 1, so they
 * usually fill a dense range: then the slots are an array indexed by id - lo, which the
 * device ranges, listed in about the order they were launched, read nearly in sequence (a
 * hash map missed the cache on every lookup: half of tree_build on a 1 GB trace). Sparse ids
 * fall back to a map from id to the call's place in the caller's list. */
struct corr_index {
	struct corr_slot *slots; /* dense: ids lo .. lo + cap - 1 */
	uint64_t cap;
	int64_t lo;
	bool dense;
	const struct corr_slot *calls; /* sparse: the calls, and by_id into them */
	struct hmap by_id;
};

/* The call with id corr, or NULL (or, dense, a free slot) when no call has it. */
static const struct corr_slot *corr_find(struct corr_index *x, int64_t corr)
{
	if (x->dense) {
		uint64_t at = (uint64_t)corr - (uint64_t)x->lo;
		return corr >= x->lo && at < x->cap ? &x->slots[at] : NULL;
	}
	const uint64_t *i = hmap_find(&x->by_id, (uint64_t)corr);
	return i ? &x->calls[*i] : NULL;
}

/* Index the calls (in track order, then range order: the last call with an id wins, as in
 * Paddle); a sparse index points into calls, which must outlive it. False when out of
 * memory. */
static bool corr_index_build(struct corr_index *x, const struct corr_slot *calls, uint64_t n)
{
	*x = (struct corr_index){ 0 };
	int64_t lo = calls[0].corr, hi = calls[0].corr;
	for (uint64_t i = 1; i < n; i++) {
		lo = calls[i].corr < lo ? calls[i].corr : lo;
		hi = calls[i].corr > hi ? calls[i].corr : hi;
	}
	uint64_t span = (uint64_t)hi - (uint64_t)lo; /* no overflow in unsigned arithmetic */
	x->dense = span < 4 * n + 4096;
	if (!x->dense) {
		x->calls = calls;
		for (uint64_t i = 0; i < n; i++)
			if (!hmap_put(&x->by_id, (uint64_t)calls[i].corr, i))
				return false;
		return true;
	}
	x->lo = lo;
	x->cap = span + 1;
	x->slots = malloc(x->cap * sizeof(*x->slots));
	if (!x->slots)
		return false;
	for (uint64_t i = 0; i < x->cap; i++)
		x->slots[i].track = TREE_NONE;
	for (uint64_t i = 0; i < n; i++)
		x->slots[(uint64_t)calls[i].corr - (uint64_t)lo] = calls[i];
	return true;
}

static void corr_index_free(struct corr_index *x)
{
	free(x->slots);
	hmap_free(&x->by_id);
}

static bool alloc_track(struct tree_track *tt, const struct model_track *tr)
{
	uint64_t n = tr->nranges ? tr->nranges : 1;
	if (tr->kind == MODEL_TRACK_DEVICE)
		return (tt->launched = calloc(n, sizeof(*tt->launched))) != NULL;
	tt->parent = malloc(n * sizeof(*tt->parent));
	tt->self_ns = malloc(n * sizeof(*tt->self_ns));
	tt->gpu_ns = calloc(n, sizeof(*tt->gpu_ns));
	tt->ggpu_ns = calloc(n, sizeof(*tt->ggpu_ns));
	tt->launches = malloc(n * sizeof(*tt->launches));
	if (!tt->parent || !tt->self_ns || !tt->gpu_ns || !tt->ggpu_ns || !tt->launches)
		return false;
	for (uint64_t i = 0; i < tr->nranges; i++)
		tt->launches[i] = TREE_NONE;
	return true;
}

/* Parents from depths: ranges are sorted by (start, depth), so the parent of a range at
 * depth d is the last range seen at depth d - 1. */
static bool link_parents(struct tree_track *tt, const struct model_track *tr)
{
	uint64_t cap = 64;
	uint64_t *last = malloc(cap * sizeof(*last));
	if (!last)
		return false;
	for (uint64_t k = 0; k < cap; k++)
		last[k] = MODEL_NONE;
	const struct model_ranges *r = &tr->ranges;
	for (uint64_t i = 0; i < tr->nranges; i++) {
		uint32_t d = r->depth[i];
		if (d >= cap) {
			uint64_t nc = cap;
			while (nc <= d)
				nc *= 2;
			uint64_t *p = realloc(last, nc * sizeof(*last));
			if (!p) {
				free(last);
				return false;
			}
			for (uint64_t k = cap; k < nc; k++)
				p[k] = MODEL_NONE;
			last = p;
			cap = nc;
		}
		tt->parent[i] = d > 0 ? last[d - 1] : MODEL_NONE;
		last[d] = i;
		tt->self_ns[i] = r->dur_ns[i];
	}
	free(last);
	return true;
}

/* Launch links of one file: each device range to the runtime call of the file with its
 * correlation id (the model's correlation column: no argument lookups). False when out of
 * memory. */
static bool link_launches(struct tree *t, uint32_t file)
{
	const struct model *m = t->m;
	struct corr_slot *calls = NULL;
	uint64_t n = 0, cap = 0;
	for (uint32_t ti = 0; ti < m->ntracks; ti++) {
		const struct model_track *tr = &m->tracks[ti];
		const uint64_t *cc = tr->ranges.correlation;
		if (tr->file != file || tr->kind != MODEL_TRACK_THREAD || !cc)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int64_t corr = (int64_t)cc[i];
			if (!corr || !tree_is_runtime(tr->ranges.category[i]))
				continue;
			if (n == cap) {
				uint64_t nc = cap ? cap * 2 : 1024;
				struct corr_slot *c = realloc(calls, nc * sizeof(*c));
				if (!c) {
					free(calls);
					return false;
				}
				calls = c;
				cap = nc;
			}
			calls[n++] = (struct corr_slot){ corr, ti, i };
		}
	}
	if (n == 0)
		return true;
	struct corr_index x;
	bool ok = corr_index_build(&x, calls, n);
	for (uint32_t ti = 0; ti < m->ntracks && ok; ti++) {
		const struct model_track *tr = &m->tracks[ti];
		const struct model_ranges *r = &tr->ranges;
		if (tr->file != file || tr->kind != MODEL_TRACK_DEVICE || !r->correlation)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int64_t corr = (int64_t)r->correlation[i];
			if (!corr || !tree_is_device_work(r->category[i]))
				continue;
			const struct corr_slot *e = corr_find(&x, corr);
			if (!e || e->track == TREE_NONE)
				continue;
			if (t->nlaunches == t->launches_cap) {
				uint32_t lc = t->launches_cap ? t->launches_cap * 2 : 1024;
				struct tree_launch *l =
					t->launches_cap <= UINT32_MAX / 2
						? realloc(t->launches, (size_t)lc * sizeof(*l))
						: NULL; /* ids of launches are 32 bits */
				if (!l) {
					ok = false;
					break;
				}
				t->launches = l;
				t->launches_cap = lc;
			}
			struct tree_track *ht = &t->tracks[e->track];
			t->launches[t->nlaunches] =
				(struct tree_launch){ ti, i, ht->launches[e->range] };
			ht->launches[e->range] = t->nlaunches++;
			ht->ggpu_ns[e->range] += r->dur_ns[i];
			if (tree_is_kernel(r->category[i]))
				ht->gpu_ns[e->range] += r->dur_ns[i];
			t->tracks[ti].launched[i] = true;
		}
	}
	corr_index_free(&x);
	free(calls);
	return ok;
}

/* Per track, before the launch links: its arrays and its ranges' parents. */
static void setup_track(void *arg, uint32_t ti)
{
	struct tree *t = arg;
	const struct model_track *tr = &t->m->tracks[ti];
	struct tree_track *tt = &t->tracks[ti];
	if (tr->kind == MODEL_TRACK_ASYNC)
		return; /* overlapping async ranges are not part of a thread's tree */
	if (!alloc_track(tt, tr) || (tr->kind == MODEL_TRACK_THREAD && !link_parents(tt, tr)))
		tt->oom = true;
}

/* Per track, after them: inclusive device times and self times; children come after their
 * parents, so one walk backwards. */
static void sum_track(void *arg, uint32_t ti)
{
	struct tree *t = arg;
	const struct model_track *tr = &t->m->tracks[ti];
	struct tree_track *tt = &t->tracks[ti];
	if (tr->kind != MODEL_TRACK_THREAD)
		return;
	for (uint64_t i = tr->nranges; i-- > 0;) {
		uint64_t p = tt->parent[i];
		if (p == MODEL_NONE)
			continue;
		tt->gpu_ns[p] += tt->gpu_ns[i];
		tt->ggpu_ns[p] += tt->ggpu_ns[i];
		tt->self_ns[p] -= tr->ranges.dur_ns[i];
	}
	for (uint64_t i = 0; i < tr->nranges; i++)
		if (tt->self_ns[i] < 0)
			tt->self_ns[i] = 0; /* children crossing their parent's end */
}

int tree_build(struct tree *t, const struct model *m)
{
	memset(t, 0, sizeof(*t));
	t->m = m;
	t->tracks = calloc(m->ntracks ? m->ntracks : 1, sizeof(*t->tracks));
	uint32_t *order = model_tracks_largest_first(m, 0);
	if (!t->tracks || !order) {
		free(t->tracks);
		free(order);
		t->tracks = NULL;
		return OPSCOPE_ENOMEM;
	}
	/* tracks on threads of their own (each writes only its arrays); launch links, which
	 * write into the arrays of the calls' tracks, on this one */
	unsigned threads = model_threads_for(m, 0);
	uint32_t nfiles = 0;
	parallel_for(m->ntracks, order, threads, setup_track, t);
	for (uint32_t ti = 0; ti < m->ntracks; ti++) {
		t->oom |= t->tracks[ti].oom;
		nfiles = m->tracks[ti].file >= nfiles ? m->tracks[ti].file + 1 : nfiles;
	}
	for (uint32_t f = 0; f < nfiles && !t->oom; f++)
		t->oom = !link_launches(t, f);
	if (!t->oom)
		parallel_for(m->ntracks, order, threads, sum_track, t);
	free(order);
	if (t->oom) {
		tree_free(t);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void tree_free(struct tree *t)
{
	if (t->tracks && t->m) {
		for (uint32_t i = 0; i < t->m->ntracks; i++) {
			struct tree_track *tt = &t->tracks[i];
			free(tt->parent);
			free(tt->self_ns);
			free(tt->gpu_ns);
			free(tt->ggpu_ns);
			free(tt->launches);
			free(tt->launched);
		}
	}
	free(t->tracks);
	free(t->launches);
	memset(t, 0, sizeof(*t));
}
