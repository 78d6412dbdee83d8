/*
 * fake_cupti.h: the control API of the fake libcupti (a TEST DOUBLE, tests/doubles/), with
 * which a fake CUDA program (tests/programs/cuda_fake_app.c) makes the "GPU work" whose
 * activity records the fake hands to the subscribed collector. The programs find these
 * functions with dlsym in the library named by OPSCOPE_CUPTI_LIB, the same one the collector
 * loads, so both talk to one fake.
 *
 * Times: host-side records (API calls) take the fake's clock at entry and exit (the
 * collector's timestamp callback when registered, else CLOCK_REALTIME ns); device work starts
 * when its stream is free and at least `gap` after its launch, and lasts `dur` units of the
 * same clock.
 */
#ifndef OPSCOPE_TESTS_FAKE_CUPTI_H
#define OPSCOPE_TESTS_FAKE_CUPTI_H

#include <stdint.h>

struct fakecupti_stats {
	uint64_t records;	   /* records written into buffers */
	uint64_t dropped;	   /* records dropped (no buffer, or one too small) */
	uint64_t buffers;	   /* buffers completed (handed to the collector) */
	uint64_t out_of_order;	   /* buffers completed before an older one */
	uint64_t on_worker;	   /* buffers completed on the fake's own thread */
	uint64_t names_poisoned;   /* kernel names freed after their buffer's completion */
	uint64_t complete_ns;	   /* FAKECUPTI_BENCH=1: wall time in the completion callback */
	uint64_t complete_cpu_ns;  /* FAKECUPTI_BENCH=1: CPU time of its thread in it */
	uint64_t complete_records; /* FAKECUPTI_BENCH=1: records handed to it */
};

typedef uint32_t (*fakecupti_kernel_fn)(const char *name, uint32_t device, uint32_t stream,
					uint64_t dur, const uint32_t grid[3],
					const uint32_t block[3], uint16_t regs, int32_t shared);
typedef uint32_t (*fakecupti_memcpy_fn)(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind,
					uint64_t bytes, uint32_t device, uint32_t stream,
					uint64_t dur);
typedef uint32_t (*fakecupti_memcpy_peer_fn)(uint32_t src_device, uint32_t dst_device,
					     uint64_t bytes, uint32_t stream, uint64_t dur);
typedef uint32_t (*fakecupti_memset_fn)(uint64_t bytes, uint32_t value, uint32_t device,
					uint32_t stream, uint64_t dur);
typedef uint32_t (*fakecupti_sync_fn)(uint32_t type, uint32_t device, uint32_t stream,
				      uint64_t dur);
typedef uint32_t (*fakecupti_memory_fn)(int release, uint32_t device, uint64_t address,
					uint64_t bytes);
typedef void (*fakecupti_overhead_fn)(uint64_t dur);
typedef void (*fakecupti_device_fn)(uint32_t id, const char *name, uint32_t sms, uint32_t cc_major,
				    uint32_t cc_minor, uint64_t memory);
typedef void (*fakecupti_set_fn)(int value);
typedef void (*fakecupti_stats_fn)(struct fakecupti_stats *out);
/* fakecupti_drain: wait until the fake's worker has delivered what it will deliver by itself
 * (fewer than two buffers left waiting), so that the stats of a loaded machine are those of an
 * idle one. Delivers nothing itself. */
typedef void (*fakecupti_drain_fn)(void);

#endif
