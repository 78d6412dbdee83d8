/*
 * cupti_decode.c: one CUPTI activity record to one GPU entry (cupti_decode.h).
 *
 * The layouts are the CUDA 13 ones (Kernel10, Memcpy6, MemcpyPtoP4, Memset4, API,
 * Synchronization2, Memory4, Overhead3, Device5, ExternalCorrelation); a record is read with
 * memcpy into a local struct of its layout, after checking that the buffer holds all of it, so
 * a short or misaligned buffer (the fuzzer's) is never read past.
 */
#include "collect/cupti/cupti_decode.h"

#include <stdio.h>
#include <string.h>

#include <cupti.h>

uint64_t cupti_ticks(const struct cupti_clock *c, uint64_t ts)
{
	if (c->identity)
		return ts;
	double d = ((double)ts - (double)c->ns0) * c->ticks_per_ns + (double)c->ticks0;
	return d <= 0 ? 0 : d >= 1.8e19 ? UINT64_MAX : (uint64_t)d;
}

#define LOAD(type, var)         \
	type var;               \
	if (size < sizeof(var)) \
		return -1;      \
	memcpy(&var, record, sizeof(var))

static void times(struct ops_gpu_entry *o, const struct cupti_clock *clk, uint64_t s, uint64_t e)
{
	o->start_ticks = cupti_ticks(clk, s);
	o->end_ticks = e >= s ? cupti_ticks(clk, e) : o->start_ticks;
	if (o->end_ticks < o->start_ticks)
		o->end_ticks = o->start_ticks;
}

static void device_props(const CUpti_ActivityDevice5 *d, const struct cupti_decode_ops *ops)
{
	if (!ops->device)
		return;
	char v[64];
	if (d->name) {
		char name[256];
		snprintf(name, sizeof(name), "%s", d->name);
		ops->device(d->id, "name", name);
	}
	snprintf(v, sizeof(v), "%u.%u", d->computeCapabilityMajor, d->computeCapabilityMinor);
	ops->device(d->id, "compute_capability", v);
	snprintf(v, sizeof(v), "%u", d->numMultiprocessors);
	ops->device(d->id, "sm_count", v);
	snprintf(v, sizeof(v), "%u", d->coreClockRate);
	ops->device(d->id, "core_clock_khz", v);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)d->globalMemorySize);
	ops->device(d->id, "memory_bytes", v);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)d->globalMemoryBandwidth);
	ops->device(d->id, "memory_bandwidth_kbps", v);
	snprintf(v, sizeof(v), "%u", d->maxWarpsPerMultiprocessor);
	ops->device(d->id, "max_warps_per_sm", v);
}

int cupti_decode(const void *record, size_t size, const struct cupti_clock *clk,
		 const struct cupti_decode_ops *ops, struct ops_gpu_entry *out)
{
	CUpti_ActivityKind kind;
	if (size < sizeof(kind))
		return -1;
	memcpy(&kind, record, sizeof(kind));
	memset(out, 0, sizeof(*out));
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		LOAD(CUpti_ActivityKernel10, k);
		out->kind = OPS_GPU_KERNEL;
		out->device = k.deviceId;
		out->context = k.contextId;
		out->stream = k.streamId;
		times(out, clk, k.start, k.end);
		out->correlation = k.correlationId;
		out->name_id = ops->intern(k.name);
		out->grid[0] = (uint32_t)k.gridX;
		out->grid[1] = (uint32_t)k.gridY;
		out->grid[2] = (uint32_t)k.gridZ;
		out->block[0] = (uint32_t)k.blockX;
		out->block[1] = (uint32_t)k.blockY;
		out->block[2] = (uint32_t)k.blockZ;
		out->registers = k.registersPerThread;
		out->shared = (uint32_t)k.staticSharedMemory + (uint32_t)k.dynamicSharedMemory;
		out->graph_id = k.graphId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		LOAD(CUpti_ActivityMemcpy6, c);
		out->kind = OPS_GPU_MEMCPY;
		out->sub = c.copyKind;
		out->src_kind = c.srcKind;
		out->dst_kind = c.dstKind;
		out->device = c.deviceId;
		out->context = c.contextId;
		out->stream = c.streamId;
		times(out, clk, c.start, c.end);
		out->correlation = c.correlationId;
		out->bytes = c.bytes;
		out->grid[0] = out->grid[1] = c.deviceId;
		out->graph_id = c.graphId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		LOAD(CUpti_ActivityMemcpyPtoP4, c);
		out->kind = OPS_GPU_MEMCPY;
		out->sub = c.copyKind;
		out->src_kind = c.srcKind;
		out->dst_kind = c.dstKind;
		out->device = c.deviceId;
		out->context = c.contextId;
		out->stream = c.streamId;
		times(out, clk, c.start, c.end);
		out->correlation = c.correlationId;
		out->bytes = c.bytes;
		out->grid[0] = c.srcDeviceId;
		out->grid[1] = c.dstDeviceId;
		out->graph_id = c.graphId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		LOAD(CUpti_ActivityMemset4, s);
		out->kind = OPS_GPU_MEMSET;
		out->src_kind = (uint8_t)s.memoryKind;
		out->device = s.deviceId;
		out->context = s.contextId;
		out->stream = s.streamId;
		times(out, clk, s.start, s.end);
		out->correlation = s.correlationId;
		out->bytes = s.bytes;
		out->address = s.value;
		out->graph_id = s.graphId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		LOAD(CUpti_ActivityAPI, a);
		int driver = kind == CUPTI_ACTIVITY_KIND_DRIVER;
		out->kind = driver ? OPS_GPU_DRIVER : OPS_GPU_RUNTIME;
		times(out, clk, a.start, a.end);
		out->correlation = a.correlationId;
		out->name_id = ops->api_name(driver, a.cbid);
		out->bytes = a.threadId;
		out->registers = a.returnValue;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		LOAD(CUpti_ActivitySynchronization2, s);
		out->kind = OPS_GPU_SYNC;
		out->sub = (uint8_t)s.type;
		out->context = s.contextId;
		out->stream = s.streamId;
		times(out, clk, s.start, s.end);
		out->correlation = s.correlationId;
		out->registers = s.returnValue;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2: {
		LOAD(CUpti_ActivityMemory4, m);
		out->kind = OPS_GPU_MEMORY;
		out->sub = (uint8_t)m.memoryOperationType;
		out->src_kind = (uint8_t)m.memoryKind;
		out->device = m.deviceId;
		out->context = m.contextId;
		out->stream = m.streamId;
		times(out, clk, m.timestamp, m.timestamp);
		out->correlation = m.correlationId;
		out->bytes = m.bytes;
		out->address = m.address;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		LOAD(CUpti_ActivityOverhead3, o);
		out->kind = OPS_GPU_OVERHEAD;
		out->sub = (uint8_t)o.overheadKind;
		times(out, clk, o.start, o.end);
		out->correlation = o.correlationId;
		if (o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
		    o.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
			out->bytes = o.objectId.pt.threadId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_DEVICE: {
		LOAD(CUpti_ActivityDevice5, d);
		device_props(&d, ops);
		return 0;
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		LOAD(CUpti_ActivityExternalCorrelation, x);
		out->kind = OPS_GPU_EXTERNAL;
		out->sub = (uint8_t)x.externalKind;
		out->correlation = x.correlationId;
		out->external_id = x.externalId;
		return 1;
	}
	default:
		return 0;
	}
}
