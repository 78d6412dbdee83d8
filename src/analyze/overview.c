/*
 * overview.c: per-type unions of the host ranges and of the GPU work (overview.h), in one
 * pass over every range; ranges are added in each track's start order, so the lists stay
 * about as small as their unions until the merge. Every time is then clipped to the total
 * time (analysis.h), and only ranges inside it are calls, so that no ratio exceeds 100 %.
 */
#include "analyze/overview.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/distributed.h"
#include "analyze/intervals.h"
#include "analyze/phases.h"

/* Length of merged list v inside merged list total. */
static int64_t clipped_sum(const struct ivec *v, const struct ivec *total)
{
	int64_t sum = 0;
	for (size_t i = 0; i < total->n; i++)
		sum += ivec_sum_within(v, total->v[i].s, total->v[i].e);
	return sum;
}

int overview_analyze(const struct analysis *a, struct overview *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	struct ivec host[OPSCOPE_CAT_COUNT_], gpu[OPSCOPE_CAT_COUNT_], busy = { 0 };
	memset(host, 0, sizeof(host));
	memset(gpu, 0, sizeof(gpu));
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		const struct model_ranges *r = &tr->ranges;
		if (tr->kind == MODEL_TRACK_ASYNC)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t cat = r->category[i] < OPSCOPE_CAT_COUNT_
					      ? r->category[i]
					      : OPSCOPE_CAT_USER_DEFINED;
			int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
			if (tr->kind == MODEL_TRACK_DEVICE) {
				if (!tree_is_device_work(cat))
					continue;
				/* an NCCL kernel is a kernel, and communication too */
				uint8_t k = tree_is_kernel(cat) ? OPSCOPE_CAT_KERNEL : cat;
				ivec_add(&gpu[k], s, e);
				out->gpu[k].ranges++;
				out->gpu[k].calls += ivec_touches(&a->total, s, e);
				ivec_add(&busy, s, e);
				continue;
			}
			if (phases_is_phase(cat)) { /* their calls, below */
				out->host[cat].ranges++;
				continue;
			}
			ivec_add(&host[cat], s, e);
			out->host[cat].ranges++;
			out->host[cat].calls += ivec_touches(&a->total, s, e);
		}
	}
	/* the phases: their calls (phases.h), a nested phase range is no call */
	struct phase_call *calls;
	size_t ncalls;
	if (phases_calls(a, &calls, &ncalls) != 0)
		return OPSCOPE_ENOMEM;
	for (size_t c = 0; c < ncalls; c++) {
		uint8_t cat = phases_category((enum phase)calls[c].phase);
		ivec_add(&host[cat], calls[c].s, calls[c].e);
		out->host[cat].calls += ivec_touches(&a->total, calls[c].s, calls[c].e);
	}
	free(calls);
	/* Communication: the distributed analysis's ranges, merged; calls = distinct ranges */
	struct ivec comm[2] = { { 0 }, { 0 } };
	distributed_ranges(a, &comm[0], &comm[1], NULL);
	for (int k = 0; k < 2; k++) {
		uint8_t cat = OPSCOPE_CAT_COMMUNICATION;
		struct ivec *v = k ? &gpu[cat] : &host[cat];
		struct overview_type *o = k ? &out->gpu[cat] : &out->host[cat];
		ivec_free(v);
		*v = comm[k];
		o->ranges = ivec_count_distinct(v);
		o->calls = 0;
		for (size_t i = 0; i < v->n; i++)
			o->calls += (i == 0 || v->v[i].s != v->v[i - 1].s ||
				     v->v[i].e != v->v[i - 1].e) &&
				    ivec_touches(&a->total, v->v[i].s, v->v[i].e);
	}
	bool oom = false;
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++) {
		ivec_merge(&host[k]);
		ivec_merge(&gpu[k]);
		oom = oom || host[k].oom || gpu[k].oom;
		out->host[k].time_ns = clipped_sum(&host[k], &a->total);
		out->gpu[k].time_ns = clipped_sum(&gpu[k], &a->total);
	}
	ivec_merge(&busy);
	out->gpu_busy_ns = ivec_sum(&busy);
	oom = oom || busy.oom;
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++) {
		ivec_free(&host[k]);
		ivec_free(&gpu[k]);
	}
	ivec_free(&busy);
	return oom ? OPSCOPE_ENOMEM : 0;
}
