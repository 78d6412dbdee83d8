/*
 * table.c: report tables (table.h) and their text, CSV and JSON renderings.
 *
 * The text layout follows Paddle's profiler_statistic (SPEC-seeds §2.5): a title centred in
 * dashes, "Time unit: ms", dashed separators per column, cells left-aligned with two spaces
 * between columns, composite "total / avg / max / min / ratio" cells with two decimals; the
 * nvprof view follows nvprof's summary (§5.2).
 */
#include "report/table.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/strlist.h"
#include "util/utf8.h"

/* ---------------------------------------------------------------------------------------- */
/* Construction */

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

const char *rformat_unit_name(int unit)
{
	static const char *const units[] = { "s", "ms", "us", "ns" };
	return unit >= 0 && unit < 4 ? units[unit] : "ns";
}

static double unit_div(int unit)
{
	static const double div[] = { 1e9, 1e6, 1e3, 1 };
	return unit >= 0 && unit < 4 ? div[unit] : 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Escaping */

/* A growing output string. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
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

/* A string literal, its length counted by the compiler. */
#define sb_lit(b, lit) sb_put((b), (lit), sizeof(lit) - 1)

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Terminal-safe text: control characters and invalid UTF-8 escaped; *cols gets the display
 * width (one column per code point). */
static void esc_text(struct sbuf *b, const char *s, size_t n, size_t *cols)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t w = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i; /* a run of printable ASCII in one piece */
		while (j < n && u[j] >= 0x20 && u[j] < 0x7f && u[j] != '\\')
			j++;
		if (j > i) {
			sb_put(b, s + i, j - i);
			w += j - i;
			i = j;
			continue;
		}
		unsigned char c = u[i];
		char e[8];
		if (c == '\\') {
			sb_lit(b, "\\\\");
			w += 2;
			i++;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			e[0] = '\\';
			e[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			sb_put(b, e, 2);
			w += 2;
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(e, sizeof(e), "\\x%02x", c);
			sb_put(b, e, 4);
			w += 4;
			i++;
		} else {
			size_t l = utf8_seq_len(u + i, n - i);
			/* C1 controls (U+0080..U+009F) are terminal escapes too, as in
			 * cli_put_escaped(): both bytes as \xNN */
			if (l == 2 && c == 0xc2 && u[i + 1] < 0xa0)
				l = 0;
			if (l == 0) {
				snprintf(e, sizeof(e), "\\x%02x", c);
				sb_put(b, e, 4);
				w += 4;
				i++;
			} else {
				sb_put(b, s + i, l);
				w++;
				i += l;
			}
		}
	}
	if (cols)
		*cols = w;
}

