/*
 * gpu.c: the queue of GPU activity entries (gpu.h) between a GPU collector and the writer.
 * One growable array under one mutex: the collector hands over a whole decoded CUPTI buffer
 * at a time (thousands of entries), so the lock is taken once per buffer, not per record.
 */
#include "record/gpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "opscope/opscope.h"

#include "record/buffers.h"
#include "record/record.h"
#include "util/error.h"

static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ops_gpu_entry *queue;
static size_t queue_n, queue_cap;
/* The array the writer gave back after its last round (gpu_give_back), made the queue again at
 * the next take: a fresh array each round meant realloc growth and page faults on new memory
 * in the completion callback (bench/bench_cupti.sh: 330-440 ns of CPU per record, against
 * 130-150 with malloc keeping its memory). Kept only up to SPARE_MAX bytes. */
static struct ops_gpu_entry *spare;
static size_t spare_cap;
#define SPARE_MAX (64u << 20)
static uint64_t queue_gen;
static _Atomic uint64_t gpu_dropped;
static const struct record_gpu_hooks *_Atomic gpu_hooks;

size_t record_gpu_entries(const struct ops_gpu_entry *e, size_t n)
{
	uint64_t word = __atomic_load_n(&opscope_recording_word, __ATOMIC_ACQUIRE);
	if (!(word & 1) || !n)
		return 0;
	uint64_t gen = word >> 1;
	size_t done = 0;
	pthread_mutex_lock(&gpu_lock);
	if (queue_gen != gen) {
		queue_n = 0; /* an older session's, never taken */
		queue_gen = gen;
	}
	if (queue_n + n > queue_cap) {
		size_t cap = queue_cap ? queue_cap : 4096;
		while (cap < queue_n + n)
			cap *= 2;
		struct ops_gpu_entry *q = realloc(queue, cap * sizeof(*q));
		if (q) {
			queue = q;
			queue_cap = cap;
		}
	}
	if (queue_n + n <= queue_cap) {
		struct ops_gpu_entry *q = queue + queue_n;
		memcpy(q, e, n * sizeof(*e));
		uint64_t low = UINT64_MAX; /* the last id looked up, and what it gave */
		pid_t tid = 0;
		for (size_t i = 0; i < n; i++) {
			if (q[i].kind != OPS_GPU_RUNTIME && q[i].kind != OPS_GPU_DRIVER)
				continue;
			if (q[i].bytes != low) {
				low = q[i].bytes;
				tid = low <= UINT32_MAX ? buffers_tid_of_pthread((uint32_t)low) : 0;
			}
			if (tid)
				q[i].bytes = (uint64_t)tid;
		}
		queue_n += n;
		done = n;
	}
	pthread_mutex_unlock(&gpu_lock);
	if (done < n)
		atomic_fetch_add_explicit(&gpu_dropped, n - done, memory_order_relaxed);
	return done;
}

void record_gpu_dropped(uint64_t n)
{
	atomic_fetch_add_explicit(&gpu_dropped, n, memory_order_relaxed);
}

uint64_t gpu_dropped_total(void)
{
	return atomic_load_explicit(&gpu_dropped, memory_order_relaxed);
}

void record_gpu_register_thread(void)
{
	buffers_register_current();
}

void record_gpu_set_hooks(const struct record_gpu_hooks *hooks)
{
	atomic_store(&gpu_hooks, hooks);
}

static int (*_Atomic gpu_starter)(void);

void record_gpu_set_starter(int (*start)(void))
{
	atomic_store(&gpu_starter, start);
}

OPSCOPE_API int opscope_gpu_start(void)
{
	error_clear();
	int (*start)(void) = atomic_load(&gpu_starter);
	if (!start)
		return error_set(
			OPSCOPE_EUNSUPPORTED,
			"this libopscope was built without the GPU collector (no cupti.h)");
	if (start() != 0)
		return error_set(OPSCOPE_EUNSUPPORTED, "CUPTI cannot be used (see the warning)");
	return 0;
}

void record_gpu_flush(void)
{
	const struct record_gpu_hooks *h = atomic_load(&gpu_hooks);
	if (h && h->flush)
		h->flush();
}

static _Atomic uint64_t gpu_next_range_id = 1;
static uint32_t gpu_key_external;

void record_gpu_range_begin(void)
{
	const struct record_gpu_hooks *h = atomic_load_explicit(&gpu_hooks, memory_order_acquire);
	if (!h || !h->range_begin)
		return;
	uint64_t id = atomic_fetch_add_explicit(&gpu_next_range_id, 1, memory_order_relaxed);
	uint32_t key = __atomic_load_n(&gpu_key_external, __ATOMIC_RELAXED);
	if (!key) {
		key = record_intern("external_id", 11);
		__atomic_store_n(&gpu_key_external, key, __ATOMIC_RELAXED);
	}
	record_emit_arg_u64(key, id);
	h->range_begin(id);
}

void record_gpu_range_end(void)
{
	const struct record_gpu_hooks *h = atomic_load_explicit(&gpu_hooks, memory_order_acquire);
	if (h && h->range_end)
		h->range_end();
}

struct ops_gpu_entry *gpu_take(uint64_t gen, size_t *n, size_t *cap)
{
	struct ops_gpu_entry *out = NULL;
	*n = 0;
	*cap = 0;
	pthread_mutex_lock(&gpu_lock);
	if (queue_n && queue_gen == gen) {
		out = queue;
		*n = queue_n;
		*cap = queue_cap;
		queue = spare;
		queue_cap = spare_cap;
		spare = NULL;
		spare_cap = 0;
	}
	queue_n = 0;
	pthread_mutex_unlock(&gpu_lock);
	return out;
}

void gpu_give_back(struct ops_gpu_entry *q, size_t cap)
{
	if (!q)
		return;
	if (cap > SPARE_MAX / sizeof(*q)) {
		free(q);
		return;
	}
	pthread_mutex_lock(&gpu_lock);
	if (!spare || spare_cap < cap) {
		struct ops_gpu_entry *old = spare;
		spare = q;
		spare_cap = cap;
		q = old;
	}
	pthread_mutex_unlock(&gpu_lock);
	free(q);
}

void gpu_lock_for_fork(void)
{
	pthread_mutex_lock(&gpu_lock);
}

void gpu_unlock_for_fork(void)
{
	pthread_mutex_unlock(&gpu_lock);
}

void gpu_after_fork_child(void)
{
	pthread_mutex_init(&gpu_lock, NULL);
	queue_n = 0;
}
