/*
 * modelbuild.h: building event models by hand in unit tests (the analysis, report, step and
 * export tests): S() interns a name, R() adds the range [s, e) to a track, with a
 * "correlation" argument and correlation id when corr >= 0 (the launch link of runtime calls
 * and GPU work; 0 is no link); nest() sets the depths of every host and device track, as an
 * importer does, before analysing.
 */
#ifndef OPSCOPE_TESTS_MODELBUILD_H
#define OPSCOPE_TESTS_MODELBUILD_H

#include <string.h>

#include "model/model.h"

static inline uint32_t S(struct model *m, const char *s)
{
	return model_intern(m, s, strlen(s));
}

static inline uint64_t R(struct model *m, uint32_t t, int64_t s, int64_t e, const char *name,
			 uint8_t cat, int64_t corr)
{
	uint64_t i = model_add_range(m, t, s, e - s, S(m, name), cat, 0);
	if (corr >= 0) {
		uint64_t a = model_add_arg(m, S(m, "correlation"), MODEL_ARG_I64, (uint64_t)corr);
		m->tracks[t].ranges.first_arg[i] = a;
		m->tracks[t].ranges.nargs[i] = 1;
		model_set_correlation(m, t, i, (uint64_t)corr);
	}
	return i;
}

static inline void nest(struct model *m)
{
	for (uint32_t t = 0; t < m->ntracks; t++)
		if (m->tracks[t].kind != MODEL_TRACK_ASYNC)
			model_nest_track(m, t);
}

#define NCCL "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"

/* One rank's file (test_ranks.c, test_merge.c): ProfileStep#1 [0,1000), a compute kernel
 * [100, 100+compute) launched at [10,20), an all-reduce kernel [arrive, 800) launched at
 * [30,40); every time + skew (the rank's clock is off by skew). */
static inline void add_rank(struct model *m, const char *path, int32_t rank, int64_t skew,
			    int64_t compute, int64_t arrive)
{
	model_add_file(m, path, "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, (uint32_t)(100 + rank), 1, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	uint32_t c = model_add_track(m, MODEL_TRACK_DEVICE, 0, 20, 0);
	m->processes[m->tracks[h].process].rank = rank;
	R(m, h, skew + 0, skew + 1000, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, skew + 10, skew + 20, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, skew + 30, skew + 40, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, d, skew + 100, skew + 100 + compute, "gemm", OPSCOPE_CAT_KERNEL, 1);
	R(m, c, skew + arrive, skew + 800, NCCL, OPSCOPE_CAT_COMMUNICATION, 2);
}

#endif
