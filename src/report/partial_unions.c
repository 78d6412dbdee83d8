/*
 * partial_unions.c: the partial records of the views made of unions of intervals across
 * files (docs/merge.md): device (dv, dvc, dvg), distributed (di, dih, dig, dic), overview
 * (ov, ovb, ovt, ovi, ovu) and model (ph, phc); their writer, readers and merge. The views
 * are made with the report's own code: each analysis's per-file part (device_file,
 * distributed_file_lists, overview_file, phases_file) is written, and the merge joins the
 * files' parts with the same combination the report runs (device_cpu_add,
 * distributed_from_lists, overview_combine, phases_combine).
 *
 * What a file carries is the least that keeps the merge exact: the interval lists a union
 * needs, merged (computation kernels, each type's ranges, the GPU's busy time), written as
 * the gap from the previous interval's end and the length, so a list costs a few bytes an
 * interval; the communication ranges as distinct (start, end) pairs (Communication's calls
 * count distinct pairs over every file); the overview's ranges that do not touch the file's
 * own steps (or, without steps, its host span), with their multiplicity, since whether they
 * are calls depends on the other files' steps; the phase calls (a few per step) with their
 * GPU share, since their CPU share depends on the calls of the other files.
 *
 * Invariants: a file's records of a group follow its marker record (dv, di, ov, ph) and the
 * merge makes a view only when every file carries its group (version 11 on); the overview
 * also needs every file to have steps, or none (a stepless file's ranges were tested against
 * its span, which is inside the total time only when no file has steps). Every sum the merge
 * makes is checked against int64.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "report/partial_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* Writing */

/* Merged list v as records `tag <gap> <length>`: the first gap from 0, then from the end of
 * the interval before. */
static void put_list(FILE *out, const char *tag, const struct ivec *v)
{
	int64_t at = 0;
	for (size_t i = 0; i < v->n; i++) {
		fprintf(out, "%s\t%" PRId64 "\t%" PRId64 "\n", tag, v->v[i].s - at,
			v->v[i].e - v->v[i].s);
		at = v->v[i].e;
	}
}

static void put_pairs(FILE *out, const char *tag, const struct ivec *v)
{
	for (size_t i = 0; i < v->n; i++)
		fprintf(out, "%s\t%" PRId64 "\t%" PRId64 "\n", tag, v->v[i].s, v->v[i].e);
}

static int write_device(FILE *out, const struct analysis *a, uint32_t f)
{
	struct device_usage d;
	if (device_file(a, f, &d) != 0)
		return OPSCOPE_ENOMEM;
	fputs("dv\n", out);
	for (uint32_t i = 0; i < d.ncpu; i++)
		fprintf(out, "dvc\t%d\t%" PRIu32 "\t%a\n", (int)d.cpu[i].kind, d.cpu[i].pid,
			d.cpu[i].utilization);
	for (uint32_t i = 0; i < d.ngpu; i++)
		fprintf(out, "dvg\t%" PRIu32 "\t%" PRId64 "\n", d.gpu[i].device, d.gpu[i].busy_ns);
	device_free(&d);
	return 0;
}

static int write_distributed(FILE *out, const struct analysis *a, uint32_t f)
{
	struct distributed_lists l;
	if (distributed_file_lists(a, f, &l) != 0)
		return OPSCOPE_ENOMEM;
	fputs("di\n", out);
	put_pairs(out, "dih", &l.host_comm);
	put_pairs(out, "dig", &l.gpu_comm);
	put_list(out, "dic", &l.comp);
	distributed_lists_free(&l);
	return 0;
}

