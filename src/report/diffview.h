/*
 * diffview.h: the table of `opscope diff`: one row per row of a diff (analyze/diff.h), in its
 * order, for report_render (table.h) to print as text, CSV or JSON. It formats, it does not
 * compute: every number is the diff's. Columns and keys: docs/commands/diff.md.
 */
#ifndef OPSCOPE_REPORT_DIFFVIEW_H
#define OPSCOPE_REPORT_DIFFVIEW_H

#include <stdbool.h>

#include "analyze/diff.h"
#include "report/table.h"

/* The diff's table, titled "Diff Summary"; with by_shape an "Input Dims" column. NULL when
 * out of memory. The table copies the names it shows: d may be freed first. */
struct rtable *diffview_table(const struct diff *d, bool by_shape);

#endif
