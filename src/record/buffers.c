/*
 * buffers.c: the per-thread event buffers (buffers.h: the chunk arena, the thread registry,
 * the queue of full chunks) and the hot path that fills them: every event goes through here
 * into the calling thread's chunk. Both live in one file because the fast path inlines the
 * thread's state (`tls`), which must stay a static initial-exec variable of this unit.
 *
 * Fast path of a range begin: one relaxed load of the recording word (compared with the
 * word the thread attached with), a bounds check, a TSC read, two 8-byte stores and a
 * release store of the committed count (a plain store on x86). No lock, no atomic
 * read-modify-write, no system call. Everything else (first event of a thread, a full chunk,
 * a new session, dropping) is in emit_slow(), which is lock-free too: chunks come from a
 * tagged lock-free stack and go to a lock-free queue; only the very first event of a thread
 * takes the registry lock (and mallocs its state).
 *
 * When no chunk is free the event is dropped and counted (per thread, in the registry and
 * in-stream as a DROP_MARK once the thread gets a chunk again). The program never waits.
 */
#include "record/buffers.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/clock.h"
#include "record/gpu.h"
#include "record/record.h"
#include "util/bytes.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

OPSCOPE_API uint64_t opscope_recording_word;

struct pool buffers_pool;
struct wakeword buffers_writer_wake;
struct rthread *_Atomic buffers_threads;
_Atomic uint32_t buffers_thread_count;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rthread *registry_tail; /* under registry_lock */
static pthread_key_t thread_exit_key;
static pthread_once_t thread_exit_once = PTHREAD_ONCE_INIT;

/* Per-thread state. initial-exec so the sampler's signal handlers may use it later and so
 * that no access ever calls into the dynamic loader. */
struct emit_tls {
	uint64_t word;		/* recording word this thread attached with (odd), or 0 */
	struct ops_slot *pos;	/* next free slot in `chunk` */
	uint32_t left;		/* free slots after pos */
	struct chunk *chunk;	/* current chunk, or NULL */
	struct rthread *thr;	/* registry entry, NULL until the first event */
	uint64_t pending_drops; /* drops not yet marked in the event stream */
	uint32_t seq;		/* chunks taken in this generation */
};
static __thread struct emit_tls tls __attribute__((tls_model("initial-exec")));

/* ---------------------------------------------------------------------------------------- */
/* Pool. */

static struct chunk *pool_chunk(uint32_t index)
{
	return (struct chunk *)(void *)(buffers_pool.arena +
					(size_t)index * buffers_pool.chunk_bytes);
}

