/*
 * samples.c: the store of CPU stack samples (samples.h): three interned tables (mappings,
 * frames, stack entries) and the queue of samples the session writer drains.
 *
 * Invariants (the same as intern.c's, for the same reader):
 *   - each table's entries are kept in their on-disk layout (trace/format.h) in fixed pages
 *     that never move, and its count is published with release once an entry is complete,
 *     so the writer reads entries [0, count) without a lock;
 *   - an entry is published only after everything it refers to (a frame after its mapping
 *     and strings, a stack entry after its frame and parent), so a writer that reads the
 *     counts of stacks, then frames, then mappings, then strings has every reference covered;
 *   - lookups by content, appends and the sample queue are under one mutex. Not util/hashmap:
 *     the tables sit behind lock-free readers and fork handlers (see intern.c).
 */
#include "record/samples.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "record/buffers.h"
#include "record/record.h"
#include "trace/format.h"

#define TABLE_PAGE_SHIFT 12
#define TABLE_PAGE_SIZE	 (1u << TABLE_PAGE_SHIFT)
#define TABLE_MAX_PAGES	 4096 /* 16 M entries per table */

/* One interned table of fixed-size entries. */
struct table {
	size_t entry_bytes;			 /* size of one entry (its on-disk struct) */
	uint8_t *_Atomic pages[TABLE_MAX_PAGES]; /* entries, TABLE_PAGE_SIZE per page */
	_Atomic uint32_t count;			 /* published entries */
	uint32_t *slots;			 /* hash table of ids + 1 (0 empty), under lock */
	uint32_t mask;				 /* slots - 1 (power of two), 0 before first use */
};

static pthread_mutex_t samples_lock = PTHREAD_MUTEX_INITIALIZER;
static struct table mappings = { .entry_bytes = sizeof(struct ops_mapping_entry) };
static struct table frames = { .entry_bytes = sizeof(struct ops_frame_entry) };
static struct table stacks = { .entry_bytes = sizeof(struct ops_stack_entry) };

/* The queue of samples (under samples_lock), all of session generation `queue_gen`. */
static struct ops_sample_entry *queue;
static size_t queue_n, queue_cap;
static uint64_t queue_gen;
static _Atomic uint64_t samples_lost;

