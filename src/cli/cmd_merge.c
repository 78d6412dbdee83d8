/*
 * cmd_merge.c: `opscope merge [options] PARTIAL|DIR...`: the report of many traces from their
 * partials (`opscope report --format partial`, one per file, made wherever the files are: a Slurm
 * array, a Spark or Ray map; docs/merge.md). It prints the report's views with the report's
 * own rendering code, so the tables are those that `opscope report` prints for the same files
 * loaded at once; a view that a partial does not carry (an older format version, or the
 * overview of files with and without ProfileStep ranges) is left out, which one line on
 * stderr says.
 *
 * A partial that cannot be read (cut short, corrupt, a newer version, the same trace twice)
 * stops it with one line naming the partial and the byte offset, exit 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <getopt.h>
#include <sys/stat.h>

#include "opscope/opscope.h"

#include "cli/cli.h"
#include "report/partial.h"
#include "report/table.h"
#include "report/views.h"
#include "util/strlist.h"

static const char merge_usage[] =
	"usage: opscope merge [options] PARTIAL|DIR...\n"
	"\n"
	"Combine the partial summaries that `opscope report --format partial FILE` wrote, one\n"
	"per trace file (on a Slurm array, a Spark or Ray map: docs/merge.md), into the report\n"
	"of all the files at once: every view of the report, made from the summaries.\n"
	"The files are taken in the order of their paths, as `opscope report DIR` reads a\n"
	"directory. A DIR gives every *.partial file in it (for more partials than a command\n"
	"line holds).\n"
	"\n"
	"options:\n"
	"      --views LIST      comma list of views (default: all that apply)\n"
	"      --sort KEY        operator order: CPUTotal (default), CPUAvg, CPUMax, CPUMin,\n"
	"                        GPUTotal, GPUAvg, GPUMax, GPUMin, Calls; the kernel table's\n"
	"                        GPU keys sort it, the others sort it by GPUTotal\n"
	"      --op-detail       inner phases and kernels under each operator (default)\n"
	"      --no-op-detail    operators only\n"
	"  -u, --time-unit U     s, ms (default), us or ns (text and CSV; JSON is always ns)\n"
	"  -n, --top N           at most N rows per table\n"
	"  -c, --columns LIST    only these columns, in this order\n"
	"  -w, --width N         cut names longer than N characters (text)\n"
	"  -f, --format F        text (default), csv or json\n"
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"  -h, --help            show this help\n";

/* The first name of the comma list that is not a view, or NULL. */
static const char *not_a_view(const char *list, char *name, size_t size)
{
	const char *item;
	size_t len;
	while ((len = strlist_next(&list, &item)) != (size_t)-1) {
		if (len >= size)
			len = size - 1;
		memcpy(name, item, len);
		name[len] = '\0';
		if (!report_view_find(name))
			return name;
	}
	return NULL;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read the partial at path, or every *.partial file of the directory at path (by name). 0, or
 * the reader's error with its line in err. */
static int read_arg(struct partial_set *ps, const char *path, char *err, size_t errsize)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return partial_read(ps, path, err, errsize);
	DIR *d = opendir(path);
	if (!d) {
		snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len < 8 || strcmp(e->d_name + len - 8, ".partial") != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **v = realloc(names, cap * sizeof(*v));
			if (!v)
				cli_die_oom();
			names = v;
		}
		if (!(names[n++] = strdup(e->d_name)))
			cli_die_oom();
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), name_cmp);
	if (n == 0) {
		snprintf(err, errsize, "%s: no .partial files in this directory", path);
		rc = -1;
	}
	size_t dl = strlen(path);
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t len = dl + strlen(names[i]) + 2;
		char *full = malloc(len);
		if (!full)
			cli_die_oom();
		snprintf(full, len, "%s%s%s", path, dl && path[dl - 1] == '/' ? "" : "/", names[i]);
		rc = partial_read(ps, full, err, errsize);
		free(full);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* report_run_views's filter: the views of the list (NULL: all) made from the set */
struct merge_want {
	const char *list;	      /* --views, or NULL */
	const struct partial_set *ps; /* the merged set */
};

