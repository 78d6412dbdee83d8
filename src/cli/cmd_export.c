/*
 * cmd_export.c: `opscope export FILE [--format chrome] [-o OUT]`: convert a trace through one
 * of the exporters of the format registry (formats/registry.h).
 *
 * The output goes to a temporary file beside OUT that is renamed over it only when the export
 * succeeded, so a failed export never leaves half a file under the final name. `-o -` writes
 * to stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "cli/cli.h"
#include "formats/registry.h"
#include "model/model.h"

static void export_usage(void)
{
	fputs("usage: opscope export [options] FILE\n"
	      "\n"
	      "Convert a trace to another format.\n"
	      "\n"
	      "options:\n"
	      "  -f, --format NAME  output format (default: chrome)\n"
	      "  -o, --output OUT   output file; '-' for stdout\n"
	      "                     (default: FILE with its .opscope extension replaced)\n"
	      "  -q, --quiet        do not print the name of the file written\n"
	      "      --max-part-size SIZE\n"
	      "                     chrome: split a larger export by time into\n"
	      "                     OUT-stem.part1.json, .part2.json, ... each at most SIZE\n"
	      "                     (default 256M; 0 = never split)\n"
	      "  --no-symbolize     leave native frames unsymbolized (also OPSCOPE_NO_SYMBOLIZE=1)\n"
	      "  -h, --help         show this help\n"
	      "\n"
	      "formats:\n",
	      stdout);
	for (const struct format *e = export_next(NULL); e; e = export_next(e))
		printf("  %-10s %s\n", e->name, e->summary);
}

/* FILE.opscope -> FILE.json; anything else gets the extension appended. */
static char *export_default_output(const char *in, const char *ext)
{
	size_t len = strlen(in);
	const char *suffix = ".opscope";
	size_t sl = strlen(suffix);
	if (len > sl && strcmp(in + len - sl, suffix) == 0)
		len -= sl;
	char *out = malloc(len + strlen(ext) + 1);
	if (!out)
		cli_die_oom();
	memcpy(out, in, len);
	strcpy(out + len, ext);
	return out;
}

/* Write with ops into tmp (a streaming format: [from, to) of the time line); 0 or an
 * OPSCOPE_E* code with err set. */
static int export_tmp(const struct model *m, const struct format *ops, const char *tmp,
		      int64_t from, int64_t to, char *err, size_t errsize)
{
	if (ops->export_to_path)
		return ops->export_to_path(m, tmp, err, errsize);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errsize, "cannot create %s: %s", tmp, strerror(errno));
		return OPSCOPE_EOPEN;
	}
	int erc = from == INT64_MIN && to == INT64_MAX
			  ? ops->export(m, f, err, errsize)
			  : ops->export_window(m, f, from, to, err, errsize);
	if (fclose(f) != 0 && erc == 0) {
		erc = OPSCOPE_EIO;
		snprintf(err, errsize, "%s", strerror(errno));
	}
	return erc;
}

static int64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

/* The parts of a Chrome export too large for one file: [from, to) is halved until each
 * half fits in max bytes (a part that cannot be split further is kept as it is). Parts are
 * written in time order as tmp files; names[] collects them. */
struct parts {
	char **names;
	size_t n, cap;
	const char *stem;
	int64_t max;
};

static int split_parts(const struct model *m, const struct format *ops, struct parts *p,
		       int64_t from, int64_t to, char *err, size_t errsize)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.part%zu.tmp%ld", p->stem, p->n + 1, (long)getpid());
	int erc = export_tmp(m, ops, tmp, from, to, err, errsize);
	if (erc)
		return erc;
	int64_t size = file_size(tmp);
	if (size > p->max && to - from > 1) {
		unlink(tmp);
		int64_t mid = from + (to - from) / 2;
		erc = split_parts(m, ops, p, from, mid, err, errsize);
		return erc ? erc : split_parts(m, ops, p, mid, to, err, errsize);
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		char **nn = realloc(p->names, cap * sizeof(*nn));
		if (!nn)
			cli_die_oom();
		p->names = nn;
		p->cap = cap;
	}
	if (!(p->names[p->n++] = strdup(tmp)))
		cli_die_oom();
	return 0;
}

/* Export to dest through a temporary file renamed over it on success; a Chrome export larger
 * than max_part bytes becomes DEST-stem.part1.json, .part2.json, ... */
