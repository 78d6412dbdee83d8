/*
 * overview.c: per-type unions of the host ranges and of the GPU work (overview.h), in one
 * pass over every range; ranges are added in each track's start order, so the lists stay
 * about as small as their unions until the merge. Every time is then clipped to the total
 * time (analysis.h), and only ranges inside it are calls, so that no ratio exceeds 100 %.
 *
 * The work is split in two so that opscope merge makes the view from partials with the same
 * code: overview_file takes what one file (or all) gives, counting as calls at once the
 * ranges that touch a list known to lie inside the total time and keeping the others aside
 * (with their multiplicity), and overview_combine joins the parts of every file against the
 * total time, with the phase calls and the communication ranges.
 */
#include "analyze/overview.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/intervals.h"
#include "analyze/phases.h"

/* Length of merged list v inside merged list total. */
static int64_t clipped_sum(const struct ivec *v, const struct ivec *total)
{
	int64_t sum = 0;
	for (size_t i = 0; i < total->n; i++)
		sum += ivec_sum_within(v, total->v[i].s, total->v[i].e);
	return sum;
}

/* Keep range [s, e) aside: its calls are decided against the total time. */
static void open_push(struct overview_side *o, int64_t s, int64_t e, bool *oom)
{
	if (o->nopen == o->open_cap) {
		size_t n = o->open_cap ? o->open_cap * 2 : 16;
		struct overview_open *v = realloc(o->open, n * sizeof(*v));
		if (!v) {
			*oom = true;
			return;
		}
		o->open = v;
		o->open_cap = n;
	}
	o->open[o->nopen++] = (struct overview_open){ s, e, 1 };
}

static int open_cmp(const void *x, const void *y)
{
	const struct overview_open *a = x, *b = y;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return (a->e > b->e) - (a->e < b->e);
}

/* Sort o's ranges aside and count equal ones once, with their multiplicity. */
static void open_compact(struct overview_side *o)
{
	if (o->nopen < 2)
		return;
	qsort(o->open, o->nopen, sizeof(*o->open), open_cmp);
	size_t k = 0;
	for (size_t i = 1; i < o->nopen; i++) {
		if (o->open[i].s == o->open[k].s && o->open[i].e == o->open[k].e)
			o->open[k].n += o->open[i].n;
		else
			o->open[++k] = o->open[i];
	}
	o->nopen = k + 1;
}

/* One range of side o: its time, and a call now (it touches `sure`) or aside. */
static void side_add(struct overview_side *o, int64_t s, int64_t e, const struct ivec *sure,
		     bool *oom)
{
	ivec_add(&o->time, s, e);
	o->ranges++;
	if (ivec_touches(sure, s, e))
		o->calls++;
	else
		open_push(o, s, e, oom);
}

int overview_file(const struct analysis *a, uint32_t f, const struct ivec *sure,
		  struct overview_part *out)
{
	const struct model *m = a->m;
	memset(out, 0, sizeof(*out));
	bool oom = false;
	for (uint32_t tt = 0; tt < m->ntracks; tt++) {
		const struct model_track *tr = &m->tracks[tt];
		const struct model_ranges *r = &tr->ranges;
		if (tr->kind == MODEL_TRACK_ASYNC || (f != OVERVIEW_ALL_FILES && tr->file != f))
			continue;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint8_t cat = r->category[i] < OPSCOPE_CAT_COUNT_
					      ? r->category[i]
					      : OPSCOPE_CAT_USER_DEFINED;
			int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
			if (tr->kind == MODEL_TRACK_DEVICE) {
				if (!tree_is_device_work(cat))
					continue;
				ivec_add(&out->busy, s, e);
				/* an NCCL kernel is a kernel, and communication too (the
				 * distributed analysis's ranges: overview_combine) */
				uint8_t k = tree_is_kernel(cat) ? OPSCOPE_CAT_KERNEL : cat;
				if (k != OPSCOPE_CAT_COMMUNICATION)
					side_add(&out->gpu[k], s, e, sure, &oom);
				continue;
			}
			if (phases_is_phase(cat)) { /* their calls: overview_combine */
				out->host[cat].ranges++;
				continue;
			}
			if (cat != OPSCOPE_CAT_COMMUNICATION)
				side_add(&out->host[cat], s, e, sure, &oom);
		}
	}
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++) {
		ivec_merge(&out->host[k].time);
		ivec_merge(&out->gpu[k].time);
		open_compact(&out->host[k]);
		open_compact(&out->gpu[k]);
		oom = oom || out->host[k].time.oom || out->gpu[k].time.oom;
	}
	ivec_merge(&out->busy);
	if (oom || out->busy.oom) {
		overview_part_free(out);
		return OPSCOPE_ENOMEM;
	}
	return 0;
}

