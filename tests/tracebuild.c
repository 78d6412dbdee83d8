/*
 * tracebuild.c: the test trace writer (tracebuild.h) and the sample trace.
 *
 * Invariant: every record written is framed and checksummed exactly as format.h says, so a
 * test that wants a damaged file damages tb.out.data itself afterwards.
 */
#include "tracebuild.h"

#include <stdio.h>
#include <string.h>

#include "opscope/opscope.h"

#include "opscope_config.h"
#include "util/bytes.h"
#include "util/crc32c.h"

#if OPSCOPE_HAVE_ZSTD
#include <zstd.h>
#endif

static void tb_header(struct tb *b, uint32_t pid, uint16_t version)
{
	memset(b, 0, sizeof(*b));
	buf_init(&b->out);
	buf_init(&b->ev);
	b->next_id = 1;
	b->v2 = version >= 2;
	uint8_t h[64] = { 0 };
	memcpy(h, OPS_MAGIC, OPS_MAGIC_BYTES);
	put_u16le(h + 8, version);
	put_u16le(h + 10, version);
	put_u32le(h + 12, 64);
	put_u64le(h + 24, 1700000000000000000ull); /* 2023-11-14 22:13:20 UTC */
	put_u32le(h + 32, pid);
	buf_append(&b->out, h, sizeof(h));
}

void tb_init(struct tb *b, uint32_t pid)
{
	tb_header(b, pid, 1);
}

void tb_init_v2(struct tb *b, uint32_t pid)
{
	tb_header(b, pid, 2);
}

void tb_free(struct tb *b)
{
	buf_free(&b->out);
	buf_free(&b->ev);
	for (int i = 0; i < 4; i++)
		buf_free(&b->s[i]);
}

void tb_record(struct tb *b, uint16_t type, uint16_t flags, const void *payload, size_t len)
{
	const void *data = payload;
	size_t stored = len;
	struct buf z;
	buf_init(&z);
#if OPSCOPE_HAVE_ZSTD
	if (flags & OPS_RECF_ZSTD) {
		size_t bound = ZSTD_compressBound(len);
		uint8_t *dst = buf_reserve(&z, bound);
		size_t n = ZSTD_compress(dst, bound, payload, len, 1);
		if (!ZSTD_isError(n)) {
			data = dst;
			stored = n;
		}
	}
#else
	flags &= (uint16_t)~OPS_RECF_ZSTD;
#endif
	uint8_t h[16];
	put_u16le(h, type);
	put_u16le(h + 2, flags);
	put_u32le(h + 4, (uint32_t)stored);
	put_u32le(h + 8, (uint32_t)len);
	put_u32le(h + 12, crc32c(0, data, stored));
	buf_append(&b->out, h, sizeof(h));
	buf_append(&b->out, data, stored);
	buf_free(&z);
}

void tb_clock(struct tb *b, uint64_t ticks, uint64_t mono_ns, uint64_t real_ns, uint64_t tps)
{
	uint8_t p[32];
	put_u64le(p, ticks);
	put_u64le(p + 8, mono_ns);
	put_u64le(p + 16, real_ns);
	put_u64le(p + 24, tps);
	tb_record(b, OPS_REC_CLOCK, 0, p, sizeof(p));
}

void tb_clock_identity(struct tb *b)
{
	tb_clock(b, 1000, 1000, 1700000000000000000ull, 1000000000ull);
}

uint32_t tb_strn(struct tb *b, const char *s, size_t len)
{
	struct buf p;
	buf_init(&p);
	uint32_t id = b->next_id++;
	buf_u32(&p, id);
	buf_u32(&p, 1);
	buf_str(&p, s, len);
	tb_record(b, OPS_REC_STRINGS, 0, p.data, p.len);
	buf_free(&p);
	return id;
}

uint32_t tb_str(struct tb *b, const char *s)
{
	return tb_strn(b, s, strlen(s));
}

