/*
 * cmd_diff.c: `opscope diff [options] A [B]`: two traces (files or directories of ranks, as
 * `report` loads them), or two step ranges of one trace, compared row by row (analyze/diff.h)
 * and printed as one table (report/diffview.h) in text, CSV or JSON; --fail-if rules make it
 * exit CLI_FIRED (3) for CI.
 *
 * Exit status: 0 no rule fired (or none given), 1 an error (an unreadable trace, a step range
 * the trace does not have, a write error), 2 a usage error (a malformed rule among them),
 * 3 a rule fired: each fired rule is one line on stderr with the rows that fired it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>

#include "opscope/opscope.h"

#include "analyze/analysis.h"
#include "analyze/diff.h"
#include "analyze/ranks.h"
#include "cli/cli.h"
#include "formats/import.h"
#include "model/model.h"
#include "report/diffview.h"
#include "report/table.h"

static const char diff_usage[] =
	"usage: opscope diff [options] A B\n"
	"       opscope diff [options] TRACE --steps N-M --vs N-M\n"
	"\n"
	"Compare two traces, or two step ranges of one trace: the step time, the phases\n"
	"(Dataloader, Forward, Backward, Optimization), operators, nn.Module paths, kernels,\n"
	"NVTX and user-defined ranges, aligned by name, sorted by |change|. Each row has its\n"
	"calls and time on both sides, the change, and the mean and standard deviation of its\n"
	"time per step on each side: a change inside the steps' noise (Welch's t-test, 5%)\n"
	"says so. A and B are what `opscope report` reads: a trace file or a directory of\n"
	"ranks. Formulas: docs/diff.md.\n"
	"\n"
	"options:\n"
	"      --steps N[-M]     compare steps N to M of A (0 is the first step, in the order\n"
	"                        `opscope report --views step` lists them); with A B and no\n"
	"                        --vs, of both\n"
	"      --vs N[-M]        compare steps N to M of B; with one TRACE, its second range\n"
	"      --by-shape        operator rows by name and input shapes (\"Input Dims\")\n"
	"      --fail-if RULE    exit 3 when RULE fires (repeatable): KIND[:GLOB] > or < a signed\n"
	"                        amount in % (of time A) or ns, us, ms, s; KIND is step, phase,\n"
	"                        op, module, kernel, nvtx or user. A rule fires on a row whose\n"
	"                        change passes the amount and is not within noise. Examples:\n"
	"                        'step > +5%' 'kernel:* > +10%' 'op:aten::mm > +2ms'\n"
	"      --no-noise-check  rules fire on the change alone\n"
	"  -n, --top N           at most N rows\n"
	"  -c, --columns LIST    only these columns, in this order (keys: kind,name,change,...)\n"
	"  -u, --time-unit U     s, ms (default), us or ns (text and CSV; JSON is always ns)\n"
	"  -w, --width N         cut names longer than N characters (text)\n"
	"  -f, --format F        text (default), csv or json\n"
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"  --no-symbolize        leave native frames unsymbolized (also OPSCOPE_NO_SYMBOLIZE=1)\n"
	"  -h, --help            show this help\n"
	"\n"
	"exit status: 0 no rule fired, 1 error, 2 usage error (a malformed rule too),\n"
	"3 a --fail-if rule fired (each on stderr with the rows that fired it)\n";

#define DIFF_MAX_RULES 64

/* Parse "N" or "N-M" (N <= M) into [first, last]. */
static bool parse_steps(const char *s, uint32_t *first, uint32_t *last)
{
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long a = strtoul(s, &end, 10), b = a;
	if (*end == '-') {
		const char *t = end + 1;
		if (*t < '0' || *t > '9')
			return false;
		b = strtoul(t, &end, 10);
	}
	if (*end != '\0' || errno || a > b || b >= UINT32_MAX)
		return false;
	*first = (uint32_t)a;
	*last = (uint32_t)b;
	return true;
}

/* A time for a message: "+1.234 ms". */
static void fmt_time(char *buf, size_t size, int64_t ns)
{
	double a = fabs((double)ns);
	const char *u = a >= 1e9 ? "s" : a >= 1e6 ? "ms" : a >= 1e3 ? "us" : "ns";
	double div = a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : a >= 1e3 ? 1e3 : 1;
	snprintf(buf, size, "%+.3f %s", (double)ns / div, u);
}

/* One line on stderr for a fired rule: the rule and up to 10 of the rows that fired it. */
static void print_fired(const struct diff_rule *r, const struct diff *d, bool noise_check)
{
	fprintf(stderr, "opscope diff: rule '%s' fired:", r->text);
	size_t shown = 0, fired = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *w = &d->rows[i];
		if (!diff_rule_fires(r, w, noise_check))
			continue;
		if (++fired > 10)
			continue;
		char t[32];
		fmt_time(t, sizeof(t), w->change_ns);
		fprintf(stderr, "%s %s ", shown++ ? ";" : "",
			diff_kind_name((enum diff_kind)w->kind));
		cli_put_escaped(stderr, w->name, strlen(w->name));
		if (w->shape) {
			fputc(' ', stderr);
			cli_put_escaped(stderr, w->shape, strlen(w->shape));
		}
		if (isfinite(w->change))
			fprintf(stderr, " %+.1f%% (%s", w->change * 100, t);
		else
			fprintf(stderr, " added (%s", t);
		fprintf(stderr, ", %s)",
			w->noise == DIFF_NOISE_BEYOND	? "beyond noise"
			: w->noise == DIFF_NOISE_WITHIN ? "within noise"
							: "noise unknown");
	}
	if (fired > 10)
		fprintf(stderr, "; and %zu more", fired - 10);
	fputc('\n', stderr);
}

