/*
 * gpu_util.c: GPU utilization per step, over the window and over buckets of it (gpu_util.h).
 *
 * Per device: its kernels and its device work are merged into two unions (intervals.h), and
 * the kernels' SM values are swept into disjoint segments of constant, capped value; every
 * span (step, window, bucket) then reads its share from those with a binary search. The
 * steps come from steps_analyze, so that this view and the Step table agree on what a step
 * is. Invariant: the segments are sorted, disjoint, each with a value in (0, 1].
 */
#include "analyze/gpu_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/device.h"
#include "analyze/steps.h"

/* One end of a kernel in the SM sweep: +v at its start, -v at its end. */
struct sm_edge {
	int64_t t; /* ns */
	double v;  /* the kernel's SM value, negative at its end */
	int d;	   /* +1 at a start, -1 at an end */
};

/* A stretch of constant SM use. */
struct sm_seg {
	int64_t s, e; /* ns */
	double v;     /* summed SM values, capped at 1 */
};

/* What one device's spans are read from. */
struct dev_data {
	struct ivec k, w;     /* merged: kernels, all device work */
	int64_t *kstart;      /* kernel starts, sorted */
	size_t nk, kcap;      /* kernels in kstart, room */
	struct sm_edge *edge; /* sweep edges */
	size_t nedge, ecap;   /* edges, room */
	struct sm_seg *seg;   /* the swept segments */
	size_t nseg;	      /* segments */
	bool oom;	      /* an allocation failed */
};

int64_t gpu_util_bucket_ns(int64_t span_ns)
{
	if (span_ns <= 0)
		return 0;
	int64_t b = 1000; /* 1 µs */
	/* (span - 1) / b + 1 buckets: span + b - 1 overflows for spans near 2^63 */
	while ((span_ns - 1) / b + 1 > GPU_UTIL_MAX_BUCKETS && b <= INT64_MAX / 10)
		b *= 10;
	return b;
}

uint32_t gpu_util_nbuckets(int64_t s, int64_t e, int64_t *bucket_ns)
{
	int64_t span;
	*bucket_ns = 0;
	if (e <= s || __builtin_sub_overflow(e, s, &span))
		return 0; /* empty, or a span an int64 cannot hold */
	*bucket_ns = gpu_util_bucket_ns(span);
	return (uint32_t)((span - 1) / *bucket_ns + 1);
}

const char *gpu_util_file_meta(const struct model *m, uint32_t file, const char *key)
{
	uint32_t k = model_find_str(m, key);
	if (!k)
		return NULL;
	for (uint32_t i = 0; i < m->nmeta; i++)
		if (m->meta[i].key == k && m->meta[i].file == file)
			return model_str(m, m->meta[i].value);
	return NULL;
}

/* SMs of device `dev` of file f from its properties: ours (gpu.N.sm_count), Kineto's and
 * Nsight's (device.N.numSms), older Kineto's (device.N.multiProcessorCount); 0 unknown. */
static uint32_t sm_count(const struct model *m, uint32_t f, uint32_t dev)
{
	static const char *const keys[] = { "gpu.%u.sm_count", "device.%u.numSms",
					    "device.%u.multiProcessorCount" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		/* keys[i] is "<prefix>.%u.<name>": written out piece by piece */
		const char *pct = strstr(keys[i], "%u");
		char k[64];
		snprintf(k, sizeof(k), "%.*s%u%s", (int)(pct - keys[i]), keys[i], dev, pct + 2);
		const char *v = gpu_util_file_meta(m, f, k);
		char *end;
		unsigned long n = v ? strtoul(v, &end, 10) : 0;
		if (v && end != v && n > 0 && n < UINT32_MAX)
			return (uint32_t)n;
	}
	return 0;
}

/* Blocks of a grid argument "[x, y, z]" (JSON text); 0 when it is not three integers. */
static uint64_t grid_blocks(const char *s)
{
	while (*s == ' ')
		s++;
	if (*s++ != '[')
		return 0;
	uint64_t blocks = 1;
	for (int i = 0; i < 3; i++) {
		char *end;
		while (*s == ' ')
			s++;
		if (*s < '0' || *s > '9')
			return 0;
		unsigned long long x = strtoull(s, &end, 10);
		s = end;
		while (*s == ' ')
			s++;
		if (*s != (i < 2 ? ',' : ']') || (x && blocks > UINT64_MAX / x))
			return 0;
		blocks *= x;
		s++;
	}
	return blocks;
}

/* The SM value of kernel i of track t: min(1, blocks / SMs) from its grid and the SM count,
 * else min(1, its "blocks per SM" argument); false when neither is known. */