void tb_meta(struct tb *b, const char *key, const char *value)
{
	struct buf p;
	buf_init(&p);
	buf_u32(&p, 1);
	buf_str(&p, key, strlen(key));
	buf_str(&p, value, strlen(value));
	tb_record(b, OPS_REC_METADATA, 0, p.data, p.len);
	buf_free(&p);
}

void tb_thread(struct tb *b, uint32_t track, uint32_t pid, uint64_t tid, uint32_t name_id,
	       uint32_t flags)
{
	uint8_t p[24];
	put_u32le(p, track);
	put_u32le(p + 4, pid);
	put_u64le(p + 8, tid);
	put_u32le(p + 16, name_id);
	put_u32le(p + 20, flags);
	tb_record(b, OPS_REC_THREAD, 0, p, sizeof(p));
}

void tb_drops(struct tb *b, uint32_t track, uint64_t dropped)
{
	uint8_t p[16] = { 0 };
	put_u32le(p, track);
	put_u64le(p + 8, dropped);
	tb_record(b, OPS_REC_DROPS, 0, p, sizeof(p));
}

void tb_timer(struct tb *b, uint32_t name_id, uint64_t count, uint64_t total_ns, uint64_t max_ns,
	      uint64_t min_ns)
{
	uint8_t p[44] = { 0 };
	put_u32le(p, 1);
	put_u32le(p + 4, name_id);
	put_u64le(p + 12, count);
	put_u64le(p + 20, total_ns);
	put_u64le(p + 28, max_ns);
	put_u64le(p + 36, min_ns);
	tb_record(b, OPS_REC_TIMERS, 0, p, sizeof(p));
}

void tb_end(struct tb *b, uint64_t written, uint64_t dropped, uint64_t stop_ticks, uint32_t tracks)
{
	uint8_t p[32] = { 0 };
	put_u64le(p, written);
	put_u64le(p + 8, dropped);
	put_u64le(p + 16, stop_ticks);
	put_u32le(p + 24, tracks);
	tb_record(b, OPS_REC_END, 0, p, sizeof(p));
}

void tb_events_begin(struct tb *b, uint32_t track, uint64_t first_ticks)
{
	buf_clear(&b->ev);
	buf_u32(&b->ev, track);
	buf_u32(&b->ev, 0);
	buf_u64(&b->ev, first_ticks);
	for (int i = 0; i < 4 && b->v2; i++) {
		buf_u32(&b->ev, 0); /* stream sizes, set by tb_events_end */
		buf_clear(&b->s[i]);
	}
	b->ev_count = 0;
	b->ev_prev = first_ticks;
}

void tb_events_end(struct tb *b)
{
	put_u32le(b->ev.data + 4, b->ev_count);
	uint16_t flags = b->compress ? OPS_RECF_ZSTD : 0;
	if (!b->v2) {
		tb_record(b, OPS_REC_EVENTS, flags, b->ev.data, b->ev.len);
		return;
	}
	for (int i = 0; i < 4; i++) {
		put_u32le(b->ev.data + 16 + 4 * i, (uint32_t)b->s[i].len);
		buf_append(&b->ev, b->s[i].data, b->s[i].len);
	}
	tb_record(b, OPS_REC_EVENTS2, flags | OPS_RECF_CRITICAL, b->ev.data, b->ev.len);
}

/* An EVENTS2 event: the tag, then `time` in the narrowest of 1, 2, 4, 8 bytes, the id in
 * 0, 1, 2 or 4, `byte` when >= 0 and `value` (8 bytes) when has_value. */
static void tb_ev2(struct tb *b, uint8_t kind, uint64_t time, uint32_t id, int byte, int has_value,
		   uint64_t value)
{
	unsigned tc = time < 0x100 ? 0 : time < 0x10000 ? 1 : time < 0x100000000ull ? 2 : 3;
	unsigned ic = id == 0 ? 0 : id < 0x100 ? 1 : id < 0x10000 ? 2 : 3;
	uint8_t le[8];
	put_u64le(le, time);
	buf_append(&b->s[0], le, (size_t)1 << tc);
	put_u32le(le, id);
	buf_append(&b->s[1], le, ic ? (size_t)1 << (ic - 1) : 0);
	if (byte >= 0)
		buf_u8(&b->s[2], (uint8_t)byte);
	if (has_value)
		buf_u64(&b->s[3], value);
	buf_u8(&b->ev, (uint8_t)(kind | tc << 4 | ic << 6));
	b->ev_count++;
}

