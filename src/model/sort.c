/*
 * sort.c: putting the ranges of a track in order, for readers of the model that walk tracks
 * by start: model_sort_track() orders ranges by (start, depth) and instants and counters by
 * time (async tracks, whose begins come from many threads; imported tracks); model_nest_track()
 * orders ranges by start, longer first, and sets their depths from how they contain each other
 * (importers, whose ranges carry no depth), and stack samples by time; model_nest_tracks() does both on many tracks on
 * several threads. One sort serves all of them: a stable radix sort on start (sort_keys_by_start)
 * and a permutation of every column, flow references included (permute_ranges).
 *
 * Invariants: sorting is stable, so ranges with equal keys keep their order; flows keep
 * pointing at the same ranges; out of memory leaves a track as it was (and says so in oom).
 */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/parallel.h"

/* ---------------------------------------------------------------------------------------- */
/* Sorting a track by (start, depth) (async tracks, importers). */

struct sort_key {
	int64_t start;	/* primary key */
	uint64_t depth; /* then depth */
	uint64_t index; /* then original order: a stable sort */
};

static int sort_key_cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Sort keys[0..n) by (start, depth, index), the order sort_key_cmp defines: a stable radix
 * sort on start (as many passes as the starts' spread needs), then the runs of equal starts
 * by the rest. Imported tracks come out of order by up to their nesting (Kineto writes an
 * operator when it ends, after its children), which qsort took 20 ms for on 300 k ranges.
 * False when out of memory.
 */
static bool sort_keys_by_start(struct sort_key *k, uint64_t n)
{
	if (n < 64) {
		qsort(k, n, sizeof(*k), sort_key_cmp);
		return true;
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t u = (uint64_t)k[i].start ^ (1ull << 63); /* signed order as unsigned */
		lo = u < lo ? u : lo;
		hi = u > hi ? u : hi;
	}
	/* as few passes as the spread needs with digits of at most 13 bits (64 KB of counts,
	 * in the L2 cache): a trace of a minute in ns spreads over 36 bits, 3 passes of 12 */
	enum { MAX_BITS = 13 };
	unsigned spread = 0;
	while (spread < 64 && ((hi - lo) >> spread) != 0)
		spread++;
	unsigned passes = (spread + MAX_BITS - 1) / MAX_BITS;
	unsigned bits = passes ? (spread + passes - 1) / passes : 1;
	uint64_t bins = 1ull << bits, mask = bins - 1;
	struct sort_key *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return false;
	uint64_t *count = malloc(bins * sizeof(*count));
	if (!count) {
		free(tmp);
		return false;
	}
	struct sort_key *from = k, *to = tmp;
	for (unsigned p = 0, shift = 0; p < passes; p++, shift += bits) {
		memset(count, 0, bins * sizeof(*count));
		for (uint64_t i = 0; i < n; i++)
			count[((((uint64_t)from[i].start ^ (1ull << 63)) - lo) >> shift) & mask]++;
		uint64_t sum = 0;
		for (uint64_t b = 0; b < bins; b++) {
			uint64_t c = count[b];
			count[b] = sum;
			sum += c;
		}
		for (uint64_t i = 0; i < n; i++)
			to[count[((((uint64_t)from[i].start ^ (1ull << 63)) - lo) >> shift) &
				 mask]++] = from[i];
		struct sort_key *t = from;
		from = to;
		to = t;
	}
	if (from != k)
		memcpy(k, from, n * sizeof(*k));
	free(count);
	free(tmp);
	/* equal starts: by depth (or length), then index; runs are short but need not be */
	for (uint64_t i = 0; i < n;) {
		uint64_t j = i + 1;
		while (j < n && k[j].start == k[i].start)
			j++;
		if (j - i > 1)
			qsort(k + i, j - i, sizeof(*k), sort_key_cmp);
		i = j;
	}
	return true;
}

/* Reorder `n` elements of `size` bytes of column `col` by keys[i].index, through tmp (room
 * for n elements of the largest size). */
static void permute(void *col, size_t size, const struct sort_key *keys, uint64_t n, void *tmp)
{
	/* a loop per column width, so that each memcpy has a constant size and becomes a load
	 * and a store: with the size known only at run time it was a call per element (half of
	 * nesting a track of a million ranges) */
	uint8_t *c = col, *t = tmp;
	switch (size) {
	case 1:
		for (uint64_t i = 0; i < n; i++)
			t[i] = c[keys[i].index];
		break;
	case 4:
		for (uint64_t i = 0; i < n; i++)
			memcpy(t + i * 4, c + keys[i].index * 4, 4);
		break;
	case 8:
		for (uint64_t i = 0; i < n; i++)
			memcpy(t + i * 8, c + keys[i].index * 8, 8);
		break;
	default:
		for (uint64_t i = 0; i < n; i++)
			memcpy(t + i * size, c + keys[i].index * size, size);
	}
	memcpy(c, t, n * size);
}

static struct sort_key *sort_keys(const int64_t *start, const uint32_t *depth, uint64_t n,
				  bool *sorted)
{
	*sorted = true;
	for (uint64_t i = 1; i < n && *sorted; i++)
		if (start[i] < start[i - 1] ||
		    (depth && start[i] == start[i - 1] && depth[i] < depth[i - 1]))
			*sorted = false;
	if (*sorted || n == 0)
		return NULL;
	struct sort_key *k = malloc(n * sizeof(*k));
	if (!k)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		k[i] = (struct sort_key){ start[i], depth ? depth[i] : 0, i };
	if (!sort_keys_by_start(k, n)) {
		free(k);
		return NULL;
	}
	return k;
}

/* Reorder the ranges of `track` by keys[i].index (flow references follow); frees keys. */
static void permute_ranges(struct model *m, uint32_t track, struct sort_key *k, bool *oom)
{
	struct model_track *t = &m->tracks[track];
	struct model_ranges *r = &t->ranges;
	uint64_t n = t->nranges;
	/* one scratch for every column; it then maps old indexes to new ones for the flows */
	uint64_t *inv = malloc(n * sizeof(*inv));
	if (inv) {
		permute(r->start_ns, sizeof(*r->start_ns), k, n, inv);
		permute(r->dur_ns, sizeof(*r->dur_ns), k, n, inv);
		permute(r->name, sizeof(*r->name), k, n, inv);
		permute(r->category, sizeof(*r->category), k, n, inv);
		permute(r->flags, sizeof(*r->flags), k, n, inv);
		permute(r->depth, sizeof(*r->depth), k, n, inv);
		permute(r->first_arg, sizeof(*r->first_arg), k, n, inv);
		permute(r->nargs, sizeof(*r->nargs), k, n, inv);
		if (r->correlation)
			permute(r->correlation, sizeof(*r->correlation), k, n, inv);
		for (uint64_t i = 0; i < n; i++)
			inv[k[i].index] = i;
		for (uint64_t f = 0; f < m->nflows; f++) {
			struct model_flow *fl = &m->flows[f];
			if (fl->from_track == track && fl->from_range < n)
				fl->from_range = inv[fl->from_range];
			if (fl->to_track == track && fl->to_range < n)
				fl->to_range = inv[fl->to_range];
		}
		free(inv);
	} else {
		*oom = true;
	}
	free(k);
}

/* model_sort_track(), with out of memory reported in *oom: tracks of one model are sorted on
 * several threads at once (model_nest_tracks), and m->oom is not theirs to write. */
static void sort_track(struct model *m, uint32_t track, bool *oom)
{
	struct model_track *t = &m->tracks[track];
	bool sorted;
	struct model_ranges *r = &t->ranges;
	struct sort_key *k = sort_keys(r->start_ns, r->depth, t->nranges, &sorted);
	if (!sorted && !k)
		*oom = true;
	if (k)
		permute_ranges(m, track, k, oom);
	struct model_instants *in = &t->instants;
	k = sort_keys(in->ts_ns, NULL, t->ninstants, &sorted);
	if (!sorted && !k)
		*oom = true;
	if (k) {
		uint64_t n = t->ninstants;
		uint64_t *tmp = malloc(n * sizeof(*tmp));
		if (tmp) {
			permute(in->ts_ns, sizeof(*in->ts_ns), k, n, tmp);
			permute(in->name, sizeof(*in->name), k, n, tmp);
			permute(in->category, sizeof(*in->category), k, n, tmp);
			permute(in->first_arg, sizeof(*in->first_arg), k, n, tmp);
			permute(in->nargs, sizeof(*in->nargs), k, n, tmp);
		} else {
			*oom = true;
		}
		free(tmp);
		free(k);
	}
	struct model_counters *co = &t->counters;
	k = sort_keys(co->ts_ns, NULL, t->ncounters, &sorted);
	if (!sorted && !k)
		*oom = true;
	if (k) {
		uint64_t n = t->ncounters;
		uint64_t *tmp = malloc(n * sizeof(*tmp));
		if (tmp) {
			permute(co->ts_ns, sizeof(*co->ts_ns), k, n, tmp);
			permute(co->name, sizeof(*co->name), k, n, tmp);
			permute(co->value, sizeof(*co->value), k, n, tmp);
		} else {
			*oom = true;
		}
		free(tmp);
		free(k);
	}
	struct model_samples *sa = &t->samples;
	k = sort_keys(sa->ts_ns, NULL, t->nsamples, &sorted);
	if (!sorted && !k)
		*oom = true;
	if (k) {
		uint64_t n = t->nsamples;
		uint64_t *tmp = malloc(n * sizeof(*tmp));
		if (tmp) {
			permute(sa->ts_ns, sizeof(*sa->ts_ns), k, n, tmp);
			permute(sa->stack, sizeof(*sa->stack), k, n, tmp);
			permute(sa->weight, sizeof(*sa->weight), k, n, tmp);
			permute(sa->flags, sizeof(*sa->flags), k, n, tmp);
			if (sa->first_value)
				permute(sa->first_value, sizeof(*sa->first_value), k, n, tmp);
		} else {
			*oom = true;
		}
		free(tmp);
		free(k);
	}
}

void model_sort_track(struct model *m, uint32_t track)
{
	sort_track(m, track, &m->oom);
}

/* ---------------------------------------------------------------------------------------- */
/* Nesting a track (importers): order by start, longer first, and depths from containment. */

/* model_nest_track(), with out of memory reported in *oom (see sort_track). */
static uint64_t nest_track(struct model *m, uint32_t track, bool *oom)
{
	struct model_track *t = &m->tracks[track];
	struct model_ranges *r = &t->ranges;
	uint64_t n = t->nranges;
	if (n == 0 || t->kind == MODEL_TRACK_ASYNC)
		return 0; /* async ranges may overlap: depth 0 each, sorted by model_sort_track */
	/* order: start ascending, then longer first (a parent before its children); recorded
	 * and most imported tracks are in that order already, and then no keys are made */
	bool sorted = true;
	for (uint64_t i = 1; i < n && sorted; i++)
		sorted = r->start_ns[i - 1] < r->start_ns[i] ||
			 (r->start_ns[i - 1] == r->start_ns[i] && r->dur_ns[i - 1] >= r->dur_ns[i]);
	if (!sorted) {
		struct sort_key *k = malloc(n * sizeof(*k));
		if (!k) {
			*oom = true;
			return 0;
		}
		for (uint64_t i = 0; i < n; i++)
			k[i] = (struct sort_key){ r->start_ns[i],
						  (uint64_t)(INT64_MAX - r->dur_ns[i]), i };
		if (!sort_keys_by_start(k, n)) {
			free(k);
			*oom = true;
			return 0;
		}
		permute_ranges(m, track, k, oom); /* frees k */
	}
	/* depth = number of open ranges that contain the start; ends of open ranges on a stack */
	uint64_t cap = 64, top = 0, overlaps = 0;
	int64_t *ends = malloc(cap * sizeof(*ends));
	if (!ends) {
		*oom = true;
		return 0;
	}
	for (uint64_t i = 0; i < n; i++) {
		int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
		while (top && ends[top - 1] <= s) /* a range ending where this starts is done */
			top--;
		if (top && e > ends[top - 1])
			overlaps++; /* crosses the end of its parent: still nested under it */
		r->depth[i] = (uint32_t)(top < UINT32_MAX ? top : UINT32_MAX);
		if (top == cap) {
			int64_t *p = realloc(ends, 2 * cap * sizeof(*ends));
			if (!p) {
				*oom = true;
				break;
			}
			ends = p;
			cap *= 2;
		}
		ends[top++] = e;
	}
	free(ends);
	return overlaps;
}

uint64_t model_nest_track(struct model *m, uint32_t track)
{
	return nest_track(m, track, &m->oom);
}

/* model_nest_tracks' work on one track; its sums are per track, so that threads share
 * nothing they write. */
struct nest_job {
	struct model *m;
	uint64_t *overlaps; /* per track */
	bool *oom;	    /* per track */
};

static void nest_one(void *arg, uint32_t track)
{
	struct nest_job *j = arg;
	j->overlaps[track] = nest_track(j->m, track, &j->oom[track]);
	sort_track(j->m, track, &j->oom[track]);
}

static int larger_first(const void *a, const void *b, void *arg)
{
	const struct model *m = arg;
	uint64_t x = m->tracks[*(const uint32_t *)a].nranges;
	uint64_t y = m->tracks[*(const uint32_t *)b].nranges;
	return (x < y) - (x > y);
}

uint32_t *model_tracks_largest_first(const struct model *m, uint32_t first)
{
	uint32_t n = first < m->ntracks ? m->ntracks - first : 0;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		order[i] = first + i;
	qsort_r(order, n, sizeof(*order), larger_first, (void *)m);
	return order;
}

unsigned model_threads_for(const struct model *m, uint32_t first)
{
	uint64_t ranges = 0;
	for (uint32_t t = first; t < m->ntracks; t++)
		ranges += m->tracks[t].nranges;
	return ranges >= 200000 ? parallel_cpus() : 1;
}

uint64_t model_nest_tracks(struct model *m, uint32_t first, unsigned threads)
{
	uint32_t n = first < m->ntracks ? m->ntracks - first : 0;
	uint32_t *order = NULL;
	struct nest_job j = { m, NULL, NULL };
	if (n > 1 && threads > 1) {
		order = model_tracks_largest_first(m, first);
		j.overlaps = calloc(m->ntracks, sizeof(*j.overlaps));
		j.oom = calloc(m->ntracks, sizeof(*j.oom));
	}
	uint64_t overlaps = 0;
	if (!order || !j.overlaps || !j.oom) { /* one thread (or no memory for more) */
		for (uint32_t t = first; t < m->ntracks; t++) {
			overlaps += model_nest_track(m, t);
			model_sort_track(m, t);
		}
	} else {
		/* a track only reads the flows that end on other tracks, and writes its own
		 * columns: one thread a track needs no lock */
		parallel_for(n, order, threads, nest_one, &j);
		for (uint32_t t = first; t < m->ntracks; t++) {
			overlaps += j.overlaps[t];
			m->oom |= j.oom[t];
		}
	}
	free(order);
	free(j.overlaps);
	free(j.oom);
	return overlaps;
}
