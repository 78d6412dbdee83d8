/*
 * opscope_load.h: the .opscope format (opscope's own trace files, docs/trace-format.md), as
 * the registry sees it.
 */
#ifndef OPSCOPE_FORMATS_OPSCOPE_OPSCOPE_LOAD_H
#define OPSCOPE_FORMATS_OPSCOPE_OPSCOPE_LOAD_H

#include <stdbool.h>
#include <stddef.h>

/* The .opscope magic at the start of the file. */
bool opscope_sniff(const unsigned char *head, size_t n);

#endif
