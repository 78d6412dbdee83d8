/*
 * aggregate.c: aggregation by (parent, name, kind) (aggregate.h): a table of items in
 * first-seen order, found through an index of their keys (util/hashmap.h, at most half
 * full); and the aggregations of the report's tables by name, each one pass over the ranges
 * it selects.
 */
#include "analyze/aggregate.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "util/grow.h"

static uint64_t agg_hash(uint32_t parent, uint32_t name, uint32_t group, uint8_t kind)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull ^ kind;
	h ^= (uint64_t)group * 0xc2b2ae3d27d4eb4full;
	return h ^ (h >> 31);
}

/* An aggregate looked up: the table and the key. */
struct agg_key {
	const struct agg *a;
	uint32_t parent, name, group;
	uint8_t kind;
};

/* hindex_eq_fn: has item i the key? */
static bool agg_eq(const void *ctx, uint32_t i)
{
	const struct agg_key *k = ctx;
	const struct agg_item *it = &k->a->v[i];
	return it->parent == k->parent && it->name == k->name && it->group == k->group &&
	       it->kind == k->kind;
}

/* hindex_hash_fn: the hash of item i's key, for growing the index. */
static uint64_t agg_item_hash(const void *ctx, uint32_t i)
{
	const struct agg_item *it = &((const struct agg *)ctx)->v[i];
	return agg_hash(it->parent, it->name, it->group, it->kind);
}

uint32_t agg_get(struct agg *a, uint32_t parent, uint32_t name, uint8_t kind)
{
	return agg_get_group(a, parent, name, 0, kind);
}

uint32_t agg_get_group(struct agg *a, uint32_t parent, uint32_t name, uint32_t group, uint8_t kind)
{
	uint64_t h = agg_hash(parent, name, group, kind);
	struct agg_key key = { a, parent, name, group, kind };
	uint32_t found = hindex_find(&a->index, h, agg_eq, &key);
	if (found != HINDEX_NONE)
		return found;
	if (!hindex_reserve(&a->index, agg_item_hash, a)) {
		a->oom = true;
		return AGG_NONE;
	}
	if (a->n == a->cap) {
		uint32_t cap = a->cap ? a->cap * 2 : 256;
		struct agg_item *v = realloc(a->v, cap * sizeof(*v));
		if (!v) {
			a->oom = true;
			return AGG_NONE;
		}
		a->v = v;
		a->cap = cap;
	}
	if (a->n == 0)
		a->first_top = a->last_top = AGG_NONE;
	uint32_t i = a->n++;
	struct agg_item *it = &a->v[i];
	memset(it, 0, sizeof(*it));
	it->name = name;
	it->parent = parent;
	it->group = group;
	it->kind = kind;
	it->cpu_min_ns = INT64_MAX;
	it->gpu_min_ns = INT64_MAX;
	it->first_child = it->last_child = it->next = AGG_NONE;
	/* chain into the parent's children (or the top level), keeping first-seen order */
	uint32_t *first = parent == AGG_NONE ? &a->first_top : &a->v[parent].first_child;
	uint32_t *last = parent == AGG_NONE ? &a->last_top : &a->v[parent].last_child;
	if (*first == AGG_NONE)
		*first = i;
	else
		a->v[*last].next = i;
	*last = i;
	hindex_insert(&a->index, h, i);
	return i;
}

void agg_add(struct agg *a, uint32_t item, int64_t cpu, int64_t gpu)
{
	if (item == AGG_NONE)
		return;
	struct agg_item *it = &a->v[item];
	it->calls++;
	it->cpu_ns += cpu;
	it->cpu_max_ns = cpu > it->cpu_max_ns ? cpu : it->cpu_max_ns;
	it->cpu_min_ns = cpu < it->cpu_min_ns ? cpu : it->cpu_min_ns;
	it->gpu_ns += gpu;
	it->gpu_max_ns = gpu > it->gpu_max_ns ? gpu : it->gpu_max_ns;
	it->gpu_min_ns = gpu < it->gpu_min_ns ? gpu : it->gpu_min_ns;
}

