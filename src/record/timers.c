/*
 * timers.c: scoped timers, aggregate statistics per name (count, total, max, min), the cheap
 * production form of paddle's StatSet/REGISTER_TIMER. They work with or without a session and
 * never emit events: a timer is a number, not a range in the trace (the session writer stores
 * the final table in the file through timers_snapshot()).
 *
 * Invariants:
 *   - a name gets a dense id (1, 2, ...) once, under timers_lock; names are copied and never
 *     freed; a call site caches its id in its opscope_timer_site;
 *   - each thread has its own slots, in pages indexed by id, written only by that thread with
 *     relaxed atomic loads and stores (no read-modify-write), so the fast path takes no lock
 *     and a reader on another thread sees each field without a data race (a reader may see
 *     one sample half-applied across fields; totals are exact once the writer is quiet);
 *   - a thread that exits merges its slots into the "retired" table (pthread key destructor);
 *   - reset bumps a global epoch instead of writing other threads' slots: an owner zeroes its
 *     own slots when it sees a new epoch, and readers skip threads still on an old epoch, so
 *     a reset can never be undone by a concurrent sample;
 *   - times are in ns: timer_stop converts a tick difference with record_ticks_to_ns.
 */
#include "record/timers.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "record/clock.h"
#include "record/record.h"

#define TIMERS_PAGE_SHIFT 6
#define TIMERS_PAGE_SIZE  (1u << TIMERS_PAGE_SHIFT)
#define TIMERS_PAGES	  256
#define TIMERS_MAX	  (TIMERS_PAGES * TIMERS_PAGE_SIZE) /* ids 1 .. TIMERS_MAX - 1 */
#define TIMERS_HASH_SIZE  (2 * TIMERS_MAX)		    /* power of two */
#define TIMERS_ID_FULL	  UINT32_MAX			    /* a site whose name found no id */

struct timers_slot {
	_Atomic uint64_t count;	   /* samples */
	_Atomic uint64_t total_ns; /* sum */
	_Atomic uint64_t max_ns;   /* largest (valid when count > 0) */
	_Atomic uint64_t min_ns;   /* smallest (valid when count > 0) */
};

struct timers_page {
	struct timers_slot slot[TIMERS_PAGE_SIZE];
};

struct timers_thread {
	struct timers_page *_Atomic pages[TIMERS_PAGES]; /* allocated by the owner on demand */
	_Atomic uint64_t epoch;				 /* reset epoch the slots belong to */
	struct timers_thread *next;   /* list of live threads, under timers_lock */
	struct timers_thread **pprev; /* the pointer to this one, under timers_lock */
};

/* Merged figures while collecting (plain integers, under timers_lock). */
struct timers_sum {
	uint64_t count, total_ns, max_ns, min_ns;
};

static pthread_mutex_t timers_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *_Atomic timers_names[TIMERS_MAX]; /* id -> name; published with release */
static uint32_t timers_next = 1;		     /* next id, under timers_lock */
/* ids by name hash, under timers_lock: a fixed table (TIMERS_MAX ids), never allocated on
 * the timer path, which util/hashmap.h's growing tables would do */
static uint32_t timers_hash[TIMERS_HASH_SIZE];
static struct timers_sum *timers_retired;    /* [TIMERS_MAX], under timers_lock */
static struct timers_thread *timers_threads; /* live threads, under timers_lock */
static _Atomic uint64_t timers_epoch;	     /* bumped by opscope_timers_reset */

static pthread_once_t timers_once = PTHREAD_ONCE_INIT;
static void timers_init(void); /* the thread-exit key and the fork handlers */
static pthread_key_t timers_key;
static _Thread_local struct timers_thread *timers_self;

/* Per-thread cache for opscope_timer_add_ns: name pointer -> id, verified by content. */
struct timers_cache_entry {
	const char *name;
	uint32_t id;
};
/* Small on purpose: all of the library's TLS is static TLS (see intern.c). */
static _Thread_local struct timers_cache_entry timers_cache[8];

/* ---------------------------------------------------------------------------------------- */
/* Registry. */

