/*
 * decode.h: the decoder of .opscope trace files (format.h, docs/trace-format.md): a file read
 * record by record and event by event, without trusting a single byte of it. (Called the
 * reader before; "reader" is the data-loader's cost of a training step in opscope.h.)
 *
 * Pull API: decode_open_file() or decode_open_mem(), then decode_next() until it returns 0;
 * for an EVENTS record, decode_events_begin() + decode_events_next(). Payload parsers
 * (decode_parse_*) decode the fixed-size records. Every function returns 0 (or 1 for "got
 * one") on success and a negative OPSCOPE_E* code on error, with a one-line message naming
 * the file and byte offset in decoder->err. Nothing here prints or exits.
 *
 * Damage at the end of a file (a record cut short, a CRC mismatch, an impossible size) is not
 * an error: reading stops before the damaged record, and `valid_end`, `discarded_bytes` and
 * `tail_msg` say what was lost. A missing END record (saw_end == false) means the recording
 * did not stop cleanly. Set `strict` to turn tail damage into OPSCOPE_ETRUNCATED instead.
 */
#ifndef OPSCOPE_TRACE_DECODE_H
#define OPSCOPE_TRACE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "trace/format.h"
#include "util/buf.h"
#include "util/bytes.h"
#include "util/cursor.h"

#define DECODE_ERR_BYTES 320

struct decoder {
	const char *name;	    /* file name used in messages (not owned) */
	const uint8_t *data;	    /* the whole file (mapped or borrowed) */
	size_t size;		    /* bytes in the file */
	void *map;		    /* mmap base to unmap, or NULL */
	uint8_t *owned;		    /* malloc'd copy (non-mappable files), or NULL */
	struct ops_file_header hdr; /* the validated file header, host byte order */
	size_t pos;		    /* offset of the next record header */
	bool strict;		    /* tail damage is an error instead of the end of data */
	bool done;		    /* decode_next reached the end (or damage) */
	bool saw_end;		    /* an END record was read: the recording stopped cleanly */
	size_t valid_end;	    /* offset just past the last valid record */
	size_t discarded_bytes;	    /* bytes after valid_end that were not read (torn tail) */
	uint64_t records;	    /* records returned by decode_next */
	uint64_t skipped_records;   /* records of unknown, non-critical types that were skipped */
	int rc;			    /* first error code, 0 while none */
	struct buf scratch;	    /* decompressed payload of the current record */
	void *zstd;		    /* ZSTD_DCtx reused from record to record, or NULL */
	char tail_msg[DECODE_ERR_BYTES]; /* why reading stopped before the end of the file, or "" */
	char err[DECODE_ERR_BYTES];	 /* first error message, or "" */
};

/* One record as returned by decode_next: the payload is decompressed and its CRC checked. */
struct decode_record {
	uint16_t type;		/* enum ops_record_type */
	uint16_t flags;		/* OPS_RECF_* as stored */
	size_t offset;		/* file offset of the record header */
	const uint8_t *payload; /* raw (decompressed) payload; valid until the next decode_next */
	size_t len;		/* bytes in payload */
};

/* One decoded event. Which fields are meaningful depends on `kind` (format.h table). */
struct decode_event {
	uint8_t kind;	  /* enum ops_event_kind */
	uint8_t category; /* BEGIN, INSTANT, ASYNC_BEGIN: enum opscope_category */
	uint8_t arg_type; /* ARG: enum ops_arg_type */
	uint32_t name_id; /* name string id (BEGIN/END/INSTANT/COUNTER/ASYNC_BEGIN), ARG key id */
	uint64_t ticks;	  /* absolute time in ticks; ARG: the time of the previous event */
	uint64_t
		value; /* flow id, async id, drop count; ARG: U64, I64 (decoded, as bits), STR id */
	double f64;    /* COUNTER value; ARG of type F64 */
};

/* The streams of an EVENTS2 record after its tags, in payload order. */
enum decode_stream { DECODE_TIME, DECODE_ID, DECODE_BYTE, DECODE_VALUE, DECODE_STREAMS };

