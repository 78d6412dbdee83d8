/*
 * nsys.h: the importer of Nsight Systems SQLite exports (`nsys export --type sqlite`, plain
 * or gzip'd), for the format table (registry.c). What is read and how it maps onto the model:
 * docs/import-nsys.md.
 */
#ifndef OPSCOPE_FORMATS_NSYS_NSYS_H
#define OPSCOPE_FORMATS_NSYS_NSYS_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

/* A SQLite database ("SQLite format 3"), or gzip whose first bytes decompress to one. Whether
 * it is an Nsight Systems export is the loader's to say: it needs the tables. */
bool nsys_sniff(const unsigned char *head, size_t n);
/* Append the export at path (or in memory), plain or gzip'd. OPSCOPE_EUNSUPPORTED when the
 * database is not an Nsight Systems export, OPSCOPE_EFORMAT when it is corrupt; one line in
 * err naming the file and what was wrong. */
int nsys_load_file(struct model *m, const char *path, char *err, size_t errsize);
int nsys_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		  size_t errsize);

#endif
