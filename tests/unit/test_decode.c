/*
 * test_decode.c: the .opscope decoder (trace/decode.c) on files built byte by byte (tracebuild): records and
 * events of a sample, truncation at every byte, torn and corrupt tails, bad headers,
 * versions, unknown records, compressed records, malformed events.
 */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "opscope/opscope.h"

#include "formats/opscope/opscope_load.h"
#include "harness.h"
#include "model/model.h"
#include "opscope_config.h"
#include "trace/decode.h"
#include "tracebuild.h"
#include "util/bytes.h"
#include "util/crc32c.h"

static struct model *load_mem(const void *data, size_t len, int *rc, char *err, size_t errsize)
{
	struct model *m = model_new();
	*rc = opscope_load_mem(m, "t.opscope", data, len, err, errsize);
	return m;
}

/* The sample's events in format 1 (flags 0) or 2 (TB_SAMPLE_V2): the same either way. */
static void check_sample(int flags)
{
	struct tb b;
	tb_sample(&b, flags);
	struct decoder r;
	REQUIRE(decode_open_mem(&r, "s.opscope", b.out.data, b.out.len) == 0);
	CHECK_EQ_U(r.hdr.pid, 100);
	CHECK_EQ_U(r.hdr.version, flags & TB_SAMPLE_V2 ? 2 : 1);
	unsigned type = flags & TB_SAMPLE_V2 ? OPS_REC_EVENTS2 : OPS_REC_EVENTS;
	struct decode_record rec;
	int rc, events_records = 0, kinds[16] = { 0 };
	uint64_t last_ticks = 0;
	while ((rc = decode_next(&r, &rec)) == 1) {
		CHECK(rec.type != OPS_REC_EVENTS + OPS_REC_EVENTS2 - type);
		if (rec.type != type)
			continue;
		struct decode_events it;
		REQUIRE(decode_events_begin(&r, &rec, &it) == 0);
		struct decode_event ev;
		while ((rc = decode_events_next(&r, &it, &ev)) == 1) {
			kinds[ev.kind]++;
			if (events_records == 0 && ev.kind == OPS_EV_END)
				last_ticks = ev.ticks;
		}
		CHECK_EQ_I(rc, 0);
		events_records++;
	}
	CHECK_EQ_I(rc, 0);
	CHECK_EQ_I(events_records, 2);
	CHECK_EQ_I(kinds[OPS_EV_BEGIN], 5);
	CHECK_EQ_I(kinds[OPS_EV_END], 4);
	CHECK_EQ_I(kinds[OPS_EV_ARG], 4);
	CHECK_EQ_I(kinds[OPS_EV_FLOW_OUT], 1);
	CHECK_EQ_I(kinds[OPS_EV_FLOW_IN], 1);
	CHECK_EQ_I(kinds[OPS_EV_ASYNC_BEGIN], 1);
	CHECK_EQ_I(kinds[OPS_EV_ASYNC_END], 1);
	CHECK_EQ_I(kinds[OPS_EV_DROP_MARK], 1);
	CHECK_EQ_U(last_ticks, 2000);
	CHECK(r.saw_end);
	CHECK_EQ_U(r.discarded_bytes, 0);
	CHECK_EQ_U(r.valid_end, b.out.len);
	CHECK_STR(r.tail_msg, "");
	decode_close(&r);
	tb_free(&b);
}

TEST(sample_records_and_events)
{
	check_sample(0);
	check_sample(TB_SAMPLE_V2);
}

/* Offsets just past each complete record, and the events in EVENTS records up to there. */
struct boundary {
	size_t end;	 /* offset after the record */
	uint64_t events; /* events in EVENTS records up to and including it */
	int is_end;	 /* the record is END */
};

