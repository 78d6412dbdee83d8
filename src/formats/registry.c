/*
 * registry.c: the table of formats (registry.h). One row per format, in the order files are
 * recognised in and exporters are listed in: the .opscope magic first (an unambiguous
 * signature), then gperftools' binary header and text profiles, Nsight Systems SQLite exports
 * (plain or gzip'd), profile.proto (plain, or gzip'd: its sniffer decompresses the head), then
 * JSON (gzip'd or not). Each row points into its format's folder; nothing else here knows a
 * format by name.
 */
#include "formats/registry.h"

#include <string.h>

#include "formats/chrome/chrome.h"
#include "formats/nsys/nsys.h"
#include "formats/opscope/opscope_load.h"
#include "formats/pprof/pprof.h"
#include "formats/sqlite/sqlite_export.h"

const struct format format_table[] = {
	{ "opscope", ".opscope", ".opscope trace files, as opscope record writes them",
	  opscope_sniff, opscope_load_file, opscope_load_mem, NULL, NULL, NULL },
	{ "gperftools", ".prof",
	  "gperftools legacy CPU profiles (CPUPROFILE, yep; google-pprof): native frames only",
	  legacy_sniff, legacy_load_file, legacy_load_mem, legacy_export, NULL, NULL },
	/* before pprof and chrome: all three may be gzip'd; a SQLite header inside is ours */
	{ "nsys", ".sqlite",
	  "Nsight Systems SQLite exports (nsys export --type sqlite): import only", nsys_sniff,
	  nsys_load_file, nsys_load_mem, NULL, NULL, NULL },
	/* before chrome: both may be gzip'd, and this one looks inside */
	{ "pprof", ".pb.gz", "pprof profile.proto, gzip'd (go tool pprof)", pprof_sniff,
	  pprof_load_file, pprof_load_mem, pprof_export, NULL, NULL },
	{ "folded", ".folded",
	  "folded stacks: 'root;caller;leaf weight' (flamegraph.pl, speedscope)", NULL, NULL, NULL,
	  folded_export, NULL, NULL },
	{ "chrome", ".json", "Chrome / Perfetto trace JSON (chrome://tracing, ui.perfetto.dev)",
	  kineto_sniff, kineto_load_file, kineto_load_mem, chrome_export, chrome_export_window,
	  NULL },
	{ "sqlite", ".sqlite", "SQLite database: tracks, strings, events, args, flows", NULL, NULL,
	  NULL, NULL, NULL, sqlite_export },
	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL },
};

const struct format *format_find(const char *name)
{
	for (const struct format *f = format_table; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

bool format_exports(const struct format *f)
{
	return f->export || f->export_to_path;
}

const struct format *export_find(const char *name)
{
	const struct format *f = format_find(name);
	return f && format_exports(f) ? f : NULL;
}

const struct format *export_next(const struct format *prev)
{
	for (const struct format *f = prev ? prev + 1 : format_table; f->name; f++)
		if (format_exports(f))
			return f;
	return NULL;
}