int buffers_pool_init(size_t buffer_bytes, size_t chunk_bytes)
{
	if (buffers_pool.arena)
		return 0;
	if (chunk_bytes < 4096 || (chunk_bytes & (chunk_bytes - 1)))
		return -1;
	size_t n = buffer_bytes / chunk_bytes;
	if (n < 4)
		n = 4;
	if (n > UINT32_MAX / 2)
		n = UINT32_MAX / 2;
	/* MAP_POPULATE: take the page faults now, not on the hot path. */
	void *arena = mmap(NULL, n * chunk_bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (arena == MAP_FAILED)
		return -1;
	buffers_pool.arena = arena;
	buffers_pool.chunk_bytes = chunk_bytes;
	buffers_pool.nchunks = (uint32_t)n;
	buffers_pool.slots_per_chunk =
		(uint32_t)((chunk_bytes - sizeof(struct chunk)) / sizeof(struct ops_slot));
	atomic_store(&buffers_pool.free_head, 0);
	atomic_store(&buffers_pool.free_count, 0);
	for (uint32_t i = (uint32_t)n; i-- > 0;) {
		pool_chunk(i)->index = i;
		buffers_pool_put(pool_chunk(i));
	}
	return 0;
}

void buffers_pool_put(struct chunk *c)
{
	uint64_t head = atomic_load_explicit(&buffers_pool.free_head, memory_order_relaxed);
	uint64_t next;
	do {
		atomic_store_explicit(&c->next_free, (uint32_t)head, memory_order_relaxed);
		next = (((head >> 32) + 1) << 32) | (c->index + 1u);
	} while (!atomic_compare_exchange_weak_explicit(
		&buffers_pool.free_head, &head, next, memory_order_release, memory_order_relaxed));
	atomic_fetch_add_explicit(&buffers_pool.free_count, 1, memory_order_relaxed);
}

static struct chunk *pool_get(void)
{
	uint64_t head = atomic_load_explicit(&buffers_pool.free_head, memory_order_acquire);
	uint64_t next;
	struct chunk *c;
	do {
		uint32_t idx = (uint32_t)head;
		if (!idx) {
			wakeword_wake(&buffers_writer_wake); /* events are being dropped */
			return NULL;
		}
		c = pool_chunk(idx - 1);
		uint32_t after = atomic_load_explicit(&c->next_free, memory_order_relaxed);
		next = (((head >> 32) + 1) << 32) | after;
	} while (!atomic_compare_exchange_weak_explicit(
		&buffers_pool.free_head, &head, next, memory_order_acquire, memory_order_acquire));
	uint32_t left =
		atomic_fetch_sub_explicit(&buffers_pool.free_count, 1, memory_order_relaxed) - 1;
	/* A quarter of the pool left: the writer (which sleeps up to a flush interval when it
	 * had nothing to write) should take the full chunks now, not when it wakes. */
	if (left <= buffers_pool.nchunks / 4)
		wakeword_wake(&buffers_writer_wake);
	return c;
}

static void queue_full(struct chunk *c)
{
	struct chunk *head = atomic_load_explicit(&buffers_pool.full, memory_order_relaxed);
	do {
		atomic_store_explicit(&c->next, head, memory_order_relaxed);
	} while (!atomic_compare_exchange_weak_explicit(
		&buffers_pool.full, &head, c, memory_order_release, memory_order_relaxed));
}

struct chunk *buffers_take_full(void)
{
	struct chunk *c = atomic_exchange_explicit(&buffers_pool.full, NULL, memory_order_acquire);
	struct chunk *fifo = NULL;
	while (c) { /* reverse: pushes were LIFO */
		struct chunk *next = atomic_load_explicit(&c->next, memory_order_relaxed);
		atomic_store_explicit(&c->next, fifo, memory_order_relaxed);
		fifo = c;
		c = next;
	}
	return fifo;
}

/* ---------------------------------------------------------------------------------------- */
/* Thread registry. */

static void emit_thread_exit(void *arg)
{
	struct rthread *t = arg;
	/* The OS name is gone once the thread is; keep it unless the API named the thread. */
	char name[32] = { 0 };
	if (!atomic_load_explicit(&t->name_id, memory_order_relaxed) &&
	    prctl(PR_GET_NAME, name) == 0 && name[0])
		atomic_store_explicit(&t->name_id, record_intern(name, strlen(name)),
				      memory_order_relaxed);
	buffers_release_current();
	atomic_store_explicit(&t->exited, 1, memory_order_release);
}

static void emit_key_create(void)
{
	pthread_key_create(&thread_exit_key, emit_thread_exit);
}

/* Append a new entry for thread `tid` of this process (under registry_lock). */
static struct rthread *registry_add(pid_t tid, int foreign)
{
	struct rthread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->pid = getpid();
	t->is_main = t->tid == t->pid;
	t->foreign = foreign;
	t->track = atomic_load_explicit(&buffers_thread_count, memory_order_relaxed);
	if (registry_tail)
		atomic_store_explicit(&registry_tail->next, t, memory_order_release);
	else
		atomic_store_explicit(&buffers_threads, t, memory_order_release);
	registry_tail = t;
	atomic_store_explicit(&buffers_thread_count, t->track + 1, memory_order_release);
	return t;
}

/* The live entry of thread `tid` of this process, or NULL (under registry_lock). */
static struct rthread *registry_find(pid_t tid)
{
	pid_t pid = getpid();
	for (struct rthread *t = atomic_load_explicit(&buffers_threads, memory_order_acquire); t;
	     t = atomic_load_explicit(&t->next, memory_order_acquire))
		if (t->tid == tid && t->pid == pid &&
		    !atomic_load_explicit(&t->exited, memory_order_relaxed))
			return t;
	return NULL;
}

static struct rthread *emit_register_thread(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(&registry_lock);
	/* a sampler may have made this thread's track already: adopt it */
	struct rthread *t = registry_find(tid);
	if (t && t->foreign)
		t->foreign = 0;
	else
		t = registry_add(tid, 0);
	if (t)
		atomic_store_explicit(&t->pthread_low, (uint32_t)(uintptr_t)pthread_self(),
				      memory_order_relaxed);
	pthread_mutex_unlock(&registry_lock);
	if (!t)
		return NULL;
	pthread_once(&thread_exit_once, emit_key_create);
	pthread_setspecific(thread_exit_key, t);
	return t;
}

void buffers_register_current(void)
{
	if (!tls.thr)
		tls.thr = emit_register_thread();
}

pid_t buffers_tid_of_pthread(uint32_t low)
{
	pid_t pid = getpid(), found = 0;
	for (struct rthread *t = atomic_load_explicit(&buffers_threads, memory_order_acquire); t;
	     t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		if (t->pid != pid || !low ||
		    atomic_load_explicit(&t->pthread_low, memory_order_relaxed) != low)
			continue;
		found = t->tid; /* a later entry is the newer thread that got the same address */
		if (!atomic_load_explicit(&t->exited, memory_order_relaxed))
			return found;
	}
	return found;
}

uint32_t buffers_track_for_tid(pid_t tid)
{
	pthread_mutex_lock(&registry_lock);
	struct rthread *t = registry_find(tid);
	if (!t)
		t = registry_add(tid, 1);
	pthread_mutex_unlock(&registry_lock);
	return t ? t->track : UINT32_MAX;
}

void buffers_lock_for_fork(void)
{
	pthread_mutex_lock(&registry_lock);
}

void buffers_unlock_for_fork(void)
{
	pthread_mutex_unlock(&registry_lock);
}

/* In a forked child only the forking thread exists. Every chunk in the arena holds the
 * parent's data (the parent writes it), so the child starts from an empty pool; the other
 * threads' registry entries are marked exited and this thread gets a fresh entry. */
void buffers_after_fork_child(void)
{
	pthread_mutex_init(&registry_lock, NULL);
	for (struct rthread *t = atomic_load(&buffers_threads); t; t = atomic_load(&t->next)) {
		atomic_store(&t->exited, 1);
		atomic_store(&t->current, NULL);
	}
	if (buffers_pool.arena) {
		atomic_store(&buffers_pool.full, NULL);
		atomic_store(&buffers_pool.free_head, 0);
		atomic_store(&buffers_pool.free_count, 0);
		for (uint32_t i = buffers_pool.nchunks; i-- > 0;)
			buffers_pool_put(pool_chunk(i));
	}
	memset(&tls, 0, sizeof(tls));
}

/* ---------------------------------------------------------------------------------------- */
/* Slow path. */

/* Give the current chunk to the writer (or back, if it belongs to an older session). */
static void emit_retire_chunk(void)
{
	struct chunk *c = tls.chunk;
	if (!c)
		return;
	atomic_store_explicit(&tls.thr->current, NULL, memory_order_release);
	queue_full(c);
	tls.chunk = NULL;
	tls.pos = NULL;
	tls.left = 0;
}

void buffers_release_current(void)
{
	if (tls.chunk)
		emit_retire_chunk();
}

/* One event lost. Only this thread writes its counter, so no read-modify-write. */
static void emit_count_drop(void)
{
	tls.pending_drops++;
	uint64_t d = atomic_load_explicit(&tls.thr->dropped, memory_order_relaxed);
	atomic_store_explicit(&tls.thr->dropped, d + 1, memory_order_relaxed);
}

/* Reserve n contiguous slots (n <= 2) when the fast path could not. Returns NULL when not
 * recording or when the event must be dropped. */
static __attribute__((noinline)) struct ops_slot *emit_slow(uint64_t word, unsigned n)
{
	/* Acquire pairs with the session start's release: the arena is visible. */
	word = __atomic_load_n(&opscope_recording_word, __ATOMIC_ACQUIRE);
	if (!(word & 1))
		return NULL;
	if (!buffers_pool.arena)
		return NULL;
	if (unlikely(!tls.thr)) {
		tls.thr = emit_register_thread();
		if (!tls.thr)
			return NULL;
	}
	if (tls.word != word) {
		/* A new session: whatever we hold belongs to an older one. */
		emit_retire_chunk();
		tls.word = word;
		tls.seq = 0;
		tls.pending_drops = 0;
	}
	if (tls.chunk && tls.left >= n)
		return tls.pos;
	emit_retire_chunk();
	struct chunk *c = pool_get();
	if (!c) {
		emit_count_drop();
		return NULL;
	}
	atomic_store_explicit(&c->committed, 0, memory_order_relaxed);
	c->written = 0;
	c->track = tls.thr->track;
	c->seq = tls.seq++;
	c->gen = word >> 1;
	atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
	tls.chunk = c;
	tls.pos = c->slots;
	tls.left = buffers_pool.slots_per_chunk;
	if (tls.pending_drops) {
		struct ops_slot *p = tls.pos;
		p[0] = (struct ops_slot){ .ticks = clock_ticks(), .kind = OPS_EV_DROP_MARK };
		p[1] = (struct ops_slot){ .ticks = tls.pending_drops, .kind = OPS_SLOT_PAYLOAD };
		tls.pos += 2;
		tls.left -= 2;
		tls.pending_drops = 0;
		atomic_store_explicit(&c->committed, 2, memory_order_release);
	}
	/* Publish after the header is complete: the writer reads it through `current`. */
	atomic_store_explicit(&tls.thr->current, c, memory_order_release);
	return tls.pos;
}

/* Reserve n slots: the fast path is two compares. */
static inline struct ops_slot *emit_reserve(unsigned n)
{
	uint64_t word = __atomic_load_n(&opscope_recording_word, __ATOMIC_RELAXED);
	if (likely(word == tls.word && tls.left >= n))
		return tls.pos;
	return emit_slow(word, n);
}

static inline void emit_commit(struct ops_slot *next)
{
	tls.left -= (uint32_t)(next - tls.pos);
	tls.pos = next;
	atomic_store_explicit(&tls.chunk->committed, (uint32_t)(next - tls.chunk->slots),
			      memory_order_release);
}

/* ---------------------------------------------------------------------------------------- */
/* Emitters. */

static inline void emit_one(unsigned kind, unsigned cat, uint32_t name)
{
	struct ops_slot *p = emit_reserve(1);
	if (!p)
		return;
	p->ticks = clock_ticks();
	p->name = name;
	p->kind = (uint8_t)kind;
	p->cat = (uint8_t)cat;
	p->aux = 0;
	emit_commit(p + 1);
}

static inline void emit_two(unsigned kind, unsigned cat, uint32_t name, uint64_t payload)
{
	struct ops_slot *p = emit_reserve(2);
	if (!p)
		return;
	p[0] = (struct ops_slot){
		.ticks = clock_ticks(), .name = name, .kind = (uint8_t)kind, .cat = (uint8_t)cat
	};
	p[1] = (struct ops_slot){ .ticks = payload, .kind = OPS_SLOT_PAYLOAD };
	emit_commit(p + 2);
}

static inline void emit_arg(uint32_t key, unsigned type, uint64_t value)
{
	struct ops_slot *p = emit_reserve(1);
	if (!p)
		return;
	*p = (struct ops_slot){
		.ticks = value, .name = key, .kind = OPS_EV_ARG, .aux = (uint16_t)type
	};
	emit_commit(p + 1);
}

void record_emit_begin(uint32_t category, uint32_t name_id)
{
	emit_one(OPS_EV_BEGIN, category, name_id);
}

void record_emit_end(uint32_t name_id)
{
	emit_one(OPS_EV_END, 0, name_id);
}

void record_emit_instant(uint32_t category, uint32_t name_id)
{
	emit_one(OPS_EV_INSTANT, category, name_id);
}

void record_emit_counter(uint32_t name_id, double value)
{
	emit_two(OPS_EV_COUNTER, 0, name_id, f64_bits(value));
}

void record_emit_arg_i64(uint32_t key_id, int64_t value)
{
	emit_arg(key_id, OPS_ARG_I64, zigzag_encode(value));
}

void record_emit_arg_u64(uint32_t key_id, uint64_t value)
{
	emit_arg(key_id, OPS_ARG_U64, value);
}

void record_emit_arg_f64(uint32_t key_id, double value)
{
	emit_arg(key_id, OPS_ARG_F64, f64_bits(value));
}

void record_emit_arg_str(uint32_t key_id, uint32_t value_id)
{
	emit_arg(key_id, OPS_ARG_STR, value_id);
}

void record_emit_flow(int out, uint64_t flow_id)
{
	emit_two(out ? OPS_EV_FLOW_OUT : OPS_EV_FLOW_IN, 0, 0, flow_id);
}

void record_emit_async_begin(uint32_t category, uint32_t name_id, uint64_t async_id)
{
	emit_two(OPS_EV_ASYNC_BEGIN, category, name_id, async_id);
}

void record_emit_async_end(uint64_t async_id)
{
	emit_two(OPS_EV_ASYNC_END, 0, 0, async_id);
}

/* ---------------------------------------------------------------------------------------- */
/* Public API. */

static uint32_t emit_site_id(struct opscope_site *site)
{
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
	if (unlikely(!id)) {
		id = record_intern(site->name ? site->name : "",
				   site->name ? strlen(site->name) : 0);
		__atomic_store_n(&site->id, id, __ATOMIC_RELAXED);
	}
	return id;
}

OPSCOPE_API void opscope_range_begin_site(struct opscope_site *site)
{
	struct ops_slot *p = emit_reserve(1);
	if (!p)
		return;
	p->ticks = clock_ticks();
	p->name = emit_site_id(site);
	p->kind = OPS_EV_BEGIN;
	p->cat = (uint8_t)site->category;
	p->aux = 0;
	emit_commit(p + 1);
	record_gpu_range_begin();
}

OPSCOPE_API void opscope_range_begin(int category, const char *name)
{
	if (!opscope_recording())
		return;
	record_emit_begin((uint32_t)category, record_intern_cached(name));
	record_gpu_range_begin();
}

OPSCOPE_API void opscope_range_end(void)
{
	emit_one(OPS_EV_END, 0, 0);
	record_gpu_range_end();
}

OPSCOPE_API void opscope_instant(int category, const char *name)
{
	if (!opscope_recording())
		return;
	record_emit_instant((uint32_t)category, record_intern_cached(name));
}

OPSCOPE_API void opscope_counter(const char *name, double value)
{
	if (!opscope_recording())
		return;
	record_emit_counter(record_intern_cached(name), value);
}

OPSCOPE_API void opscope_arg_int(const char *key, int64_t value)
{
	if (opscope_recording())
		record_emit_arg_i64(record_intern_cached(key), value);
}

OPSCOPE_API void opscope_arg_uint(const char *key, uint64_t value)
{
	if (opscope_recording())
		record_emit_arg_u64(record_intern_cached(key), value);
}

OPSCOPE_API void opscope_arg_double(const char *key, double value)
{
	if (opscope_recording())
		record_emit_arg_f64(record_intern_cached(key), value);
}

OPSCOPE_API void opscope_arg_string(const char *key, const char *value)
{
	/* values too go through the per-thread address cache (it checks the content): callers
	 * such as the PyTorch observer pass the same few strings again and again */
	if (opscope_recording())
		record_emit_arg_str(record_intern_cached(key),
				    record_intern_cached(value ? value : ""));
}

OPSCOPE_API uint32_t opscope_string_id(const char *s, size_t len)
{
	return record_intern(s ? s : "", s ? len : 0);
}

OPSCOPE_API void opscope_range_begin_id(int category, uint32_t name_id)
{
	if (opscope_recording()) {
		record_emit_begin((uint32_t)category, name_id);
		record_gpu_range_begin();
	}
}

OPSCOPE_API void opscope_arg_int_id(uint32_t key_id, int64_t value)
{
	if (opscope_recording())
		record_emit_arg_i64(key_id, value);
}

OPSCOPE_API void opscope_arg_string_id(uint32_t key_id, uint32_t value_id)
{
	if (opscope_recording())
		record_emit_arg_str(key_id, value_id);
}

OPSCOPE_API void opscope_flow_out(uint64_t id)
{
	record_emit_flow(1, id);
}

OPSCOPE_API void opscope_flow_in(uint64_t id)
{
	record_emit_flow(0, id);
}

OPSCOPE_API void opscope_async_begin(int category, const char *name, uint64_t id)
{
	if (opscope_recording())
		record_emit_async_begin((uint32_t)category, record_intern_cached(name), id);
}

OPSCOPE_API void opscope_async_end(uint64_t id)
{
	record_emit_async_end(id);
}

void record_thread_name(const char *name)
{
	if (!tls.thr) {
		tls.thr = emit_register_thread();
		if (!tls.thr)
			return;
	}
	uint32_t id = name ? record_intern(name, strlen(name)) : 0;
	atomic_store_explicit(&tls.thr->name_id, id, memory_order_relaxed);
}

OPSCOPE_API void opscope_thread_name(const char *name)
{
	record_thread_name(name);
}
