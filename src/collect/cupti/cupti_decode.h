/*
 * cupti_decode.h: CUPTI activity records (CUDA 13 layouts, cupti_activity.h) to the trace's
 * GPU entries (trace/format.h, struct ops_gpu_entry). Kept apart from the collector's
 * plumbing (cupti.c) so that the unit tests and the fuzzer drive it with records built from
 * the same headers, without a CUPTI library.
 */
#ifndef OPSCOPE_COLLECT_CUPTI_DECODE_H
#define OPSCOPE_COLLECT_CUPTI_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"

/* How CUPTI's timestamps become ticks of the event clock: with the timestamp callback
 * registered they already are (identity); else CUPTI's clock (CLOCK_REALTIME ns) is mapped
 * through one pair read at start: ticks = ticks0 + (ns - ns0) * ticks_per_ns. */
struct cupti_clock {
	int identity;
	uint64_t ns0, ticks0;
	double ticks_per_ns;
};
uint64_t cupti_ticks(const struct cupti_clock *c, uint64_t ts);

/* What decoding needs from the outside: interning of names (copied: CUPTI frees them after
 * the completion callback), the name of an API callback id, and where device properties go. */
struct cupti_decode_ops {
	uint32_t (*intern)(const char *s); /* NULL s: 0 */
	uint32_t (*api_name)(int driver, uint32_t cbid);
	void (*device)(uint32_t id, const char *key, const char *value);
};

/* Decode one record of `size` bytes at most (the rest of the buffer) into *out. Returns 1
 * when it made an entry, 0 for a record that makes none (device properties: handed to ops;
 * kinds not collected), -1 when the record is shorter than its kind's layout. An external
 * correlation record becomes an entry of its own (OPS_GPU_EXTERNAL): it may arrive in
 * another buffer than the call it names, so the loader pairs them. */
int cupti_decode(const void *record, size_t size, const struct cupti_clock *clk,
		 const struct cupti_decode_ops *ops, struct ops_gpu_entry *out);

#endif