static int write_overview(FILE *out, const struct analysis *a, uint32_t f)
{
	/* what lies inside the total time for sure: the file's steps; without any, its host
	 * span (inside the total time when no file has steps) */
	struct analysis_total at;
	analysis_file_total(a, f, &at);
	if (at.steps.oom) {
		ivec_free(&at.steps);
		return OPSCOPE_ENOMEM;
	}
	if (at.steps.n == 0 && at.hi > at.lo)
		ivec_push(&at.steps, at.lo, at.hi);
	struct overview_part p;
	int rc = at.steps.oom ? OPSCOPE_ENOMEM : overview_file(a, f, &at.steps, &p);
	ivec_free(&at.steps);
	if (rc != 0)
		return rc;
	fputs("ov\n", out);
	put_list(out, "ovb", &p.busy);
	for (int g = 0; g < 2; g++)
		for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++) {
			const struct overview_side *o = g ? &p.gpu[k] : &p.host[k];
			if (!o->ranges)
				continue;
			fprintf(out, "ovt\t%d\t%d\t%" PRIu64 "\t%" PRIu64 "\n", g, k, o->ranges,
				o->calls);
			put_list(out, "ovi", &o->time);
			for (size_t i = 0; i < o->nopen; i++)
				fprintf(out, "ovu\t%" PRId64 "\t%" PRId64 "\t%" PRIu64 "\n",
					o->open[i].s, o->open[i].e, o->open[i].n);
		}
	overview_part_free(&p);
	return 0;
}

static int write_phases(FILE *out, const struct analysis *a, uint32_t f)
{
	const struct model *m = a->m;
	struct phases_part p;
	if (phases_file(a, f, &p) != 0)
		return OPSCOPE_ENOMEM;
	/* a call's track as its index among the file's tracks (the merge's order) */
	uint32_t *local = calloc(m->ntracks ? m->ntracks : 1, sizeof(*local));
	if (!local) {
		phases_part_free(&p);
		return OPSCOPE_ENOMEM;
	}
	for (uint32_t t = 0, n = 0; t < m->ntracks; t++)
		if (m->tracks[t].file == f)
			local[t] = n++;
	const struct phase_time *st = &p.step;
	fprintf(out,
		"ph\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRIu32 "\t%" PRId64 "\t%" PRId64
		"\t%" PRId64 "\n",
		st->calls, st->calls ? st->cpu_max_ns : 0, st->calls ? st->cpu_min_ns : 0, p.nsteps,
		st->gpu_ns, st->gpu_max_ns, p.nsteps ? st->gpu_min_ns : 0);
	for (size_t c = 0; c < p.ncalls; c++)
		fprintf(out, "phc\t%u\t%" PRIu32 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n",
			(unsigned)p.calls[c].phase, local[p.calls[c].track], p.calls[c].s,
			p.calls[c].e, p.gpu_share[c]);
	free(local);
	phases_part_free(&p);
	return 0;
}

