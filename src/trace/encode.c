/*
 * encode.c: raw slots -> the on-disk event stream (format.h, "Encoded events").
 *
 * Times are delta-encoded against the previous timed event of the same record, so a
 * begin/end pair usually costs 2-3 bytes of time each; names are varint ids. A tick value
 * that goes back (TSC read on another core, should not happen with invariant TSC) is clamped
 * to the previous time so deltas stay unsigned and per-track order holds.
 */
#include "trace/encode.h"

#include "util/bytes.h"

void encode_begin(struct buf *out, struct encode_state *st, uint32_t track, uint64_t first_ticks)
{
	buf_u32(out, track);
	buf_u32(out, 0); /* count, patched by encode_finish */
	buf_u64(out, first_ticks);
	st->prev_ticks = first_ticks;
	st->events = 0;
	st->drop_marks = 0;
}

void encode_finish(struct buf *out, const struct encode_state *st)
{
	if (!out->oom && out->len >= sizeof(struct ops_events_payload))
		put_u32le(out->data + 4, st->events);
}

static uint8_t *encode_dt(uint8_t *p, struct encode_state *st, uint64_t ticks)
{
	uint64_t dt = ticks > st->prev_ticks ? ticks - st->prev_ticks : 0;
	if (ticks > st->prev_ticks)
		st->prev_ticks = ticks;
	return put_varint(p, dt);
}

void encode_slots(struct buf *out, struct encode_state *st, const struct ops_slot *slots, size_t n)
{
	/* Worst case per event: kind + 4 varints + 8 bytes. */
	enum { EVENT_MAX = 1 + 4 * VARINT_MAX_BYTES + 8 };
	for (size_t i = 0; i < n; i++) {
		const struct ops_slot *s = &slots[i];
		uint8_t *start = buf_reserve(out, EVENT_MAX);
		if (!start)
			return;
		uint8_t *p = start;
		unsigned kind = s->kind;
		const struct ops_slot *payload = NULL;
		if (ops_kind_has_payload(kind)) {
			if (i + 1 >= n || slots[i + 1].kind != OPS_SLOT_PAYLOAD)
				continue; /* torn two-slot event: cannot happen, skip it */
			payload = &slots[++i];
		}
		*p++ = (uint8_t)kind;
		switch (kind) {
		case OPS_EV_BEGIN:
		case OPS_EV_INSTANT:
			p = encode_dt(p, st, s->ticks);
			*p++ = s->cat;
			p = put_varint(p, s->name);
			break;
		case OPS_EV_END:
			p = encode_dt(p, st, s->ticks);
			p = put_varint(p, s->name);
			break;
		case OPS_EV_COUNTER:
			p = encode_dt(p, st, s->ticks);
			p = put_varint(p, s->name);
			p = put_u64le(p, payload->ticks);
			break;
		case OPS_EV_ARG:
			p = put_varint(p, s->name);
			*p++ = (uint8_t)s->aux;
			if (s->aux == OPS_ARG_F64)
				p = put_u64le(p, s->ticks);
			else
				p = put_varint(p, s->ticks); /* I64 is already zigzagged */
			break;
		case OPS_EV_FLOW_OUT:
		case OPS_EV_FLOW_IN:
		case OPS_EV_ASYNC_END:
		case OPS_EV_DROP_MARK:
			p = encode_dt(p, st, s->ticks);
			p = put_varint(p, payload->ticks);
			break;
		case OPS_EV_ASYNC_BEGIN:
			p = encode_dt(p, st, s->ticks);
			*p++ = s->cat;
			p = put_varint(p, s->name);
			p = put_varint(p, payload->ticks);
			break;
		default:
			continue; /* unknown or stray payload slot */
		}
		out->len += (size_t)(p - start);
		st->events++;
		st->drop_marks += kind == OPS_EV_DROP_MARK;
	}
}
