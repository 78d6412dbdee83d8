/*
 * tracefile.h: writing a .opscope file: the header, then whole records appended with one
 * write each (record header + payload), optionally zstd-compressed, each with its CRC-32C.
 * Used by the record stage's writer thread; not thread-safe (one writer per file).
 */
#ifndef OPSCOPE_TRACE_TRACEFILE_H
#define OPSCOPE_TRACE_TRACEFILE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"
#include "util/buf.h"

struct tracefile {
	int fd;			/* open file, O_WRONLY */
	uint64_t bytes_written; /* bytes in the file so far */
	int compress_level;	/* 0 = no compression, else zstd level */
	int failed;		/* a write failed; later writes are skipped */
	struct buf scratch;	/* compression output */
	void *zctx;		/* ZSTD_CCtx, when compressing */
	uint64_t features;	/* OPS_FEAT_* written in the header */
};

/* Create `path` (exclusive when `exclusive`), write the header. Returns 0 or -errno. */
int tracefile_open(struct tracefile *tf, const char *path, int exclusive, uint64_t features,
		   int compress_level, uint32_t pid, uint64_t realtime_ns);
/* Append one record. Compression is tried when `compressible` and enabled; it is kept only
 * if it saves space. Returns 0 or -errno. */
int tracefile_record(struct tracefile *tf, uint16_t type, const void *payload, size_t len,
		     int compressible);
/* Raise the header's min_reader_version to `version` (written at offset 10 in place), for a
 * writer that starts writing records an older reader must not read. */
void tracefile_set_min_reader(struct tracefile *tf, uint16_t version);
int tracefile_close(struct tracefile *tf);

#endif