static uint32_t timers_hash_str(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* The id of `name`, registering it on first use; 0 when the table is full or memory is out. */
static uint32_t timers_register(const char *name)
{
	uint32_t mask = TIMERS_HASH_SIZE - 1;
	uint32_t i = timers_hash_str(name) & mask;
	uint32_t id = 0;
	pthread_once(&timers_once, timers_init);
	pthread_mutex_lock(&timers_lock);
	for (;; i = (i + 1) & mask) {
		uint32_t cand = timers_hash[i];
		if (!cand)
			break;
		if (strcmp(atomic_load_explicit(&timers_names[cand], memory_order_relaxed), name) ==
		    0) {
			id = cand;
			goto out;
		}
	}
	if (timers_next >= TIMERS_MAX)
		goto out;
	char *copy = strdup(name);
	if (!copy)
		goto out;
	id = timers_next++;
	atomic_store_explicit(&timers_names[id], copy, memory_order_release);
	timers_hash[i] = id;
out:
	pthread_mutex_unlock(&timers_lock);
	return id;
}

static uint32_t timers_lookup(const char *name)
{
	uint32_t mask = TIMERS_HASH_SIZE - 1;
	for (uint32_t i = timers_hash_str(name) & mask;; i = (i + 1) & mask) {
		uint32_t cand = timers_hash[i];
		if (!cand)
			return 0;
		if (strcmp(atomic_load_explicit(&timers_names[cand], memory_order_relaxed), name) ==
		    0)
			return cand;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Per-thread slots. */

static void timers_sum_add(struct timers_sum *dst, uint64_t count, uint64_t total, uint64_t max,
			   uint64_t min)
{
	if (!count)
		return;
	if (!dst->count || min < dst->min_ns)
		dst->min_ns = min;
	if (!dst->count || max > dst->max_ns)
		dst->max_ns = max;
	dst->count += count;
	dst->total_ns += total;
}

/* Add the slots of `t` for ids [1, n) to sums[id]. Called with timers_lock held. */
static void timers_collect_thread(struct timers_thread *t, struct timers_sum *sums, uint32_t n)
{
	if (atomic_load_explicit(&t->epoch, memory_order_acquire) !=
	    atomic_load_explicit(&timers_epoch, memory_order_relaxed))
		return; /* reset since this thread last wrote: its slots count as zero */
	for (uint32_t p = 0; p < TIMERS_PAGES && (p << TIMERS_PAGE_SHIFT) < n; p++) {
		struct timers_page *page = atomic_load_explicit(&t->pages[p], memory_order_acquire);
		if (!page)
			continue;
		for (uint32_t k = 0; k < TIMERS_PAGE_SIZE; k++) {
			uint32_t id = (p << TIMERS_PAGE_SHIFT) + k;
			if (id >= n)
				break;
			struct timers_slot *s = &page->slot[k];
			uint64_t c = atomic_load_explicit(&s->count, memory_order_relaxed);
			if (!c)
				continue;
			timers_sum_add(&sums[id], c,
				       atomic_load_explicit(&s->total_ns, memory_order_relaxed),
				       atomic_load_explicit(&s->max_ns, memory_order_relaxed),
				       atomic_load_explicit(&s->min_ns, memory_order_relaxed));
		}
	}
}

static void timers_thread_exit(void *arg)
{
	struct timers_thread *t = arg;
	pthread_mutex_lock(&timers_lock);
	uint32_t n = timers_next;
	if (!timers_retired)
		timers_retired = calloc(TIMERS_MAX, sizeof(*timers_retired));
	if (timers_retired)
		timers_collect_thread(t, timers_retired, n);
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	pthread_mutex_unlock(&timers_lock);
	for (uint32_t p = 0; p < TIMERS_PAGES; p++)
		free(atomic_load_explicit(&t->pages[p], memory_order_relaxed));
	free(t);
	timers_self = NULL; /* a later timer in another destructor registers afresh */
}

/* fork() while another thread holds timers_lock would leave the child's lock held forever:
 * the session's fork handler takes it, in its place among the recorder's locks. */
void timers_lock_for_fork(void)
{
	pthread_mutex_lock(&timers_lock);
}

void timers_unlock_for_fork(void)
{
	pthread_mutex_unlock(&timers_lock);
}

static void timers_init(void)
{
	pthread_key_create(&timers_key, timers_thread_exit);
	record_fork_handlers_install();
}

static struct timers_thread *timers_thread_new(void)
{
	pthread_once(&timers_once, timers_init);
	struct timers_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_lock(&timers_lock);
	atomic_store_explicit(&t->epoch, atomic_load(&timers_epoch), memory_order_relaxed);
	t->next = timers_threads;
	if (t->next)
		t->next->pprev = &t->next;
	t->pprev = &timers_threads;
	timers_threads = t;
	pthread_mutex_unlock(&timers_lock);
	pthread_setspecific(timers_key, t);
	timers_self = t;
	return t;
}

/* A reset happened: zero this thread's slots, then claim the new epoch (release, so that a
 * reader that sees the epoch sees the zeros). */
static void timers_thread_zero(struct timers_thread *t, uint64_t epoch)
{
	for (uint32_t p = 0; p < TIMERS_PAGES; p++) {
		struct timers_page *page = atomic_load_explicit(&t->pages[p], memory_order_relaxed);
		if (!page)
			continue;
		for (uint32_t k = 0; k < TIMERS_PAGE_SIZE; k++)
			atomic_store_explicit(&page->slot[k].count, 0, memory_order_relaxed);
	}
	atomic_store_explicit(&t->epoch, epoch, memory_order_release);
}

/* The fast path: no lock, no system call once the thread and the page exist. */
static void timers_add(uint32_t id, uint64_t ns)
{
	if (!id || id >= TIMERS_MAX)
		return;
	struct timers_thread *t = timers_self;
	if (__builtin_expect(!t, 0) && !(t = timers_thread_new()))
		return;
	uint64_t epoch = atomic_load_explicit(&timers_epoch, memory_order_relaxed);
	if (__builtin_expect(atomic_load_explicit(&t->epoch, memory_order_relaxed) != epoch, 0))
		timers_thread_zero(t, epoch);
	uint32_t p = id >> TIMERS_PAGE_SHIFT;
	struct timers_page *page = atomic_load_explicit(&t->pages[p], memory_order_relaxed);
	if (__builtin_expect(!page, 0)) {
		page = calloc(1, sizeof(*page));
		if (!page)
			return;
		atomic_store_explicit(&t->pages[p], page, memory_order_release);
	}
	struct timers_slot *s = &page->slot[id & (TIMERS_PAGE_SIZE - 1)];
	uint64_t c = atomic_load_explicit(&s->count, memory_order_relaxed);
	/* count == 0 means the other fields are stale (never set, or zeroed by a reset). */
	uint64_t total = c ? atomic_load_explicit(&s->total_ns, memory_order_relaxed) : 0;
	if (!c || ns > atomic_load_explicit(&s->max_ns, memory_order_relaxed))
		atomic_store_explicit(&s->max_ns, ns, memory_order_relaxed);
	if (!c || ns < atomic_load_explicit(&s->min_ns, memory_order_relaxed))
		atomic_store_explicit(&s->min_ns, ns, memory_order_relaxed);
	atomic_store_explicit(&s->total_ns, total + ns, memory_order_relaxed);
	atomic_store_explicit(&s->count, c + 1, memory_order_relaxed);
}

/* ---------------------------------------------------------------------------------------- */
/* Reading. */

/* Merged statistics of every registered timer, index = id - 1. Called with timers_lock held. */
static struct opscope_timer_stats *timers_merge_locked(size_t *count)
{
	uint32_t n = timers_next;
	struct timers_sum *sums = calloc(n, sizeof(*sums));
	struct opscope_timer_stats *out = calloc(n, sizeof(*out));
	if (!sums || !out) {
		free(sums);
		free(out);
		return NULL;
	}
	if (timers_retired)
		for (uint32_t id = 1; id < n; id++)
			sums[id] = timers_retired[id];
	for (struct timers_thread *t = timers_threads; t; t = t->next)
		timers_collect_thread(t, sums, n);
	for (uint32_t id = 1; id < n; id++) {
		struct opscope_timer_stats *o = &out[id - 1];
		o->name = atomic_load_explicit(&timers_names[id], memory_order_relaxed);
		o->count = sums[id].count;
		o->total_ns = sums[id].total_ns;
		o->max_ns = sums[id].max_ns;
		o->min_ns = sums[id].count ? sums[id].min_ns : 0;
		o->avg_ns = o->count ? (double)o->total_ns / (double)o->count : 0.0;
	}
	free(sums);
	*count = n - 1;
	return out;
}

int timers_snapshot(struct opscope_timer_stats **out, size_t *count)
{
	*out = NULL;
	*count = 0;
	pthread_mutex_lock(&timers_lock);
	struct opscope_timer_stats *s = timers_merge_locked(count);
	pthread_mutex_unlock(&timers_lock);
	if (!s)
		return OPSCOPE_ENOMEM;
	*out = s;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Public API. */

OPSCOPE_API uint64_t opscope_timer_now(void)
{
	return clock_ticks();
}

OPSCOPE_API void opscope_timer_stop(struct opscope_timer_site *site, uint64_t start)
{
	uint64_t now = clock_ticks();
	if (!site)
		return;
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!id, 0)) {
		id = timers_register(site->name ? site->name : "");
		__atomic_store_n(&site->id, id ? id : TIMERS_ID_FULL, __ATOMIC_RELEASE);
	}
	if (id == TIMERS_ID_FULL)
		return;
	timers_add(id, now > start ? record_ticks_to_ns(now - start) : 0);
}

OPSCOPE_API void opscope_timer_add_ns(const char *name, uint64_t ns)
{
	if (!name)
		return;
	struct timers_cache_entry *e = &timers_cache[((uintptr_t)name >> 3) & 7];
	uint32_t id = e->id;
	if (e->name != name || !id ||
	    strcmp(atomic_load_explicit(&timers_names[id], memory_order_acquire), name) != 0) {
		id = timers_register(name);
		e->name = name;
		e->id = id;
	}
	timers_add(id, ns);
}

OPSCOPE_API int opscope_timer_get(const char *name, struct opscope_timer_stats *out)
{
	if (!name || !out)
		return OPSCOPE_EINVAL;
	pthread_mutex_lock(&timers_lock);
	uint32_t id = timers_lookup(name);
	size_t n = 0;
	struct opscope_timer_stats *all = id ? timers_merge_locked(&n) : NULL;
	pthread_mutex_unlock(&timers_lock);
	if (!id)
		return OPSCOPE_EINVAL;
	if (!all)
		return OPSCOPE_ENOMEM;
	*out = all[id - 1];
	free(all);
	return 0;
}

OPSCOPE_API void opscope_timers_reset(void)
{
	pthread_mutex_lock(&timers_lock);
	atomic_fetch_add(&timers_epoch, 1);
	if (timers_retired)
		memset(timers_retired, 0, TIMERS_MAX * sizeof(*timers_retired));
	pthread_mutex_unlock(&timers_lock);
}

/* Copy `name` for a terminal: control bytes become \xNN so they cannot move the cursor.
 * Not util/escape.h's escape_terminal: this runs in the recording runtime, in the user's
 * process, into a fixed stack buffer that truncates; its output (C0 and DEL only) stays. */
static void timers_escape(char *dst, size_t size, const char *name)
{
	size_t j = 0;
	for (const unsigned char *p = (const unsigned char *)name; *p && j + 5 < size; p++) {
		if (*p < 0x20 || *p == 0x7f)
			j += (size_t)snprintf(dst + j, size - j, "\\x%02x", *p);
		else
			dst[j++] = (char)*p;
	}
	dst[j] = '\0';
}

static int timers_cmp_total(const void *a, const void *b)
{
	const struct opscope_timer_stats *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

#define TIMERS_NAME_MAX 256 /* escaped name bytes printed */

OPSCOPE_API int opscope_timers_print(FILE *out)
{
	struct opscope_timer_stats *all = NULL;
	size_t n = 0;
	if (!out || timers_snapshot(&all, &n) != 0)
		return 0;
	size_t rows = 0;
	for (size_t i = 0; i < n; i++)
		if (all[i].count)
			all[rows++] = all[i];
	qsort(all, rows, sizeof(*all), timers_cmp_total);
	char name[TIMERS_NAME_MAX];
	int width = 4;
	for (size_t i = 0; i < rows; i++) {
		timers_escape(name, sizeof(name), all[i].name);
		int len = (int)strlen(name);
		if (len > width)
			width = len < 60 ? len : 60;
	}
	fprintf(out, "%-*s %10s %14s %12s %12s %12s\n", width, "Name", "Calls", "Total(ms)",
		"Avg(ms)", "Max(ms)", "Min(ms)");
	for (size_t i = 0; i < rows; i++) {
		const struct opscope_timer_stats *s = &all[i];
		timers_escape(name, sizeof(name), s->name);
		fprintf(out, "%-*s %10llu %14.4f %12.4f %12.4f %12.4f\n", width, name,
			(unsigned long long)s->count, (double)s->total_ns / 1e6, s->avg_ns / 1e6,
			(double)s->max_ns / 1e6, (double)s->min_ns / 1e6);
	}
	free(all);
	return (int)rows;
}