int partial_write_unions(FILE *out, const struct analysis *a, uint32_t f)
{
	if (write_device(out, a, f) != 0 || write_distributed(out, a, f) != 0 ||
	    write_overview(out, a, f) != 0 || write_phases(out, a, f) != 0)
		return OPSCOPE_ENOMEM;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading */

/* The file's unions, made at its first record of them. */
static struct partial_unions *unions_of(struct reader *r)
{
	struct partial_file *pf = r->cur;
	if (!pf->unions && !(pf->unions = calloc(1, sizeof(*pf->unions))))
		r->oom = true;
	return pf->unions;
}

/* A record that must follow the file's marker record. */
static struct partial_unions *after(struct reader *r, size_t marker_off, const char *tag,
				    const char *mtag)
{
	struct partial_unions *u = r->cur->unions;
	if (!u || !*(const bool *)((const char *)u + marker_off)) {
		partial_fail(r, "%s record before the file's %s record", tag, mtag);
		return NULL;
	}
	return u;
}

/* An interval of a list written by put_list (fields 1, 2) appended to v: its start is the
 * gap after the last one's end (the first: the start itself). */
static int field_list(struct reader *r, struct ivec *v)
{
	int64_t gap, len;
	int64_t at = v->n ? v->v[v->n - 1].e : 0;
	if (partial_want_fields(r, 3) ||
	    partial_field_i64(r, 1, v->n ? 0 : -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX - at, &gap) ||
	    partial_field_i64(r, 2, 0, PARTIAL_STAMP_MAX - (at + gap), &len))
		return -1;
	ivec_push(v, at + gap, at + gap + len);
	return v->oom ? partial_oom(r) : 0;
}

/* A (start, end) pair (fields 1, 2) appended to v. */
static int field_pair(struct reader *r, struct ivec *v)
{
	int64_t s, e;
	if (partial_want_fields(r, 3) ||
	    partial_field_i64(r, 1, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &s) ||
	    partial_field_i64(r, 2, s, PARTIAL_STAMP_MAX, &e))
		return -1;
	ivec_push(v, s, e);
	return v->oom ? partial_oom(r) : 0;
}

#define AFTER(r, field, tag, mtag) after(r, offsetof(struct partial_unions, field), tag, mtag)

static int rec_dv(struct reader *r)
{
	struct partial_unions *u = unions_of(r);
	return u ? partial_marker(r, &u->has_device) : partial_oom(r);
}

static int rec_dvc(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_device, "dvc", "dv");
	int64_t kind, pid;
	if (!u || partial_want_fields(r, 4) || partial_field_i64(r, 1, 0, 1, &kind) ||
	    partial_field_i64(r, 2, 0, UINT32_MAX, &pid))
		return -1;
	/* a number as %a writes it (the metadata's value, whatever it was: inf and nan too),
	 * read back to the very bits by strtod */
	char *end;
	double v = r->flen[3] ? strtod(r->f[3], &end) : 0;
	if (!r->flen[3] || *end)
		return partial_fail(r, "field 3: not a number");
	/* file 0 here: merge_device sets the file's place among the merged files */
	return device_cpu_add(&u->device, &u->cpu_cap, (enum device_cpu_kind)kind, 0, (uint32_t)pid,
			      v) == 0
		       ? 0
		       : partial_oom(r);
}

static int rec_dvg(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_device, "dvg", "dv");
	int64_t dev, busy;
	if (!u || partial_want_fields(r, 3) || partial_field_i64(r, 1, 0, UINT32_MAX, &dev) ||
	    partial_field_i64(r, 2, 0, PARTIAL_TIME_MAX, &busy))
		return -1;
	if (u->device.ngpu >= DEVICE_MAX_GPUS)
		return partial_fail(r, "more than %d dvg records for the file", DEVICE_MAX_GPUS);
	if (partial_grow(r, (void **)&u->device.gpu, &u->gpu_cap, u->device.ngpu,
			 sizeof(*u->device.gpu)))
		return -1;
	u->device.gpu[u->device.ngpu++] = (struct device_gpu){ 0, (uint32_t)dev, busy };
	return 0;
}

static int rec_di(struct reader *r)
{
	struct partial_unions *u = unions_of(r);
	return u ? partial_marker(r, &u->has_dist) : partial_oom(r);
}

static int rec_dih(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_dist, "dih", "di");
	return u ? field_pair(r, &u->dist.host_comm) : -1;
}

static int rec_dig(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_dist, "dig", "di");
	return u ? field_pair(r, &u->dist.gpu_comm) : -1;
}

static int rec_dic(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_dist, "dic", "di");
	return u ? field_list(r, &u->dist.comp) : -1;
}

static int rec_ov(struct reader *r)
{
	struct partial_unions *u = unions_of(r);
	if (!u)
		return partial_oom(r);
	u->ov_side = NULL;
	return partial_marker(r, &u->has_ov);
}

static int rec_ovb(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_ov, "ovb", "ov");
	if (u && u->ov_side)
		return partial_fail(r, "ovb record after an ovt record");
	return u ? field_list(r, &u->ov.busy) : -1;
}

