/*
 * main.c: the `opscope` tool's entry point: the command table, global options (--help,
 * --version), `help CMD`, suggestions for mistyped commands, and the helpers of cli.h.
 *
 * Each command gets argv from its own name on, with argv[0] rewritten to "opscope CMD", and
 * parses its own options; `opscope help CMD` is `opscope CMD --help`.
 *
 * Output to stdout is checked here, once, after every command (main_finish): SIGPIPE is
 * ignored, so that a write to a pipe whose reader went away (`opscope dump t | head`) fails
 * with EPIPE, and then the tool ends quietly with the command's status; any other write error
 * (a full disk) is one line on stderr and exit status 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <poll.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "cli/cli.h"
#include "formats/import.h"
#include "model/model.h"
#include "opscope_config.h"
#include "report/table.h"
#include "trace/format.h" /* OPS_FORMAT_VERSION, for --version */
#include "util/escape.h"

static const struct cli_command cli_commands[] = {
	{ "record", cmd_record, "run a command and record a trace of it" },
	{ "info", cmd_info, "show what a trace file holds and whether it is complete" },
	{ "dump", cmd_dump, "print the events of a trace as text" },
	{ "export", cmd_export, "convert a trace to another format (Chrome/Perfetto JSON)" },
	{ "report", cmd_report, "summary tables: where the time went (operators, kernels, steps)" },
	{ "merge", cmd_merge,
	  "combine partial summaries (report --format partial) into one report" },
	{ "view", cmd_view, "serve the HTML report of a trace on 127.0.0.1 and print its URL" },
	{ "diff", cmd_diff, "compare two traces (or two step ranges): what changed, beyond noise" },
	{ "help", NULL, "show help for a command" },
};
#define NCOMMANDS (sizeof(cli_commands) / sizeof(cli_commands[0]))

static void main_usage(FILE *out)
{
	fputs("usage: opscope [--version] [--help] COMMAND [ARGS...]\n"
	      "\n"
	      "opscope profiles deep-learning workloads: record a program, then inspect or\n"
	      "convert its trace.\n"
	      "\n"
	      "commands:\n",
	      out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", cli_commands[i].name, cli_commands[i].summary);
	fputs("\n'opscope help COMMAND' or 'opscope COMMAND --help' shows a command's options.\n",
	      out);
}

int cli_usage_error(const char *cmd, const char *msg)
{
	if (msg)
		fprintf(stderr, "opscope %s: %s\n", cmd, msg);
	fprintf(stderr, "try 'opscope %s --help'\n", cmd);
	return CLI_USAGE;
}

bool cli_parse_count(const char *s, long max, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < 0 || v > max)
		return false;
	*out = v;
	return true;
}

int cli_table_option(const char *cmd, int c, const char *arg, struct rformat_opts *fo)
{
	long v;
	switch (c) {
	case 'n':
		if (!cli_parse_count(arg, 1000000000L, &v) || v == 0)
			return cli_usage_error(cmd, "--top wants a positive number");
		fo->top = (size_t)v;
		return 1;
	case 'c':
		fo->columns = arg;
		return 1;
	case 'u':
		fo->unit = rformat_unit(arg);
		if (fo->unit < 0)
			return cli_usage_error(cmd, "--time-unit wants s, ms, us or ns");
		return 1;
	case 'w':
		if (!cli_parse_count(arg, 100000, &v) || v < 4)
			return cli_usage_error(cmd, "--width wants a number >= 4");
		fo->name_width = (int)v;
		return 1;
	default:
		return 0;
	}
}

int cli_close_output(FILE *out, int rc)
{
	if (out == stdout)
		return ferror(stdout) ? 0 : rc;
	if (fflush(out) != 0 || ferror(out))
		rc = -1;
	if (fclose(out) != 0)
		rc = -1;
	return rc;
}

