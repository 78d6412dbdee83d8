/*
 * render.c: what the renderers share (render.h): the output buffer,
 * column selection and row limits; and report_render, which picks the renderer of the
 * format and writes the output table by table, so that a report of many tables never sits
 * whole in memory.
 */
#include "report/render.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/strlist.h"

/* ---------------------------------------------------------------------------------------- */
/* Output buffer */

void sb_write(void *ctx, const char *s, size_t n)
{
	struct sbuf *b = ctx;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->s, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Column selection, row limits, units */

/* The key --columns names a column by: the kernel table's unprefixed GPU statistics answer
 * to "gpu". */
static const char *col_key(const struct rcol *c)
{
	return c->key[0] ? c->key : "gpu";
}

bool render_col_shown(const struct rformat_opts *o, const struct rcol *c)
{
	if (o->format == RFORMAT_TEXT && (c->flags & RCOL_F_TEXT_HIDDEN))
		return false;
	const char *key = col_key(c);
	return !o->columns || strlist_has(o->columns, key, strlen(key));
}

int render_col_order(const struct rtable *t, const struct rformat_opts *o,
		     int order[RTABLE_MAX_COLS])
{
	int n = 0;
	if (!o->columns) {
		for (int c = 0; c < t->ncols; c++)
			if (render_col_shown(o, &t->cols[c]))
				order[n++] = c;
		return n;
	}
	/* the order of the list; a key named twice keeps its first place */
	bool taken[RTABLE_MAX_COLS] = { false };
	const char *list = o->columns, *item;
	size_t len;
	while ((len = strlist_next(&list, &item)) != (size_t)-1)
		for (int c = 0; c < t->ncols; c++) {
			const char *key = col_key(&t->cols[c]);
			if (taken[c] || strlen(key) != len || memcmp(key, item, len) != 0 ||
			    !render_col_shown(o, &t->cols[c]))
				continue;
			taken[c] = true;
			order[n++] = c;
		}
	return n;
}

const char *rformat_unknown_column(const char *columns, struct rtable *const *tables, size_t n,
				   char *buf, size_t size)
{
	const char *item;
	size_t len;
	while (size > 0 && (len = strlist_next(&columns, &item)) != (size_t)-1) {
		bool found = false;
		for (size_t i = 0; i < n && !found; i++)
			for (int c = 0; c < tables[i]->ncols && !found; c++) {
				const char *key = col_key(&tables[i]->cols[c]);
				found = strlen(key) == len && memcmp(key, item, len) == 0;
			}
		if (!found) {
			size_t k = len < size - 1 ? len : size - 1;
			memcpy(buf, item, k);
			buf[k] = '\0';
			return buf;
		}
	}
	return NULL;
}

/* Rows to print: the first `top` rows at level 0 and the rows under them. */
size_t render_rows_shown(const struct rtable *t, const struct rformat_opts *o)
{
	if (!o->top)
		return t->nrows;
	size_t top = 0, i = 0;
	for (; i < t->nrows; i++) {
		if (t->rows[i].indent == 0 && top++ == o->top)
			break;
	}
	return i;
}

bool render_has_levels(const struct rtable *t)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (t->rows[r].indent && !t->rows[r].text_only)
			return true;
	return false;
}

double render_unit_div(int unit)
{
	static const double div[] = { 1e9, 1e6, 1e3, 1 };
	return unit >= 0 && unit < 4 ? div[unit] : 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Dispatch */

/* The renderer of each format. */
static const struct render_ops *const renderers[] = {
	[RFORMAT_TEXT] = &render_text_ops,
	[RFORMAT_CSV] = &render_csv_ops,
	[RFORMAT_JSON] = &render_json_ops,
	[RFORMAT_HTML] = &render_html_ops,
};

/* One table under --top: its first `top` rows with the rows under them, and the summary rows
 * after those (the Step table's Average), rendered as a table of just those rows. 0, or -1
 * when out of memory (the table is rendered without its summary rows then). */
static int render_table_top(const struct render_ops *r, struct sbuf *b, const struct rtable *t,
			    size_t index, const struct rformat_opts *o)
{
	size_t cut = render_rows_shown(t, o), extra = 0;
	for (size_t i = cut; i < t->nrows; i++)
		extra += t->rows[i].summary;
	struct rrow *rows = extra ? malloc((cut + extra) * sizeof(*rows)) : NULL;
	if (!rows) {
		r->table(b, t, index, o);
		return extra ? -1 : 0;
	}
	memcpy(rows, t->rows, cut * sizeof(*rows));
	for (size_t i = cut, k = cut; i < t->nrows; i++)
		if (t->rows[i].summary)
			rows[k++] = t->rows[i];
	struct rtable view = *t; /* the same table but for its rows */
	view.rows = rows;
	view.nrows = view.rows_cap = cut + extra;
	struct rformat_opts all = *o;
	all.top = 0; /* the rows are chosen */
	r->table(b, &view, index, &all);
	free(rows);
	return 0;
}

int report_render(FILE *out, struct rtable *const *tables, size_t n, const struct rformat_opts *o,
		  const char *const *inputs, size_t ninputs)
{
	if ((size_t)o->format >= sizeof(renderers) / sizeof(renderers[0]))
		return -1;
	const struct render_ops *r = renderers[o->format];
	struct sbuf b = { NULL, 0, 0, false };
	int rc = 0;
	if (r->begin)
		r->begin(&b, inputs, ninputs);
	for (size_t i = 0; i < n; i++) {
		if (render_table_top(r, &b, tables[i], i, o) != 0)
			rc = -1;
		/* write as we go: a report of many tables never sits whole in memory */
		if (b.len && fwrite(b.s, 1, b.len, out) != b.len)
			rc = -1;
		b.len = 0;
	}
	if (r->end)
		r->end(&b);
	if (b.len && fwrite(b.s, 1, b.len, out) != b.len)
		rc = -1;
	if (b.oom)
		rc = -1;
	free(b.s);
	return rc;
}
