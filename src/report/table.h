/*
 * table.h: the tables `opscope report` prints, and their three renderings.
 *
 * A view (views.h) fills tables; the renderers turn them into text laid out like Paddle's
 * profiler summary (or nvprof's, for the nvprof view), CSV (RFC 4180), or JSON: one file each
 * (render_text.c, render_csv.c, render_json.c), picked by report_render (render.c, render.h).
 * Every string that came from a trace is escaped for where it goes: control characters and
 * invalid UTF-8 for the terminal, quotes for CSV, JSON escapes (invalid UTF-8 as U+FFFD) for
 * JSON.
 *
 * Values are kept in ns and as fractions; units and percentages are the renderers' business.
 * In JSON every time is an integer number of ns and every ratio a fraction, whatever the
 * chosen time unit; column keys carry the unit ("total_ns").
 */
#ifndef OPSCOPE_REPORT_TABLE_H
#define OPSCOPE_REPORT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum rcol_kind {
	RCOL_TEXT,   /* a name: left-aligned; the first text column may be indented */
	RCOL_COUNT,  /* an integer */
	RCOL_TIME,   /* ns, shown in the time unit */
	RCOL_RATIO,  /* a fraction, shown as a percentage */
	RCOL_STATS,  /* a time's total / avg / max / min / ratio: one cell in text */
	RCOL_NUMBER, /* a plain number (not a time): x.num, 5 decimals in text */
};

struct rcol {
	const char *title;   /* text header */
	const char *key;     /* JSON and CSV key; RCOL_STATS: prefix of <key>_total_ns ...
			      * ("": total_ns ...) */
	enum rcol_kind kind; /* what its cells hold */
	int width;	     /* minimum text width, in columns */
	int flags;	     /* RCOL_F_* */
};

#define RCOL_F_CUT	   1 /* text: names longer than the width are cut, with "..." */
#define RCOL_F_TEXT_HIDDEN 2 /* not shown in text (JSON and CSV only) */
#define RCOL_F_NOCUT	   8 /* RCOL_TEXT: never cut, not even by -w (sentences) */
#define RCOL_F_SIG3 \
	4 /* RCOL_NUMBER: text shows 3 significant digits (no fewer than
			      * the integer part): 32768000, 5.72, 0.000123 */

struct rstats {
	int64_t total, avg, max, min; /* ns */
	double ratio;		      /* fraction */
	bool only_total;	      /* "{total} / - / - / - / {ratio}" */
};

struct rcell {
	const char *text; /* RCOL_TEXT (not NUL-terminated: len) */
	size_t len;	  /* bytes of text */
	int64_t i;	  /* RCOL_COUNT; RCOL_TIME in ns */
	double ratio;	  /* RCOL_RATIO */
	double num;	  /* RCOL_NUMBER */
	struct rstats st; /* RCOL_STATS */
	bool empty;	  /* no value: '-' in text and CSV, null in JSON */
};

#define RTABLE_MAX_COLS 28

struct rrow {
	struct rcell *cells; /* ncols cells */
	int indent;	     /* tree level: text indents the first column by 2 per level; JSON
			      * and CSV give it as "level" */
	bool summary;	     /* a total or average of the rows above: shown whatever --top says */
	bool text_only;	     /* a detail line for the text rendering (its row above carries
			      * the same in hidden columns): not in JSON or CSV */
};

enum rstyle {
	RSTYLE_PADDLE, /* Paddle's summary layout */
	RSTYLE_NVPROF, /* nvprof's "GPU activities / API calls" layout */
};

struct rtable {
	const char *view;		   /* "kernel" */
	char title[128];		   /* "Kernel Summary" */
	char group[256];		   /* thread group or file, "" if none */
	enum rstyle style;		   /* text layout */
	struct rcol cols[RTABLE_MAX_COLS]; /* the columns, in order */
	int ncols;			   /* columns used */
	struct rrow *rows;		   /* the rows, in order */
	size_t nrows;			   /* rows used */
	size_t rows_cap;		   /* rows allocated */
	const char *note;		   /* text only: a "Note:" paragraph after the rows */
	const char *empty; /* a view asked for with nothing to show: the line that says so
			    * (text: only that line; CSV: a comment; JSON: "empty"), else NULL */
	struct {
		const char *key; /* JSON key ("gpu_busy_ns") */
		int64_t v;	 /* ns */
	} totals[8];		 /* JSON "totals" */
	int ntotals;		 /* totals used */
	bool text_hidden;	 /* text leaves the table out (CSV and JSON give it): a
				  * detail of a view that was not asked for by name */
	struct rarena *arena;	 /* owned strings and cells */
	bool oom;		 /* an allocation failed: rows or strings are missing */
};

/* Output options. */
enum rformat {
	RFORMAT_TEXT,
	RFORMAT_CSV,
	RFORMAT_JSON,
	RFORMAT_HTML, /* the JSON inside a self-contained page (render_html.c) */
};

struct rformat_opts {
	enum rformat format;
	int unit;	     /* 0 s, 1 ms, 2 us, 3 ns */
	int name_width;	     /* text: cut names longer than this (0: the table's own rule) */
	const char *columns; /* comma list of keys to show, NULL for all */
	size_t top;	     /* rows per table (0: all); sub-rows follow their parent */
};

struct rtable *rtable_new(const char *view, const char *title);
void rtable_free(struct rtable *t);
/* Add a column; returns its index. */
int rtable_col(struct rtable *t, const char *title, const char *key, enum rcol_kind kind,
	       int width);
/* Set RCOL_F_* flags of column c. */
void rtable_col_flags(struct rtable *t, int c, int flags);
/* Append a row of blank cells and return it (NULL when out of memory: t->oom). */
struct rrow *rtable_row(struct rtable *t, int level);
/* A copy of s owned by the table. */
const char *rtable_str(struct rtable *t, const char *s, size_t len);
void rtable_total(struct rtable *t, const char *key, int64_t v);

/* Set a text cell (the text must live as long as the table). */
void rcell_text(struct rrow *r, int col, const char *s, size_t len);

/* The first key of the comma list `columns` that names no column of any of the n tables
 * (copied into buf, at most size - 1 bytes), or NULL when every key names one. */
const char *rformat_unknown_column(const char *columns, struct rtable *const *tables, size_t n,
				   char *buf, size_t size);

/* The format named "text", "csv", "json" or "html" (enum rformat); -1 when unknown. */
int rformat_from_name(const char *name);
/* Time unit names and parsing ("s", "ms", "us", "ns"); -1 when unknown. */
int rformat_unit(const char *name);
const char *rformat_unit_name(int unit);

/* Render tables; `inputs` name the loaded files (JSON). Returns 0, or -1 on a write error. */
int report_render(FILE *out, struct rtable *const *tables, size_t n, const struct rformat_opts *o,
		  const char *const *inputs, size_t ninputs);

/* nvprof's duration format: about 5 significant digits in 8 characters ("97.765ms",
 * "1.0835ms", "5.7510us", "992ns", "353.084s"). buf holds at least 16 bytes. */
void rformat_nvprof_time(char *buf, size_t size, int64_t ns);

#endif
