/*
 * fake_cupti.c: a TEST DOUBLE of libcupti.so.13 (built as tests/doubles/fake_cupti/
 * libcupti.so.13): the entry points opscope's CUPTI collector uses, writing activity records
 * in the REAL CUDA 13 layouts of the toolkit's cupti_activity.h, so the collector's decoding
 * runs on the bytes a real CUPTI writes. A fake CUDA program drives it through the control
 * API of fake_cupti.h. No GPU, no driver.
 *
 * What it mirrors of CUPTI (../shared/FINDINGS-collectors.md §1.2, §1.4):
 *   - records packed one after another, each 8-byte aligned, walked with
 *     cuptiActivityGetNextRecord, which returns CUPTI_ERROR_MAX_LIMIT_REACHED at the end;
 *   - buffers asked of the collector's request callback with no lock of the fake held; a
 *     NULL or too small buffer drops the record and counts it (GetNumDroppedRecords returns
 *     the count since the last call);
 *   - completion on the fake's own worker thread once two buffers wait, the newer first
 *     (always out of order), and on the caller's thread inside cuptiActivityFlushAll, which returns
 *     only when every buffer is delivered;
 *   - kernel names owned by the fake, poisoned and freed right after the completion callback
 *     of their buffer returns (a collector that keeps the pointer reads garbage, and ASan
 *     reports a use after free);
 *   - the activity timestamps from the registered timestamp callback, else CLOCK_REALTIME;
 *   - external correlation: a per-thread stack; an API record made while it is not empty is
 *     preceded by an EXTERNAL_CORRELATION record {CUSTOM0, top, correlation};
 *   - NVTX injection (InitializeInjectionNvtx2), claiming two slots, as the inner tool of
 *     opscope's chained NVTX injection;
 *   - one subscriber: a second cuptiSubscribe (or one while fakecupti_foreign_subscriber(1)
 *     says another tool holds the slot) gets CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
 *   - the deadlock-prone lock: GetNumDroppedRecords takes the fake's lock, which is held
 *     while a thread writes records, so a collector that calls it under its own lock while
 *     its request callback wants that lock hangs (the test's timeout catches it).
 */
#include "fake_cupti.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FC_API __attribute__((visibility("default")))

struct fc_buf {
	uint8_t *data;
	size_t size, valid;
	char **names; /* kernel names of its records, freed after completion */
	size_t nnames, names_cap;
	size_t nrecords; /* records written into it */
	uint64_t seq;	 /* order of filling */
	struct fc_buf *next;
};

static pthread_mutex_t fc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fc_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t fc_idle = PTHREAD_COND_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc fc_request;
static CUpti_BuffersCallbackCompleteFunc fc_complete;
static CUpti_TimestampCallbackFunc fc_clock;
static int fc_subscribed, fc_foreign, fc_refuse_clock;
static uint64_t fc_enabled;    /* bit per activity kind (< 64) */
static struct fc_buf *fc_cur;  /* being filled */
static struct fc_buf *fc_done; /* filled, waiting for completion (newest first) */
static int fc_ndone;	       /* buffers in fc_done */
static int fc_delivering;      /* completions in progress */
static uint64_t fc_seq, fc_last_delivered_seq;
static size_t fc_dropped_since;
static uint64_t fc_drop_next;
static uint32_t fc_next_corr = 1;
static struct fakecupti_stats fc_stats;
static pthread_t fc_worker;
static int fc_worker_on;
static uint64_t fc_busy[16][64]; /* per device and stream: busy until */

static __thread uint64_t fc_ext_stack[64];
static __thread int fc_ext_depth;

static uint64_t fc_now(void)
{
	if (fc_clock)
		return fc_clock();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int fc_bench(void);

static uint64_t fc_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static size_t fc_record_size(CUpti_ActivityKind kind)
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
		return 0;
	}
}

static size_t fc_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* ---- buffers ---- */

