/*
 * views_samples.c: the samples view (views.c's registry): CPU stack samples as pprof's top
 * functions (flat, cum) and their callers and callees, from analyze/samples.h; for the HTML
 * page also the flame graph's nodes, of all samples and of those inside the ranges of each of
 * the names that hold the most samples (the page's per-range filter).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/samples.h"
#include "report/views_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* samples */

/* A function's name cell: its name; an address nothing named as "0x..." (as pprof shows
 * it); "?" when neither is known. */
static void samples_name(struct rtable *t, struct rrow *r, int col, const struct model *m,
			 const struct samples_fn *f)
{
	if (f->name)
		rcell_text(r, col, model_str(m, f->name), model_strlen(m, f->name));
	else if (f->address)
		set_label(t, r, col, "0x%llx", (unsigned long long)f->address);
	else
		rcell_text(r, col, "?", 1);
}

static double share(int64_t part, int64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

/* Like pprof -top: per function, flat and cum weight with their shares of all samples. */
static int samples_top(struct report_ctx *c, const struct samples_profile *p)
{
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "samples", "Samples: Top Functions");
	if (!t)
		return OPSCOPE_ENOMEM;
	int cname = rtable_col(t, "Function", "name", RCOL_TEXT, 48);
	rtable_col_flags(t, cname, RCOL_F_CUT);
	int cflat = rtable_col(t, "Flat", "flat", RCOL_COUNT, 8);
	int cflatr = rtable_col(t, "Flat(%)", "flat_ratio", RCOL_RATIO, 8);
	int csum = rtable_col(t, "Sum(%)", "sum_ratio", RCOL_RATIO, 8);
	int ccum = rtable_col(t, "Cum", "cum", RCOL_COUNT, 8);
	int ccumr = rtable_col(t, "Cum(%)", "cum_ratio", RCOL_RATIO, 8);
	int cfile = rtable_col(t, "File", "file", RCOL_TEXT, 0);
	rtable_col_flags(t, cfile, RCOL_F_TEXT_HIDDEN);
	int64_t sum = 0;
	for (uint32_t i = 0; i < p->nfns; i++) {
		const struct samples_fn *f = &p->fns[i];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		sum += f->flat;
		samples_name(t, r, cname, m, f);
		r->cells[cflat].i = f->flat;
		r->cells[cflatr].ratio = share(f->flat, p->total);
		r->cells[csum].ratio = share(sum, p->total);
		r->cells[ccum].i = f->cum;
		r->cells[ccumr].ratio = share(f->cum, p->total);
		rcell_text(r, cfile, model_str(m, f->file), model_strlen(m, f->file));
	}
	rtable_total(t, "weight", p->total);
	rtable_total(t, "samples", (int64_t)p->samples);
	rtable_total(t, "truncated", (int64_t)p->truncated);
	rtable_total(t, "no_stack", (int64_t)p->no_stack);
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* Rows of function fn's callers (role 0) or callees (role 1), heaviest first: edges are
 * sorted by weight already. */
static void samples_peers(struct rtable *t, const struct model *m, const struct samples_profile *p,
			  uint32_t fn, int role, const int *col)
{
	for (uint64_t e = 0; e < p->nedges; e++) {
		const struct samples_edge *ed = &p->edges[e];
		if ((role ? ed->caller : ed->callee) != fn)
			continue;
		struct rrow *r = rtable_row(t, 1);
		if (!r)
			return;
		samples_name(t, r, col[0], m, &p->fns[role ? ed->callee : ed->caller]);
		rcell_text(r, col[1], role ? "callee" : "caller", 6);
		r->cells[col[2]].empty = true;
		r->cells[col[3]].i = ed->weight;
		r->cells[col[4]].ratio = share(ed->weight, p->fns[fn].cum);
	}
}

/* Like pprof -peek: each function (in flat order), under it its callers and then its callees,
 * each with the weight of the samples whose stack holds that call and its share of the
 * function's cum. */
static int samples_tree(struct report_ctx *c, const struct samples_profile *p)
{
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "samples", "Samples: Callers and Callees");
	if (!t)
		return OPSCOPE_ENOMEM;
	int col[5];
	col[0] = rtable_col(t, "Function", "name", RCOL_TEXT, 48);
	rtable_col_flags(t, col[0], RCOL_F_CUT);
	col[1] = rtable_col(t, "Role", "role", RCOL_TEXT, 6);
	col[2] = rtable_col(t, "Flat", "flat", RCOL_COUNT, 8);
	col[3] = rtable_col(t, "Cum", "cum", RCOL_COUNT, 8);
	col[4] = rtable_col(t, "Share(%)", "share", RCOL_RATIO, 8);
	for (uint32_t i = 0; i < p->nfns && !t->oom; i++) {
		const struct samples_fn *f = &p->fns[i];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		samples_name(t, r, col[0], m, f);
		rcell_text(r, col[1], "self", 4);
		r->cells[col[2]].i = f->flat;
		r->cells[col[3]].i = f->cum;
		r->cells[col[4]].ratio = share(f->cum, p->total);
		samples_peers(t, m, p, i, 0, col);
		samples_peers(t, m, p, i, 1, col);
	}
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* The flame graph for the HTML page: one row per node of samples_profile.nodes, callers
 * first, each with its parent's row index (empty at a root). `under`: the range name the
 * profile was restricted to (the table's group), or NULL. */
static int samples_flame(struct report_ctx *c, const struct samples_profile *p, const char *under)
{
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "samples", "Samples: Flame Graph");
	if (!t)
		return OPSCOPE_ENOMEM;
	if (under)
		snprintf(t->group, sizeof(t->group), "under %s", under);
	int cpar = rtable_col(t, "Parent", "parent", RCOL_COUNT, 8);
	int cname = rtable_col(t, "Function", "name", RCOL_TEXT, 48);
	int cfile = rtable_col(t, "File", "file", RCOL_TEXT, 0);
	int cself = rtable_col(t, "Self", "self", RCOL_COUNT, 8);
	int ctotal = rtable_col(t, "Total", "total", RCOL_COUNT, 8);
	for (uint32_t i = 0; i < p->nnodes && !t->oom; i++) {
		const struct samples_node *nd = &p->nodes[i];
		const struct samples_fn *f = &p->fns[nd->fn];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		if (nd->parent == UINT32_MAX)
			r->cells[cpar].empty = true;
		else
			r->cells[cpar].i = nd->parent;
		samples_name(t, r, cname, m, f);
		rcell_text(r, cfile, model_str(m, f->file), model_strlen(m, f->file));
		r->cells[cself].i = nd->self;
		r->cells[ctotal].i = nd->total;
	}
	rtable_total(t, "weight", p->total);
	t->text_hidden = true;
	return t->oom ? OPSCOPE_ENOMEM : 0;
}

/* Range names whose samples get a flame graph of their own on the HTML page. */
#define SAMPLES_FLAME_RANGES 8

int view_samples(struct report_ctx *c)
{
	const struct model *m = c->an.m;
	struct samples_profile p;
	bool merged = c->pre != NULL; /* the partials' profile (not freed here) */
	if (merged && !c->pre->samples)
		return 0; /* merged partials that do not carry the samples */
	if (merged)
		p = *c->pre->samples;
	else if (samples_profile(m, c->o->under, &p) != 0)
		return OPSCOPE_ENOMEM;
	int rc = 0;
	if (p.samples) {
		rc = samples_top(c, &p);
		if (!rc)
			rc = samples_tree(c, &p);
		if (!rc && c->o->html)
			rc = samples_flame(c, &p, c->o->under);
	}
	uint64_t kept = p.samples;
	if (!merged)
		samples_profile_free(&p);
	if (!kept || merged)
		return rc; /* opscope merge writes no HTML page */
	/* the page's per-range filter: the flame graphs of the samples inside the ranges of
	 * the names that hold the most samples, as --under NAME gives them */
	if (!rc && c->o->html && !c->o->under) {
		struct samples_range top[SAMPLES_FLAME_RANGES];
		int n = samples_top_ranges(m, SAMPLES_FLAME_RANGES, top);
		if (n < 0)
			return OPSCOPE_ENOMEM;
		for (int i = 0; i < n && !rc; i++) {
			const char *name = model_str(m, top[i].name);
			if (samples_profile(m, name, &p) != 0)
				return OPSCOPE_ENOMEM;
			rc = samples_flame(c, &p, name);
			samples_profile_free(&p);
		}
	}
	return rc;
}