static void esc_json(struct sbuf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	sb_lit(b, "\"");
	for (size_t i = 0; i < n;) {
		/* a run of printable ASCII that needs no escape goes in one piece */
		size_t j = i;
		while (j < n && u[j] >= 0x20 && u[j] < 0x7f && u[j] != '"' && u[j] != '\\')
			j++;
		if (j > i) {
			sb_put(b, s + i, j - i);
			i = j;
			continue;
		}
		unsigned char c = u[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			sb_put(b, e, 2);
			i++;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			char e[2] = { '\\', c == '\n' ? 'n' : c == '\t' ? 't' : 'r' };
			sb_put(b, e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			char e[8];
			snprintf(e, sizeof(e), "\\u%04x", c);
			sb_put(b, e, 6);
			i++;
		} else {
			size_t l = utf8_seq_len(u + i, n - i);
			if (l == 0) {
				sb_lit(b, "\\ufffd");
				i++;
			} else {
				sb_put(b, s + i, l);
				i += l;
			}
		}
	}
	sb_lit(b, "\"");
}

/* RFC 4180: quoted when needed, quotes doubled; invalid UTF-8 as U+FFFD so that spreadsheet
 * tools read the file. */
static void esc_csv(struct sbuf *b, const char *s, size_t n)
{
	bool quote = false;
	for (size_t i = 0; i < n && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	if (quote)
		sb_lit(b, "\"");
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t j = i; /* a run of ASCII other than '"' in one piece */
		while (j < n && u[j] < 0x80 && u[j] != '"')
			j++;
		if (j > i) {
			sb_put(b, s + i, j - i);
			i = j;
			continue;
		}
		size_t l = utf8_seq_len(u + i, n - i);
		if (l == 0) {
			sb_lit(b, "\xef\xbf\xbd");
			i++;
		} else if (u[i] == '"') {
			sb_lit(b, "\"\"");
			i++;
		} else {
			sb_put(b, s + i, l);
			i += l;
		}
	}
	if (quote)
		sb_lit(b, "\"");
}

/* ---------------------------------------------------------------------------------------- */
/* Column selection and row limits */

static bool col_shown(const struct rformat_opts *o, const struct rcol *c)
{
	if (o->format == RFORMAT_TEXT && (c->flags & RCOL_F_TEXT_HIDDEN))
		return false;
	/* the kernel table's unprefixed GPU statistics answer to "gpu" */
	const char *key = c->key[0] ? c->key : "gpu";
	return !o->columns || strlist_has(o->columns, key, strlen(key));
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
				const char *key = tables[i]->cols[c].key;
				key = key[0] ? key : "gpu";
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
static size_t rows_shown(const struct rtable *t, const struct rformat_opts *o)
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

/* ---------------------------------------------------------------------------------------- */
/* Text */

static void fmt_time(char *buf, size_t size, int64_t ns, int unit)
{
	snprintf(buf, size, "%.2f", (double)ns / unit_div(unit));
}

/* The text of one cell (not escaped: names are escaped by the caller). */
static void cell_text(struct sbuf *b, const struct rcol *c, const struct rcell *x, int unit)
{
	char t[5][48];
	switch (c->kind) {
	case RCOL_TEXT:
		esc_text(b, x->text ? x->text : "", x->text ? x->len : 0, NULL);
		return;
	case RCOL_COUNT:
		if (x->empty)
			sb_lit(b, "-");
		else
			sb_printf(b, "%" PRId64, x->i);
		return;
	case RCOL_TIME:
		if (x->empty) {
			sb_lit(b, "-");
			return;
		}
		fmt_time(t[0], sizeof(t[0]), x->i, unit);
		sb_printf(b, "%s", t[0]);
		return;
	case RCOL_RATIO:
		if (x->empty)
			sb_lit(b, "-");
		else
			sb_printf(b, "%.2f", x->ratio * 100.0);
		return;
	case RCOL_NUMBER:
		if (x->empty)
			sb_lit(b, "-");
		else
			sb_printf(b, "%.5f", x->num);
		return;
	case RCOL_STATS:
		if (x->empty) {
			sb_lit(b, "- / - / - / - / -");
			return;
		}
		fmt_time(t[0], sizeof(t[0]), x->st.total, unit);
		if (x->st.only_total) {
			sb_printf(b, "%s / - / - / - / %.2f", t[0], x->st.ratio * 100.0);
			return;
		}
		fmt_time(t[1], sizeof(t[1]), x->st.avg, unit);
		fmt_time(t[2], sizeof(t[2]), x->st.max, unit);
		fmt_time(t[3], sizeof(t[3]), x->st.min, unit);
		sb_printf(b, "%s / %s / %s / %s / %.2f", t[0], t[1], t[2], t[3],
			  x->st.ratio * 100.0);
		return;
	}
}

/* Display width of a UTF-8 string (one column per code point). */
static size_t text_cols(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

static void put_padded(struct sbuf *b, const char *s, size_t len, size_t cols, size_t width)
{
	sb_put(b, s, len);
	for (size_t i = cols; i < width; i++)
		sb_lit(b, " ");
}

static void put_line(struct sbuf *b, char ch, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_put(b, &ch, 1);
	sb_lit(b, "\n");
}

/* "-----Title-----" over `width` columns (Paddle's add_title). */
static void put_title(struct sbuf *b, const char *title, size_t width)
{
	/* a group names a file: escaped like a name */
	struct sbuf e = { NULL, 0, 0, false };
	size_t n = 0;
	esc_text(&e, title, strlen(title), &n);
	size_t left = width > n ? width - n : 0, half = left / 2;
	for (size_t i = 0; i < half; i++)
		sb_lit(b, "-");
	if (e.s)
		sb_put(b, e.s, e.len);
	b->oom = b->oom || e.oom;
	free(e.s);
	for (size_t i = half; i < left; i++)
		sb_lit(b, "-");
	sb_lit(b, "\n");
}

static void render_text_paddle(struct sbuf *b, const struct rtable *t, const struct rformat_opts *o)
{
	int nc = t->ncols;
	size_t nrows = rows_shown(t, o);
	size_t width[RTABLE_MAX_COLS] = { 0 };
	/* cell texts, computed once: rows x cols */
	struct sbuf *cells = calloc(nrows * (size_t)nc + 1, sizeof(*cells));
	size_t *cols = calloc(nrows * (size_t)nc + 1, sizeof(*cols));
	if (!cells || !cols) {
		free(cells);
		free(cols);
		b->oom = true;
		return;
	}
	for (int c = 0; c < nc; c++) {
		size_t w = (size_t)t->cols[c].width;
		if (t->cols[c].kind == RCOL_TEXT && o->name_width > 3 && w > (size_t)o->name_width)
			w = (size_t)o->name_width; /* -w narrows the name column too */
		width[c] = strlen(t->cols[c].title) > w ? strlen(t->cols[c].title) : w;
	}
	for (size_t r = 0; r < nrows; r++) {
		for (int c = 0; c < nc; c++) {
			const struct rcol *col = &t->cols[c];
			struct sbuf *cb = &cells[r * (size_t)nc + (size_t)c];
			if (col->kind == RCOL_TEXT && c == 0)
				for (int k = 0; k < 2 * t->rows[r].indent; k++)
					sb_lit(cb, " ");
			cell_text(cb, col, &t->rows[r].cells[c], o->unit);
			size_t w = cb->s ? text_cols(cb->s, cb->len) : 0;
			/* names longer than the limit: cut, with "..." */
			size_t limit = 0;
			if (col->kind == RCOL_TEXT && o->name_width > 3)
				limit = (size_t)o->name_width;
			else if (col->kind == RCOL_TEXT && col->width > 3 &&
				 ((col->flags & RCOL_F_CUT) || t->rows[r].indent > 0))
				limit = (size_t)col->width; /* Paddle cuts rows under an operator */
			if (limit && w > limit) {
				size_t keep = 0, seen = 0;
				while (keep < cb->len && seen < limit - 3) {
					keep++;
					while (keep < cb->len &&
					       ((unsigned char)cb->s[keep] & 0xc0) == 0x80)
						keep++;
					seen++;
				}
				cb->len = keep;
				sb_lit(cb, "...");
				w = limit;
			}
			cols[r * (size_t)nc + (size_t)c] = w;
			if (col->kind == RCOL_TEXT && t->cols[c].width && w > width[c] && !limit &&
			    c == 0)
				continue; /* long names overflow their column, as in Paddle */
			if (w > width[c])
				width[c] = w;
		}
	}
	size_t line = 0;
	int shown = 0;
	for (int c = 0; c < nc; c++)
		if (col_shown(o, &t->cols[c])) {
			line += width[c] + (shown ? 2 : 0);
			shown++;
		}
	put_title(b, t->title, line);
	if (t->group[0])
		put_title(b, t->group, line);
	/* as in Paddle's newer layout, not on a table without times (the Device Summary) */
	bool times = false;
	for (int c = 0; c < t->ncols; c++)
		times = times || t->cols[c].kind == RCOL_TIME || t->cols[c].kind == RCOL_STATS;
	if (times)
		sb_printf(b, "Time unit: %s\n", rformat_unit_name(o->unit));
	/* separator, header, separator */
	for (int pass = 0; pass < 3; pass++) {
		bool first = true;
		for (int c = 0; c < nc; c++) {
			if (!col_shown(o, &t->cols[c]))
				continue;
			if (!first)
				sb_lit(b, "  ");
			first = false;
			if (pass == 1) {
				size_t n = strlen(t->cols[c].title);
				put_padded(b, t->cols[c].title, n, n, width[c]);
			} else {
				for (size_t k = 0; k < width[c]; k++)
					sb_lit(b, "-");
			}
		}
		sb_lit(b, "\n");
	}
	for (size_t r = 0; r < nrows; r++) {
		bool first = true;
		int last = nc - 1;
		while (last > 0 && !col_shown(o, &t->cols[last]))
			last--;
		for (int c = 0; c < nc; c++) {
			if (!col_shown(o, &t->cols[c]))
				continue;
			if (!first)
				sb_lit(b, "  ");
			first = false;
			struct sbuf *cb = &cells[r * (size_t)nc + (size_t)c];
			put_padded(b, cb->s ? cb->s : "", cb->len, cols[r * (size_t)nc + (size_t)c],
				   c == last ? 0 : width[c]);
		}
		sb_lit(b, "\n");
	}
	put_line(b, '-', line);
	if (t->note) {
		sb_printf(b, "Note:\n%s\n", t->note);
		put_line(b, '-', line);
	}
	sb_lit(b, "\n\n");
	for (size_t i = 0; i < nrows * (size_t)nc; i++)
		free(cells[i].s);
	free(cells);
	free(cols);
}

void rformat_nvprof_time(char *buf, size_t size, int64_t ns)
{
	double v = (double)ns;
	if (ns < 1000) {
		snprintf(buf, size, "%" PRId64 "ns", ns);
	} else if (v < 1e6) {
		v /= 1e3;
		snprintf(buf, size, v < 10 ? "%.4fus" : v < 100 ? "%.3fus" : "%.2fus", v);
	} else if (v < 1e9) {
		v /= 1e6;
		snprintf(buf, size, v < 10 ? "%.4fms" : v < 100 ? "%.3fms" : "%.2fms", v);
	} else {
		v /= 1e9;
		snprintf(buf, size, v < 10 ? "%.5fs" : v < 100 ? "%.4fs" : "%.3fs", v);
	}
}

/* nvprof's layout: the columns are fixed (section, ratio, total, calls, avg, min, max, name). */
static void render_text_nvprof(struct sbuf *b, const struct rtable *t, const struct rformat_opts *o)
{
	size_t nrows = rows_shown(t, o);
	sb_printf(b, "==opscope== Profiling result:\n");
	sb_printf(b, "%16s  %7s  %8s  %8s  %8s  %8s  %8s  %s\n", "Type", "Time(%)", "Time", "Calls",
		  "Avg", "Min", "Max", "Name");
	const char *prev = NULL;
	for (size_t r = 0; r < nrows; r++) {
		const struct rcell *c = t->rows[r].cells;
		const char *sec = c[0].text ? c[0].text : "";
		const char *label = "";
		if (!prev || strcmp(prev, sec) != 0)
			label = strcmp(sec, "gpu") == 0 ? "GPU activities:" : "API calls:";
		prev = sec;
		char pct[16], tot[24], avg[24], mn[24], mx[24];
		snprintf(pct, sizeof(pct), "%.2f%%", c[1].ratio * 100.0);
		rformat_nvprof_time(tot, sizeof(tot), c[2].i);
		rformat_nvprof_time(avg, sizeof(avg), c[4].i);
		rformat_nvprof_time(mn, sizeof(mn), c[5].i);
		rformat_nvprof_time(mx, sizeof(mx), c[6].i);
		sb_printf(b, "%16s  %7s  %8s  %8" PRId64 "  %8s  %8s  %8s  ", label, pct, tot,
			  c[3].i, avg, mn, mx);
		size_t nlen = c[7].text ? c[7].len : 0;
		size_t keep = nlen;
		bool cut = o->name_width > 3 && text_cols(c[7].text, nlen) > (size_t)o->name_width;
		if (cut) { /* the first name_width - 3 code points */
			size_t seen = 0;
			for (keep = 0; keep < nlen && seen < (size_t)o->name_width - 3; seen++)
				do
					keep++;
				while (keep < nlen &&
				       ((unsigned char)c[7].text[keep] & 0xc0) == 0x80);
		}
		esc_text(b, c[7].text ? c[7].text : "", keep, NULL);
		if (cut)
			sb_lit(b, "...");
		sb_lit(b, "\n");
	}
	sb_lit(b, "\n");
}

/* ---------------------------------------------------------------------------------------- */
/* CSV */

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
		  (double)ns / unit_div(unit));
}

static bool has_levels(const struct rtable *t)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (t->rows[r].indent)
			return true;
	return false;
}

