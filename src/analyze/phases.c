/*
 * phases.c: calls and times of the model phases (phases.h), in one pass over the host ranges.
 */
#include "analyze/phases.h"

#include <string.h>

static const uint8_t phase_category[PHASE_COUNT] = {
	[PHASE_PROFILE_STEP] = OPSCOPE_CAT_PROFILE_STEP,
	[PHASE_DATALOADER] = OPSCOPE_CAT_DATALOADER,
	[PHASE_FORWARD] = OPSCOPE_CAT_FORWARD,
	[PHASE_BACKWARD] = OPSCOPE_CAT_BACKWARD,
	[PHASE_OPTIMIZATION] = OPSCOPE_CAT_OPTIMIZATION,
};

bool phases_outermost(const struct tree *tree, uint32_t t, uint64_t i)
{
	const struct model_ranges *r = &tree->m->tracks[t].ranges;
	for (uint64_t p = tree->tracks[t].parent[i]; p != MODEL_NONE; p = tree->tracks[t].parent[p])
		if (phases_is_phase(r->category[p]))
			return false;
	return true;
}

static void phase_add(struct phase_time *p, int64_t cpu, int64_t gpu)
{
	p->calls++;
	p->cpu_ns += cpu;
	p->cpu_max_ns = cpu > p->cpu_max_ns ? cpu : p->cpu_max_ns;
	p->cpu_min_ns = cpu < p->cpu_min_ns ? cpu : p->cpu_min_ns;
	p->gpu_ns += gpu;
	p->gpu_max_ns = gpu > p->gpu_max_ns ? gpu : p->gpu_max_ns;
	p->gpu_min_ns = gpu < p->gpu_min_ns ? gpu : p->gpu_min_ns;
}

int phases_analyze(const struct analysis *a, struct phases *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	for (int k = 0; k < PHASE_COUNT; k++) {
		out->phase[k].category = phase_category[k];
		out->phase[k].cpu_min_ns = INT64_MAX;
		out->phase[k].gpu_min_ns = INT64_MAX;
	}
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t cat = tr->ranges.category[i];
			int k = 0;
			while (k < PHASE_COUNT && phase_category[k] != cat)
				k++;
			if (k == PHASE_COUNT ||
			    (k != PHASE_PROFILE_STEP && !phases_outermost(&a->tree, tt, i)))
				continue;
			phase_add(&out->phase[k], tr->ranges.dur_ns[i],
				  a->tree.tracks[tt].gpu_ns[i]);
		}
	}
	int64_t phase_cpu = 0, phase_gpu = 0;
	for (int k = PHASE_DATALOADER; k < PHASE_COUNT; k++) {
		out->nphases += out->phase[k].calls > 0;
		phase_cpu += out->phase[k].cpu_ns;
		phase_gpu += out->phase[k].gpu_ns;
	}
	out->others_cpu_ns = a->total_ns - phase_cpu;
	out->others_gpu_ns = out->phase[PHASE_PROFILE_STEP].gpu_ns - phase_gpu;
	return 0;
}