void overview_part_free(struct overview_part *p)
{
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++)
		for (int g = 0; g < 2; g++) {
			struct overview_side *o = g ? &p->gpu[k] : &p->host[k];
			ivec_free(&o->time);
			free(o->open);
		}
	ivec_free(&p->busy);
	memset(p, 0, sizeof(*p));
}

int overview_combine(const struct overview_part *parts, size_t nparts, const struct ivec *total,
		     const struct phase_call *calls, size_t ncalls, struct ivec *comm_host,
		     struct ivec *comm_gpu, struct overview *out)
{
	memset(out, 0, sizeof(*out));
	struct ivec host[OPSCOPE_CAT_COUNT_], gpu[OPSCOPE_CAT_COUNT_], busy = { 0 };
	memset(host, 0, sizeof(host));
	memset(gpu, 0, sizeof(gpu));
	for (size_t p = 0; p < nparts; p++) {
		const struct overview_part *x = &parts[p];
		for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++)
			for (int g = 0; g < 2; g++) {
				const struct overview_side *o = g ? &x->gpu[k] : &x->host[k];
				struct overview_type *t = g ? &out->gpu[k] : &out->host[k];
				struct ivec *v = g ? &gpu[k] : &host[k];
				t->ranges += o->ranges;
				t->calls += o->calls;
				for (size_t i = 0; i < o->nopen; i++)
					if (ivec_touches(total, o->open[i].s, o->open[i].e))
						t->calls += o->open[i].n;
				for (size_t i = 0; i < o->time.n; i++)
					ivec_push(v, o->time.v[i].s, o->time.v[i].e);
			}
		for (size_t i = 0; i < x->busy.n; i++)
			ivec_push(&busy, x->busy.v[i].s, x->busy.v[i].e);
	}
	/* the phases: their calls (phases.h), a nested phase range is no call */
	for (size_t c = 0; c < ncalls; c++) {
		uint8_t cat = phases_category((enum phase)calls[c].phase);
		ivec_add(&host[cat], calls[c].s, calls[c].e);
		out->host[cat].calls += ivec_touches(total, calls[c].s, calls[c].e);
	}
	/* Communication: the distributed analysis's ranges, merged; calls = distinct ranges */
	for (int k = 0; k < 2; k++) {
		uint8_t cat = OPSCOPE_CAT_COMMUNICATION;
		struct ivec *v = k ? &gpu[cat] : &host[cat];
		struct ivec *c = k ? comm_gpu : comm_host;
		struct overview_type *o = k ? &out->gpu[cat] : &out->host[cat];
		for (size_t i = 0; i < c->n; i++)
			ivec_push(v, c->v[i].s, c->v[i].e);
		o->ranges = ivec_count_distinct(v);
		o->calls = 0;
		for (size_t i = 0; i < v->n; i++)
			o->calls += (i == 0 || v->v[i].s != v->v[i - 1].s ||
				     v->v[i].e != v->v[i - 1].e) &&
				    ivec_touches(total, v->v[i].s, v->v[i].e);
	}
	bool oom = false;
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++) {
		ivec_merge(&host[k]);
		ivec_merge(&gpu[k]);
		oom = oom || host[k].oom || gpu[k].oom;
		out->host[k].time_ns = clipped_sum(&host[k], total);
		out->gpu[k].time_ns = clipped_sum(&gpu[k], total);
	}
	ivec_merge(&busy);
	out->gpu_busy_ns = ivec_sum(&busy);
	oom = oom || busy.oom;
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++) {
		ivec_free(&host[k]);
		ivec_free(&gpu[k]);
	}
	ivec_free(&busy);
	return oom ? OPSCOPE_ENOMEM : 0;
}

int overview_analyze(const struct analysis *a, struct overview *out)
{
	memset(out, 0, sizeof(*out));
	struct overview_part part;
	if (overview_file(a, OVERVIEW_ALL_FILES, &a->total, &part) != 0)
		return OPSCOPE_ENOMEM;
	struct phase_call *calls;
	size_t ncalls;
	if (phases_calls(a, &calls, &ncalls) != 0) {
		overview_part_free(&part);
		return OPSCOPE_ENOMEM;
	}
	struct distributed_lists dl;
	int rc = distributed_file_lists(a, DISTRIBUTED_ALL_FILES, &dl);
	if (rc == 0) {
		rc = overview_combine(&part, 1, &a->total, calls, ncalls, &dl.host_comm,
				      &dl.gpu_comm, out);
		distributed_lists_free(&dl);
	}
	free(calls);
	overview_part_free(&part);
	return rc;
}