/* Retire the current buffer (lock held). */
static void fc_retire_locked(void)
{
	if (!fc_cur)
		return;
	fc_cur->next = fc_done;
	fc_done = fc_cur;
	fc_ndone++;
	fc_cur = NULL;
	pthread_cond_signal(&fc_wake);
}

/* Deliver one waiting buffer (lock held on entry and exit; released around the callback). */
static int fc_deliver_one_locked(int on_worker)
{
	struct fc_buf *b = fc_done;
	if (!b)
		return 0;
	fc_done = b->next; /* newest first: out of order when several wait */
	fc_ndone--;
	fc_delivering++;
	if (b->seq < fc_last_delivered_seq)
		fc_stats.out_of_order++;
	fc_last_delivered_seq = b->seq;
	fc_stats.buffers++;
	fc_stats.on_worker += on_worker != 0;
	CUpti_BuffersCallbackCompleteFunc complete = fc_complete;
	size_t nrec = b->nrecords;
	pthread_mutex_unlock(&fc_lock);
	/* the time the collector spends in its callback, for bench/bench_cupti.sh: measured
	 * here, where it is called, so the collector needs no timing code of its own */
	int timed = fc_bench();
	uint64_t c0 = 0, u0 = 0, c1 = 0, u1 = 0;
	if (timed)
		c0 = fc_clock_ns(CLOCK_MONOTONIC), u0 = fc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (complete)
		complete(NULL, 0, b->data, b->size, b->valid);
	else
		free(b->data);
	if (timed)
		c1 = fc_clock_ns(CLOCK_MONOTONIC), u1 = fc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (size_t i = 0; i < b->nnames; i++) {
		memset(b->names[i], 0x5a, strlen(b->names[i])); /* poison, then free */
		free(b->names[i]);
	}
	pthread_mutex_lock(&fc_lock);
	fc_stats.names_poisoned += b->nnames;
	if (complete && timed) {
		fc_stats.complete_ns += c1 - c0;
		fc_stats.complete_cpu_ns += u1 - u0;
		fc_stats.complete_records += nrec;
	}
	free(b->names);
	free(b);
	fc_delivering--;
	pthread_cond_broadcast(&fc_idle);
	return 1;
}

static void *fc_worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fc_lock);
	for (;;) {
		/* two at least, delivered newest first: always out of order */
		while (fc_ndone < 2)
			pthread_cond_wait(&fc_wake, &fc_lock);
		while (fc_deliver_one_locked(1))
			;
	}
	return NULL;
}

/* Room for a record of n bytes (lock held); NULL: dropped. May release the lock to ask the
 * collector for a buffer. */
static uint8_t *fc_reserve_locked(size_t n, const char *name, char **name_copy)
{
	n = fc_align8(n);
	if (fc_drop_next) {
		fc_drop_next--;
		fc_dropped_since++;
		fc_stats.dropped++;
		return NULL;
	}
	if (fc_cur && fc_cur->size - fc_cur->valid < n)
		fc_retire_locked();
	if (!fc_cur) {
		CUpti_BuffersCallbackRequestFunc request = fc_request;
		uint8_t *data = NULL;
		size_t size = 0, maxrec = 0;
		pthread_mutex_unlock(&fc_lock); /* CUPTI calls request with no lock held */
		if (request)
			request(&data, &size, &maxrec);
		pthread_mutex_lock(&fc_lock);
		if (!data || size < n) {
			if (data) { /* too small: handed back empty */
				struct fc_buf *e = calloc(1, sizeof(*e));
				if (e) {
					e->data = data;
					e->size = size;
					e->seq = ++fc_seq;
					e->next = fc_done;
					fc_done = e;
					fc_ndone++;
					pthread_cond_signal(&fc_wake);
				}
			}
			fc_dropped_since++;
			fc_stats.dropped++;
			return NULL;
		}
		if (fc_cur) /* another thread made one meanwhile: queue ours behind it */
			fc_retire_locked();
		fc_cur = calloc(1, sizeof(*fc_cur));
		if (!fc_cur)
			abort();
		fc_cur->data = data;
		fc_cur->size = size;
		fc_cur->seq = ++fc_seq;
		if (fc_cur->size - fc_cur->valid < n) {
			fc_dropped_since++;
			fc_stats.dropped++;
			return NULL;
		}
	}
	uint8_t *p = fc_cur->data + fc_cur->valid;
	memset(p, 0, n);
	fc_cur->valid += n;
	fc_cur->nrecords++;
	fc_stats.records++;
	if (name) {
		if (fc_cur->nnames == fc_cur->names_cap) {
			fc_cur->names_cap = fc_cur->names_cap ? fc_cur->names_cap * 2 : 64;
			fc_cur->names = realloc(fc_cur->names, fc_cur->names_cap * sizeof(char *));
			if (!fc_cur->names)
				abort();
		}
		*name_copy = strdup(name);
		fc_cur->names[fc_cur->nnames++] = *name_copy;
	}
	return p;
}

