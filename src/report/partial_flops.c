/*
 * partial_flops.c: the flops view's share of a partial (partial.h; the format: docs/merge.md):
 * per file its share of the FLOPs analysis (flops_file) as an `fl` record (shapes in the model
 * or not, device work or not, the outermost calls' time in both bases, the calls of no work,
 * the outputs taken from backward calls, the first device not in the table), an `flc` record per category with calls
 * (calls, time in both bases, FLOPs, bytes), an `flp` record per device peaks its rows were
 * measured against (every number a C99 hex float, so it comes back to the same bits), an `flr`
 * record per row (operator, shapes, dtypes, direction, its first call's attributes, its sums,
 * the index of its flp record) and an `flg` record per operator with no model. The merge
 * adds them with flops_combine, the very function that makes a report's result from each
 * file's share, so that the roofline sums (doubles) are added over the same rows in the same
 * order.
 *
 * Invariants: both time bases travel because the report's basis is the device time as soon
 * as any file has device work, which one file alone cannot know. Peaks equal in every field
 * are one device (the Roofline Ceilings table lists each once). Reasons and names are string
 * ids of the set's model until the merge, which points the rows at their texts after the
 * last string is interned (partial_finish interns nothing after it). Size: one record per
 * (operator, shapes, dtypes, direction) and per unmodelled operator and reason, not per call.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/flops.h"
#include "report/partial_internal.h"

/* A file's share as read, before the merge points its strings and peaks. */
struct partial_flops {
	struct flops_part part;	      /* rows, gaps, counts (strings unset until the merge) */
	uint32_t *tc_reason;	      /* per row: string id of its tc_reason, 0 none */
	uint32_t *row_peaks;	      /* per row: index in peaks, UINT32_MAX none */
	uint32_t *gap_reason;	      /* per gap: string id of its reason */
	struct hardware_peaks *peaks; /* flp records (name, source unset until the merge) */
	uint32_t (*peak_str)[2];      /* per peaks: string ids of name and source, 0 none */
	uint32_t npeaks;	      /* entries of peaks (at most PARTIAL_FLOPS_PEAKS) */
	/* entries allocated in peaks, peak_str, part.r.rows, tc_reason, row_peaks, part.r.gaps,
	 * gap_reason */
	uint32_t cap[7];
};

/* Peaks of one file: a file has a few devices; the merge compares each with the others. */
#define PARTIAL_FLOPS_PEAKS 64

/* The merged result and the peaks its rows point at (ps->pre.flops is &r). */
struct partial_flops_merged {
	struct flops_result r;	      /* first: what the view reads */
	struct hardware_peaks *peaks; /* distinct peaks of every file */
};

/* ---------------------------------------------------------------------------------------- */
/* Writing */

static void put_double(FILE *out, double v)
{
	fprintf(out, "\t%a", v);
}

