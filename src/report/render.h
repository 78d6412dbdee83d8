/*
 * render.h: what the renderers of the report's tables share, and the one list of them.
 *
 * A renderer (render_text.c, render_csv.c, render_json.c, render_html.c) appends the rendering of one table
 * at a time to an output buffer; report_render (table.h, render.c) picks the renderer of
 * RFORMAT_* from its list and writes the buffer out after each table. A new format is one more
 * file and one more row in that list. Renderers never compute: they format what the
 * cells hold. Internal to src/report.
 */
#ifndef OPSCOPE_REPORT_RENDER_H
#define OPSCOPE_REPORT_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/table.h"
#include "util/escape.h"

/* A growing output string; once an append fails it stays as it was, with oom set. */
struct sbuf {
	char *s;    /* the text, NUL-terminated (NULL before the first append) */
	size_t len; /* bytes of text */
	size_t cap; /* bytes allocated */
	bool oom;   /* an append failed: the text is incomplete */
};

/* Append s[0..n) to the sbuf at ctx; the put function of sb_sink. */
void sb_write(void *ctx, const char *s, size_t n);
static inline void sb_put(struct sbuf *b, const char *s, size_t n)
{
	sb_write(b, s, n);
}
/* b as the sink of an escaper (util/escape.h). */
static inline struct esc_sink sb_sink(struct sbuf *b)
{
	return (struct esc_sink){ sb_write, b };
}
/* A string literal, its length counted by the compiler. */
#define sb_lit(b, lit) sb_put((b), (lit), sizeof(lit) - 1)
/* printf into b; at most 511 bytes at a time. */
void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Terminal-safe text (escape_terminal, \r as \r); returns the display width. */
static inline size_t render_esc_text(struct sbuf *b, const char *s, size_t n)
{
	return escape_terminal(sb_sink(b), s, n, ESC_TERM_CR);
}

/* Is column c shown (--columns, and RCOL_F_TEXT_HIDDEN in text)? */
bool render_col_shown(const struct rformat_opts *o, const struct rcol *c);
/* The columns of t to show, as indexes into t->cols, in the order to show them: the order
 * of --columns when it is given (as the user asked; a key named twice counts once), else the
 * table's own. Returns how many. Every renderer goes through this, so that text, CSV and JSON
 * show the same columns in the same order. */
int render_col_order(const struct rtable *t, const struct rformat_opts *o,
		     int order[RTABLE_MAX_COLS]);
/* Rows to print: the first `top` rows at level 0 and the rows under them. */
size_t render_rows_shown(const struct rtable *t, const struct rformat_opts *o);
/* Has the table rows under rows (a "level" column in CSV and JSON)? */
bool render_has_levels(const struct rtable *t);
/* ns per time unit (rformat_opts.unit). */
double render_unit_div(int unit);

/* One output format. */
struct render_ops {
	/* Before the first table (NULL: nothing); `inputs` name the loaded files. */
	void (*begin)(struct sbuf *b, const char *const *inputs, size_t ninputs);
	/* One table; `index` counts the tables before it. */
	void (*table)(struct sbuf *b, const struct rtable *t, size_t index,
		      const struct rformat_opts *o);
	/* After the last table (NULL: nothing). */
	void (*end)(struct sbuf *b);
};

extern const struct render_ops render_text_ops; /* render_text.c */
extern const struct render_ops render_csv_ops;	/* render_csv.c */
extern const struct render_ops render_json_ops; /* render_json.c */
extern const struct render_ops render_html_ops; /* render_html.c */

#endif
