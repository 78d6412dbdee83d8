/*
 * export.c: the table of exporters (export.h). One line per format; the CLI's `export`
 * command and its help text are driven by it.
 */
#include "convert/export.h"

#include <string.h>

const struct export_ops export_formats[] = {
	{ "chrome", ".json", "Chrome / Perfetto trace JSON (chrome://tracing, ui.perfetto.dev)",
	  chrome_export, NULL },
	{ "sqlite", ".sqlite", "SQLite database: tracks, strings, events, args, flows", NULL,
	  sqlite_export },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct export_ops *export_find(const char *name)
{
	for (const struct export_ops *e = export_formats; e->name; e++)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}