int partial_write_flops(FILE *out, const struct analysis *a, uint32_t f)
{
	const struct model *m = a->m;
	struct flops_part p;
	if (flops_file(a, f, &p) != 0) {
		flops_part_free(&p);
		return OPSCOPE_ENOMEM;
	}
	const struct flops_result *r = &p.r;
	fprintf(out, "fl\t%d\t%d\t%" PRId64 "\t%" PRId64 "\t%" PRIu64 "\t%" PRIu64,
		p.has_shapes ? 1 : 0, r->device_time ? 1 : 0, p.total_ns[0], p.total_ns[1],
		r->no_work_calls, r->out_from_bwd);
	partial_put_id(out, m, r->unknown_device);
	fputc('\n', out);
	for (int c = 0; c < PERFMODEL_CATEGORIES; c++)
		if (r->cat[c].calls)
			fprintf(out,
				"flc\t%d\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRIu64
				"\t%" PRIu64 "\n",
				c, r->cat[c].calls, p.cat_ns[c][0], p.cat_ns[c][1], r->cat[c].flops,
				r->cat[c].bytes);
	/* the distinct peaks, in the order of the rows that first name them */
	const struct hardware_peaks **seen = malloc((r->nrows ? r->nrows : 1) * sizeof(*seen));
	if (!seen) {
		flops_part_free(&p);
		return OPSCOPE_ENOMEM;
	}
	uint32_t nseen = 0;
	for (uint32_t i = 0; i < r->nrows; i++) {
		const struct hardware_peaks *pk = r->rows[i].peaks;
		uint32_t k = 0;
		while (k < nseen && seen[k] != pk)
			k++;
		if (!pk || k < nseen)
			continue;
		seen[nseen++] = pk;
		fputs("flp\t", out);
		if (pk->name)
			partial_put_str(out, pk->name, strlen(pk->name));
		else
			fputc('-', out);
		fputc('\t', out);
		if (pk->source)
			partial_put_str(out, pk->source, strlen(pk->source));
		else
			fputc('-', out);
		fprintf(out, "\t%d", pk->tc_arch);
		put_double(out, pk->fp64_flops);
		put_double(out, pk->fp32_flops);
		put_double(out, pk->tf32_flops);
		put_double(out, pk->fp16_flops);
		put_double(out, pk->bf16_flops);
		put_double(out, pk->fp8_flops);
		put_double(out, pk->int8_ops);
		put_double(out, pk->mem_bw_bytes);
		fputc('\n', out);
	}
	for (uint32_t i = 0; i < r->nrows; i++) {
		const struct flops_row *row = &r->rows[i];
		fputs("flr", out);
		partial_put_id(out, m, row->name);
		partial_put_id(out, m, row->shapes);
		partial_put_id(out, m, row->dtypes);
		partial_put_id(out, m, row->fwd_op);
		fprintf(out, "\t%d\t%d\t%d\t",
			(row->backward ? 1 : 0) | (row->tc_eligible ? 2 : 0) |
				(row->tc_tf32_only ? 4 : 0),
			row->category, row->dtype);
		if (row->tc_reason)
			partial_put_str(out, row->tc_reason, strlen(row->tc_reason));
		else
			fputc('-', out);
		int64_t pk = -1;
		for (uint32_t k = 0; row->peaks && k < nseen; k++)
			if (seen[k] == row->peaks)
				pk = k;
		fprintf(out,
			"\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
			"\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRId64,
			row->calls, row->cpu_ns, row->gpu_ns, row->kernel_ns, row->tc_ns,
			row->kernels, row->flops, row->bytes, pk);
		partial_put_id(out, m, row->device_name);
		fputc('\n', out);
	}
	free(seen);
	for (uint32_t i = 0; i < r->ngaps; i++) {
		const struct flops_gap *g = &r->gaps[i];
		fputs("flg", out);
		partial_put_id(out, m, g->name);
		fputc('\t', out);
		partial_put_str(out, g->reason, strlen(g->reason));
		fprintf(out, "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\n", g->calls, g->cpu_ns,
			g->gpu_ns);
	}
	flops_part_free(&p);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading */

void partial_flops_free(struct partial_flops *pf)
{
	if (!pf)
		return;
	flops_part_free(&pf->part);
	free(pf->tc_reason);
	free(pf->row_peaks);
	free(pf->gap_reason);
	free(pf->peaks);
	free(pf->peak_str);
	free(pf);
}

/* The file's share, NULL (after the one line) when no fl record came first. */
static struct partial_flops *share(struct reader *r)
{
	if (!r->cur->flops)
		partial_fail(r, "%s record before the file's fl record", r->f[0]);
	return r->cur->flops;
}

int partial_rec_fl(struct reader *r)
{
	if (partial_want_fields(r, 8))
		return -1;
	if (r->cur->flops)
		return partial_fail(r, "a second fl record for the file");
	struct partial_flops *pf = calloc(1, sizeof(*pf));
	if (!pf)
		return partial_oom(r);
	r->cur->flops = pf;
	struct flops_part *p = &pf->part;
	int64_t shapes, dev, v;
	if (partial_field_i64(r, 1, 0, 1, &shapes) || partial_field_i64(r, 2, 0, 1, &dev) ||
	    partial_field_i64(r, 3, 0, PARTIAL_TIME_MAX, &p->total_ns[0]) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &p->total_ns[1]) ||
	    partial_field_i64(r, 5, 0, PARTIAL_TIME_MAX, &v))
		return -1;
	p->r.no_work_calls = (uint64_t)v;
	p->has_shapes = shapes == 1;
	if (partial_field_i64(r, 6, 0, PARTIAL_TIME_MAX, &v) ||
	    partial_field_id(r, 7, false, &p->r.unknown_device))
		return -1;
	p->r.out_from_bwd = (uint64_t)v;
	p->r.device_time = dev == 1;
	return 0;
}