static int rec_ovt(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_ov, "ovt", "ov");
	int64_t g, k, ranges, calls;
	if (!u || partial_want_fields(r, 5) || partial_field_i64(r, 1, 0, 1, &g) ||
	    partial_field_i64(r, 2, 0, OPSCOPE_CAT_COUNT_ - 1, &k) ||
	    partial_field_i64(r, 3, 1, PARTIAL_TIME_MAX, &ranges) ||
	    partial_field_i64(r, 4, 0, ranges, &calls))
		return -1;
	struct overview_side *o = g ? &u->ov.gpu[k] : &u->ov.host[k];
	if (o->ranges)
		return partial_fail(r, "a second ovt record of type %d", (int)k);
	o->ranges = (uint64_t)ranges;
	o->calls = (uint64_t)calls;
	u->ov_side = o;
	u->ov_open = 0;
	return 0;
}

static int rec_ovi(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_ov, "ovi", "ov");
	if (u && !u->ov_side)
		return partial_fail(r, "ovi record before an ovt record");
	return u ? field_list(r, &u->ov_side->time) : -1;
}

static int rec_ovu(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_ov, "ovu", "ov");
	if (u && !u->ov_side)
		return partial_fail(r, "ovu record before an ovt record");
	if (!u)
		return -1;
	struct overview_side *o = u->ov_side;
	int64_t s, e, n;
	if (partial_want_fields(r, 4) ||
	    partial_field_i64(r, 1, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &s) ||
	    partial_field_i64(r, 2, s, PARTIAL_STAMP_MAX, &e) ||
	    partial_field_i64(r, 3, 1, PARTIAL_TIME_MAX, &n))
		return -1;
	/* the ranges aside are counted in ovt's ranges, which bound them */
	if ((uint64_t)n > o->ranges - o->calls - u->ov_open)
		return partial_fail(r, "field 3: more ranges aside than the ovt record has");
	u->ov_open += (uint64_t)n;
	if (o->nopen == o->open_cap) {
		size_t c = o->open_cap ? o->open_cap * 2 : 16;
		struct overview_open *v = realloc(o->open, c * sizeof(*v));
		if (!v)
			return partial_oom(r);
		o->open = v;
		o->open_cap = c;
	}
	o->open[o->nopen++] = (struct overview_open){ s, e, (uint64_t)n };
	return 0;
}

static int rec_ph(struct reader *r)
{
	struct partial_unions *u = unions_of(r);
	if (!u)
		return partial_oom(r);
	if (partial_want_fields(r, 8))
		return -1;
	if (u->has_ph)
		return partial_fail(r, "a second ph record for the file");
	struct phase_time *st = &u->ph.step;
	memset(st, 0, sizeof(*st));
	int64_t calls, nsteps;
	if (partial_field_i64(r, 1, 0, PARTIAL_TIME_MAX, &calls) ||
	    partial_field_i64(r, 2, 0, PARTIAL_TIME_MAX, &st->cpu_max_ns) ||
	    partial_field_i64(r, 3, 0, st->cpu_max_ns, &st->cpu_min_ns) ||
	    partial_field_i64(r, 4, 0, UINT32_MAX, &nsteps) ||
	    partial_field_i64(r, 5, 0, PARTIAL_TIME_MAX, &st->gpu_ns) ||
	    partial_field_i64(r, 6, 0, st->gpu_ns, &st->gpu_max_ns) ||
	    partial_field_i64(r, 7, 0, st->gpu_max_ns, &st->gpu_min_ns))
		return -1;
	st->calls = (uint64_t)calls;
	if (!calls) /* as phase_add leaves a row with no range */
		st->cpu_max_ns = 0, st->cpu_min_ns = INT64_MAX;
	if (!nsteps)
		st->gpu_min_ns = INT64_MAX;
	u->ph.nsteps = (uint32_t)nsteps;
	u->has_ph = true;
	return 0;
}

