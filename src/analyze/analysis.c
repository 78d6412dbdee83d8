/*
 * analysis.c: the shared start of every analysis (analysis.h): the tree, and the total and
 * step times, in one pass over the host ranges after the tree is built.
 */
#include "analyze/analysis.h"

#include <ctype.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/intervals.h"

int analysis_run(struct analysis *a, const struct model *m)
{
	memset(a, 0, sizeof(*a));
	a->m = m;
	if (tree_build(&a->tree, m) != 0)
		return OPSCOPE_ENOMEM;
	struct ivec steps = { 0 };
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_THREAD)
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int64_t s = tr->ranges.start_ns[i], e = s + tr->ranges.dur_ns[i];
			lo = s < lo ? s : lo;
			hi = e > hi ? e : hi;
			if (tr->ranges.category[i] != OPSCOPE_CAT_PROFILE_STEP)
				continue;
			ivec_push(&steps, s, e);
			a->step_kernel_ns += a->tree.tracks[t].gpu_ns[i];
			a->step_device_ns += a->tree.tracks[t].ggpu_ns[i];
		}
	}
	ivec_merge(&steps);
	a->has_steps = steps.n > 0;
	if (!a->has_steps && hi > lo)
		ivec_push(&steps, lo, hi);
	a->total = steps;
	a->total_ns = ivec_sum(&steps);
	if (steps.oom) {
		analysis_free(a);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void analysis_free(struct analysis *a)
{
	tree_free(&a->tree);
	ivec_free(&a->total);
	memset(a, 0, sizeof(*a));
}

bool analysis_name_has(const char *name, const char *needle)
{
	size_t n = strlen(needle);
	for (; *name; name++) {
		size_t k = 0;
		while (k < n && name[k] && tolower((unsigned char)name[k]) == needle[k])
			k++;
		if (k == n)
			return true;
	}
	return false;
}