int partial_rec_flc(struct reader *r)
{
	struct partial_flops *pf = share(r);
	if (!pf || partial_want_fields(r, 7))
		return -1;
	int64_t c, calls;
	if (partial_field_i64(r, 1, 0, PERFMODEL_CATEGORIES - 1, &c))
		return -1;
	struct flops_category *x = &pf->part.r.cat[c];
	if (x->calls)
		return partial_fail(r, "a second flc record for category %lld", (long long)c);
	if (partial_field_i64(r, 2, 1, PARTIAL_TIME_MAX, &calls) ||
	    partial_field_i64(r, 3, 0, PARTIAL_TIME_MAX, &pf->part.cat_ns[c][0]) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &pf->part.cat_ns[c][1]) ||
	    partial_field_u64(r, 5, &x->flops) || partial_field_u64(r, 6, &x->bytes))
		return -1;
	x->calls = (uint64_t)calls;
	return 0;
}

/* Field i as a peak: a finite number in [0, 1e30] (C99 hex float or decimal). */
static int field_peak(struct reader *r, int i, double *v)
{
	const char *p = r->f[i];
	char *end;
	errno = 0;
	*v = strtod(p, &end);
	/* !(v >= 0) catches NaN too */
	if (!*p || *end || errno == ERANGE || !(*v >= 0) || *v > 1e30)
		return partial_fail(r, "field %d: not a number in [0, 1e30]", i + 1);
	return 0;
}

int partial_rec_flp(struct reader *r)
{
	struct partial_flops *pf = share(r);
	if (!pf || partial_want_fields(r, 12))
		return -1;
	if (pf->npeaks == PARTIAL_FLOPS_PEAKS)
		return partial_fail(r, "more than %d flp records for the file",
				    PARTIAL_FLOPS_PEAKS);
	if (partial_grow(r, (void **)&pf->peaks, &pf->cap[0], pf->npeaks, sizeof(*pf->peaks)) ||
	    partial_grow(r, (void **)&pf->peak_str, &pf->cap[1], pf->npeaks, sizeof(*pf->peak_str)))
		return -1;
	struct hardware_peaks *pk = &pf->peaks[pf->npeaks];
	uint32_t *ids = pf->peak_str[pf->npeaks];
	memset(pk, 0, sizeof(*pk));
	int64_t arch;
	if (partial_field_id(r, 1, false, &ids[0]) || partial_field_id(r, 2, false, &ids[1]) ||
	    partial_field_i64(r, 3, 0, 1000, &arch) || field_peak(r, 4, &pk->fp64_flops) ||
	    field_peak(r, 5, &pk->fp32_flops) || field_peak(r, 6, &pk->tf32_flops) ||
	    field_peak(r, 7, &pk->fp16_flops) || field_peak(r, 8, &pk->bf16_flops) ||
	    field_peak(r, 9, &pk->fp8_flops) || field_peak(r, 10, &pk->int8_ops) ||
	    field_peak(r, 11, &pk->mem_bw_bytes))
		return -1;
	pk->tc_arch = (int)arch;
	pf->npeaks++;
	return 0;
}

