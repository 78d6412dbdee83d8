/*
 * render_json.c: the JSON rendering of the report: one object, {"opscope_report":1,
 * "time_unit":"ns","inputs":[...],"tables":[...]}, each table {"view","title","group",
 * "columns":[{"key","title"}],"rows":[{key: value}],"totals"}: "columns" lists the rows' keys
 * in order with the text report's header for each. Whatever the chosen unit, times are integer ns and ratios
 * fractions; empty cells are null; strings are JSON-escaped, invalid UTF-8 as U+FFFD.
 */
#include <inttypes.h>
#include <string.h>

#include "report/render.h"
#include "util/escape.h"

/* A JSON string of the report: DEL escaped too (util/escape.h). */
static void esc_json(struct sbuf *b, const char *s, size_t n)
{
	escape_json_inline(sb_sink(b), s, n, ESC_JSON_DEL);
}

static void json_ratio(struct sbuf *b, double r)
{
	if (r != r || r > 1e300 || r < -1e300) /* NaN or infinite: not JSON */
		sb_lit(b, "null");
	else
		sb_printf(b, "%.6g", r);
}

static void json_stat(struct sbuf *b, const char *key, const char *sfx, bool has, int64_t v)
{
	sb_printf(b, ",\"%s%s\":", key, key[0] ? sfx : sfx + 1);
	if (has)
		sb_printf(b, "%" PRId64, v);
	else
		sb_lit(b, "null");
}

/* One entry of "columns": {"key":..., "title":...}. The key is key and sfx ("cpu" and
 * "_avg_ns"), without the suffix's "_" when key is "" ("avg_ns"). */
static void json_col(struct sbuf *b, bool first, const char *key, const char *sfx,
		     const char *title, size_t tlen, const char *title2)
{
	sb_printf(b, "%s{\"key\":\"%s%s\",\"title\":", first ? "" : ",", key,
		  !key[0] && sfx[0] == '_' ? sfx + 1 : sfx);
	if (!title2) {
		esc_json(b, title, tlen);
	} else { /* a prefix of the stats title ("CPU ") and the part's own name ("Avg") */
		size_t n2 = strlen(title2);
		char buf[160];
		if (tlen + n2 >= sizeof buf)
			tlen = sizeof buf - 1 - n2;
		memcpy(buf, title, tlen);
		memcpy(buf + tlen, title2, n2);
		esc_json(b, buf, tlen + n2);
	}
	sb_lit(b, "}");
}

/* "columns": each key of the rows, in their order, with the text report's header for it.
 * A stats column ("CPU Total / Avg / Max / Min / Ratio(%)") gives five keys; each gets the
 * title's prefix ("CPU ") and its part ("CPU Avg"). */
static void render_json_columns(struct sbuf *b, const struct rtable *t, const int *order, int ncols)
{
	static const char *const sfx[5] = { "_total_ns", "_avg_ns", "_max_ns", "_min_ns",
					    "_ratio" };
	static const char *const part[5] = { "Total", "Avg", "Max", "Min", "Ratio(%)" };
	sb_lit(b, ",\"columns\":[");
	for (int k = 0; k < ncols; k++) {
		const struct rcol *col = &t->cols[order[k]];
		if (col->kind != RCOL_STATS) {
			json_col(b, k == 0, col->key, "", col->title, strlen(col->title), NULL);
			continue;
		}
		/* the prefix: the first part of the title up to its "Total" */
		const char *tot = strstr(col->title, "Total");
		size_t plen = tot ? (size_t)(tot - col->title) : 0;
		for (int i = 0; i < 5; i++)
			json_col(b, k == 0 && i == 0, col->key, sfx[i], col->title, plen, part[i]);
	}
	sb_lit(b, "]");
}

