/*
 * render_csv.c: the CSV rendering of the report's tables (RFC 4180): per table a "# Title"
 * line, a header of column keys (times in the chosen unit: "total_ms"), one line per row and
 * a blank line. A statistics column is five (total, avg, max, min, ratio); a table with
 * sub-rows gets a "level" column first. Columns follow --columns' order when it is given.
 * Text is quoted when needed, invalid UTF-8 becomes U+FFFD, and a name a spreadsheet would
 * run as a formula (= + - @ tab CR first) gets a ' first (escape_csv_cell).
 */
#include <inttypes.h>
#include <string.h>

#include "report/render.h"
#include "util/escape.h"

/* "total_ns" -> "total_ms" for the chosen unit. */
static void csv_key(struct sbuf *b, const char *key, const char *suffix, int unit, bool is_time)
{
	size_t n = strlen(key);
	if (is_time && n > 3 && strcmp(key + n - 3, "_ns") == 0) {
		sb_put(b, key, n - 3);
		sb_printf(b, "_%s", rformat_unit_name(unit));
		return;
	}
	sb_put(b, key, n);
	if (suffix) {
		sb_put(b, suffix, strlen(suffix));
		if (is_time)
			sb_printf(b, "_%s", rformat_unit_name(unit));
	}
}

static void csv_time(struct sbuf *b, int64_t ns, int unit)
{
	static const int decimals[] = { 9, 6, 3, 0 }; /* exact: ns have no fraction */
	sb_printf(b, "%.*f", decimals[unit >= 0 && unit < 4 ? unit : 3],
		  (double)ns / render_unit_div(unit));
}

static void render_csv_table(struct sbuf *b, const struct rtable *t, size_t index,
			     const struct rformat_opts *o)
{
	(void)index;
	sb_printf(b, "# %s%s", t->title, t->group[0] ? ": " : "");
	render_esc_text(b, t->group, strlen(t->group)); /* one line, whatever the file name */
	sb_lit(b, "\n");
	if (t->empty) { /* a view asked for with nothing to show: no header, no rows */
		sb_printf(b, "# %s\n\n", t->empty);
		return;
	}
	bool levels = render_has_levels(t);
	bool first = true;
	if (levels) {
		sb_lit(b, "level");
		first = false;
	}
	static const char *const stat_sfx[] = { "_total", "_avg", "_max", "_min", "_ratio" };
	int order[RTABLE_MAX_COLS];
	int ncols = render_col_order(t, o, order);
	for (int k = 0; k < ncols; k++) {
		const struct rcol *col = &t->cols[order[k]];
		if (col->kind == RCOL_STATS) {
			for (int s = 0; s < 5; s++) {
				if (!first)
					sb_lit(b, ",");
				first = false;
				csv_key(b, col->key, col->key[0] ? stat_sfx[s] : stat_sfx[s] + 1,
					o->unit, s < 4);
			}
			continue;
		}
		if (!first)
			sb_lit(b, ",");
		first = false;
		csv_key(b, col->key, NULL, o->unit, col->kind == RCOL_TIME);
	}
	sb_lit(b, "\n");
	size_t nrows = render_rows_shown(t, o);
	for (size_t r = 0; r < nrows; r++) {
		if (t->rows[r].text_only)
			continue;
		first = true;
		if (levels) {
			sb_printf(b, "%d", t->rows[r].indent);
			first = false;
		}
		for (int k = 0; k < ncols; k++) {
			const struct rcol *col = &t->cols[order[k]];
			const struct rcell *x = &t->rows[r].cells[order[k]];
			if (!first)
				sb_lit(b, ",");
			first = false;
			switch (col->kind) {
			case RCOL_TEXT:
				escape_csv_cell(sb_sink(b), x->text ? x->text : "",
						x->text ? x->len : 0);
				break;
			case RCOL_COUNT:
				if (!x->empty)
					sb_printf(b, "%" PRId64, x->i);
				break;
			case RCOL_TIME:
				if (!x->empty)
					csv_time(b, x->i, o->unit);
				break;
			case RCOL_RATIO:
				if (!x->empty)
					sb_printf(b, "%.6f", x->ratio);
				break;
			case RCOL_NUMBER:
				if (!x->empty)
					sb_printf(b, "%.9g", x->num);
				break;
			case RCOL_STATS:
				if (!x->empty)
					csv_time(b, x->st.total, o->unit);
				sb_lit(b, ",");
				if (!x->empty && !x->st.only_total)
					csv_time(b, x->st.avg, o->unit);
				sb_lit(b, ",");
				if (!x->empty && !x->st.only_total)
					csv_time(b, x->st.max, o->unit);
				sb_lit(b, ",");
				if (!x->empty && !x->st.only_total)
					csv_time(b, x->st.min, o->unit);
				sb_lit(b, ",");
				if (!x->empty)
					sb_printf(b, "%.6f", x->st.ratio);
				break;
			}
		}
		sb_lit(b, "\n");
	}
	sb_lit(b, "\n");
}

const struct render_ops render_csv_ops = { NULL, render_csv_table, NULL };
