/*
 * render_html.c: the HTML rendering of the report: one self-contained page
 * (src/report/html/: page.html with report.css and report.js inside, embedded at build time,
 * html_assets.h) around the report's JSON (render_json.c, the same object, embedded once in a
 * <script type="application/json">), which the page's script reads and draws
 * (docs/html-report.md).
 *
 * Invariant: nothing from a trace can end the data element or be read as markup. The JSON
 * renderer has already escaped control characters and quotes and turned invalid UTF-8 into
 * U+FFFD; here every '<', '>' and '&' of the JSON (they can only stand inside its strings)
 * becomes its JSON escape \u003c, \u003e, \u0026, which JSON.parse reads back as the same
 * character. So "</script>" in a kernel name reaches the page as text, never as a tag; the page
 * puts names into the document with textContent only.
 */
#include <stdlib.h>

#include "report/html_assets.h"
#include "report/render.h"

/* Append the JSON text s[0..n) to b with '<', '>' and '&' as JSON escapes. */
static void html_put_json(struct sbuf *b, const char *s, size_t n)
{
	size_t from = 0;
	for (size_t i = 0; i < n; i++) {
		const char *esc;
		switch (s[i]) {
		case '<':
			esc = "\\u003c";
			break;
		case '>':
			esc = "\\u003e";
			break;
		case '&':
			esc = "\\u0026";
			break;
		default:
			continue;
		}
		sb_put(b, s + from, i - from);
		sb_put(b, esc, 6);
		from = i + 1;
	}
	sb_put(b, s + from, n - from);
}

/* Run one of the JSON renderer's steps into a scratch buffer and move it into b escaped. */
static void html_from_json(struct sbuf *b, struct sbuf *json)
{
	if (json->oom)
		b->oom = true;
	else if (json->len)
		html_put_json(b, json->s, json->len);
	free(json->s);
}

static void render_html_begin(struct sbuf *b, const char *const *inputs, size_t ninputs)
{
	sb_put(b, report_html_head, report_html_head_len);
	struct sbuf json = { NULL, 0, 0, false };
	render_json_ops.begin(&json, inputs, ninputs);
	html_from_json(b, &json);
}

static void render_html_table(struct sbuf *b, const struct rtable *t, size_t index,
			      const struct rformat_opts *o)
{
	struct sbuf json = { NULL, 0, 0, false };
	render_json_ops.table(&json, t, index, o);
	html_from_json(b, &json);
}

static void render_html_end(struct sbuf *b)
{
	sb_lit(b, "]}"); /* the JSON renderer's end, less its newline */
	sb_put(b, report_html_tail, report_html_tail_len);
}

const struct render_ops render_html_ops = { render_html_begin, render_html_table, render_html_end };
