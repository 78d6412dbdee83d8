/*
 * samples.c: flat and cum weight per function, and caller -> callee weights, over the
 * model's stack samples (samples.h).
 *
 * The weight of the samples kept is first summed per stack entry (their innermost one), so
 * that a stack costs its depth once, whatever the number of its samples. Then each entry that
 * has samples walks its stack out to the root, marking each function and caller -> callee
 * pair it meets with the entry's index: a repeat (recursion) finds its mark and is not
 * counted again. (Summing weights up the prefix tree instead would be one pass, but counts a
 * recursive function once per level.)
 */
#include "analyze/samples.h"

#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "util/checked.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* Keep the samples of track t whose time lies inside a range named `name` of the track:
 * mark them in keep[i]. Ranges are sorted by start and samples by time; nested ranges of
 * the same name (recursion) are merged first. */
static void under_track(const struct model_track *t, uint32_t name, uint8_t *keep)
{
	uint64_t s = 0;
	int64_t cur_start = 0, cur_end = INT64_MIN;
	const struct model_ranges *r = &t->ranges;
	for (uint64_t i = 0; i <= t->nranges; i++) {
		bool last = i == t->nranges;
		if (!last && r->name[i] != name)
			continue;
		if (!last && r->start_ns[i] <= cur_end) { /* overlaps the current union */
			int64_t e = r->start_ns[i] + r->dur_ns[i];
			cur_end = e > cur_end ? e : cur_end;
			continue;
		}
		/* the interval [cur_start, cur_end) is complete */
		for (; s < t->nsamples && t->samples.ts_ns[s] < cur_end; s++)
			keep[s] = t->samples.ts_ns[s] >= cur_start;
		if (last)
			break;
		cur_start = r->start_ns[i];
		cur_end = cur_start + r->dur_ns[i];
	}
}

/* qsort's comparison takes no context: the model whose functions are being sorted (one sort
 * per thread at a time; the report runs views on several threads). */
static _Thread_local const struct model *sort_model;

/* The order of the texts of string ids a and b of m (bytes, then length; "" for 0). */
static int text_cmp(const struct model *m, uint32_t a, uint32_t b)
{
	if (a == b)
		return 0;
	uint32_t na = model_strlen(m, a), nb = model_strlen(m, b);
	int c = memcmp(model_str(m, a), model_str(m, b), na < nb ? na : nb);
	if (c)
		return c;
	return na < nb ? -1 : na > nb;
}

/* Heaviest flat first, then cum; ties by the texts of the name and file, then the address:
 * a total order that does not depend on the order the names were interned in, so that a
 * merged model (opscope merge, which interns them in another order) sorts the same. */
static int fn_cmp(const void *a, const void *b)
{
	const struct samples_fn *x = a, *y = b;
	if (x->flat != y->flat)
		return x->flat > y->flat ? -1 : 1;
	if (x->cum != y->cum)
		return x->cum > y->cum ? -1 : 1;
	int c = text_cmp(sort_model, x->name, y->name);
	if (!c)
		c = text_cmp(sort_model, x->file, y->file);
	if (c)
		return c;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* A function's key: (name, file), or for a frame nothing named, its address (user-space
 * addresses are below 2^63), so that unnamed addresses stay apart. */
static uint64_t fn_key(uint32_t name, uint32_t file, uint64_t address)
{
	return name || !address ? (uint64_t)name << 32 | file : 1ull << 63 | address;
}

