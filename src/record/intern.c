/*
 * intern.c: the process-wide string table. Names become small ids once; events carry ids.
 *
 * Invariants:
 *   - ids are dense, start at 1, and are never reused or freed while the process lives, so a
 *     session writer can read entries [1, intern_count()) without a lock;
 *   - entries live in fixed pages (no realloc of published memory); the count is published
 *     with release after the entry is complete, and read with acquire;
 *   - lookups by content go through an open-addressing hash table under a mutex (slow path);
 *     the per-thread cache in record_intern_cached avoids it for repeated dynamic names.
 */
#include "record/intern.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "record/record.h"

#define INTERN_PAGE_SHIFT 12
#define INTERN_PAGE_SIZE  (1u << INTERN_PAGE_SHIFT)
#define INTERN_MAX_PAGES  4096 /* 16 M strings */

struct intern_entry {
	const char *str; /* NUL-terminated copy, never freed */
	uint32_t len;	 /* bytes, without the NUL */
	uint32_t hash;	 /* of the content */
};

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static struct intern_entry *_Atomic intern_pages[INTERN_MAX_PAGES];
static _Atomic uint32_t intern_next = 1; /* next id; entries < intern_next are complete */
/* hash table of ids (0 = empty), power-of-two size, under intern_lock. Not util/hashmap.h:
 * the runtime's table sits behind lock-free readers of the pages above and a fork handler,
 * and grows with calloc while the lock is held; util/hashmap is single-threaded. */
static uint32_t *intern_slots;
static uint32_t intern_slots_mask;

/* Copies of strings are carved from big blocks (under the lock). */
static char *intern_block;
static size_t intern_block_left;

static uint32_t intern_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return (uint32_t)(h ^ (h >> 32));
}

static struct intern_entry *intern_entry(uint32_t id)
{
	struct intern_entry *page =
		atomic_load_explicit(&intern_pages[id >> INTERN_PAGE_SHIFT], memory_order_acquire);
	return page ? &page[id & (INTERN_PAGE_SIZE - 1)] : NULL;
}

uint32_t intern_count(void)
{
	return atomic_load_explicit(&intern_next, memory_order_acquire);
}

const char *record_string(uint32_t id, uint32_t *len)
{
	if (id == 0 || id >= intern_count())
		return NULL;
	struct intern_entry *e = intern_entry(id);
	if (len)
		*len = e->len;
	return e->str;
}

static char *intern_copy(const char *s, size_t len)
{
	if (len + 1 > intern_block_left) {
		size_t size = len + 1 > 65536 ? len + 1 : 65536;
		intern_block = malloc(size);
		if (!intern_block) {
			intern_block_left = 0;
			return NULL;
		}
		intern_block_left = size;
	}
	char *p = intern_block;
	memcpy(p, s, len);
	p[len] = '\0';
	intern_block += len + 1;
	intern_block_left -= len + 1;
	return p;
}

static int intern_grow(void)
{
	uint32_t size = intern_slots ? (intern_slots_mask + 1) * 2 : 1024;
	uint32_t *slots = calloc(size, sizeof(*slots));
	if (!slots)
		return -1;
	uint32_t count = atomic_load_explicit(&intern_next, memory_order_relaxed);
	for (uint32_t id = 1; id < count; id++) {
		uint32_t i = intern_entry(id)->hash & (size - 1);
		while (slots[i])
			i = (i + 1) & (size - 1);
		slots[i] = id;
	}
	free(intern_slots);
	intern_slots = slots;
	intern_slots_mask = size - 1;
	return 0;
}