/* Write a record (of its kind's layout) if its kind is enabled. */
static void fc_emit_locked(const void *rec, CUpti_ActivityKind kind, const char *name,
			   size_t name_offset)
{
	if (kind >= 64 || !(fc_enabled & (1ull << kind)))
		return;
	size_t n = fc_record_size(kind);
	char *copy = NULL;
	uint8_t *p = fc_reserve_locked(n, name, &copy);
	if (!p)
		return;
	memcpy(p, rec, n);
	if (name)
		memcpy(p + name_offset, &copy, sizeof(copy));
}

/* ---- CUPTI entry points ---- */

FC_API CUptiResult cuptiGetVersion(uint32_t *version)
{
	const char *v = getenv("FAKECUPTI_VERSION");
	*version = v && *v ? (uint32_t)strtoul(v, NULL, 10) : CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	switch (result) {
	case CUPTI_SUCCESS:
		*str = "CUPTI_SUCCESS";
		break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	case CUPTI_ERROR_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_NOT_SUPPORTED";
		break;
	case CUPTI_ERROR_MAX_LIMIT_REACHED:
		*str = "CUPTI_ERROR_MAX_LIMIT_REACHED";
		break;
	case CUPTI_ERROR_QUEUE_EMPTY:
		*str = "CUPTI_ERROR_QUEUE_EMPTY";
		break;
	default:
		*str = "CUPTI_ERROR_UNKNOWN";
		break;
	}
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	*timestamp = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
						  CUpti_BuffersCallbackCompleteFunc complete)
{
	if (!request || !complete)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&fc_lock);
	fc_request = request;
	fc_complete = complete;
	if (!fc_worker_on && pthread_create(&fc_worker, NULL, fc_worker_main, NULL) == 0) {
		pthread_detach(fc_worker);
		fc_worker_on = 1;
	}
	pthread_mutex_unlock(&fc_lock);
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	pthread_mutex_lock(&fc_lock);
	CUptiResult r = CUPTI_SUCCESS;
	if (fc_refuse_clock || fc_enabled)
		r = CUPTI_ERROR_NOT_SUPPORTED; /* refused, or too late: kinds already on */
	else
		fc_clock = f;
	pthread_mutex_unlock(&fc_lock);
	return r;
}

