/*
 * intervals.h: lists of [start, end) intervals in ns, and their set operations. A list is
 * "merged" when sorted and disjoint; ivec_merge() makes it so, joining intervals that
 * overlap or touch. Allocation failures set `oom` and leave the list as it was.
 */
#ifndef OPSCOPE_ANALYZE_INTERVALS_H
#define OPSCOPE_ANALYZE_INTERVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ivl {
	int64_t s, e;
};

struct ivec {
	struct ivl *v;
	size_t n, cap;
	bool oom;
};

void ivec_push(struct ivec *a, int64_t s, int64_t e);
/* Add [s, e) to a list that is only ever used merged: an interval that starts inside the last
 * one (or where it ends) extends it instead of being appended. Intervals added in start
 * order (one track's ranges) so keep the list merged and as small as its merged form; any
 * other order is fine too, ivec_merge() still sorts it out. */
void ivec_add(struct ivec *a, int64_t s, int64_t e);
/* Sort and merge in place. */
void ivec_merge(struct ivec *a);
/* Sort in place (by start, then end) and return the number of distinct intervals (Paddle's
 * len(set(ranges)), its call count of the communication rows). */
size_t ivec_count_distinct(struct ivec *a);
/* out += a ∩ b (both merged). */
void ivec_intersect(const struct ivec *a, const struct ivec *b, struct ivec *out);
/* out += a \ b (both merged). */
void ivec_subtract(const struct ivec *a, const struct ivec *b, struct ivec *out);
/* Covered length of merged list a inside [s, e). */
int64_t ivec_sum_within(const struct ivec *a, int64_t s, int64_t e);
/* The index of the first interval of merged list a that ends after t (a->n: none). */
size_t ivec_first_ending_after(const struct ivec *a, int64_t t);
/* Does merged list a hold instant t? Lowers *next to the first instant after t where that may
 * change (the end of the interval holding t, or the start of the next one). */
bool ivec_at(const struct ivec *a, int64_t t, int64_t *next);
/* Does [s, e) lie at least partly inside merged list a (a range of no length: on it)? */
bool ivec_touches(const struct ivec *a, int64_t s, int64_t e);
/* Covered length of merged list a. */
int64_t ivec_sum(const struct ivec *a);
void ivec_free(struct ivec *a);

/* An interval that belongs to someone: `label` (a small integer) says who. */
struct livl {
	int64_t s, e;
	uint32_t label;
};

/* qsort order of labelled intervals: by start. */
int livl_start_cmp(const void *x, const void *y);

/* Push onto v (grown with grow.h-style doubling, *cap its capacity) the parts of [s, e)
 * inside merged list `clip`; false when out of memory. */
bool livl_push_clipped(struct livl **v, size_t *n, size_t *cap, int64_t s, int64_t e,
		       uint32_t label, const struct ivec *clip);

/* Share the union of the n labelled intervals out: every instant covered goes to the
 * smallest label covering it, so that the shares add up to the union and none counts an
 * instant twice. share[label] += its part (share has a slot per label < nlabels, and every
 * label is below it). Sorts v. 0, or -1 when out of memory. */
int livl_partition(struct livl *v, size_t n, uint32_t nlabels, int64_t *share);

#endif