static int export_to_file(const struct model *m, const struct format *ops, const char *dest,
			  int64_t max_part, int quiet)
{
	char err[512] = "";
	size_t tl = strlen(dest) + 32;
	char *tmp = malloc(tl);
	if (!tmp)
		cli_die_oom();
	snprintf(tmp, tl, "%s.tmp%ld", dest, (long)getpid());
	int erc = export_tmp(m, ops, tmp, INT64_MIN, INT64_MAX, err, sizeof(err));
	int64_t size = erc ? -1 : file_size(tmp);
	if (erc == 0 && ops->export_window && max_part > 0 && size > max_part) {
		unlink(tmp);
		/* DEST = stem.json -> stem.partN.json */
		size_t dl = strlen(dest), el = strlen(ops->ext);
		char *stem = strdup(dest);
		if (!stem)
			cli_die_oom();
		if (dl > el && strcmp(dest + dl - el, ops->ext) == 0)
			stem[dl - el] = '\0';
		struct parts p = { NULL, 0, 0, stem, max_part };
		int64_t lo = m->min_ns <= m->max_ns ? m->min_ns : 0;
		int64_t hi = m->min_ns <= m->max_ns ? m->max_ns + 1 : 1;
		erc = split_parts(m, ops, &p, lo, hi, err, sizeof(err));
		for (size_t i = 0; i < p.n; i++) {
			char final[4096];
			snprintf(final, sizeof(final), "%s.part%zu%s", stem, i + 1, ops->ext);
			if (erc == 0 && rename(p.names[i], final) != 0) {
				erc = OPSCOPE_EIO;
				snprintf(err, sizeof(err), "rename to %.300s: %s", final,
					 strerror(errno));
			}
			if (erc != 0)
				unlink(p.names[i]);
			else if (!quiet)
				fprintf(stderr, "opscope: wrote %s (%lld bytes)\n", final,
					(long long)file_size(final));
			free(p.names[i]);
		}
		free(p.names);
		free(stem);
		free(tmp);
		return erc ? cli_error("writing %s: %s", dest, err) : CLI_OK;
	}
	if (erc == 0 && rename(tmp, dest) != 0) {
		erc = OPSCOPE_EIO;
		snprintf(err, sizeof(err), "rename: %s", strerror(errno));
	}
	int rc = CLI_OK;
	if (erc != 0) {
		unlink(tmp);
		rc = cli_error("writing %s: %s", dest, err);
	} else if (!quiet) {
		fprintf(stderr, "opscope: wrote %s\n", dest);
	}
	free(tmp);
	return rc;
}

/* "256M", "64k", "1G", "1000": bytes; -1 when malformed. */
static int64_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		return -1;
	double mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024.0 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1024.0 * 1024 * 1024, end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v * mul > 9e18)
		return -1;
	return (int64_t)(v * mul);
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "max-part-size", required_argument, NULL, 'P' },
		{ "no-symbolize", no_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "chrome", *output = NULL;
	int quiet = 0, c;
	int64_t max_part = 256ll * 1024 * 1024; /* what viewers open comfortably */
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'Y':
			cli_no_symbolize = true;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'P':
			max_part = parse_size(optarg);
			if (max_part < 0)
				return cli_usage_error("export",
						       "--max-part-size wants a size: 256M, "
						       "64k, 1G");
			break;
		case 'h':
			export_usage();
			return CLI_OK;
		default:
			return cli_usage_error("export", NULL);
		}
	}
	const struct format *ops = export_find(format);
	if (!ops) {
		char names[96] = ""; /* "chrome, sqlite" */
		for (const struct format *e = export_next(NULL); e; e = export_next(e))
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 names[0] ? ", " : "", e->name);
		char msg[256];
		snprintf(msg, sizeof(msg), "unknown format '%.80s' (formats: %s)", format, names);
		return cli_usage_error("export", msg);
	}
	if (optind >= argc)
		return cli_usage_error("export", "no trace file given");
	if (optind + 1 < argc)
		return cli_usage_error("export", "one trace file at a time");
	const char *input = argv[optind];
	char *out_path = output ? NULL : export_default_output(input, ops->ext);
	const char *dest = output ? output : out_path;

	struct model *m = cli_load(input);
	if (!m) {
		free(out_path);
		return CLI_ERROR;
	}
	int rc = CLI_OK;
	if (strcmp(dest, "-") == 0) {
		char err[256] = "";
		if (!ops->export)
			rc = cli_error("the %s format needs a file: use -o FILE", ops->name);
		else if (ops->export(m, stdout, err, sizeof(err)) != 0 && !ferror(stdout))
			rc = cli_error("writing to stdout: %s", err); /* main() reports ferror */
	} else {
		rc = export_to_file(m, ops, dest, max_part, quiet);
	}
	model_free(m);
	free(out_path);
	return rc;
}