/* Iterator over the events of one EVENTS or EVENTS2 record. */
struct decode_events {
	struct cursor c; /* EVENTS: over the encoded events; EVENTS2: over the tags */
	size_t base;	 /* file offset of the record header (for messages) */
	uint32_t track;	 /* track of the events */
	uint32_t count;	 /* events announced by the payload header */
	uint32_t seen;	 /* events returned so far */
	uint64_t ticks;	 /* time of the previous timed event */
	bool v2;	 /* an EVENTS2 record */
	/* EVENTS2: the streams, as offsets in the payload: next byte and end of each */
	const uint8_t *payload;
	size_t pos[DECODE_STREAMS], end[DECODE_STREAMS];
};

/* Open `path` (mapped read-only, or read into memory when it cannot be mapped) and check its
 * header. On error the decoder is closed again and r->err says why. */
int decode_open_file(struct decoder *r, const char *path);
/* The same over bytes in memory, which must outlive the decoder. `name` is used in messages. */
int decode_open_mem(struct decoder *r, const char *name, const void *data, size_t size);
void decode_close(struct decoder *r);

/* The next record: 1 and *rec filled, 0 at the end of the valid data, or an error. Records of
 * unknown non-critical types are skipped; an unknown critical type is OPSCOPE_EVERSION. */
int decode_next(struct decoder *r, struct decode_record *rec);

/* Start iterating an EVENTS or EVENTS2 record. */
int decode_events_begin(struct decoder *r, const struct decode_record *rec,
			struct decode_events *it);
/* The next event: 1, 0 when the record is done, or an error (OPSCOPE_EFORMAT). */
int decode_events_next(struct decoder *r, struct decode_events *it, struct decode_event *ev);
/*
 * The fast decoder, inline for loops that decode tens of millions of events (the loader):
 * BEGIN, END and ARG events (nearly every event of a file) from a plain pointer while
 * DECODE_EVENT_MAX_BYTES remain, with position, time and count in the caller's registers.
 *
 *	struct decode_fast f;
 *	decode_fast_begin(it, &f);
 *	while (decode_fast_next(&f, &ev)) ...;
 *	decode_fast_end(it, &f);      then decode_events_next() for the event it stopped at
 *
 * decode_fast_next stops (returns false, consuming nothing) at any other kind, at anything
 * odd (the general decoder then reports it), at the end of the record and near the end of its
 * bytes. It gives exactly the events decode_events_next gives (tests/unit/test_decode.c).
 */
#define DECODE_EVENT_MAX_BYTES 32 /* ASYNC_BEGIN: kind, category, three 10-byte varints */

struct decode_fast {
	const uint8_t *p;   /* next event */
	const uint8_t *end; /* end of the record's bytes (p itself after a failed read) */
	uint64_t ticks;	    /* time of the previous timed event */
	uint32_t left;	    /* events left in the record */
};

static inline void decode_fast_begin(const struct decode_events *it, struct decode_fast *f)
{
	const struct cursor *c = &it->c;
	f->p = c->base + c->pos;
	f->end = c->failed ? f->p : c->base + c->len;
	f->ticks = it->ticks;
	f->left = it->count - it->seen;
}

static inline void decode_fast_end(struct decode_events *it, const struct decode_fast *f)
{
	it->seen = it->count - f->left;
	it->ticks = f->ticks;
	it->c.pos = (size_t)(f->p - it->c.base);
}

/* A varint of at most 10 bytes at *p (bytes known to be there); false if longer or if it
 * overflows 64 bits. Byte by byte on purpose: the branches on its length predict well, and a
 * branch-free decode from one 64-bit word makes every event wait for the length of the one
 * before (measured: loads 25% slower). */