static void label(char *buf, size_t size, const char *side, const char *path,
		  const struct diff_side *s)
{
	if (s->ranged)
		snprintf(buf, size, "%s: %s (steps %u-%u)", side, path, s->first_step,
			 s->last_step);
	else
		snprintf(buf, size, "%s: %s", side, path);
}

/* One side: the trace or directory at path. A directory holding one rank twice (two files
 * with the same rank) is loaded again without the second copy, as the ranks view keeps the
 * first (by file name), so that no step, operator or kernel of the rank counts twice; one
 * line on stderr says so for each copy left out. NULL (said) when it cannot be loaded. */
static struct model *load_side(const char *path, const char *const *keep_keys)
{
	struct model *m = cli_load_keep(path, keep_keys);
	if (!m)
		return NULL;
	bool *keep = malloc((m->nfiles ? m->nfiles : 1) * sizeof(*keep));
	uint32_t dropped = keep ? ranks_kept_files(m, keep) : UINT32_MAX;
	if (dropped == UINT32_MAX)
		cli_die_oom();
	if (dropped == 0) {
		free(keep);
		return m;
	}
	struct model *k = model_new();
	if (!k)
		cli_die_oom();
	cli_symbolize_options(k);
	k->keep_arg_keys = keep_keys;
	char err[512];
	for (uint32_t f = 0; f < m->nfiles; f++) {
		const char *fp = model_str(m, m->files[f].path);
		if (!keep[f]) {
			/* the kept file of the same rank: the first before it */
			int32_t rank = -1;
			for (uint32_t p = 0; p < m->nprocesses && rank < 0; p++)
				if (m->processes[p].file == f)
					rank = m->processes[p].rank;
			const char *first = "";
			for (uint32_t g = 0; g < f && !*first; g++)
				for (uint32_t p = 0; p < m->nprocesses; p++)
					if (keep[g] && m->processes[p].file == g &&
					    m->processes[p].rank == rank) {
						first = model_str(m, m->files[g].path);
						break;
					}
			fprintf(stderr,
				"opscope diff: note: duplicate rank %d: %s and %s; the first is used\n",
				rank, first, fp);
			continue;
		}
		if (import_load_path(k, fp, err, sizeof(err)) != 0) {
			cli_error("%s", err);
			model_free(k);
			model_free(m);
			free(keep);
			return NULL;
		}
	}
	free(keep);
	model_free(m);
	return k;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "steps", required_argument, NULL, 'S' },
		{ "vs", required_argument, NULL, 'V' },
		{ "by-shape", no_argument, NULL, 'B' },
		{ "fail-if", required_argument, NULL, 'F' },
		{ "no-noise-check", no_argument, NULL, 'Q' },
		{ "top", required_argument, NULL, 'n' },
		{ "columns", required_argument, NULL, 'c' },
		{ "time-unit", required_argument, NULL, 'u' },
		{ "width", required_argument, NULL, 'w' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-symbolize", no_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rformat_opts fo = { RFORMAT_TEXT, 1, 0, NULL, 0 };
	struct diff_opts dopt = { false };
	struct diff_side sa = { NULL, false, 0, 0 }, sb = { NULL, false, 0, 0 };
	static struct diff_rule rules[DIFF_MAX_RULES];
	size_t nrules = 0;
	bool noise_check = true;
	const char *output = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:c:u:w:f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (!parse_steps(optarg, &sa.first_step, &sa.last_step))
				return cli_usage_error("diff", "--steps wants N or N-M (N <= M)");
			sa.ranged = true;
			break;
		case 'V':
			if (!parse_steps(optarg, &sb.first_step, &sb.last_step))
				return cli_usage_error("diff", "--vs wants N or N-M (N <= M)");
			sb.ranged = true;
			break;
		case 'B':
			dopt.by_shape = true;
			break;
		case 'F': {
			char err[256];
			if (nrules == DIFF_MAX_RULES)
				return cli_usage_error("diff",
						       "too many --fail-if rules (64 at most)");
			if (diff_rule_parse(optarg, &rules[nrules], err, sizeof(err)) != 0) {
				fprintf(stderr, "opscope diff: %s\n", err); /* one line */
				return CLI_USAGE;
			}
			nrules++;
			break;
		}
		case 'Q':
			noise_check = false;
			break;
		case 'f': {
			int fmt = rformat_from_name(optarg);
			if (fmt < 0 || fmt == RFORMAT_HTML)
				return cli_usage_error("diff", "--format wants text, csv or json");
			fo.format = (enum rformat)fmt;
			break;
		}
		case 'o':
			output = optarg;
			break;
		case 'Y':
			cli_no_symbolize = true;
			break;
		case 'h':
			fputs(diff_usage, stdout);
			return CLI_OK;
		default: {
			int t = cli_table_option("diff", c, optarg, &fo);
			if (t != 1)
				return t ? t : cli_usage_error("diff", NULL);
			break;
		}
		}
	}
	int npaths = argc - optind;
	if (npaths < 1 || npaths > 2)
		return cli_usage_error("diff", "wants two traces A B, or one trace with --steps "
					       "and --vs");
	if (npaths == 1 && !(sa.ranged && sb.ranged))
		return cli_usage_error("diff", "one trace: give the two step ranges to compare, "
					       "--steps N-M --vs N-M");
	if (npaths == 2 && sa.ranged && !sb.ranged) { /* --steps alone: of both */
		sb.ranged = true;
		sb.first_step = sa.first_step;
		sb.last_step = sa.last_step;
	}
	const char *pa = argv[optind], *pb = argv[optind + npaths - 1];

	static const char *const keys[] = { "domain", NULL };
	static const char *const keys_shape[] = { "domain", "Input Dims", NULL };
	const char *const *keep = getenv("OPSCOPE_REPORT_ALL_ARGS") ? NULL
				  : dopt.by_shape		    ? keys_shape
								    : keys;
	struct model *ma = load_side(pa, keep);
	if (!ma)
		return CLI_ERROR;
	struct model *mb = npaths == 2 ? load_side(pb, keep) : ma;
	if (!mb) {
		model_free(ma);
		return CLI_ERROR;
	}
	struct analysis aa, ab;
	if (analysis_run(&aa, ma) != 0 || (mb != ma && analysis_run(&ab, mb) != 0))
		cli_die_oom();
	sa.an = &aa;
	sb.an = mb != ma ? &ab : &aa;
	struct diff d;
	int rc = diff_compute(&sa, &sb, &dopt, &d);
	if (rc == OPSCOPE_ENOMEM)
		cli_die_oom();
	if (rc != 0) {
		const struct diff_side *bad = sa.ranged && sa.last_step >= d.nsteps[0] ? &sa : &sb;
		int s = bad == &sa ? 0 : 1;
		cli_error("%s has %u step%s: steps %u-%u are not all there (0 is the first)",
			  s ? pb : pa, d.nsteps[s], d.nsteps[s] == 1 ? "" : "s", bad->first_step,
			  bad->last_step);
		analysis_free(&aa);
		if (mb != ma)
			analysis_free(&ab);
		model_free(ma);
		if (mb != ma)
			model_free(mb);
		return CLI_ERROR;
	}
	/* per-step means stay comparable when the step counts differ; totals do not */
	uint32_t ca = sa.ranged ? sa.last_step - sa.first_step + 1 : d.nsteps[0];
	uint32_t cb = sb.ranged ? sb.last_step - sb.first_step + 1 : d.nsteps[1];
	if (ca != cb)
		fprintf(stderr,
			"opscope diff: note: A has %u step%s, B %u: the totals compare different "
			"numbers of steps (the step means do not)\n",
			ca, ca == 1 ? "" : "s", cb);

	struct rtable *t = diffview_table(&d, dopt.by_shape);
	if (!t)
		cli_die_oom();
	char bad[64];
	int out_rc = CLI_OK;
	if (fo.columns && rformat_unknown_column(fo.columns, &t, 1, bad, sizeof(bad))) {
		char msg[128];
		snprintf(msg, sizeof(msg), "the diff table has no column '%s' (see --help)", bad);
		out_rc = cli_usage_error("diff", msg);
	}
	FILE *out = stdout;
	if (out_rc == CLI_OK && output && !(out = fopen(output, "w")))
		out_rc = cli_error("%s: cannot write: %s", output, strerror(errno));
	if (out_rc == CLI_OK) {
		char la[1024], lb[1024];
		label(la, sizeof(la), "A", pa, &sa);
		label(lb, sizeof(lb), "B", pb, &sb);
		const char *inputs[2] = { la, lb };
		int wrc = cli_close_output(out, report_render(out, &t, 1, &fo, inputs, 2));
		if (wrc != 0 && out != stdout)
			out_rc = cli_error("%s: write failed", output);
	}
	if (out_rc == CLI_OK) {
		for (size_t i = 0; i < nrules; i++) {
			bool fired = false;
			for (size_t k = 0; k < d.n && !fired; k++)
				fired = diff_rule_fires(&rules[i], &d.rows[k], noise_check);
			if (fired) {
				print_fired(&rules[i], &d, noise_check);
				out_rc = CLI_FIRED;
			}
		}
	}
	rtable_free(t);
	diff_free(&d);
	analysis_free(&aa);
	if (mb != ma) {
		analysis_free(&ab);
		model_free(mb);
	}
	model_free(ma);
	return out_rc;
}