static void check_truncated(int flags)
{
	struct tb b;
	tb_sample(&b, flags);
	struct boundary bd[64];
	int nb = 0;
	struct decoder r;
	REQUIRE(decode_open_mem(&r, "s", b.out.data, b.out.len) == 0);
	struct decode_record rec;
	uint64_t events = 0;
	while (decode_next(&r, &rec) == 1 && nb < 64) {
		if (rec.type == OPS_REC_EVENTS || rec.type == OPS_REC_EVENTS2)
			events += get_u32le(rec.payload + 4);
		bd[nb++] = (struct boundary){ r.pos, events, rec.type == OPS_REC_END };
	}
	decode_close(&r);
	REQUIRE(events == 20);
	int failures = 0;
	for (size_t cut = 0; cut <= b.out.len; cut++) {
		/* an exact-size heap copy so ASan catches any read past the cut */
		uint8_t *copy = malloc(cut ? cut : 1);
		memcpy(copy, b.out.data, cut);
		int rc;
		char err[320] = "";
		struct model *m = load_mem(copy, cut, &rc, err, sizeof(err));
		if (cut < 64) {
			if (rc != OPSCOPE_ETRUNCATED)
				failures++;
		} else {
			size_t valid = 64;
			uint64_t want = 0;
			int complete = 0;
			for (int i = 0; i < nb && bd[i].end <= cut; i++) {
				valid = bd[i].end;
				want = bd[i].events;
				complete = bd[i].is_end;
			}
			if (rc != 0 || m->events_total != want || m->complete != complete ||
			    m->files[0].valid_end != valid ||
			    m->files[0].discarded_bytes != cut - valid) {
				if (failures++ < 5)
					printf("#   cut %zu: rc %d events %llu (want %llu) valid %llu "
					       "(want %zu) %s\n",
					       cut, rc, (unsigned long long)m->events_total,
					       (unsigned long long)want,
					       (unsigned long long)m->files[0].valid_end, valid,
					       err);
			}
			if (cut < b.out.len && cut != valid && m->files[0].tail_msg == 0)
				failures++;
		}
		model_free(m);
		free(copy);
	}
	CHECK_EQ_I(failures, 0);
	tb_free(&b);
}

TEST(truncated_at_every_byte)
{
	check_truncated(0);
	check_truncated(TB_SAMPLE_V2);
}

static size_t find_record(const struct tb *b, int type, int nth)
{
	size_t pos = 64;
	while (pos + 16 <= b->out.len) {
		unsigned t = get_u16le(b->out.data + pos);
		if ((int)t == type && nth-- == 0)
			return pos;
		pos += 16 + get_u32le(b->out.data + pos + 4);
	}
	return 0;
}

TEST(corrupt_crc_ends_valid_data)
{
	struct tb b;
	tb_sample(&b, 0);
	size_t second = find_record(&b, OPS_REC_EVENTS, 1);
	REQUIRE(second > 0);
	b.out.data[second + 16 + 20] ^= 0x55;
	int rc;
	char err[320];
	struct model *m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
	CHECK_EQ_I(rc, 0);
	CHECK_EQ_U(m->events_total, 14);
	CHECK(!m->complete);
	CHECK_EQ_U(m->files[0].valid_end, second);
	CHECK_EQ_U(m->files[0].discarded_bytes, b.out.len - second);
	CHECK(strstr(model_str(m, m->files[0].tail_msg), "CRC mismatch") != NULL);
	model_free(m);

	struct decoder r;
	REQUIRE(decode_open_mem(&r, "s.opscope", b.out.data, b.out.len) == 0);
	r.strict = true;
	struct decode_record rec;
	while ((rc = decode_next(&r, &rec)) == 1)
		;
	CHECK_EQ_I(rc, OPSCOPE_ETRUNCATED);
	char want[64];
	snprintf(want, sizeof(want), "s.opscope: offset %zu: record CRC mismatch", second);
	CHECK(strncmp(r.err, want, strlen(want)) == 0);
	decode_close(&r);
	tb_free(&b);
}