int partial_rec_flr(struct reader *r)
{
	struct partial_flops *pf = share(r);
	if (!pf || partial_want_fields(r, 19))
		return -1;
	struct flops_result *res = &pf->part.r;
	uint32_t n = res->nrows;
	if (partial_grow(r, (void **)&res->rows, &pf->cap[2], n, sizeof(*res->rows)) ||
	    partial_grow(r, (void **)&pf->tc_reason, &pf->cap[3], n, sizeof(*pf->tc_reason)) ||
	    partial_grow(r, (void **)&pf->row_peaks, &pf->cap[4], n, sizeof(*pf->row_peaks)))
		return -1;
	struct flops_row *row = &res->rows[n];
	memset(row, 0, sizeof(*row));
	int64_t flags, cat, dt, calls, pk;
	if (partial_field_id(r, 1, true, &row->name) ||
	    partial_field_id(r, 2, false, &row->shapes) ||
	    partial_field_id(r, 3, false, &row->dtypes) ||
	    partial_field_id(r, 4, false, &row->fwd_op) || partial_field_i64(r, 5, 0, 7, &flags) ||
	    partial_field_i64(r, 6, 1, PERFMODEL_CATEGORIES - 1, &cat) ||
	    partial_field_i64(r, 7, 0, PERFMODEL_DT_INT, &dt) ||
	    partial_field_id(r, 8, false, &pf->tc_reason[n]) ||
	    partial_field_i64(r, 9, 1, PARTIAL_TIME_MAX, &calls) ||
	    partial_field_i64(r, 10, 0, PARTIAL_TIME_MAX, &row->cpu_ns) ||
	    partial_field_i64(r, 11, 0, PARTIAL_TIME_MAX, &row->gpu_ns) ||
	    partial_field_i64(r, 12, 0, PARTIAL_TIME_MAX, &row->kernel_ns) ||
	    partial_field_i64(r, 13, 0, row->kernel_ns, &row->tc_ns) ||
	    partial_field_u64(r, 14, &row->kernels) || partial_field_u64(r, 15, &row->flops) ||
	    partial_field_u64(r, 16, &row->bytes) ||
	    partial_field_i64(r, 17, -1, (int64_t)pf->npeaks - 1, &pk) ||
	    partial_field_id(r, 18, false, &row->device_name))
		return -1;
	row->backward = flags & 1;
	row->tc_eligible = (flags & 2) != 0;
	row->tc_tf32_only = (flags & 4) != 0;
	row->category = (uint8_t)cat;
	row->dtype = (uint8_t)dt;
	row->calls = (uint64_t)calls;
	pf->row_peaks[n] = pk < 0 ? UINT32_MAX : (uint32_t)pk;
	res->nrows++;
	return 0;
}