void agg_merge_item(struct agg *a, uint32_t item, const struct agg_item *x)
{
	if (item == AGG_NONE || x->calls == 0)
		return;
	struct agg_item *it = &a->v[item];
	it->calls += x->calls;
	it->cpu_ns += x->cpu_ns;
	it->cpu_max_ns = x->cpu_max_ns > it->cpu_max_ns ? x->cpu_max_ns : it->cpu_max_ns;
	it->cpu_min_ns = x->cpu_min_ns < it->cpu_min_ns ? x->cpu_min_ns : it->cpu_min_ns;
	it->gpu_ns += x->gpu_ns;
	it->gpu_max_ns = x->gpu_max_ns > it->gpu_max_ns ? x->gpu_max_ns : it->gpu_max_ns;
	it->gpu_min_ns = x->gpu_min_ns < it->gpu_min_ns ? x->gpu_min_ns : it->gpu_min_ns;
	it->self_ns += x->self_ns;
	it->gpu_self_ns += x->gpu_self_ns;
}

void agg_free(struct agg *a)
{
	free(a->v);
	hindex_free(&a->index);
	memset(a, 0, sizeof(*a));
}

void agg_top_sums(const struct agg *a, int64_t *cpu_ns, int64_t *gpu_ns)
{
	*cpu_ns = *gpu_ns = 0;
	for (uint32_t i = a->n ? a->first_top : AGG_NONE; i != AGG_NONE; i = a->v[i].next) {
		*cpu_ns += a->v[i].cpu_ns;
		*gpu_ns += a->v[i].gpu_ns;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Aggregations */

static bool is_memcpy_name(const char *s)
{
	return analysis_name_has(s, "memcpy") || analysis_name_has(s, "memorycopy") ||
	       analysis_name_has(s, "memset");
}

#define MODULE_PREFIX  "nn.Module: "
#define FORWARD_PREFIX "forward: "

size_t agg_module_prefix_len(const char *name)
{
	if (strncmp(name, MODULE_PREFIX, sizeof(MODULE_PREFIX) - 1) == 0)
		return sizeof(MODULE_PREFIX) - 1;
	if (strncmp(name, FORWARD_PREFIX, sizeof(FORWARD_PREFIX) - 1) == 0)
		return sizeof(FORWARD_PREFIX) - 1;
	return 0;
}

bool agg_is_module(uint8_t cat, const char *name)
{
	if (strncmp(name, MODULE_PREFIX, sizeof(MODULE_PREFIX) - 1) == 0)
		return true;
	return cat == OPSCOPE_CAT_FORWARD &&
	       strncmp(name, FORWARD_PREFIX, sizeof(FORWARD_PREFIX) - 1) == 0;
}

bool agg_selects(const struct model *m, enum agg_select sel, uint8_t cat, uint32_t name)
{
	switch (sel) {
	case AGG_OPERATORS:
		return cat == OPSCOPE_CAT_OPERATOR;
	case AGG_USER_DEFINED:
		/* Paddle 2.3 counted the C++ UserDefined ranges too; the newer one only the
		 * Python ones, which leaves C API ranges in no table */
		return (cat == OPSCOPE_CAT_USER_DEFINED ||
			cat == OPSCOPE_CAT_PYTHON_USER_DEFINED) &&
		       !is_memcpy_name(model_str(m, name)) &&
		       !agg_is_module(cat, model_str(m, name));
	case AGG_MEMORY:
		return (cat == OPSCOPE_CAT_USER_DEFINED ||
			cat == OPSCOPE_CAT_PYTHON_USER_DEFINED) &&
		       is_memcpy_name(model_str(m, name));
	case AGG_PYTHON_FUNCTIONS:
		return cat == OPSCOPE_CAT_PYTHON_FUNCTION &&
		       !agg_is_module(cat, model_str(m, name));
	}
	return false;
}

uint32_t agg_arg_group(const struct model *m, uint32_t t, uint64_t i, uint32_t key)
{
	if (!key)
		return 0;
	uint64_t a = model_range_arg(m, t, i, key);
	if (a == MODEL_NONE)
		return 0;
	uint8_t type = m->args.type[a];
	return type == MODEL_ARG_STR || type == MODEL_ARG_JSON ? (uint32_t)m->args.bits[a] : 0;
}

/* Device work launched by the direct runtime children of range i of track t: kernel items
 * under item. */
static void add_kernels(const struct analysis *an, struct agg *a, uint32_t item, uint32_t t,
			uint64_t i)
{
	const struct model *m = an->m;
	const struct model_track *tr = &m->tracks[t];
	const struct tree_track *tk = &an->tree.tracks[t];
	/* children follow their parent in a track's order, until the parent ends */
	int64_t end = tr->ranges.start_ns[i] + tr->ranges.dur_ns[i];
	for (uint64_t j = i + 1; j < tr->nranges && tr->ranges.start_ns[j] <= end; j++) {
		if (tk->parent[j] != i || !tree_is_runtime(tr->ranges.category[j]))
			continue;
		for (uint32_t l = tk->launches[j]; l != TREE_NONE; l = an->tree.launches[l].next) {
			const struct tree_launch *L = &an->tree.launches[l];
			const struct model_ranges *d = &m->tracks[L->track].ranges;
			uint32_t k = agg_get(a, item, d->name[L->range], AGG_KIND_KERNEL);
			agg_add(a, k, 0, d->dur_ns[L->range]);
		}
	}
}

/* 0, or OPSCOPE_ENOMEM with a freed. */
static int agg_done(struct agg *a)
{
	if (!a->oom)
		return 0;
	agg_free(a);
	return OPSCOPE_ENOMEM;
}

/* agg_host_ranges over the thread tracks that `track` (MODEL_NO_TRACK: every one) and
 * `file` (UINT32_MAX: every one) select. */
static int host_ranges(const struct analysis *an, enum agg_select sel, uint32_t track,
		       uint32_t file, bool detail, uint32_t group_key, struct agg *out)
{
	const struct model *m = an->m;
	memset(out, 0, sizeof(*out));
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD || (track != MODEL_NO_TRACK && track != tt) ||
		    (file != UINT32_MAX && tr->file != file))
			continue;
		const struct tree_track *tk = &an->tree.tracks[tt];
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (!agg_selects(m, sel, r->category[i], r->name[i]))
				continue;
			uint32_t item =
				agg_get_group(out, AGG_NONE, r->name[i],
					      agg_arg_group(m, tt, i, group_key), AGG_KIND_RANGE);
			agg_add(out, item, r->dur_ns[i], tk->ggpu_ns[i]);
			if (item != AGG_NONE)
				out->v[item].self_ns += tk->self_ns[i];
			if (!detail || item == AGG_NONE)
				continue;
			/* inner phases: direct children that are neither operators nor calls */
			int64_t end = r->start_ns[i] + r->dur_ns[i];
			for (uint64_t j = i + 1; j < tr->nranges && r->start_ns[j] <= end; j++) {
				if (tk->parent[j] != i || r->category[j] == OPSCOPE_CAT_OPERATOR ||
				    tree_is_runtime(r->category[j]))
					continue;
				uint32_t in = agg_get(out, item, r->name[j], AGG_KIND_INNER);
				agg_add(out, in, r->dur_ns[j], tk->ggpu_ns[j]);
				if (in != AGG_NONE)
					add_kernels(an, out, in, tt, j);
			}
			add_kernels(an, out, item, tt, i);
		}
	}
	return agg_done(out);
}