TEST(bad_headers)
{
	struct tb b;
	tb_sample(&b, 0);
	int rc;
	char err[320];
	b.out.data[0] = 'X';
	model_free(load_mem(b.out.data, b.out.len, &rc, err, sizeof(err)));
	CHECK_EQ_I(rc, OPSCOPE_EFORMAT);
	CHECK_STR(err, "t.opscope: offset 0: not an opscope trace (bad magic)");
	b.out.data[0] = 'O';

	put_u16le(b.out.data + 10, 5); /* needs reader version 5 (this one reads 4) */
	put_u16le(b.out.data + 8, 5);
	model_free(load_mem(b.out.data, b.out.len, &rc, err, sizeof(err)));
	CHECK_EQ_I(rc, OPSCOPE_EVERSION);
	CHECK(strstr(err, "needs a reader of version 5") != NULL);
	put_u16le(b.out.data + 10, 1); /* a newer writer readable by us: fine */
	struct model *m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
	CHECK_EQ_I(rc, 0);
	CHECK_EQ_U(m->files[0].version, 5);
	CHECK_EQ_U(m->events_total, 20);
	model_free(m);
	put_u16le(b.out.data + 8, 1);

	put_u32le(b.out.data + 12, 32);
	model_free(load_mem(b.out.data, b.out.len, &rc, err, sizeof(err)));
	CHECK_EQ_I(rc, OPSCOPE_EFORMAT);
	put_u32le(b.out.data + 12, 0x7fffffff);
	model_free(load_mem(b.out.data, b.out.len, &rc, err, sizeof(err)));
	CHECK_EQ_I(rc, OPSCOPE_ETRUNCATED);
	put_u32le(b.out.data + 12, 64);
	tb_free(&b);

	model_free(load_mem("", 0, &rc, err, sizeof(err)));
	CHECK_EQ_I(rc, OPSCOPE_ETRUNCATED);
	model_free(load_mem("OPSC", 4, &rc, err, sizeof(err)));
	CHECK_EQ_I(rc, OPSCOPE_ETRUNCATED);
	model_free(load_mem("{\"traceEvents\":[]}", 18, &rc, err, sizeof(err)));
	CHECK_EQ_I(rc, OPSCOPE_EFORMAT);
}

/* A longer header (a future version's): records start at header_bytes. */
TEST(longer_header)
{
	struct tb b;
	tb_sample(&b, 0);
	struct buf big;
	buf_init(&big);
	buf_append(&big, b.out.data, 64);
	uint8_t extra[64] = { 0 };
	buf_append(&big, extra, sizeof(extra));
	buf_append(&big, b.out.data + 64, b.out.len - 64);
	put_u32le(big.data + 12, 128);
	int rc;
	char err[320];
	struct model *m = load_mem(big.data, big.len, &rc, err, sizeof(err));
	CHECK_EQ_I(rc, 0);
	CHECK_EQ_U(m->events_total, 20);
	CHECK(m->complete);
	model_free(m);
	buf_free(&big);
	tb_free(&b);
}

TEST(huge_sizes)
{
	struct tb b;
	tb_init(&b, 1);
	tb_clock_identity(&b);
	size_t at = b.out.len;
	uint8_t h[16] = { 0 };
	put_u16le(h, OPS_REC_EVENTS);
	put_u32le(h + 4, 0xfffffff0u);
	put_u32le(h + 8, 0xfffffff0u);
	buf_append(&b.out, h, sizeof(h));
	int rc;
	char err[320];
	struct model *m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
	CHECK_EQ_I(rc, 0);
	CHECK_EQ_U(m->files[0].valid_end, at);
	CHECK_EQ_U(m->files[0].discarded_bytes, 16);
	char want[128];
	snprintf(want, sizeof(want),
		 "t.opscope: offset %zu: record size 0xfffffff0 exceeds the limit", at);
	CHECK(strncmp(model_str(m, m->files[0].tail_msg), want, strlen(want)) == 0);
	model_free(m);
	/* within the limit but beyond the file */
	put_u32le(b.out.data + at + 4, 4096);
	put_u32le(b.out.data + at + 8, 4096);
	m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
	CHECK_EQ_I(rc, 0);
	snprintf(want, sizeof(want), "t.opscope: offset %zu: record size 0x1000 exceeds file", at);
	CHECK(strncmp(model_str(m, m->files[0].tail_msg), want, strlen(want)) == 0);
	model_free(m);
	tb_free(&b);
}

