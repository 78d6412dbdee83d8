/*
 * clockmap.h: the clock map of an .opscope file: its tick counter (TSC cycles, or ns) mapped
 * to CLOCK_MONOTONIC ns, piecewise linear through the file's CLOCK points
 * (model_file.clocks). The loader keeps times in ticks while it reads, because CLOCK records
 * may come anywhere in the file, and maps every time through this when the file is read.
 *
 * Invariants: the map is monotonic (points with equal ticks are dropped, and ns made
 * non-decreasing, before use), so times in order stay in order and ranges stay nested; every
 * time it gives is within +-CLOCKMAP_TIME_LIMIT ns, so differences of times never overflow.
 * The lookups are inline: the loader maps every time of a file through them.
 */
#ifndef OPSCOPE_FORMATS_OPSCOPE_CLOCKMAP_H
#define OPSCOPE_FORMATS_OPSCOPE_CLOCKMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

#define CLOCKMAP_TIME_LIMIT ((int64_t)1 << 61) /* times are clamped to +-this, ns */

/* A segment of the map: ticks in [lo, lo + span) map to base_ns + (ticks - lo) * s. Loops
 * over whole columns keep it in a local: stores into the columns could alias the map's own
 * copy, and the compiler would reload it for every element. */
struct clock_seg {
	uint64_t lo, span;
	int64_t base_ns;
	double s;
};

struct clockmap {
	uint32_t n;		     /* points (>= 1) */
	const struct model_clock *k; /* points sorted by ticks, mono_ns made non-decreasing */
	double *slope;		     /* ns per tick of the segment that starts at point i */
	struct model_clock identity; /* the point used when the file has no CLOCK record */
	struct clock_seg seg;	     /* the segment of the last lookup */
};

/* The map of file f: sorts f->clocks and drops points with equal ticks (f->nclocks shrinks);
 * a file without CLOCK points maps ticks to ns one to one. False when out of memory. */
bool clockmap_init(struct clockmap *cm, struct model_file *f);
void clockmap_free(struct clockmap *cm);

/* A time outside the current segment: find its segment and make it current. */
int64_t clockmap_far(struct clockmap *cm, uint64_t ticks);

static inline int64_t clockmap_clamp(int64_t v)
{
	return v > CLOCKMAP_TIME_LIMIT	  ? CLOCKMAP_TIME_LIMIT
	       : v < -CLOCKMAP_TIME_LIMIT ? -CLOCKMAP_TIME_LIMIT
					  : v;
}

/* ticks -> ns through segment g, if ticks fall in it (and map below the time limit). */
static inline bool clock_seg_ns(const struct clock_seg *g, uint64_t ticks, int64_t *ns)
{
	uint64_t d = ticks - g->lo;
	if (d >= g->span)
		return false;
	if (g->s == 1.0) {
		*ns = clockmap_clamp(g->base_ns + (int64_t)d);
		return true;
	}
	double x = (double)g->base_ns + (double)(int64_t)d * g->s;
	if (!(x < (double)CLOCKMAP_TIME_LIMIT))
		return false;
	*ns = (int64_t)(x + 0.5); /* x >= 0: mono_ns >= 0, d >= 0, slope >= 0 */
	return true;
}

/* ticks -> ns, with *g the caller's copy of the current segment. Times come mostly in order,
 * so nearly every lookup falls in the segment of the previous one: a subtraction, a compare
 * and the arithmetic of clockmap_far with its rare branches taken out. */
static inline int64_t clockmap_ns(struct clockmap *cm, struct clock_seg *g, uint64_t ticks)
{
	int64_t ns;
	if (clock_seg_ns(g, ticks, &ns))
		return ns;
	ns = clockmap_far(cm, ticks);
	*g = cm->seg;
	return ns;
}

/* Ticks to ns for every range of t (start in start_ns and end in dur_ns, as loaded): start
 * and duration, and the track's time span (min_ns, max_ns, widened). */
void clockmap_ranges(struct clockmap *cm, struct clock_seg *g, struct model_track *t);

#endif
