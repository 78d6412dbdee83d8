/*
 * cupti.c: the CUPTI GPU collector. libcupti is loaded with dlopen ($OPSCOPE_CUPTI_LIB, else
 * libcupti.so.13), so libopscope needs no CUDA to build or run; this file is compiled only
 * where the toolkit's cupti.h exists, for the record layouts and constants.
 *
 * Attaching:
 *   - with no code change: `opscope record` sets CUDA_INJECTION64_PATH to libopscope, and the
 *     CUDA driver calls InitializeInjection() during cuInit;
 *   - from the program: opscope_gpu_start() (record/gpu.c; the profiler's GPU target calls
 *     it), which reaches cupti_start() through record_gpu_set_starter().
 * Either way it registers a timestamp callback that returns opscope's tick clock (so GPU times
 * need no conversion; if CUPTI refuses, one (CUPTI time, tick) pair read at start maps them,
 * and metadata "gpu.clock" says which), the buffer callbacks, and enables concurrent kernels,
 * memcpy (+ peer), memset, runtime and driver calls, synchronization, memory (MEMORY2),
 * overhead, device properties and external correlation. It subscribes to the callback API
 * only to learn whether another tool (Nsight, Kineto) holds CUPTI's one subscriber slot (then
 * it warns once and records activities only), and unsubscribes at once: it needs no
 * callbacks, and a tool started later must find the slot free.
 *
 * Buffers come from a pool (4 MiB each, $OPSCOPE_CUPTI_BUFFER_BYTES; 256 MiB in flight at most;
 * when none can be had CUPTI drops records and counts them). In the completion callback,
 * which runs on CUPTI's thread or in FlushAll's caller, every record is decoded
 * (cupti_decode.c) into a GPU entry, names interned (copied: CUPTI frees them after the
 * callback), the entries handed to the session in one batch (record/gpu.h), the buffer put
 * back, and then CUPTI's dropped count read. Lock rule (FINDINGS §1.2): no call into CUPTI is
 * ever made while a lock of ours is held: the pool's and the correlation map's locks guard
 * plain memory only, and the session flushes CUPTI (opscope_session_stop) before taking its
 * own lock.
 *
 * External correlation: every host range opened through the C API (opscope_range_begin and
 * friends) or NVTX push gets an id (record_gpu_range_begin) that is pushed with
 * cuptiActivityPushExternalCorrelationId(CUSTOM0) and popped at its end, so CUPTI emits
 * EXTERNAL_CORRELATION records that tie every runtime call, and through its correlation id
 * every kernel, to the innermost host range open when it was launched.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>

#include "opscope/opscope.h"

#include "collect/cupti/cupti_decode.h"
#include "record/gpu.h"
#include "record/record.h"

/* ---- the library ---- */

#define CUPTI_FUNCS(X)                            \
	X(cuptiGetVersion)                        \
	X(cuptiGetResultString)                   \
	X(cuptiGetTimestamp)                      \
	X(cuptiActivityRegisterCallbacks)         \
	X(cuptiActivityRegisterTimestampCallback) \
	X(cuptiActivityEnable)                    \
	X(cuptiActivityDisable)                   \
	X(cuptiActivityGetNextRecord)             \
	X(cuptiActivityGetNumDroppedRecords)      \
	X(cuptiActivityFlushAll)                  \
	X(cuptiActivityPushExternalCorrelationId) \
	X(cuptiActivityPopExternalCorrelationId)  \
	X(cuptiSubscribe)                         \
	X(cuptiUnsubscribe)                       \
	X(cuptiGetCallbackName)

static struct {
#define CUPTI_FIELD(name) __typeof__(name) *name;
	CUPTI_FUNCS(CUPTI_FIELD)
#undef CUPTI_FIELD
} api;

static void *lib;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int started;	  /* 1 once activities are on */
static int activity_only; /* another tool held the subscriber slot at start */
static CUpti_SubscriberHandle subscriber;
static struct cupti_clock clk;
static atomic_int push_on; /* push host range ids as external correlation ids */