int agg_host_ranges(const struct analysis *an, enum agg_select sel, uint32_t track, bool detail,
		    uint32_t group_key, struct agg *out)
{
	return host_ranges(an, sel, track, UINT32_MAX, detail, group_key, out);
}

int agg_host_ranges_file(const struct analysis *an, enum agg_select sel, uint32_t file, bool detail,
			 struct agg *out)
{
	return host_ranges(an, sel, MODEL_NO_TRACK, file, detail, 0, out);
}

/* The nearest enclosing module call of range i of a track (item_of: the item of each module
 * call seen so far), AGG_NONE if none. */
static uint32_t module_parent(const struct tree_track *tk, const uint32_t *item_of, uint64_t i)
{
	for (uint64_t p = tk->parent[i]; p != MODEL_NONE; p = tk->parent[p])
		if (item_of[p] != AGG_NONE)
			return item_of[p];
	return AGG_NONE;
}

/* agg_modules over thread track `track` (MODEL_NO_TRACK: all) of file `file` (UINT32_MAX:
 * all). */
static int modules(const struct analysis *an, uint32_t track, uint32_t file, struct agg *out)
{
	const struct model *m = an->m;
	memset(out, 0, sizeof(*out));
	for (uint32_t tt = 0; tt < m->ntracks && !out->oom; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD || (track != MODEL_NO_TRACK && track != tt) ||
		    (file != UINT32_MAX && tr->file != file))
			continue;
		const struct tree_track *tk = &an->tree.tracks[tt];
		const struct model_ranges *r = &tr->ranges;
		uint32_t *item_of = NULL; /* per range: its item if a module call, else AGG_NONE */
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (!agg_is_module(r->category[i], model_str(m, r->name[i])))
				continue;
			if (!item_of) { /* the first module call of the track */
				item_of = malloc(tr->nranges * sizeof(*item_of));
				if (!item_of) {
					out->oom = true;
					break;
				}
				memset(item_of, 0xff,
				       tr->nranges * sizeof(*item_of)); /* AGG_NONE */
			}
			/* parents come before their children in a track's order */
			uint32_t parent = module_parent(tk, item_of, i);
			uint32_t it = agg_get(out, parent, r->name[i], AGG_KIND_RANGE);
			agg_add(out, it, r->dur_ns[i], tk->ggpu_ns[i]);
			item_of[i] = it;
		}
		free(item_of);
	}
	/* self = total - the child modules' totals: every call of a child lies inside a call
	 * of its parent item */
	for (uint32_t i = 0; i < out->n; i++) {
		struct agg_item *it = &out->v[i];
		it->self_ns = it->cpu_ns;
		it->gpu_self_ns = it->gpu_ns;
		for (uint32_t c = it->first_child; c != AGG_NONE; c = out->v[c].next) {
			it->self_ns -= out->v[c].cpu_ns;
			it->gpu_self_ns -= out->v[c].gpu_ns;
		}
	}
	return agg_done(out);
}

