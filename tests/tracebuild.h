/*
 * tracebuild.h: a test-only writer of .opscope files, record by record, with full control
 * over every byte (for the reader, model and exporter tests, the fuzz seed corpus and the
 * e2e generator). It shares nothing with the runtime's writer on purpose: a bug there must
 * not hide the same bug here.
 *
 * Events are written between tb_events_begin() and tb_events_end(); their times are ticks
 * and must not go back within one record. With one CLOCK record of 1e9 ticks per second at
 * ticks == monotonic ns (tb_clock_identity), ticks are ns.
 */
#ifndef OPSCOPE_TESTS_TRACEBUILD_H
#define OPSCOPE_TESTS_TRACEBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"
#include "util/buf.h"

struct tb {
	struct buf out;	   /* the file so far */
	struct buf ev;	   /* the EVENTS payload being built (EVENTS2: header and tags) */
	struct buf s[4];   /* EVENTS2: the time, id, byte and value streams */
	int v2;		   /* 1: events go into EVENTS2 records (format version 2) */
	uint32_t ev_count; /* events in ev */
	uint64_t ev_prev;  /* ticks of the previous timed event in ev */
	uint32_t next_id;  /* next string id tb_str hands out */
	int compress;	   /* 1: zstd-compress EVENTS records (when built with zstd) */
};

/* Start a file: the 64-byte header (format version 1) of process `pid`. */
void tb_init(struct tb *b, uint32_t pid);
/* The same for format version 2: events go into EVENTS2 records. tb_ev_raw is v1 only. */
void tb_init_v2(struct tb *b, uint32_t pid);
void tb_free(struct tb *b);
/* One record with the given flags; OPS_RECF_ZSTD compresses `payload`. */
void tb_record(struct tb *b, uint16_t type, uint16_t flags, const void *payload, size_t len);

void tb_clock(struct tb *b, uint64_t ticks, uint64_t mono_ns, uint64_t real_ns, uint64_t tps);
void tb_clock_identity(struct tb *b);
/* A STRINGS record defining one new string; returns its id. */
uint32_t tb_str(struct tb *b, const char *s);
/* The same for bytes that may hold NULs or invalid UTF-8. */
uint32_t tb_strn(struct tb *b, const char *s, size_t len);
void tb_meta(struct tb *b, const char *key, const char *value);
void tb_thread(struct tb *b, uint32_t track, uint32_t pid, uint64_t tid, uint32_t name_id,
	       uint32_t flags);
void tb_drops(struct tb *b, uint32_t track, uint64_t dropped);
void tb_timer(struct tb *b, uint32_t name_id, uint64_t count, uint64_t total_ns, uint64_t max_ns,
	      uint64_t min_ns);
void tb_end(struct tb *b, uint64_t written, uint64_t dropped, uint64_t stop_ticks, uint32_t tracks);

void tb_events_begin(struct tb *b, uint32_t track, uint64_t first_ticks);
void tb_events_end(struct tb *b);
void tb_ev_begin(struct tb *b, uint64_t ticks, uint8_t cat, uint32_t name);
void tb_ev_end(struct tb *b, uint64_t ticks, uint32_t name);
void tb_ev_instant(struct tb *b, uint64_t ticks, uint8_t cat, uint32_t name);
void tb_ev_counter(struct tb *b, uint64_t ticks, uint32_t name, double value);
void tb_ev_arg_i64(struct tb *b, uint32_t key, int64_t v);
void tb_ev_arg_u64(struct tb *b, uint32_t key, uint64_t v);
void tb_ev_arg_f64(struct tb *b, uint32_t key, double v);
void tb_ev_arg_str(struct tb *b, uint32_t key, uint32_t str_id);
void tb_ev_flow(struct tb *b, uint64_t ticks, int out, uint64_t id);
void tb_ev_async_begin(struct tb *b, uint64_t ticks, uint8_t cat, uint32_t name, uint64_t id);
void tb_ev_async_end(struct tb *b, uint64_t ticks, uint64_t id);
void tb_ev_drop_mark(struct tb *b, uint64_t ticks, uint64_t count);
/* Raw bytes counted as `events` events (for malformed streams). */
void tb_ev_raw(struct tb *b, const void *bytes, size_t n, uint32_t events);

/* The sample trace used across tests (documented in tracebuild.c). flags: TB_SAMPLE_*. */
#define TB_SAMPLE_NO_END (1 << 0) /* leave out DROPS, TIMERS and END: a killed recording */
#define TB_SAMPLE_ZSTD	 (1 << 1) /* compress EVENTS records */
#define TB_SAMPLE_V2	 (1 << 2) /* format version 2: EVENTS2 records */
void tb_sample(struct tb *b, int flags);

/* Stack sample tables (format version 3), one record each; entries serialized little-endian
 * with `entry_bytes` per entry (0: the version's size; larger pads with zeros), so tests can
 * lie about any field. CRITICAL, as the runtime writes them. */
void tb_mappings(struct tb *b, uint32_t first_id, const struct ops_mapping_entry *e, uint32_t n,
		 uint32_t entry_bytes);
void tb_frames(struct tb *b, uint32_t first_id, const struct ops_frame_entry *e, uint32_t n,
	       uint32_t entry_bytes);
void tb_stacks(struct tb *b, uint32_t first_id, const struct ops_stack_entry *e, uint32_t n,
	       uint32_t entry_bytes);
void tb_samples(struct tb *b, const struct ops_sample_entry *e, uint32_t n, uint32_t entry_bytes);

/* The stack samples trace (documented in tracebuild.c), whole or with one defect. */
enum tb_stacks_defect {
	TB_STACKS_OK = 0,
	TB_STACKS_BAD_STACK,	 /* a sample names a stack id not defined */
	TB_STACKS_BAD_MAPPING,	 /* a frame names a mapping id not defined */
	TB_STACKS_BAD_PARENT,	 /* a stack entry's parent is not an earlier entry */
	TB_STACKS_BAD_FRAME,	 /* a stack entry names a frame id not defined */
	TB_STACKS_SHORT_ENTRIES, /* entries smaller than the version's */
	TB_STACKS_CUT_TABLE,	 /* a SAMPLES payload one byte short of its count */
	TB_STACKS_GAP_IDS,	 /* a FRAMES record whose first id skips one */
	TB_STACKS_V2_HEADER,	 /* the tables in a file whose header says version 2 */
};
void tb_stacks_trace(struct tb *b, enum tb_stacks_defect defect);

/* Write the file; 0 or -1. */
int tb_write(const struct tb *b, const char *path);

#endif