static void render_json_table(struct sbuf *b, const struct rtable *t, const struct rformat_opts *o)
{
	sb_printf(b, "{\"view\":\"%s\",\"title\":", t->view);
	esc_json(b, t->title, strlen(t->title));
	if (t->group[0]) {
		sb_lit(b, ",\"group\":");
		esc_json(b, t->group, strlen(t->group));
	}
	bool levels = render_has_levels(t);
	size_t nrows = render_rows_shown(t, o);
	int order[RTABLE_MAX_COLS];
	int ncols = render_col_order(t, o, order);
	render_json_columns(b, t, order, ncols);
	sb_lit(b, ",\"rows\":[");
	for (size_t r = 0, shown = 0; r < nrows; r++) {
		if (t->rows[r].text_only)
			continue;
		sb_put(b, shown ? ",{" : "{", shown ? 2 : 1);
		shown++;
		bool first = true;
		if (levels) {
			sb_printf(b, "\"level\":%d", t->rows[r].indent);
			first = false;
		}
		for (int k = 0; k < ncols; k++) {
			const struct rcol *col = &t->cols[order[k]];
			const struct rcell *x = &t->rows[r].cells[order[k]];
			if (col->kind == RCOL_STATS) {
				bool has = !x->empty, full = has && !x->st.only_total;
				sb_printf(b, "%s\"%s%s\":", first ? "" : ",", col->key,
					  col->key[0] ? "_total_ns" : "total_ns");
				if (has)
					sb_printf(b, "%" PRId64, x->st.total);
				else
					sb_lit(b, "null");
				json_stat(b, col->key, "_avg_ns", full, x->st.avg);
				json_stat(b, col->key, "_max_ns", full, x->st.max);
				json_stat(b, col->key, "_min_ns", full, x->st.min);
				sb_printf(b, ",\"%s%s\":", col->key,
					  col->key[0] ? "_ratio" : "ratio");
				if (has)
					json_ratio(b, x->st.ratio);
				else
					sb_lit(b, "null");
				first = false;
				continue;
			}
			sb_printf(b, "%s\"%s\":", first ? "" : ",", col->key);
			first = false;
			if (x->empty && col->kind != RCOL_TEXT) {
				sb_lit(b, "null");
				continue;
			}
			switch (col->kind) {
			case RCOL_TEXT:
				esc_json(b, x->text ? x->text : "", x->text ? x->len : 0);
				break;
			case RCOL_COUNT:
			case RCOL_TIME:
				sb_printf(b, "%" PRId64, x->i);
				break;
			case RCOL_RATIO:
				json_ratio(b, x->ratio);
				break;
			case RCOL_NUMBER:
				json_ratio(b, x->num);
				break;
			case RCOL_STATS:
				break;
			}
		}
		sb_lit(b, "}");
	}
	sb_lit(b, "]");
	if (t->empty) { /* a view asked for with nothing to show */
		sb_lit(b, ",\"empty\":");
		esc_json(b, t->empty, strlen(t->empty));
	}
	if (t->ntotals) {
		sb_lit(b, ",\"totals\":{");
		for (int i = 0; i < t->ntotals; i++)
			sb_printf(b, "%s\"%s\":%" PRId64, i ? "," : "", t->totals[i].key,
				  t->totals[i].v);
		sb_lit(b, "}");
	}
	sb_lit(b, "}");
}

static void render_json_begin(struct sbuf *b, const char *const *inputs, size_t ninputs)
{
	sb_lit(b, "{\"opscope_report\":1,\"time_unit\":\"ns\",\"inputs\":[");
	for (size_t i = 0; i < ninputs; i++) {
		if (i)
			sb_lit(b, ",");
		esc_json(b, inputs[i], strlen(inputs[i]));
	}
	sb_lit(b, "],\"tables\":[");
}

static void render_json_next(struct sbuf *b, const struct rtable *t, size_t index,
			     const struct rformat_opts *o)
{
	if (index)
		sb_lit(b, ",");
	render_json_table(b, t, o);
}

static void render_json_end(struct sbuf *b)
{
	sb_lit(b, "]}\n");
}

const struct render_ops render_json_ops = { render_json_begin, render_json_next, render_json_end };
