/*
 * encode.h: the raw in-memory event slot that the record stage fills on the hot path, and
 * its encoder into the compact on-disk event stream of format.h.
 *
 * A slot is 16 bytes so that recording an event is one timestamp read and two 8-byte
 * stores. Events that carry a 64-bit payload (counter value, flow id, async id, drop count)
 * take a second slot of kind OPS_SLOT_PAYLOAD right after the first; ARG is a single slot
 * whose `ticks` field holds the value.
 *
 * The encoder writes EVENTS2 records (format version 2): a tag byte per event into the
 * record, every other field into one of four streams that encode_finish appends after the
 * tags. The streams' buffers live in the encode_state and are reused from record to record.
 */
#ifndef OPSCOPE_TRACE_ENCODE_H
#define OPSCOPE_TRACE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"
#include "util/buf.h"

#define OPS_SLOT_PAYLOAD 0x7f /* second slot of a two-slot event */

struct ops_slot {
	uint64_t ticks; /* time in ticks; for ARG/PAYLOAD slots the 64-bit value */
	uint32_t name;	/* name or key string id */
	uint8_t kind;	/* enum ops_event_kind or OPS_SLOT_PAYLOAD */
	uint8_t cat;	/* category (BEGIN, INSTANT, ASYNC_BEGIN) */
	uint16_t aux;	/* ARG: enum ops_arg_type */
};
_Static_assert(sizeof(struct ops_slot) == 16, "a slot is 16 bytes");

/* 1 if events of this kind take a payload slot after them. */
static inline int ops_kind_has_payload(unsigned kind)
{
	return kind == OPS_EV_COUNTER || kind == OPS_EV_FLOW_OUT || kind == OPS_EV_FLOW_IN ||
	       kind == OPS_EV_ASYNC_BEGIN || kind == OPS_EV_ASYNC_END || kind == OPS_EV_DROP_MARK;
}

struct encode_state {
	struct buf times, ids, bytes, values; /* the streams after the tags (owned) */
	uint64_t prev_ticks;		      /* time of the previous timed event */
	uint32_t events;     /* events encoded, DROP_MARKs included (the record's count) */
	uint32_t drop_marks; /* DROP_MARK events among them (not events of the program) */
};

/* A zeroed encode_state is ready to use; encode_free releases its streams. */
void encode_free(struct encode_state *st);
/* Start an EVENTS2 payload in `out` (cleared by the caller) for `track`, whose first event
 * is at `first_ticks`. */
void encode_begin(struct buf *out, struct encode_state *st, uint32_t track, uint64_t first_ticks);
/* Encode n slots (whole events only). Slots of unknown kind are skipped. */
void encode_slots(struct buf *out, struct encode_state *st, const struct ops_slot *slots, size_t n);
/* Append the streams and patch the count and their sizes into the payload header. */
void encode_finish(struct buf *out, struct encode_state *st);

#endif
