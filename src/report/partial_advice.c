/*
 * partial_advice.c: the advice view's share of a partial (partial.h; the format: docs/merge.md,
 * version 11 on): per file, its advisor measurement (advice_measure, analyze/advice.h) as ad*
 * records, read back into a partial_file and handed to the view in report_pre, which makes
 * the findings with advice_combine as a report does.
 *
 *   ad  <own steps 0|1> <device work 0|1> <device tracks 0|1> <step rows> <steps' time>
 *       <first row's start> <last row's end>
 *   adw <0 data wait|1 exposed communication> <summed> <worst> <steps over> <step> <start> <end>
 *                                               (both, when the file has step rows)
 *   adf <others> <first> <median> <step> <start> <end>       (when the first step is measured)
 *   adg <device> <steps> <idle> <span> <busy> <worst's busy> <step> <start> <end>
 *                                               (one per device with idle steps)
 *   ads <calls> <blocked> <steps> <longest> <start> <end>    (synchronizations, when any)
 *   adp <copies> <time> <bytes> <longest> <start> <end>      (pageable copies, when any)
 *   ade <name> <count> <time>       (at most 3, after an adg, ads or adp: its evidence names)
 *   adk <kernels> <tiny> <tiny time> <launch time>           (kernels in steps, when any)
 *
 * The tensor-core rule's rows are not written: they are the file's FLOPs rows, which the
 * flops records (partial_flops.c) carry; the merge makes them from those (advice_tc_rows).
 *
 * Times in ns. Invariants of the reader: every record after the file's ad record and at most
 * once where once is meant; times within +-2^61, durations within [0, 2^62], a part within
 * the steps' time, a count of steps within the rows; the merge refuses FLOPs calls or kernel
 * time summed over every file past int64, so that advice_combine's sums stay exact.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/advice.h"
#include "report/partial_internal.h"

/* The reading state of one file's ad* records. */
struct partial_advice {
	struct advice_file af; /* what was read */
	int evidence;	       /* the list an ade record goes to: 0 none, 1 the last adg, 2 ads,
				* 3 adp */
	bool part[2];	       /* an adw record of each kind was read */
	bool first, sync, page, tiny; /* an adf, ads, adp, adk record was read */
};

/* ---------------------------------------------------------------------------------------- */
/* Writing */

static void put_step(FILE *out, const struct model *m, const struct advice_step *s)
{
	partial_put_id(out, m, s->name);
	fprintf(out, "\t%" PRId64 "\t%" PRId64, s->start_ns, s->end_ns);
}

static void put_top(FILE *out, const struct model *m, const struct advice_tally *t, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		fputs("ade", out);
		partial_put_id(out, m, t[i].name);
		fprintf(out, "\t%" PRIu64 "\t%" PRId64 "\n", t[i].n, t[i].ns);
	}
}