static inline bool decode_fast_varint(const uint8_t **p, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t b = *q++;
	if (!(b & 0x80)) {
		*out = b;
		*p = q;
		return true;
	}
	uint64_t v = b & 0x7f;
	for (unsigned shift = 7; shift < 70; shift += 7) {
		b = *q++;
		if (shift == 63 && b > 1)
			return false;
		v |= (b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			*p = q;
			return true;
		}
	}
	return false;
}

static inline bool decode_fast_next(struct decode_fast *f, struct decode_event *ev)
{
	if (f->left == 0 || f->end - f->p < DECODE_EVENT_MAX_BYTES)
		return false;
	const uint8_t *q = f->p + 1;
	uint8_t kind = *f->p;
	uint64_t dt = 0, name = 0, value = 0;
	uint8_t category = 0, type = 0;
	bool ok;
	if (kind == OPS_EV_BEGIN || kind == OPS_EV_END) {
		/* one path for both (they alternate unpredictably): only the category differs */
		bool begin = kind == OPS_EV_BEGIN;
		ok = decode_fast_varint(&q, &dt);
		category = begin ? *q : 0;
		q += begin;
		ok = ok && decode_fast_varint(&q, &name);
	} else if (kind == OPS_EV_ARG) {
		ok = decode_fast_varint(&q, &name);
		type = *q++;
		ok = ok && (type == OPS_ARG_I64 || type == OPS_ARG_U64 || type == OPS_ARG_STR) &&
		     decode_fast_varint(&q, &value);
		if (type == OPS_ARG_I64)
			value = (uint64_t)zigzag_decode(value);
		if (type == OPS_ARG_STR && value > UINT32_MAX)
			ok = false;
	} else {
		return false;
	}
	if (!ok || name > UINT32_MAX || dt > UINT64_MAX - f->ticks)
		return false;
	f->ticks += dt;
	ev->kind = kind;
	ev->category = category;
	ev->arg_type = type;
	ev->name_id = (uint32_t)name;
	ev->ticks = f->ticks;
	ev->value = value;
	ev->f64 = 0;
	f->p = q;
	f->left--;
	return true;
}

/* An EVENTS2 time or id field of width code `code` at p, where 8 (time) or 4 (id) bytes can
 * be read: one load, masked to the width (masks from tables: no branch on the width). */
static inline uint64_t decode_time_field(const uint8_t *p, unsigned code)
{
	static const uint64_t mask[4] = { 0xff, 0xffff, 0xffffffff, UINT64_MAX };
	return get_u64le(p) & mask[code];
}

static inline uint32_t decode_id_field(const uint8_t *p, unsigned code)
{
	static const uint32_t mask[4] = { 0, 0xff, 0xffff, 0xffffffff };
	return get_u32le(p) & mask[code];
}

/*
 * The fast decoder of EVENTS2 records, used the same way (decode_fast2_begin/next/end). Every
 * field of an event is found from its tag alone, so nothing waits for the event before it: a
 * field is one unaligned 8-byte load, masked to its width. Loads start at most 8 bytes before
 * the end of the payload, so the decoder stops (and the general one goes on) near its end.
 */
struct decode_fast2 {
	const uint8_t *tag, *time, *id, *byte; /* next byte of each stream */
	const uint8_t *time_end, *id_end, *byte_end;
	const uint8_t *load_lim; /* 8-byte loads start before this (the payload's end - 7) */
	uint64_t ticks;		 /* time of the previous timed event */
	uint32_t left;		 /* events left in the record */
};

static inline void decode_fast2_begin(const struct decode_events *it, struct decode_fast2 *f)
{
	const uint8_t *p = it->payload;
	f->tag = it->c.base + it->c.pos;
	f->time = p + it->pos[DECODE_TIME];
	f->id = p + it->pos[DECODE_ID];
	f->byte = p + it->pos[DECODE_BYTE];
	f->time_end = p + it->end[DECODE_TIME];
	f->id_end = p + it->end[DECODE_ID];
	f->byte_end = p + it->end[DECODE_BYTE];
	size_t len = it->end[DECODE_VALUE];	  /* the last stream ends the payload */
	f->load_lim = len >= 8 ? p + len - 7 : p; /* no load in a payload shorter than 8 */
	f->ticks = it->ticks;
	f->left = it->count - it->seen;
}

