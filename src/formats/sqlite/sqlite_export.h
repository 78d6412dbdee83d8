/*
 * sqlite_export.h: the SQLite database exporter (schema: docs/sqlite-schema.md).
 */
#ifndef OPSCOPE_FORMATS_SQLITE_SQLITE_EXPORT_H
#define OPSCOPE_FORMATS_SQLITE_SQLITE_EXPORT_H

#include <stddef.h>

#include "model/model.h"

/* Write the model as a new database at path. */
int sqlite_export(const struct model *m, const char *path, char *err, size_t errsize);

#endif
