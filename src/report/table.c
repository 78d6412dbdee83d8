/*
 * table.c: the report's tables (table.h): building them (columns, rows, cells, strings owned
 * by the table) and the time units. Rendering is in render.c and one render_<format>.c per
 * format.
 *
 * A table owns its strings and cells in an arena of blocks that never move, so a cell's text
 * stays where it was put until rtable_free; columns come before the first row.
 */
#include "report/table.h"

#include <stdlib.h>
#include <string.h>

/* Memory owned by a table: blocks that never move, freed together. */
struct rarena {
	struct rarena *next;
	size_t used, cap;
	max_align_t data[];
};

static void *arena_alloc(struct rtable *t, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	struct rarena *a = t->arena;
	if (!a || a->cap - a->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		struct rarena *na = malloc(sizeof(*na) + cap);
		if (!na) {
			t->oom = true;
			return NULL;
		}
		na->next = a;
		na->used = 0;
		na->cap = cap;
		t->arena = na;
		a = na;
	}
	void *p = (char *)a->data + a->used;
	a->used += n;
	return p;
}

struct rtable *rtable_new(const char *view, const char *title)
{
	struct rtable *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->view = view;
	snprintf(t->title, sizeof(t->title), "%s", title);
	return t;
}

void rtable_free(struct rtable *t)
{
	if (!t)
		return;
	struct rarena *a = t->arena;
	while (a) {
		struct rarena *n = a->next;
		free(a);
		a = n;
	}
	free(t->rows);
	free(t);
}

int rtable_col(struct rtable *t, const char *title, const char *key, enum rcol_kind kind, int width)
{
	if (t->ncols == RTABLE_MAX_COLS || t->nrows) {
		t->oom = true; /* a programming error: columns first, at most RTABLE_MAX_COLS */
		return 0;
	}
	t->cols[t->ncols] = (struct rcol){ title, key, kind, width, 0 };
	return t->ncols++;
}

void rtable_col_flags(struct rtable *t, int c, int flags)
{
	if (c >= 0 && c < t->ncols)
		t->cols[c].flags = flags;
}

struct rrow *rtable_row(struct rtable *t, int level)
{
	if (t->nrows == t->rows_cap) {
		size_t cap = t->rows_cap ? t->rows_cap * 2 : 64;
		struct rrow *r = realloc(t->rows, cap * sizeof(*r));
		if (!r) {
			t->oom = true;
			return NULL;
		}
		t->rows = r;
		t->rows_cap = cap;
	}
	struct rcell *cells = arena_alloc(t, (size_t)t->ncols * sizeof(*cells));
	if (!cells)
		return NULL;
	memset(cells, 0, (size_t)t->ncols * sizeof(*cells));
	struct rrow *r = &t->rows[t->nrows++];
	r->cells = cells;
	r->indent = level;
	r->summary = false;
	r->text_only = false;
	return r;
}

const char *rtable_str(struct rtable *t, const char *s, size_t len)
{
	char *p = arena_alloc(t, len + 1);
	if (!p)
		return "";
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void rtable_total(struct rtable *t, const char *key, int64_t v)
{
	if (t->ntotals < (int)(sizeof(t->totals) / sizeof(t->totals[0]))) {
		t->totals[t->ntotals].key = key;
		t->totals[t->ntotals++].v = v;
	}
}

void rcell_text(struct rrow *r, int col, const char *s, size_t len)
{
	r->cells[col].text = s;
	r->cells[col].len = len;
}

int rformat_unit(const char *name)
{
	static const char *const units[] = { "s", "ms", "us", "ns" };
	for (int i = 0; i < 4; i++)
		if (strcmp(name, units[i]) == 0)
			return i;
	return -1;
}

int rformat_from_name(const char *name)
{
	static const char *const names[] = { "text", "csv", "json", "html" }; /* enum order */
	for (int i = 0; i < 4; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

const char *rformat_unit_name(int unit)
{
	static const char *const units[] = { "s", "ms", "us", "ns" };
	return unit >= 0 && unit < 4 ? units[unit] : "ns";
}