static inline void decode_fast2_end(struct decode_events *it, const struct decode_fast2 *f)
{
	it->seen = it->count - f->left;
	it->ticks = f->ticks;
	it->c.pos = (size_t)(f->tag - it->c.base);
	it->pos[DECODE_TIME] = (size_t)(f->time - it->payload);
	it->pos[DECODE_ID] = (size_t)(f->id - it->payload);
	it->pos[DECODE_BYTE] = (size_t)(f->byte - it->payload);
}

static inline bool decode_fast2_next(struct decode_fast2 *f, struct decode_event *ev)
{
	if (f->left == 0 || f->time >= f->load_lim || f->id >= f->load_lim ||
	    f->byte >= f->load_lim)
		return false;
	unsigned tag = *f->tag, kind = OPS_TAG_KIND(tag), tc = OPS_TAG_TIME(tag);
	unsigned ic = OPS_TAG_ID(tag);
	uint64_t t = decode_time_field(f->time, tc);
	uint32_t id = decode_id_field(f->id, ic);
	const uint8_t *time = f->time + OPS_TIME_WIDTH(tc), *idp = f->id + OPS_ID_WIDTH(ic);
	unsigned byte = *f->byte; /* in the payload (below load_lim); if it is ours: below */
	if (time > f->time_end || idp > f->id_end)
		return false;
	uint64_t value = 0;
	unsigned category = 0, type = 0;
	double f64 = 0;
	if (kind == OPS_EV_BEGIN || kind == OPS_EV_END) {
		/* one path for both (they alternate unpredictably): only the category differs */
		unsigned begin = kind == OPS_EV_BEGIN;
		if (f->byte + begin > f->byte_end || t > UINT64_MAX - f->ticks)
			return false;
		category = begin ? byte : 0;
		f->byte += begin;
		f->ticks += t;
	} else if (kind == OPS_EV_ARG) {
		if (f->byte >= f->byte_end)
			return false;
		type = byte;
		if (type == OPS_ARG_I64)
			value = (uint64_t)zigzag_decode(t);
		else if (type == OPS_ARG_U64 || (type == OPS_ARG_STR && t <= UINT32_MAX))
			value = t;
		else if (type == OPS_ARG_F64)
			f64 = f64_from_bits(value = t);
		else
			return false;
		f->byte++;
	} else {
		return false;
	}
	ev->kind = (uint8_t)kind;
	ev->category = (uint8_t)category;
	ev->arg_type = (uint8_t)type;
	ev->name_id = id;
	ev->ticks = f->ticks;
	ev->value = value;
	ev->f64 = f64;
	f->tag++;
	f->time = time;
	f->id = idp;
	f->left--;
	return true;
}

/*
 * Reading ahead, for files of compressed records: a thread of its own reads, checks and
 * decompresses the next records while the caller works on the current one. It hands out the
 * same records and errors as decode_next on the same bytes, and decode_ahead_stop leaves the
 * caller's decoder in the state (position, counts, tail, error) decode_next would have left
 * after the records handed out, so only the time differs.
 */
#define DECODE_AHEAD_SLOTS 4

struct decode_ahead_slot {
	struct decode_record rec;
	struct buf buf; /* a decompressed payload (the thread decoder's scratch, swapped in) */
	int rc;		/* decode_next's result */
	/* the thread decoder's state right after it */
	size_t pos, valid_end;
	uint64_t records, skipped_records;
	bool saw_end;
	bool full; /* filled by the thread, not yet given back by the caller */
};