TEST(unknown_records)
{
	struct tb b;
	tb_init(&b, 1);
	tb_clock_identity(&b);
	tb_record(&b, 99, 0, "future", 6);
	uint32_t s = tb_str(&b, "x");
	tb_events_begin(&b, 0, 10);
	tb_ev_instant(&b, 10, 0, s);
	tb_events_end(&b);
	tb_end(&b, 1, 0, 10, 1);
	int rc;
	char err[320];
	struct model *m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
	CHECK_EQ_I(rc, 0);
	CHECK_EQ_U(m->files[0].skipped_records, 1);
	CHECK_EQ_U(m->events_total, 1);
	CHECK(m->complete);
	model_free(m);
	tb_free(&b);

	tb_init(&b, 1);
	tb_record(&b, 99, OPS_RECF_CRITICAL, "future", 6);
	m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
	CHECK_EQ_I(rc, OPSCOPE_EVERSION);
	CHECK_STR(err,
		  "t.opscope: offset 64: record type 99 is critical and unknown to this reader");
	model_free(m);
	tb_free(&b);

	tb_init(&b, 1);
	tb_record(&b, OPS_REC_CLOCK, 1u << 3, "01234567890123456789012345678901", 32);
	m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
	CHECK_EQ_I(rc, OPSCOPE_EUNSUPPORTED);
	model_free(m);
	tb_free(&b);
}

TEST(compressed_records)
{
	struct tb b;
	tb_sample(&b, TB_SAMPLE_ZSTD);
	int rc;
	char err[320];
	struct model *m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
#if OPSCOPE_HAVE_ZSTD
	CHECK_EQ_I(rc, 0);
	CHECK_EQ_U(m->events_total, 20);
	CHECK(m->complete);
	/* a zstd frame whose size disagrees with raw_bytes is refused */
	size_t ev = find_record(&b, OPS_REC_EVENTS, 0);
	REQUIRE(ev > 0);
	CHECK(get_u16le(b.out.data + ev + 2) & OPS_RECF_ZSTD);
	put_u32le(b.out.data + ev + 8, get_u32le(b.out.data + ev + 8) + 1);
	model_free(m);
	m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
	CHECK_EQ_I(rc, OPSCOPE_EFORMAT);
	CHECK(strstr(err, "zstd") != NULL);
#else
	CHECK_EQ_I(rc, 0); /* tracebuild writes them uncompressed without zstd */
#endif
	model_free(m);
	tb_free(&b);
}