static const char *cupti_err(CUptiResult r)
{
	const char *s = NULL;
	if (api.cuptiGetResultString && api.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

static void cupti_warn(const char *what, const char *why)
{
	fprintf(stderr, "opscope: warning: GPU collector: %s: %s; host recording goes on\n", what,
		why);
}

static int cupti_load(void)
{
	const char *path = getenv("OPSCOPE_CUPTI_LIB");
	if (!path || !*path)
		path = "libcupti.so.13";
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		cupti_warn("cannot load CUPTI", e ? e : path);
		return -1;
	}
#define CUPTI_SYM(name)                                                                            \
	*(void **)&api.name = dlsym(lib, #name);                                                   \
	if (!api.name) {                                                                           \
		char m[160];                                                                       \
		snprintf(m, sizeof(m), "%s has no %s (a CUPTI of another version?)", path, #name); \
		cupti_warn("unusable CUPTI", m);                                                   \
		return -1;                                                                         \
	}
	CUPTI_FUNCS(CUPTI_SYM)
#undef CUPTI_SYM
	uint32_t v = 0;
	CUptiResult r = api.cuptiGetVersion(&v);
	if (r != CUPTI_SUCCESS || v / 10000 != CUPTI_API_VERSION / 10000) {
		char m[160];
		snprintf(m, sizeof(m), "%s is CUPTI API version %u, this build reads %u", path, v,
			 (unsigned)CUPTI_API_VERSION);
		cupti_warn("unusable CUPTI", r != CUPTI_SUCCESS ? cupti_err(r) : m);
		return -1;
	}
	return 0;
}

/* ---- buffers ---- */

#define POOL_KEEP 8 /* free buffers kept for reuse */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool_free[POOL_KEEP];
static int pool_nfree;
static size_t pool_out, pool_max = 64; /* in flight at most: pool_max * buffer_bytes = 256 MiB */
static size_t buffer_bytes = 4u << 20;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = NULL;
	pthread_mutex_lock(&pool_lock);
	if (pool_nfree)
		b = pool_free[--pool_nfree];
	else if (pool_out < pool_max)
		b = aligned_alloc(8, buffer_bytes);
	if (b)
		pool_out++;
	pthread_mutex_unlock(&pool_lock);
	*buffer = b;
	*size = b ? buffer_bytes : 0; /* none: CUPTI drops and counts */
	*max_records = 0;
}

static void buffer_put(uint8_t *b)
{
	pthread_mutex_lock(&pool_lock);
	pool_out--;
	if (pool_nfree < POOL_KEEP)
		pool_free[pool_nfree++] = b, b = NULL;
	pthread_mutex_unlock(&pool_lock);
	free(b);
}

/* ---- decoding callbacks ---- */

static uint32_t intern_name(const char *s)
{
	return s ? record_intern_cached(s) : 0;
}

/* API callback id -> name id, per domain (runtime 0, driver 1); filled on first sight. */
#define API_IDS 4096
static _Atomic uint32_t api_ids[2][API_IDS];

static uint32_t api_name(int driver, uint32_t cbid)
{
	if (cbid < API_IDS) {
		uint32_t id = atomic_load_explicit(&api_ids[driver][cbid], memory_order_relaxed);
		if (id)
			return id;
	}
	const char *n = NULL;
	char tmp[32];
	if (api.cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API
					    : CUPTI_CB_DOMAIN_RUNTIME_API,
				     cbid, &n) != CUPTI_SUCCESS ||
	    !n) {
		snprintf(tmp, sizeof(tmp), "%s#%u", driver ? "cuDriver" : "cudaRuntime", cbid);
		n = tmp;
	}
	/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", as Kineto and nvprof name calls */
	size_t len = strlen(n);
	const char *v = strstr(n, "_v");
	if (v && v > n && v[2] && strspn(v + 2, "0123456789") == strlen(v + 2))
		len = (size_t)(v - n);
	uint32_t id = record_intern(n, len);
	if (cbid < API_IDS)
		atomic_store_explicit(&api_ids[driver][cbid], id, memory_order_relaxed);
	return id;
}

static void device_prop(uint32_t dev, const char *key, const char *value)
{
	char k[96];
	snprintf(k, sizeof(k), "gpu.%u.%s", dev, key);
	record_metadata(k, value);
}

static const struct cupti_decode_ops decode_ops = { intern_name, api_name, device_prop };

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	(void)size;
	enum { BATCH = 256 }; /* 26 KiB of stack on CUPTI's thread */
	struct ops_gpu_entry batch[BATCH];
	size_t n = 0;
	CUpti_Activity *r = NULL;
	while (buffer && api.cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
		size_t left = valid - (size_t)((uint8_t *)r - buffer);
		struct ops_gpu_entry *e = &batch[n];
		if (cupti_decode(r, left, &clk, &decode_ops, e) != 1)
			continue;
		if (++n == BATCH) {
			record_gpu_entries(batch, n);
			n = 0;
		}
	}
	if (n)
		record_gpu_entries(batch, n);
	if (buffer)
		buffer_put(buffer);
	/* after the buffer is back and with no lock of ours held (FINDINGS §1.2) */
	size_t dropped = 0;
	if (api.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
	    dropped)
		record_gpu_dropped(dropped);
}

/* ---- hooks of the session ---- */

static void cupti_flush(void)
{
	if (started)
		api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static void cupti_range_begin(uint64_t id)
{
	if (atomic_load_explicit(&push_on, memory_order_relaxed))
		api.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
							   id);
}

static void cupti_range_end(void)
{
	uint64_t last;
	if (atomic_load_explicit(&push_on, memory_order_relaxed))
		api.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
							  &last);
}

static const struct record_gpu_hooks hooks = { cupti_flush, cupti_range_begin, cupti_range_end };

static void CUPTIAPI callback_unused(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id,
				     const void *data)
{
	(void)ud;
	(void)d;
	(void)id;
	(void)data;
}

static uint64_t CUPTIAPI tick_clock(void)
{
	return record_ticks();
}

static void cupti_atexit(void)
{
	/* the session's own exit handler stops it and flushes through the hook; this covers a
	 * program that stopped the session itself and exits with records still in CUPTI */
	cupti_flush();
}

