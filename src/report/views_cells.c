/*
 * views_cells.c: what the views (views.c) fill their cells with (views_internal.h): ratios,
 * statistics, text from the model, labels owned by the table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/views_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* Cells */

double ratio(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0.0;
}

/* A statistics cell: total, average per call, max, min (INT64_MAX, no call: 0), and the
 * ratio of the total to `whole`. */
void set_stats(struct rcell *x, uint64_t calls, int64_t total, int64_t max, int64_t min,
	       int64_t whole)
{
	x->st.total = total;
	x->st.avg = calls ? total / (int64_t)calls : 0;
	x->st.max = max;
	x->st.min = min == INT64_MAX ? 0 : min;
	x->st.ratio = ratio(total, whole);
}

/* The CPU (gpu false) or GPU statistics of an aggregated item. */
void set_item_stats(struct rcell *x, const struct agg_item *it, bool gpu, int64_t whole)
{
	if (gpu)
		set_stats(x, it->calls, it->gpu_ns, it->gpu_max_ns, it->gpu_min_ns, whole);
	else
		set_stats(x, it->calls, it->cpu_ns, it->cpu_max_ns, it->cpu_min_ns, whole);
}

void set_text(struct rrow *r, int col, const struct model *m, uint32_t id)
{
	rcell_text(r, col, model_str(m, id), model_strlen(m, id));
}

void set_cstr(struct rrow *r, int col, const char *s)
{
	rcell_text(r, col, s, strlen(s));
}

void set_label(struct rtable *t, struct rrow *r, int col, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
	rcell_text(r, col, rtable_str(t, buf, len), len);
}