FC_API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (!fc_record_size(kind))
		return CUPTI_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&fc_lock);
	fc_enabled |= 1ull << kind;
	pthread_mutex_unlock(&fc_lock);
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	pthread_mutex_lock(&fc_lock);
	if (kind < 64)
		fc_enabled &= ~(1ull << kind);
	pthread_mutex_unlock(&fc_lock);
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
	size_t at = 0;
	if (*rec) {
		CUpti_ActivityKind kind;
		memcpy(&kind, *rec, sizeof(kind));
		at = (size_t)((uint8_t *)*rec - buffer) + fc_align8(fc_record_size(kind));
	}
	if (at + sizeof(CUpti_ActivityKind) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(void *)(buffer + at);
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
						     size_t *dropped)
{
	(void)ctx;
	(void)stream;
	pthread_mutex_lock(&fc_lock); /* the lock of the deadlock in FINDINGS §1.2 */
	*dropped = fc_dropped_since;
	fc_dropped_since = 0;
	pthread_mutex_unlock(&fc_lock);
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	pthread_mutex_lock(&fc_lock);
	fc_retire_locked();
	while (fc_deliver_one_locked(0))
		;
	while (fc_delivering) /* the worker's delivery in progress */
		pthread_cond_wait(&fc_idle, &fc_lock);
	pthread_mutex_unlock(&fc_lock);
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
							  uint64_t id)
{
	if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || fc_ext_depth == 64)
		return CUPTI_ERROR_INVALID_PARAMETER;
	fc_ext_stack[fc_ext_depth++] = id;
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
							 uint64_t *last)
{
	if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || fc_ext_depth == 0)
		return CUPTI_ERROR_QUEUE_EMPTY;
	*last = fc_ext_stack[--fc_ext_depth];
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud)
{
	(void)cb;
	(void)ud;
	pthread_mutex_lock(&fc_lock);
	CUptiResult r = CUPTI_SUCCESS;
	if (fc_subscribed || fc_foreign)
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	else
		fc_subscribed = 1;
	pthread_mutex_unlock(&fc_lock);
	*sub = r == CUPTI_SUCCESS ? (CUpti_SubscriberHandle)(uintptr_t)1 : NULL;
	return r;
}

FC_API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	(void)sub;
	pthread_mutex_lock(&fc_lock);
	fc_subscribed = 0;
	pthread_mutex_unlock(&fc_lock);
	return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
					const char **name)
{
	static const struct {
		CUpti_CallbackDomain domain;
		uint32_t cbid;
		const char *name;
	} names[] = {
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		  "cudaLaunchKernel_v7000" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
		  "cudaMemcpyAsync_v3020" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
		  "cudaMemcpyPeerAsync_v4000" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
		  "cudaMemsetAsync_v3020" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
		  "cudaStreamSynchronize_v3020" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
		  "cudaMalloc_v3020" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
		  "cudaFree_v3020" },
		{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		  "cuLaunchKernel" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].domain == domain && names[i].cbid == cbid) {
			*name = names[i].name;
			return CUPTI_SUCCESS;
		}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

/* ---- NVTX injection (libcupti exports it; opscope chains to it) ----
 * Claims RangePushA and RangePop only and counts them; every other CORE slot is left as the
 * loader has it (its *_impl_init stubs during init), which is what a chaining tool must not
 * mistake for a handler. The export table types mirror nvtx3's nvtxTypes.h. */

struct fc_nvtx_callbacks {
	size_t struct_size;
	int (*get_module_function_table)(int module, void (****out_table)(void),
					 unsigned int *out_size);
};

static uint64_t fc_nvtx_push, fc_nvtx_pop;

static int fc_nvtx_RangePushA(const char *msg)
{
	(void)msg;
	__atomic_fetch_add(&fc_nvtx_push, 1, __ATOMIC_RELAXED);
	return 0;
}

static int fc_nvtx_RangePop(void)
{
	__atomic_fetch_add(&fc_nvtx_pop, 1, __ATOMIC_RELAXED);
	return 0;
}

FC_API int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id))
{
	const struct fc_nvtx_callbacks *cb = get_export_table ? get_export_table(1) : NULL;
	void (***table)(void) = NULL;
	unsigned int size = 0;
	if (!cb || !cb->get_module_function_table ||
	    !cb->get_module_function_table(1 /* CORE */, &table, &size) || !table || size < 11)
		return 0;
	*table[9] = (void (*)(void))fc_nvtx_RangePushA; /* NVTX_CBID_CORE_RangePushA */
	*table[11] = (void (*)(void))fc_nvtx_RangePop;	/* NVTX_CBID_CORE_RangePop */
	return 1;
}