static int edge_cmp(const void *a, const void *b)
{
	const struct samples_edge *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

/* State of one computation; freed by profile_done. */
struct work {
	int64_t *weight;   /* per stack entry: weight of the kept samples ending there */
	uint32_t *fn_of;   /* per frame: its function's index */
	uint64_t *fn_mark; /* per function: the last entry that counted it, + 1 */
	uint64_t *e_mark;  /* per edge: the same */
	uint8_t *keep;	   /* per sample of one track (--under) */
	uint64_t keep_cap;
	struct hmap fns, edges; /* (name << 32 | file) -> fn; (caller << 32 | callee) -> edge */
	uint64_t fns_cap, edges_cap, marks_cap;
	uint32_t *node_of;  /* per stack entry: its flame graph node */
	struct hmap nodes;  /* (parent node + 1) << 32 | fn -> node */
	uint64_t nodes_cap; /* nodes allocated */
};

static void work_free(struct work *w)
{
	free(w->weight);
	free(w->fn_of);
	free(w->fn_mark);
	free(w->e_mark);
	free(w->keep);
	free(w->node_of);
	hmap_free(&w->nodes);
	hmap_free(&w->fns);
	hmap_free(&w->edges);
}

/* The functions of every frame (the model interns frames, not functions). */
static int map_functions(const struct model *m, struct work *w, struct samples_profile *p)
{
	w->fn_of = malloc(((size_t)m->nframes + 1) * sizeof(*w->fn_of));
	if (!w->fn_of)
		return OPSCOPE_ENOMEM;
	for (uint32_t f = 0; f < m->nframes; f++) {
		const struct model_frame *fr = &m->frames[f];
		uint64_t address = fr->name ? 0 : fr->address;
		uint64_t key = fn_key(fr->name, fr->file, address);
		uint64_t *v = hmap_find(&w->fns, key);
		if (v) {
			w->fn_of[f] = (uint32_t)*v;
			continue;
		}
		if (!grow_array((void **)&p->fns, sizeof(*p->fns), &w->fns_cap,
				(uint64_t)p->nfns + 1) ||
		    !hmap_put(&w->fns, key, p->nfns))
			return OPSCOPE_ENOMEM;
		p->fns[p->nfns] = (struct samples_fn){ fr->name, fr->file, 0, 0, address };
		w->fn_of[f] = p->nfns++;
	}
	w->fn_mark = calloc((size_t)p->nfns + 1, sizeof(*w->fn_mark));
	return w->fn_mark ? 0 : OPSCOPE_ENOMEM;
}

/* The edge caller -> callee, made on first use; UINT64_MAX when out of memory. */
static uint64_t edge_of(struct work *w, struct samples_profile *p, uint32_t caller, uint32_t callee)
{
	uint64_t key = (uint64_t)caller << 32 | callee;
	uint64_t *v = hmap_find(&w->edges, key);
	if (v)
		return *v;
	if (!grow_array((void **)&p->edges, sizeof(*p->edges), &w->edges_cap, p->nedges + 1) ||
	    !grow_array((void **)&w->e_mark, sizeof(*w->e_mark), &w->marks_cap, p->nedges + 1) ||
	    !hmap_put(&w->edges, key, p->nedges))
		return UINT64_MAX;
	p->edges[p->nedges] = (struct samples_edge){ caller, callee, 0 };
	w->e_mark[p->nedges] = 0;
	return p->nedges++;
}

/* Add the weight of the samples ending at entry `st` to the functions and pairs of its
 * stack, each once. */
static int count_stack(const struct model *m, struct work *w, struct samples_profile *p,
		       uint32_t st)
{
	int64_t wt = w->weight[st];
	uint64_t mark = (uint64_t)st + 1;
	p->fns[w->fn_of[m->stacks[st].frame]].flat += wt;
	uint32_t callee = UINT32_MAX;
	for (uint32_t s = st; s != MODEL_NO_STACK; s = m->stacks[s].parent) {
		uint32_t fn = w->fn_of[m->stacks[s].frame];
		if (w->fn_mark[fn] != mark) {
			w->fn_mark[fn] = mark;
			p->fns[fn].cum += wt;
		}
		if (callee != UINT32_MAX) {
			uint64_t e = edge_of(w, p, fn, callee);
			if (e == UINT64_MAX)
				return OPSCOPE_ENOMEM;
			if (w->e_mark[e] != mark) {
				w->e_mark[e] = mark;
				p->edges[e].weight += wt;
			}
		}
		callee = fn;
	}
	return 0;
}

/* The flame graph (samples_profile.nodes) over the sorted functions (newi: old function index
 * -> new, UINT32_MAX for a function of no kept sample). Parents have smaller stack indices, so
 * one pass in index order makes each caller's node before its callees'; a second adds each
 * entry's weight to its node's self and to the total of its node and every node above. Then
 * the nodes of no weight are dropped, keeping the order (callers first). */
static int flame_run(const struct model *m, struct work *w, struct samples_profile *p,
		     const uint32_t *newi)
{
	w->node_of = malloc(((size_t)m->nstacks + 1) * sizeof(*w->node_of));
	if (!w->node_of)
		return OPSCOPE_ENOMEM;
	for (uint32_t st = 0; st < m->nstacks; st++) {
		uint32_t fn = newi[w->fn_of[m->stacks[st].frame]];
		uint32_t parent = m->stacks[st].parent == MODEL_NO_STACK
					  ? UINT32_MAX
					  : w->node_of[m->stacks[st].parent];
		if (fn == UINT32_MAX ||
		    (parent == UINT32_MAX && m->stacks[st].parent != MODEL_NO_STACK)) {
			w->node_of[st] = UINT32_MAX; /* no kept sample passes here */
			continue;
		}
		uint64_t key = ((uint64_t)parent + 1) << 32 | fn;
		uint64_t *v = hmap_find(&w->nodes, key);
		if (v) {
			w->node_of[st] = (uint32_t)*v;
			continue;
		}
		if (!grow_array((void **)&p->nodes, sizeof(*p->nodes), &w->nodes_cap,
				(uint64_t)p->nnodes + 1) ||
		    !hmap_put(&w->nodes, key, p->nnodes))
			return OPSCOPE_ENOMEM;
		p->nodes[p->nnodes] = (struct samples_node){ parent, fn, 0, 0 };
		w->node_of[st] = p->nnodes++;
	}
	for (uint32_t st = 0; st < m->nstacks; st++) {
		if (!w->weight[st] || w->node_of[st] == UINT32_MAX)
			continue;
		p->nodes[w->node_of[st]].self += w->weight[st];
		for (uint32_t nd = w->node_of[st]; nd != UINT32_MAX; nd = p->nodes[nd].parent)
			p->nodes[nd].total += w->weight[st];
	}
	/* compact: a node of no weight has only such nodes under it */
	uint32_t k = 0;
	for (uint32_t i = 0; i < p->nnodes; i++) {
		if (!p->nodes[i].total)
			continue;
		struct samples_node nd = p->nodes[i];
		if (nd.parent != UINT32_MAX)
			nd.parent = w->node_of[nd.parent];
		w->node_of[i] = k; /* reused: old node -> new */
		p->nodes[k++] = nd;
	}
	p->nnodes = k;
	return 0;
}

/* Sort p's functions (fn_cmp), then renumber its edges to the functions' new indices, dropping
 * those of no weight or of a function dropped, and sort them: the order of samples_profile and
 * samples_combine alike. keys: fn_key -> the index before (of `all` functions, p->nfns of them
 * kept); newi (all entries) gets old index -> new, UINT32_MAX for a function dropped. */
static void order_profile(const struct model *m, struct samples_profile *p, struct hmap *keys,
			  uint32_t *newi, uint32_t all)
{
	for (uint32_t i = 0; i < all; i++)
		newi[i] = UINT32_MAX;
	sort_model = m;
	if (p->nfns > 1) /* qsort(NULL, 0, ...) is undefined */
		qsort(p->fns, p->nfns, sizeof(*p->fns), fn_cmp);
	for (uint32_t i = 0; i < p->nfns; i++) {
		uint64_t *v =
			hmap_find(keys, fn_key(p->fns[i].name, p->fns[i].file, p->fns[i].address));
		newi[*v] = i;
	}
	uint64_t k = 0;
	for (uint64_t e = 0; e < p->nedges; e++) {
		const struct samples_edge ed = p->edges[e];
		if (!ed.weight || newi[ed.caller] == UINT32_MAX || newi[ed.callee] == UINT32_MAX)
			continue;
		p->edges[k] = ed;
		p->edges[k].caller = newi[ed.caller];
		p->edges[k].callee = newi[ed.callee];
		k++;
	}
	p->nedges = k;
	if (p->nedges > 1)
		qsort(p->edges, (size_t)p->nedges, sizeof(*p->edges), edge_cmp);
}

/* samples_profile's work; only the tracks of file `file` unless it is UINT32_MAX. */
static int profile_run(const struct model *m, const char *under, uint32_t file,
		       struct samples_profile *p, struct work *w)
{
	w->weight = calloc((size_t)m->nstacks + 1, sizeof(*w->weight));
	if (!w->weight)
		return OPSCOPE_ENOMEM;
	uint32_t under_id = under ? model_find_str(m, under) : 0;
	for (uint32_t ti = 0; ti < m->ntracks; ti++) {
		const struct model_track *t = &m->tracks[ti];
		if (file != UINT32_MAX && t->file != file)
			continue;
		p->all_samples += t->nsamples;
		if (!t->nsamples || (under && !under_id))
			continue;
		if (under) {
			if (!grow_array((void **)&w->keep, 1, &w->keep_cap, t->nsamples))
				return OPSCOPE_ENOMEM;
			memset(w->keep, 0, (size_t)t->nsamples);
			under_track(t, under_id, w->keep);
		}
		for (uint64_t i = 0; i < t->nsamples; i++) {
			if (under && !w->keep[i])
				continue;
			int64_t wt = t->samples.weight[i];
			uint32_t st = t->samples.stack[i];
			p->samples++;
			p->total += wt;
			p->truncated += (t->samples.flags[i] & MODEL_SAMPLEF_TRUNCATED) != 0;
			if (st < m->nstacks)
				w->weight[st] += wt;
			else
				p->no_stack++;
		}
	}
	int rc = map_functions(m, w, p);
	for (uint32_t st = 0; st < m->nstacks && !rc; st++)
		if (w->weight[st])
			rc = count_stack(m, w, p, st);
	if (rc)
		return rc;
	/* drop the functions of no kept sample, then sort; edges follow the new indices */
	uint32_t *newi = malloc(((size_t)p->nfns + 1) * sizeof(*newi));
	if (!newi)
		return OPSCOPE_ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->nfns; i++)
		if (p->fns[i].cum || p->fns[i].flat)
			p->fns[n++] = p->fns[i];
	uint32_t all = p->nfns;
	p->nfns = n;
	order_profile(m, p, &w->fns, newi, all);
	rc = flame_run(m, w, p, newi);
	free(newi);
	return rc;
}

