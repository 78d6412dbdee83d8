/*
 * intervals.c: sorted lists of [start, end) intervals and the set operations the summaries
 * are made of (union, intersection, difference, covered length), as in Paddle's
 * statistic_helper and the TensorBoard plugin's range_utils: intervals that touch merge.
 */
#include "analyze/intervals.h"

#include <stdlib.h>
#include <string.h>

void ivec_push(struct ivec *a, int64_t s, int64_t e)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct ivl *v = realloc(a->v, cap * sizeof(*v));
		if (!v) {
			a->oom = true;
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = (struct ivl){ s, e };
}

void ivec_add(struct ivec *a, int64_t s, int64_t e)
{
	if (a->n) {
		struct ivl *last = &a->v[a->n - 1];
		if (s >= last->s && s <= last->e) {
			if (e > last->e)
				last->e = e;
			return;
		}
	}
	ivec_push(a, s, e);
}

static int ivl_cmp(const void *x, const void *y)
{
	const struct ivl *a = x, *b = y;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return (a->e > b->e) - (a->e < b->e);
}

/* Does a sort before b: by start, then by end? */
static inline bool ivl_before(const struct ivl *a, const struct ivl *b)
{
	return a->s < b->s || (a->s == b->s && a->e < b->e);
}

/* End of the ascending run that starts at i. */
static size_t run_end(const struct ivl *v, size_t i, size_t n)
{
	while (++i < n && !ivl_before(&v[i], &v[i - 1]))
		;
	return i;
}

/* Sort by (start, end). A list is usually a few ascending runs, one per track it was made
 * from, so adjacent runs are merged pairwise until one is left (a natural merge sort):
 * log2(runs) passes without a comparison callback, where qsort took n log n calls of one
 * (a fifth of the step view on a 1 GB trace). A list already in order costs one pass. */
static void ivec_sort(struct ivec *a)
{
	size_t n = a->n, runs = 0;
	for (size_t i = 0; i < n; i = run_end(a->v, i, n))
		runs++;
	if (runs < 2)
		return;
	struct ivl *tmp = malloc(n * sizeof(*tmp));
	if (!tmp) { /* sorting in place needs no memory */
		qsort(a->v, n, sizeof(*a->v), ivl_cmp);
		return;
	}
	struct ivl *src = a->v, *dst = tmp;
	while (runs > 1) {
		runs = 0;
		for (size_t i = 0; i < n; runs++) {
			size_t m = run_end(src, i, n), e = m < n ? run_end(src, m, n) : n;
			size_t l = i, r = m, o = i;
			while (l < m && r < e)
				dst[o++] = ivl_before(&src[r], &src[l]) ? src[r++] : src[l++];
			while (l < m)
				dst[o++] = src[l++];
			while (r < e)
				dst[o++] = src[r++];
			i = e;
		}
		struct ivl *t = src;
		src = dst;
		dst = t;
	}
	if (src != a->v)
		memcpy(a->v, src, n * sizeof(*src));
	free(tmp);
}

/* Sort and merge in place; intervals that touch are merged. */
void ivec_merge(struct ivec *a)
{
	if (a->n < 2)
		return;
	ivec_sort(a);
	size_t o = 0;
	for (size_t i = 1; i < a->n; i++) {
		if (a->v[i].s <= a->v[o].e) {
			if (a->v[i].e > a->v[o].e)
				a->v[o].e = a->v[i].e;
		} else {
			a->v[++o] = a->v[i];
		}
	}
	a->n = o + 1;
}

size_t ivec_count_distinct(struct ivec *a)
{
	if (a->n < 2)
		return a->n;
	ivec_sort(a);
	size_t n = 1;
	for (size_t i = 1; i < a->n; i++)
		n += a->v[i].s != a->v[i - 1].s || a->v[i].e != a->v[i - 1].e;
	return n;
}

/* out = a ∩ b (both merged). */
void ivec_intersect(const struct ivec *a, const struct ivec *b, struct ivec *out)
{
	size_t i = 0, j = 0;
	while (i < a->n && j < b->n) {
		int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
		int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
		if (s < e)
			ivec_push(out, s, e);
		if (a->v[i].e < b->v[j].e)
			i++;
		else
			j++;
	}
}

/* out = a \ b (both merged). */
void ivec_subtract(const struct ivec *a, const struct ivec *b, struct ivec *out)
{
	size_t j = 0;
	for (size_t i = 0; i < a->n; i++) {
		int64_t s = a->v[i].s, e = a->v[i].e;
		while (j < b->n && b->v[j].e <= s)
			j++;
		size_t k = j;
		while (k < b->n && b->v[k].s < e) {
			if (b->v[k].s > s)
				ivec_push(out, s, b->v[k].s);
			if (b->v[k].e > s)
				s = b->v[k].e;
			if (s >= e)
				break;
			k++;
		}
		if (s < e)
			ivec_push(out, s, e);
	}
}