FC_API void fakecupti_nvtx_counts(uint64_t *push, uint64_t *pop)
{
	*push = __atomic_load_n(&fc_nvtx_push, __ATOMIC_RELAXED);
	*pop = __atomic_load_n(&fc_nvtx_pop, __ATOMIC_RELAXED);
}

/* ---- the control API (fake_cupti.h) ---- */

/* $FAKECUPTI_BENCH=1 (bench/bench_cupti.sh): the ids of API records cached, since a system
 * call each per launch (over 1 us each on some virtual machines) would be most of the double's
 * own cost per launch; and the completion callbacks timed (fc_deliver_one_locked). Off by
 * default: the tests' timing stays as it was. */
static __thread uint32_t fc_tid_cached;
static uint32_t fc_pid_cached;

static int fc_bench(void)
{
	static int on = -1;
	int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
	if (v < 0) {
		const char *e = getenv("FAKECUPTI_BENCH");
		v = e && !strcmp(e, "1");
		__atomic_store_n(&on, v, __ATOMIC_RELAXED);
	}
	return v;
}

static void fc_forked(void)
{
	fc_tid_cached = 0;
	__atomic_store_n(&fc_pid_cached, 0, __ATOMIC_RELAXED);
}

static void fc_atfork(void)
{
	pthread_atfork(NULL, NULL, fc_forked);
}

/* CUPTI's threadId of an API record: the low 32 bits of the caller's pthread_self(), not its OS
 * thread id (as real CUPTI 13 gives it on an H200: docs/gpu.md). */
static uint32_t fc_tid(void)
{
	if (!fc_bench())
		return (uint32_t)(uintptr_t)pthread_self();
	if (!fc_tid_cached)
		fc_tid_cached = (uint32_t)(uintptr_t)pthread_self();
	return fc_tid_cached;
}

static uint32_t fc_pid(void)
{
	if (!fc_bench())
		return (uint32_t)getpid();
	uint32_t p = __atomic_load_n(&fc_pid_cached, __ATOMIC_RELAXED);
	if (!p) {
		static pthread_once_t once = PTHREAD_ONCE_INIT;
		pthread_once(&once, fc_atfork);
		p = (uint32_t)getpid();
		__atomic_store_n(&fc_pid_cached, p, __ATOMIC_RELAXED);
	}
	return p;
}

/* An API call record [start, now] of this thread, preceded by its external correlation. */
static void fc_api_locked(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint32_t corr)
{
	if (fc_ext_depth) {
		CUpti_ActivityExternalCorrelation x;
		memset(&x, 0, sizeof(x));
		x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
		x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
		x.externalId = fc_ext_stack[fc_ext_depth - 1];
		x.correlationId = corr;
		fc_emit_locked(&x, x.kind, NULL, 0);
	}
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.cbid = cbid;
	a.start = start;
	a.end = fc_now();
	if (a.end < a.start)
		a.end = a.start;
	a.processId = fc_pid();
	a.threadId = fc_tid();
	a.correlationId = corr;
	fc_emit_locked(&a, kind, NULL, 0);
}

/* When work of `dur` launched at `at` runs on (device, stream): after the stream is free. */
static uint64_t fc_slot_locked(uint32_t device, uint32_t stream, uint64_t at, uint64_t dur)
{
	uint64_t *busy = &fc_busy[device % 16][stream % 64];
	uint64_t start = at > *busy ? at : *busy;
	*busy = start + dur;
	return start;
}