/* An EVENTS2 event with a time: its dt from the previous one. */
static void tb_timed2(struct tb *b, uint8_t kind, uint64_t ticks, uint32_t id, int byte,
		      int has_value, uint64_t value)
{
	tb_ev2(b, kind, ticks - b->ev_prev, id, byte, has_value, value);
	b->ev_prev = ticks;
}

static void tb_timed(struct tb *b, uint8_t kind, uint64_t ticks)
{
	buf_u8(&b->ev, kind);
	buf_varint(&b->ev, ticks - b->ev_prev);
	b->ev_prev = ticks;
	b->ev_count++;
}

void tb_ev_begin(struct tb *b, uint64_t ticks, uint8_t cat, uint32_t name)
{
	if (b->v2) {
		tb_timed2(b, OPS_EV_BEGIN, ticks, name, cat, 0, 0);
		return;
	}
	tb_timed(b, OPS_EV_BEGIN, ticks);
	buf_u8(&b->ev, cat);
	buf_varint(&b->ev, name);
}

void tb_ev_end(struct tb *b, uint64_t ticks, uint32_t name)
{
	if (b->v2) {
		tb_timed2(b, OPS_EV_END, ticks, name, -1, 0, 0);
		return;
	}
	tb_timed(b, OPS_EV_END, ticks);
	buf_varint(&b->ev, name);
}

void tb_ev_instant(struct tb *b, uint64_t ticks, uint8_t cat, uint32_t name)
{
	if (b->v2) {
		tb_timed2(b, OPS_EV_INSTANT, ticks, name, cat, 0, 0);
		return;
	}
	tb_timed(b, OPS_EV_INSTANT, ticks);
	buf_u8(&b->ev, cat);
	buf_varint(&b->ev, name);
}

void tb_ev_counter(struct tb *b, uint64_t ticks, uint32_t name, double value)
{
	if (b->v2) {
		tb_timed2(b, OPS_EV_COUNTER, ticks, name, -1, 1, f64_bits(value));
		return;
	}
	tb_timed(b, OPS_EV_COUNTER, ticks);
	buf_varint(&b->ev, name);
	buf_u64(&b->ev, f64_bits(value));
}

static void tb_arg(struct tb *b, uint32_t key, uint8_t type)
{
	buf_u8(&b->ev, OPS_EV_ARG);
	buf_varint(&b->ev, key);
	buf_u8(&b->ev, type);
	b->ev_count++;
}

void tb_ev_arg_i64(struct tb *b, uint32_t key, int64_t v)
{
	if (b->v2) {
		tb_ev2(b, OPS_EV_ARG, zigzag_encode(v), key, OPS_ARG_I64, 0, 0);
		return;
	}
	tb_arg(b, key, OPS_ARG_I64);
	buf_varint(&b->ev, zigzag_encode(v));
}

void tb_ev_arg_u64(struct tb *b, uint32_t key, uint64_t v)
{
	if (b->v2) {
		tb_ev2(b, OPS_EV_ARG, v, key, OPS_ARG_U64, 0, 0);
		return;
	}
	tb_arg(b, key, OPS_ARG_U64);
	buf_varint(&b->ev, v);
}

void tb_ev_arg_f64(struct tb *b, uint32_t key, double v)
{
	if (b->v2) {
		tb_ev2(b, OPS_EV_ARG, f64_bits(v), key, OPS_ARG_F64, 0, 0);
		return;
	}
	tb_arg(b, key, OPS_ARG_F64);
	buf_u64(&b->ev, f64_bits(v));
}

void tb_ev_arg_str(struct tb *b, uint32_t key, uint32_t str_id)
{
	if (b->v2) {
		tb_ev2(b, OPS_EV_ARG, str_id, key, OPS_ARG_STR, 0, 0);
		return;
	}
	tb_arg(b, key, OPS_ARG_STR);
	buf_varint(&b->ev, str_id);
}