/* The profile of the samples under `under` (NULL: all) of file `file` (UINT32_MAX: all). */
static int profile(const struct model *m, const char *under, uint32_t file,
		   struct samples_profile *p)
{
	memset(p, 0, sizeof(*p));
	struct work w;
	memset(&w, 0, sizeof(w));
	int rc = profile_run(m, under, file, p, &w);
	work_free(&w);
	if (rc)
		samples_profile_free(p);
	return rc;
}

int samples_profile(const struct model *m, const char *under, struct samples_profile *p)
{
	return profile(m, under, UINT32_MAX, p);
}

int samples_profile_file(const struct model *m, uint32_t file, struct samples_profile *p)
{
	return profile(m, NULL, file, p);
}

/* Part x's functions into out by key (fns: key -> index in out), map: x's index -> out's. 0, -1
 * (a sum leaves int64) or OPSCOPE_ENOMEM. */
static int combine_fns(const struct samples_profile *x, struct samples_profile *out,
		       struct hmap *fns, uint64_t *cap, uint32_t *map)
{
	for (uint32_t i = 0; i < x->nfns; i++) {
		const struct samples_fn *f = &x->fns[i];
		uint64_t key = fn_key(f->name, f->file, f->address);
		uint64_t *v = hmap_find(fns, key);
		if (v) {
			map[i] = (uint32_t)*v;
		} else {
			if (!grow_array((void **)&out->fns, sizeof(*out->fns), cap,
					(uint64_t)out->nfns + 1) ||
			    !hmap_put(fns, key, out->nfns))
				return OPSCOPE_ENOMEM;
			out->fns[out->nfns] = *f;
			out->fns[out->nfns].flat = out->fns[out->nfns].cum = 0;
			map[i] = out->nfns++;
		}
		struct samples_fn *o = &out->fns[map[i]];
		if (!checked_add_i64(&o->flat, o->flat, f->flat) ||
		    !checked_add_i64(&o->cum, o->cum, f->cum))
			return -1;
	}
	return 0;
}

