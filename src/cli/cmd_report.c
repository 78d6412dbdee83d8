/*
 * cmd_report.c: `opscope report [options] FILE|DIR...`: the summary tables of one or more
 * traces (.opscope files, PyTorch/Kineto or Chrome JSON, directories of them), as text,
 * CSV, JSON or an HTML page. Every file or directory given is loaded into one model (one process or rank
 * per file); the views (src/report/views.c) then print in their fixed order.
 *
 * While loading takes more than a second and stderr is a terminal, a progress line says which
 * file is being read and for how long.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <getopt.h>
#include <pthread.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "cli/cli.h"
#include "formats/import.h"
#include "model/model.h"
#include "report/partial.h"
#include "report/table.h"
#include "report/views.h"
#include "util/strlist.h"

static const char report_usage[] =
	"usage: opscope report [options] FILE|DIR...\n"
	"\n"
	"Print where the time of a trace went: summary tables of operators, kernels, phases,\n"
	"steps. FILE is an .opscope trace, a PyTorch/Kineto (Chrome JSON) trace or an Nsight\n"
	"Systems SQLite export (nsys export --type sqlite), gzip'd or not;\n"
	"a DIR loads every trace in it (one process or rank per file).\n"
	"\n"
	"options:\n"
	"      --views LIST      comma list of views (default: all that apply):\n"
	"%s"
	"      --sort KEY        operator/user-defined order: CPUTotal (default), CPUAvg, CPUMax,\n"
	"                        CPUMin, GPUTotal, GPUAvg, GPUMax, GPUMin, Calls (*Min ascending);\n"
	"                        the flops view also FLOPs, Bytes, TFLOPs (achieved FLOP/s)\n"
	"  -u, --time-unit U     s, ms (default), us or ns (text and CSV; JSON is always ns)\n"
	"      --op-detail       inner phases and kernels under each operator (default)\n"
	"      --no-op-detail    operators only\n"
	"      --thread-sep      one operator / user-defined / python / module table per thread\n"
	"      --group-by KEY    operator rows by name (default) or by name and input shapes:\n"
	"                        name, input-shape (an Input Shapes column; torch's\n"
	"                        key_averages(group_by_input_shape=True))\n"
	"      --peak PEAKS      flops view: the device's peaks, a name from the table\n"
	"                        (\"H100 SXM\", docs/peaks.md) or KEY=VALUE,... with keys fp64,\n"
	"                        fp32, tf32, fp16, bf16, fp8, int8 (FLOP/s) and bw (bytes/s),\n"
	"                        suffixes k M G T P: \"fp32=1.2T,bw=100G\" (a CPU's peaks too)\n"
	"      --under NAME      samples view: only the stack samples taken while their thread\n"
	"                        was inside a range named NAME (an operator, a phase)\n"
	"  -n, --top N           at most N rows per table (rows under a kept row stay)\n"
	"  -c, --columns LIST    only these columns, in this order (JSON/CSV keys: name,calls)\n"
	"  -w, --width N         cut names longer than N characters (text)\n"
	"  -f, --format F        text (default), csv, json, html (one self-contained page,\n"
	"                        docs/html-report.md; `opscope view` serves it), or partial: a\n"
	"                        mergeable summary of each file for `opscope merge` (docs/merge.md)\n"
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"  --no-symbolize        leave native frames unsymbolized (also OPSCOPE_NO_SYMBOLIZE=1)\n"
	"  -h, --help            show this help\n";

static void usage(FILE *out)
{
	char views[4096];
	size_t n = 0;
	for (const struct report_view *v = report_views; v->name && n < sizeof(views); v++)
		n += (size_t)snprintf(views + n, sizeof(views) - n,
				      "                          %-12s %s\n", v->name, v->summary);
	fprintf(out, report_usage, views);
}

/* ---------------------------------------------------------------------------------------- */
/* Progress */

struct progress {
	const char *_Atomic file; /* being loaded, NULL when done */
	atomic_bool stop;
	bool shown;
	pthread_t thread;
	bool running;
};

static void *progress_main(void *arg)
{
	struct progress *p = arg;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	const char *last = NULL;
	while (!atomic_load(&p->stop)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		const char *f = atomic_load(&p->file);
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		double secs = (double)(now.tv_sec - start.tv_sec) +
			      (double)(now.tv_nsec - start.tv_nsec) / 1e9;
		if (!f || secs < 1.0)
			continue;
		if (f != last || (int)(secs * 10) % 10 == 0) {
			fprintf(stderr, "\r\033[Kopscope: loading %s ... %.0f s", f, secs);
			fflush(stderr);
			p->shown = true;
			last = f;
		}
	}
	return NULL;
}