uint32_t record_intern(const char *s, size_t len)
{
	if (!s)
		return 0;
	if (len > UINT32_MAX / 2)
		len = UINT32_MAX / 2;
	uint32_t hash = intern_hash(s, len);
	uint32_t id = 0;
	pthread_mutex_lock(&intern_lock);
	uint32_t count = atomic_load_explicit(&intern_next, memory_order_relaxed);
	if ((!intern_slots || (count + 1) * 2 > intern_slots_mask + 1) && intern_grow() != 0)
		goto out;
	uint32_t i = hash & intern_slots_mask;
	for (; intern_slots[i]; i = (i + 1) & intern_slots_mask) {
		struct intern_entry *e = intern_entry(intern_slots[i]);
		if (e->hash == hash && e->len == len && memcmp(e->str, s, len) == 0) {
			id = intern_slots[i];
			goto out;
		}
	}
	if (count >= (uint32_t)INTERN_MAX_PAGES * INTERN_PAGE_SIZE)
		goto out;
	uint32_t page = count >> INTERN_PAGE_SHIFT;
	if (!atomic_load_explicit(&intern_pages[page], memory_order_relaxed)) {
		struct intern_entry *p = calloc(INTERN_PAGE_SIZE, sizeof(*p));
		if (!p)
			goto out;
		atomic_store_explicit(&intern_pages[page], p, memory_order_release);
	}
	char *copy = intern_copy(s, len);
	if (!copy)
		goto out;
	struct intern_entry *e = intern_entry(count);
	e->str = copy;
	e->len = (uint32_t)len;
	e->hash = hash;
	intern_slots[i] = count;
	id = count;
	atomic_store_explicit(&intern_next, count + 1, memory_order_release);
out:
	pthread_mutex_unlock(&intern_lock);
	return id;
}

/* Per-thread cache: pointer -> id, verified by comparing content with the interned copy,
 * because callers may reuse one buffer for different names. Big enough for the names and
 * argument values a program passes again and again (NVTX ranges, Python ranges: a few
 * hundred), small enough to give every recording thread one (16 KiB). */
#define INTERN_CACHE_BITS 10
#define INTERN_CACHE_SIZE (1u << INTERN_CACHE_BITS)

struct intern_cache_entry {
	const char *ptr; /* caller's pointer */
	uint32_t id;	 /* its id when last seen */
};

/* The cache lives on the heap: the library's TLS must stay small, because it is all static
 * TLS (buffers.c's state is initial-exec) and a library that NVTX dlopens only gets the few
 * bytes of static TLS the loader keeps spare. Freed by a key destructor at thread exit. */
static __thread struct intern_cache_entry *intern_cache;
static pthread_key_t intern_cache_key;
static pthread_once_t intern_cache_once = PTHREAD_ONCE_INIT;

static void intern_cache_free(void *p)
{
	free(p);
}

static void intern_cache_key_create(void)
{
	pthread_key_create(&intern_cache_key, intern_cache_free);
}

static struct intern_cache_entry *intern_cache_get(void)
{
	if (!intern_cache) {
		pthread_once(&intern_cache_once, intern_cache_key_create);
		intern_cache = calloc(INTERN_CACHE_SIZE, sizeof(*intern_cache));
		if (intern_cache)
			pthread_setspecific(intern_cache_key, intern_cache);
	}
	return intern_cache;
}

uint32_t record_intern_cached(const char *s)
{
	if (!s)
		return 0;
	struct intern_cache_entry *cache = intern_cache_get();
	if (!cache)
		return record_intern(s, strlen(s));
	/* Fibonacci hashing: the top bits of the product mix all the address bits (the low
	 * ones are often zero: aligned heap blocks) */
	uint64_t p = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull;
	struct intern_cache_entry *c = &cache[p >> (64 - INTERN_CACHE_BITS)];
	if (c->ptr == s && c->id) {
		struct intern_entry *e = intern_entry(c->id);
		if (strncmp(e->str, s, e->len) == 0 && s[e->len] == '\0')
			return c->id;
	}
	uint32_t id = record_intern(s, strlen(s));
	c->ptr = s;
	c->id = id;
	return id;
}

void intern_after_fork_child(void)
{
	pthread_mutex_init(&intern_lock, NULL);
}

void intern_lock_for_fork(void)
{
	pthread_mutex_lock(&intern_lock);
}

void intern_unlock_for_fork(void)
{
	pthread_mutex_unlock(&intern_lock);
}
