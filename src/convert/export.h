/*
 * export.h: exporters of the event model to other tools' formats, behind one small ops table
 * so that the CLI lists and finds them by name ("chrome"), and new ones register by adding
 * one line to export.c.
 *
 * An exporter streams the model to a FILE through its own buffering and never prints
 * anything else; it returns 0 or a negative OPSCOPE_E* code with a message in err.
 */
#ifndef OPSCOPE_CONVERT_EXPORT_H
#define OPSCOPE_CONVERT_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

struct export_ops {
	const char *name;    /* format name on the command line ("chrome") */
	const char *ext;     /* default output extension (".json") */
	const char *summary; /* one line for help texts */
	/* a streaming format writes to a FILE (stdout included) ... */
	int (*fn)(const struct model *m, FILE *out, char *err, size_t errsize);
	/* ... a database format needs a path of its own (fn is NULL then) */
	int (*to_path)(const struct model *m, const char *path, char *err, size_t errsize);
};

/* Every exporter, ending with an entry whose name is NULL. */
extern const struct export_ops export_formats[];
/* The exporter called `name`, or NULL. */
const struct export_ops *export_find(const char *name);

/* Chrome / Perfetto JSON (object format). */
int chrome_export(const struct model *m, FILE *out, char *err, size_t errsize);
/* The same for the events that start in [from, to) (ns); the metadata of every process and
 * thread is in every part, so that each opens on its own. */
int chrome_export_window(const struct model *m, FILE *out, int64_t from, int64_t to, char *err,
			 size_t errsize);
/* SQLite database (docs/sqlite-schema.md). */
int sqlite_export(const struct model *m, const char *path, char *err, size_t errsize);

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there are not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). n > 0. */
static inline size_t export_utf8_len(const uint8_t *s, size_t n)
{
	uint8_t c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	uint8_t lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

#endif