struct decode_ahead {
	struct decoder r; /* the thread's decoder, over the same bytes */
	struct decode_ahead_slot slot[DECODE_AHEAD_SLOTS];
	unsigned next; /* the slot the caller takes next */
	int taken;     /* the slot whose payload the caller is using, -1 if none */
	int last;      /* the slot last handed to the caller, -1 if none */
	bool stop;     /* the caller is done: the thread ends */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* Start reading ahead of `r`, which has read no record yet; -1 if no thread could be made
 * (then read with decode_next). */
int decode_ahead_start(struct decode_ahead *a, const struct decoder *r);
/* decode_next, from the thread; the payload stays valid until the next call. */
int decode_ahead_next(struct decode_ahead *a, struct decode_record *rec);
/* End it and give `r` the state of a decoder that read the records handed out. */
void decode_ahead_stop(struct decode_ahead *a, struct decoder *r);

/* Fixed-size payloads. */
int decode_parse_clock(struct decoder *r, const struct decode_record *rec,
		       struct ops_clock_payload *out);
int decode_parse_thread(struct decoder *r, const struct decode_record *rec,
			struct ops_thread_payload *out);
int decode_parse_drops(struct decoder *r, const struct decode_record *rec,
		       struct ops_drops_payload *out);
int decode_parse_end(struct decoder *r, const struct decode_record *rec,
		     struct ops_end_payload *out);
/* Variable payloads: a cursor over the payload, positioned after the u32 count (METADATA,
 * TIMERS) or after first_id/count (STRINGS). The caller reads the entries through it. */
int decode_payload_cursor(struct decoder *r, const struct decode_record *rec, struct cursor *c);
/* The stack sample tables (MAPPINGS, FRAMES, STACKS, SAMPLES: docs/trace-format.md 3.1): the
 * header of a table record, checked (entries of at least `min_entry` bytes that fill the
 * payload exactly, ids below OPS_NO_ID), and its entries read one by one. What the entries
 * refer to is the loader's to check. */
struct decode_table {
	uint32_t first_id;	/* id of entry 0 */
	uint32_t count;		/* entries */
	uint32_t entry_bytes;	/* bytes per entry (>= the size this version knows) */
	const uint8_t *entries; /* the first entry, in the record's payload */
	size_t offset;		/* file offset of the record header (for messages) */
};
int decode_table_begin(struct decoder *r, const struct decode_record *rec, size_t min_entry,
		       struct decode_table *t);
void decode_mapping(const struct decode_table *t, uint32_t i, struct ops_mapping_entry *out);
void decode_frame(const struct decode_table *t, uint32_t i, struct ops_frame_entry *out);
void decode_stack(const struct decode_table *t, uint32_t i, struct ops_stack_entry *out);
void decode_sample(const struct decode_table *t, uint32_t i, struct ops_sample_entry *out);
/* Entry i of a GPU record's table (format.h, struct ops_gpu_entry), and its inverse: the
 * entry's bytes as written (GPU entry size) into p. */
void decode_gpu(const struct decode_table *t, uint32_t i, struct ops_gpu_entry *out);
void encode_gpu_entry(uint8_t *p, const struct ops_gpu_entry *e);
/* Record a format error at file offset `offset` and return OPSCOPE_EFORMAT. */
int decode_fail(struct decoder *r, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The name of a record type ("EVENTS"), or "unknown". */
const char *decode_record_name(unsigned type);
/* The name of an event kind ("BEGIN"), or "unknown". */
const char *decode_event_name(unsigned kind);

/* A quick look at a file for one-line reports: totals from END when present, otherwise from
 * counting events and the last DROPS of each track. */
struct decode_summary {
	uint64_t events;	/* encoded events in the file */
	uint64_t dropped;	/* events lost */
	uint64_t samples;	/* stack samples (SAMPLES records' entries) */
	uint32_t threads;	/* THREAD tracks */
	uint32_t pid;		/* process that wrote the file */
	bool complete;		/* an END record was found */
	size_t discarded_bytes; /* bytes of a torn tail */
};
/* What `opscope record` says of each file it wrote: counted as the model's loader counts them
 * (a file without END: per track the last DROPS total, else the sum of its drop marks). */
int decode_summarize(const char *path, struct decode_summary *out);

#endif