static void render_csv(struct sbuf *b, const struct rtable *t, const struct rformat_opts *o)
{
	sb_printf(b, "# %s%s", t->title, t->group[0] ? ": " : "");
	esc_text(b, t->group, strlen(t->group), NULL); /* one line, whatever the file name */
	sb_lit(b, "\n");
	bool levels = has_levels(t);
	bool first = true;
	if (levels) {
		sb_lit(b, "level");
		first = false;
	}
	static const char *const stat_sfx[] = { "_total", "_avg", "_max", "_min", "_ratio" };
	for (int c = 0; c < t->ncols; c++) {
		const struct rcol *col = &t->cols[c];
		if (!col_shown(o, col))
			continue;
		if (col->kind == RCOL_STATS) {
			for (int k = 0; k < 5; k++) {
				if (!first)
					sb_lit(b, ",");
				first = false;
				csv_key(b, col->key, col->key[0] ? stat_sfx[k] : stat_sfx[k] + 1,
					o->unit, k < 4);
			}
			continue;
		}
		if (!first)
			sb_lit(b, ",");
		first = false;
		csv_key(b, col->key, NULL, o->unit, col->kind == RCOL_TIME);
	}
	sb_lit(b, "\n");
	size_t nrows = rows_shown(t, o);
	for (size_t r = 0; r < nrows; r++) {
		first = true;
		if (levels) {
			sb_printf(b, "%d", t->rows[r].indent);
			first = false;
		}
		for (int c = 0; c < t->ncols; c++) {
			const struct rcol *col = &t->cols[c];
			const struct rcell *x = &t->rows[r].cells[c];
			if (!col_shown(o, col))
				continue;
			if (!first)
				sb_lit(b, ",");
			first = false;
			switch (col->kind) {
			case RCOL_TEXT:
				esc_csv(b, x->text ? x->text : "", x->text ? x->len : 0);
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

/* ---------------------------------------------------------------------------------------- */
/* JSON */

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

static void render_json_table(struct sbuf *b, const struct rtable *t, const struct rformat_opts *o)
{
	sb_printf(b, "{\"view\":\"%s\",\"title\":", t->view);
	esc_json(b, t->title, strlen(t->title));
	if (t->group[0]) {
		sb_lit(b, ",\"group\":");
		esc_json(b, t->group, strlen(t->group));
	}
	sb_lit(b, ",\"rows\":[");
	bool levels = has_levels(t);
	size_t nrows = rows_shown(t, o);
	for (size_t r = 0; r < nrows; r++) {
		sb_put(b, r ? ",{" : "{", r ? 2 : 1);
		bool first = true;
		if (levels) {
			sb_printf(b, "\"level\":%d", t->rows[r].indent);
			first = false;
		}
		for (int c = 0; c < t->ncols; c++) {
			const struct rcol *col = &t->cols[c];
			const struct rcell *x = &t->rows[r].cells[c];
			if (!col_shown(o, col))
				continue;
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
	if (t->ntotals) {
		sb_lit(b, ",\"totals\":{");
		for (int i = 0; i < t->ntotals; i++)
			sb_printf(b, "%s\"%s\":%" PRId64, i ? "," : "", t->totals[i].key,
				  t->totals[i].v);
		sb_lit(b, "}");
	}
	sb_lit(b, "}");
}

/* ---------------------------------------------------------------------------------------- */

int report_render(FILE *out, struct rtable *const *tables, size_t n, const struct rformat_opts *o,
		  const char *const *inputs, size_t ninputs)
{
	struct sbuf b = { NULL, 0, 0, false };
	int rc = 0;
	if (o->format == RFORMAT_JSON) {
		sb_lit(&b, "{\"opscope_report\":1,\"time_unit\":\"ns\",\"inputs\":[");
		for (size_t i = 0; i < ninputs; i++) {
			if (i)
				sb_lit(&b, ",");
			esc_json(&b, inputs[i], strlen(inputs[i]));
		}
		sb_lit(&b, "],\"tables\":[");
	}
	for (size_t i = 0; i < n; i++) {
		const struct rtable *t = tables[i];
		switch (o->format) {
		case RFORMAT_TEXT:
			if (t->style == RSTYLE_NVPROF)
				render_text_nvprof(&b, t, o);
			else
				render_text_paddle(&b, t, o);
			break;
		case RFORMAT_CSV:
			render_csv(&b, t, o);
			break;
		case RFORMAT_JSON:
			if (i)
				sb_lit(&b, ",");
			render_json_table(&b, t, o);
			break;
		}
		/* write as we go: a report of many tables never sits whole in memory */
		if (b.len && fwrite(b.s, 1, b.len, out) != b.len)
			rc = -1;
		b.len = 0;
	}
	if (o->format == RFORMAT_JSON)
		sb_lit(&b, "]}\n");
	if (b.len && fwrite(b.s, 1, b.len, out) != b.len)
		rc = -1;
	if (b.oom)
		rc = -1;
	free(b.s);
	return rc;
}
