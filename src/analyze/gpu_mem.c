/*
 * gpu_mem.c: GPU memory from allocation records (gpu_mem.h).
 *
 * Per file, the "[memory]" instants of GPU memory are read into one array, sorted by device,
 * time and then the order they were read in (track by track), and walked once per device:
 * the allocated bytes after each record (the record's "Total Allocated" when every record of
 * the device has one, else the running sum from 0), the peak, the series, and the matching of
 * each free to the live allocation at its address. The host range that made an allocation is
 * looked up only for the allocations listed: on a host thread, the innermost range around
 * the record; on a device track (opscope's CUPTI records), the range around the runtime call
 * with the record's correlation id. Invariant: recs[] of one device are in time order.
 */
#include "analyze/gpu_mem.h"

#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/gpu_util.h"
#include "util/hashmap.h"

/* One allocation or free record. */
/* A record claiming more than this (1 PiB) is not a device's memory: it is not read, so that
 * no sum of millions of records can overflow (a hostile trace made the totals negative). */
#define GPU_MEM_MAX_BYTES (INT64_C(1) << 50)

/* a + b, held at INT64_MAX / INT64_MIN instead of overflowing */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

struct rec {
	int64_t ts;	  /* ns */
	int64_t bytes;	  /* > 0 allocation, < 0 free */
	int64_t total;	  /* "Total Allocated" after it, if has_total */
	uint64_t addr;	  /* address, if has_addr */
	uint64_t corr;	  /* correlation id of the runtime call, 0 none */
	uint64_t seq;	  /* order read in */
	uint64_t instant; /* index of the instant on its track */
	int64_t freed;	  /* allocations: ns when freed, INT64_MIN not in the trace */
	uint32_t track;	  /* model track of the instant */
	uint32_t device;  /* device id */
	bool has_total;	  /* "Total Allocated" was there */
	bool has_addr;	  /* "Addr" was there */
};

/* The string ids of the argument keys read (0: not in the model). */
struct keys {
	uint32_t memory, device, device_id, device_type, bytes, bytes_k, addr, total, corr;
};

static int rec_cmp(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Argument `key` of instant i of track tr as an integer ("0x..." strings too). */
static bool arg_int(const struct model *m, const struct model_track *tr, uint64_t i, uint32_t key,
		    int64_t *v)
{
	if (!key)
		return false;
	uint64_t a = tr->instants.first_arg[i];
	for (uint32_t k = 0; k < tr->instants.nargs[i]; k++, a++) {
		if (m->args.key[a] != key)
			continue;
		switch (m->args.type[a]) {
		case MODEL_ARG_I64:
		case MODEL_ARG_U64:
			*v = (int64_t)m->args.bits[a];
			return true;
		case MODEL_ARG_F64: {
			double d;
			memcpy(&d, &m->args.bits[a], sizeof(d));
			if (!(d > -9.2e18 && d < 9.2e18))
				return false;
			*v = (int64_t)d;
			return true;
		}
		case MODEL_ARG_STR: {
			const char *s = model_str(m, (uint32_t)m->args.bits[a]);
			char *end;
			unsigned long long x = strtoull(s, &end, 0);
			if (end == s || *end)
				return false;
			*v = (int64_t)x;
			return true;
		}
		default:
			return false;
		}
	}
	return false;
}

/* Read instant i of track t as a GPU memory record; false when it is not one. */
static bool read_rec(const struct model *m, const struct keys *K, uint32_t t, uint64_t i,
		     struct rec *r)
{
	const struct model_track *tr = &m->tracks[t];
	int64_t dev, type, bytes, v;
	if (arg_int(m, tr, i, K->device_type, &type) && type != 1)
		return false; /* PyTorch's Device Type: 1 is CUDA (0 the CPU) */
	if (!arg_int(m, tr, i, K->device_id, &dev) && !arg_int(m, tr, i, K->device, &dev))
		return false;
	if (!arg_int(m, tr, i, K->bytes_k, &bytes) && !arg_int(m, tr, i, K->bytes, &bytes))
		return false;
	if (dev < 0 || dev > UINT32_MAX || bytes == 0 || bytes > GPU_MEM_MAX_BYTES ||
	    bytes < -GPU_MEM_MAX_BYTES)
		return false;
	memset(r, 0, sizeof(*r));
	r->ts = tr->instants.ts_ns[i];
	r->bytes = bytes;
	r->device = (uint32_t)dev;
	r->track = t;
	r->instant = i;
	r->freed = INT64_MIN;
	r->has_total = arg_int(m, tr, i, K->total, &r->total);
	if (r->has_total && (r->total > GPU_MEM_MAX_BYTES || r->total < -GPU_MEM_MAX_BYTES))
		return false;
	r->has_addr = arg_int(m, tr, i, K->addr, &v);
	r->addr = r->has_addr ? (uint64_t)v : 0;
	if (arg_int(m, tr, i, K->corr, &v))
		r->corr = (uint64_t)v;
	return true;
}

/* The innermost range of host track t around time ts, MODEL_NONE if none. */
static uint64_t innermost(const struct analysis *a, uint32_t t, int64_t ts)
{
	const struct model_track *tr = &a->m->tracks[t];
	uint64_t lo = 0, hi = tr->nranges; /* first range starting after ts */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (tr->ranges.start_ns[mid] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return MODEL_NONE;
	/* the last range starting at or before ts, or one of its ancestors (ranges nest) */
	for (uint64_t i = lo - 1; i != MODEL_NONE; i = a->tree.tracks[t].parent[i]) {
		int64_t s = tr->ranges.start_ns[i], e = s + tr->ranges.dur_ns[i];
		if (ts < e || ts == s)
			return i;
	}
	return MODEL_NONE;
}

/* The name of range i of track t or of its nearest ancestor that is neither a runtime call
 * nor a step; 0 if none. */
static uint32_t launcher_name(const struct analysis *a, uint32_t t, uint64_t i)
{
	const struct model_track *tr = &a->m->tracks[t];
	for (; i != MODEL_NONE; i = a->tree.tracks[t].parent[i]) {
		uint8_t c = tr->ranges.category[i];
		if (!tree_is_runtime(c) && c != OPSCOPE_CAT_PROFILE_STEP)
			return tr->ranges.name[i];
	}
	return 0;
}

/* Runtime calls of file f by correlation id: value track << 40 | range. */
static bool map_calls(const struct model *m, uint32_t f, struct hmap *calls)
{
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_THREAD || tr->file != f || !tr->ranges.correlation)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint64_t c = tr->ranges.correlation[i];
			if (c && tree_is_runtime(tr->ranges.category[i]) &&
			    !hmap_put(calls, c, (uint64_t)t << 40 | i))
				return false;
		}
	}
	return true;
}