int partial_rec_flg(struct reader *r)
{
	struct partial_flops *pf = share(r);
	if (!pf || partial_want_fields(r, 6))
		return -1;
	struct flops_result *res = &pf->part.r;
	uint32_t n = res->ngaps;
	if (partial_grow(r, (void **)&res->gaps, &pf->cap[5], n, sizeof(*res->gaps)) ||
	    partial_grow(r, (void **)&pf->gap_reason, &pf->cap[6], n, sizeof(*pf->gap_reason)))
		return -1;
	struct flops_gap *g = &res->gaps[n];
	memset(g, 0, sizeof(*g));
	int64_t calls;
	if (partial_field_id(r, 1, true, &g->name) ||
	    partial_field_id(r, 2, true, &pf->gap_reason[n]) ||
	    partial_field_i64(r, 3, 1, PARTIAL_TIME_MAX, &calls) ||
	    partial_field_i64(r, 4, 0, PARTIAL_TIME_MAX, &g->cpu_ns) ||
	    partial_field_i64(r, 5, 0, PARTIAL_TIME_MAX, &g->gpu_ns))
		return -1;
	g->calls = (uint64_t)calls;
	res->ngaps++;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Merging */

/* Are two peaks the same device (every field)? */
static bool peaks_eq(const struct hardware_peaks *a, const uint32_t *ida, const uint32_t *idb,
		     const struct hardware_peaks *b)
{
	return ida[0] == idb[0] && ida[1] == idb[1] && a->tc_arch == b->tc_arch &&
	       a->fp64_flops == b->fp64_flops && a->fp32_flops == b->fp32_flops &&
	       a->tf32_flops == b->tf32_flops && a->fp16_flops == b->fp16_flops &&
	       a->bf16_flops == b->bf16_flops && a->fp8_flops == b->fp8_flops &&
	       a->int8_ops == b->int8_ops && a->mem_bw_bytes == b->mem_bw_bytes;
}

void partial_merged_flops_free(struct flops_result *r)
{
	if (!r)
		return;
	struct partial_flops_merged *mg = (struct partial_flops_merged *)r;
	flops_free(&mg->r);
	free(mg->peaks);
	free(mg);
}

/* Point each file's rows at the distinct peaks (mg->peaks, nuniq of them) and their strings,
 * and its reasons at their texts. */
static int point_files(struct partial_set *ps, struct partial_flops_merged *mg,
		       struct flops_part *parts)
{
	uint64_t total = 0;
	uint32_t nuniq = 0;
	for (uint32_t i = 0; i < ps->nfiles; i++)
		total += ps->files[i].flops->npeaks; /* at most 64 each */
	if (total >= UINT32_MAX)
		return OPSCOPE_ENOMEM;
	uint32_t(*uid)[2] = malloc((size_t)(total ? total : 1) * sizeof(*uid));
	mg->peaks = calloc((size_t)(total ? total : 1), sizeof(*mg->peaks));
	if (!uid || !mg->peaks) {
		free(uid);
		return OPSCOPE_ENOMEM;
	}
	const struct model *m = ps->m;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		struct partial_flops *pf = ps->files[i].flops;
		uint32_t mp[PARTIAL_FLOPS_PEAKS];
		for (uint32_t k = 0; k < pf->npeaks; k++) {
			uint32_t u = 0;
			while (u < nuniq &&
			       !peaks_eq(&mg->peaks[u], uid[u], pf->peak_str[k], &pf->peaks[k]))
				u++;
			if (u == nuniq) {
				mg->peaks[u] = pf->peaks[k];
				uid[u][0] = pf->peak_str[k][0];
				uid[u][1] = pf->peak_str[k][1];
				mg->peaks[u].name = uid[u][0] ? model_str(m, uid[u][0]) : NULL;
				mg->peaks[u].source = uid[u][1] ? model_str(m, uid[u][1]) : NULL;
				nuniq++;
			}
			mp[k] = u;
		}
		struct flops_result *res = &pf->part.r;
		for (uint32_t k = 0; k < res->nrows; k++) {
			res->rows[k].peaks = pf->row_peaks[k] == UINT32_MAX
						     ? NULL
						     : &mg->peaks[mp[pf->row_peaks[k]]];
			res->rows[k].tc_reason =
				pf->tc_reason[k] ? model_str(m, pf->tc_reason[k]) : NULL;
		}
		for (uint32_t k = 0; k < res->ngaps; k++)
			res->gaps[k].reason = model_str(m, pf->gap_reason[k]);
		parts[i] = pf->part;
	}
	free(uid);
	return 0;
}

const struct flops_part *partial_flops_part(const struct partial_flops *pf)
{
	return &pf->part;
}

int partial_merge_flops(struct partial_set *ps, char *err, size_t errsize)
{
	for (uint32_t i = 0; i < ps->nfiles; i++)
		if (!ps->files[i].flops)
			return 0; /* a partial before version 11: the view is left out */
	struct partial_flops_merged *mg = calloc(1, sizeof(*mg));
	struct flops_part *parts = calloc(ps->nfiles ? ps->nfiles : 1, sizeof(*parts));
	int rc = mg && parts ? point_files(ps, mg, parts) : OPSCOPE_ENOMEM;
	if (rc == 0)
		rc = flops_combine(NULL, parts, ps->nfiles, &mg->r);
	free(parts); /* shallow copies: the files keep their arrays */
	if (rc == 0 && !mg->r.oom) {
		ps->pre.flops = &mg->r;
		return 0;
	}
	if (mg)
		partial_merged_flops_free(&mg->r);
	if (rc == -1) {
		snprintf(err, errsize,
			 "%s: the FLOPs rows' calls or times, summed over the files, exceed 2^63",
			 ps->sources[ps->files[ps->nfiles - 1].source]);
		return -1;
	}
	snprintf(err, errsize, "out of memory");
	return OPSCOPE_ENOMEM;
}
