/*
 * pprof_common.c: what the pprof-family importers share: reading a whole file, and gzip
 * decompression in memory (profile.proto files are small next to traces: the largest of
 * pprof's own test data is 1.2 MB compressed), with errors that name the offset in the
 * compressed bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "opscope/opscope.h"

#include "formats/pprof/pprof.h"

int pprof_read_file(const char *path, unsigned char **data, size_t *size, char *err, size_t errsize)
{
	*data = NULL;
	*size = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
		return OPSCOPE_EOPEN;
	}
	size_t cap = 0, len = 0;
	unsigned char *b = NULL;
	int rc = 0;
	for (;;) {
		if (len == cap) {
			size_t nc = cap ? cap * 2 : 1 << 16;
			unsigned char *nb = nc > cap ? realloc(b, nc) : NULL;
			if (!nb) {
				snprintf(err, errsize, "%s: out of memory", path);
				rc = OPSCOPE_ENOMEM;
				break;
			}
			b = nb;
			cap = nc;
		}
		size_t n = fread(b + len, 1, cap - len, f);
		len += n;
		if (n == 0) {
			if (ferror(f)) {
				snprintf(err, errsize, "%s: read error: %s", path, strerror(errno));
				rc = OPSCOPE_EIO;
			}
			break;
		}
	}
	fclose(f);
	if (rc) {
		free(b);
		return rc;
	}
	*data = b;
	*size = len;
	return 0;
}

int pprof_gunzip(const char *name, const unsigned char *data, size_t size, unsigned char **out,
		 size_t *outsize, char *err, size_t errsize)
{
	*out = NULL;
	*outsize = 0;
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		snprintf(err, errsize, "%s: out of memory", name);
		return OPSCOPE_ENOMEM;
	}
	size_t cap = size * 4 + 4096, len = 0, in = 0;
	unsigned char *b = malloc(cap);
	int rc = 0;
	if (!b) {
		snprintf(err, errsize, "%s: out of memory", name);
		rc = OPSCOPE_ENOMEM;
	}
	while (rc == 0) {
		if (len == cap) {
			size_t nc = cap * 2;
			unsigned char *nb = nc > cap ? realloc(b, nc) : NULL;
			if (!nb) {
				snprintf(err, errsize, "%s: out of memory", name);
				rc = OPSCOPE_ENOMEM;
				break;
			}
			b = nb;
			cap = nc;
		}
		/* zlib counts in uInt: feed and drain at most 1 GiB per call */
		size_t avail_in = size - in, avail_out = cap - len;
		z.next_in = (unsigned char *)data + in;
		z.avail_in = (uInt)(avail_in < (1u << 30) ? avail_in : (1u << 30));
		z.next_out = b + len;
		z.avail_out = (uInt)(avail_out < (1u << 30) ? avail_out : (1u << 30));
		uInt had_in = z.avail_in, had_out = z.avail_out;
		int zr = inflate(&z, Z_NO_FLUSH);
		in += had_in - z.avail_in;
		len += had_out - z.avail_out;
		if (zr == Z_STREAM_END) {
			/* another gzip member may follow (cat a.gz b.gz); anything else ends it */
			if (size - in >= 2 && data[in] == 0x1f && data[in + 1] == 0x8b) {
				inflateReset(&z);
				continue;
			}
			break;
		}
		if (zr == Z_OK)
			continue;
		if (zr == Z_BUF_ERROR && z.avail_out == 0)
			continue;
		if (zr == Z_BUF_ERROR && in == size) {
			snprintf(err, errsize, "%s: offset %zu: gzip data is truncated", name, in);
			rc = OPSCOPE_ETRUNCATED;
		} else if (zr == Z_MEM_ERROR) {
			snprintf(err, errsize, "%s: out of memory", name);
			rc = OPSCOPE_ENOMEM;
		} else {
			snprintf(err, errsize, "%s: offset %zu: corrupt gzip data: %s", name, in,
				 z.msg ? z.msg : "error");
			rc = OPSCOPE_EFORMAT;
		}
	}
	inflateEnd(&z);
	if (rc) {
		free(b);
		return rc;
	}
	*out = b;
	*outsize = len;
	return 0;
}