void tb_ev_flow(struct tb *b, uint64_t ticks, int out, uint64_t id)
{
	if (b->v2) {
		tb_timed2(b, out ? OPS_EV_FLOW_OUT : OPS_EV_FLOW_IN, ticks, 0, -1, 1, id);
		return;
	}
	tb_timed(b, out ? OPS_EV_FLOW_OUT : OPS_EV_FLOW_IN, ticks);
	buf_varint(&b->ev, id);
}

void tb_ev_async_begin(struct tb *b, uint64_t ticks, uint8_t cat, uint32_t name, uint64_t id)
{
	if (b->v2) {
		tb_timed2(b, OPS_EV_ASYNC_BEGIN, ticks, name, cat, 1, id);
		return;
	}
	tb_timed(b, OPS_EV_ASYNC_BEGIN, ticks);
	buf_u8(&b->ev, cat);
	buf_varint(&b->ev, name);
	buf_varint(&b->ev, id);
}

void tb_ev_async_end(struct tb *b, uint64_t ticks, uint64_t id)
{
	if (b->v2) {
		tb_timed2(b, OPS_EV_ASYNC_END, ticks, 0, -1, 1, id);
		return;
	}
	tb_timed(b, OPS_EV_ASYNC_END, ticks);
	buf_varint(&b->ev, id);
}

void tb_ev_drop_mark(struct tb *b, uint64_t ticks, uint64_t count)
{
	if (b->v2) {
		tb_timed2(b, OPS_EV_DROP_MARK, ticks, 0, -1, 1, count);
		return;
	}
	tb_timed(b, OPS_EV_DROP_MARK, ticks);
	buf_varint(&b->ev, count);
}

void tb_ev_raw(struct tb *b, const void *bytes, size_t n, uint32_t events)
{
	buf_append(&b->ev, bytes, n);
	b->ev_count += events;
}

/*
 * The sample: process 100 ("train", rank 0), ticks == ns.
 *   track 0 "main" (tid 100, main thread):
 *     ProfileStep "step" [1000, 2000) > Forward "forward" [1100, 1500) {lr=0.5}
 *       > Operator "conv2d" [1200, 1300) {shape="[1,3,224,224]" count=-3 idx=7}, flow 42 out
 *         at 1250; instant UserDefined "q \"d\"\n\x01bad\xff" at 1400; counter "mem" 1024.5
 *         at 1450; async Nvtx "nvtx range" id 9 begins at 1550
 *   track 1 "worker" (tid 101):
 *     Operator "conv2d" [1260, 1600) with flow 42 in at 1270, drop mark of 5 at 1290,
 *     async 9 ends at 1700, Dataloader "load" begins at 1800 and never ends
 *   DROPS track 1 = 5; TIMERS "step" x3; END: 20 events, 5 dropped, stop at 2500.
 * Without TB_SAMPLE_NO_END the unclosed "load" is closed at 2500; with it at 1800.
 */