TEST(malformed_events)
{
	static const struct {
		const char *bytes;
		size_t n;
		uint32_t count;
		const char *want;
	} cases[] = {
		{ "\x4d\x00", 2, 1, "unknown kind 77" },
		{ "\x01\x00\x00", 3, 1, "cut short" },
		{ "\x05\x01\x09\x00", 4, 1, "arg type 9" },
		{ "\x03\x00\x00\x00\x01", 5, 1, "after its 1 events" },
		{ "\x03\x00\x00\x01", 4, 5, "exceeds the payload" },
		{ "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00\x01\x03\x01\x00\x01", 17, 2,
		  "time overflows" },
		{ "\x03\x00\x00\xff\xff\xff\xff\x7f", 8, 1, "string id too large" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb b;
		tb_init(&b, 1);
		tb_events_begin(&b, 0, 0);
		tb_ev_raw(&b, cases[i].bytes, cases[i].n, cases[i].count);
		tb_events_end(&b);
		int rc;
		char err[320] = "";
		struct model *m = load_mem(b.out.data, b.out.len, &rc, err, sizeof(err));
		CHECK_EQ_I(rc, OPSCOPE_EFORMAT);
		if (!strstr(err, cases[i].want) || !strstr(err, "t.opscope: offset 64: "))
			CHECK_STR(err, cases[i].want);
		model_free(m);
		tb_free(&b);
	}
}

/* xorshift64*: the same pseudo-random streams on every run */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* A value whose varint takes 1 to 10 bytes, short ones most often. */
static uint64_t rnd_value(uint64_t *s)
{
	unsigned bits = (unsigned)(rnd(s) % 8 == 0 ? rnd(s) % 65 : rnd(s) % 15);
	uint64_t v = rnd(s);
	return bits == 64 ? v : v & (((uint64_t)1 << bits) - 1);
}

/* Random encoded events of every kind into p; returns the bytes written. */
static size_t rnd_events(uint64_t *s, uint8_t *p, uint32_t count)
{
	uint8_t *start = p;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t kind = (uint8_t)(rnd(s) % 3 == 0 ? 1 + rnd(s) % 10 : 1 + rnd(s) % 2);
		if (rnd(s) % 4 == 0)
			kind = OPS_EV_ARG;
		*p++ = kind;
		if (kind != OPS_EV_ARG)
			p = put_varint(p, rnd_value(s) & 0xffffff); /* dt: no overflow */
		if (kind == OPS_EV_BEGIN || kind == OPS_EV_INSTANT || kind == OPS_EV_ASYNC_BEGIN)
			*p++ = (uint8_t)rnd(s);
		if (kind == OPS_EV_ARG) {
			p = put_varint(p, rnd_value(s) & 0xffffffff);
			uint8_t type = (uint8_t)(1 + rnd(s) % 4);
			*p++ = type;
			if (type == OPS_ARG_F64)
				p = put_u64le(p, rnd(s));
			else
				p = put_varint(p, type == OPS_ARG_STR ? rnd_value(s) & 0xffffffff
								      : rnd_value(s));
		} else if (kind == OPS_EV_COUNTER) {
			p = put_varint(p, rnd_value(s) & 0xffffffff);
			p = put_u64le(p, rnd(s));
		} else if (kind == OPS_EV_FLOW_OUT || kind == OPS_EV_FLOW_IN ||
			   kind == OPS_EV_ASYNC_END || kind == OPS_EV_DROP_MARK) {
			p = put_varint(p, rnd_value(s));
		} else {
			p = put_varint(p, rnd_value(s) & 0xffffffff);
			if (kind == OPS_EV_ASYNC_BEGIN)
				p = put_varint(p, rnd_value(s));
		}
	}
	return (size_t)(p - start);
}

/* An EVENTS2 record of `count` random events of every kind in t (format 2), fields of every
 * width; with `damage`, bytes of its payload (header and streams) changed at random and the
 * CRC made to match, or the payload cut short. */
static void rnd_events2(uint64_t *s, struct tb *t, uint32_t count, int damage)
{
	tb_events_begin(t, 0, 1000);
	uint64_t ticks = 1000;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t kind = (uint8_t)(rnd(s) % 3 == 0 ? 1 + rnd(s) % 10 : 1 + rnd(s) % 2);
		ticks += rnd_value(s) & 0xffffffffff; /* no overflow in 600 events */
		uint32_t name = (uint32_t)(rnd_value(s) & 0xffffffff);
		uint64_t v = rnd_value(s);
		switch (kind) {
		case OPS_EV_BEGIN:
			tb_ev_begin(t, ticks, (uint8_t)rnd(s), name);
			break;
		case OPS_EV_END:
			tb_ev_end(t, ticks, rnd(s) % 2 ? 0 : name);
			break;
		case OPS_EV_INSTANT:
			tb_ev_instant(t, ticks, (uint8_t)rnd(s), name);
			break;
		case OPS_EV_COUNTER:
			tb_ev_counter(t, ticks, name, f64_from_bits(rnd(s)));
			break;
		case OPS_EV_ARG:
			switch (rnd(s) % 4) {
			case 0:
				tb_ev_arg_i64(t, name, (int64_t)v);
				break;
			case 1:
				tb_ev_arg_u64(t, name, v);
				break;
			case 2:
				tb_ev_arg_f64(t, name, f64_from_bits(rnd(s)));
				break;
			default:
				tb_ev_arg_str(t, name, (uint32_t)v);
			}
			break;
		case OPS_EV_FLOW_OUT:
		case OPS_EV_FLOW_IN:
			tb_ev_flow(t, ticks, kind == OPS_EV_FLOW_OUT, v);
			break;
		case OPS_EV_ASYNC_BEGIN:
			tb_ev_async_begin(t, ticks, (uint8_t)rnd(s), name, v);
			break;
		case OPS_EV_ASYNC_END:
			tb_ev_async_end(t, ticks, v);
			break;
		default:
			tb_ev_drop_mark(t, ticks, v);
		}
	}
	tb_events_end(t);
	if (!damage)
		return;
	size_t pos = find_record(t, OPS_REC_EVENTS2, 0);
	uint8_t *payload = t->out.data + pos + 16;
	uint32_t len = get_u32le(t->out.data + pos + 4);
	for (int k = (int)(rnd(s) % 4); k >= 0; k--)
		payload[rnd(s) % len] = (uint8_t)(rnd(s) % 3 ? 0xff : rnd(s));
	if (rnd(s) % 4 == 0) {
		len -= (uint32_t)(rnd(s) % len); /* cut short: sizes no longer add up */
		put_u32le(t->out.data + pos + 4, len);
		put_u32le(t->out.data + pos + 8, len);
		t->out.len = pos + 16 + len;
	}
	put_u32le(t->out.data + pos + 12, crc32c(0, payload, len));
}

