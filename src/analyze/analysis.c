/*
 * analysis.c: the shared start of every analysis (analysis.h): the tree, and the total and
 * step times, in one pass over the host ranges after the tree is built.
 */
#include "analyze/analysis.h"

#include <ctype.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/intervals.h"

void analysis_file_total(const struct analysis *a, uint32_t file, struct analysis_total *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	out->lo = INT64_MAX;
	out->hi = INT64_MIN;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_THREAD || (file != UINT32_MAX && tr->file != file))
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			int64_t s = tr->ranges.start_ns[i], e = s + tr->ranges.dur_ns[i];
			out->lo = s < out->lo ? s : out->lo;
			out->hi = e > out->hi ? e : out->hi;
			if (tr->ranges.category[i] != OPSCOPE_CAT_PROFILE_STEP)
				continue;
			ivec_push(&out->steps, s, e);
			out->step_kernel_ns += a->tree.tracks[t].gpu_ns[i];
			out->step_device_ns += a->tree.tracks[t].ggpu_ns[i];
		}
	}
	ivec_merge(&out->steps);
}

int analysis_run(struct analysis *a, const struct model *m)
{
	memset(a, 0, sizeof(*a));
	a->m = m;
	if (tree_build(&a->tree, m) != 0)
		return OPSCOPE_ENOMEM;
	struct analysis_total at;
	analysis_file_total(a, UINT32_MAX, &at);
	struct ivec steps = at.steps;
	int64_t lo = at.lo, hi = at.hi;
	a->step_kernel_ns = at.step_kernel_ns;
	a->step_device_ns = at.step_device_ns;
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
