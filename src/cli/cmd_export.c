/*
 * cmd_export.c: `opscope export FILE [--format chrome] [-o OUT]`: convert a trace through one
 * of the exporters of convert/export.h.
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
#include <unistd.h>

#include "opscope/opscope.h"

#include "cli/cli.h"
#include "convert/export.h"
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
	      "  -h, --help         show this help\n"
	      "\n"
	      "formats:\n",
	      stdout);
	for (const struct export_ops *e = export_formats; e->name; e++)
		printf("  %-8s %s\n", e->name, e->summary);
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

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "chrome", *output = NULL;
	int quiet = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			export_usage();
			return CLI_OK;
		default:
			return cli_usage_error("export", NULL);
		}
	}
	const struct export_ops *ops = export_find(format);
	if (!ops) {
		char msg[160];
		snprintf(msg, sizeof(msg), "unknown format '%.80s' (formats: chrome)", format);
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
	char err[256] = "";
	if (strcmp(dest, "-") == 0) {
		if (ops->fn(m, stdout, err, sizeof(err)) != 0)
			rc = cli_error("writing to stdout: %s", err);
	} else {
		size_t tl = strlen(dest) + 32;
		char *tmp = malloc(tl);
		if (!tmp)
			cli_die_oom();
		snprintf(tmp, tl, "%s.tmp%ld", dest, (long)getpid());
		FILE *f = fopen(tmp, "w");
		if (!f) {
			rc = cli_error("cannot create %s: %s", tmp, strerror(errno));
		} else {
			int erc = ops->fn(m, f, err, sizeof(err));
			if (fclose(f) != 0 && erc == 0) {
				erc = OPSCOPE_EIO;
				snprintf(err, sizeof(err), "%s", strerror(errno));
			}
			if (erc == 0 && rename(tmp, dest) != 0) {
				erc = OPSCOPE_EIO;
				snprintf(err, sizeof(err), "rename: %s", strerror(errno));
			}
			if (erc != 0) {
				unlink(tmp);
				rc = cli_error("writing %s: %s", dest, err);
			} else if (!quiet) {
				fprintf(stderr, "opscope: wrote %s\n", dest);
			}
		}
		free(tmp);
	}
	model_free(m);
	free(out_path);
	return rc;
}