int partial_advice_write(FILE *out, const struct analysis *a, const struct gpu_util *u, uint32_t f)
{
	const struct model *m = a->m;
	struct advice_file af;
	if (advice_measure(a, u, f, &af) != 0)
		return OPSCOPE_ENOMEM;
	fprintf(out, "ad\t%d\t%d\t%d\t%" PRIu32 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n",
		af.own_steps, af.gpu, af.device_tracks, af.nrows, af.steps_ns, af.steps_s,
		af.steps_e);
	for (int k = 0; k < 2 && af.nrows; k++) {
		const struct advice_part *p = k ? &af.comm : &af.input;
		fprintf(out, "adw\t%d\t%" PRId64 "\t%" PRId64 "\t%" PRIu32, k, p->part_ns,
			p->worst_ns, p->over);
		put_step(out, m, &p->worst);
		fputc('\n', out);
	}
	if (af.first_n) {
		fprintf(out, "adf\t%" PRIu32 "\t%" PRId64 "\t%" PRId64, af.first_n, af.first_ns,
			af.median_ns);
		put_step(out, m, &af.first);
		fputc('\n', out);
	}
	for (uint32_t g = 0; g < af.nidle; g++) {
		const struct advice_idle *d = &af.idle[g];
		fprintf(out,
			"adg\t%" PRIu32 "\t%" PRIu32 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
			"\t%" PRId64,
			d->device, d->over, d->idle_ns, d->span_ns, d->busy_ns, d->worst_busy_ns);
		put_step(out, m, &d->worst);
		fputc('\n', out);
		put_top(out, m, d->top, d->ntop);
	}
	if (af.sync_calls) {
		fprintf(out,
			"ads\t%" PRIu64 "\t%" PRId64 "\t%" PRIu32 "\t%" PRId64 "\t%" PRId64
			"\t%" PRId64 "\n",
			af.sync_calls, af.sync_ns, af.sync_steps, af.sync_worst_ns, af.sync_s,
			af.sync_e);
		put_top(out, m, af.sync_top, af.sync_ntop);
	}
	if (af.page_n) {
		fprintf(out,
			"adp\t%" PRIu64 "\t%" PRId64 "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64
			"\t%" PRId64 "\n",
			af.page_n, af.page_ns, af.page_bytes, af.page_worst_ns, af.page_s,
			af.page_e);
		put_top(out, m, af.page_top, af.page_ntop);
	}
	if (af.kernels)
		fprintf(out, "adk\t%" PRIu64 "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\n",
			af.kernels, af.tiny, af.tiny_ns, af.launch_ns);
	advice_file_free(&af);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading */

/* Field i as a flag (0 or 1). */
static int field_flag(struct reader *r, int i, bool *b)
{
	int64_t v;
	if (partial_field_i64(r, i, 0, 1, &v))
		return -1;
	*b = v == 1;
	return 0;
}

static int field_time(struct reader *r, int i, int64_t *v)
{
	return partial_field_i64(r, i, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, v);
}

static int field_dur(struct reader *r, int i, int64_t *v)
{
	return partial_field_i64(r, i, 0, PARTIAL_TIME_MAX, v);
}

/* Field i as a count of at most max. */
static int field_count(struct reader *r, int i, int64_t max, uint32_t *v)
{
	int64_t x;
	if (partial_field_i64(r, i, 0, max, &x))
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* Fields i, i + 1, i + 2 as a step: its name (or -), start and end. */
static int field_step(struct reader *r, int i, struct advice_step *s)
{
	if (partial_field_id(r, i, false, &s->name) || field_time(r, i + 1, &s->start_ns) ||
	    partial_field_i64(r, i + 2, s->start_ns, PARTIAL_STAMP_MAX, &s->end_ns))
		return -1;
	return 0;
}

static int rec_ad(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (pf->advice)
		return partial_fail(r, "a second ad record for the file");
	struct partial_advice *pa = calloc(1, sizeof(*pa));
	if (!pa)
		return partial_oom(r);
	pf->advice = pa;
	struct advice_file *af = &pa->af;
	if (partial_want_fields(r, 8) || field_flag(r, 1, &af->own_steps) ||
	    field_flag(r, 2, &af->gpu) || field_flag(r, 3, &af->device_tracks) ||
	    field_count(r, 4, UINT32_MAX, &af->nrows) || field_dur(r, 5, &af->steps_ns) ||
	    field_time(r, 6, &af->steps_s) ||
	    partial_field_i64(r, 7, af->steps_s, PARTIAL_STAMP_MAX, &af->steps_e))
		return -1;
	if (af->gpu && !af->device_tracks)
		return partial_fail(r, "device work without a device track");
	return 0;
}

static int rec_adw(struct reader *r)
{
	struct partial_advice *pa = r->cur->advice;
	int64_t k;
	if (partial_want_fields(r, 8) || partial_field_i64(r, 1, 0, 1, &k))
		return -1;
	if (pa->part[k])
		return partial_fail(r, "a second adw record of kind %d", (int)k);
	if (pa->af.nrows == 0)
		return partial_fail(r, "an adw record for a file without step rows");
	struct advice_part *p = k ? &pa->af.comm : &pa->af.input;
	if (partial_field_i64(r, 2, 0, pa->af.steps_ns, &p->part_ns) ||
	    partial_field_i64(r, 3, 0, p->part_ns, &p->worst_ns) ||
	    field_count(r, 4, pa->af.nrows, &p->over) || field_step(r, 5, &p->worst))
		return -1;
	pa->part[k] = true;
	pa->evidence = 0;
	return 0;
}

static int rec_adf(struct reader *r)
{
	struct partial_advice *pa = r->cur->advice;
	struct advice_file *af = &pa->af;
	if (pa->first)
		return partial_fail(r, "a second adf record for the file");
	if (partial_want_fields(r, 7) || field_count(r, 1, af->nrows, &af->first_n) ||
	    field_dur(r, 2, &af->first_ns) ||
	    partial_field_i64(r, 3, 1, PARTIAL_TIME_MAX, &af->median_ns) ||
	    field_step(r, 4, &af->first))
		return -1;
	if (af->first_n < 2)
		return partial_fail(r, "field 2: a median of fewer than 2 steps");
	pa->first = true;
	pa->evidence = 0;
	return 0;
}

static int rec_adg(struct reader *r)
{
	struct partial_advice *pa = r->cur->advice;
	struct advice_file *af = &pa->af;
	struct advice_idle d = { 0 };
	if (partial_want_fields(r, 10) || field_count(r, 1, UINT32_MAX, &d.device) ||
	    field_count(r, 2, af->nrows, &d.over) ||
	    partial_field_i64(r, 3, 1, PARTIAL_TIME_MAX, &d.idle_ns) ||
	    partial_field_i64(r, 4, d.idle_ns, PARTIAL_TIME_MAX, &d.span_ns) ||
	    partial_field_i64(r, 5, 0, d.span_ns, &d.busy_ns) ||
	    partial_field_i64(r, 6, 0, d.busy_ns, &d.worst_busy_ns) || field_step(r, 7, &d.worst))
		return -1;
	if (d.over == 0)
		return partial_fail(r, "field 3: no step under 50%% busy");
	struct advice_idle *v = realloc(af->idle, (af->nidle + 1) * sizeof(*v));
	if (!v)
		return partial_oom(r);
	af->idle = v;
	af->idle[af->nidle++] = d;
	pa->evidence = 1;
	return 0;
}

static int rec_ads(struct reader *r)
{
	struct partial_advice *pa = r->cur->advice;
	struct advice_file *af = &pa->af;
	if (pa->sync)
		return partial_fail(r, "a second ads record for the file");
	if (partial_want_fields(r, 7) || partial_field_u64(r, 1, &af->sync_calls) ||
	    field_dur(r, 2, &af->sync_ns) || field_count(r, 3, af->nrows, &af->sync_steps) ||
	    partial_field_i64(r, 4, 0, af->sync_ns, &af->sync_worst_ns) ||
	    field_time(r, 5, &af->sync_s) ||
	    partial_field_i64(r, 6, af->sync_s, PARTIAL_STAMP_MAX, &af->sync_e))
		return -1;
	if (af->sync_calls == 0 || af->nrows == 0)
		return partial_fail(r, "an ads record without calls or step rows");
	pa->sync = true;
	pa->evidence = 2;
	return 0;
}

static int rec_adp(struct reader *r)
{
	struct partial_advice *pa = r->cur->advice;
	struct advice_file *af = &pa->af;
	if (pa->page)
		return partial_fail(r, "a second adp record for the file");
	if (partial_want_fields(r, 7) || partial_field_u64(r, 1, &af->page_n) ||
	    field_dur(r, 2, &af->page_ns) || partial_field_u64(r, 3, &af->page_bytes) ||
	    partial_field_i64(r, 4, 0, af->page_ns, &af->page_worst_ns) ||
	    field_time(r, 5, &af->page_s) ||
	    partial_field_i64(r, 6, af->page_s, PARTIAL_STAMP_MAX, &af->page_e))
		return -1;
	if (af->page_n == 0)
		return partial_fail(r, "field 2: an adp record without copies");
	pa->page = true;
	pa->evidence = 3;
	return 0;
}

static int rec_ade(struct reader *r)
{
	struct partial_advice *pa = r->cur->advice;
	struct advice_file *af = &pa->af;
	struct advice_tally *top;
	uint32_t *n;
	if (pa->evidence == 1) {
		top = af->idle[af->nidle - 1].top;
		n = &af->idle[af->nidle - 1].ntop;
	} else if (pa->evidence == 2) {
		top = af->sync_top;
		n = &af->sync_ntop;
	} else if (pa->evidence == 3) {
		top = af->page_top;
		n = &af->page_ntop;
	} else {
		return partial_fail(r, "an ade record not after an adg, ads or adp record");
	}
	if (*n == ADVICE_TOP)
		return partial_fail(r, "more than %d ade records in a list", ADVICE_TOP);
	struct advice_tally t;
	if (partial_want_fields(r, 4) || partial_field_id(r, 1, true, &t.name) ||
	    partial_field_u64(r, 2, &t.n) || field_dur(r, 3, &t.ns))
		return -1;
	top[(*n)++] = t;
	return 0;
}

static int rec_adk(struct reader *r)
{
	struct partial_advice *pa = r->cur->advice;
	struct advice_file *af = &pa->af;
	if (pa->tiny)
		return partial_fail(r, "a second adk record for the file");
	int64_t tiny;
	if (partial_want_fields(r, 5) || partial_field_u64(r, 1, &af->kernels) ||
	    partial_field_i64(r, 2, 0, af->kernels > INT64_MAX ? INT64_MAX : (int64_t)af->kernels,
			      &tiny) ||
	    field_dur(r, 3, &af->tiny_ns) || field_dur(r, 4, &af->launch_ns))
		return -1;
	af->tiny = (uint64_t)tiny;
	pa->tiny = true;
	pa->evidence = 0;
	return 0;
}

int partial_advice_record(struct reader *r)
{
	const char *tag = r->f[0];
	if (strcmp(tag, "ad") == 0)
		return rec_ad(r);
	static const struct {
		const char *tag;
		int (*fn)(struct reader *r);
	} recs[] = { { "adw", rec_adw }, { "adf", rec_adf }, { "adg", rec_adg }, { "ads", rec_ads },
		     { "adp", rec_adp }, { "ade", rec_ade }, { "adk", rec_adk } };
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		if (strcmp(tag, recs[i].tag) == 0)
			return r->cur->advice ? recs[i].fn(r)
					      : partial_fail(r,
							     "%s record before the file's ad "
							     "record",
							     tag);
	return partial_fail(r, "unknown record '%s'", partial_printable(tag, (char[33]){ 0 }, 33));
}

void partial_advice_free(struct partial_advice *pa)
{
	if (pa)
		advice_file_free(&pa->af);
	free(pa);
}

/* ---------------------------------------------------------------------------------------- */
/* Merging */

int partial_advice_merge(struct partial_set *ps, char *err, size_t errsize)
{
	/* the tensor-core rule's rows come from the flops records, merged before (their rows
	 * then point at their devices' peaks): without them the view is not carried */
	if (!ps->pre.flops)
		return 0; /* an older partial: the view is not carried */
	for (uint32_t i = 0; i < ps->nfiles; i++)
		if (!ps->files[i].advice || !ps->files[i].flops)
			return 0;
	struct advice_file *v = calloc(ps->nfiles ? ps->nfiles : 1, sizeof(*v));
	if (!v) {
		snprintf(err, errsize, "out of memory");
		return OPSCOPE_ENOMEM;
	}
	/* advice_combine sums the FLOPs rows' calls and kernel time over the files */
	int64_t calls = 0, kernel_ns = 0;
	int rc = 0;
	uint32_t i;
	for (i = 0; i < ps->nfiles; i++) {
		struct partial_file *pf = &ps->files[i];
		v[i] = pf->advice->af;
		memset(&pf->advice->af, 0, sizeof(pf->advice->af));
		v[i].file = i;
		/* the file's FLOPs rows as a model of it alone gives them: none without shapes */
		const struct flops_part *fp = partial_flops_part(pf->flops);
		if (fp->has_shapes && advice_tc_rows(&fp->r, &v[i]) != 0) {
			snprintf(err, errsize, "out of memory");
			rc = OPSCOPE_ENOMEM;
			goto fail;
		}
		for (uint32_t k = 0; k < v[i].ntc; k++) {
			const struct advice_tc_row *x = &v[i].tc[k];
			if (x->calls > (uint64_t)INT64_MAX ||
			    !checked_add_i64(&calls, calls, (int64_t)x->calls) ||
			    !checked_add_i64(&kernel_ns, kernel_ns, x->kernel_ns)) {
				snprintf(err, errsize,
					 "%s: offset %" PRIu64
					 ": the FLOPs rows' calls or kernel time, summed over the "
					 "files, exceed 2^63",
					 ps->sources[pf->source], pf->offset);
				rc = -1;
				goto fail;
			}
		}
	}
	ps->pre.advice = v;
	return 0;
fail:
	for (uint32_t j = 0; j <= i; j++)
		advice_file_free(&v[j]);
	free(v);
	return rc;
}
