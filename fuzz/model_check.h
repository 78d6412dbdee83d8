/*
 * model_check.h: invariants every loaded model keeps, whatever the input, for the fuzz
 * targets (and their corpus replays): a violation aborts, which libFuzzer reports. The
 * tables for what comes next too: every track's process, device ids only on device tracks,
 * the correlation column against the "correlation" argument, stacks' parents before them,
 * samples' stacks (or none) and flags. Also the
 * comparison of two models that fuzz_trace and test_model use to hold the loader's fast
 * loops to the general path.
 */
#ifndef OPSCOPE_FUZZ_MODEL_CHECK_H
#define OPSCOPE_FUZZ_MODEL_CHECK_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

/* The correlation id range i must have: its first "correlation" argument if an integer
 * (key: that string's id, 0 if the model has none). */
static inline uint64_t fuzz_corr_of_args(const struct model *m, uint32_t key, uint32_t t,
					 uint64_t i)
{
	uint64_t a = key ? model_range_arg(m, t, i, key) : MODEL_NONE;
	if (a == MODEL_NONE ||
	    (m->args.type[a] != MODEL_ARG_I64 && m->args.type[a] != MODEL_ARG_U64))
		return 0;
	return m->args.bits[a];
}

static inline void fuzz_model_check(const struct model *m)
{
	for (uint32_t f = 0; f < m->nfiles; f++) {
		const struct model_file *mf = &m->files[f];
		if ((uint64_t)mf->first_sample_type + mf->nsample_types > m->nsample_types ||
		    (mf->nsample_types && mf->weight_type >= mf->nsample_types))
			abort();
	}
	for (uint32_t i = 0; i < m->nframes; i++)
		if (m->frames[i].name >= m->nstrings || m->frames[i].file >= m->nstrings ||
		    m->frames[i].module >= m->nstrings)
			abort();
	for (uint32_t i = 0; i < m->nmappings; i++)
		if (m->mappings[i].file >= m->nfiles || m->mappings[i].path >= m->nstrings)
			abort();
	uint32_t corr_key = model_find_str(m, "correlation");
	for (uint32_t p = 0; p < m->nprocesses; p++) {
		const struct model_process *pr = &m->processes[p];
		if ((m->nfiles && pr->file >= m->nfiles) || pr->host >= m->nstrings ||
		    pr->name >= m->nstrings || pr->rank < -1)
			abort();
	}
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		const struct model_ranges *r = &tr->ranges;
		/* host tracks have a process of their own file and pid; device tracks one of
		 * their file, or none */
		if (tr->process == MODEL_NO_PROCESS) {
			if (tr->kind != MODEL_TRACK_DEVICE)
				abort();
		} else if (tr->process >= m->nprocesses ||
			   m->processes[tr->process].file != tr->file ||
			   (tr->kind != MODEL_TRACK_DEVICE &&
			    m->processes[tr->process].pid != tr->pid)) {
			abort();
		}
		if (tr->kind != MODEL_TRACK_DEVICE && (tr->device || tr->stream))
			abort();
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (r->dur_ns[i] < 0 || r->name[i] >= m->nstrings)
				abort();
			if (r->nargs[i] && r->first_arg[i] + r->nargs[i] > m->nargs)
				abort();
			if (i && r->start_ns[i] < r->start_ns[i - 1])
				abort();
			/* the column and the argument agree where both exist (an importer may drop
			 * the argument: model.keep_arg_keys) */
			uint64_t c = model_range_correlation(tr, i), a = 0;
			if (r->nargs[i])
				a = fuzz_corr_of_args(m, corr_key, t, i);
			if (a && c != a)
				abort();
			if (c && r->nargs[i] && !a && corr_key &&
			    model_range_arg(m, t, i, corr_key) != MODEL_NONE)
				abort(); /* an argument that is no integer gives no id */
		}
		/* a sample's stack is an entry or none (no frames); its values lie within the
		 * model's, its file's column count of them, the weight among them */
		uint32_t nval = tr->file < m->nfiles ? m->files[tr->file].nsample_types : 0;
		for (uint64_t i = 0; i < tr->nsamples; i++) {
			if ((tr->samples.stack[i] != MODEL_NO_STACK &&
			     tr->samples.stack[i] >= m->nstacks) ||
			    (tr->samples.flags[i] & ~MODEL_SAMPLEF_TRUNCATED) ||
			    (i && tr->samples.ts_ns[i] < tr->samples.ts_ns[i - 1]))
				abort();
			if (tr->samples.first_value &&
			    (!nval || tr->samples.first_value[i] + nval > m->nsample_values ||
			     m->sample_values[tr->samples.first_value[i] +
					      m->files[tr->file].weight_type] !=
				     tr->samples.weight[i]))
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
	for (uint32_t f = 0; f < m->nframes; f++) {
		const struct model_frame *fr = &m->frames[f];
		if (fr->name >= m->nstrings || fr->file >= m->nstrings || fr->module >= m->nstrings)
			abort();
	}
	for (uint32_t s = 0; s < m->nstacks; s++)
		if ((m->stacks[s].parent != MODEL_NO_STACK && m->stacks[s].parent >= s) ||
		    m->stacks[s].frame >= m->nframes)
			abort();
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

#define FUZZ_SAME(a, b, n) ((n) == 0 || memcmp((a), (b), (n) * sizeof(*(a))) == 0)

/* The same model, column by column, with the same counts of the first file's anomalies. */
static inline bool fuzz_models_equal(const struct model *a, const struct model *b)
{
	if (a->ntracks != b->ntracks || a->nargs != b->nargs || a->nflows != b->nflows ||
	    a->nprocesses != b->nprocesses ||
	    (a->nprocesses &&
	     memcmp(a->processes, b->processes, a->nprocesses * sizeof(*a->processes)) != 0) ||
	    a->nstrings != b->nstrings || a->events_total != b->events_total ||
	    a->nfiles != b->nfiles || a->ndrop_marks != b->ndrop_marks ||
	    a->dropped_total != b->dropped_total || a->min_ns != b->min_ns ||
	    a->max_ns != b->max_ns)
		return false;
	if (a->nfiles == 0)
		return true;
	const struct model_file *fa = &a->files[0], *fb = &b->files[0];
	if (memcmp(fa->by_kind, fb->by_kind, sizeof(fa->by_kind)) != 0 ||
	    fa->unmatched_ends != fb->unmatched_ends ||
	    fa->mismatched_ends != fb->mismatched_ends ||
	    fa->unmatched_async != fb->unmatched_async || fa->orphan_args != fb->orphan_args ||
	    fa->bad_strings != fb->bad_strings)
		return false;
	for (uint32_t i = 0; i < a->ntracks; i++) {
		const struct model_track *x = &a->tracks[i], *y = &b->tracks[i];
		uint64_t n = x->nranges;
		if (n != y->nranges || x->ninstants != y->ninstants ||
		    x->ncounters != y->ncounters || x->nsamples != y->nsamples ||
		    x->events != y->events || x->min_ns != y->min_ns || x->max_ns != y->max_ns ||
		    x->process != y->process)
			return false;
		for (uint64_t k = 0; k < n; k++)
			if (model_range_correlation(x, k) != model_range_correlation(y, k))
				return false;
		const struct model_ranges *p = &x->ranges, *q = &y->ranges;
		if (!FUZZ_SAME(p->start_ns, q->start_ns, n) ||
		    !FUZZ_SAME(p->dur_ns, q->dur_ns, n) || !FUZZ_SAME(p->name, q->name, n) ||
		    !FUZZ_SAME(p->category, q->category, n) || !FUZZ_SAME(p->flags, q->flags, n) ||
		    !FUZZ_SAME(p->depth, q->depth, n) ||
		    !FUZZ_SAME(p->first_arg, q->first_arg, n) || !FUZZ_SAME(p->nargs, q->nargs, n))
			return false;
		n = x->ninstants;
		if (!FUZZ_SAME(x->instants.ts_ns, y->instants.ts_ns, n) ||
		    !FUZZ_SAME(x->instants.name, y->instants.name, n) ||
		    !FUZZ_SAME(x->instants.category, y->instants.category, n) ||
		    !FUZZ_SAME(x->instants.first_arg, y->instants.first_arg, n) ||
		    !FUZZ_SAME(x->instants.nargs, y->instants.nargs, n))
			return false;
		n = x->ncounters;
		if (!FUZZ_SAME(x->counters.ts_ns, y->counters.ts_ns, n) ||
		    !FUZZ_SAME(x->counters.name, y->counters.name, n) ||
		    !FUZZ_SAME(x->counters.value, y->counters.value, n))
			return false;
		n = x->nsamples;
		if (!FUZZ_SAME(x->samples.ts_ns, y->samples.ts_ns, n) ||
		    !FUZZ_SAME(x->samples.stack, y->samples.stack, n) ||
		    !FUZZ_SAME(x->samples.weight, y->samples.weight, n) ||
		    !FUZZ_SAME(x->samples.flags, y->samples.flags, n))
			return false;
	}
	return FUZZ_SAME(a->args.key, b->args.key, a->nargs) &&
	       FUZZ_SAME(a->args.type, b->args.type, a->nargs) &&
	       FUZZ_SAME(a->args.bits, b->args.bits, a->nargs) &&
	       (a->nflows == 0 || FUZZ_SAME(a->flows, b->flows, a->nflows));
}

#endif
