/*
 * overview.c: per-type unions of the host ranges and of the GPU work (overview.h), in one
 * pass over every range; ranges are added in each track's start order, so the lists stay
 * about as small as their unions until the merge.
 */
#include "analyze/overview.h"

#include <string.h>

#include "analyze/distributed.h"
#include "analyze/intervals.h"
#include "analyze/phases.h"

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
				ivec_add(&busy, s, e);
				continue;
			}
			ivec_add(&host[cat], s, e);
			out->host[cat].ranges++;
			if (phases_is_phase(cat) && phases_outermost(&a->tree, tt, i)) {
				out->host[cat].calls++;
				out->host[cat].time_ns += r->dur_ns[i];
			}
		}
	}
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
	}
	bool oom = false;
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++) {
		ivec_merge(&host[k]);
		ivec_merge(&gpu[k]);
		oom = oom || host[k].oom || gpu[k].oom;
		if (!phases_is_phase((uint8_t)k)) {
			out->host[k].calls = out->host[k].ranges;
			out->host[k].time_ns = ivec_sum(&host[k]);
		}
		out->gpu[k].calls = out->gpu[k].ranges;
		out->gpu[k].time_ns = ivec_sum(&gpu[k]);
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