FC_API uint32_t fakecupti_kernel(const char *name, uint32_t device, uint32_t stream, uint64_t dur,
				 const uint32_t grid[3], const uint32_t block[3], uint16_t regs,
				 int32_t shared)
{
	uint64_t t0 = fc_now();
	pthread_mutex_lock(&fc_lock);
	uint32_t corr = fc_next_corr++;
	fc_api_locked(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		      t0, corr);
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = fc_slot_locked(device, stream, t0, dur);
	k.end = k.start + dur;
	k.completed = k.end;
	k.deviceId = device;
	k.contextId = device + 1;
	k.streamId = stream;
	k.correlationId = corr;
	k.gridX = (int32_t)grid[0];
	k.gridY = (int32_t)grid[1];
	k.gridZ = (int32_t)grid[2];
	k.blockX = (int32_t)block[0];
	k.blockY = (int32_t)block[1];
	k.blockZ = (int32_t)block[2];
	k.registersPerThread = regs;
	k.staticSharedMemory = shared / 2;
	k.dynamicSharedMemory = shared - shared / 2;
	k.gridId = corr;
	fc_emit_locked(&k, k.kind, name, offsetof(CUpti_ActivityKernel10, name));
	pthread_mutex_unlock(&fc_lock);
	return corr;
}

FC_API uint32_t fakecupti_memcpy(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind,
				 uint64_t bytes, uint32_t device, uint32_t stream, uint64_t dur)
{
	uint64_t t0 = fc_now();
	pthread_mutex_lock(&fc_lock);
	uint32_t corr = fc_next_corr++;
	fc_api_locked(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
		      t0, corr);
	CUpti_ActivityMemcpy6 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	c.copyKind = copy_kind;
	c.srcKind = src_kind;
	c.dstKind = dst_kind;
	c.bytes = bytes;
	c.start = fc_slot_locked(device, stream, t0, dur);
	c.end = c.start + dur;
	c.deviceId = device;
	c.contextId = device + 1;
	c.streamId = stream;
	c.correlationId = corr;
	c.copyCount = 1;
	fc_emit_locked(&c, c.kind, NULL, 0);
	pthread_mutex_unlock(&fc_lock);
	return corr;
}

FC_API uint32_t fakecupti_memcpy_peer(uint32_t src_device, uint32_t dst_device, uint64_t bytes,
				      uint32_t stream, uint64_t dur)
{
	uint64_t t0 = fc_now();
	pthread_mutex_lock(&fc_lock);
	uint32_t corr = fc_next_corr++;
	fc_api_locked(CUPTI_ACTIVITY_KIND_RUNTIME,
		      CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000, t0, corr);
	CUpti_ActivityMemcpyPtoP4 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.bytes = bytes;
	c.start = fc_slot_locked(src_device, stream, t0, dur);
	c.end = c.start + dur;
	c.deviceId = src_device;
	c.contextId = src_device + 1;
	c.streamId = stream;
	c.srcDeviceId = src_device;
	c.dstDeviceId = dst_device;
	c.srcContextId = src_device + 1;
	c.dstContextId = dst_device + 1;
	c.correlationId = corr;
	fc_emit_locked(&c, c.kind, NULL, 0);
	pthread_mutex_unlock(&fc_lock);
	return corr;
}

FC_API uint32_t fakecupti_memset(uint64_t bytes, uint32_t value, uint32_t device, uint32_t stream,
				 uint64_t dur)
{
	uint64_t t0 = fc_now();
	pthread_mutex_lock(&fc_lock);
	uint32_t corr = fc_next_corr++;
	fc_api_locked(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
		      t0, corr);
	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.value = value;
	s.bytes = bytes;
	s.start = fc_slot_locked(device, stream, t0, dur);
	s.end = s.start + dur;
	s.deviceId = device;
	s.contextId = device + 1;
	s.streamId = stream;
	s.correlationId = corr;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	fc_emit_locked(&s, s.kind, NULL, 0);
	pthread_mutex_unlock(&fc_lock);
	return corr;
}

