/*
 * partial_nvtx.c: the NVTX view in partials (partial_internal.h; the format: docs/merge.md).
 *
 * The view prints per range name a median and a standard deviation, which no sum gives, so a
 * partial carries each name's durations themselves, as runs of equal durations in ascending
 * order (agg_nvtx_file's runs): its size grows with the NVTX ranges of distinct durations,
 * which are few beside a trace's other events. The merge adds the runs with agg_nvtx_add,
 * file after file, and agg_nvtx_finish takes the medians and deviations as the report does:
 * the items come in the same first-seen order, and equal runs of several files are made one
 * before the deviation sums over them, so every byte matches. The merge's memory and time
 * follow the runs, whatever counts they hold.
 *
 *   nxv                                 the file's NVTX ranges follow (version 11 on)
 *   nxr <domain|-> <name> <style>       one per domain, name and style (1 push/pop,
 *                                       2 start/end), in the file's first-seen order
 *   nxd <duration ns> <ranges>          one per distinct duration of the nxr above, ascending
 *
 * Bounds: a file's NVTX ranges number at most PARTIAL_NVTX_MAX and their durations sum to at
 * most PARTIAL_TIME_MAX, so the merge's arithmetic stays inside int64 and its memory inside
 * what the report of the same file would take.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "report/partial_internal.h"

#define PARTIAL_NVTX_MAX (UINT64_C(1) << 32) /* NVTX ranges of one file */

int partial_write_nvtx(FILE *out, const struct analysis *a, uint32_t f)
{
	const struct model *m = a->m;
	struct agg_nvtx nv;
	if (agg_nvtx_file(m, f, &nv) != 0)
		return OPSCOPE_ENOMEM;
	fputs("nxv\n", out);
	/* nv.dur: one run per item and duration, by item (first-seen order), then duration */
	for (uint64_t d = 0; d < nv.ndur; d++) {
		const struct agg_nvtx_dur *x = &nv.dur[d];
		if (d == 0 || x->item != nv.dur[d - 1].item) {
			const struct agg_item *it = &nv.a.v[x->item];
			fputs("nxr", out);
			partial_put_id(out, m, nv.a.v[it->parent].name);
			partial_put_id(out, m, it->name);
			fprintf(out, "\t%u\n", (unsigned)it->kind);
		}
		fprintf(out, "nxd\t%" PRId64 "\t%" PRIu64 "\n", x->dur, x->count);
	}
	agg_nvtx_free(&nv);
	return 0;
}

int partial_rec_nxv(struct reader *r)
{
	return partial_marker(r, &r->cur->has_nvtx);
}

int partial_rec_nxr(struct reader *r)
{
	if (!r->cur->has_nvtx)
		return partial_fail(r, "nxr record before the file's nxv record");
	int64_t style;
	if (partial_want_fields(r, 4) || partial_field_id(r, 1, false, &r->nx_domain) ||
	    partial_field_id(r, 2, false, &r->nx_name) ||
	    partial_field_i64(r, 3, AGG_NVTX_PUSHPOP, AGG_NVTX_STARTEND, &style))
		return -1;
	r->nx_style = (uint8_t)style;
	r->nx_item = true;
	r->nx_last = -1;
	return 0;
}

int partial_rec_nxd(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (!r->nx_item)
		return partial_fail(r, "nxd record before an nxr record");
	int64_t dur, n;
	if (partial_want_fields(r, 3) || partial_field_i64(r, 1, 0, PARTIAL_TIME_MAX, &dur) ||
	    partial_field_i64(r, 2, 1, (int64_t)PARTIAL_NVTX_MAX, &n))
		return -1;
	if (dur <= r->nx_last)
		return partial_fail(r, "field 2: durations of a range name must ascend");
	int64_t ns;
	if (pf->nvtx_ranges + (uint64_t)n > PARTIAL_NVTX_MAX)
		return partial_fail(r, "more than 2^32 NVTX ranges in the file");
	if (__builtin_mul_overflow(dur, n, &ns) || !checked_add_i64(&ns, ns, pf->nvtx_ns) ||
	    ns > PARTIAL_TIME_MAX)
		return partial_fail(r, "the file's NVTX ranges last more than 2^62 ns");
	if (partial_grow(r, (void **)&pf->nvtx, &r->nxd_cap, pf->nnvtx, sizeof(*pf->nvtx)))
		return -1;
	pf->nvtx[pf->nnvtx++] = (struct partial_nvtx_run){ r->nx_domain, r->nx_name, dur,
							   (uint64_t)n, r->nx_style };
	pf->nvtx_ranges += (uint64_t)n;
	pf->nvtx_ns = ns;
	r->nx_last = dur;
	return 0;
}

int partial_merge_nvtx(struct partial_set *ps, uint32_t *bad)
{
	for (uint32_t i = 0; i < ps->nfiles; i++)
		if (!ps->files[i].has_nvtx)
			return 0;
	struct agg_nvtx *nv = &ps->pre.nvtx;
	/* every file, a second copy of a rank too: the report's NVTX table counts it */
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct partial_file *pf = &ps->files[i];
		int64_t sum;
		if (!checked_add_i64(&sum, nv->total_ns, pf->nvtx_ns)) {
			*bad = i;
			return -1;
		}
		for (uint32_t k = 0; k < pf->nnvtx; k++) {
			const struct partial_nvtx_run *x = &pf->nvtx[k];
			if (agg_nvtx_add(nv, x->domain, x->name, x->style, x->dur, x->count) != 0)
				return OPSCOPE_ENOMEM;
		}
	}
	if (agg_nvtx_finish(nv) != 0)
		return OPSCOPE_ENOMEM;
	ps->pre.has_nvtx = true;
	return 0;
}