int agg_modules(const struct analysis *an, uint32_t track, struct agg *out)
{
	return modules(an, track, UINT32_MAX, out);
}

int agg_modules_file(const struct analysis *an, uint32_t file, struct agg *out)
{
	return modules(an, MODEL_NO_TRACK, file, out);
}

static int nvtx_dur_cmp(const void *x, const void *y)
{
	const struct agg_nvtx_dur *a = x, *b = y;
	if (a->item != b->item)
		return a->item < b->item ? -1 : 1;
	return (a->dur > b->dur) - (a->dur < b->dur);
}

void agg_nvtx_free(struct agg_nvtx *n)
{
	agg_free(&n->a);
	free(n->median_ns);
	free(n->stddev_ns);
	free(n->dur);
	memset(n, 0, sizeof(*n));
}

int agg_nvtx_add(struct agg_nvtx *out, uint32_t domain, uint32_t name, uint8_t style, int64_t dur,
		 uint64_t count)
{
	uint32_t dom = agg_get(&out->a, AGG_NONE, domain, AGG_NVTX_DOMAIN);
	uint32_t it = dom == AGG_NONE ? AGG_NONE : agg_get(&out->a, dom, name, style);
	if (it == AGG_NONE)
		return OPSCOPE_ENOMEM;
	if (!count)
		return 0;
	if (!grow_array((void **)&out->dur, sizeof(*out->dur), &out->dur_cap, out->ndur + 1))
		return OPSCOPE_ENOMEM;
	/* the run's calls at once: a merge's memory and time follow the runs, not the ranges
	 * they stand for (the caller keeps count x dur inside int64) */
	struct agg_item x = {
		.calls = count, .cpu_ns = dur * (int64_t)count, .cpu_max_ns = dur, .cpu_min_ns = dur
	};
	agg_merge_item(&out->a, it, &x);
	out->dur[out->ndur++] = (struct agg_nvtx_dur){ it, dur, count };
	out->total_ns += x.cpu_ns;
	return 0;
}

/* The NVTX ranges of the tracks of the files [lo, hi) into out, in track order. */
static int nvtx_ranges_of(const struct model *m, uint32_t lo, uint32_t hi, uint32_t key,
			  struct agg_nvtx *out)
{
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind == MODEL_TRACK_DEVICE || tr->file < lo || tr->file >= hi)
			continue;
		uint8_t style =
			tr->kind == MODEL_TRACK_ASYNC ? AGG_NVTX_STARTEND : AGG_NVTX_PUSHPOP;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++)
			if (r->category[i] == OPSCOPE_CAT_NVTX &&
			    agg_nvtx_add(out, agg_arg_group(m, tt, i, key), r->name[i], style,
					 r->dur_ns[i], 1) != 0)
				return OPSCOPE_ENOMEM;
	}
	return 0;
}