/* Part x's edges into out (edges: caller << 32 | callee in out -> index), through map. */
static int combine_edges(const struct samples_profile *x, struct samples_profile *out,
			 struct hmap *edges, uint64_t *cap, const uint32_t *map)
{
	for (uint64_t e = 0; e < x->nedges; e++) {
		const struct samples_edge *ed = &x->edges[e];
		uint64_t key = (uint64_t)map[ed->caller] << 32 | map[ed->callee];
		uint64_t *v = hmap_find(edges, key);
		uint64_t at;
		if (v) {
			at = *v;
		} else {
			if (!grow_array((void **)&out->edges, sizeof(*out->edges), cap,
					out->nedges + 1) ||
			    !hmap_put(edges, key, out->nedges))
				return OPSCOPE_ENOMEM;
			at = out->nedges++;
			out->edges[at] =
				(struct samples_edge){ map[ed->caller], map[ed->callee], 0 };
		}
		if (!checked_add_i64(&out->edges[at].weight, out->edges[at].weight, ed->weight))
			return -1;
	}
	return 0;
}

/* samples_combine's work, its maps given (freed by the caller). */
static int combine_run(const struct model *m, const struct samples_profile *parts, uint32_t n,
		       struct samples_profile *out, struct hmap *fns, struct hmap *edges)
{
	uint64_t fns_cap = 0, edges_cap = 0, map_cap = 0;
	uint32_t *map = NULL; /* a part's function index -> out's */
	int rc = 0;
	for (uint32_t k = 0; k < n && !rc; k++) {
		const struct samples_profile *x = &parts[k];
		if (!checked_add_i64(&out->total, out->total, x->total))
			rc = -1;
		out->samples += x->samples;
		out->truncated += x->truncated;
		out->no_stack += x->no_stack;
		out->all_samples += x->all_samples;
		if (!rc &&
		    !grow_array((void **)&map, sizeof(*map), &map_cap, (uint64_t)x->nfns + 1))
			rc = OPSCOPE_ENOMEM;
		if (!rc)
			rc = combine_fns(x, out, fns, &fns_cap, map);
		if (!rc)
			rc = combine_edges(x, out, edges, &edges_cap, map);
	}
	free(map);
	if (rc)
		return rc;
	/* a function whose weights summed to 0 (negative weights) is dropped, as in a report */
	uint32_t *newi = malloc(((size_t)out->nfns + 1) * sizeof(*newi));
	if (!newi)
		return OPSCOPE_ENOMEM;
	uint32_t kept = 0, all = out->nfns;
	for (uint32_t i = 0; i < out->nfns; i++)
		if (out->fns[i].cum || out->fns[i].flat)
			out->fns[kept++] = out->fns[i];
	out->nfns = kept;
	order_profile(m, out, fns, newi, all);
	free(newi);
	return 0;
}