static bool kernel_sm_value(const struct model *m, uint32_t t, uint64_t i, uint32_t k_grid,
			    uint32_t k_bps, uint32_t sms, double *v)
{
	uint64_t a = k_grid && sms ? model_range_arg(m, t, i, k_grid) : MODEL_NONE;
	if (a != MODEL_NONE &&
	    (m->args.type[a] == MODEL_ARG_JSON || m->args.type[a] == MODEL_ARG_STR)) {
		uint64_t blocks = grid_blocks(model_str(m, (uint32_t)m->args.bits[a]));
		if (blocks) {
			double x = (double)blocks / sms;
			*v = x < 1 ? x : 1;
			return true;
		}
	}
	a = k_bps ? model_range_arg(m, t, i, k_bps) : MODEL_NONE;
	if (a == MODEL_NONE)
		return false;
	double x;
	switch (m->args.type[a]) {
	case MODEL_ARG_F64:
		memcpy(&x, &m->args.bits[a], sizeof(x));
		break;
	case MODEL_ARG_I64:
		x = (double)(int64_t)m->args.bits[a];
		break;
	case MODEL_ARG_U64:
		x = (double)m->args.bits[a];
		break;
	default:
		return false;
	}
	if (!isfinite(x) || x < 0)
		return false;
	*v = x < 1 ? x : 1;
	return true;
}

static bool push_edge(struct dev_data *d, struct sm_edge e)
{
	if (d->nedge == d->ecap) {
		size_t n = d->ecap ? d->ecap * 2 : 64;
		struct sm_edge *v = realloc(d->edge, n * sizeof(*v));
		if (!v)
			return false;
		d->edge = v;
		d->ecap = n;
	}
	d->edge[d->nedge++] = e;
	return true;
}

static bool push_kstart(struct dev_data *d, int64_t s)
{
	if (d->nk == d->kcap) {
		size_t n = d->kcap ? d->kcap * 2 : 64;
		int64_t *v = realloc(d->kstart, n * sizeof(*v));
		if (!v)
			return false;
		d->kstart = v;
		d->kcap = n;
	}
	d->kstart[d->nk++] = s;
	return true;
}

static int edge_cmp(const void *x, const void *y)
{
	const struct sm_edge *a = x, *b = y;
	return (a->t > b->t) - (a->t < b->t);
}

static int i64_cmp(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* Sweep the edges into segments of constant, capped value (those of value 0 left out). */
static void sweep(struct dev_data *d)
{
	if (d->nedge)
		qsort(d->edge, d->nedge, sizeof(*d->edge), edge_cmp);
	d->seg = malloc((d->nedge ? d->nedge : 1) * sizeof(*d->seg));
	if (!d->seg) {
		d->oom = true;
		return;
	}
	double sum = 0;
	long active = 0;
	for (size_t i = 0; i < d->nedge; i++) {
		int64_t t = d->edge[i].t;
		if (i > 0 && t > d->edge[i - 1].t && active > 0 && sum > 0)
			d->seg[d->nseg++] =
				(struct sm_seg){ d->edge[i - 1].t, t, sum < 1 ? sum : 1 };
		sum += d->edge[i].v;
		active += d->edge[i].d;
		if (active == 0)
			sum = 0; /* no rounding residue carried over idle time */
	}
}

/* The integral of the segments' value over [s, e), in ns. */
static double seg_within(const struct dev_data *d, int64_t s, int64_t e)
{
	size_t lo = 0, hi = d->nseg; /* first segment ending after s */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->seg[mid].e <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	double sum = 0;
	for (size_t i = lo; i < d->nseg && d->seg[i].s < e; i++) {
		int64_t x = d->seg[i].s > s ? d->seg[i].s : s;
		int64_t y = d->seg[i].e < e ? d->seg[i].e : e;
		if (y > x)
			sum += (double)(y - x) * d->seg[i].v;
	}
	return sum;
}

/* Kernels that start in [s, e). */
static uint64_t starts_within(const struct dev_data *d, int64_t s, int64_t e)
{
	size_t lo = 0, hi = d->nk;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->kstart[mid] < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t a = lo;
	hi = d->nk;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->kstart[mid] < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - a;
}

static void fill_span(struct gpu_util_span *sp, const struct dev_data *d)
{
	sp->kernel_ns = ivec_sum_within(&d->k, sp->s, sp->e);
	sp->work_ns = ivec_sum_within(&d->w, sp->s, sp->e);
	sp->sm_eff_ns = seg_within(d, sp->s, sp->e);
	sp->kernels = starts_within(d, sp->s, sp->e);
}

static void dev_data_free(struct dev_data *d)
{
	ivec_free(&d->k);
	ivec_free(&d->w);
	free(d->kstart);
	free(d->edge);
	free(d->seg);
	memset(d, 0, sizeof(*d));
}

/* Collect the work of device g->device of file f (its tracks start at tt) into d, and count
 * its kernels into g. */
static void collect(const struct model *m, uint32_t f, uint32_t tt, struct gpu_util_device *g,
		    struct dev_data *d)
{
	uint32_t k_grid = model_find_str(m, "grid"), k_bps = model_find_str(m, "blocks per SM");
	for (uint32_t t = tt; t < m->ntracks && !d->oom; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_DEVICE || tr->file != f || tr->pid != g->device)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges && !d->oom; i++) {
			uint8_t c = r->category[i];
			if (!tree_is_device_work(c))
				continue;
			int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
			ivec_push(&d->w, s, e);
			if (!tree_is_kernel(c))
				continue;
			ivec_push(&d->k, s, e);
			g->kernels++;
			double v = 0;
			if (kernel_sm_value(m, t, i, k_grid, k_bps, g->sm_count, &v))
				g->kernels_sm++;
			d->oom = !push_kstart(d, s);
			if (e > s && v > 0 && !d->oom)
				d->oom = !push_edge(d, (struct sm_edge){ s, v, 1 }) ||
					 !push_edge(d, (struct sm_edge){ e, -v, -1 });
		}
	}
	d->oom = d->oom || d->k.oom || d->w.oom;
	if (d->oom)
		return;
	ivec_merge(&d->k);
	ivec_merge(&d->w);
	if (d->nk) /* qsort's array may not be NULL, even for no element */
		qsort(d->kstart, d->nk, sizeof(*d->kstart), i64_cmp);
	sweep(d);
	d->oom = d->oom || d->k.oom || d->w.oom;
	g->sm_known = g->kernels_sm > 0;
}