int agg_nvtx_finish(struct agg_nvtx *out)
{
	if (out->a.oom || !out->ndur) {
		int rc = out->a.oom ? OPSCOPE_ENOMEM : 0;
		if (rc)
			agg_nvtx_free(out);
		return rc;
	}
	out->median_ns = calloc(out->a.n, sizeof(*out->median_ns));
	out->stddev_ns = calloc(out->a.n, sizeof(*out->stddev_ns));
	if (!out->median_ns || !out->stddev_ns) {
		agg_nvtx_free(out);
		return OPSCOPE_ENOMEM;
	}
	/* the runs by item, then duration; equal ones (of several files) made one, so that any
	 * split of the same ranges into runs gives the same list */
	qsort(out->dur, out->ndur, sizeof(*out->dur), nvtx_dur_cmp);
	uint64_t n = 0;
	for (uint64_t i = 0; i < out->ndur; i++)
		if (n && out->dur[n - 1].item == out->dur[i].item &&
		    out->dur[n - 1].dur == out->dur[i].dur)
			out->dur[n - 1].count += out->dur[i].count;
		else
			out->dur[n++] = out->dur[i];
	out->ndur = n;
	const struct agg_nvtx_dur *d = out->dur;
	for (uint64_t s = 0, e; s < n; s = e) {
		for (e = s; e < n && d[e].item == d[s].item; e++)
			;
		uint32_t it = d[s].item;
		uint64_t c = out->a.v[it].calls;
		/* the ranges at positions (c - 1) / 2 and c / 2 of the sorted durations */
		int64_t lo = 0, hi = 0;
		for (uint64_t j = s, seen = 0; j < e; seen += d[j].count, j++) {
			if ((c - 1) / 2 >= seen && (c - 1) / 2 < seen + d[j].count)
				lo = d[j].dur;
			if (c / 2 >= seen && c / 2 < seen + d[j].count)
				hi = d[j].dur;
		}
		/* (a + b) / 2 without overflow, rounded down */
		out->median_ns[it] = lo + (hi - lo) / 2;
		if (c < 2)
			continue;
		/* a run of k equal durations adds k (x - mean)^2, over the runs in order: the
		 * same bits from any files' runs of the same ranges */
		double mean = (double)out->a.v[it].cpu_ns / (double)c, ss = 0;
		for (uint64_t j = s; j < e; j++) {
			double x = (double)d[j].dur - mean;
			ss += (double)d[j].count * (x * x);
		}
		out->stddev_ns[it] = (int64_t)(sqrt(ss / (double)(c - 1)) + 0.5);
	}
	return 0;
}

/* agg_nvtx of the files [lo, hi): file by file, so that the first-seen order of the whole is
 * that of the files' own aggregations one after the other (what opscope merge rebuilds). */
static int nvtx_files(const struct model *m, uint32_t lo, uint32_t hi, struct agg_nvtx *out)
{
	memset(out, 0, sizeof(*out));
	uint32_t key = model_find_str(m, "domain");
	int rc = 0;
	for (uint32_t f = lo; f < hi && f < m->nfiles && rc == 0; f++)
		rc = nvtx_ranges_of(m, f, f + 1, key, out);
	if (rc == 0 && hi > m->nfiles) /* tracks of no file (a model built by hand) */
		rc = nvtx_ranges_of(m, m->nfiles, UINT32_MAX, key, out);
	if (rc != 0) {
		agg_nvtx_free(out);
		return rc;
	}
	return agg_nvtx_finish(out);
}

int agg_nvtx(const struct model *m, struct agg_nvtx *out)
{
	return nvtx_files(m, 0, UINT32_MAX, out);
}

int agg_nvtx_file(const struct model *m, uint32_t file, struct agg_nvtx *out)
{
	return nvtx_files(m, file, file + 1, out);
}

/* The kernels of the device tracks of the files [lo, hi) into out. */
static void kernels_of(const struct model *m, uint32_t lo, uint32_t hi, struct agg *out,
		       int64_t *total_ns)
{
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_DEVICE || tr->file < lo || tr->file >= hi)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (!tree_is_kernel(tr->ranges.category[i]))
				continue;
			uint32_t it = agg_get(out, AGG_NONE, tr->ranges.name[i], AGG_KIND_RANGE);
			agg_add(out, it, 0, tr->ranges.dur_ns[i]);
			*total_ns += tr->ranges.dur_ns[i];
		}
	}
}

