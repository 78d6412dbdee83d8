/*
 * model_check.h: invariants every loaded model keeps, whatever the input, for the fuzz
 * targets (and their corpus replays): a violation aborts, which libFuzzer reports.
 */
#ifndef OPSCOPE_FUZZ_MODEL_CHECK_H
#define OPSCOPE_FUZZ_MODEL_CHECK_H

#include <stdlib.h>

#include "model/model.h"

static inline void fuzz_model_check(const struct model *m)
{
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		const struct model_ranges *r = &tr->ranges;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (r->dur_ns[i] < 0 || r->name[i] >= m->nstrings)
				abort();
			if (r->nargs[i] && r->first_arg[i] + r->nargs[i] > m->nargs)
				abort();
			if (i && r->start_ns[i] < r->start_ns[i - 1])
				abort();
		}
		const struct model_instants *in = &tr->instants;
		for (uint64_t i = 0; i < tr->ninstants; i++)
			if (in->name[i] >= m->nstrings ||
			    (in->nargs[i] && in->first_arg[i] + in->nargs[i] > m->nargs))
				abort();
	}
	for (uint64_t i = 0; i < m->nargs; i++) {
		if (m->args.key[i] >= m->nstrings)
			abort();
		if ((m->args.type[i] == MODEL_ARG_STR || m->args.type[i] == MODEL_ARG_JSON) &&
		    m->args.bits[i] >= m->nstrings)
			abort();
	}
	for (uint64_t f = 0; f < m->nflows; f++) {
		const struct model_flow *fl = &m->flows[f];
		if (fl->from_track != MODEL_NO_TRACK &&
		    (fl->from_track >= m->ntracks ||
		     (fl->from_range != MODEL_NONE &&
		      fl->from_range >= m->tracks[fl->from_track].nranges)))
			abort();
		if (fl->to_track != MODEL_NO_TRACK &&
		    (fl->to_track >= m->ntracks ||
		     (fl->to_range != MODEL_NONE &&
		      fl->to_range >= m->tracks[fl->to_track].nranges)))
			abort();
	}
}

#endif
