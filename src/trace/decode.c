/*
 * decode.c: the decoder of the .opscope format (decode.h, docs/trace-format.md).
 *
 * Invariants: every byte of the file is read through a bounds-checked cursor; no size from
 * the file is used for an allocation before it is checked against the bytes that exist and
 * against OPS_MAX_RECORD_BYTES; r->pos only moves forward, past whole records whose CRC
 * matched. Damage is sorted into two kinds: framing damage (a record that does not fit, a
 * CRC mismatch), which is what a killed writer leaves and ends the valid data quietly; and
 * content damage in a record whose CRC matched, which no writer of ours produces and is a
 * hard OPSCOPE_EFORMAT error.
 */
#include "trace/decode.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "opscope_config.h"
#include "util/bytes.h"
#include "util/crc32c.h"

#if OPSCOPE_HAVE_ZSTD
#include <zstd.h>
#endif

/* Flags this decoder understands; any other bit in a known record is refused. */
#define DECODE_KNOWN_FLAGS (OPS_RECF_ZSTD | OPS_RECF_CRITICAL)

static int decode_error(struct decoder *r, int err, size_t offset, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
static int decode_error(struct decoder *r, int err, size_t offset, const char *fmt, va_list ap)
{
	if (r->err[0])
		return err; /* keep the first message */
	r->rc = err;
	int n = snprintf(r->err, sizeof(r->err), "%s: offset %zu: ", r->name, offset);
	if (n > 0 && (size_t)n < sizeof(r->err))
		vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	return err;
}

static int decode_errorf(struct decoder *r, int err, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int decode_errorf(struct decoder *r, int err, size_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	decode_error(r, err, offset, fmt, ap);
	va_end(ap);
	return err;
}

int decode_fail(struct decoder *r, size_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	decode_error(r, OPSCOPE_EFORMAT, offset, fmt, ap);
	va_end(ap);
	return OPSCOPE_EFORMAT;
}

static int decode_check_header(struct decoder *r)
{
	struct cursor c;
	cursor_init(&c, r->data, r->size);
	const uint8_t *magic = cursor_bytes(&c, OPS_MAGIC_BYTES);
	if (!magic) {
		size_t n = r->size < OPS_MAGIC_BYTES ? r->size : OPS_MAGIC_BYTES;
		if (memcmp(r->data, OPS_MAGIC, n) == 0)
			return decode_errorf(r, OPSCOPE_ETRUNCATED, 0,
					     "file ends inside the header (%zu bytes)", r->size);
		return decode_errorf(r, OPSCOPE_EFORMAT, 0, "not an opscope trace (bad magic)");
	}
	if (memcmp(magic, OPS_MAGIC, OPS_MAGIC_BYTES) != 0)
		return decode_errorf(r, OPSCOPE_EFORMAT, 0, "not an opscope trace (bad magic)");
	memcpy(r->hdr.magic, magic, OPS_MAGIC_BYTES);
	r->hdr.version = cursor_u16(&c);
	r->hdr.min_reader_version = cursor_u16(&c);
	r->hdr.header_bytes = cursor_u32(&c);
	r->hdr.features = cursor_u64(&c);
	r->hdr.create_realtime_ns = cursor_u64(&c);
	r->hdr.pid = cursor_u32(&c);
	r->hdr.reserved0 = cursor_u32(&c);
	for (int i = 0; i < 3; i++)
		r->hdr.reserved[i] = cursor_u64(&c);
	if (c.failed)
		return decode_errorf(r, OPSCOPE_ETRUNCATED, 0,
				     "file ends inside the header (%zu bytes)", r->size);
	if (r->hdr.min_reader_version > OPS_READER_VERSION)
		return decode_errorf(r, OPSCOPE_EVERSION, 8,
				     "format version %u needs a reader of version %u or newer "
				     "(this one reads up to %u)",
				     r->hdr.version, r->hdr.min_reader_version, OPS_READER_VERSION);
	if (r->hdr.header_bytes < sizeof(struct ops_file_header))
		return decode_errorf(r, OPSCOPE_EFORMAT, 12, "header size %u is below 64",
				     r->hdr.header_bytes);
	if (r->hdr.header_bytes > r->size)
		return decode_errorf(r, OPSCOPE_ETRUNCATED, 12,
				     "header size %u exceeds the file (%zu bytes)",
				     r->hdr.header_bytes, r->size);
	r->pos = r->hdr.header_bytes;
	r->valid_end = r->pos;
	return 0;
}

static void decode_reset(struct decoder *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	buf_init(&r->scratch);
}

int decode_open_mem(struct decoder *r, const char *name, const void *data, size_t size)
{
	decode_reset(r, name);
	r->data = size ? data : (const uint8_t *)"";
	r->size = size;
	return decode_check_header(r);
}

/* Read a non-regular file (a pipe, /dev/stdin) into memory, up to a sane limit. */
static int decode_slurp(struct decoder *r, int fd)
{
	size_t cap = 1 << 16, len = 0;
	uint8_t *p = malloc(cap);
	if (!p)
		return decode_errorf(r, OPSCOPE_ENOMEM, 0, "out of memory");
	for (;;) {
		if (len == cap) {
			if (cap >= ((size_t)1 << 40)) {
				free(p);
				return decode_errorf(r, OPSCOPE_EIO, len, "input too large");
			}
			uint8_t *q = realloc(p, cap * 2);
			if (!q) {
				free(p);
				return decode_errorf(r, OPSCOPE_ENOMEM, len, "out of memory");
			}
			p = q;
			cap *= 2;
		}
		ssize_t n = read(fd, p + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(p);
			return decode_errorf(r, OPSCOPE_EIO, len, "read failed: %s", strerror(e));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	r->owned = p;
	r->data = len ? p : (const uint8_t *)"";
	r->size = len;
	return 0;
}

int decode_open_file(struct decoder *r, const char *path)
{
	decode_reset(r, path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(r->err, sizeof(r->err), "%s: cannot open: %s", path, strerror(errno));
		r->rc = OPSCOPE_EOPEN;
		return OPSCOPE_EOPEN;
	}
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(r->err, sizeof(r->err), "%s: is a directory", path);
		r->rc = OPSCOPE_EOPEN;
		close(fd);
		return OPSCOPE_EOPEN;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			r->map = m;
			r->data = m;
			r->size = (size_t)st.st_size;
		} else {
			rc = decode_slurp(r, fd);
		}
	} else {
		rc = decode_slurp(r, fd);
	}
	close(fd);
	if (rc == 0)
		rc = decode_check_header(r);
	if (rc != 0) {
		char keep[DECODE_ERR_BYTES];
		memcpy(keep, r->err, sizeof(keep));
		decode_close(r);
		memcpy(r->err, keep, sizeof(keep));
	}
	return rc;
}

void decode_close(struct decoder *r)
{
	if (r->map)
		munmap(r->map, r->size);
	free(r->owned);
	buf_free(&r->scratch);
#if OPSCOPE_HAVE_ZSTD
	ZSTD_freeDCtx(r->zstd);
#endif
	r->zstd = NULL;
	r->map = NULL;
	r->owned = NULL;
	r->data = (const uint8_t *)"";
	r->size = 0;
	r->done = true;
}

/* Framing damage: the valid data ends at r->pos. */
static int decode_tail(struct decoder *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int decode_tail(struct decoder *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->tail_msg, sizeof(r->tail_msg), "%s: offset %zu: ", r->name, r->pos);
	if (n > 0 && (size_t)n < sizeof(r->tail_msg)) {
		va_start(ap, fmt);
		vsnprintf(r->tail_msg + n, sizeof(r->tail_msg) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	r->done = true;
	r->valid_end = r->pos;
	r->discarded_bytes = r->size - r->pos;
	if (r->strict) {
		memcpy(r->err, r->tail_msg, sizeof(r->err));
		r->rc = OPSCOPE_ETRUNCATED;
		return OPSCOPE_ETRUNCATED;
	}
	return 0;
}

static bool decode_known_type(unsigned type)
{
	return type >= OPS_REC_METADATA && type <= OPS_REC_LAST;
}

static int decode_decompress(struct decoder *r, size_t offset, const uint8_t *src, size_t len,
			     uint32_t raw_bytes, struct decode_record *rec)
{
#if OPSCOPE_HAVE_ZSTD
	unsigned long long want = ZSTD_getFrameContentSize(src, len);
	if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN || want != raw_bytes)
		return decode_fail(r, offset, "zstd frame size does not match raw size %u",
				   raw_bytes);
	buf_clear(&r->scratch);
	uint8_t *dst = buf_reserve(&r->scratch, raw_bytes ? raw_bytes : 1);
	if (!dst)
		return decode_errorf(r, OPSCOPE_ENOMEM, offset, "out of memory (%u bytes)",
				     raw_bytes);
	/* one context for the file: ZSTD_decompress would make and free one per record */
	if (!r->zstd && !(r->zstd = ZSTD_createDCtx()))
		return decode_errorf(r, OPSCOPE_ENOMEM, offset, "out of memory (zstd context)");
	size_t got = ZSTD_decompressDCtx(r->zstd, dst, raw_bytes, src, len);
	if (ZSTD_isError(got) || got != raw_bytes)
		return decode_fail(r, offset, "zstd payload does not decompress: %s",
				   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short output");
	rec->payload = dst;
	rec->len = raw_bytes;
	return 0;
#else
	(void)src;
	(void)len;
	(void)raw_bytes;
	(void)rec;
	return decode_errorf(r, OPSCOPE_EUNSUPPORTED, offset,
			     "record is zstd-compressed and this build has no zstd");
#endif
}

int decode_next(struct decoder *r, struct decode_record *rec)
{
	for (;;) {
		if (r->rc)
			return r->rc;
		if (r->done)
			return 0;
		if (r->pos == r->size) {
			r->done = true;
			r->valid_end = r->pos;
			return 0;
		}
		struct cursor c;
		cursor_init(&c, r->data + r->pos, r->size - r->pos);
		uint16_t type = cursor_u16(&c);
		uint16_t flags = cursor_u16(&c);
		uint32_t payload_bytes = cursor_u32(&c);
		uint32_t raw_bytes = cursor_u32(&c);
		uint32_t crc = cursor_u32(&c);
		if (c.failed)
			return decode_tail(r, "record header cut short (%zu of 16 bytes)",
					   r->size - r->pos);
		if (payload_bytes > OPS_MAX_RECORD_BYTES || raw_bytes > OPS_MAX_RECORD_BYTES)
			return decode_tail(r, "record size 0x%x exceeds the limit of 0x%x",
					   payload_bytes > raw_bytes ? payload_bytes : raw_bytes,
					   OPS_MAX_RECORD_BYTES);
		const uint8_t *payload = cursor_bytes(&c, payload_bytes);
		if (!payload)
			return decode_tail(r, "record size 0x%x exceeds file (%zu bytes left)",
					   payload_bytes, cursor_left(&c));
		if (crc32c(0, payload, payload_bytes) != crc)
			return decode_tail(r, "record CRC mismatch (type %u, %u bytes)", type,
					   payload_bytes);
		size_t offset = r->pos;
		r->pos += c.pos;
		r->valid_end = r->pos;
		if (!decode_known_type(type)) {
			if (flags & OPS_RECF_CRITICAL)
				return decode_errorf(r, OPSCOPE_EVERSION, offset,
						     "record type %u is critical and unknown to "
						     "this reader",
						     type);
			r->skipped_records++;
			continue;
		}
		if (flags & ~DECODE_KNOWN_FLAGS)
			return decode_errorf(r, OPSCOPE_EUNSUPPORTED, offset,
					     "record flags 0x%x not supported", flags);
		rec->type = type;
		rec->flags = flags;
		rec->offset = offset;
		if (flags & OPS_RECF_ZSTD) {
			int rc = decode_decompress(r, offset, payload, payload_bytes, raw_bytes,
						   rec);
			if (rc)
				return rc;
		} else {
			if (raw_bytes != payload_bytes)
				return decode_fail(r, offset,
						   "raw size %u differs from payload size %u in an "
						   "uncompressed record",
						   raw_bytes, payload_bytes);
			rec->payload = payload;
			rec->len = payload_bytes;
		}
		if (type == OPS_REC_END)
			r->saw_end = true;
		r->records++;
		return 1;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Reading ahead. The thread fills the slots in ring order and the caller empties them in the
 * same order; a slot belongs to the thread while not full and to the caller while full, and
 * `full` changes under the mutex. */

static void *decode_ahead_thread(void *arg)
{
	struct decode_ahead *a = arg;
	for (unsigned i = 0;; i = (i + 1) % DECODE_AHEAD_SLOTS) {
		struct decode_ahead_slot *s = &a->slot[i];
		pthread_mutex_lock(&a->mu);
		while (s->full && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		bool stop = a->stop;
		pthread_mutex_unlock(&a->mu);
		if (stop)
			return NULL;
		int rc = decode_next(&a->r, &s->rec);
		if (rc == 1 && (s->rec.flags & OPS_RECF_ZSTD)) {
			/* the payload is in the decoder's scratch: the slot keeps it, the decoder
			 * decompresses the next one into the slot's old buffer */
			struct buf t = s->buf;
			s->buf = a->r.scratch;
			a->r.scratch = t;
		}
		s->rc = rc;
		s->pos = a->r.pos;
		s->valid_end = a->r.valid_end;
		s->records = a->r.records;
		s->skipped_records = a->r.skipped_records;
		s->saw_end = a->r.saw_end;
		pthread_mutex_lock(&a->mu);
		s->full = true;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (rc != 1)
			return NULL; /* the end or an error: its decoder stays as it is */
	}
}

int decode_ahead_start(struct decode_ahead *a, const struct decoder *r)
{
	memset(a, 0, sizeof(*a));
	a->taken = a->last = -1;
	if (r->records || r->pos != r->hdr.header_bytes ||
	    decode_open_mem(&a->r, r->name, r->data, r->size) != 0) {
		decode_close(&a->r);
		return -1;
	}
	a->r.strict = r->strict;
	for (int i = 0; i < DECODE_AHEAD_SLOTS; i++)
		buf_init(&a->slot[i].buf);
	if (pthread_mutex_init(&a->mu, NULL) != 0)
		goto fail;
	if (pthread_cond_init(&a->cv, NULL) != 0) {
		pthread_mutex_destroy(&a->mu);
		goto fail;
	}
	if (pthread_create(&a->thread, NULL, decode_ahead_thread, a) != 0) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		goto fail;
	}
	return 0;
fail:
	decode_close(&a->r);
	return -1;
}

int decode_ahead_next(struct decode_ahead *a, struct decode_record *rec)
{
	pthread_mutex_lock(&a->mu);
	if (a->taken >= 0) { /* the caller is done with the previous payload */
		a->slot[a->taken].full = false;
		a->taken = -1;
		pthread_cond_broadcast(&a->cv);
	}
	struct decode_ahead_slot *s = &a->slot[a->next];
	while (!s->full)
		pthread_cond_wait(&a->cv, &a->mu);
	pthread_mutex_unlock(&a->mu);
	a->last = (int)a->next;
	if (s->rc != 1)
		return s->rc; /* the thread has ended; asked again, the same answer */
	*rec = s->rec;
	a->taken = (int)a->next;
	a->next = (a->next + 1) % DECODE_AHEAD_SLOTS;
	return 1;
}

void decode_ahead_stop(struct decode_ahead *a, struct decoder *r)
{
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	const struct decode_ahead_slot *s = a->last >= 0 ? &a->slot[a->last] : NULL;
	if (s && s->rc == 1) {
		r->pos = s->pos;
		r->valid_end = s->valid_end;
		r->records = s->records;
		r->skipped_records = s->skipped_records;
		r->saw_end = s->saw_end;
	} else if (s) { /* the caller saw the thread's last answer: its decoder's final state */
		r->pos = a->r.pos;
		r->valid_end = a->r.valid_end;
		r->discarded_bytes = a->r.discarded_bytes;
		r->records = a->r.records;
		r->skipped_records = a->r.skipped_records;
		r->saw_end = a->r.saw_end;
		r->done = a->r.done;
		memcpy(r->tail_msg, a->r.tail_msg, sizeof(r->tail_msg));
		if (!r->rc && a->r.rc) {
			r->rc = a->r.rc;
			memcpy(r->err, a->r.err, sizeof(r->err));
		}
	}
	for (int i = 0; i < DECODE_AHEAD_SLOTS; i++)
		buf_free(&a->slot[i].buf);
	decode_close(&a->r);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
}

static int events2_begin(struct decoder *r, const struct decode_record *rec,
			 struct decode_events *it)
{
	struct cursor *c = &it->c;
	uint64_t sizes[DECODE_STREAMS];
	for (int s = 0; s < DECODE_STREAMS; s++)
		sizes[s] = cursor_u32(c);
	if (c->failed)
		return decode_fail(r, rec->offset, "EVENTS2 payload shorter than its header");
	uint64_t at = sizeof(struct ops_events2_payload) + (uint64_t)it->count;
	if (at + sizes[0] + sizes[1] + sizes[2] + sizes[3] != rec->len)
		return decode_fail(r, rec->offset,
				   "EVENTS2 streams (%u tags, %" PRIu64 " + %" PRIu64 " + %" PRIu64
				   " + %" PRIu64 " bytes) do not fill its payload of %zu bytes",
				   it->count, sizes[0], sizes[1], sizes[2], sizes[3], rec->len);
	it->v2 = true;
	it->payload = rec->payload;
	for (int s = 0; s < DECODE_STREAMS; s++) {
		it->pos[s] = (size_t)at;
		it->end[s] = (size_t)(at += sizes[s]);
	}
	/* the cursor goes over the tags */
	cursor_init(c, rec->payload + sizeof(struct ops_events2_payload), it->count);
	return 0;
}

int decode_events_begin(struct decoder *r, const struct decode_record *rec,
			struct decode_events *it)
{
	memset(it, 0, sizeof(*it));
	cursor_init(&it->c, rec->payload, rec->len);
	it->base = rec->offset;
	it->track = cursor_u32(&it->c);
	it->count = cursor_u32(&it->c);
	it->ticks = cursor_u64(&it->c);
	const char *what = decode_record_name(rec->type);
	if (it->c.failed)
		return decode_fail(r, rec->offset, "%s payload shorter than its header", what);
	/* Every event takes at least one byte; a count beyond that is a lie. */
	if (it->count > cursor_left(&it->c))
		return decode_fail(r, rec->offset, "%s count %u exceeds the payload", what,
				   it->count);
	return rec->type == OPS_REC_EVENTS2 ? events2_begin(r, rec, it) : 0;
}

/* `width` bytes of stream s, little-endian, into *out; false when the stream is too short. */
static bool events2_take(struct decode_events *it, int s, unsigned width, uint64_t *out)
{
	if (it->end[s] - it->pos[s] < width)
		return false;
	uint64_t v = 0;
	for (unsigned i = 0; i < width; i++)
		v |= (uint64_t)it->payload[it->pos[s] + i] << (8 * i);
	it->pos[s] += width;
	*out = v;
	return true;
}

/* The next event of an EVENTS2 record (decode_events_next). */
static int events2_next(struct decoder *r, struct decode_events *it, struct decode_event *ev)
{
	if (it->seen == it->count) {
		size_t left = 0;
		for (int s = 0; s < DECODE_STREAMS; s++)
			left += it->end[s] - it->pos[s];
		if (left)
			return decode_fail(r, it->base,
					   "EVENTS2 record has %zu bytes after its %u events", left,
					   it->count);
		return 0;
	}
	unsigned tag = cursor_u8(&it->c), kind = OPS_TAG_KIND(tag);
	unsigned id_width = OPS_ID_WIDTH(OPS_TAG_ID(tag));
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint8_t)kind;
	/* which streams the kind uses besides time (the table of docs/trace-format.md 4.2) */
	bool has_id = false, has_byte = false, has_value = false;
	switch (kind) {
	case OPS_EV_BEGIN:
	case OPS_EV_INSTANT:
	case OPS_EV_ASYNC_BEGIN:
		has_id = has_byte = true;
		has_value = kind == OPS_EV_ASYNC_BEGIN;
		break;
	case OPS_EV_END:
		has_id = true;
		break;
	case OPS_EV_COUNTER:
		has_id = has_value = true;
		break;
	case OPS_EV_ARG:
		has_id = has_byte = true;
		break;
	case OPS_EV_FLOW_OUT:
	case OPS_EV_FLOW_IN:
	case OPS_EV_ASYNC_END:
	case OPS_EV_DROP_MARK:
		has_value = true;
		break;
	default:
		return decode_fail(r, it->base, "event %u: unknown kind %u", it->seen, kind);
	}
	if (!has_id && id_width)
		return decode_fail(r, it->base, "event %u: a %s event with a name", it->seen,
				   decode_event_name(kind));
	uint64_t t = 0, id = 0, byte = 0, value = 0;
	if (!events2_take(it, DECODE_TIME, OPS_TIME_WIDTH(OPS_TAG_TIME(tag)), &t) ||
	    !events2_take(it, DECODE_ID, id_width, &id) ||
	    !events2_take(it, DECODE_BYTE, has_byte, &byte) ||
	    !events2_take(it, DECODE_VALUE, has_value ? 8 : 0, &value))
		return decode_fail(r, it->base, "event %u (%s) is cut short", it->seen,
				   decode_event_name(kind));
	ev->name_id = (uint32_t)id;
	if (kind == OPS_EV_ARG) {
		ev->arg_type = (uint8_t)byte;
		switch (byte) {
		case OPS_ARG_I64:
			ev->value = (uint64_t)zigzag_decode(t);
			break;
		case OPS_ARG_STR:
			if (t > UINT32_MAX)
				return decode_fail(r, it->base, "event %u: string id too large",
						   it->seen);
			ev->value = t;
			break;
		case OPS_ARG_U64:
			ev->value = t;
			break;
		case OPS_ARG_F64:
			ev->value = t;
			ev->f64 = f64_from_bits(t);
			break;
		default:
			return decode_fail(r, it->base, "event %u: arg type %u", it->seen,
					   (unsigned)byte);
		}
	} else {
		if (t > UINT64_MAX - it->ticks)
			return decode_fail(r, it->base, "event %u: time overflows", it->seen);
		it->ticks += t;
		ev->category = (uint8_t)byte;
		if (kind == OPS_EV_COUNTER)
			ev->f64 = f64_from_bits(value);
		else
			ev->value = value;
	}
	ev->ticks = it->ticks;
	it->seen++;
	return 1;
}

int decode_events_next(struct decoder *r, struct decode_events *it, struct decode_event *ev)
{
	if (it->v2)
		return events2_next(r, it, ev);
	struct cursor *c = &it->c;
	if (it->seen == it->count) {
		if (cursor_left(c) != 0)
			return decode_fail(r, it->base,
					   "EVENTS record has %zu bytes after its %u events",
					   cursor_left(c), it->count);
		return 0;
	}
	size_t at = c->pos;
	uint8_t kind = cursor_u8(c);
	ev->kind = kind;
	ev->category = 0;
	ev->arg_type = 0;
	ev->name_id = 0;
	ev->value = 0;
	ev->f64 = 0;
	uint64_t name = 0;
	if (kind != OPS_EV_ARG) {
		uint64_t dt = cursor_varint(c);
		if (dt > UINT64_MAX - it->ticks)
			return decode_fail(r, it->base, "event %u: time overflows", it->seen);
		it->ticks += dt;
	}
	ev->ticks = it->ticks;
	switch (kind) {
	case OPS_EV_BEGIN:
	case OPS_EV_INSTANT:
		ev->category = cursor_u8(c);
		name = cursor_varint(c);
		break;
	case OPS_EV_END:
		name = cursor_varint(c);
		break;
	case OPS_EV_COUNTER:
		name = cursor_varint(c);
		ev->f64 = cursor_f64(c);
		break;
	case OPS_EV_ARG:
		name = cursor_varint(c);
		ev->arg_type = cursor_u8(c);
		switch (ev->arg_type) {
		case OPS_ARG_I64:
			ev->value = (uint64_t)zigzag_decode(cursor_varint(c));
			break;
		case OPS_ARG_U64:
		case OPS_ARG_STR:
			ev->value = cursor_varint(c);
			break;
		case OPS_ARG_F64:
			ev->f64 = cursor_f64(c);
			ev->value = f64_bits(ev->f64);
			break;
		default:
			return decode_fail(r, it->base, "event %u (payload byte %zu): arg type %u",
					   it->seen, at, ev->arg_type);
		}
		break;
	case OPS_EV_FLOW_OUT:
	case OPS_EV_FLOW_IN:
	case OPS_EV_ASYNC_END:
	case OPS_EV_DROP_MARK:
		ev->value = cursor_varint(c);
		break;
	case OPS_EV_ASYNC_BEGIN:
		ev->category = cursor_u8(c);
		name = cursor_varint(c);
		ev->value = cursor_varint(c);
		break;
	default:
		if (c->failed)
			break;
		return decode_fail(r, it->base, "event %u (payload byte %zu): unknown kind %u",
				   it->seen, at, kind);
	}
	if (c->failed)
		return decode_fail(r, it->base, "event %u (payload byte %zu) is cut short",
				   it->seen, at);
	if (name > UINT32_MAX ||
	    (kind == OPS_EV_ARG && ev->arg_type == OPS_ARG_STR && ev->value > UINT32_MAX))
		return decode_fail(r, it->base, "event %u (payload byte %zu): string id too large",
				   it->seen, at);
	ev->name_id = (uint32_t)name;
	it->seen++;
	return 1;
}

static int decode_fixed(struct decoder *r, const struct decode_record *rec, size_t want,
			struct cursor *c)
{
	cursor_init(c, rec->payload, rec->len);
	if (rec->len < want)
		return decode_fail(r, rec->offset, "%s payload of %zu bytes, expected %zu",
				   decode_record_name(rec->type), rec->len, want);
	return 0;
}

int decode_parse_clock(struct decoder *r, const struct decode_record *rec,
		       struct ops_clock_payload *out)
{
	struct cursor c;
	int rc = decode_fixed(r, rec, sizeof(*out), &c);
	if (rc)
		return rc;
	out->ticks = cursor_u64(&c);
	out->monotonic_ns = cursor_u64(&c);
	out->realtime_ns = cursor_u64(&c);
	out->ticks_per_second = cursor_u64(&c);
	return 0;
}

int decode_parse_thread(struct decoder *r, const struct decode_record *rec,
			struct ops_thread_payload *out)
{
	struct cursor c;
	int rc = decode_fixed(r, rec, sizeof(*out), &c);
	if (rc)
		return rc;
	out->track = cursor_u32(&c);
	out->pid = cursor_u32(&c);
	out->tid = cursor_u64(&c);
	out->name_id = cursor_u32(&c);
	out->flags = cursor_u32(&c);
	return 0;
}

int decode_parse_drops(struct decoder *r, const struct decode_record *rec,
		       struct ops_drops_payload *out)
{
	struct cursor c;
	int rc = decode_fixed(r, rec, sizeof(*out), &c);
	if (rc)
		return rc;
	out->track = cursor_u32(&c);
	out->reserved = cursor_u32(&c);
	out->dropped = cursor_u64(&c);
	return 0;
}

int decode_parse_end(struct decoder *r, const struct decode_record *rec,
		     struct ops_end_payload *out)
{
	struct cursor c;
	int rc = decode_fixed(r, rec, sizeof(*out), &c);
	if (rc)
		return rc;
	out->events_written = cursor_u64(&c);
	out->events_dropped = cursor_u64(&c);
	out->stop_ticks = cursor_u64(&c);
	out->tracks = cursor_u32(&c);
	out->reserved = cursor_u32(&c);
	return 0;
}

int decode_table_begin(struct decoder *r, const struct decode_record *rec, size_t min_entry,
		       struct decode_table *t)
{
	const char *what = decode_record_name(rec->type);
	struct cursor c;
	cursor_init(&c, rec->payload, rec->len);
	t->first_id = cursor_u32(&c);
	t->count = cursor_u32(&c);
	t->entry_bytes = cursor_u32(&c);
	(void)cursor_u32(&c);
	if (c.failed)
		return decode_fail(r, rec->offset,
				   "%s payload of %zu bytes, shorter than its header", what,
				   rec->len);
	if (t->entry_bytes < min_entry)
		return decode_fail(r, rec->offset, "%s entries of %u bytes, expected at least %zu",
				   what, t->entry_bytes, min_entry);
	if ((uint64_t)t->count * t->entry_bytes != cursor_left(&c))
		return decode_fail(r, rec->offset,
				   "%s count %u of %u bytes does not fill the payload (%zu bytes)",
				   what, t->count, t->entry_bytes, cursor_left(&c));
	if ((uint64_t)t->first_id + t->count > OPS_NO_ID)
		return decode_fail(r, rec->offset, "%s ids %u + %u beyond the limit", what,
				   t->first_id, t->count);
	t->entries = rec->payload + sizeof(struct ops_table_payload);
	t->offset = rec->offset;
	return 0;
}

void decode_mapping(const struct decode_table *t, uint32_t i, struct ops_mapping_entry *out)
{
	const uint8_t *p = t->entries + (size_t)i * t->entry_bytes;
	out->start = get_u64le(p);
	out->end = get_u64le(p + 8);
	out->file_offset = get_u64le(p + 16);
	out->path_id = get_u32le(p + 24);
	out->build_id = get_u32le(p + 28);
}

void decode_frame(const struct decode_table *t, uint32_t i, struct ops_frame_entry *out)
{
	const uint8_t *p = t->entries + (size_t)i * t->entry_bytes;
	out->kind = get_u32le(p);
	out->mapping = get_u32le(p + 4);
	out->address = get_u64le(p + 8);
	out->name_id = get_u32le(p + 16);
	out->file_id = get_u32le(p + 20);
	out->line = (int32_t)get_u32le(p + 24);
	out->reserved = get_u32le(p + 28);
}

void decode_stack(const struct decode_table *t, uint32_t i, struct ops_stack_entry *out)
{
	const uint8_t *p = t->entries + (size_t)i * t->entry_bytes;
	out->parent = get_u32le(p);
	out->frame = get_u32le(p + 4);
}

void decode_sample(const struct decode_table *t, uint32_t i, struct ops_sample_entry *out)
{
	const uint8_t *p = t->entries + (size_t)i * t->entry_bytes;
	out->track = get_u32le(p);
	out->stack = get_u32le(p + 4);
	out->ticks = get_u64le(p + 8);
	out->weight = (int64_t)get_u64le(p + 16);
	out->flags = get_u32le(p + 24);
	out->reserved = get_u32le(p + 28);
}

void decode_gpu(const struct decode_table *t, uint32_t i, struct ops_gpu_entry *out)
{
	const uint8_t *p = t->entries + (size_t)i * t->entry_bytes;
	out->kind = p[0];
	out->sub = p[1];
	out->src_kind = p[2];
	out->dst_kind = p[3];
	out->device = get_u32le(p + 4);
	out->context = get_u32le(p + 8);
	out->stream = get_u32le(p + 12);
	out->start_ticks = get_u64le(p + 16);
	out->end_ticks = get_u64le(p + 24);
	out->correlation = get_u32le(p + 32);
	out->name_id = get_u32le(p + 36);
	out->external_id = get_u64le(p + 40);
	out->bytes = get_u64le(p + 48);
	out->address = get_u64le(p + 56);
	for (int k = 0; k < 3; k++) {
		out->grid[k] = get_u32le(p + 64 + 4 * k);
		out->block[k] = get_u32le(p + 76 + 4 * k);
	}
	out->registers = get_u32le(p + 88);
	out->shared = get_u32le(p + 92);
	out->graph_id = get_u32le(p + 96);
	out->reserved = get_u32le(p + 100);
}

void encode_gpu_entry(uint8_t *p, const struct ops_gpu_entry *e)
{
	p[0] = e->kind;
	p[1] = e->sub;
	p[2] = e->src_kind;
	p[3] = e->dst_kind;
	put_u32le(p + 4, e->device);
	put_u32le(p + 8, e->context);
	put_u32le(p + 12, e->stream);
	put_u64le(p + 16, e->start_ticks);
	put_u64le(p + 24, e->end_ticks);
	put_u32le(p + 32, e->correlation);
	put_u32le(p + 36, e->name_id);
	put_u64le(p + 40, e->external_id);
	put_u64le(p + 48, e->bytes);
	put_u64le(p + 56, e->address);
	for (int k = 0; k < 3; k++) {
		put_u32le(p + 64 + 4 * k, e->grid[k]);
		put_u32le(p + 76 + 4 * k, e->block[k]);
	}
	put_u32le(p + 88, e->registers);
	put_u32le(p + 92, e->shared);
	put_u32le(p + 96, e->graph_id);
	put_u32le(p + 100, e->reserved);
}

int decode_payload_cursor(struct decoder *r, const struct decode_record *rec, struct cursor *c)
{
	(void)r;
	cursor_init(c, rec->payload, rec->len);
	return 0;
}

const char *decode_record_name(unsigned type)
{
	static const char *const names[] = { "unknown",	 "METADATA", "CLOCK",  "STRINGS", "THREAD",
					     "EVENTS",	 "DROPS",    "TIMERS", "END",	  "EVENTS2",
					     "MAPPINGS", "FRAMES",   "STACKS", "SAMPLES", "GPU" };
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "unknown";
}

const char *decode_event_name(unsigned kind)
{
	static const char *const names[] = { "unknown",	    "BEGIN",	 "END",	     "INSTANT",
					     "COUNTER",	    "ARG",	 "FLOW_OUT", "FLOW_IN",
					     "ASYNC_BEGIN", "ASYNC_END", "DROP_MARK" };
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

/* Per-track drop counts of decode_summarize, for tracks below this bound. */
#define SUMMARY_TRACKS 4096

/* Events lost per track as the model's loader counts them for a file without END: the last
 * DROPS total of a track where it has one, else the sum of its DROP_MARK events (a process
 * killed before its writer wrote a DROPS record still has the marks in its event stream).
 * Reads the file again, decoding every event: only files that did not end cleanly pay it. */
static int summarize_marks(const char *path, uint64_t *marks)
{
	struct decoder r;
	int rc = decode_open_file(&r, path);
	if (rc)
		return rc;
	struct decode_record rec;
	while ((rc = decode_next(&r, &rec)) == 1) {
		if (rec.type != OPS_REC_EVENTS && rec.type != OPS_REC_EVENTS2)
			continue;
		struct decode_events it;
		struct decode_event ev;
		if ((rc = decode_events_begin(&r, &rec, &it)) != 0)
			break;
		while ((rc = decode_events_next(&r, &it, &ev)) == 1)
			if (ev.kind == OPS_EV_DROP_MARK && it.track < SUMMARY_TRACKS)
				marks[it.track] += ev.value;
		if (rc < 0)
			break;
	}
	decode_close(&r);
	return rc < 0 ? rc : 0;
}

int decode_summarize(const char *path, struct decode_summary *out)
{
	struct decoder r;
	memset(out, 0, sizeof(*out));
	int rc = decode_open_file(&r, path);
	if (rc)
		return rc;
	out->pid = r.hdr.pid;
	uint64_t *drops = calloc(SUMMARY_TRACKS, sizeof(*drops));
	bool *has_drops = calloc(SUMMARY_TRACKS, sizeof(*has_drops));
	uint64_t *marks = calloc(SUMMARY_TRACKS, sizeof(*marks));
	if (!drops || !has_drops || !marks) {
		free(drops);
		free(has_drops);
		free(marks);
		decode_close(&r);
		return OPSCOPE_ENOMEM;
	}
	struct ops_end_payload end;
	bool have_end = false;
	struct decode_record rec;
	while ((rc = decode_next(&r, &rec)) == 1) {
		if (rec.type == OPS_REC_EVENTS || rec.type == OPS_REC_EVENTS2) {
			struct decode_events it;
			if ((rc = decode_events_begin(&r, &rec, &it)) != 0)
				break;
			out->events += it.count;
		} else if (rec.type == OPS_REC_SAMPLES) {
			struct decode_table t;
			if ((rc = decode_table_begin(&r, &rec, sizeof(struct ops_sample_entry),
						     &t)) != 0)
				break;
			out->samples += t.count;
		} else if (rec.type == OPS_REC_THREAD) {
			out->threads++; /* an update of a track counts once more; rare */
		} else if (rec.type == OPS_REC_DROPS) {
			struct ops_drops_payload d;
			if ((rc = decode_parse_drops(&r, &rec, &d)) != 0)
				break;
			if (d.track < SUMMARY_TRACKS) {
				drops[d.track] = d.dropped;
				has_drops[d.track] = true;
			}
		} else if (rec.type == OPS_REC_END) {
			if ((rc = decode_parse_end(&r, &rec, &end)) != 0)
				break;
			have_end = true;
		}
	}
	if (have_end) {
		out->events = end.events_written;
		out->dropped = end.events_dropped;
		out->threads = end.tracks;
	} else if (summarize_marks(path, marks) == 0) {
		for (size_t i = 0; i < SUMMARY_TRACKS; i++)
			out->dropped += has_drops[i] ? drops[i] : marks[i];
	} else {
		for (size_t i = 0; i < SUMMARY_TRACKS; i++)
			out->dropped += drops[i];
	}
	out->complete = r.saw_end;
	out->discarded_bytes = r.discarded_bytes;
	free(drops);
	free(has_drops);
	free(marks);
	decode_close(&r);
	return rc < 0 ? rc : 0;
}
