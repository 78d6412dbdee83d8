/*
 * diffview.c: the rows of a diff (analyze/diff.h) as one table (diffview.h). Per row: kind,
 * name (and input shapes), whether it is on both sides or added or removed, which time it
 * compares (CPU or GPU), calls and time of A and B, the change (ns and fraction of A), the
 * per-step mean and standard deviation of each side, Welch's t and the noise verdict.
 *
 * Times are rounded to the ns (means and standard deviations are doubles in the diff); a
 * value that does not exist (the fraction of an A of 0, t with fewer than two steps a side)
 * is an empty cell: '-' in text and CSV, null in JSON.
 */
#include "report/diffview.h"

#include <math.h>
#include <string.h>

static const char *const status_names[] = { "both", "added", "removed" };
static const char *const noise_names[] = { "-", "within", "beyond" };

static void text(struct rtable *t, struct rrow *r, int col, const char *s)
{
	size_t n = strlen(s);
	rcell_text(r, col, rtable_str(t, s, n), n);
}

static void time_cell(struct rcell *x, double ns)
{
	if (isfinite(ns))
		x->i = (int64_t)llround(ns);
	else
		x->empty = true;
}

struct rtable *diffview_table(const struct diff *d, bool by_shape)
{
	struct rtable *t = rtable_new("diff", "Diff Summary");
	if (!t)
		return NULL;
	int ckind = rtable_col(t, "Kind", "kind", RCOL_TEXT, 6);
	int cname = rtable_col(t, "Name", "name", RCOL_TEXT, 50);
	rtable_col_flags(t, cname, RCOL_F_CUT);
	int cdims = by_shape ? rtable_col(t, "Input Dims", "input_dims", RCOL_TEXT, 20) : -1;
	if (cdims >= 0)
		rtable_col_flags(t, cdims, RCOL_F_CUT);
	int cstat = rtable_col(t, "Status", "status", RCOL_TEXT, 7);
	int cclock = rtable_col(t, "Time", "time", RCOL_TEXT, 4);
	int ccalls_a = rtable_col(t, "Calls A", "calls_a", RCOL_COUNT, 8);
	int ccalls_b = rtable_col(t, "Calls B", "calls_b", RCOL_COUNT, 8);
	int ctime_a = rtable_col(t, "Time A", "time_a_ns", RCOL_TIME, 10);
	int ctime_b = rtable_col(t, "Time B", "time_b_ns", RCOL_TIME, 10);
	int cchange = rtable_col(t, "Change", "change_ns", RCOL_TIME, 10);
	int cratio = rtable_col(t, "Change(%)", "change", RCOL_RATIO, 9);
	int csteps_a = rtable_col(t, "Steps A", "steps_a", RCOL_COUNT, 7);
	rtable_col_flags(t, csteps_a, RCOL_F_TEXT_HIDDEN);
	int csteps_b = rtable_col(t, "Steps B", "steps_b", RCOL_COUNT, 7);
	rtable_col_flags(t, csteps_b, RCOL_F_TEXT_HIDDEN);
	int cmean_a = rtable_col(t, "Step Mean A", "step_mean_a_ns", RCOL_TIME, 11);
	int csd_a = rtable_col(t, "Step SD A", "step_sd_a_ns", RCOL_TIME, 9);
	int cmean_b = rtable_col(t, "Step Mean B", "step_mean_b_ns", RCOL_TIME, 11);
	int csd_b = rtable_col(t, "Step SD B", "step_sd_b_ns", RCOL_TIME, 9);
	int ct = rtable_col(t, "t", "t", RCOL_NUMBER, 8);
	rtable_col_flags(t, ct, RCOL_F_TEXT_HIDDEN);
	int cnoise = rtable_col(t, "Noise", "noise", RCOL_TEXT, 6);
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *w = &d->rows[i];
		struct rrow *r = rtable_row(t, 0);
		if (!r)
			break;
		text(t, r, ckind, diff_kind_name((enum diff_kind)w->kind));
		text(t, r, cname, w->name);
		if (cdims >= 0)
			text(t, r, cdims, w->shape ? w->shape : "");
		text(t, r, cstat, status_names[w->status]);
		text(t, r, cclock, w->gpu ? "GPU" : "CPU");
		r->cells[ccalls_a].i = (int64_t)w->side[0].calls;
		r->cells[ccalls_b].i = (int64_t)w->side[1].calls;
		r->cells[ctime_a].i = w->side[0].time_ns;
		r->cells[ctime_b].i = w->side[1].time_ns;
		r->cells[cchange].i = w->change_ns;
		if (isfinite(w->change))
			r->cells[cratio].ratio = w->change;
		else
			r->cells[cratio].empty = true;
		r->cells[csteps_a].i = w->side[0].nsteps;
		r->cells[csteps_b].i = w->side[1].nsteps;
		time_cell(&r->cells[cmean_a], w->side[0].mean_ns);
		time_cell(&r->cells[csd_a], w->side[0].sd_ns);
		time_cell(&r->cells[cmean_b], w->side[1].mean_ns);
		time_cell(&r->cells[csd_b], w->side[1].sd_ns);
		if (isfinite(w->t))
			r->cells[ct].num = w->t;
		else
			r->cells[ct].empty = true;
		text(t, r, cnoise, noise_names[w->noise]);
	}
	if (t->oom) {
		rtable_free(t);
		return NULL;
	}
	return t;
}
