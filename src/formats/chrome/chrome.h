/*
 * chrome.h: the Chrome trace-event JSON family, as the registry sees it: the importer of
 * PyTorch/Kineto and Chrome JSON traces (plain or gzip'd; kineto_*.c behind kineto.h) and the
 * Chrome / Perfetto JSON exporter (chrome_export.c).
 */
#ifndef OPSCOPE_FORMATS_CHROME_CHROME_H
#define OPSCOPE_FORMATS_CHROME_CHROME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

/* gzip's magic, or JSON text: '{' or '[' after an optional byte order mark and whitespace. */
bool kineto_sniff(const unsigned char *head, size_t n);
/* Import a Chrome-JSON / Kineto trace. A JSON object without "traceEvents" gives
 * OPSCOPE_EUNSUPPORTED and leaves the model unchanged. From memory, JSON must not be
 * gzip'd. */
int kineto_load_file(struct model *m, const char *path, char *err, size_t errsize);
int kineto_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		    size_t errsize);

/* Chrome / Perfetto JSON (object format). */
int chrome_export(const struct model *m, FILE *out, char *err, size_t errsize);
/* The same for the events that start in [from, to) (ns); the metadata of every process and
 * thread is in every part, so that each opens on its own. */
int chrome_export_window(const struct model *m, FILE *out, int64_t from, int64_t to, char *err,
			 size_t errsize);

/* The Chrome "cname" (a fixed palette of reserved colour names) nearest to an ARGB colour
 * such as NVTX's; the exporter writes it next to the exact ARGB, which stays in the args. */
const char *chrome_cname(uint32_t argb);

#endif