/* The activity kinds enabled, each with the name $OPSCOPE_CUPTI_SKIP knows it by. */
static const struct {
	CUpti_ActivityKind kind;
	const char *name;
} kinds[] = {
	{ CUPTI_ACTIVITY_KIND_DEVICE, "device" },
	{ CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "external_correlation" },
	{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel" },
	{ CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy" },
	{ CUPTI_ACTIVITY_KIND_MEMCPY2, "memcpy2" },
	{ CUPTI_ACTIVITY_KIND_MEMSET, "memset" },
	{ CUPTI_ACTIVITY_KIND_RUNTIME, "runtime" },
	{ CUPTI_ACTIVITY_KIND_DRIVER, "driver" },
	{ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization" },
	{ CUPTI_ACTIVITY_KIND_MEMORY2, "memory2" },
	{ CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead" },
};

/* Whether the comma-separated list `skip` ($OPSCOPE_CUPTI_SKIP) names kind `name`. The knob
 * exists to measure what each kind costs on a real program (scripts/gpu-check.sh); the
 * kernel kind cannot be skipped. */
static int kind_skipped(const char *skip, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = skip; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static int cupti_start_locked(void)
{
	if (started)
		return 0;
	if (!lib && cupti_load() != 0)
		return -1;
	const char *bb = getenv("OPSCOPE_CUPTI_BUFFER_BYTES");
	if (bb && *bb) {
		unsigned long long v = strtoull(bb, NULL, 10);
		if (v >= 64 && v <= (256ull << 20))
			buffer_bytes = (size_t)v & ~(size_t)7;
		pool_max = (256u << 20) / buffer_bytes;
	}
	CUptiResult r = api.cuptiSubscribe(&subscriber, callback_unused, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		activity_only = 1;
		cupti_warn("another tool is subscribed to CUPTI (Nsight, Kineto?)",
			   "recording GPU activity only");
	} else if (r != CUPTI_SUCCESS) {
		activity_only = 1;
	} else {
		/* nothing here needs the callback API: give the slot back at once, so that a tool
		 * started later (torch.profiler, Nsight) can subscribe */
		api.cuptiUnsubscribe(subscriber);
	}
	/* our clock first: it must be in place before any kind is enabled */
	if (api.cuptiActivityRegisterTimestampCallback(tick_clock) == CUPTI_SUCCESS) {
		clk.identity = 1;
		record_metadata("gpu.clock", "opscope ticks (CUPTI timestamp callback)");
	} else {
		uint64_t ns = 0;
		api.cuptiGetTimestamp(&ns);
		clk.identity = 0;
		clk.ticks0 = record_ticks();
		clk.ns0 = ns;
		clk.ticks_per_ns = record_ticks_per_second() / 1e9;
		char v[128];
		snprintf(v, sizeof(v), "CUPTI clock mapped at start: %llu ns = tick %llu",
			 (unsigned long long)clk.ns0, (unsigned long long)clk.ticks0);
		record_metadata("gpu.clock", v);
	}
	r = api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		cupti_warn("cuptiActivityRegisterCallbacks", cupti_err(r));
		goto fail;
	}
	const char *skip = getenv("OPSCOPE_CUPTI_SKIP");
	char skipped[256] = "";
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (kinds[i].kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
		    kind_skipped(skip, kinds[i].name)) {
			size_t used = strlen(skipped);
			snprintf(skipped + used, sizeof(skipped) - used, "%s%s", used ? "," : "",
				 kinds[i].name);
			continue;
		}
		r = api.cuptiActivityEnable(kinds[i].kind);
		if (r != CUPTI_SUCCESS && kinds[i].kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			cupti_warn("cuptiActivityEnable(CONCURRENT_KERNEL)", cupti_err(r));
			goto fail;
		}
	}
	record_metadata("gpu.mode",
			activity_only ? "activity-only (another CUPTI subscriber)" : "full");
	if (*skipped)
		record_metadata("gpu.skipped_kinds", skipped);
	started = 1;
	atomic_store(&push_on, 1);
	record_gpu_set_hooks(&hooks);
	record_gpu_register_thread();
	atexit(cupti_atexit);
	return 0;
fail:
	/* leave CUPTI as it was: no kind of ours left on */
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		api.cuptiActivityDisable(kinds[i].kind);
	return -1;
}

/* Start the collector (idempotent). 0, or -1 after a one-line warning (once). */
static int cupti_start(void)
{
	pthread_mutex_lock(&start_lock);
	static int failed;
	int rc = failed ? -1 : cupti_start_locked();
	failed = rc != 0;
	pthread_mutex_unlock(&start_lock);
	return rc;
}

/* opscope_gpu_start() (record/gpu.c) reaches the collector through this. */
__attribute__((constructor)) static void cupti_register(void)
{
	record_gpu_set_starter(cupti_start);
}

/* Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names libopscope.
 * Returns 1 (the driver goes on either way; a failure was warned about). */
OPSCOPE_API int InitializeInjection(void);
OPSCOPE_API int InitializeInjection(void)
{
	const char *on = getenv("OPSCOPE_GPU");
	if (on && strcmp(on, "0") == 0)
		return 1;
	cupti_start();
	return 1;
}
