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

#endif
