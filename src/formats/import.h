/*
 * import.h: load any trace the registry (registry.h) knows into the model: .opscope files,
 * PyTorch/Kineto and Chrome JSON traces (gzip'd or not), and further formats as they are
 * added. The format is recognised from the content, not the file name.
 */
#ifndef OPSCOPE_FORMATS_IMPORT_H
#define OPSCOPE_FORMATS_IMPORT_H

#include <stddef.h>

#include "model/model.h"

/* Append the trace at `path` to `m`. Returns 0, or a negative OPSCOPE_E* code with a one-line
 * message in err ("trace.json: offset 1234: expected ':'"). */
int import_load_path(struct model *m, const char *path, char *err, size_t errsize);

/* Append every trace file in directory `dir` (one process or rank per file), sorted by
 * name. Files that are not traces are skipped; a trace that fails to load is an error. */
int import_load_dir(struct model *m, const char *dir, char *err, size_t errsize);

/* The same from memory (JSON must not be gzip'd here); `name` is used in messages. */
int import_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		    size_t errsize);

#endif
