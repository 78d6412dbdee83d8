/*
 * opscope_load.h: the .opscope format (opscope's own trace files, docs/trace-format.md), as
 * the registry sees it: recognising a file and loading it into the model.
 */
#ifndef OPSCOPE_FORMATS_OPSCOPE_OPSCOPE_LOAD_H
#define OPSCOPE_FORMATS_OPSCOPE_OPSCOPE_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

/* The .opscope magic at the start of the file. */
bool opscope_sniff(const unsigned char *head, size_t n);

/* Load one .opscope file and append its processes, tracks and events to the model. Returns 0
 * or a negative OPSCOPE_E* code with a one-line message in err. A torn tail is not an error:
 * see the model_file entry. After an error the model stays consistent and holds what was
 * read before it. */
int opscope_load_file(struct model *m, const char *path, char *err, size_t errsize);
/* The same from memory; `name` is used in messages. */
int opscope_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		     size_t errsize);

#endif