int cli_error(const char *fmt, ...)
{
	va_list ap;
	fputs("opscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_ERROR;
}

_Noreturn void cli_die_oom(void)
{
	fputs("opscope: out of memory\n", stderr);
	exit(CLI_ERROR);
}

bool cli_no_symbolize;

void cli_symbolize_options(struct model *m)
{
	const char *e = getenv("OPSCOPE_NO_SYMBOLIZE");
	m->no_symbolize = cli_no_symbolize || (e && *e && strcmp(e, "0") != 0);
}

struct model *cli_load(const char *path)
{
	return cli_load_keep(path, NULL);
}

struct model *cli_load_keep(const char *path, const char *const *keep_arg_keys)
{
	struct model *m = model_new();
	if (!m)
		cli_die_oom();
	cli_symbolize_options(m);
	m->keep_arg_keys = keep_arg_keys;
	char err[512];
	if (import_load_path(m, path, err, sizeof(err)) != 0) {
		cli_error("%s", err);
		model_free(m);
		return NULL;
	}
	return m;
}

/* The CLI's terminal escaping: escape_terminal, \r as \x0d. */
void cli_put_escaped(FILE *out, const char *s, size_t len)
{
	escape_terminal(esc_sink_file(out), s, len, 0);
}

/* SIGPIPE as opscope was started with, given back to the programs `record` runs. */
static struct sigaction main_sigpipe;
static bool main_sigpipe_saved;

void cli_restore_sigpipe(void)
{
	if (main_sigpipe_saved)
		sigaction(SIGPIPE, &main_sigpipe, NULL);
}

static void main_ignore_sigpipe(void)
{
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	main_sigpipe_saved = sigaction(SIGPIPE, &ign, &main_sigpipe) == 0;
}

/* Has the reader of stdout gone away (a pipe or socket closed at the other end)? err is the
 * errno of the failed write when known. */
static bool main_stdout_gone(int err)
{
	if (err == EPIPE)
		return true;
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0, .revents = 0 };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

/* After a command: write what stdout still buffers and judge how its writes went. A reader
 * gone away is no error (the output was not wanted: rc stands, nothing is printed); another
 * write error is one line and CLI_ERROR. */
static int main_finish(int rc)
{
	int before = errno; /* of the command's last failed write, when one failed last */
	errno = 0;
	bool failed = fflush(stdout) != 0;
	int err = failed ? errno : before;
	if (!failed && !ferror(stdout))
		return rc;
	if (main_stdout_gone(err))
		return rc;
	if (err == 0)
		fputs("opscope: error writing to stdout\n", stderr);
	else
		fprintf(stderr, "opscope: error writing to stdout: %s\n", strerror(err));
	return CLI_ERROR;
}

/* Levenshtein distance of two short words (for suggestions). */
static size_t main_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 32 || lb > 32)
		return 99;
	size_t row[33];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const struct cli_command *main_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(cli_commands[i].name, name) == 0)
			return &cli_commands[i];
	return NULL;
}

static int main_unknown(const char *name)
{
	const char *best = NULL;
	size_t best_d = 3;
	for (size_t i = 0; i < NCOMMANDS; i++) {
		size_t d = main_distance(name, cli_commands[i].name);
		if (d < best_d) {
			best_d = d;
			best = cli_commands[i].name;
		}
	}
	if (best)
		fprintf(stderr, "opscope: '%s' is not a command. Did you mean '%s'?\n", name, best);
	else
		fprintf(stderr, "opscope: '%s' is not a command. See 'opscope --help'.\n", name);
	return CLI_USAGE;
}

static int main_run(const struct cli_command *c, int argc, char **argv)
{
	char name[64];
	snprintf(name, sizeof(name), "opscope %s", c->name);
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		cli_die_oom();
	args[0] = name;
	for (int i = 1; i < argc; i++)
		args[i] = argv[i];
	int rc = c->fn(argc, args);
	free(args);
	return rc;
}

static int main_dispatch(int argc, char **argv)
{
	if (argc < 2) {
		main_usage(stderr);
		return CLI_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		main_usage(stdout);
		return CLI_OK;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		printf("opscope %s (trace format %d, zstd %s)\n", OPSCOPE_VERSION_STRING,
		       OPS_FORMAT_VERSION, OPSCOPE_HAVE_ZSTD ? "yes" : "no");
		return CLI_OK;
	}
	if (cmd[0] == '-') {
		fprintf(stderr, "opscope: unknown option '%s'\n", cmd);
		fprintf(stderr, "try 'opscope --help'\n");
		return CLI_USAGE;
	}
	if (strcmp(cmd, "help") == 0) {
		if (argc < 3) {
			main_usage(stdout);
			return CLI_OK;
		}
		const struct cli_command *c = main_find(argv[2]);
		if (!c || !c->fn)
			return c ? (main_usage(stdout), CLI_OK) : main_unknown(argv[2]);
		char help[] = "--help";
		char *args[3] = { argv[2], help, NULL };
		return main_run(c, 2, args);
	}
	const struct cli_command *c = main_find(cmd);
	if (!c)
		return main_unknown(cmd);
	return main_run(c, argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	main_ignore_sigpipe();
	return main_finish(main_dispatch(argc, argv));
}
