/*
 * encode.c: raw slots -> the on-disk event streams of an EVENTS2 record (format.h,
 * docs/trace-format.md section 4.2).
 *
 * Times are delta-encoded against the previous timed event of the same record and stored in
 * the narrowest of 1, 2, 4 or 8 bytes, so a begin/end pair usually costs 2 bytes of time
 * each; ids take 0 (id 0), 1, 2 or 4 bytes. The widths go into the event's tag, which is what
 * lets a reader find every field without decoding the events before it. A tick value that
 * goes back (TSC read on another core, should not happen with invariant TSC) is clamped to the
 * previous time so deltas stay unsigned and per-track order holds.
 */
#include "trace/encode.h"

#include "util/bytes.h"

void encode_free(struct encode_state *st)
{
	buf_free(&st->times);
	buf_free(&st->ids);
	buf_free(&st->bytes);
	buf_free(&st->values);
}

void encode_begin(struct buf *out, struct encode_state *st, uint32_t track, uint64_t first_ticks)
{
	buf_u32(out, track);
	buf_u32(out, 0); /* count, patched by encode_finish */
	buf_u64(out, first_ticks);
	for (int i = 0; i < 4; i++)
		buf_u32(out, 0); /* stream sizes, patched by encode_finish */
	buf_clear(&st->times);
	buf_clear(&st->ids);
	buf_clear(&st->bytes);
	buf_clear(&st->values);
	st->prev_ticks = first_ticks;
	st->events = 0;
	st->drop_marks = 0;
}

void encode_finish(struct buf *out, struct encode_state *st)
{
	buf_append(out, st->times.data, st->times.len);
	buf_append(out, st->ids.data, st->ids.len);
	buf_append(out, st->bytes.data, st->bytes.len);
	buf_append(out, st->values.data, st->values.len);
	out->oom |= st->times.oom || st->ids.oom || st->bytes.oom || st->values.oom;
	if (out->oom || out->len < sizeof(struct ops_events2_payload))
		return;
	put_u32le(out->data + 4, st->events);
	put_u32le(out->data + 16, (uint32_t)st->times.len);
	put_u32le(out->data + 20, (uint32_t)st->ids.len);
	put_u32le(out->data + 24, (uint32_t)st->bytes.len);
	put_u32le(out->data + 28, (uint32_t)st->values.len);
}

/* v as the narrowest of 1, 2, 4 or 8 little-endian bytes at *p (8 bytes of room); its code. */
static inline unsigned put_time(uint8_t **p, uint64_t v)
{
	unsigned code = v <= 0xff ? 0 : v <= 0xffff ? 1 : v <= 0xffffffffu ? 2 : 3;
	put_u64le(*p, v);
	*p += OPS_TIME_WIDTH(code);
	return code;
}

/* An id as 0, 1, 2 or 4 bytes at *p (4 bytes of room); its code. */
static inline unsigned put_id(uint8_t **p, uint32_t id)
{
	unsigned code = id == 0 ? 0 : id <= 0xff ? 1 : id <= 0xffff ? 2 : 3;
	put_u32le(*p, id);
	*p += OPS_ID_WIDTH(code);
	return code;
}

static inline unsigned put_dt(uint8_t **p, struct encode_state *st, uint64_t ticks)
{
	uint64_t dt = ticks > st->prev_ticks ? ticks - st->prev_ticks : 0;
	if (ticks > st->prev_ticks)
		st->prev_ticks = ticks;
	return put_time(p, dt);
}

void encode_slots(struct buf *out, struct encode_state *st, const struct ops_slot *slots, size_t n)
{
	/* room for n events of the widest kind in every stream, then plain stores */
	uint8_t *tags = buf_reserve(out, n), *times = buf_reserve(&st->times, 8 * n),
		*ids = buf_reserve(&st->ids, 4 * n), *bytes = buf_reserve(&st->bytes, n),
		*values = buf_reserve(&st->values, 8 * n);
	if (!tags || !times || !ids || !bytes || !values) {
		out->oom = true;
		return;
	}
	uint8_t *tg = tags, *tp = times, *ip = ids, *bp = bytes, *vp = values;
	for (size_t i = 0; i < n; i++) {
		const struct ops_slot *s = &slots[i];
		unsigned kind = s->kind;
		const struct ops_slot *payload = NULL;
		if (ops_kind_has_payload(kind)) {
			if (i + 1 >= n || slots[i + 1].kind != OPS_SLOT_PAYLOAD)
				continue; /* torn two-slot event: cannot happen, skip it */
			payload = &slots[++i];
		}
		unsigned tc = 0, ic = 0;
		switch (kind) {
		case OPS_EV_BEGIN:
		case OPS_EV_INSTANT:
			tc = put_dt(&tp, st, s->ticks);
			ic = put_id(&ip, s->name);
			*bp++ = s->cat;
			break;
		case OPS_EV_END:
			tc = put_dt(&tp, st, s->ticks);
			ic = put_id(&ip, s->name);
			break;
		case OPS_EV_COUNTER:
			tc = put_dt(&tp, st, s->ticks);
			ic = put_id(&ip, s->name);
			vp = put_u64le(vp, payload->ticks);
			break;
		case OPS_EV_ARG:
			tc = put_time(&tp, s->ticks); /* the value; I64 is already zigzagged */
			ic = put_id(&ip, s->name);
			*bp++ = (uint8_t)s->aux;
			break;
		case OPS_EV_FLOW_OUT:
		case OPS_EV_FLOW_IN:
		case OPS_EV_ASYNC_END:
		case OPS_EV_DROP_MARK:
			tc = put_dt(&tp, st, s->ticks);
			vp = put_u64le(vp, payload->ticks);
			break;
		case OPS_EV_ASYNC_BEGIN:
			tc = put_dt(&tp, st, s->ticks);
			ic = put_id(&ip, s->name);
			*bp++ = s->cat;
			vp = put_u64le(vp, payload->ticks);
			break;
		default:
			continue; /* unknown or stray payload slot */
		}
		*tg++ = OPS_TAG(kind, tc, ic);
		st->events++;
		st->drop_marks += kind == OPS_EV_DROP_MARK;
	}
	out->len += (size_t)(tg - tags);
	st->times.len += (size_t)(tp - times);
	st->ids.len += (size_t)(ip - ids);
	st->bytes.len += (size_t)(bp - bytes);
	st->values.len += (size_t)(vp - values);
}