static bool want_carried(const char *view, void *arg)
{
	const struct merge_want *w = arg;
	const struct report_view *v = report_view_find(view);
	return v && partial_carries(w->ps, view) && report_view_listed(view, (void *)w->list);
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "views", required_argument, NULL, 'V' },
		{ "sort", required_argument, NULL, 'S' },
		{ "op-detail", no_argument, NULL, 'D' },
		{ "no-op-detail", no_argument, NULL, 'N' },
		{ "time-unit", required_argument, NULL, 'u' },
		{ "top", required_argument, NULL, 'n' },
		{ "columns", required_argument, NULL, 'c' },
		{ "width", required_argument, NULL, 'w' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_opts ro = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct rformat_opts fo = { RFORMAT_TEXT, 1, 0, NULL, 0 };
	const char *views = NULL, *output = NULL;
	char bad[64];
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "u:n:c:w:f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'V':
			if (not_a_view(optarg, bad, sizeof(bad))) {
				char msg[128];
				snprintf(msg, sizeof(msg), "unknown view '%s' (see --help)", bad);
				return cli_usage_error("merge", msg);
			}
			views = optarg;
			ro.views_explicit = true;
			break;
		case 'S': {
			int s = report_sort_from_name(optarg);
			if (s < 0)
				return cli_usage_error(
					"merge", "--sort wants GPUTotal, GPUAvg, GPUMax or GPUMin");
			ro.sort = (enum report_sort)s;
			break;
		}
		case 'D':
			ro.op_detail = true;
			break;
		case 'N':
			ro.op_detail = false;
			break;
		case 'f': {
			int fmt = rformat_from_name(optarg);
			/* no html: the page's timeline is drawn from the events */
			if (fmt < 0 || fmt == RFORMAT_HTML)
				return cli_usage_error("merge", "--format wants text, csv or json");
			fo.format = (enum rformat)fmt;
			break;
		}
		case 'o':
			output = optarg;
			break;
		case 'h':
			fputs(merge_usage, stdout);
			return CLI_OK;
		default: {
			int t = cli_table_option("merge", c, optarg, &fo);
			if (t != 1)
				return t ? t : cli_usage_error("merge", NULL);
			break;
		}
		}
	}
	if (optind >= argc)
		return cli_usage_error("merge",
				       "no partial given (opscope report --format partial)");

	struct partial_set ps;
	if (partial_set_init(&ps) != 0)
		cli_die_oom();
	char err[1024];
	for (int i = optind; i < argc; i++) {
		int rc = read_arg(&ps, argv[i], err, sizeof(err));
		if (rc == OPSCOPE_ENOMEM)
			cli_die_oom();
		if (rc != 0) {
			partial_set_free(&ps);
			return cli_error("%s", err);
		}
	}
	int frc = partial_finish(&ps, err, sizeof(err));
	if (frc == OPSCOPE_ENOMEM)
		cli_die_oom();
	if (frc != 0) {
		partial_set_free(&ps);
		return cli_error("%s", err);
	}
	/* a view asked for by name that a partial of an older version does not carry */
	for (const char *list = views, *item; views;) {
		size_t len = strlist_next(&list, &item);
		if (len == (size_t)-1)
			break;
		snprintf(bad, sizeof(bad), "%.*s", (int)len, item);
		if (!partial_carries(&ps, bad)) {
			int rc = cli_error("the %s view: %s", bad, partial_why_not(&ps, bad));
			partial_set_free(&ps);
			return rc;
		}
	}
	if (!views) { /* every view the report would try: say which a partial does not carry */
		char left[1024];
		size_t n = 0;
		const char *why = NULL;
		for (const struct report_view *rv = report_views; rv->name; rv++)
			if (!partial_carries(&ps, rv->name) && n < sizeof(left)) {
				n += (size_t)snprintf(left + n, sizeof(left) - n, "%s%s",
						      n ? "," : "", rv->name);
				/* one reason for the line: the older format when any view says so */
				const char *w = partial_why_not(&ps, rv->name);
				why = !why || strstr(w, "older") ? w : why;
			}
		if (n)
			fprintf(stderr, "opscope merge: left out %s: %s\n", left, why);
	}

	struct report_ctx ctx;
	if (report_ctx_init(&ctx, ps.m, &ro) != 0)
		cli_die_oom();
	ctx.pre = &ps.pre;
	partial_analysis(&ps, &ctx.an);
	struct merge_want want = { views, &ps };
	if (report_run_views(&ctx, want_carried, &want) != 0)
		cli_die_oom();
	if (fo.columns && ctx.ntables &&
	    rformat_unknown_column(fo.columns, ctx.tables, ctx.ntables, bad, sizeof(bad))) {
		char msg[128];
		snprintf(msg, sizeof(msg), "no table shown has a column '%s' (see docs/report.md)",
			 bad);
		report_ctx_free(&ctx);
		partial_set_free(&ps);
		return cli_usage_error("merge", msg);
	}
	FILE *out = stdout;
	if (output && !(out = fopen(output, "w"))) {
		report_ctx_free(&ctx);
		partial_set_free(&ps);
		return cli_error("%s: cannot write: %s", output, strerror(errno));
	}
	int rc = report_render(out, ctx.tables, ctx.ntables, &fo, (const char *const *)ps.inputs,
			       ps.ninputs);
	rc = cli_close_output(out, rc);
	report_ctx_free(&ctx);
	partial_set_free(&ps);
	if (rc != 0)
		return cli_error("%s: write failed", output ? output : "stdout");
	return CLI_OK;
}
