/*
 * timeline.c: the aggregated timeline of the HTML report (timeline.h).
 *
 * One pass per host track in range order keeps, per lane, the end of the last outermost range
 * taken: a range that starts before it lies inside that range and is skipped, so nested
 * operators count once, in their outer one. Each range taken adds its overlap with each window
 * it covers to that window's busy time and to the (window, name) pair's time, in a map keyed
 * by lane, window and name; the top name of each window is then one pass over the map. The map
 * holds at most one entry per window and distinct name, so the cost is the ranges plus the
 * windows they span.
 */
#include "analyze/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "util/grow.h"
#include "util/hashmap.h"

const char *timeline_lane_name(enum timeline_lane l)
{
	static const char *const names[TIMELINE_NLANES] = { "phases", "operators", "kernels" };
	return l < TIMELINE_NLANES ? names[l] : "?";
}

/* The lane of a range of category cat on a track of kind kind, or -1 for none. */
static int lane_of(uint32_t kind, uint8_t cat)
{
	if (kind == MODEL_TRACK_DEVICE)
		return cat == OPSCOPE_CAT_KERNEL ? TIMELINE_KERNELS : -1;
	if (kind != MODEL_TRACK_THREAD)
		return -1;
	switch (cat) {
	case OPSCOPE_CAT_FORWARD:
	case OPSCOPE_CAT_BACKWARD:
	case OPSCOPE_CAT_OPTIMIZATION:
	case OPSCOPE_CAT_DATALOADER:
		return TIMELINE_PHASES;
	case OPSCOPE_CAT_OPERATOR:
		return TIMELINE_OPERATORS;
	default:
		return -1;
	}
}

/* State of one run. */
struct work {
	int64_t *busy;	  /* [lane * nwin + win]: busy ns */
	struct hmap pair; /* (lane * nwin + win) << 32 | name -> ns */
};

/* Add the range [s, e) of name `name` to lane `lane`. */
static int add_range(struct work *w, const struct timeline *tl, int lane, uint32_t name, int64_t s,
		     int64_t e)
{
	if (e <= s)
		return 0;
	uint64_t first = (uint64_t)((s - tl->t0_ns) / tl->win_ns);
	for (uint64_t k = first; k < tl->nwin; k++) {
		int64_t ws = tl->t0_ns + (int64_t)k * tl->win_ns, we = ws + tl->win_ns;
		if (ws >= e)
			break;
		int64_t part = (e < we ? e : we) - (s > ws ? s : ws);
		if (part <= 0)
			continue;
		uint64_t cell = (uint64_t)lane * tl->nwin + k;
		w->busy[cell] += part;
		uint64_t key = cell << 32 | name;
		uint64_t *v = hmap_find(&w->pair, key);
		if (v)
			*v += (uint64_t)part;
		else if (!hmap_put(&w->pair, key, (uint64_t)part))
			return OPSCOPE_ENOMEM;
	}
	return 0;
}

static int run(const struct model *m, uint32_t nwin, struct timeline *tl, struct work *w)
{
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	uint64_t steps_cap = 0;
	for (uint32_t ti = 0; ti < m->ntracks; ti++) {
		const struct model_track *t = &m->tracks[ti];
		for (uint64_t r = 0; r < t->nranges; r++) {
			int64_t s = t->ranges.start_ns[r], e = s + t->ranges.dur_ns[r];
			t0 = s < t0 ? s : t0;
			t1 = e > t1 ? e : t1;
			if (t->kind == MODEL_TRACK_THREAD &&
			    t->ranges.category[r] == OPSCOPE_CAT_PROFILE_STEP) {
				if (!grow_array((void **)&tl->steps, sizeof(*tl->steps), &steps_cap,
						tl->nsteps + 1))
					return OPSCOPE_ENOMEM;
				tl->steps[tl->nsteps++] =
					(struct timeline_step){ t->ranges.name[r], s,
								t->ranges.dur_ns[r] };
			}
		}
	}
	if (t0 > t1)
		return 0; /* no ranges */
	tl->t0_ns = t0;
	tl->nwin = nwin;
	tl->win_ns = (t1 - t0 + nwin - 1) / nwin;
	if (tl->win_ns < 1)
		tl->win_ns = 1;
	w->busy = calloc((size_t)TIMELINE_NLANES * nwin, sizeof(*w->busy));
	if (!w->busy)
		return OPSCOPE_ENOMEM;
	for (uint32_t ti = 0; ti < m->ntracks; ti++) {
		const struct model_track *t = &m->tracks[ti];
		int64_t covered[TIMELINE_NLANES];
		for (int l = 0; l < TIMELINE_NLANES; l++)
			covered[l] = INT64_MIN;
		for (uint64_t r = 0; r < t->nranges; r++) {
			int lane = lane_of(t->kind, t->ranges.category[r]);
			if (lane < 0)
				continue;
			int64_t s = t->ranges.start_ns[r], e = s + t->ranges.dur_ns[r];
			/* host lanes: outermost ranges only; kernels never nest */
			if (lane != TIMELINE_KERNELS) {
				if (s < covered[lane])
					continue;
				covered[lane] = e;
			}
			if (add_range(w, tl, lane, t->ranges.name[r], s, e) != 0)
				return OPSCOPE_ENOMEM;
		}
	}
	/* cells: each window with busy time, its top name from the pairs */
	uint64_t ncells = 0;
	for (uint64_t k = 0; k < (uint64_t)TIMELINE_NLANES * nwin; k++)
		ncells += w->busy[k] > 0;
	tl->cells = calloc((size_t)ncells + 1, sizeof(*tl->cells));
	uint64_t *at = calloc((size_t)TIMELINE_NLANES * nwin, sizeof(*at));
	if (!tl->cells || !at) {
		free(at);
		return OPSCOPE_ENOMEM;
	}
	for (uint64_t k = 0; k < (uint64_t)TIMELINE_NLANES * nwin; k++) {
		if (w->busy[k] <= 0)
			continue;
		at[k] = tl->ncells + 1;
		tl->cells[tl->ncells++] =
			(struct timeline_cell){ (uint8_t)(k / nwin), (uint32_t)(k % nwin),
						w->busy[k], 0, 0 };
	}
	for (uint64_t i = 0; i < w->pair.cap; i++) {
		const struct hmap_slot *sl = &w->pair.slots[i];
		if (sl->key == HMAP_EMPTY_KEY)
			continue;
		struct timeline_cell *c = &tl->cells[at[sl->key >> 32] - 1];
		uint32_t name = (uint32_t)sl->key;
		int64_t ns = (int64_t)sl->val;
		if (ns > c->top_ns || (ns == c->top_ns && name < c->top))
			c->top = name, c->top_ns = ns;
	}
	free(at);
	return 0;
}

int timeline_run(const struct model *m, uint32_t nwin, struct timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
	struct work w;
	memset(&w, 0, sizeof(w));
	int rc = run(m, nwin ? nwin : 1, tl, &w);
	free(w.busy);
	hmap_free(&w.pair);
	if (rc)
		timeline_free(tl);
	return rc;
}

void timeline_free(struct timeline *tl)
{
	free(tl->cells);
	free(tl->steps);
	memset(tl, 0, sizeof(*tl));
}