/* The host range that made record r (gpu_mem.h). */
static uint32_t launcher(const struct analysis *a, const struct rec *r, struct hmap *calls)
{
	const struct model_track *tr = &a->m->tracks[r->track];
	if (tr->kind == MODEL_TRACK_THREAD)
		return launcher_name(a, r->track, innermost(a, r->track, r->ts));
	uint64_t *c = r->corr ? hmap_find(calls, r->corr) : NULL;
	if (!c)
		return 0;
	return launcher_name(a, (uint32_t)(*c >> 40), *c & ((1ull << 40) - 1));
}

/* Sort order of the listed allocations: larger first, then earlier. */
static int size_cmp(const void *x, const void *y)
{
	const struct rec *a = *(const struct rec *const *)x, *b = *(const struct rec *const *)y;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return rec_cmp(a, b);
}

static struct gpu_mem_alloc alloc_of(const struct analysis *a, const struct rec *r,
				     struct hmap *calls)
{
	return (struct gpu_mem_alloc){ r->ts, r->bytes, r->freed, r->addr, launcher(a, r, calls) };
}

/* The series of device g over its records recs[0..n). */
static bool series(struct gpu_mem_device *g, const struct rec *recs, const int64_t *after, size_t n)
{
	/* the buckets of [first, last]: the last record's instant has a bucket too */
	uint32_t nb = g->last_ns < INT64_MAX
			      ? gpu_util_nbuckets(g->first_ns, g->last_ns + 1, &g->bucket_ns)
			      : 0;
	if (!nb)
		return true; /* records over a span an int64 cannot hold: no series */
	g->buckets = calloc(nb, sizeof(*g->buckets));
	if (!g->buckets)
		return false;
	g->nbuckets = nb;
	int64_t cur = g->start_bytes;
	size_t i = 0;
	for (uint32_t b = 0; b < nb; b++) {
		struct gpu_mem_bucket *k = &g->buckets[b];
		k->s = g->first_ns + (int64_t)b * g->bucket_ns;
		k->e = k->s + g->bucket_ns < g->last_ns + 1 ? k->s + g->bucket_ns : g->last_ns + 1;
		k->max_bytes = cur;
		for (; i < n && recs[i].ts < k->e; i++) {
			cur = after[i];
			k->max_bytes = cur > k->max_bytes ? cur : k->max_bytes;
		}
		k->end_bytes = cur;
	}
	return true;
}