static void progress_start(struct progress *p)
{
	memset(p, 0, sizeof(*p));
	atomic_init(&p->file, NULL);
	atomic_init(&p->stop, false);
	if (isatty(STDERR_FILENO) && pthread_create(&p->thread, NULL, progress_main, p) == 0)
		p->running = true;
}

static void progress_stop(struct progress *p)
{
	if (!p->running)
		return;
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	if (p->shown)
		fputs("\r\033[K", stderr);
}

/* ---------------------------------------------------------------------------------------- */

/* Load one path (file or directory) into m; one line on stderr when it fails. */
static int report_load(struct model *m, const char *path, struct progress *p)
{
	char err[512];
	atomic_store(&p->file, path);
	int rc = import_load_path(m, path, err, sizeof(err));
	atomic_store(&p->file, NULL);
	if (rc != 0) {
		progress_stop(p);
		cli_error("%s", err);
	}
	return rc;
}

/* Is every name in the comma list a view? */
static const char *bad_view(const char *list)
{
	static char name[64];
	const char *item;
	size_t len;
	while ((len = strlist_next(&list, &item)) != (size_t)-1) {
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, item, len);
		name[len] = '\0';
		if (!report_view_find(name))
			return name;
	}
	return NULL;
}

/* --format partial: the partial of the loaded model to `output` (NULL: stdout); frees ctx
 * and m. */
static int write_partial(struct report_ctx *ctx, struct model *m, const char *output,
			 const char **inputs, size_t ninputs)
{
	FILE *out = stdout;
	int rc = 0;
	if (output && !(out = fopen(output, "w")))
		rc = cli_error("%s: cannot write: %s", output, strerror(errno));
	else if ((rc = partial_write(out, &ctx->an, inputs, ninputs)) == OPSCOPE_ENOMEM)
		cli_die_oom();
	if (out != stdout && out && (fclose(out) != 0 || rc != 0))
		rc = cli_error("%s: write failed", output);
	else if (out == stdout && rc != 0)
		rc = cli_error("stdout: write failed");
	report_ctx_free(ctx);
	model_free(m);
	return rc ? CLI_ERROR : CLI_OK;
}

/* Load `paths` into one model and render the report of the views listed (NULL: all) to
 * `mem` when not NULL, else to the file `output` (opened once the tables are made, so that
 * a failed load leaves no file), else to stdout; with `partial`, write the model's partial
 * instead. CLI_OK; CLI_ERROR after printing why (a trace that does not load, a write
 * error); CLI_USAGE for a --columns key no table has. */
static int report_write(char *const *paths, size_t npaths, struct report_opts *ro,
			const struct rformat_opts *fo, const char *views, bool partial, FILE *mem,
			const char *output)
{
	struct model *m = model_new();
	if (!m)
		cli_die_oom();
	cli_symbolize_options(m);
	ro->want_flops = report_views_want_flops(views);
	if (!getenv("OPSCOPE_REPORT_ALL_ARGS")) /* the tests' way to compare with all of them */
		m->keep_arg_keys = report_arg_keys_for(ro);
	struct progress prog;
	progress_start(&prog);
	for (size_t i = 0; i < npaths; i++) {
		if (report_load(m, paths[i], &prog) != 0) {
			model_free(m);
			return CLI_ERROR;
		}
	}
	progress_stop(&prog);

	struct report_ctx ctx;
	if (report_ctx_init(&ctx, m, ro) != 0)
		cli_die_oom();
	if (partial)
		return write_partial(&ctx, m, output, (const char **)paths, npaths);
	if (report_run_views(&ctx, report_view_listed, (void *)views) != 0)
		cli_die_oom();
	char bad[64];
	if (fo->columns && ctx.ntables &&
	    rformat_unknown_column(fo->columns, ctx.tables, ctx.ntables, bad, sizeof(bad))) {
		char msg[128];
		snprintf(msg, sizeof(msg), "no table shown has a column '%s' (see docs/report.md)",
			 bad);
		report_ctx_free(&ctx);
		model_free(m);
		return cli_usage_error("report", msg);
	}
	FILE *out = mem ? mem : stdout;
	if (!mem && output && !(out = fopen(output, "w"))) {
		report_ctx_free(&ctx);
		model_free(m);
		return cli_error("%s: cannot write: %s", output, strerror(errno));
	}
	const char **inputs = (const char **)paths;
	int rc = report_render(out, ctx.tables, ctx.ntables, fo, inputs, npaths);
	if (mem) {
		if (fflush(mem) != 0)
			rc = -1;
	} else {
		rc = cli_close_output(out, rc);
	}
	report_ctx_free(&ctx);
	model_free(m);
	if (rc != 0)
		return cli_error("%s: write failed", mem ? "the page" : output ? output : "stdout");
	return CLI_OK;
}

