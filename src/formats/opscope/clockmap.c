/*
 * clockmap.c: the clock map of an .opscope file (clockmap.h): made from the file's CLOCK
 * points once it is read, then every time of the file goes through it. The common case, a
 * time in the segment of the previous one, is inline in clockmap.h; here are the rest and the
 * loop over a track's ranges, which keeps a segment's constants in registers.
 *
 * Invariants: see clockmap.h (a monotonic map, times within +-CLOCKMAP_TIME_LIMIT ns); the
 * same ticks always give the same ns, whichever path maps them.
 */
#include "formats/opscope/clockmap.h"

#include <stdlib.h>
#include <string.h>

static int clock_cmp(const void *a, const void *b)
{
	const struct model_clock *x = a, *y = b;
	return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* Make segment i (from point i to point i + 1, or on without end for the last) current. */
static void clockmap_segment(struct clockmap *cm, uint32_t i)
{
	/* past 2^61 ticks from its start, a lookup takes the careful way (clockmap_far) */
	uint64_t far = (uint64_t)1 << 61;
	struct clock_seg *g = &cm->seg;
	g->lo = cm->k[i].ticks;
	g->span = far;
	if (i + 1 < cm->n && cm->k[i + 1].ticks - g->lo < far)
		g->span = cm->k[i + 1].ticks - g->lo;
	if (g->span > UINT64_MAX - g->lo)
		g->span = UINT64_MAX - g->lo; /* lo + span must not wrap: a time before lo would */
	g->base_ns = cm->k[i].mono_ns;
	g->s = cm->slope[i];
}

bool clockmap_init(struct clockmap *cm, struct model_file *f)
{
	memset(cm, 0, sizeof(*cm));
	if (f->nclocks == 0) {
		cm->n = 1;
		cm->k = &cm->identity;
		cm->slope = malloc(sizeof(double));
		if (!cm->slope)
			return false;
		cm->slope[0] = 1.0;
		clockmap_segment(cm, 0);
		return true;
	}
	struct model_clock *k = f->clocks;
	qsort(k, f->nclocks, sizeof(*k), clock_cmp);
	/* drop points with equal ticks (keep the first) and make ns non-decreasing */
	uint32_t n = 1;
	for (uint32_t i = 1; i < f->nclocks; i++) {
		if (k[i].ticks == k[n - 1].ticks)
			continue;
		k[n] = k[i];
		if (k[n].mono_ns < k[n - 1].mono_ns)
			k[n].mono_ns = k[n - 1].mono_ns;
		n++;
	}
	f->nclocks = n;
	cm->n = n;
	cm->k = k;
	cm->slope = malloc(n * sizeof(double));
	if (!cm->slope)
		return false;
	if (n == 1) {
		uint64_t tps = k[0].ticks_per_second ? k[0].ticks_per_second : 1000000000ull;
		cm->slope[0] = 1e9 / (double)tps;
	} else {
		for (uint32_t i = 0; i + 1 < n; i++)
			cm->slope[i] = (double)(k[i + 1].mono_ns - k[i].mono_ns) /
				       (double)(k[i + 1].ticks - k[i].ticks);
		cm->slope[n - 1] = cm->slope[n - 2]; /* after the last point: the last slope */
	}
	clockmap_segment(cm, 0);
	return true;
}

void clockmap_free(struct clockmap *cm)
{
	free(cm->slope);
	cm->slope = NULL;
}

/* ns of `ticks` through point k with slope s (any distance, either side of the point). */
static int64_t clockmap_through(const struct model_clock *k, double s, uint64_t ticks)
{
	if (s == 1.0 && ticks >= k->ticks && ticks - k->ticks < ((uint64_t)1 << 61))
		return clockmap_clamp(k->mono_ns + (int64_t)(ticks - k->ticks));
	double d = ticks >= k->ticks ? (double)(ticks - k->ticks) : -(double)(k->ticks - ticks);
	double x = (double)k->mono_ns + d * s;
	if (!(x < (double)CLOCKMAP_TIME_LIMIT))
		return CLOCKMAP_TIME_LIMIT;
	if (x < -(double)CLOCKMAP_TIME_LIMIT)
		return -CLOCKMAP_TIME_LIMIT;
	/* round half away from zero, like llround, without the call */
	return x >= 0 ? (int64_t)(x + 0.5) : -(int64_t)(0.5 - x);
}

/* A time outside the current segment: its segment is the last point at or before it, or the
 * first point for times before all of them. */
int64_t clockmap_far(struct clockmap *cm, uint64_t ticks)
{
	uint32_t i = 0;
	if (cm->n > 1 && ticks > cm->k[0].ticks) {
		uint32_t lo = 0, hi = cm->n - 1;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo + 1) / 2;
			if (cm->k[mid].ticks <= ticks)
				lo = mid;
			else
				hi = mid - 1;
		}
		i = lo;
	}
	clockmap_segment(cm, i);
	return clockmap_through(&cm->k[i], cm->slope[i], ticks);
}

/* Runs of ranges inside one segment with a slope
 * other than 1 go through a loop with the segment's constants in registers and without the
 * per-time checks of seg_ns (the same arithmetic, so the same ns); anything else, the
 * careful way. */
void clockmap_ranges(struct clockmap *cm, struct clock_seg *g, struct model_track *t)
{
	int64_t lo = t->min_ns, hi = t->max_ns;
	int64_t *start = t->ranges.start_ns, *end = t->ranges.dur_ns;
	for (uint64_t j = 0, n = t->nranges; j < n;) {
		/* the segment maps below CLOCKMAP_TIME_LIMIT all the way: no check per time */
		double top = (double)g->base_ns + (double)(int64_t)(g->span - 1) * g->s;
		if (g->s != 1.0 && g->span <= ((uint64_t)1 << 61) &&
		    top < (double)CLOCKMAP_TIME_LIMIT / 2) {
			const uint64_t glo = g->lo, span = g->span;
			const double base = (double)g->base_ns, slope = g->s;
			for (; j < n; j++) {
				uint64_t ds = (uint64_t)start[j] - glo, de = (uint64_t)end[j] - glo;
				if (ds >= span || de >= span)
					break;
				int64_t s = (int64_t)(base + (double)(int64_t)ds * slope + 0.5);
				int64_t e = (int64_t)(base + (double)(int64_t)de * slope + 0.5);
				e = e > s ? e : s;
				start[j] = s;
				end[j] = e - s;
				lo = s < lo ? s : lo;
				hi = e > hi ? e : hi;
			}
			if (j == n)
				break;
		}
		int64_t s = clockmap_ns(cm, g, (uint64_t)start[j]);
		int64_t e = clockmap_ns(cm, g, (uint64_t)end[j]);
		e = e > s ? e : s;
		start[j] = s;
		end[j] = e - s;
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
		j++;
	}
	t->min_ns = lo;
	t->max_ns = hi;
}