static int rec_phc(struct reader *r)
{
	struct partial_unions *u = AFTER(r, has_ph, "phc", "ph");
	int64_t phase, track, s, e, gpu;
	if (!u || partial_want_fields(r, 6) ||
	    partial_field_i64(r, 1, PHASE_DATALOADER, PHASE_COUNT - 1, &phase) ||
	    partial_field_i64(r, 2, 0, UINT32_MAX - 1, &track) ||
	    partial_field_i64(r, 3, -PARTIAL_STAMP_MAX, PARTIAL_STAMP_MAX, &s) ||
	    partial_field_i64(r, 4, s, PARTIAL_STAMP_MAX, &e) ||
	    partial_field_i64(r, 5, 0, u->ph.step.gpu_ns - u->ph_gpu, &gpu))
		return -1; /* the calls' GPU shares partition the steps' kernel time */
	struct phases_part *p = &u->ph;
	if (p->ncalls == u->ph_cap) {
		size_t c = u->ph_cap ? u->ph_cap * 2 : 64;
		struct phase_call *v = realloc(p->calls, c * sizeof(*v));
		if (v)
			p->calls = v;
		int64_t *g = v ? realloc(p->gpu_share, c * sizeof(*g)) : NULL;
		if (!g)
			return partial_oom(r);
		p->gpu_share = g;
		u->ph_cap = c;
	}
	p->calls[p->ncalls] =
		(struct phase_call){ (uint8_t)phase, (uint32_t)track, MODEL_NONE, s, e };
	p->gpu_share[p->ncalls++] = gpu;
	u->ph_gpu += gpu;
	u->ph_tracks = (uint32_t)track >= u->ph_tracks ? (uint32_t)track + 1 : u->ph_tracks;
	return 0;
}

int partial_unions_record(struct reader *r, const char *tag, bool *known)
{
	static const struct {
		const char *tag;
		int (*fn)(struct reader *r);
	} recs[] = { { "dv", rec_dv },	 { "dvc", rec_dvc }, { "dvg", rec_dvg }, { "di", rec_di },
		     { "dih", rec_dih }, { "dig", rec_dig }, { "dic", rec_dic }, { "ov", rec_ov },
		     { "ovb", rec_ovb }, { "ovt", rec_ovt }, { "ovi", rec_ovi }, { "ovu", rec_ovu },
		     { "ph", rec_ph },	 { "phc", rec_phc } };
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		if (strcmp(tag, recs[i].tag) == 0) {
			*known = true;
			return r->cur ? recs[i].fn(r)
				      : partial_fail(r, "%s record before any file record", tag);
		}
	*known = false;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Merging */

/* Does every file carry the group whose marker is at `off` of its unions? */
static bool all_carry(const struct partial_set *ps, size_t off)
{
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct partial_unions *u = ps->files[i].unions;
		if (!u || !*(const bool *)((const char *)u + off))
			return false;
	}
	return true;
}
#define ALL_CARRY(ps, field) all_carry(ps, offsetof(struct partial_unions, field))

/* The device rows: CPU entries and GPU rows file by file. */
static int merge_device(struct partial_set *ps)
{
	struct device_usage *d = calloc(1, sizeof(*d));
	if (!d)
		return OPSCOPE_ENOMEM;
	ps->pre.device = d;
	uint32_t cap = 0, gcap = 0;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct device_usage *x = &ps->files[i].unions->device;
		for (uint32_t k = 0; k < x->ncpu; k++)
			if (device_cpu_add(d, &cap, x->cpu[k].kind, i, x->cpu[k].pid,
					   x->cpu[k].utilization) != 0)
				return OPSCOPE_ENOMEM;
		for (uint32_t k = 0; k < x->ngpu; k++) {
			if (d->ngpu == gcap) {
				uint32_t c = gcap ? gcap * 2 : 16;
				struct device_gpu *v = realloc(d->gpu, c * sizeof(*v));
				if (!v)
					return OPSCOPE_ENOMEM;
				d->gpu = v;
				gcap = c;
			}
			d->gpu[d->ngpu] = x->gpu[k];
			d->gpu[d->ngpu++].file = i;
		}
	}
	device_cpu_order(d);
	return 0;
}

