/*
 * views_advice.c: the advice view of `opscope report` (views.c's registry): the advisor's
 * findings (analyze/advice.h), ranked by the time at stake, most first. One row per finding
 * with every field (JSON and CSV carry them all); in text the evidence and the change to try
 * follow each finding as two detail lines under it (rows marked text_only, so that JSON and
 * CSV keep one row per finding). It fills cells; every figure comes from advice_run, or in
 * `opscope merge` from advice_combine of the measurements the partials carry.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/advice.h"
#include "analyze/flops.h"
#include "report/views_internal.h"

/* A text cell holding lead and body, copied into the table (set_label's buffer is too short
 * for sentences). */
static void set_own(struct rtable *t, struct rrow *r, int col, const char *lead, const char *body)
{
	char buf[sizeof(((struct advice_finding *)0)->evidence) + 16];
	int n = snprintf(buf, sizeof(buf), "%s%s", lead, body);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
	rcell_text(r, col, rtable_str(t, buf, len), len);
}

/* opscope merge: the findings of the files' measurements read from partials, combined as
 * advice_run combines a report's. */
static int merged_advice(const struct report_pre *p, const struct model *m, struct advice *ad)
{
	memset(ad, 0, sizeof(*ad));
	if (!p->advice)
		return 0;
	bool *keep = malloc((p->nranks ? p->nranks : 1) * sizeof(*keep));
	if (!keep || ranks_kept_shares(p->ranks, p->nranks, keep) == UINT32_MAX) {
		free(keep);
		return OPSCOPE_ENOMEM;
	}
	struct ranks R;
	bool have_ranks = ranks_files_present(p->ranks, p->nranks);
	if (have_ranks && ranks_combine(m, p->ranks, p->nranks, &R) != 0) {
		free(keep);
		return OPSCOPE_ENOMEM;
	}
	struct advice_whole w = { false, p->total_ns, keep, have_ranks ? &R : NULL };
	for (uint32_t i = 0; i < p->nranks; i++)
		w.has_steps |= p->advice[i].own_steps;
	int rc = advice_combine(m, p->advice, p->nranks, &w, ad);
	if (have_ranks)
		ranks_free(&R);
	free(keep);
	return rc;
}

int view_advice(struct report_ctx *c)
{
	struct flops_opts fo = { .peaks = c->o ? c->o->peaks : NULL };
	struct advice ad;
	int rc = c->pre ? merged_advice(c->pre, c->an.m, &ad) : advice_run(&c->an, &fo, &ad);
	if (rc != 0 || ad.n == 0) {
		advice_free(&ad);
		return rc;
	}
	const struct model *m = c->an.m;
	struct rtable *t = ctx_table(c, "advice", "Advice");
	if (!t) {
		advice_free(&ad);
		return OPSCOPE_ENOMEM;
	}
	int c_rank = rtable_col(t, "#", "rank", RCOL_COUNT, 2);
	int c_rule = rtable_col(t, "Rule", "rule", RCOL_TEXT, 14);
	int c_file = rtable_col(t, "File", "file", RCOL_TEXT, 0);
	int c_stake = rtable_col(t, "At stake", "at_stake_ns", RCOL_TIME, 9);
	int c_share = rtable_col(t, "Share (%)", "share", RCOL_RATIO, 9);
	int c_steps = rtable_col(t, "Steps", "steps", RCOL_COUNT, 5);
	int c_meas = rtable_col(t, "Measured", "measured", RCOL_NUMBER, 0);
	int c_thr = rtable_col(t, "Threshold", "threshold", RCOL_NUMBER, 0);
	int c_base = rtable_col(t, "Of", "base_ns", RCOL_TIME, 0);
	int c_s = rtable_col(t, "Start", "start_ns", RCOL_TIME, 0);
	int c_e = rtable_col(t, "End", "end_ns", RCOL_TIME, 0);
	int c_title = rtable_col(t, "Title", "title", RCOL_TEXT, 0);
	int c_ev = rtable_col(t, "Evidence", "evidence", RCOL_TEXT, 0);
	int c_ch = rtable_col(t, "Change", "change", RCOL_TEXT, 0);
	int c_find = rtable_col(t, "Finding", "finding", RCOL_TEXT, 0);
	const int hidden[] = { c_meas, c_thr, c_base, c_s, c_e, c_title, c_ev, c_ch };
	rtable_col_flags(t, c_find, RCOL_F_NOCUT);
	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		rtable_col_flags(t, hidden[i], RCOL_F_TEXT_HIDDEN);
	/* one file: every finding is about it; several (ranks, workers): say which */
	rtable_col_flags(t, c_file, m->nfiles > 1 ? RCOL_F_CUT : RCOL_F_TEXT_HIDDEN);
	t->cols[c_file].width = 24;
	for (uint32_t i = 0; i < ad.n; i++) {
		const struct advice_finding *x = &ad.v[i];
		const struct advice_rule *rule = &advice_rules[x->rule];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		r->cells[c_rank].i = (int64_t)i + 1;
		set_cstr(r, c_rule, rule->id);
		if (x->file == ADVICE_NO_FILE || x->file >= m->nfiles)
			r->cells[c_file].empty = true;
		else
			set_text(r, c_file, m, m->files[x->file].path);
		r->cells[c_stake].i = x->at_stake_ns;
		r->cells[c_share].ratio = ratio(x->at_stake_ns, x->base_ns);
		r->cells[c_steps].i = x->steps;
		r->cells[c_meas].num = x->measured;
		r->cells[c_thr].num = x->threshold;
		r->cells[c_base].i = x->base_ns;
		r->cells[c_s].i = x->start_ns;
		r->cells[c_e].i = x->end_ns;
		r->cells[c_s].empty = r->cells[c_e].empty = x->start_ns == 0 && x->end_ns == 0;
		set_cstr(r, c_title, rule->title);
		set_own(t, r, c_find, "", x->finding);
		set_own(t, r, c_ev, "", x->evidence);
		set_cstr(r, c_ch, x->change);
		/* the two detail lines of the text rendering */
		const char *lead[2] = { "evidence: ", "try: " };
		const char *body[2] = { x->evidence, x->change };
		for (int k = 0; k < 2; k++) {
			struct rrow *d = rtable_row(t, 1);
			if (!d)
				break;
			d->text_only = true;
			for (int col = 0; col < t->ncols; col++)
				d->cells[col].empty = true;
			d->cells[c_find].empty = false;
			set_own(t, d, c_find, lead[k], body[k]);
		}
	}
	advice_free(&ad);
	t->note = "Ranked by the time at stake: the most a change could save. Share = at stake / "
		  "the time it is a share of (the steps, or the total). docs/advice.md states "
		  "each rule and its threshold.";
	return t->oom ? OPSCOPE_ENOMEM : 0;
}
