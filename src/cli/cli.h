/*
 * cli.h: what the commands of the `opscope` tool share: the command table type, the entry
 * point of each command, and small helpers for errors and for loading traces.
 *
 * Exit codes of every command: CLI_OK (0), CLI_ERROR (1) when something at run time failed
 * (an unreadable trace, a write error), CLI_USAGE (2) for a usage error; `diff` also
 * CLI_FIRED (3) when a --fail-if rule fired. Each command parses
 * its own options with getopt_long; argv[0] is "opscope CMD" so that getopt's own messages
 * name the command.
 *
 * stdout is main()'s to check: a command that writes there leaves a write error on it
 * (ferror(stdout)) to main(), which ends quietly when the reader went away (EPIPE: SIGPIPE is
 * ignored) and prints one line and exits CLI_ERROR for any other error. A command may stop
 * early once ferror(stdout) is set.
 */
#ifndef OPSCOPE_CLI_CLI_H
#define OPSCOPE_CLI_CLI_H

#include <stdbool.h>
#include <stdio.h>

struct model;

#define CLI_OK	  0
#define CLI_ERROR 1
#define CLI_USAGE 2
#define CLI_FIRED 3 /* diff: a --fail-if rule fired */

struct cli_command {
	const char *name;		  /* "record" */
	int (*fn)(int argc, char **argv); /* argv[0] is "opscope record" */
	const char *summary;		  /* one line for `opscope --help` */
};

int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_view(int argc, char **argv);

/* The HTML report (`report --format html`) of the traces or directories `paths`, with the
 * views of the comma list `views` (NULL: all), in a new buffer *page of *len bytes (the
 * caller frees it). CLI_OK, or CLI_ERROR / CLI_USAGE after printing why (*page NULL). */
int cli_report_html(char *const *paths, size_t npaths, const char *views, char **page, size_t *len);

/* Print "opscope CMD: MSG" (when msg is not NULL) and "try 'opscope CMD --help'" to stderr;
 * returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *msg);
/* A whole decimal number in [0, max] (--top, --width); false when s is anything else. */
bool cli_parse_count(const char *s, long max, long *out);
struct rformat_opts;
/* The options that shape a table, shared by report, merge and diff: -n/--top, -c/--columns,
 * -u/--time-unit, -w/--width (option c with argument arg) into fo. 1 when c is one of them,
 * 0 when it is not, CLI_USAGE after a usage error naming cmd. */
int cli_table_option(const char *cmd, int c, const char *arg, struct rformat_opts *fo);
/* Finish a command's output after writing it with result rc: a file is flushed and closed,
 * and a failure of either makes the result -1; stdout is left open, and an error writing it
 * is main()'s to report (the result is then 0). */
int cli_close_output(FILE *out, int rc);
/* Print "opscope: MSG" to stderr; returns CLI_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Out of memory in the tool: print and exit(CLI_ERROR). Only the CLI may exit. */
_Noreturn void cli_die_oom(void);
/* Give SIGPIPE back the disposition opscope was started with (main() ignores it): for a
 * program about to be exec'd, which inherits an ignored signal. */
void cli_restore_sigpipe(void);
/* Set by a command's --no-symbolize: native frames are not symbolized at load time. */
extern bool cli_no_symbolize;
/* Apply --no-symbolize or OPSCOPE_NO_SYMBOLIZE (set, not "0") to a model before loading. */
void cli_symbolize_options(struct model *m);
/* Load one trace file into a new model; NULL after printing why. */
struct model *cli_load(const char *path);
/* The same, keeping only the arguments with these keys (model.keep_arg_keys; NULL: all). */
struct model *cli_load_keep(const char *path, const char *const *keep_arg_keys);
/* Write `len` bytes of s to out, escaping what a terminal would interpret
 * (util/escape.h: escape_terminal with \n and \t short, \r as \x0d). */
void cli_put_escaped(FILE *out, const char *s, size_t len);

#endif
