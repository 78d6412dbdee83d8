/*
 * tracefile.c: the writing side of the .opscope format (see tracefile.h, docs/trace-format.md).
 *
 * Crash tolerance rests on two rules kept here: a record goes to the kernel in one writev,
 * header and payload together, so a killed process leaves whole records followed by at most
 * one partial one; and every payload carries a CRC so a reader can tell a torn tail.
 */
#include "trace/tracefile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "opscope_config.h"
#include "util/bytes.h"
#include "util/crc32c.h"

#if OPSCOPE_HAVE_ZSTD
#include <zstd.h>
#endif

static int tracefile_write_all(struct tracefile *tf, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(tf->fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			tf->failed = 1;
			return -errno;
		}
		tf->bytes_written += (uint64_t)w;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

int tracefile_open(struct tracefile *tf, const char *path, int exclusive, uint64_t features,
		   int compress_level, uint32_t pid, uint64_t realtime_ns)
{
	memset(tf, 0, sizeof(*tf));
	buf_init(&tf->scratch);
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
	tf->fd = open(path, flags, 0644);
	if (tf->fd < 0)
		return -errno;
#if OPSCOPE_HAVE_ZSTD
	if (compress_level > 0) {
		tf->zctx = ZSTD_createCCtx();
		if (tf->zctx) {
			tf->compress_level = compress_level;
			features |= OPS_FEAT_ZSTD;
		}
	}
#else
	(void)compress_level;
#endif
	tf->features = features;
	uint8_t h[64] = { 0 };
	memcpy(h, OPS_MAGIC, OPS_MAGIC_BYTES);
	put_u16le(h + 8, OPS_FORMAT_VERSION);
	put_u16le(h + 10, OPS_FORMAT_MIN_READER);
	put_u32le(h + 12, sizeof(struct ops_file_header));
	put_u64le(h + 16, features);
	put_u64le(h + 24, realtime_ns);
	put_u32le(h + 32, pid);
	struct iovec iov = { h, sizeof(h) };
	return tracefile_write_all(tf, &iov, 1);
}

int tracefile_record(struct tracefile *tf, uint16_t type, const void *payload, size_t len,
		     int compressible)
{
	if (tf->failed)
		return -EIO;
	if (len > OPS_MAX_RECORD_BYTES)
		return -EFBIG;
	const void *data = payload;
	size_t stored = len;
	/* a reader that cannot decode the events must not skip them (format.h) */
	uint16_t flags =
		type == OPS_REC_EVENTS2 || (type >= OPS_REC_MAPPINGS && type <= OPS_REC_GPU)
			? OPS_RECF_CRITICAL
			: 0;
#if OPSCOPE_HAVE_ZSTD
	if (compressible && tf->compress_level > 0 && len >= 64) {
		size_t bound = ZSTD_compressBound(len);
		buf_clear(&tf->scratch);
		uint8_t *dst = buf_reserve(&tf->scratch, bound);
		if (dst) {
			size_t z = ZSTD_compressCCtx(tf->zctx, dst, bound, payload, len,
						     tf->compress_level);
			if (!ZSTD_isError(z) && z < len) {
				data = dst;
				stored = z;
				flags |= OPS_RECF_ZSTD;
			}
		}
	}
#else
	(void)compressible;
#endif
	uint8_t h[16];
	put_u16le(h, type);
	put_u16le(h + 2, flags);
	put_u32le(h + 4, (uint32_t)stored);
	put_u32le(h + 8, (uint32_t)len);
	put_u32le(h + 12, crc32c(0, data, stored));
	struct iovec iov[2] = { { h, sizeof(h) }, { (void *)data, stored } };
	return tracefile_write_all(tf, iov, 2);
}

void tracefile_set_min_reader(struct tracefile *tf, uint16_t version)
{
	uint8_t v[2];
	put_u16le(v, version);
	/* the header is never written again otherwise; a file that cannot seek (a pipe) keeps
	 * the old value, and its CRITICAL records still stop an older reader */
	if (tf->fd >= 0 && !tf->failed)
		(void)!pwrite(tf->fd, v, sizeof(v), 10);
}

int tracefile_close(struct tracefile *tf)
{
	int rc = 0;
	if (tf->fd >= 0 && close(tf->fd) != 0)
		rc = -errno;
	tf->fd = -1;
#if OPSCOPE_HAVE_ZSTD
	if (tf->zctx)
		ZSTD_freeCCtx(tf->zctx);
#endif
	tf->zctx = NULL;
	buf_free(&tf->scratch);
	return rc ? rc : (tf->failed ? -EIO : 0);
}