int samples_combine(const struct model *m, const struct samples_profile *parts, uint32_t n,
		    struct samples_profile *out)
{
	memset(out, 0, sizeof(*out));
	struct hmap fns = { 0 }, edges = { 0 };
	int rc = combine_run(m, parts, n, out, &fns, &edges);
	hmap_free(&fns);
	hmap_free(&edges);
	if (rc)
		samples_profile_free(out);
	return rc;
}

void samples_profile_free(struct samples_profile *p)
{
	free(p->fns);
	free(p->edges);
	free(p->nodes);
	memset(p, 0, sizeof(*p));
}

/* ---------------------------------------------------------------------------------------- */
/* The ranges that hold the most samples */

/* Weight of the samples of t with s <= time < e, from prefix sums (pre[i]: weight of samples
 * 0..i-1), by binary search over the sorted times. */
static int64_t weight_between(const struct model_track *t, const int64_t *pre, int64_t s, int64_t e)
{
	uint64_t lo = 0, hi = t->nsamples;
	while (lo < hi) { /* first sample at or after s */
		uint64_t mid = lo + (hi - lo) / 2;
		if (t->samples.ts_ns[mid] < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t a = lo;
	hi = t->nsamples;
	while (lo < hi) { /* first sample at or after e */
		uint64_t mid = lo + (hi - lo) / 2;
		if (t->samples.ts_ns[mid] < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return pre[lo] - pre[a];
}

static int range_cmp(const void *a, const void *b)
{
	const struct samples_range *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Per track with samples, ranges in start order: a range adds the weight of the part of it
 * that no earlier range of its name on the track covered (the union, as --under counts). */
int samples_top_ranges(const struct model *m, uint32_t k, struct samples_range *out)
{
	struct hmap covered = { 0 }, slot = { 0 }; /* name -> covered until (per track); name ->
						    * index in all */
	struct samples_range *all = NULL;
	uint64_t nall = 0, cap = 0, pcap = 0;
	int64_t *pre = NULL;
	int rc = 0;
	for (uint32_t ti = 0; ti < m->ntracks && !rc; ti++) {
		const struct model_track *t = &m->tracks[ti];
		if (!t->nsamples || !t->nranges)
			continue;
		if (!grow_array((void **)&pre, sizeof(*pre), &pcap, t->nsamples + 1)) {
			rc = -1;
			break;
		}
		pre[0] = 0;
		for (uint64_t i = 0; i < t->nsamples; i++)
			pre[i + 1] = pre[i] + t->samples.weight[i];
		hmap_free(&covered);
		memset(&covered, 0, sizeof(covered));
		for (uint64_t r = 0; r < t->nranges; r++) {
			uint32_t name = t->ranges.name[r];
			int64_t s = t->ranges.start_ns[r], e = s + t->ranges.dur_ns[r];
			uint64_t *until = hmap_find(&covered, name);
			if (until && (int64_t)*until >= e)
				continue;
			if (until && (int64_t)*until > s)
				s = (int64_t)*until;
			if (!hmap_put(&covered, name, (uint64_t)e)) {
				rc = -1;
				break;
			}
			int64_t w = weight_between(t, pre, s, e);
			if (!w)
				continue;
			uint64_t *at = hmap_find(&slot, name);
			if (at) {
				all[*at].weight += w;
				continue;
			}
			if (!grow_array((void **)&all, sizeof(*all), &cap, nall + 1) ||
			    !hmap_put(&slot, name, nall)) {
				rc = -1;
				break;
			}
			all[nall++] = (struct samples_range){ name, w };
		}
	}
	int n = 0;
	if (!rc) {
		if (nall > 1)
			qsort(all, (size_t)nall, sizeof(*all), range_cmp);
		for (; (uint64_t)n < nall && (uint32_t)n < k; n++)
			out[n] = all[n];
	}
	free(all);
	free(pre);
	hmap_free(&covered);
	hmap_free(&slot);
	return rc ? -1 : n;
}
