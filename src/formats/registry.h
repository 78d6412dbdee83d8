/*
 * registry.h: every trace format opscope reads or writes, in one table. A row names the
 * format and says how to recognise it, load it and write it; every import and export path
 * goes through the table (import.h, the CLI's `export` command and its help text, the Python
 * module, the fuzzers), so that a new format is a new folder under src/formats/ plus one row
 * in registry.c.
 *
 * Loaders append to the model and return 0 or a negative OPSCOPE_E* code with a one-line
 * message in err ("trace.json: offset 1234: expected ':'"). Exporters stream the model to a
 * FILE through their own buffering and never print anything else, or, for a database, write
 * a file of their own; they return 0 or a negative OPSCOPE_E* code with a message in err.
 */
#ifndef OPSCOPE_FORMATS_REGISTRY_H
#define OPSCOPE_FORMATS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

struct format {
	const char *name;    /* on the command line ("chrome") */
	const char *ext;     /* extension of its files, what `export` appends (".json") */
	const char *summary; /* one line for help texts */
	/* Whether the first bytes of a file (up to 256, fewer for a short file) are this
	 * format; NULL for a format that is only written. Formats are asked in table order. */
	bool (*sniff)(const unsigned char *head, size_t n);
	/* Append the file at path, or the same bytes from memory (`name` for messages). */
	int (*load_file)(struct model *m, const char *path, char *err, size_t errsize);
	int (*load_mem)(struct model *m, const char *name, const void *data, size_t size, char *err,
			size_t errsize);
	/* A streaming export writes to a FILE (stdout included) ... */
	int (*export)(const struct model *m, FILE *out, char *err, size_t errsize);
	/* ... and may write the events that start in [from, to) (ns) alone, so that a large
	 * export can be split by time (NULL if it cannot) ... */
	int (*export_window)(const struct model *m, FILE *out, int64_t from, int64_t to, char *err,
			     size_t errsize);
	/* ... a database needs a path of its own (export is NULL then). */
	int (*export_to_path)(const struct model *m, const char *path, char *err, size_t errsize);
};

/* Every format, ending with a row whose name is NULL. */
extern const struct format format_table[];

/* The format called `name`, or NULL. */
const struct format *format_find(const char *name);
/* Whether the format can be written (export or export_to_path). */
bool format_exports(const struct format *f);
/* The exporter called `name` (a format that exports), or NULL. */
const struct format *export_find(const char *name);
/* The exporters in table order: export_next(NULL) is the first, NULL after the last. */
const struct format *export_next(const struct format *prev);

#endif