/* The files' distributed lists joined into *l (pairs pushed, comp merged). */
static int join_dist(const struct partial_set *ps, struct distributed_lists *l)
{
	memset(l, 0, sizeof(*l));
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct distributed_lists *x = &ps->files[i].unions->dist;
		for (size_t k = 0; k < x->host_comm.n; k++)
			ivec_push(&l->host_comm, x->host_comm.v[k].s, x->host_comm.v[k].e);
		for (size_t k = 0; k < x->gpu_comm.n; k++)
			ivec_push(&l->gpu_comm, x->gpu_comm.v[k].s, x->gpu_comm.v[k].e);
		for (size_t k = 0; k < x->comp.n; k++)
			ivec_push(&l->comp, x->comp.v[k].s, x->comp.v[k].e);
	}
	ivec_merge(&l->comp);
	if (l->host_comm.oom || l->gpu_comm.oom || l->comp.oom) {
		distributed_lists_free(l);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

/* Every file's phase calls in one list, each call's track renumbered after the tracks of
 * the files before it (the order of a model of those files), and their ProfileStep rows
 * joined. 0, -1 when a sum leaves int64 (*bad: the file), or OPSCOPE_ENOMEM. */
static int join_phases(const struct partial_set *ps, struct phases_part *all, uint32_t *bad)
{
	memset(all, 0, sizeof(*all));
	all->step.cpu_min_ns = INT64_MAX;
	all->step.gpu_min_ns = INT64_MAX;
	size_t n = 0;
	int64_t calls = 0, gpu = 0;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct partial_unions *u = ps->files[i].unions;
		n += u->ph.ncalls;
		*bad = i;
		if (!checked_add_i64(&calls, calls, (int64_t)u->ph.step.calls) ||
		    !checked_add_i64(&gpu, gpu, u->ph.step.gpu_ns))
			return -1;
	}
	all->calls = malloc((n ? n : 1) * sizeof(*all->calls));
	all->gpu_share = malloc((n ? n : 1) * sizeof(*all->gpu_share));
	if (!all->calls || !all->gpu_share)
		return OPSCOPE_ENOMEM;
	uint64_t base = 0;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct partial_unions *u = ps->files[i].unions;
		if (base + u->ph_tracks > UINT32_MAX) {
			*bad = i;
			return -1;
		}
		for (size_t c = 0; c < u->ph.ncalls; c++) {
			all->calls[all->ncalls] = u->ph.calls[c];
			all->calls[all->ncalls].track += (uint32_t)base;
			all->gpu_share[all->ncalls++] = u->ph.gpu_share[c];
		}
		base += u->ph_tracks;
		phases_step_join(&all->step, &u->ph.step);
	}
	return 0;
}