int agg_kernels(const struct model *m, struct agg *out, int64_t *total_ns)
{
	memset(out, 0, sizeof(*out));
	*total_ns = 0;
	/* file by file, so that the first-seen order is that of the files' own aggregations
	 * one after the other: what `opscope merge` rebuilds from them (agg_merge_item) */
	for (uint32_t f = 0; f < m->nfiles; f++)
		kernels_of(m, f, f + 1, out, total_ns);
	kernels_of(m, m->nfiles, UINT32_MAX, out, total_ns); /* tracks of no file (a model
							       * built by hand) */
	return agg_done(out);
}

int agg_kernels_file(const struct model *m, uint32_t file, struct agg *out, int64_t *total_ns)
{
	memset(out, 0, sizeof(*out));
	*total_ns = 0;
	kernels_of(m, file, file + 1, out, total_ns);
	return agg_done(out);
}

static const char *const copy_kinds[] = { "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "DtoA", "AtoD" };
static const char *const copy_names[] = {
	"[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "[CUDA memcpy DtoD]", "[CUDA memcpy HtoH]",
	"[CUDA memcpy PtoP]", "[CUDA memcpy DtoA]", "[CUDA memcpy AtoD]", "[CUDA memset]",
};
#define NCOPY_KINDS (sizeof(copy_kinds) / sizeof(copy_kinds[0]))
_Static_assert(sizeof(copy_names) / sizeof(copy_names[0]) == NCOPY_KINDS + 1 &&
		       NCOPY_KINDS + 1 == AGG_NVPROF_COPY_KEYS,
	       "one name per copy kind, and the memsets'");

/* The copy key of a range: 1 + the kind's index for a copy, NCOPY_KINDS + 1 for a memset, 0
 * for anything else (an item of its own name). */
static uint32_t copy_key(const struct model *m, uint8_t cat, uint32_t name)
{
	if (cat == OPSCOPE_CAT_MEMSET)
		return NCOPY_KINDS + 1;
	if (cat != OPSCOPE_CAT_MEMCPY)
		return 0;
	const char *s = model_str(m, name);
	for (size_t k = 0; k < NCOPY_KINDS; k++)
		if (strstr(s, copy_kinds[k]))
			return 1 + (uint32_t)k;
	return 0;
}

const char *agg_nvprof_copy_name(uint32_t key)
{
	return key >= 1 && key <= NCOPY_KINDS + 1 ? copy_names[key - 1] : "";
}

/* agg_nvprof over the tracks of file `file` (UINT32_MAX: every track). */
static int nvprof_of(const struct model *m, uint32_t file, struct agg *out, int64_t *gpu_ns,
		     int64_t *api_ns)
{
	memset(out, 0, sizeof(*out));
	*gpu_ns = *api_ns = 0;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (file != UINT32_MAX && tr->file != file)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t cat = tr->ranges.category[i];
			bool gpu = tr->kind == MODEL_TRACK_DEVICE && tree_is_device_work(cat);
			if (!gpu && !(tr->kind == MODEL_TRACK_THREAD && tree_is_runtime(cat)))
				continue;
			/* copies of one kind share an item: keyed by kind, not by name */
			uint32_t key = gpu ? copy_key(m, cat, tr->ranges.name[i]) : 0;
			uint32_t it = key ? agg_get(out, AGG_NONE, key, AGG_NVPROF_COPY)
					  : agg_get(out, AGG_NONE, tr->ranges.name[i],
						    gpu ? AGG_NVPROF_GPU : AGG_NVPROF_API);
			agg_add(out, it, 0, tr->ranges.dur_ns[i]);
			*(gpu ? gpu_ns : api_ns) += tr->ranges.dur_ns[i];
		}
	}
	return agg_done(out);
}

int agg_nvprof(const struct model *m, struct agg *out, int64_t *gpu_ns, int64_t *api_ns)
{
	return nvprof_of(m, UINT32_MAX, out, gpu_ns, api_ns);
}

int agg_nvprof_file(const struct model *m, uint32_t file, struct agg *out, int64_t *gpu_ns,
		    int64_t *api_ns)
{
	return nvprof_of(m, file, out, gpu_ns, api_ns);
}