/* Walk the records of one device (recs[0..n), time order) into g. */
static bool walk_device(const struct analysis *a, struct rec *recs, size_t n,
			struct gpu_mem_device *g, struct hmap *calls)
{
	g->totals = g->addresses = true;
	for (size_t i = 0; i < n; i++) {
		g->totals = g->totals && recs[i].has_total;
		g->addresses = g->addresses && recs[i].has_addr;
	}
	g->first_ns = recs[0].ts;
	g->last_ns = recs[n - 1].ts;
	g->start_bytes = g->totals ? recs[0].total - recs[0].bytes : 0;
	int64_t *after = malloc(n * sizeof(*after));
	struct rec **allocs = malloc(n * sizeof(*allocs));
	struct hmap live = { 0 }; /* address -> index in recs + 1 of its live allocation */
	bool ok = after && allocs;
	size_t na = 0;
	int64_t cur = g->start_bytes;
	g->peak_bytes = INT64_MIN;
	for (size_t i = 0; i < n && ok; i++) {
		struct rec *r = &recs[i];
		cur = g->totals ? r->total : sat_add(cur, r->bytes);
		after[i] = cur;
		if (cur > g->peak_bytes) {
			g->peak_bytes = cur;
			g->peak_ns = r->ts;
		}
		if (r->bytes > 0) {
			g->allocs++;
			g->alloc_bytes = sat_add(g->alloc_bytes, r->bytes);
			allocs[na++] = r;
			if (g->addresses)
				ok = hmap_put(&live, r->addr, i + 1);
		} else {
			g->frees++;
			g->free_bytes = sat_add(g->free_bytes, -r->bytes);
			uint64_t *v = g->addresses ? hmap_find(&live, r->addr) : NULL;
			if (v && *v) {
				recs[*v - 1].freed = r->ts;
				*v = 0;
			}
		}
	}
	g->end_bytes = cur;
	if (ok) {
		qsort(allocs, na, sizeof(*allocs), size_cmp);
		for (size_t i = 0; i < na; i++) {
			if (g->nlargest < GPU_MEM_TOP)
				g->largest[g->nlargest++] = alloc_of(a, allocs[i], calls);
			if (!g->addresses || allocs[i]->freed != INT64_MIN)
				continue;
			g->never_freed++;
			g->never_freed_bytes = sat_add(g->never_freed_bytes, allocs[i]->bytes);
			if (g->nleaks < GPU_MEM_TOP)
				g->leaks[g->nleaks++] = alloc_of(a, allocs[i], calls);
		}
		ok = series(g, recs, after, n);
	}
	free(after);
	free(allocs);
	hmap_free(&live);
	return ok;
}

/* The records of file f, appended to *recs (grown as needed). */
static bool read_file(const struct model *m, const struct keys *K, uint32_t f, struct rec **recs,
		      size_t *n, size_t *cap, bool *on_device)
{
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->file != f)
			continue;
		for (uint64_t i = 0; i < tr->ninstants; i++) {
			struct rec r;
			if (tr->instants.name[i] != K->memory || !read_rec(m, K, t, i, &r))
				continue;
			if (*n == *cap) {
				size_t c = *cap ? *cap * 2 : 256;
				struct rec *v = realloc(*recs, c * sizeof(*v));
				if (!v)
					return false;
				*recs = v;
				*cap = c;
			}
			r.seq = *n;
			(*recs)[(*n)++] = r;
			*on_device = *on_device || tr->kind != MODEL_TRACK_THREAD;
		}
	}
	return true;
}

int gpu_mem_analyze(const struct analysis *a, struct gpu_mem *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	struct keys K = {
		model_find_str(m, "[memory]"),	  model_find_str(m, "device"),
		model_find_str(m, "Device Id"),	  model_find_str(m, "Device Type"),
		model_find_str(m, "bytes"),	  model_find_str(m, "Bytes"),
		model_find_str(m, "Addr"),	  model_find_str(m, "Total Allocated"),
		model_find_str(m, "correlation"),
	};
	if (!K.memory)
		return 0;
	struct rec *recs = NULL;
	size_t cap = 0;
	uint32_t dcap = 0;
	bool ok = true;
	for (uint32_t f = 0; f < m->nfiles && ok; f++) {
		size_t n = 0;
		bool on_device = false;
		struct hmap calls = { 0 };
		ok = read_file(m, &K, f, &recs, &n, &cap, &on_device) &&
		     (!on_device || map_calls(m, f, &calls));
		if (ok && n)
			qsort(recs, n, sizeof(*recs), rec_cmp);
		for (size_t i = 0; i < n && ok;) {
			size_t j = i;
			while (j < n && recs[j].device == recs[i].device)
				j++;
			if (out->ndev == dcap) {
				uint32_t c = dcap ? dcap * 2 : 4;
				struct gpu_mem_device *v = realloc(out->dev, c * sizeof(*v));
				if (!v) {
					ok = false;
					break;
				}
				out->dev = v;
				dcap = c;
			}
			struct gpu_mem_device *g = &out->dev[out->ndev++];
			memset(g, 0, sizeof(*g));
			g->file = f;
			g->device = recs[i].device;
			ok = walk_device(a, recs + i, j - i, g, &calls);
			i = j;
		}
		hmap_free(&calls);
	}
	free(recs);
	if (!ok) {
		gpu_mem_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void gpu_mem_free(struct gpu_mem *g)
{
	for (uint32_t i = 0; i < g->ndev; i++)
		free(g->dev[i].buckets);
	free(g->dev);
	memset(g, 0, sizeof(*g));
}
