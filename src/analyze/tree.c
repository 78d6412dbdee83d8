/*
 * tree.c: the event tree of tree.h: parents from depths, launch links from correlation ids,
 * then self and inclusive device times in one backward pass per track (children come after
 * their parents in a track's (start, depth) order).
 */
#include "analyze/tree.h"

#include <stdlib.h>
#include <string.h>

/* correlation -> (track, range) of the runtime call, per file; open addressing */
struct corr_entry {
	int64_t corr;
	uint32_t file;
	uint32_t track; /* TREE_NONE = empty */
	uint64_t range;
};

struct corr_map {
	struct corr_entry *e;
	uint64_t cap, n;
};

static uint64_t corr_hash(int64_t corr, uint32_t file)
{
	uint64_t h = ((uint64_t)corr ^ (uint64_t)file << 48) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static struct corr_entry *corr_slot(struct corr_map *cm, int64_t corr, uint32_t file)
{
	uint64_t mask = cm->cap - 1;
	for (uint64_t i = corr_hash(corr, file) & mask;; i = (i + 1) & mask) {
		struct corr_entry *e = &cm->e[i];
		if (e->track == TREE_NONE || (e->corr == corr && e->file == file))
			return e;
	}
}

static bool corr_grow(struct corr_map *cm)
{
	uint64_t cap = cm->cap ? cm->cap * 2 : 1024;
	struct corr_entry *old = cm->e;
	uint64_t oldcap = cm->cap;
	cm->e = malloc(cap * sizeof(*cm->e));
	if (!cm->e) {
		cm->e = old;
		return false;
	}
	for (uint64_t i = 0; i < cap; i++)
		cm->e[i].track = TREE_NONE;
	cm->cap = cap;
	for (uint64_t i = 0; i < oldcap; i++)
		if (old[i].track != TREE_NONE)
			*corr_slot(cm, old[i].corr, old[i].file) = old[i];
	free(old);
	return true;
}

/* The correlation id of range i of track t, if it has one. */
static bool range_corr(const struct model *m, uint32_t key, uint32_t t, uint64_t i, int64_t *v)
{
	if (!key)
		return false;
	uint64_t a = model_range_arg(m, t, i, key);
	if (a == MODEL_NONE ||
	    (m->args.type[a] != MODEL_ARG_I64 && m->args.type[a] != MODEL_ARG_U64))
		return false;
	*v = (int64_t)m->args.bits[a];
	return true;
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

int tree_build(struct tree *t, const struct model *m)
{
	memset(t, 0, sizeof(*t));
	t->m = m;
	t->tracks = calloc(m->ntracks ? m->ntracks : 1, sizeof(*t->tracks));
	if (!t->tracks)
		return OPSCOPE_ENOMEM;
	uint32_t key = model_find_str(m, "correlation");
	struct corr_map cm = { NULL, 0, 0 };
	for (uint32_t ti = 0; ti < m->ntracks && !t->oom; ti++) {
		const struct model_track *tr = &m->tracks[ti];
		struct tree_track *tt = &t->tracks[ti];
		if (tr->kind == MODEL_TRACK_ASYNC)
			continue; /* overlapping async ranges are not part of a thread's tree */
		if (!alloc_track(tt, tr)) {
			t->oom = true;
			break;
		}
		if (tr->kind == MODEL_TRACK_DEVICE)
			continue;
		if (!link_parents(tt, tr)) {
			t->oom = true;
			break;
		}
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int64_t corr;
			if (!tree_is_runtime(tr->ranges.category[i]) ||
			    !range_corr(m, key, ti, i, &corr))
				continue;
			if ((cm.n + 1) * 2 > cm.cap && !corr_grow(&cm)) {
				t->oom = true;
				break;
			}
			struct corr_entry *e = corr_slot(&cm, corr, tr->file);
			if (e->track == TREE_NONE)
				cm.n++;
			/* the last call with an id wins, as in Paddle */
			*e = (struct corr_entry){ corr, tr->file, ti, i };
		}
	}
	/* launches: device ranges to their calls */
	for (uint32_t ti = 0; ti < m->ntracks && !t->oom && cm.cap; ti++) {
		const struct model_track *tr = &m->tracks[ti];
		if (tr->kind != MODEL_TRACK_DEVICE)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int64_t corr;
			if (!tree_is_device_work(r->category[i]) ||
			    !range_corr(m, key, ti, i, &corr))
				continue;
			struct corr_entry *e = corr_slot(&cm, corr, tr->file);
			if (e->track == TREE_NONE)
				continue;
			if (t->nlaunches == t->launches_cap) {
				uint32_t cap = t->launches_cap ? t->launches_cap * 2 : 1024;
				struct tree_launch *l = realloc(t->launches, cap * sizeof(*l));
				if (!l || cap < t->launches_cap) {
					t->oom = true;
					break;
				}
				t->launches = l;
				t->launches_cap = cap;
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
	free(cm.e);
	/* inclusive device times and self times: children after parents, so walk backwards */
	for (uint32_t ti = 0; ti < m->ntracks && !t->oom; ti++) {
		const struct model_track *tr = &m->tracks[ti];
		struct tree_track *tt = &t->tracks[ti];
		if (tr->kind != MODEL_TRACK_THREAD)
			continue;
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