static uint64_t entry_hash(const void *e, size_t n)
{
	const uint8_t *p = e;
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a: entries are 8 to 32 bytes */
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static uint8_t *table_at(struct table *t, uint32_t id)
{
	uint8_t *page =
		atomic_load_explicit(&t->pages[id >> TABLE_PAGE_SHIFT], memory_order_acquire);
	return page + (size_t)(id & (TABLE_PAGE_SIZE - 1)) * t->entry_bytes;
}

/* Grow the hash table to twice the entries (under lock). */
static int table_rehash(struct table *t)
{
	uint32_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
	uint32_t size = t->mask ? (t->mask + 1) * 2 : 1024;
	uint32_t *slots = calloc(size, sizeof(*slots));
	if (!slots)
		return -1;
	for (uint32_t id = 0; id < n; id++) {
		uint32_t i = (uint32_t)entry_hash(table_at(t, id), t->entry_bytes) & (size - 1);
		while (slots[i])
			i = (i + 1) & (size - 1);
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = size - 1;
	return 0;
}

/* The id of entry `e` (entry_bytes bytes, padding zeroed), added if new; under lock. */
static uint32_t table_intern(struct table *t, const void *e)
{
	uint32_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
	if ((!t->mask || n >= (t->mask + 1) / 2) && table_rehash(t) != 0)
		return RECORD_SAMPLE_NONE;
	uint32_t i = (uint32_t)entry_hash(e, t->entry_bytes) & t->mask;
	for (; t->slots[i]; i = (i + 1) & t->mask)
		if (memcmp(table_at(t, t->slots[i] - 1), e, t->entry_bytes) == 0)
			return t->slots[i] - 1;
	if (n >= (uint32_t)TABLE_MAX_PAGES * TABLE_PAGE_SIZE)
		return RECORD_SAMPLE_NONE;
	uint32_t pi = n >> TABLE_PAGE_SHIFT;
	if (!atomic_load_explicit(&t->pages[pi], memory_order_relaxed)) {
		uint8_t *page = calloc(TABLE_PAGE_SIZE, t->entry_bytes);
		if (!page)
			return RECORD_SAMPLE_NONE;
		atomic_store_explicit(&t->pages[pi], page, memory_order_release);
	}
	memcpy(table_at(t, n), e, t->entry_bytes);
	t->slots[i] = n + 1;
	atomic_store_explicit(&t->count, n + 1, memory_order_release);
	return n;
}

static uint32_t table_count(struct table *t)
{
	return atomic_load_explicit(&t->count, memory_order_acquire);
}

uint32_t record_sample_mapping(uint64_t start, uint64_t end, uint64_t file_offset, const char *path,
			       const char *build_id)
{
	if (end <= start)
		return RECORD_SAMPLE_NONE;
	struct ops_mapping_entry e;
	memset(&e, 0, sizeof(e));
	e.start = start;
	e.end = end;
	e.file_offset = file_offset;
	/* strings first: published before the entry that names them */
	if (path && *path && !(e.path_id = record_intern(path, strlen(path))))
		return RECORD_SAMPLE_NONE;
	if (build_id && *build_id && !(e.build_id = record_intern(build_id, strlen(build_id))))
		return RECORD_SAMPLE_NONE;
	pthread_mutex_lock(&samples_lock);
	uint32_t id = table_intern(&mappings, &e);
	pthread_mutex_unlock(&samples_lock);
	return id;
}

uint32_t record_sample_frame_native(uint32_t mapping, uint64_t address)
{
	struct ops_frame_entry e;
	memset(&e, 0, sizeof(e));
	e.kind = OPS_FRAME_NATIVE;
	e.mapping = mapping == RECORD_SAMPLE_NONE ? OPS_NO_ID : mapping;
	e.address = address;
	pthread_mutex_lock(&samples_lock);
	uint32_t id = RECORD_SAMPLE_NONE;
	if (mapping == RECORD_SAMPLE_NONE) {
		id = table_intern(&frames, &e);
	} else if (mapping < table_count(&mappings)) {
		const struct ops_mapping_entry *m = (const void *)table_at(&mappings, mapping);
		if (address >= m->start && address < m->end)
			id = table_intern(&frames, &e);
	}
	pthread_mutex_unlock(&samples_lock);
	return id;
}

uint32_t record_sample_frame_python(const char *name, const char *file, int32_t line)
{
	struct ops_frame_entry e;
	memset(&e, 0, sizeof(e));
	e.kind = OPS_FRAME_PYTHON;
	e.mapping = OPS_NO_ID;
	e.line = line;
	if (name && *name && !(e.name_id = record_intern(name, strlen(name))))
		return RECORD_SAMPLE_NONE;
	if (file && *file && !(e.file_id = record_intern(file, strlen(file))))
		return RECORD_SAMPLE_NONE;
	pthread_mutex_lock(&samples_lock);
	uint32_t id = table_intern(&frames, &e);
	pthread_mutex_unlock(&samples_lock);
	return id;
}

uint32_t record_sample_stack_under(uint32_t parent, const uint32_t *frames_outer, size_t n,
				   uint32_t *ids)
{
	if (n == 0)
		return parent;
	pthread_mutex_lock(&samples_lock);
	uint32_t nframes = table_count(&frames);
	if (parent != RECORD_SAMPLE_NONE && parent >= table_count(&stacks)) {
		pthread_mutex_unlock(&samples_lock);
		return RECORD_SAMPLE_NONE; /* not an entry */
	}
	if (parent == RECORD_SAMPLE_NONE)
		parent = OPS_NO_ID; /* the root (the same value, named for the format) */
	size_t i = 0;
	/* outermost first: each entry's parent is interned before it */
	for (; i < n; i++) {
		if (frames_outer[i] >= nframes)
			break;
		struct ops_stack_entry e = { parent, frames_outer[i] };
		if ((parent = table_intern(&stacks, &e)) == RECORD_SAMPLE_NONE)
			break;
		if (ids)
			ids[i] = parent;
	}
	pthread_mutex_unlock(&samples_lock);
	return i == n ? parent : RECORD_SAMPLE_NONE;
}

uint32_t record_sample_stack(const uint32_t *ids, size_t n)
{
	if (n == 0)
		return RECORD_SAMPLE_NONE;
	pthread_mutex_lock(&samples_lock);
	uint32_t nframes = table_count(&frames);
	uint32_t parent = OPS_NO_ID;
	/* outermost first: each entry's parent is interned before it */
	for (size_t i = n; i-- > 0;) {
		if (ids[i] >= nframes) {
			parent = RECORD_SAMPLE_NONE;
			break;
		}
		struct ops_stack_entry e = { parent, ids[i] };
		if ((parent = table_intern(&stacks, &e)) == RECORD_SAMPLE_NONE)
			break;
	}
	pthread_mutex_unlock(&samples_lock);
	return parent;
}

uint32_t record_sample_track(pid_t tid)
{
	return buffers_track_for_tid(tid);
}

int record_sample(uint32_t track, uint64_t ticks, uint32_t stack, int64_t weight, uint32_t flags)
{
	uint64_t word = __atomic_load_n(&opscope_recording_word, __ATOMIC_ACQUIRE);
	if (!(word & 1))
		return 0;
	uint64_t gen = word >> 1;
	int rc = 0;
	pthread_mutex_lock(&samples_lock);
	if (stack != RECORD_SAMPLE_NONE && stack >= table_count(&stacks)) {
		rc = -1;
		goto out;
	}
	if (queue_gen != gen) {
		queue_n = 0; /* an older session's, never taken */
		queue_gen = gen;
	}
	if (queue_n == queue_cap) {
		size_t cap = queue_cap ? queue_cap * 2 : 1024;
		struct ops_sample_entry *q = realloc(queue, cap * sizeof(*q));
		if (!q) {
			atomic_fetch_add_explicit(&samples_lost, 1, memory_order_relaxed);
			rc = -1;
			goto out;
		}
		queue = q;
		queue_cap = cap;
	}
	queue[queue_n++] = (struct ops_sample_entry){
		.track = track,
		.stack = stack == RECORD_SAMPLE_NONE ? OPS_NO_ID : stack,
		.ticks = ticks,
		.weight = weight,
		.flags = flags & RECORD_SAMPLE_TRUNCATED,
	};
out:
	pthread_mutex_unlock(&samples_lock);
	return rc;
}

uint64_t record_samples_lost(void)
{
	return atomic_load_explicit(&samples_lost, memory_order_relaxed);
}

uint32_t samples_count_mappings(void)
{
	return table_count(&mappings);
}

uint32_t samples_count_frames(void)
{
	return table_count(&frames);
}

uint32_t samples_count_stacks(void)
{
	return table_count(&stacks);
}

const void *samples_mapping(uint32_t id)
{
	return table_at(&mappings, id);
}

const void *samples_frame(uint32_t id)
{
	return table_at(&frames, id);
}

const void *samples_stack(uint32_t id)
{
	return table_at(&stacks, id);
}

void *samples_take(uint64_t gen, size_t min, size_t *n)
{
	void *out = NULL;
	*n = 0;
	pthread_mutex_lock(&samples_lock);
	if (queue_gen == gen && queue_n < min) {
		pthread_mutex_unlock(&samples_lock);
		return NULL;
	}
	if (queue_n && queue_gen == gen) {
		out = queue;
		*n = queue_n;
		queue = NULL;
		queue_cap = 0;
	}
	queue_n = 0;
	pthread_mutex_unlock(&samples_lock);
	return out;
}

void samples_lock_for_fork(void)
{
	pthread_mutex_lock(&samples_lock);
}

void samples_unlock_for_fork(void)
{
	pthread_mutex_unlock(&samples_lock);
}

void samples_after_fork_child(void)
{
	pthread_mutex_init(&samples_lock, NULL);
	queue_n = 0;
}
