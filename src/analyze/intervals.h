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
/* Covered length of merged list a. */
int64_t ivec_sum(const struct ivec *a);
void ivec_free(struct ivec *a);

#endif