int cli_report_html(char *const *paths, size_t npaths, const char *views, char **page, size_t *len)
{
	struct report_opts ro = { .sort = SORT_CPU_TOTAL, .op_detail = true, .html = true };
	struct rformat_opts fo = { RFORMAT_HTML, 1, 0, NULL, 0 };
	*page = NULL;
	*len = 0;
	FILE *out = open_memstream(page, len);
	if (!out)
		cli_die_oom();
	int rc = report_write(paths, npaths, &ro, &fo, views, false, out, NULL);
	if (fclose(out) != 0 && rc == CLI_OK)
		cli_die_oom();
	if (rc != CLI_OK) {
		free(*page);
		*page = NULL;
		*len = 0;
	}
	return rc;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "views", required_argument, NULL, 'V' },
		{ "sort", required_argument, NULL, 'S' },
		{ "time-unit", required_argument, NULL, 'u' },
		{ "op-detail", no_argument, NULL, 'D' },
		{ "no-op-detail", no_argument, NULL, 'N' },
		{ "thread-sep", no_argument, NULL, 'T' },
		{ "group-by", required_argument, NULL, 'G' },
		{ "under", required_argument, NULL, 'U' },
		{ "peak", required_argument, NULL, 'P' },
		{ "top", required_argument, NULL, 'n' },
		{ "columns", required_argument, NULL, 'c' },
		{ "width", required_argument, NULL, 'w' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-symbolize", no_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_opts ro = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct rformat_opts fo = { RFORMAT_TEXT, 1, 0, NULL, 0 };
	const char *views = NULL, *output = NULL;
	bool partial = false; /* --format partial: write a partial (report/partial.h) */
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "u:n:c:w:f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'Y':
			cli_no_symbolize = true;
			break;
		case 'V':
			if (bad_view(optarg)) {
				char msg[128];
				snprintf(msg, sizeof(msg), "unknown view '%s' (see --help)",
					 bad_view(optarg));
				return cli_usage_error("report", msg);
			}
			views = optarg;
			ro.views_explicit = true;
			break;
		case 'G':
			if (strcmp(optarg, "input-shape") == 0)
				ro.group_by = REPORT_GROUP_INPUT_SHAPE;
			else if (strcmp(optarg, "name") == 0)
				ro.group_by = REPORT_GROUP_NAME;
			else
				return cli_usage_error("report",
						       "--group-by wants name or input-shape");
			break;
		case 'S': {
			int s = report_sort_from_name(optarg);
			if (s < 0)
				return cli_usage_error("report",
						       "--sort wants CPUTotal, CPUAvg, CPUMax, "
						       "CPUMin, GPUTotal, GPUAvg, GPUMax, "
						       "GPUMin or Calls");
			ro.sort = (enum report_sort)s;
			break;
		}
		case 'D':
			ro.op_detail = true;
			break;
		case 'N':
			ro.op_detail = false;
			break;
		case 'T':
			ro.thread_sep = true;
			break;
		case 'P': {
			static struct hardware_peaks given;
			const struct hardware_peaks *row = hardware_find(optarg);
			char err[160];
			if (row && !strchr(optarg, '=')) {
				ro.peaks = row;
				break;
			}
			memset(&given, 0, sizeof(given));
			if (!hardware_peaks_parse(optarg, &given, err, sizeof(err)))
				return cli_usage_error("report", err);
			ro.peaks = &given;
			break;
		}
		case 'U':
			ro.under = optarg;
			break;
		case 'f': {
			if (strcmp(optarg, "partial") == 0) {
				partial = true;
				break;
			}
			partial = false;
			int fmt = rformat_from_name(optarg);
			if (fmt < 0)
				return cli_usage_error(
					"report",
					"--format wants text, csv, json, html or partial");
			fo.format = (enum rformat)fmt;
			break;
		}
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default: {
			int t = cli_table_option("report", c, optarg, &fo);
			if (t != 1)
				return t ? t : cli_usage_error("report", NULL);
			break;
		}
		}
	}
	if (optind >= argc)
		return cli_usage_error("report", "no trace file or directory given");
	if (partial && ro.peaks)
		return cli_usage_error("report", "--peak does not go into a partial: the merge's "
						 "advice reads each device's peaks from the table "
						 "(docs/merge.md)");
	if (partial && views)
		return cli_usage_error("report", "--format partial holds what every view "
						 "needs: no --views (docs/merge.md)");

	ro.html = fo.format == RFORMAT_HTML;
	return report_write(argv + optind, (size_t)(argc - optind), &ro, &fo, views, partial, NULL,
			    output);
}