void tb_sample(struct tb *b, int flags)
{
	if (flags & TB_SAMPLE_V2)
		tb_init_v2(b, 100);
	else
		tb_init(b, 100);
	b->compress = (flags & TB_SAMPLE_ZSTD) != 0;
#if OPSCOPE_HAVE_ZSTD
	if (b->compress)
		put_u64le(b->out.data + 16, OPS_FEAT_ZSTD);
#endif
	tb_clock_identity(b);
	tb_meta(b, "program", "train");
	tb_meta(b, "rank", "0");
	uint32_t s_main = tb_str(b, "main"), s_worker = tb_str(b, "worker");
	uint32_t s_step = tb_str(b, "step"), s_fwd = tb_str(b, "forward");
	uint32_t s_conv = tb_str(b, "conv2d"), s_shape = tb_str(b, "shape");
	uint32_t s_dims = tb_str(b, "[1,3,224,224]");
	uint32_t s_odd = tb_str(b, "q \"d\"\n\x01"
				   "bad\xff");
	uint32_t s_mem = tb_str(b, "mem"), s_nvtx = tb_str(b, "nvtx range");
	uint32_t s_lr = tb_str(b, "lr"), s_count = tb_str(b, "count"), s_idx = tb_str(b, "idx");
	uint32_t s_load = tb_str(b, "load");
	tb_thread(b, 0, 100, 100, s_main, OPS_THREADF_MAIN);
	tb_thread(b, 1, 100, 101, s_worker, 0);

	tb_events_begin(b, 0, 1000);
	tb_ev_begin(b, 1000, OPSCOPE_CAT_PROFILE_STEP, s_step);
	tb_ev_begin(b, 1100, OPSCOPE_CAT_FORWARD, s_fwd);
	tb_ev_arg_f64(b, s_lr, 0.5);
	tb_ev_begin(b, 1200, OPSCOPE_CAT_OPERATOR, s_conv);
	tb_ev_arg_str(b, s_shape, s_dims);
	tb_ev_arg_i64(b, s_count, -3);
	tb_ev_arg_u64(b, s_idx, 7);
	tb_ev_flow(b, 1250, 1, 42);
	tb_ev_end(b, 1300, 0);
	tb_ev_instant(b, 1400, OPSCOPE_CAT_USER_DEFINED, s_odd);
	tb_ev_counter(b, 1450, s_mem, 1024.5);
	tb_ev_end(b, 1500, 0);
	tb_ev_async_begin(b, 1550, OPSCOPE_CAT_NVTX, s_nvtx, 9);
	tb_ev_end(b, 2000, 0);
	tb_events_end(b);

	tb_events_begin(b, 1, 1000);
	tb_ev_begin(b, 1260, OPSCOPE_CAT_OPERATOR, s_conv);
	tb_ev_flow(b, 1270, 0, 42);
	tb_ev_drop_mark(b, 1290, 5);
	tb_ev_end(b, 1600, 0);
	tb_ev_async_end(b, 1700, 9);
	tb_ev_begin(b, 1800, OPSCOPE_CAT_DATALOADER, s_load);
	tb_events_end(b);

	if (!(flags & TB_SAMPLE_NO_END)) {
		tb_drops(b, 1, 5);
		tb_timer(b, s_step, 3, 3000, 1500, 500);
		tb_end(b, 20, 5, 2500, 2);
	}
}

static void tb_table_head(struct buf *p, uint32_t first_id, uint32_t n, uint32_t entry_bytes)
{
	buf_u32(p, first_id);
	buf_u32(p, n);
	buf_u32(p, entry_bytes);
	buf_u32(p, 0);
}

/* Pad (or cut) the entry just appended from `at` to `entry_bytes`. */
static void tb_entry_size(struct buf *p, size_t at, uint32_t entry_bytes)
{
	while (p->len - at < entry_bytes)
		buf_u8(p, 0);
	p->len = at + entry_bytes;
}

void tb_mappings(struct tb *b, uint32_t first_id, const struct ops_mapping_entry *e, uint32_t n,
		 uint32_t entry_bytes)
{
	entry_bytes = entry_bytes ? entry_bytes : sizeof(*e);
	struct buf p;
	buf_init(&p);
	tb_table_head(&p, first_id, n, entry_bytes);
	for (uint32_t i = 0; i < n; i++) {
		size_t at = p.len;
		buf_u64(&p, e[i].start);
		buf_u64(&p, e[i].end);
		buf_u64(&p, e[i].file_offset);
		buf_u32(&p, e[i].path_id);
		buf_u32(&p, e[i].build_id);
		tb_entry_size(&p, at, entry_bytes);
	}
	tb_record(b, OPS_REC_MAPPINGS, OPS_RECF_CRITICAL, p.data, p.len);
	buf_free(&p);
}