void gpu_util_window(const struct model *m, uint32_t f, const struct step_table *st, int64_t *s,
		     int64_t *e)
{
	if (st->nrows) {
		*s = st->rows[0].start_ns;
		*e = st->rows[st->nrows - 1].end_ns;
		return;
	}
	*s = INT64_MAX;
	*e = INT64_MIN;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_DEVICE || tr->file != f)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (!tree_is_device_work(tr->ranges.category[i]))
				continue;
			int64_t a = tr->ranges.start_ns[i], b = a + tr->ranges.dur_ns[i];
			*s = a < *s ? a : *s;
			*e = b > *e ? b : *e;
		}
	}
	if (*s > *e)
		*s = *e = 0;
}

/* Fill one device: its steps (the step table's rows), window and buckets. */
static bool fill_device(const struct model *m, uint32_t tt, const struct step_table *st,
			struct gpu_util_device *g)
{
	struct dev_data d;
	memset(&d, 0, sizeof(d));
	g->sm_count = sm_count(m, g->file, g->device);
	collect(m, g->file, tt, g, &d);
	if (d.oom) {
		dev_data_free(&d);
		return false;
	}
	int64_t ws, we;
	if (st->nrows) {
		g->steps = calloc(st->nrows, sizeof(*g->steps));
		if (!g->steps) {
			dev_data_free(&d);
			return false;
		}
		g->nsteps = st->nrows;
		for (uint32_t k = 0; k < st->nrows; k++) {
			g->steps[k].name = st->rows[k].name;
			g->steps[k].s = st->rows[k].start_ns;
			g->steps[k].e = st->rows[k].end_ns;
			fill_span(&g->steps[k], &d);
		}
	}
	gpu_util_window(m, g->file, st, &ws, &we);
	g->window = (struct gpu_util_span){ .s = ws, .e = we };
	fill_span(&g->window, &d);
	uint32_t n = gpu_util_nbuckets(ws, we, &g->bucket_ns);
	if (n) {
		g->buckets = calloc(n, sizeof(*g->buckets));
		if (!g->buckets) {
			dev_data_free(&d);
			return false;
		}
		g->nbuckets = n;
		for (uint32_t b = 0; b < n; b++) {
			struct gpu_util_span *sp = &g->buckets[b];
			sp->s = ws + (int64_t)b * g->bucket_ns;
			sp->e = sp->s + g->bucket_ns < we ? sp->s + g->bucket_ns : we;
			fill_span(sp, &d);
		}
	}
	dev_data_free(&d);
	return true;
}

int gpu_util_analyze(const struct analysis *a, struct gpu_util *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	uint32_t cap = 0;
	bool oom = false;
	for (uint32_t f = 0; f < m->nfiles && !oom; f++) {
		uint32_t dev[DEVICE_MAX_GPUS], first[DEVICE_MAX_GPUS];
		uint32_t ndev = device_file_gpus(m, f, dev, first);
		struct step_table st;
		if (!ndev)
			continue; /* steps only for files with a GPU */
		if (steps_analyze(&a->tree, f, &st) != 0) {
			oom = true;
			break;
		}
		for (uint32_t k = 0; k < ndev && !oom; k++) {
			if (out->ndev == cap) {
				uint32_t n = cap ? cap * 2 : 4;
				struct gpu_util_device *v = realloc(out->dev, n * sizeof(*v));
				if (!v) {
					oom = true;
					break;
				}
				out->dev = v;
				cap = n;
			}
			struct gpu_util_device *g = &out->dev[out->ndev++];
			memset(g, 0, sizeof(*g));
			g->file = f;
			g->device = dev[k];
			oom = !fill_device(m, first[k], &st, g);
		}
		steps_free(&st);
	}
	if (oom) {
		gpu_util_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void gpu_util_free(struct gpu_util *u)
{
	for (uint32_t i = 0; i < u->ndev; i++) {
		free(u->dev[i].steps);
		free(u->dev[i].buckets);
	}
	free(u->dev);
	memset(u, 0, sizeof(*u));
}
