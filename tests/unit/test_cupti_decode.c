/*
 * test_cupti_decode.c: the CUPTI collector's record decoding (src/collect/cupti/
 * cupti_decode.c) on records built with the toolkit's CUDA 13 layouts, one per kind the
 * collector enables: every field that reaches the trace, the names copied (the source is
 * overwritten right after, as CUPTI frees it), the clock mapping, short records refused, and
 * the GPU entry's on-disk bytes read back. Skipped (77) where cupti.h was not found.
 */
#include "harness.h"

#if OPSCOPE_HAVE_CUPTI

#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "collect/cupti/cupti_decode.h"
#include "trace/decode.h"

/* Interning for the tests: a copy per distinct string, its index + 1 as the id. */
static char *names[64];
static uint32_t nnames;

static uint32_t t_intern(const char *s)
{
	if (!s)
		return 0;
	for (uint32_t i = 0; i < nnames; i++)
		if (strcmp(names[i], s) == 0)
			return i + 1;
	names[nnames] = strdup(s);
	return ++nnames;
}

static uint32_t api_driver, api_cbid;

static uint32_t t_api(int driver, uint32_t cbid)
{
	api_driver = (uint32_t)driver;
	api_cbid = cbid;
	return 1000 + cbid;
}

static char dev_keys[512];

static void t_device(uint32_t id, const char *key, const char *value)
{
	size_t n = strlen(dev_keys);
	snprintf(dev_keys + n, sizeof(dev_keys) - n, "%u.%s=%s;", id, key, value);
}

static const struct cupti_decode_ops ops = { t_intern, t_api, t_device };
static const struct cupti_clock same = { 1, 0, 0, 0 };

TEST(kernel)
{
	char name[] = "volta_sgemm_128x64_nn";
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000;
	k.end = 3500;
	k.deviceId = 1;
	k.contextId = 2;
	k.streamId = 7;
	k.correlationId = 42;
	k.gridX = 64;
	k.gridY = 2;
	k.gridZ = 1;
	k.blockX = 256;
	k.blockY = 1;
	k.blockZ = 1;
	k.registersPerThread = 32;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 3072;
	k.graphId = 9;
	k.name = name;
	struct ops_gpu_entry e;
	CHECK_EQ_I(cupti_decode(&k, sizeof(k), &same, &ops, &e), 1);
	memset(name, 'X', sizeof(name) - 1); /* CUPTI frees it after the callback */
	CHECK_EQ_U(e.kind, OPS_GPU_KERNEL);
	CHECK_EQ_U(e.start_ticks, 1000);
	CHECK_EQ_U(e.end_ticks, 3500);
	CHECK_EQ_U(e.device, 1);
	CHECK_EQ_U(e.context, 2);
	CHECK_EQ_U(e.stream, 7);
	CHECK_EQ_U(e.correlation, 42);
	CHECK_EQ_U(e.grid[0], 64);
	CHECK_EQ_U(e.grid[1], 2);
	CHECK_EQ_U(e.block[0], 256);
	CHECK_EQ_U(e.registers, 32);
	CHECK_EQ_U(e.shared, 4096);
	CHECK_EQ_U(e.graph_id, 9);
	CHECK(e.name_id > 0);
	CHECK_STR(names[e.name_id - 1], "volta_sgemm_128x64_nn");
	/* cut short: refused, nothing read past the end */
	CHECK_EQ_I(cupti_decode(&k, sizeof(k) - 1, &same, &ops, &e), -1);
	CHECK_EQ_I(cupti_decode(&k, 2, &same, &ops, &e), -1);
}