/* Every event of an EVENTS record (at most `max`), decoded the general way (fast == false)
 * or the way the loader does: runs of the fast decoder, each of a random length, and the
 * general decoder where a run stops. Returns the final code (0 or an error); *n events. */
static int decode_all(struct decoder *r, struct decode_events *it, bool fast, uint64_t *seed,
		      struct decode_event *out, int max, int *n, int *fast_events)
{
	*n = 0;
	while (*n < max) {
		if (fast) {
			int run = 1 + (int)(rnd(seed) % 64), got = 0;
			struct decode_fast f = { 0 };
			struct decode_fast2 f2 = { 0 };
			if (it->v2)
				decode_fast2_begin(it, &f2);
			else
				decode_fast_begin(it, &f);
			while (got < run && *n < max &&
			       (it->v2 ? decode_fast2_next(&f2, &out[*n])
				       : decode_fast_next(&f, &out[*n]))) {
				got++;
				(*n)++;
			}
			if (it->v2)
				decode_fast2_end(it, &f2);
			else
				decode_fast_end(it, &f);
			*fast_events += got;
			if (got)
				continue;
		}
		int rc = decode_events_next(r, it, &out[*n]);
		if (rc != 1)
			return rc;
		(*n)++;
	}
	return 0;
}

/* The fast decoder gives the same events as the general one, and leaves the same error, at
 * the same point, on valid streams and on streams with bytes changed at random (bad kinds,
 * overlong varints, huge ids, records cut short). */
TEST(fast_decoder_agrees)
{
	enum { MAX_EVENTS = 600 };
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint8_t *bytes = malloc(64 * 1024);
	struct decode_event *a = malloc(MAX_EVENTS * sizeof(*a)),
			    *b = malloc(MAX_EVENTS * sizeof(*b));
	REQUIRE(bytes && a && b);
	int errors = 0, fast_events = 0;
	for (int round = 0; round < 400; round++) {
		uint32_t count = 1 + (uint32_t)(rnd(&seed) % MAX_EVENTS);
		size_t n = rnd_events(&seed, bytes, count);
		if (round % 2) {
			for (int k = (int)(rnd(&seed) % 4); k >= 0; k--)
				bytes[rnd(&seed) % n] =
					(uint8_t)(rnd(&seed) % 3 ? 0xff : rnd(&seed));
			if (rnd(&seed) % 4 == 0)
				n -= rnd(&seed) % n; /* cut short */
		}
		struct tb t;
		bool v2 = round % 4 >= 2;
		if (v2) {
			tb_init_v2(&t, 1);
			rnd_events2(&seed, &t, count, round % 2);
		} else {
			tb_init(&t, 1);
			tb_events_begin(&t, 0, 1000);
			tb_ev_raw(&t, bytes, n, count);
			tb_events_end(&t);
		}
		struct decoder r1, r2;
		struct decode_record rec1, rec2;
		REQUIRE(decode_open_mem(&r1, "a.opscope", t.out.data, t.out.len) == 0);
		REQUIRE(decode_open_mem(&r2, "a.opscope", t.out.data, t.out.len) == 0);
		while (decode_next(&r1, &rec1) == 1 && rec1.type != OPS_REC_EVENTS &&
		       rec1.type != OPS_REC_EVENTS2)
			;
		while (decode_next(&r2, &rec2) == 1 && rec2.type != OPS_REC_EVENTS &&
		       rec2.type != OPS_REC_EVENTS2)
			;
		struct decode_events it1, it2;
		int rc1 = decode_events_begin(&r1, &rec1, &it1);
		int rc2 = decode_events_begin(&r2, &rec2, &it2);
		CHECK_EQ_I(rc1, rc2);
		int n1 = 0, n2 = 0;
		if (rc1 == 0) {
			rc1 = decode_all(&r1, &it1, false, &seed, a, MAX_EVENTS, &n1, &fast_events);
			rc2 = decode_all(&r2, &it2, true, &seed, b, MAX_EVENTS, &n2, &fast_events);
		}
		CHECK_EQ_I(n2, n1);
		CHECK_EQ_I(rc2, rc1);
		CHECK_STR(r2.err, r1.err);
		int differ = 0;
		for (int i = 0; i < n1 && i < n2; i++)
			differ += a[i].kind != b[i].kind || a[i].category != b[i].category ||
				  a[i].arg_type != b[i].arg_type || a[i].name_id != b[i].name_id ||
				  a[i].ticks != b[i].ticks || a[i].value != b[i].value ||
				  f64_bits(a[i].f64) != f64_bits(b[i].f64);
		CHECK_EQ_I(differ, 0);
		errors += rc1 < 0;
		decode_close(&r1);
		decode_close(&r2);
		tb_free(&t);
	}
	/* both kinds of ending, and many events through the fast decoder */
	CHECK(errors > 50 && errors < 300);
	CHECK(fast_events > 20000);
	free(bytes);
	free(a);
	free(b);
}