FC_API uint32_t fakecupti_sync(uint32_t type, uint32_t device, uint32_t stream, uint64_t dur)
{
	uint64_t t0 = fc_now();
	pthread_mutex_lock(&fc_lock);
	uint32_t corr = fc_next_corr++;
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = (CUpti_ActivitySynchronizationType)type;
	s.start = t0;
	s.end = t0 + dur;
	s.correlationId = corr;
	s.contextId = device + 1;
	s.streamId = stream;
	fc_emit_locked(&s, s.kind, NULL, 0);
	fc_api_locked(CUPTI_ACTIVITY_KIND_RUNTIME,
		      CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, t0, corr);
	pthread_mutex_unlock(&fc_lock);
	return corr;
}

FC_API uint32_t fakecupti_memory(int release, uint32_t device, uint64_t address, uint64_t bytes)
{
	uint64_t t0 = fc_now();
	pthread_mutex_lock(&fc_lock);
	uint32_t corr = fc_next_corr++;
	fc_api_locked(CUPTI_ACTIVITY_KIND_RUNTIME,
		      release ? CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020
			      : CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
		      t0, corr);
	CUpti_ActivityMemory4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
					: CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = corr;
	m.address = address;
	m.bytes = bytes;
	m.timestamp = t0;
	m.processId = fc_pid();
	m.deviceId = device;
	m.contextId = device + 1;
	fc_emit_locked(&m, m.kind, NULL, 0);
	pthread_mutex_unlock(&fc_lock);
	return corr;
}

FC_API void fakecupti_overhead(uint64_t dur)
{
	uint64_t t0 = fc_now();
	pthread_mutex_lock(&fc_lock);
	CUpti_ActivityOverhead3 o;
	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.processId = fc_pid();
	o.objectId.pt.threadId = fc_tid();
	o.start = t0;
	o.end = t0 + dur;
	fc_emit_locked(&o, o.kind, NULL, 0);
	pthread_mutex_unlock(&fc_lock);
}

FC_API void fakecupti_device(uint32_t id, const char *name, uint32_t sms, uint32_t cc_major,
			     uint32_t cc_minor, uint64_t memory)
{
	pthread_mutex_lock(&fc_lock);
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = id;
	d.numMultiprocessors = sms;
	d.computeCapabilityMajor = cc_major;
	d.computeCapabilityMinor = cc_minor;
	d.globalMemorySize = memory;
	d.globalMemoryBandwidth = 900000000;
	d.coreClockRate = 1410000;
	d.maxWarpsPerMultiprocessor = 64;
	fc_emit_locked(&d, d.kind, name, offsetof(CUpti_ActivityDevice5, name));
	pthread_mutex_unlock(&fc_lock);
}

FC_API void fakecupti_foreign_subscriber(int value)
{
	pthread_mutex_lock(&fc_lock);
	fc_foreign = value;
	pthread_mutex_unlock(&fc_lock);
}

FC_API void fakecupti_refuse_timestamp_callback(int value)
{
	pthread_mutex_lock(&fc_lock);
	fc_refuse_clock = value;
	pthread_mutex_unlock(&fc_lock);
}

FC_API void fakecupti_drop_records(int n)
{
	pthread_mutex_lock(&fc_lock);
	fc_drop_next += (uint64_t)n;
	pthread_mutex_unlock(&fc_lock);
}

FC_API void fakecupti_drain(void)
{
	pthread_mutex_lock(&fc_lock);
	while (fc_ndone >= 2 || fc_delivering) /* the worker wakes at two */
		pthread_cond_wait(&fc_idle, &fc_lock);
	pthread_mutex_unlock(&fc_lock);
}

FC_API void fakecupti_stats(struct fakecupti_stats *out)
{
	pthread_mutex_lock(&fc_lock);
	*out = fc_stats;
	pthread_mutex_unlock(&fc_lock);
}
