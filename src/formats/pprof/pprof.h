/*
 * pprof.h: the pprof family, as the registry sees it: profile.proto files (gzip'd or plain;
 * pprof_load.c), gperftools' legacy CPU profiles (legacy_load.c), and the exports of a
 * model's stack samples as a gzip'd profile.proto (pprof_export.c) and as folded stacks
 * (folded_export.c). What is imported and how: docs/import-pprof.md.
 */
#ifndef OPSCOPE_FORMATS_PPROF_PPROF_H
#define OPSCOPE_FORMATS_PPROF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/model.h"

/* A profile.proto: plain, or gzip whose first decompressed bytes are one (JSON is not). */
bool pprof_sniff(const unsigned char *head, size_t n);
int pprof_load_file(struct model *m, const char *path, char *err, size_t errsize);
int pprof_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		   size_t errsize);
/* The samples of every file of the model as one gzip'd profile.proto. */
int pprof_export(const struct model *m, FILE *out, char *err, size_t errsize);

/* gperftools legacy profiles: the binary CPU profile (32 or 64-bit words, either byte order),
 * and the text heap, growth, contention and thread profiles, which are recognised and
 * refused with a message naming them. */
bool legacy_sniff(const unsigned char *head, size_t n);
int legacy_load_file(struct model *m, const char *path, char *err, size_t errsize);
int legacy_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		    size_t errsize);

/* The samples' native stacks as a gperftools legacy CPU profile (64-bit little-endian words,
 * then the maps text): what google-pprof reads. Python frames are left out. */
int legacy_export(const struct model *m, FILE *out, char *err, size_t errsize);

/* Folded stacks: "root;caller;leaf weight" per distinct stack. */
int folded_export(const struct model *m, FILE *out, char *err, size_t errsize);

/* Shared by the importers (pprof_common.c). */

/* The whole file at path in a malloc'd buffer (*size bytes); 0 or an OPSCOPE_E* code with a
 * message in err. */
int pprof_read_file(const char *path, unsigned char **data, size_t *size, char *err,
		    size_t errsize);
/* Decompress gzip data (one or more members) into a malloc'd buffer; 0 or an OPSCOPE_E*
 * code with "name: offset N: ..." in err (N: offset in the compressed data). */
int pprof_gunzip(const char *name, const unsigned char *data, size_t size, unsigned char **out,
		 size_t *outsize, char *err, size_t errsize);

#endif
