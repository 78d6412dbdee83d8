/*
 * distributed.c: communication and computation ranges, and their overlap (distributed.h).
 * The host ranges are walked once; a runtime call asks whether a communication range encloses
 * it, with the answer per Operator name cached, since the names are few and the calls many.
 * The lists of several files (distributed_file_lists) join into those of all of them: the
 * union of the communication ranges, and of the computation, then their intersection
 * (distributed_from_lists), which is how opscope merge makes the view from partials.
 */
#include "analyze/distributed.h"

#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

static bool is_comm_host(const struct model *m, uint8_t cat, uint32_t name)
{
	if (cat == OPSCOPE_CAT_COMMUNICATION)
		return true;
	if (cat != OPSCOPE_CAT_OPERATOR)
		return false;
	const char *s = model_str(m, name);
	return analysis_name_has(s, "allreduce") || analysis_name_has(s, "broadcast") ||
	       analysis_name_has(s, "rpc");
}

/* is_comm_host through a cache of the answer per Operator name (0: not asked yet, 1: no,
 * 2: yes). Without a cache (out of memory) every range asks. */
static bool comm_host_cached(const struct model *m, uint8_t *by_name, uint8_t cat, uint32_t name)
{
	if (cat != OPSCOPE_CAT_OPERATOR || !by_name || name >= m->nstrings)
		return is_comm_host(m, cat, name);
	if (!by_name[name])
		by_name[name] = is_comm_host(m, cat, name) ? 2 : 1;
	return by_name[name] == 2;
}

/* distributed_ranges of the tracks of file `file` (DISTRIBUTED_ALL_FILES: every track). */
static void ranges_of(const struct analysis *a, uint32_t file, struct ivec *host_comm,
		      struct ivec *gpu_comm, struct ivec *compute)
{
	const struct model *m = a->m;
	uint8_t *by_name = calloc(m->nstrings ? m->nstrings : 1, 1);
	/* host side: communication ranges, and the kernels launched under them */
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD ||
		    (file != DISTRIBUTED_ALL_FILES && tr->file != file))
			continue;
		const struct tree_track *tk = &a->tree.tracks[tt];
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (comm_host_cached(m, by_name, tr->ranges.category[i],
					     tr->ranges.name[i]))
				ivec_push(host_comm, tr->ranges.start_ns[i],
					  tr->ranges.start_ns[i] + tr->ranges.dur_ns[i]);
			if (!tree_is_runtime(tr->ranges.category[i]))
				continue;
			bool under_comm = false;
			for (uint64_t p = tk->parent[i]; p != MODEL_NONE && !under_comm;
			     p = tk->parent[p])
				under_comm = comm_host_cached(m, by_name, tr->ranges.category[p],
							      tr->ranges.name[p]);
			for (uint32_t l = tk->launches[i]; l != TREE_NONE;
			     l = a->tree.launches[l].next) {
				const struct tree_launch *L = &a->tree.launches[l];
				const struct model_ranges *d = &m->tracks[L->track].ranges;
				uint8_t cat = d->category[L->range];
				if (!tree_is_kernel(cat))
					continue;
				int64_t s = d->start_ns[L->range], e = s + d->dur_ns[L->range];
				if (under_comm || cat == OPSCOPE_CAT_COMMUNICATION)
					ivec_push(gpu_comm, s, e);
				else if (compute)
					ivec_push(compute, s, e);
			}
		}
	}
	/* kernels nobody launched in the window: by their category */
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_DEVICE ||
		    (file != DISTRIBUTED_ALL_FILES && tr->file != file))
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t cat = tr->ranges.category[i];
			if (a->tree.tracks[tt].launched[i] || !tree_is_kernel(cat))
				continue;
			int64_t s = tr->ranges.start_ns[i], e = s + tr->ranges.dur_ns[i];
			if (cat == OPSCOPE_CAT_COMMUNICATION)
				ivec_push(gpu_comm, s, e);
			else if (compute)
				ivec_push(compute, s, e);
		}
	}
	free(by_name);
}

void distributed_ranges(const struct analysis *a, struct ivec *host_comm, struct ivec *gpu_comm,
			struct ivec *compute)
{
	ranges_of(a, DISTRIBUTED_ALL_FILES, host_comm, gpu_comm, compute);
}

int distributed_analyze(const struct analysis *a, struct distributed *out)
{
	return distributed_analyze_file(a, DISTRIBUTED_ALL_FILES, out);
}

/* Sort list v and keep one of each (start, end) pair. */
static void distinct(struct ivec *v)
{
	ivec_count_distinct(v); /* sorts */
	size_t o = 0;
	for (size_t i = 0; i < v->n; i++)
		if (o == 0 || v->v[i].s != v->v[o - 1].s || v->v[i].e != v->v[o - 1].e)
			v->v[o++] = v->v[i];
	v->n = o;
}

int distributed_file_lists(const struct analysis *a, uint32_t file, struct distributed_lists *out)
{
	memset(out, 0, sizeof(*out));
	ranges_of(a, file, &out->host_comm, &out->gpu_comm, &out->comp);
	distinct(&out->host_comm);
	distinct(&out->gpu_comm);
	ivec_merge(&out->comp);
	if (out->host_comm.oom || out->gpu_comm.oom || out->comp.oom) {
		distributed_lists_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

int distributed_from_lists(const struct distributed_lists *l, struct distributed *out)
{
	memset(out, 0, sizeof(*out));
	struct ivec comm = { 0 }, overlap = { 0 };
	for (size_t i = 0; i < l->host_comm.n; i++)
		ivec_push(&comm, l->host_comm.v[i].s, l->host_comm.v[i].e);
	for (size_t i = 0; i < l->gpu_comm.n; i++)
		ivec_push(&comm, l->gpu_comm.v[i].s, l->gpu_comm.v[i].e);
	ivec_merge(&comm);
	ivec_intersect(&comm, &l->comp, &overlap);
	bool oom = comm.oom || overlap.oom;
	if (!oom) {
		out->has_communication = comm.n > 0;
		out->communication_ns = ivec_sum(&comm);
		out->computation_ns = ivec_sum(&l->comp);
		out->overlap_ns = ivec_sum(&overlap);
	}
	ivec_free(&comm);
	ivec_free(&overlap);
	return oom ? OPSCOPE_ENOMEM : 0;
}

void distributed_lists_free(struct distributed_lists *l)
{
	ivec_free(&l->host_comm);
	ivec_free(&l->gpu_comm);
	ivec_free(&l->comp);
}

int distributed_analyze_file(const struct analysis *a, uint32_t file, struct distributed *out)
{
	struct distributed_lists l;
	memset(out, 0, sizeof(*out));
	if (distributed_file_lists(a, file, &l) != 0)
		return OPSCOPE_ENOMEM;
	int rc = distributed_from_lists(&l, out);
	distributed_lists_free(&l);
	return rc;
}
