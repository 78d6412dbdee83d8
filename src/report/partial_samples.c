/*
 * partial_samples.c: the samples view's share of a partial (partial.h; the format:
 * docs/merge.md): per file its stack samples' profile (samples_profile_file) as an `sa`
 * record (its counts), an `saf` record per function with weight (name, source file, address,
 * flat, cum, in the profile's order) and an `sae` record per caller -> callee pair (the
 * indices of two earlier saf records of the file, and the weight); the merge sums them with
 * samples_combine, which orders them as the report's samples_profile does.
 *
 * Invariants of the reader: weights lie within +-2^62 and may be negative (a pprof profile
 * may hold negative values: `pprof -diff_base` writes them, and the report prints them), the
 * pair's functions are earlier records of the file; the counts and weights summed over the
 * files stay inside int64 (checked by samples_combine).
 * Size: one record per function and per caller -> callee pair with samples, not per sample.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/samples.h"
#include "report/partial_internal.h"

int partial_write_samples(FILE *out, const struct analysis *a, uint32_t f)
{
	const struct model *m = a->m;
	struct samples_profile p;
	if (samples_profile_file(m, f, &p) != 0)
		return OPSCOPE_ENOMEM;
	fprintf(out, "sa\t%" PRIu64 "\t%" PRId64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
		p.samples, p.total, p.truncated, p.no_stack, p.all_samples);
	for (uint32_t i = 0; i < p.nfns; i++) {
		const struct samples_fn *fn = &p.fns[i];
		fputs("saf", out);
		partial_put_id(out, m, fn->name);
		partial_put_id(out, m, fn->file);
		fprintf(out, "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\n", fn->address, fn->flat,
			fn->cum);
	}
	for (uint64_t e = 0; e < p.nedges; e++)
		fprintf(out, "sae\t%" PRIu32 "\t%" PRIu32 "\t%" PRId64 "\n", p.edges[e].caller,
			p.edges[e].callee, p.edges[e].weight);
	samples_profile_free(&p);
	return 0;
}

int partial_rec_sa(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (partial_want_fields(r, 6))
		return -1;
	if (pf->has_samples)
		return partial_fail(r, "a second sa record for the file");
	struct samples_profile *p = &pf->samples;
	int64_t n, v;
	if (partial_field_i64(r, 1, 0, PARTIAL_TIME_MAX, &n) ||
	    partial_field_i64(r, 2, -PARTIAL_TIME_MAX, PARTIAL_TIME_MAX, &p->total))
		return -1;
	p->samples = (uint64_t)n;
	if (partial_field_i64(r, 3, 0, n, &v))
		return -1;
	p->truncated = (uint64_t)v;
	if (partial_field_i64(r, 4, 0, n, &v))
		return -1;
	p->no_stack = (uint64_t)v;
	if (partial_field_i64(r, 5, n, PARTIAL_TIME_MAX, &v))
		return -1;
	p->all_samples = (uint64_t)v;
	pf->has_samples = true;
	return 0;
}

int partial_rec_saf(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (!pf->has_samples)
		return partial_fail(r, "saf record before the file's sa record");
	struct samples_profile *p = &pf->samples;
	if (partial_want_fields(r, 6) ||
	    partial_grow(r, (void **)&p->fns, &r->saf_cap, p->nfns, sizeof(*p->fns)))
		return -1;
	struct samples_fn *fn = &p->fns[p->nfns];
	memset(fn, 0, sizeof(*fn));
	if (partial_field_id(r, 1, false, &fn->name) || partial_field_id(r, 2, false, &fn->file) ||
	    partial_field_u64(r, 3, &fn->address) ||
	    partial_field_i64(r, 5, -PARTIAL_TIME_MAX, PARTIAL_TIME_MAX, &fn->cum) ||
	    partial_field_i64(r, 4, -PARTIAL_TIME_MAX, PARTIAL_TIME_MAX, &fn->flat))
		return -1;
	p->nfns++;
	return 0;
}

int partial_rec_sae(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (!pf->has_samples)
		return partial_fail(r, "sae record before the file's sa record");
	struct samples_profile *p = &pf->samples;
	uint32_t n = (uint32_t)p->nedges; /* partial_grow keeps it below 2^31 */
	if (partial_want_fields(r, 4) ||
	    partial_grow(r, (void **)&p->edges, &r->sae_cap, n, sizeof(*p->edges)))
		return -1;
	int64_t caller, callee, w;
	if (partial_field_i64(r, 1, 0, (int64_t)p->nfns - 1, &caller) ||
	    partial_field_i64(r, 2, 0, (int64_t)p->nfns - 1, &callee) ||
	    partial_field_i64(r, 3, -PARTIAL_TIME_MAX, PARTIAL_TIME_MAX, &w))
		return -1;
	p->edges[n] = (struct samples_edge){ (uint32_t)caller, (uint32_t)callee, w };
	p->nedges++;
	return 0;
}

int partial_merge_samples(struct partial_set *ps, char *err, size_t errsize)
{
	for (uint32_t i = 0; i < ps->nfiles; i++)
		if (!ps->files[i].has_samples)
			return 0; /* a partial before version 11: the view is left out */
	struct samples_profile *parts = malloc((ps->nfiles ? ps->nfiles : 1) * sizeof(*parts));
	struct samples_profile *out = calloc(1, sizeof(*out));
	int rc = parts && out ? 0 : OPSCOPE_ENOMEM;
	int64_t n = 0; /* samples so far: the view shows them as an int64 */
	for (uint32_t i = 0; i < ps->nfiles && !rc; i++) {
		parts[i] = ps->files[i].samples;
		if (!checked_add_i64(&n, n, (int64_t)parts[i].samples))
			rc = -1;
	}
	if (!rc)
		rc = samples_combine(ps->m, parts, ps->nfiles, out);
	free(parts);
	if (rc) {
		free(out);
		if (rc == OPSCOPE_ENOMEM) {
			snprintf(err, errsize, "out of memory");
			return rc;
		}
		snprintf(err, errsize,
			 "%s: the stack samples' counts or weights, summed over the files, exceed "
			 "2^63",
			 ps->sources[ps->files[ps->nfiles - 1].source]);
		return -1;
	}
	ps->pre.samples = out;
	return 0;
}