size_t ivec_first_ending_after(const struct ivec *a, int64_t t)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->v[mid].e <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool ivec_at(const struct ivec *a, int64_t t, int64_t *next)
{
	size_t i = ivec_first_ending_after(a, t);
	if (i == a->n)
		return false;
	bool in = a->v[i].s <= t;
	int64_t change = in ? a->v[i].e : a->v[i].s;
	if (change < *next)
		*next = change;
	return in;
}

/* Total length of merged list a inside [s, e). */
int64_t ivec_sum_within(const struct ivec *a, int64_t s, int64_t e)
{
	int64_t sum = 0;
	for (size_t i = ivec_first_ending_after(a, s); i < a->n && a->v[i].s < e; i++) {
		int64_t x = a->v[i].s > s ? a->v[i].s : s;
		int64_t y = a->v[i].e < e ? a->v[i].e : e;
		if (y > x)
			sum += y - x;
	}
	return sum;
}

bool ivec_touches(const struct ivec *a, int64_t s, int64_t e)
{
	size_t lo = 0, hi = a->n; /* first interval ending at or after s */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->v[mid].e < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < a->n && a->v[i].s <= e; i++)
		if (s < e ? s < a->v[i].e && e > a->v[i].s : s >= a->v[i].s)
			return true;
	return false;
}

int64_t ivec_sum(const struct ivec *a)
{
	int64_t sum = 0;
	for (size_t i = 0; i < a->n; i++)
		sum += a->v[i].e - a->v[i].s;
	return sum;
}

void ivec_free(struct ivec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

int livl_start_cmp(const void *x, const void *y)
{
	const struct livl *a = x, *b = y;
	return (a->s > b->s) - (a->s < b->s);
}

bool livl_push_clipped(struct livl **v, size_t *n, size_t *cap, int64_t s, int64_t e,
		       uint32_t label, const struct ivec *clip)
{
	for (size_t i = ivec_first_ending_after(clip, s); i < clip->n && clip->v[i].s < e; i++) {
		int64_t x = clip->v[i].s > s ? clip->v[i].s : s;
		int64_t y = clip->v[i].e < e ? clip->v[i].e : e;
		if (y <= x)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			struct livl *nv = realloc(*v, c * sizeof(*nv));
			if (!nv)
				return false;
			*v = nv;
			*cap = c;
		}
		(*v)[(*n)++] = (struct livl){ x, y, label };
	}
	return true;
}

/* A boundary of a labelled interval: at `t`, `label` starts (open) or ends. */
struct lbound {
	int64_t t;
	uint32_t label;
	bool open;
};

static int lbound_cmp(const void *x, const void *y)
{
	const struct lbound *a = x, *b = y;
	return (a->t > b->t) - (a->t < b->t);
}

/* The labels open at an instant form a min-heap; closed ones leave it lazily (their count
 * drops to 0 and they are popped when they reach the top). */
static void heap_push(uint32_t *h, size_t *n, uint32_t x)
{
	size_t i = (*n)++;
	while (i && h[(i - 1) / 2] > x) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t x = h[--(*n)];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= x)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = x;
}

int livl_partition(struct livl *v, size_t n, uint32_t nlabels, int64_t *share)
{
	if (!n)
		return 0;
	struct lbound *b = malloc(2 * n * sizeof(*b));
	uint32_t *open = calloc(nlabels ? nlabels : 1, sizeof(*open));
	uint32_t *heap = malloc(n * sizeof(*heap));
	if (!b || !open || !heap) {
		free(b);
		free(open);
		free(heap);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		b[2 * i] = (struct lbound){ v[i].s, v[i].label, true };
		b[2 * i + 1] = (struct lbound){ v[i].e, v[i].label, false };
	}
	qsort(b, 2 * n, sizeof(*b), lbound_cmp);
	size_t nh = 0;
	for (size_t i = 0; i < 2 * n;) {
		int64_t t = b[i].t;
		for (; i < 2 * n && b[i].t == t; i++) {
			if (b[i].open) {
				if (open[b[i].label]++ == 0)
					heap_push(heap, &nh, b[i].label);
			} else {
				open[b[i].label]--;
			}
		}
		while (nh && open[heap[0]] == 0)
			heap_pop(heap, &nh);
		if (nh && i < 2 * n)
			share[heap[0]] += b[i].t - t;
	}
	free(b);
	free(open);
	free(heap);
	return 0;
}