TEST(summarize_file)
{
	struct tb b;
	tb_sample(&b, 0);
	char path[] = "/tmp/opscope_test_decode_XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	REQUIRE(tb_write(&b, path) == 0);
	struct decode_summary s;
	CHECK_EQ_I(decode_summarize(path, &s), 0);
	CHECK_EQ_U(s.events, 20);
	CHECK_EQ_U(s.dropped, 5);
	CHECK_EQ_U(s.threads, 2);
	CHECK_EQ_U(s.pid, 100);
	CHECK(s.complete);
	tb_free(&b);
	tb_sample(&b, TB_SAMPLE_NO_END);
	REQUIRE(tb_write(&b, path) == 0);
	CHECK_EQ_I(decode_summarize(path, &s), 0);
	CHECK_EQ_U(s.events, 20);
	CHECK(!s.complete);
	/* without END, what was lost is counted as the loader counts it (the drop marks of a
	 * track without a DROPS record): record's summary and every report say the same */
	struct model *m = model_new();
	REQUIRE(m);
	char err[256];
	CHECK_EQ_I(opscope_load_file(m, path, err, sizeof(err)), 0);
	CHECK_EQ_U(s.dropped, m->files[0].dropped);
	CHECK_EQ_U(s.dropped, 5);
	model_free(m);
	unlink(path);
	CHECK_EQ_I(decode_summarize(path, &s), OPSCOPE_EOPEN);
	tb_free(&b);
}

/* get_upto8le against a copy of the bytes into a zeroed word (little-endian hosts), on
 * buffers of exactly n bytes, so that ASan sees any read past them. */
TEST(short_word_loads)
{
	for (size_t n = 0; n <= 9; n++) {
		uint8_t *b = malloc(n ? n : 1);
		REQUIRE(b);
		for (size_t i = 0; i < n; i++)
			b[i] = (uint8_t)(0xA1 + 17 * i);
		uint64_t want = 0;
		for (size_t i = 0; i < n && i < 8; i++)
			want |= (uint64_t)b[i] << (8 * i);
		CHECK(get_upto8le(b, n) == want);
		free(b);
	}
}

TEST_MAIN(sample_records_and_events, truncated_at_every_byte, corrupt_crc_ends_valid_data,
	  bad_headers, longer_header, huge_sizes, unknown_records, compressed_records,
	  malformed_events, fast_decoder_agrees, summarize_file, short_word_loads)
