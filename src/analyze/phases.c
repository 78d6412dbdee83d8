/*
 * phases.c: calls and times of the model phases (phases.h). The phase calls are collected
 * once (phases_calls); their CPU time is the share of the total time livl_partition gives each
 * of them (intervals.h), so that calls of one phase that overlap (on two threads) count once,
 * phases that overlap count once (the first phase wins), and what lies outside the steps is
 * not counted at all.
 */
#include "analyze/phases.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t phase_category[PHASE_COUNT] = {
	[PHASE_PROFILE_STEP] = OPSCOPE_CAT_PROFILE_STEP,
	[PHASE_DATALOADER] = OPSCOPE_CAT_DATALOADER,
	[PHASE_FORWARD] = OPSCOPE_CAT_FORWARD,
	[PHASE_BACKWARD] = OPSCOPE_CAT_BACKWARD,
	[PHASE_OPTIMIZATION] = OPSCOPE_CAT_OPTIMIZATION,
};

uint8_t phases_category(enum phase k)
{
	return phase_category[k];
}

bool phases_outermost(const struct tree *tree, uint32_t t, uint64_t i)
{
	const struct model_ranges *r = &tree->m->tracks[t].ranges;
	for (uint64_t p = tree->tracks[t].parent[i]; p != MODEL_NONE; p = tree->tracks[t].parent[p])
		if (phases_is_phase(r->category[p]))
			return false;
	return true;
}

static int phase_of(uint8_t cat)
{
	for (int k = PHASE_DATALOADER; k < PHASE_COUNT; k++)
		if (phase_category[k] == cat)
			return k;
	return -1;
}

static int call_cmp(const void *x, const void *y)
{
	const struct phase_call *a = x, *b = y;
	if (a->phase != b->phase)
		return a->phase < b->phase ? -1 : 1;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->s > b->s) - (a->s < b->s);
}

int phases_calls(const struct analysis *a, struct phase_call **out, size_t *n)
{
	const struct model *m = a->m;
	struct phase_call *v = NULL;
	size_t nv = 0, cap = 0;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD)
			continue;
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int k = phase_of(r->category[i]);
			if (k < 0 || !phases_outermost(&a->tree, tt, i))
				continue;
			if (nv == cap) {
				size_t c = cap ? cap * 2 : 64;
				struct phase_call *nw = realloc(v, c * sizeof(*nw));
				if (!nw) {
					free(v);
					return OPSCOPE_ENOMEM;
				}
				v = nw;
				cap = c;
			}
			v[nv++] = (struct phase_call){ (uint8_t)k, tt, i, r->start_ns[i],
						       r->start_ns[i] + r->dur_ns[i] };
		}
	}
	if (nv)
		qsort(v, nv, sizeof(*v), call_cmp);
	*out = v;
	*n = nv;
	return 0;
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
	/* ProfileStep: every range; its CPU total is the total time */
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		if (tr->kind != MODEL_TRACK_THREAD)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++)
			if (tr->ranges.category[i] == OPSCOPE_CAT_PROFILE_STEP)
				phase_add(&out->phase[PHASE_PROFILE_STEP], tr->ranges.dur_ns[i],
					  a->tree.tracks[tt].gpu_ns[i]);
	}
	if (out->phase[PHASE_PROFILE_STEP].calls)
		out->phase[PHASE_PROFILE_STEP].cpu_ns = a->total_ns;
	/* the phases: each call's share of the total time */
	struct phase_call *calls;
	size_t ncalls;
	if (phases_calls(a, &calls, &ncalls) != 0)
		return OPSCOPE_ENOMEM;
	struct livl *pieces = NULL;
	size_t npieces = 0, cap = 0;
	int64_t *share = calloc(ncalls ? ncalls : 1, sizeof(*share));
	bool oom = !share;
	for (size_t c = 0; c < ncalls && !oom; c++)
		oom = !livl_push_clipped(&pieces, &npieces, &cap, calls[c].s, calls[c].e,
					 (uint32_t)c, &a->total);
	if (!oom)
		oom = livl_partition(pieces, npieces, (uint32_t)(ncalls ? ncalls : 1), share) != 0;
	int64_t phase_cpu = 0, phase_gpu = 0;
	for (size_t c = 0; c < ncalls && !oom; c++) {
		if (!ivec_touches(&a->total, calls[c].s, calls[c].e))
			continue;
		phase_add(&out->phase[calls[c].phase], share[c],
			  a->tree.tracks[calls[c].track].gpu_ns[calls[c].range]);
		phase_cpu += share[c];
		phase_gpu += a->tree.tracks[calls[c].track].gpu_ns[calls[c].range];
	}
	free(pieces);
	free(share);
	free(calls);
	if (oom)
		return OPSCOPE_ENOMEM;
	for (int k = PHASE_DATALOADER; k < PHASE_COUNT; k++)
		out->nphases += out->phase[k].calls > 0;
	out->others_cpu_ns = a->total_ns - phase_cpu;
	out->others_gpu_ns = out->phase[PHASE_PROFILE_STEP].gpu_ns - phase_gpu;
	return 0;
}