void tb_frames(struct tb *b, uint32_t first_id, const struct ops_frame_entry *e, uint32_t n,
	       uint32_t entry_bytes)
{
	entry_bytes = entry_bytes ? entry_bytes : sizeof(*e);
	struct buf p;
	buf_init(&p);
	tb_table_head(&p, first_id, n, entry_bytes);
	for (uint32_t i = 0; i < n; i++) {
		size_t at = p.len;
		buf_u32(&p, e[i].kind);
		buf_u32(&p, e[i].mapping);
		buf_u64(&p, e[i].address);
		buf_u32(&p, e[i].name_id);
		buf_u32(&p, e[i].file_id);
		buf_u32(&p, (uint32_t)e[i].line);
		buf_u32(&p, e[i].reserved);
		tb_entry_size(&p, at, entry_bytes);
	}
	tb_record(b, OPS_REC_FRAMES, OPS_RECF_CRITICAL, p.data, p.len);
	buf_free(&p);
}

void tb_stacks(struct tb *b, uint32_t first_id, const struct ops_stack_entry *e, uint32_t n,
	       uint32_t entry_bytes)
{
	entry_bytes = entry_bytes ? entry_bytes : sizeof(*e);
	struct buf p;
	buf_init(&p);
	tb_table_head(&p, first_id, n, entry_bytes);
	for (uint32_t i = 0; i < n; i++) {
		size_t at = p.len;
		buf_u32(&p, e[i].parent);
		buf_u32(&p, e[i].frame);
		tb_entry_size(&p, at, entry_bytes);
	}
	tb_record(b, OPS_REC_STACKS, OPS_RECF_CRITICAL, p.data, p.len);
	buf_free(&p);
}

void tb_samples(struct tb *b, const struct ops_sample_entry *e, uint32_t n, uint32_t entry_bytes)
{
	entry_bytes = entry_bytes ? entry_bytes : sizeof(*e);
	struct buf p;
	buf_init(&p);
	tb_table_head(&p, 0, n, entry_bytes);
	for (uint32_t i = 0; i < n; i++) {
		size_t at = p.len;
		buf_u32(&p, e[i].track);
		buf_u32(&p, e[i].stack);
		buf_u64(&p, e[i].ticks);
		buf_u64(&p, (uint64_t)e[i].weight);
		buf_u32(&p, e[i].flags);
		buf_u32(&p, e[i].reserved);
		tb_entry_size(&p, at, entry_bytes);
	}
	tb_record(b, OPS_REC_SAMPLES, OPS_RECF_CRITICAL, p.data, p.len);
	buf_free(&p);
}

/*
 * The stack samples trace (format version 3, min reader 3), ticks are ns:
 *   track 0 "main" (tid 100): Operator "aten::conv2d" [1000, 2000), Operator "aten::relu"
 *     [3000, 4000); track 1 "worker" (tid 101): no ranges.
 *   mapping 0: /usr/lib/libtorch.so [0x10000, 0x20000) at file offset 0x1000, build-id "ab12";
 *   frames: 0 Python main (train.py:3), 1 native 0x10100 (libtorch.so+0x1100),
 *     2 native 0x10200 (+0x1200), 3 native "gemm" (symbolized) at 0x10300, 4 native 0x999
 *     in no mapping ("0x999");
 *   stacks (outermost first): 0 main, 1 main;1100, 2 main;1100;1200, 3 main;1100;1200;gemm,
 *     4 main;1100;1100 (recursion), 5 0x999;
 *   samples track 0: 1100..1190 step 10: 6 x stack 3, 4 x stack 2 (under conv2d);
 *     3010, 3020: stack 4 (under relu); 5000: stack 1 truncated; 5010: no stack;
 *   samples track 1: 1500 stack 3 weight 5, 1600 stack 5.
 */
