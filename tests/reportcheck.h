/*
 * reportcheck.h: the report's views in unit tests (the report and analysis tests), run as
 * `opscope report` runs them (report_run_views: side by side), with the look-ups the tests
 * make in the tables they give.
 */
#ifndef OPSCOPE_TESTS_REPORTCHECK_H
#define OPSCOPE_TESTS_REPORTCHECK_H

#include <stdio.h>
#include <string.h>

#include "report/table.h"
#include "report/views.h"

/* Every view of model m into c (free it with report_ctx_free); NULL on failure, or when the
 * tables do not come out in the order of report_views, whichever view finished first. */
static inline struct report_ctx *report_run_all(struct report_ctx *c, struct model *m,
						struct report_opts *o)
{
	if (report_ctx_init(c, m, o) != 0)
		return NULL;
	if (report_run_views(c, NULL, NULL) != 0)
		return NULL;
	const struct report_view *v = report_views;
	for (size_t i = 0; i < c->ntables; i++) {
		while (v->name && strcmp(v->name, c->tables[i]->view) != 0)
			v++;
		if (!v->name) {
			fprintf(stderr, "table %zu (%s) out of the views' order\n", i,
				c->tables[i]->view);
			return NULL;
		}
	}
	return c;
}

/* The first table of `view` (NULL if the view made none). */
static inline const struct rtable *find_table(const struct report_ctx *c, const char *view)
{
	for (size_t i = 0; i < c->ntables; i++)
		if (strcmp(c->tables[i]->view, view) == 0)
			return c->tables[i];
	return NULL;
}

/* The table total `key` (-1 if the table has none). */
static inline int64_t total_of(const struct rtable *t, const char *key)
{
	for (int i = 0; i < t->ntotals; i++)
		if (strcmp(t->totals[i].key, key) == 0)
			return t->totals[i].v;
	return -1;
}

#endif
