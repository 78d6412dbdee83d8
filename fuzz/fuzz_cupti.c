/*
 * fuzz_cupti.c: the CUPTI collector's record decoding (src/collect/cupti/cupti_decode.c) on
 * arbitrary bytes taken as a CUPTI activity buffer: records are walked the way the collector
 * walks a real buffer (each at the next 8-byte boundary after the previous one's layout):
 * every kind, unknown kinds, a record cut short at the end. The name pointers of a real
 * buffer are CUPTI's, so here they are never read (kernel names go to an intern that ignores
 * them, device names are zeroed). What must hold: no read past the buffer, and every entry
 * made has a known kind and end >= start.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "collect/cupti/cupti_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t f_intern(const char *s)
{
	return s ? 1 : 0; /* the pointer is fuzz input: never read */
}

static uint32_t f_api(int driver, uint32_t cbid)
{
	return (uint32_t)driver + cbid;
}

static void f_device(uint32_t id, const char *key, const char *value)
{
	(void)id;
	(void)key;
	(void)value;
}

static size_t layout(uint32_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	default:
		return 8;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the first byte picks the clock: identity, or a mapping with that slope */
	if (size < 1)
		return 0;
	struct cupti_clock clk = { data[0] & 1, 1000, 5, (double)(data[0] >> 1) / 16.0 };
	data++;
	size--;
	/* device names are read by the decoder: keep them out of fuzz reach by zeroing the
	 * pointer fields of DEVICE records in a copy (kernel names go to f_intern, unread) */
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	static const struct cupti_decode_ops ops = { f_intern, f_api, f_device };
	size_t at = 0;
	while (at + 4 <= size) {
		uint32_t kind;
		memcpy(&kind, buf + at, 4);
		size_t n = layout(kind);
		if (kind == CUPTI_ACTIVITY_KIND_DEVICE && at + n <= size)
			memset(buf + at + offsetof(CUpti_ActivityDevice5, name), 0, sizeof(char *));
		struct ops_gpu_entry e;
		int rc = cupti_decode(buf + at, size - at, &clk, &ops, &e);
		if (rc < 0)
			break;
		if (rc == 1 && (e.kind < OPS_GPU_KERNEL || e.kind > OPS_GPU_KIND_LAST ||
				e.end_ticks < e.start_ticks))
			abort();
		at += (n + 7) & ~(size_t)7;
	}
	free(buf);
	return 0;
}
