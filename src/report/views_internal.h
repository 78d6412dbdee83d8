/*
 * views_internal.h: what the files of the report's views share (views.c, views_cells.c,
 * views_summary.c, views_ranges.c, views_samples.c, views_gpu.c, views_gputime.c,
 * views_flops.c, views_ranks.c, views_advice.c), not part of views.h: the views that the
 * registry lists, a new table in the report's context, and the cell helpers.
 */
#ifndef OPSCOPE_REPORT_VIEWS_INTERNAL_H
#define OPSCOPE_REPORT_VIEWS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/aggregate.h"
#include "report/table.h"
#include "report/views.h"

/* The views of views.c's registry (report_views[]): each adds its tables to c; 0, or
 * OPSCOPE_ENOMEM. */
int view_files(struct report_ctx *c);
int view_advice(struct report_ctx *c);
int view_device(struct report_ctx *c);
int view_overview(struct report_ctx *c);
int view_model(struct report_ctx *c);
int view_distributed(struct report_ctx *c);
int view_step(struct report_ctx *c);
int view_perf(struct report_ctx *c);
int view_operator(struct report_ctx *c);
int view_userdefined(struct report_ctx *c);
int view_memcpy(struct report_ctx *c);
int view_python(struct report_ctx *c);
int view_module(struct report_ctx *c);
int view_nvtx(struct report_ctx *c);
int view_kernel(struct report_ctx *c);
int view_nvprof(struct report_ctx *c);
int view_samples(struct report_ctx *c);
int view_gpu(struct report_ctx *c);
int view_gpumem(struct report_ctx *c);
int view_gputime(struct report_ctx *c);
int view_launch(struct report_ctx *c);
int view_queue(struct report_ctx *c);
int view_flops(struct report_ctx *c);
int view_ranks(struct report_ctx *c);

/* A new table of `view` titled `title`, appended to the context's tables; NULL (c->oom set)
 * when out of memory. */
struct rtable *ctx_table(struct report_ctx *c, const char *view, const char *title);

/* part / whole, 0 when whole is not positive. */
double ratio(int64_t part, int64_t whole);
/* A statistics cell: total, average per call, max, min (INT64_MAX, no call: 0), and the
 * ratio of the total to `whole`. */
void set_stats(struct rcell *x, uint64_t calls, int64_t total, int64_t max, int64_t min,
	       int64_t whole);
/* The CPU (gpu false) or GPU statistics of an aggregated item. */
void set_item_stats(struct rcell *x, const struct agg_item *it, bool gpu, int64_t whole);
/* Text cells: a string of the model, a C string that outlives the table. */
void set_text(struct rrow *r, int col, const struct model *m, uint32_t id);
void set_cstr(struct rrow *r, int col, const char *s);
/* A label made with printf's format, owned by the table. */
void set_label(struct rtable *t, struct rrow *r, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