int partial_unions_finish(struct partial_set *ps, char *err, size_t errsize)
{
	struct report_pre *p = &ps->pre;
	if (!p->has_host) /* the totals every ratio is of (version 8 on) */
		return 0;
	/* the total time, as merge_host makes it */
	struct ivec total = { 0 };
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	bool stepless = false;
	for (uint32_t i = 0; i < ps->nfiles; i++) {
		const struct analysis_total *t = &ps->files[i].total;
		for (size_t k = 0; k < t->steps.n; k++)
			ivec_push(&total, t->steps.v[k].s, t->steps.v[k].e);
		stepless = stepless || t->steps.n == 0;
		lo = t->lo < lo ? t->lo : lo;
		hi = t->hi > hi ? t->hi : hi;
	}
	ivec_merge(&total);
	p->has_steps = total.n > 0;
	if (total.n == 0 && hi > lo)
		ivec_push(&total, lo, hi);
	int rc = total.oom ? OPSCOPE_ENOMEM : 0;
	uint32_t bad = 0;
	const char *what = NULL;
	if (rc == 0 && ALL_CARRY(ps, has_device))
		rc = merge_device(ps);
	struct distributed_lists dl = { 0 };
	bool dist = rc == 0 && ALL_CARRY(ps, has_dist);
	if (dist && (rc = join_dist(ps, &dl)) == 0) {
		p->distributed = calloc(1, sizeof(*p->distributed));
		rc = p->distributed ? distributed_from_lists(&dl, p->distributed) : OPSCOPE_ENOMEM;
	}
	struct phases_part all = { 0 };
	bool ph = rc == 0 && ALL_CARRY(ps, has_ph);
	if (ph && (rc = join_phases(ps, &all, &bad)) == -1)
		what = "the steps or their GPU time";
	/* the overview before the phases, which sort the calls they are given */
	if (rc == 0 && ph && dist && ALL_CARRY(ps, has_ov) && !(p->has_steps && stepless)) {
		struct overview_part *parts =
			malloc((ps->nfiles ? ps->nfiles : 1) * sizeof(*parts));
		int64_t sum[2][OPSCOPE_CAT_COUNT_] = { { 0 } };
		for (uint32_t i = 0; parts && i < ps->nfiles && rc == 0; i++) {
			parts[i] = ps->files[i].unions->ov;
			for (int k = 0; k < OPSCOPE_CAT_COUNT_ && rc == 0; k++)
				for (int g = 0; g < 2 && rc == 0; g++)
					if (!checked_add_i64(
						    &sum[g][k], sum[g][k],
						    (int64_t)(g ? parts[i].gpu[k].ranges
								: parts[i].host[k].ranges))) {
						rc = -1;
						bad = i;
						what = "the overview's ranges";
					}
		}
		p->overview = parts && rc == 0 ? calloc(1, sizeof(*p->overview)) : NULL;
		if (rc == 0)
			rc = p->overview ? overview_combine(parts, ps->nfiles, &total, all.calls,
							    all.ncalls, &dl.host_comm, &dl.gpu_comm,
							    p->overview)
					 : OPSCOPE_ENOMEM;
		free(parts);
	}
	if (rc == 0 && ph) {
		p->phases = calloc(1, sizeof(*p->phases));
		rc = p->phases ? phases_combine(all.calls, all.gpu_share, all.ncalls, &all.step,
						&total, p->total_ns, p->phases)
			       : OPSCOPE_ENOMEM;
	}
	phases_part_free(&all);
	distributed_lists_free(&dl);
	ivec_free(&total);
	if (rc == -1) {
		snprintf(err, errsize,
			 "%s: offset %" PRIu64 ": %s, summed over the files, exceed 2^63",
			 ps->sources[ps->files[bad].source], ps->files[bad].offset, what);
		return -1;
	}
	if (rc != 0)
		snprintf(err, errsize, "out of memory");
	return rc;
}

void partial_unions_free_file(struct partial_file *pf)
{
	struct partial_unions *u = pf->unions;
	if (!u)
		return;
	device_free(&u->device);
	distributed_lists_free(&u->dist);
	overview_part_free(&u->ov);
	phases_part_free(&u->ph);
	free(u);
	pf->unions = NULL;
}

void partial_unions_free_pre(struct report_pre *p)
{
	if (p->device)
		device_free(p->device);
	free(p->device);
	free(p->distributed);
	free(p->overview);
	if (p->phases)
		phases_free(p->phases);
	free(p->phases);
	p->device = NULL;
	p->distributed = NULL;
	p->overview = NULL;
	p->phases = NULL;
}

const char *partial_why_not(const struct partial_set *ps, const char *view)
{
	if (strcmp(view, "overview") == 0 && ps->pre.phases && ps->pre.distributed)
		return "some files have ProfileStep ranges and some have none, and a partial "
		       "does not say which of a stepless file's ranges lie in the other files' "
		       "steps (docs/merge.md)";
	return "a partial of an older format version does not carry it (make the partials "
	       "again with this opscope)";
}