TEST(copies_and_memset)
{
	CUpti_ActivityMemcpy6 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.bytes = 4096;
	c.start = 10;
	c.end = 20;
	c.deviceId = 0;
	c.streamId = 3;
	c.correlationId = 5;
	struct ops_gpu_entry e;
	CHECK_EQ_I(cupti_decode(&c, sizeof(c), &same, &ops, &e), 1);
	CHECK_EQ_U(e.kind, OPS_GPU_MEMCPY);
	CHECK_EQ_U(e.sub, 1);
	CHECK_EQ_U(e.src_kind, 1);
	CHECK_EQ_U(e.dst_kind, 3);
	CHECK_EQ_U(e.bytes, 4096);
	CHECK_EQ_U(e.stream, 3);
	CHECK_EQ_U(e.correlation, 5);

	CUpti_ActivityMemcpyPtoP4 p;
	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p.bytes = 2048;
	p.start = 1;
	p.end = 2;
	p.srcDeviceId = 0;
	p.dstDeviceId = 1;
	p.correlationId = 6;
	CHECK_EQ_I(cupti_decode(&p, sizeof(p), &same, &ops, &e), 1);
	CHECK_EQ_U(e.kind, OPS_GPU_MEMCPY);
	CHECK_EQ_U(e.sub, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
	CHECK_EQ_U(e.grid[0], 0);
	CHECK_EQ_U(e.grid[1], 1);
	CHECK_EQ_U(e.bytes, 2048);

	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.bytes = 512;
	s.value = 0xab;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	s.start = 5;
	s.end = 9;
	s.correlationId = 7;
	CHECK_EQ_I(cupti_decode(&s, sizeof(s), &same, &ops, &e), 1);
	CHECK_EQ_U(e.kind, OPS_GPU_MEMSET);
	CHECK_EQ_U(e.bytes, 512);
	CHECK_EQ_U(e.address, 0xab);
	CHECK_EQ_U(e.src_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
}

TEST(calls_sync_memory_overhead_external)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = 307;
	a.start = 100;
	a.end = 150;
	a.threadId = 4321;
	a.correlationId = 77;
	a.returnValue = 0;
	struct ops_gpu_entry e;
	CHECK_EQ_I(cupti_decode(&a, sizeof(a), &same, &ops, &e), 1);
	CHECK_EQ_U(e.kind, OPS_GPU_DRIVER);
	CHECK_EQ_U(api_driver, 1);
	CHECK_EQ_U(api_cbid, 307);
	CHECK_EQ_U(e.name_id, 1307);
	CHECK_EQ_U(e.bytes, 4321); /* the thread */
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	CHECK_EQ_I(cupti_decode(&a, sizeof(a), &same, &ops, &e), 1);
	CHECK_EQ_U(e.kind, OPS_GPU_RUNTIME);
	CHECK_EQ_U(api_driver, 0);

	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 1;
	s.end = 4;
	s.streamId = 8;
	s.correlationId = 78;
	CHECK_EQ_I(cupti_decode(&s, sizeof(s), &same, &ops, &e), 1);
	CHECK_EQ_U(e.kind, OPS_GPU_SYNC);
	CHECK_EQ_U(e.sub, 3);
	CHECK_EQ_U(e.stream, 8);

	CUpti_ActivityMemory4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.address = 0x7f0000001000ull;
	m.bytes = 1 << 20;
	m.timestamp = 99;
	m.deviceId = 1;
	CHECK_EQ_I(cupti_decode(&m, sizeof(m), &same, &ops, &e), 1);
	CHECK_EQ_U(e.kind, OPS_GPU_MEMORY);
	CHECK_EQ_U(e.sub, 2);
	CHECK_EQ_U(e.address, 0x7f0000001000ull);
	CHECK_EQ_U(e.bytes, 1 << 20);
	CHECK_EQ_U(e.start_ticks, 99);
	CHECK_EQ_U(e.end_ticks, 99);

	CUpti_ActivityOverhead3 o;
	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.start = 10;
	o.end = 30;
	CHECK_EQ_I(cupti_decode(&o, sizeof(o), &same, &ops, &e), 1);
	CHECK_EQ_U(e.kind, OPS_GPU_OVERHEAD);
	CHECK_EQ_U(e.end_ticks - e.start_ticks, 20);

	CUpti_ActivityExternalCorrelation x;
	memset(&x, 0, sizeof(x));
	x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
	x.externalId = 123456789012ull;
	x.correlationId = 77;
	CHECK_EQ_I(cupti_decode(&x, sizeof(x), &same, &ops, &e), 1);
	CHECK_EQ_U(e.kind, OPS_GPU_EXTERNAL);
	CHECK_EQ_U(e.correlation, 77);
	CHECK_EQ_U(e.external_id, 123456789012ull);
}

TEST(device_and_unknown)
{
	char name[] = "NVIDIA H100";
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 3;
	d.name = name;
	d.numMultiprocessors = 132;
	d.computeCapabilityMajor = 9;
	d.computeCapabilityMinor = 0;
	d.globalMemorySize = 80ull << 30;
	struct ops_gpu_entry e;
	dev_keys[0] = 0;
	CHECK_EQ_I(cupti_decode(&d, sizeof(d), &same, &ops, &e), 0);
	CHECK(strstr(dev_keys, "3.name=NVIDIA H100;") != NULL);
	CHECK(strstr(dev_keys, "3.sm_count=132;") != NULL);
	CHECK(strstr(dev_keys, "3.compute_capability=9.0;") != NULL);
	CHECK(strstr(dev_keys, "3.memory_bytes=85899345920;") != NULL);
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_CONTEXT; /* not collected */
	CHECK_EQ_I(cupti_decode(&a, sizeof(a), &same, &ops, &e), 0);
}

TEST(clock_mapping)
{
	/* CUPTI's ns mapped through one pair: 2.5 ticks per ns from tick 1000 at ns 5000 */
	const struct cupti_clock c = { 0, 5000, 1000, 2.5 };
	CHECK_EQ_U(cupti_ticks(&c, 5000), 1000);
	CHECK_EQ_U(cupti_ticks(&c, 5400), 2000);
	CHECK_EQ_U(cupti_ticks(&c, 4800), 500);
	CHECK_EQ_U(cupti_ticks(&c, 0), 0); /* before tick 0: clamped */
	CHECK_EQ_U(cupti_ticks(&same, 123), 123);
	/* an end before its start (a bad record) is not made negative */
	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.start = 5400;
	s.end = 5000;
	struct ops_gpu_entry e;
	CHECK_EQ_I(cupti_decode(&s, sizeof(s), &c, &ops, &e), 1);
	CHECK_EQ_U(e.start_ticks, 2000);
	CHECK_EQ_U(e.end_ticks, 2000);
}

TEST(entry_bytes_round_trip)
{
	struct ops_gpu_entry a = { 0 }, b;
	a.kind = OPS_GPU_KERNEL;
	a.sub = 1;
	a.src_kind = 2;
	a.dst_kind = 3;
	a.device = 0x01020304;
	a.context = 5;
	a.stream = 6;
	a.start_ticks = 0x1122334455667788ull;
	a.end_ticks = 0x1122334455667799ull;
	a.correlation = 7;
	a.name_id = 8;
	a.external_id = 9;
	a.bytes = 10;
	a.address = 11;
	a.grid[2] = 12;
	a.block[1] = 13;
	a.registers = 14;
	a.shared = 15;
	a.graph_id = 16;
	uint8_t bytes[sizeof(struct ops_gpu_entry)];
	encode_gpu_entry(bytes, &a);
	CHECK_EQ_U(bytes[4], 0x04); /* little-endian on disk */
	struct decode_table t = { 0 };
	t.entries = bytes;
	t.entry_bytes = sizeof(bytes);
	t.count = 1;
	decode_gpu(&t, 0, &b);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
}

TEST_MAIN(kernel, copies_and_memset, calls_sync_memory_overhead_external, device_and_unknown,
	  clock_mapping, entry_bytes_round_trip)

#else
int main(void)
{
	return 77; /* no cupti.h at build time */
}
#endif
