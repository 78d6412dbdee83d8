/*
 * render_text.c: the text rendering of the report's tables. The layout follows Paddle's
 * profiler_statistic (SPEC-seeds §2.5): a title centred in dashes, "Time unit: ms", dashed
 * separators per column, cells left-aligned with two spaces between columns, composite
 * "total / avg / max / min / ratio" cells with two decimals; the nvprof view follows
 * nvprof's summary (§5.2). Every name is escaped for the terminal (render_esc_text); widths
 * count code points.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/render.h"

static void fmt_time(char *buf, size_t size, int64_t ns, int unit)
{
	snprintf(buf, size, "%.2f", (double)ns / render_unit_div(unit));
}

/* The text of one cell (not escaped: names are escaped by the caller). */
/* Decimals that show v with 3 significant digits, none for |v| >= 100, at most 9. */
static int sig3_decimals(double v)
{
	double a = v < 0 ? -v : v;
	int d = 2;
	for (double lim = 1.0; a > 0 && a < lim && d < 9; lim /= 10)
		d++;
	for (double lim = 10.0; a >= lim && d > 0; lim *= 10)
		d--;
	return d;
}

/* v in decimal, as "%" PRId64 prints it, without printf's cost (a count per cell). */
static void put_i64(struct sbuf *b, int64_t v)
{
	char buf[24];
	size_t n = sizeof(buf);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		buf[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[--n] = '-';
	sb_put(b, buf + n, sizeof(buf) - n);
}

static void cell_text(struct sbuf *b, const struct rcol *c, const struct rcell *x, int unit)
{
	char t[5][48];
	switch (c->kind) {
	case RCOL_TEXT:
		render_esc_text(b, x->text ? x->text : "", x->text ? x->len : 0);
		return;
	case RCOL_COUNT:
		if (x->empty)
			sb_lit(b, "-");
		else
			put_i64(b, x->i);
		return;
	case RCOL_TIME:
		if (x->empty) {
			sb_lit(b, "-");
			return;
		}
		fmt_time(t[0], sizeof(t[0]), x->i, unit);
		sb_put(b, t[0], strlen(t[0]));
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
		else if (c->flags & RCOL_F_SIG3)
			sb_printf(b, "%.*f", sig3_decimals(x->num), x->num);
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

/* n copies of ch (' ' or '-'), a run at a time: one append per character was a tenth of
 * the time of printing a 205,000-row table. */
static void put_run(struct sbuf *b, char ch, size_t n)
{
	static const char spaces[] =
		"                                                                ";
	static const char dashes[] =
		"----------------------------------------------------------------";
	const char *run = ch == ' ' ? spaces : dashes;
	while (n > 0) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;
		sb_put(b, run, k);
		n -= k;
	}
}

static void put_padded(struct sbuf *b, const char *s, size_t len, size_t cols, size_t width)
{
	sb_put(b, s, len);
	if (cols < width)
		put_run(b, ' ', width - cols);
}

static void put_line(struct sbuf *b, char ch, size_t n)
{
	put_run(b, ch, n);
	sb_lit(b, "\n");
}

/* "-----Title-----" over `width` columns (Paddle's add_title). */
static void put_title(struct sbuf *b, const char *title, size_t width)
{
	/* a group names a file: escaped like a name */
	struct sbuf e = { NULL, 0, 0, false };
	size_t n = render_esc_text(&e, title, strlen(title));
	size_t left = width > n ? width - n : 0, half = left / 2;
	put_run(b, '-', half);
	if (e.s)
		sb_put(b, e.s, e.len);
	b->oom = b->oom || e.oom;
	free(e.s);
	put_run(b, '-', left - half);
	sb_lit(b, "\n");
}

static void render_text_paddle(struct sbuf *b, const struct rtable *t, const struct rformat_opts *o)
{
	int nc = t->ncols;
	size_t nrows = render_rows_shown(t, o);
	size_t width[RTABLE_MAX_COLS] = { 0 };
	int order[RTABLE_MAX_COLS];
	int nshown = render_col_order(t, o, order);
	int lead = nshown ? order[0] : 0; /* the column printed first */
	/* cell texts, computed once: rows x cols, one after the other in one buffer (a buffer
	 * per cell cost an allocation of at least 256 bytes each: 640 MB and a third of the
	 * time of a 205,000-row Rank Steps table); cell i is arena.s[off[i], off[i] + clen[i]) */
	struct sbuf arena = { NULL, 0, 0, false };
	size_t ncells = nrows * (size_t)nc;
	size_t *off = malloc((ncells + 1) * sizeof(*off));
	size_t *clen = malloc((ncells + 1) * sizeof(*clen));
	size_t *cols = malloc((ncells + 1) * sizeof(*cols));
	if (!off || !clen || !cols) {
		free(off);
		free(clen);
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
			size_t i = r * (size_t)nc + (size_t)c, start = arena.len;
			if (col->kind == RCOL_TEXT && c == 0 && t->rows[r].indent > 0)
				put_run(&arena, ' ', 2 * (size_t)t->rows[r].indent);
			/* a detail line (text_only) leaves its empty cells blank */
			if (!t->rows[r].text_only || !t->rows[r].cells[c].empty)
				cell_text(&arena, col, &t->rows[r].cells[c], o->unit);
			if (arena.oom) { /* the cell is not whole: stop here */
				nrows = r;
				break;
			}
			/* the cell: the tail of the arena, from start */
			const char *cs = arena.s ? arena.s + start : "";
			size_t clen_i = arena.len - start;
			size_t w = text_cols(cs, clen_i);
			/* names longer than the limit: cut, with "..." */
			size_t limit = 0;
			if (col->flags & RCOL_F_NOCUT)
				limit = 0;
			else if (col->kind == RCOL_TEXT && o->name_width > 3)
				limit = (size_t)o->name_width;
			else if (col->kind == RCOL_TEXT && col->width > 3 &&
				 ((col->flags & RCOL_F_CUT) || t->rows[r].indent > 0))
				limit = (size_t)col->width; /* Paddle cuts rows under an operator */
			if (limit && w > limit) {
				size_t keep = 0, seen = 0;
				while (keep < clen_i && seen < limit - 3) {
					keep++;
					while (keep < clen_i &&
					       ((unsigned char)cs[keep] & 0xc0) == 0x80)
						keep++;
					seen++;
				}
				arena.len = start + keep; /* the cell is the arena's tail */
				sb_lit(&arena, "...");
				clen_i = arena.len - start;
				w = limit;
			}
			off[i] = start;
			clen[i] = clen_i;
			cols[i] = w;
			if (t->rows[r].text_only)
				continue; /* detail lines overflow, they do not widen the table */
			if (col->kind == RCOL_TEXT && t->cols[c].width && w > width[c] && !limit &&
			    c == 0 && c == lead)
				continue; /* long names overflow their column, as in Paddle */
			if (w > width[c])
				width[c] = w;
		}
	}
	size_t line = 0;
	for (int k = 0; k < nshown; k++)
		line += width[order[k]] + (k ? 2 : 0);
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
		for (int k = 0; k < nshown; k++) {
			int c = order[k];
			if (k)
				sb_lit(b, "  ");
			if (pass == 1) {
				size_t n = strlen(t->cols[c].title);
				put_padded(b, t->cols[c].title, n, n, width[c]);
			} else {
				put_run(b, '-', width[c]);
			}
		}
		sb_lit(b, "\n");
	}
	for (size_t r = 0; r < nrows; r++) {
		for (int k = 0; k < nshown; k++) {
			int c = order[k];
			if (k)
				sb_lit(b, "  ");
			size_t i = r * (size_t)nc + (size_t)c;
			put_padded(b, arena.s ? arena.s + off[i] : "", clen[i], cols[i],
				   k == nshown - 1 ? 0 : width[c]);
		}
		sb_lit(b, "\n");
	}
	put_line(b, '-', line);
	if (t->note) {
		/* not sb_printf: it cuts at 511 bytes, and a note may be longer */
		sb_lit(b, "Note:\n");
		sb_put(b, t->note, strlen(t->note));
		sb_lit(b, "\n");
		put_line(b, '-', line);
	}
	sb_lit(b, "\n\n");
	b->oom = b->oom || arena.oom;
	free(arena.s);
	free(off);
	free(clen);
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
	size_t nrows = render_rows_shown(t, o);
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
		render_esc_text(b, c[7].text ? c[7].text : "", keep);
		if (cut)
			sb_lit(b, "...");
		sb_lit(b, "\n");
	}
	sb_lit(b, "\n");
}

static void render_text_table(struct sbuf *b, const struct rtable *t, size_t index,
			      const struct rformat_opts *o)
{
	(void)index;
	if (t->text_hidden)
		return;
	if (t->empty) { /* a view asked for with nothing to show: one line says so */
		sb_printf(b, "%s\n\n\n", t->empty);
		return;
	}
	if (t->style == RSTYLE_NVPROF)
		render_text_nvprof(b, t, o);
	else
		render_text_paddle(b, t, o);
}

const struct render_ops render_text_ops = { NULL, render_text_table, NULL };