void tb_stacks_trace(struct tb *b, enum tb_stacks_defect defect)
{
	tb_header(b, 7, 3);
	if (defect == TB_STACKS_V2_HEADER)
		put_u16le(b->out.data + 8, 2), put_u16le(b->out.data + 10, 2);
	tb_clock_identity(b);
	uint32_t s_main = tb_str(b, "main"), s_worker = tb_str(b, "worker");
	uint32_t s_conv = tb_str(b, "aten::conv2d"), s_relu = tb_str(b, "aten::relu");
	uint32_t s_lib = tb_str(b, "/usr/lib/libtorch.so"), s_bid = tb_str(b, "ab12");
	uint32_t s_py = tb_str(b, "train.py"), s_gemm = tb_str(b, "gemm");
	tb_thread(b, 0, 7, 100, s_main, OPS_THREADF_MAIN);
	tb_thread(b, 1, 7, 101, s_worker, 0);
	tb_events_begin(b, 0, 1000);
	tb_ev_begin(b, 1000, OPSCOPE_CAT_OPERATOR, s_conv);
	tb_ev_end(b, 2000, 0);
	tb_ev_begin(b, 3000, OPSCOPE_CAT_OPERATOR, s_relu);
	tb_ev_end(b, 4000, 0);
	tb_events_end(b);

	struct ops_mapping_entry map = { 0x10000, 0x20000, 0x1000, s_lib, s_bid };
	tb_mappings(b, 0, &map, 1, defect == TB_STACKS_SHORT_ENTRIES ? 24 : 0);
	struct ops_frame_entry fr[5] = {
		{ OPS_FRAME_PYTHON, OPS_NO_ID, 0, s_main, s_py, 3, 0 },
		{ OPS_FRAME_NATIVE, 0, 0x10100, 0, 0, 0, 0 },
		{ OPS_FRAME_NATIVE, defect == TB_STACKS_BAD_MAPPING ? 1 : 0, 0x10200, 0, 0, 0, 0 },
		{ OPS_FRAME_NATIVE, 0, 0x10300, s_gemm, 0, 0, 0 },
		{ OPS_FRAME_NATIVE, OPS_NO_ID, 0x999, 0, 0, 0, 0 },
	};
	tb_frames(b, 0, fr, 2, 0);
	tb_frames(b, defect == TB_STACKS_GAP_IDS ? 3 : 2, fr + 2, 3, 0);
	struct ops_stack_entry st[6] = {
		{ OPS_NO_ID, 0 },
		{ 0, 1 },
		{ 1, 2 },
		{ defect == TB_STACKS_BAD_PARENT ? 3 : 2, 3 },
		{ 1, defect == TB_STACKS_BAD_FRAME ? 5 : 1 },
		{ OPS_NO_ID, 4 },
	};
	tb_stacks(b, 0, st, 6, 0);
	struct ops_sample_entry sa[18];
	uint32_t n = 0;
	for (uint32_t i = 0; i < 10; i++)
		sa[n++] = (struct ops_sample_entry){ 0, i < 6 ? 3 : 2, 1100 + 10 * i, 1, 0, 0 };
	sa[n++] = (struct ops_sample_entry){ 0, 4, 3010, 1, 0, 0 };
	sa[n++] = (struct ops_sample_entry){ 0, 4, 3020, 1, 0, 0 };
	sa[n++] = (struct ops_sample_entry){ 0, 1, 5000, 1, OPS_SAMPLEF_TRUNCATED, 0 };
	sa[n++] = (struct ops_sample_entry){ 0, OPS_NO_ID, 5010, 1, 0, 0 };
	sa[n++] = (struct ops_sample_entry){
		1, defect == TB_STACKS_BAD_STACK ? 6 : 3, 1500, 5, 0, 0
	};
	sa[n++] = (struct ops_sample_entry){ 1, 5, 1600, 1, 0, 0 };
	if (defect == TB_STACKS_CUT_TABLE) {
		/* count says n, the payload holds one byte less */
		struct tb t;
		memset(&t, 0, sizeof(t));
		buf_init(&t.out);
		tb_samples(&t, sa, n, 0);
		/* t.out: record header (16) + payload; rebuild with one byte fewer */
		tb_record(b, OPS_REC_SAMPLES, OPS_RECF_CRITICAL, t.out.data + 16, t.out.len - 17);
		buf_free(&t.out);
	} else {
		tb_samples(b, sa, n, 0);
	}
	tb_end(b, 4, 0, 6000, 2);
}

int tb_write(const struct tb *b, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t n = fwrite(b->out.data, 1, b->out.len, f);
	if (fclose(f) != 0 || n != b->out.len)
		return -1;
	return 0;
}
