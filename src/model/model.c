/*
 * model.c: the in-memory event model (model.h) and the loader of .opscope files into it.
 *
 * Loading is one pass over the records. Events are appended to per-track columns with their
 * times still in ticks (a range's dur_ns column holds its end tick until the file is done),
 * because CLOCK records may come anywhere in the file; when the file ends, open ranges are
 * closed, every tick of the file is mapped to ns through its clock table, and tracks that are
 * not in start order (async tracks, whose begins come from many threads) are sorted.
 *
 * Invariants kept for readers of the model: on a thread track, times never go back (a tick
 * that does is clamped to the previous one, like the encoder does), so ranges are in start
 * order and nest properly; the tick->ns map is monotonic (clock points are made monotonic
 * before use), so this survives the mapping; every time is within +-2^61 ns so differences
 * never overflow; every string id in the model is < nstrings. Nothing recurses on input depth;
 * nothing is allocated per event except amortized column growth.
 */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "trace/reader.h"
#include "util/bytes.h"
#include "util/cursor.h"
#include "util/parallel.h"
#include "util/zeroed.h"

#define TIME_LIMIT	    ((int64_t)1 << 61) /* times are clamped to +-TIME_LIMIT ns */
#define MAX_FILE_STRING_IDS (1u << 24)	       /* largest string id a file may use */

/* ---------------------------------------------------------------------------------------- */
/* Small helpers. */

/* Grow *p (elements of `size` bytes, capacity *cap) to hold `need` elements. */
static bool grow(void **p, size_t size, uint64_t *cap, uint64_t need)
{
	if (need <= *cap)
		return true;
	uint64_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / size)
		return false;
	void *q = realloc(*p, (size_t)(n * size));
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

static bool grow32(void **p, size_t size, uint32_t *cap, uint64_t need)
{
	uint64_t c = *cap;
	if (need > UINT32_MAX / 2)
		return false;
	bool ok = grow(p, size, &c, need);
	*cap = (uint32_t)c;
	return ok;
}

/* ---------------------------------------------------------------------------------------- */
/* Column memory. A column that outgrows COLUMN_MAP_BYTES gets a mapping of its own, aligned
 * for huge pages and grown with mremap: growth moves page tables instead of copying, and a
 * large load takes one page fault per 2 MiB instead of one per 4 KiB where the kernel has
 * transparent huge pages (madvise mode is enough). Smaller columns live in malloc. Every
 * column starts after a header that says which, so freeing never depends on a capacity.
 *
 * Room beyond a column's contents is zero (fresh mappings are; malloc'd room is cleared), and
 * counts never go down, so an element appended as 0 need not be written: the loader leaves
 * the argument and flag columns of a trace without arguments untouched, and their pages are
 * never faulted in. */

#define COLUMN_MAP_BYTES ((size_t)1 << 20)
#define HUGE_PAGE_BYTES	 ((size_t)2 << 20)

struct column_head {
	size_t map_len; /* bytes of the mapping the column lives in, 0 if from malloc */
	size_t bytes;	/* bytes of data it holds room for (keeps the data 16-byte aligned) */
};

static struct column_head *column_head(void *data)
{
	return (struct column_head *)((uint8_t *)data - sizeof(struct column_head));
}

/* A fresh 2 MiB-aligned mapping of `len` bytes (a multiple of HUGE_PAGE_BYTES), or NULL. */
static void *column_map(size_t len)
{
	size_t span = len + HUGE_PAGE_BYTES;
	uint8_t *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	uint8_t *a = (uint8_t *)(((uintptr_t)p + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + len < p + span)
		munmap(a + len, (size_t)(p + span - (a + len)));
	(void)madvise(a, len, MADV_HUGEPAGE); /* a hint: without THP it is 4 KiB pages */
	return a;
}

/* Resize column *pp to `bytes` (never smaller than its contents); false if out of memory,
 * with the column as it was. */
static bool column_resize(void **pp, size_t bytes)
{
	const size_t hs = sizeof(struct column_head);
	struct column_head *h = *pp ? column_head(*pp) : NULL;
	if (bytes > SIZE_MAX - hs - HUGE_PAGE_BYTES)
		return false;
	if (bytes + hs < COLUMN_MAP_BYTES && (!h || h->map_len == 0)) {
		size_t old = h ? h->bytes : 0;
		struct column_head *q = realloc(h, bytes + hs);
		if (!q)
			return false;
		if (bytes > old)
			memset((uint8_t *)(q + 1) + old, 0, bytes - old);
		q->map_len = 0;
		q->bytes = bytes;
		*pp = q + 1;
		return true;
	}
	size_t len = (bytes + hs + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
	if (h && h->map_len >= len) {
		h->bytes = bytes;
		return true;
	}
	if (h && h->map_len) {
		/* grow where it is if the addresses after it are free, else move it (page tables
		 * only) to a new aligned place */
		void *q = mremap(h, h->map_len, len, 0);
		if (q == MAP_FAILED) {
			void *to = column_map(len);
			if (!to)
				return false;
			q = mremap(h, h->map_len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
			if (q == MAP_FAILED) {
				munmap(to, len);
				return false;
			}
		}
		h = q;
		h->map_len = len;
		h->bytes = bytes;
		*pp = h + 1;
		return true;
	}
	struct column_head *q = column_map(len);
	if (!q)
		return false;
	if (h) {
		memcpy(q + 1, h + 1, h->bytes);
		free(h);
	}
	q->map_len = len;
	q->bytes = bytes;
	*pp = q + 1;
	return true;
}

static void column_free(void *data)
{
	if (!data)
		return;
	struct column_head *h = column_head(data);
	if (h->map_len)
		munmap(h, h->map_len);
	else
		free(h);
}

/* Grow one column to `n` elements (the column set shares a capacity). */
static bool column(void *pp, size_t size, uint64_t n)
{
	if (n > SIZE_MAX / size)
		return false;
	return column_resize(pp, (size_t)(n * size));
}

static uint64_t hash64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static int64_t clamp_time(int64_t v)
{
	return v > TIME_LIMIT ? TIME_LIMIT : v < -TIME_LIMIT ? -TIME_LIMIT : v;
}

/* An open-addressing map u64 -> u64 for the loader (tracks, flows, async ids). */
struct hmap {
	uint64_t *keys; /* key per slot */
	uint64_t *vals; /* value per slot */
	uint8_t *used;	/* 1 if the slot holds a key */
	uint64_t cap;	/* slots, a power of two (0 before first use) */
	uint64_t count; /* keys held */
};

static void hmap_free(struct hmap *h)
{
	free(h->keys);
	free(h->vals);
	free(h->used);
	memset(h, 0, sizeof(*h));
}

static uint64_t *hmap_find(const struct hmap *h, uint64_t key)
{
	if (!h->cap)
		return NULL;
	for (uint64_t i = hash64(key) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		if (!h->used[i])
			return NULL;
		if (h->keys[i] == key)
			return &h->vals[i];
	}
}

static bool hmap_put(struct hmap *h, uint64_t key, uint64_t val)
{
	uint64_t *v = hmap_find(h, key);
	if (v) {
		*v = val;
		return true;
	}
	if ((h->count + 1) * 2 > h->cap) {
		struct hmap n = { 0 };
		n.cap = h->cap ? h->cap * 2 : 64;
		n.keys = malloc(n.cap * sizeof(uint64_t));
		n.vals = malloc(n.cap * sizeof(uint64_t));
		n.used = zeroed_table(n.cap, 1);
		if (!n.keys || !n.vals || !n.used) {
			hmap_free(&n);
			return false;
		}
		for (uint64_t i = 0; i < h->cap; i++)
			if (h->used[i])
				hmap_put(&n, h->keys[i], h->vals[i]);
		hmap_free(h);
		*h = n;
	}
	uint64_t i = hash64(key) & (h->cap - 1);
	while (h->used[i])
		i = (i + 1) & (h->cap - 1);
	h->used[i] = 1;
	h->keys[i] = key;
	h->vals[i] = val;
	h->count++;
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Strings. */

/* Eight bytes at a time: importers intern every name and argument of every event. */
static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		h = (h ^ get_u64le((const uint8_t *)s + i)) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h = (h ^ get_upto8le((const uint8_t *)s + i, len - i)) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

static bool strings_rehash(struct model *m, uint32_t cap)
{
	uint32_t *slots = zeroed_table(cap, sizeof(*slots));
	if (!slots)
		return false;
	for (uint32_t id = 1; id < m->nstrings; id++) {
		uint64_t i = str_hash(m->text + m->str_off[id], m->str_len[id]) & (cap - 1);
		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = id + 1;
	}
	free(m->hash_slots);
	m->hash_slots = slots;
	m->hash_cap = cap;
	return true;
}

uint32_t model_intern(struct model *m, const char *s, size_t len)
{
	if (len == 0 || m->oom)
		return 0;
	if (len >= UINT32_MAX) {
		m->oom = true;
		return 0;
	}
	uint64_t h = str_hash(s, len);
	if (m->hash_cap) {
		for (uint64_t i = h & (m->hash_cap - 1);; i = (i + 1) & (m->hash_cap - 1)) {
			uint32_t slot = m->hash_slots[i];
			if (!slot)
				break;
			uint32_t id = slot - 1;
			if (m->str_len[id] == len && memcmp(m->text + m->str_off[id], s, len) == 0)
				return id;
		}
	}
	if (((uint64_t)m->nstrings + 1) * 2 > m->hash_cap &&
	    (m->hash_cap >= (1u << 31) ||
	     !strings_rehash(m, m->hash_cap ? m->hash_cap * 2 : 256))) {
		m->oom = true;
		return 0;
	}
	uint64_t need = (uint64_t)m->nstrings + 1;
	uint32_t cap = m->strings_cap, cap2 = m->strings_cap;
	if (!grow32((void **)&m->str_off, sizeof(*m->str_off), &cap, need) ||
	    !grow32((void **)&m->str_len, sizeof(*m->str_len), &cap2, need)) {
		m->oom = true;
		return 0;
	}
	m->strings_cap = cap < cap2 ? cap : cap2;
	uint64_t tcap = m->text_cap;
	if (!grow((void **)&m->text, 1, &tcap, m->text_len + len + 1)) {
		m->oom = true;
		return 0;
	}
	m->text_cap = (size_t)tcap;
	uint32_t id = m->nstrings++;
	m->str_off[id] = m->text_len;
	m->str_len[id] = (uint32_t)len;
	memcpy(m->text + m->text_len, s, len);
	m->text[m->text_len + len] = '\0';
	m->text_len += len + 1;
	uint64_t i = h & (m->hash_cap - 1);
	while (m->hash_slots[i])
		i = (i + 1) & (m->hash_cap - 1);
	m->hash_slots[i] = id + 1;
	return id;
}

uint32_t model_find_str(const struct model *m, const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || !m->hash_cap)
		return 0;
	uint64_t h = str_hash(s, len);
	for (uint64_t i = h & (m->hash_cap - 1);; i = (i + 1) & (m->hash_cap - 1)) {
		uint32_t slot = m->hash_slots[i];
		if (!slot)
			return 0;
		uint32_t id = slot - 1;
		if (m->str_len[id] == len && memcmp(m->text + m->str_off[id], s, len) == 0)
			return id;
	}
}

const char *model_str(const struct model *m, uint32_t id)
{
	if (id == 0 || id >= m->nstrings)
		return "";
	return m->text + m->str_off[id];
}

uint32_t model_strlen(const struct model *m, uint32_t id)
{
	if (id == 0 || id >= m->nstrings)
		return 0;
	return m->str_len[id];
}

/* ---------------------------------------------------------------------------------------- */
/* Model object and builders. */

struct model *model_new(void)
{
	struct model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->min_ns = INT64_MAX;
	m->max_ns = INT64_MIN;
	/* id 0 is the empty string */
	m->str_off = calloc(16, sizeof(*m->str_off));
	m->str_len = calloc(16, sizeof(*m->str_len));
	m->text = calloc(16, 1);
	if (!m->str_off || !m->str_len || !m->text) {
		model_free(m);
		return NULL;
	}
	m->strings_cap = 16;
	m->text_cap = 16;
	m->nstrings = 1;
	m->text_len = 1;
	return m;
}

static void track_free(struct model_track *t)
{
	struct model_ranges *r = &t->ranges;
	column_free(r->start_ns);
	column_free(r->dur_ns);
	column_free(r->name);
	column_free(r->category);
	column_free(r->flags);
	column_free(r->depth);
	column_free(r->first_arg);
	column_free(r->nargs);
	column_free(t->instants.ts_ns);
	column_free(t->instants.name);
	column_free(t->instants.category);
	column_free(t->instants.first_arg);
	column_free(t->instants.nargs);
	column_free(t->counters.ts_ns);
	column_free(t->counters.name);
	column_free(t->counters.value);
}

void model_free(struct model *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->ntracks; i++)
		track_free(&m->tracks[i]);
	free(m->tracks);
	for (uint32_t i = 0; i < m->nfiles; i++)
		free(m->files[i].clocks);
	free(m->files);
	free(m->str_off);
	free(m->str_len);
	free(m->text);
	free(m->hash_slots);
	column_free(m->args.key);
	column_free(m->args.type);
	column_free(m->args.bits);
	free(m->flows);
	free(m->meta);
	free(m->timers);
	free(m->drop_marks);
	free(m);
}

uint32_t model_add_track(struct model *m, uint32_t kind, uint32_t pid, uint64_t tid, uint32_t name)
{
	if (m->ntracks >= UINT32_MAX - 1 || !grow32((void **)&m->tracks, sizeof(*m->tracks),
						    &m->tracks_cap, (uint64_t)m->ntracks + 1)) {
		m->oom = true;
		return MODEL_NO_TRACK;
	}
	struct model_track *t = &m->tracks[m->ntracks];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->pid = pid;
	t->tid = tid;
	t->name = name;
	t->file = m->nfiles ? m->nfiles - 1 : 0;
	t->min_ns = INT64_MAX;
	t->max_ns = INT64_MIN;
	return m->ntracks++;
}

uint64_t model_add_range(struct model *m, uint32_t track, int64_t start_ns, int64_t dur_ns,
			 uint32_t name, uint8_t category, uint32_t depth)
{
	struct model_track *t = &m->tracks[track];
	struct model_ranges *r = &t->ranges;
	if (t->nranges == t->nranges_cap) {
		uint64_t n = t->nranges_cap ? t->nranges_cap * 2 : 64;
		if (!column(&r->start_ns, sizeof(*r->start_ns), n) ||
		    !column(&r->dur_ns, sizeof(*r->dur_ns), n) ||
		    !column(&r->name, sizeof(*r->name), n) ||
		    !column(&r->category, sizeof(*r->category), n) ||
		    !column(&r->flags, sizeof(*r->flags), n) ||
		    !column(&r->depth, sizeof(*r->depth), n) ||
		    !column(&r->first_arg, sizeof(*r->first_arg), n) ||
		    !column(&r->nargs, sizeof(*r->nargs), n)) {
			m->oom = true;
			return MODEL_NONE;
		}
		t->nranges_cap = n;
	}
	uint64_t i = t->nranges++;
	r->start_ns[i] = start_ns;
	r->dur_ns[i] = dur_ns;
	r->name[i] = name;
	r->category[i] = category;
	r->flags[i] = 0;
	r->depth[i] = depth;
	r->first_arg[i] = 0;
	r->nargs[i] = 0;
	return i;
}

uint64_t model_add_instant(struct model *m, uint32_t track, int64_t ts_ns, uint32_t name,
			   uint8_t category)
{
	struct model_track *t = &m->tracks[track];
	struct model_instants *r = &t->instants;
	if (t->ninstants == t->ninstants_cap) {
		uint64_t n = t->ninstants_cap ? t->ninstants_cap * 2 : 16;
		if (!column(&r->ts_ns, sizeof(*r->ts_ns), n) ||
		    !column(&r->name, sizeof(*r->name), n) ||
		    !column(&r->category, sizeof(*r->category), n) ||
		    !column(&r->first_arg, sizeof(*r->first_arg), n) ||
		    !column(&r->nargs, sizeof(*r->nargs), n)) {
			m->oom = true;
			return MODEL_NONE;
		}
		t->ninstants_cap = n;
	}
	uint64_t i = t->ninstants++;
	r->ts_ns[i] = ts_ns;
	r->name[i] = name;
	r->category[i] = category;
	r->first_arg[i] = 0;
	r->nargs[i] = 0;
	return i;
}

uint64_t model_add_counter(struct model *m, uint32_t track, int64_t ts_ns, uint32_t name,
			   double value)
{
	struct model_track *t = &m->tracks[track];
	struct model_counters *r = &t->counters;
	if (t->ncounters == t->ncounters_cap) {
		uint64_t n = t->ncounters_cap ? t->ncounters_cap * 2 : 16;
		if (!column(&r->ts_ns, sizeof(*r->ts_ns), n) ||
		    !column(&r->name, sizeof(*r->name), n) ||
		    !column(&r->value, sizeof(*r->value), n)) {
			m->oom = true;
			return MODEL_NONE;
		}
		t->ncounters_cap = n;
	}
	uint64_t i = t->ncounters++;
	r->ts_ns[i] = ts_ns;
	r->name[i] = name;
	r->value[i] = value;
	return i;
}

uint64_t model_add_arg(struct model *m, uint32_t key, uint8_t type, uint64_t bits)
{
	if (m->nargs == m->args_cap) {
		uint64_t n = m->args_cap ? m->args_cap * 2 : 64;
		if (!column(&m->args.key, sizeof(*m->args.key), n) ||
		    !column(&m->args.type, sizeof(*m->args.type), n) ||
		    !column(&m->args.bits, sizeof(*m->args.bits), n)) {
			m->oom = true;
			return MODEL_NONE;
		}
		m->args_cap = n;
	}
	uint64_t i = m->nargs++;
	m->args.key[i] = key;
	m->args.type[i] = type;
	m->args.bits[i] = bits;
	return i;
}

bool model_reserve_args(struct model *m, uint64_t n)
{
	if (n <= m->args_cap)
		return true;
	if (!column(&m->args.key, sizeof(*m->args.key), n) ||
	    !column(&m->args.type, sizeof(*m->args.type), n) ||
	    !column(&m->args.bits, sizeof(*m->args.bits), n))
		return false; /* those grown keep their contents: args_cap still holds */
	m->args_cap = n;
	return true;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels say EINVAL */
#endif

void model_prefault(const void *col, size_t size, uint64_t from, uint64_t to)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)col + from * size) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)col + to * size) & ~(page - 1);
	if (col && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

uint64_t model_add_flow(struct model *m, uint64_t id, uint32_t from_track, int64_t from_ns,
			uint32_t to_track, int64_t to_ns)
{
	if (!grow((void **)&m->flows, sizeof(*m->flows), &m->flows_cap, m->nflows + 1)) {
		m->oom = true;
		return MODEL_NONE;
	}
	m->flows[m->nflows] = (struct model_flow){ id,	  from_track, to_track,	 from_ns,
						   to_ns, MODEL_NONE, MODEL_NONE };
	return m->nflows++;
}

/* The first range of a track starting after ts (nranges if none), galloping from `hint`
 * (a previous answer): flows come nearly in time order, so the answer is usually close to
 * the last one and a binary search over the whole track (cache misses all the way) is not
 * needed. */
static uint64_t first_after(const struct model_ranges *r, uint64_t n, int64_t ts, uint64_t hint)
{
	/* everything before lo starts at or before ts, everything from hi on after it */
	uint64_t lo = 0, hi = n;
	if (hint > n)
		hint = n;
	if (hint < n && r->start_ns[hint] <= ts) {
		lo = hint + 1;
		for (uint64_t step = 1; lo + step - 1 < n; step *= 2) {
			uint64_t probe = lo + step - 1;
			if (r->start_ns[probe] > ts) {
				hi = probe;
				break;
			}
			lo = probe + 1;
		}
	} else {
		hi = hint;
		for (uint64_t step = 1; step <= hi; step *= 2) {
			uint64_t probe = hi - step;
			if (r->start_ns[probe] <= ts) {
				lo = probe + 1;
				break;
			}
			hi = probe;
		}
	}
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (r->start_ns[mid] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The innermost range of track t that contains time ts, or MODEL_NONE; *hint: where the
 * search starts, and then the place found. */
static uint64_t innermost_range_at(const struct model *m, uint32_t t, int64_t ts, uint64_t *hint)
{
	const struct model_track *tr = &m->tracks[t];
	const struct model_ranges *r = &tr->ranges;
	uint64_t lo = first_after(r, tr->nranges, ts, *hint);
	*hint = lo;
	/* Walking back, the first range that contains ts is the innermost one; an outermost
	 * range that does not contain it hides everything before it. */
	for (uint64_t i = lo; i-- > 0;) {
		if (r->start_ns[i] + r->dur_ns[i] >= ts)
			return i;
		if (r->depth[i] == 0)
			break;
	}
	return MODEL_NONE;
}

void model_resolve_flows(struct model *m, uint64_t first)
{
	/* where the last search on each track ended (a few tracks: else from the middle) */
	enum { HINTS = 64 };
	uint64_t hint[HINTS] = { 0 };
	for (uint64_t f = first; f < m->nflows; f++) {
		struct model_flow *fl = &m->flows[f];
		uint64_t mid;
		if (fl->from_track != MODEL_NO_TRACK) {
			uint64_t *h = fl->from_track < HINTS ? &hint[fl->from_track] : &mid;
			mid = m->tracks[fl->from_track].nranges / 2;
			fl->from_range = innermost_range_at(m, fl->from_track, fl->from_ns, h);
		}
		if (fl->to_track != MODEL_NO_TRACK) {
			uint64_t *h = fl->to_track < HINTS ? &hint[fl->to_track] : &mid;
			mid = m->tracks[fl->to_track].nranges / 2;
			fl->to_range = innermost_range_at(m, fl->to_track, fl->to_ns, h);
		}
	}
}

uint64_t model_range_arg(const struct model *m, uint32_t track, uint64_t i, uint32_t key)
{
	const struct model_ranges *r = &m->tracks[track].ranges;
	uint64_t a = r->first_arg[i];
	for (uint32_t k = 0; k < r->nargs[i]; k++)
		if (m->args.key[a + k] == key)
			return a + k;
	return MODEL_NONE;
}

void model_set_meta(struct model *m, uint32_t pid, uint32_t key, uint32_t value)
{
	for (uint32_t i = 0; i < m->nmeta; i++) {
		if (m->meta[i].pid == pid && m->meta[i].key == key) {
			m->meta[i].value = value;
			return;
		}
	}
	if (!grow32((void **)&m->meta, sizeof(*m->meta), &m->meta_cap, (uint64_t)m->nmeta + 1)) {
		m->oom = true;
		return;
	}
	m->meta[m->nmeta++] = (struct model_meta){ pid, key, value };
}

const char *model_get_meta(const struct model *m, uint32_t pid, const char *key)
{
	for (uint32_t i = 0; i < m->nmeta; i++)
		if (m->meta[i].pid == pid && strcmp(model_str(m, m->meta[i].key), key) == 0)
			return model_str(m, m->meta[i].value);
	return NULL;
}

uint32_t model_pids(const struct model *m, uint32_t *pids, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		uint32_t pid = m->tracks[t].pid;
		if (m->tracks[t].kind == MODEL_TRACK_DEVICE)
			continue;
		bool seen = false;
		/* few processes per model: a linear scan of what is stored is enough */
		for (uint32_t i = 0; i < n && i < max; i++)
			seen = seen || pids[i] == pid;
		if (seen)
			continue;
		if (n < max)
			pids[n] = pid;
		else
			break;
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Sorting a track (async tracks, importers). */

struct sort_key {
	int64_t start;	/* primary key */
	uint64_t depth; /* then depth */
	uint64_t index; /* then original order: a stable sort */
};

static int sort_key_cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Sort keys[0..n) by (start, depth, index), the order sort_key_cmp defines: a stable radix
 * sort on start (as many passes as the starts' spread needs), then the runs of equal starts
 * by the rest. Imported tracks come out of order by up to their nesting (Kineto writes an
 * operator when it ends, after its children), which qsort took 20 ms for on 300 k ranges.
 * False when out of memory.
 */
static bool sort_keys_by_start(struct sort_key *k, uint64_t n)
{
	if (n < 64) {
		qsort(k, n, sizeof(*k), sort_key_cmp);
		return true;
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t u = (uint64_t)k[i].start ^ (1ull << 63); /* signed order as unsigned */
		lo = u < lo ? u : lo;
		hi = u > hi ? u : hi;
	}
	/* as few passes as the spread needs with digits of at most 13 bits (64 KB of counts,
	 * in the L2 cache): a trace of a minute in ns spreads over 36 bits, 3 passes of 12 */
	enum { MAX_BITS = 13 };
	unsigned spread = 0;
	while (spread < 64 && ((hi - lo) >> spread) != 0)
		spread++;
	unsigned passes = (spread + MAX_BITS - 1) / MAX_BITS;
	unsigned bits = passes ? (spread + passes - 1) / passes : 1;
	uint64_t bins = 1ull << bits, mask = bins - 1;
	struct sort_key *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return false;
	uint64_t *count = malloc(bins * sizeof(*count));
	if (!count) {
		free(tmp);
		return false;
	}
	struct sort_key *from = k, *to = tmp;
	for (unsigned p = 0, shift = 0; p < passes; p++, shift += bits) {
		memset(count, 0, bins * sizeof(*count));
		for (uint64_t i = 0; i < n; i++)
			count[((((uint64_t)from[i].start ^ (1ull << 63)) - lo) >> shift) & mask]++;
		uint64_t sum = 0;
		for (uint64_t b = 0; b < bins; b++) {
			uint64_t c = count[b];
			count[b] = sum;
			sum += c;
		}
		for (uint64_t i = 0; i < n; i++)
			to[count[((((uint64_t)from[i].start ^ (1ull << 63)) - lo) >> shift) &
				 mask]++] = from[i];
		struct sort_key *t = from;
		from = to;
		to = t;
	}
	if (from != k)
		memcpy(k, from, n * sizeof(*k));
	free(count);
	free(tmp);
	/* equal starts: by depth (or length), then index; runs are short but need not be */
	for (uint64_t i = 0; i < n;) {
		uint64_t j = i + 1;
		while (j < n && k[j].start == k[i].start)
			j++;
		if (j - i > 1)
			qsort(k + i, j - i, sizeof(*k), sort_key_cmp);
		i = j;
	}
	return true;
}

/* Reorder `n` elements of `size` bytes of column `col` by keys[i].index, through tmp (room
 * for n elements of the largest size). */
static void permute(void *col, size_t size, const struct sort_key *keys, uint64_t n, void *tmp)
{
	/* a loop per column width, so that each memcpy has a constant size and becomes a load
	 * and a store: with the size known only at run time it was a call per element (half of
	 * nesting a track of a million ranges) */
	uint8_t *c = col, *t = tmp;
	switch (size) {
	case 1:
		for (uint64_t i = 0; i < n; i++)
			t[i] = c[keys[i].index];
		break;
	case 4:
		for (uint64_t i = 0; i < n; i++)
			memcpy(t + i * 4, c + keys[i].index * 4, 4);
		break;
	case 8:
		for (uint64_t i = 0; i < n; i++)
			memcpy(t + i * 8, c + keys[i].index * 8, 8);
		break;
	default:
		for (uint64_t i = 0; i < n; i++)
			memcpy(t + i * size, c + keys[i].index * size, size);
	}
	memcpy(c, t, n * size);
}

static struct sort_key *sort_keys(const int64_t *start, const uint32_t *depth, uint64_t n,
				  bool *sorted)
{
	*sorted = true;
	for (uint64_t i = 1; i < n && *sorted; i++)
		if (start[i] < start[i - 1] ||
		    (depth && start[i] == start[i - 1] && depth[i] < depth[i - 1]))
			*sorted = false;
	if (*sorted || n == 0)
		return NULL;
	struct sort_key *k = malloc(n * sizeof(*k));
	if (!k)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		k[i] = (struct sort_key){ start[i], depth ? depth[i] : 0, i };
	if (!sort_keys_by_start(k, n)) {
		free(k);
		return NULL;
	}
	return k;
}

/* Reorder the ranges of `track` by keys[i].index (flow references follow); frees keys. */
static void permute_ranges(struct model *m, uint32_t track, struct sort_key *k, bool *oom)
{
	struct model_track *t = &m->tracks[track];
	struct model_ranges *r = &t->ranges;
	uint64_t n = t->nranges;
	/* one scratch for every column; it then maps old indexes to new ones for the flows */
	uint64_t *inv = malloc(n * sizeof(*inv));
	if (inv) {
		permute(r->start_ns, sizeof(*r->start_ns), k, n, inv);
		permute(r->dur_ns, sizeof(*r->dur_ns), k, n, inv);
		permute(r->name, sizeof(*r->name), k, n, inv);
		permute(r->category, sizeof(*r->category), k, n, inv);
		permute(r->flags, sizeof(*r->flags), k, n, inv);
		permute(r->depth, sizeof(*r->depth), k, n, inv);
		permute(r->first_arg, sizeof(*r->first_arg), k, n, inv);
		permute(r->nargs, sizeof(*r->nargs), k, n, inv);
		for (uint64_t i = 0; i < n; i++)
			inv[k[i].index] = i;
		for (uint64_t f = 0; f < m->nflows; f++) {
			struct model_flow *fl = &m->flows[f];
			if (fl->from_track == track && fl->from_range < n)
				fl->from_range = inv[fl->from_range];
			if (fl->to_track == track && fl->to_range < n)
				fl->to_range = inv[fl->to_range];
		}
		free(inv);
	} else {
		*oom = true;
	}
	free(k);
}

/* model_sort_track(), with out of memory reported in *oom: tracks of one model are sorted on
 * several threads at once (model_nest_tracks), and m->oom is not theirs to write. */
static void sort_track(struct model *m, uint32_t track, bool *oom)
{
	struct model_track *t = &m->tracks[track];
	bool sorted;
	struct model_ranges *r = &t->ranges;
	struct sort_key *k = sort_keys(r->start_ns, r->depth, t->nranges, &sorted);
	if (!sorted && !k)
		*oom = true;
	if (k)
		permute_ranges(m, track, k, oom);
	struct model_instants *in = &t->instants;
	k = sort_keys(in->ts_ns, NULL, t->ninstants, &sorted);
	if (!sorted && !k)
		*oom = true;
	if (k) {
		uint64_t n = t->ninstants;
		uint64_t *tmp = malloc(n * sizeof(*tmp));
		if (tmp) {
			permute(in->ts_ns, sizeof(*in->ts_ns), k, n, tmp);
			permute(in->name, sizeof(*in->name), k, n, tmp);
			permute(in->category, sizeof(*in->category), k, n, tmp);
			permute(in->first_arg, sizeof(*in->first_arg), k, n, tmp);
			permute(in->nargs, sizeof(*in->nargs), k, n, tmp);
		} else {
			*oom = true;
		}
		free(tmp);
		free(k);
	}
	struct model_counters *co = &t->counters;
	k = sort_keys(co->ts_ns, NULL, t->ncounters, &sorted);
	if (!sorted && !k)
		*oom = true;
	if (k) {
		uint64_t n = t->ncounters;
		uint64_t *tmp = malloc(n * sizeof(*tmp));
		if (tmp) {
			permute(co->ts_ns, sizeof(*co->ts_ns), k, n, tmp);
			permute(co->name, sizeof(*co->name), k, n, tmp);
			permute(co->value, sizeof(*co->value), k, n, tmp);
		} else {
			*oom = true;
		}
		free(tmp);
		free(k);
	}
}

void model_sort_track(struct model *m, uint32_t track)
{
	sort_track(m, track, &m->oom);
}

/* ---------------------------------------------------------------------------------------- */
/* Clock mapping: ticks -> ns, piecewise linear through the file's CLOCK points. */

/* A segment of the map: ticks in [lo, lo + span) map to base_ns + (ticks - lo) * s. Loops
 * over whole columns keep it in a local: stores into the columns could alias the map's own
 * copy, and the compiler would reload it for every element. */
struct clock_seg {
	uint64_t lo, span;
	int64_t base_ns;
	double s;
};

struct clockmap {
	uint32_t n;		     /* points (>= 1) */
	const struct model_clock *k; /* points sorted by ticks, mono_ns made non-decreasing */
	double *slope;		     /* ns per tick of the segment that starts at point i */
	struct model_clock identity; /* the point used when the file has no CLOCK record */
	struct clock_seg seg;	     /* the segment of the last lookup */
};

static int clock_cmp(const void *a, const void *b)
{
	const struct model_clock *x = a, *y = b;
	return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* Make segment i (from point i to point i + 1, or on without end for the last) current. */
static void clockmap_segment(struct clockmap *cm, uint32_t i)
{
	/* past 2^61 ticks from its start, a lookup takes the careful way (clockmap_far) */
	uint64_t far = (uint64_t)1 << 61;
	struct clock_seg *g = &cm->seg;
	g->lo = cm->k[i].ticks;
	g->span = far;
	if (i + 1 < cm->n && cm->k[i + 1].ticks - g->lo < far)
		g->span = cm->k[i + 1].ticks - g->lo;
	if (g->span > UINT64_MAX - g->lo)
		g->span = UINT64_MAX - g->lo; /* lo + span must not wrap: a time before lo would */
	g->base_ns = cm->k[i].mono_ns;
	g->s = cm->slope[i];
}

static bool clockmap_init(struct clockmap *cm, struct model_file *f)
{
	memset(cm, 0, sizeof(*cm));
	if (f->nclocks == 0) {
		cm->n = 1;
		cm->k = &cm->identity;
		cm->slope = malloc(sizeof(double));
		if (!cm->slope)
			return false;
		cm->slope[0] = 1.0;
		clockmap_segment(cm, 0);
		return true;
	}
	struct model_clock *k = f->clocks;
	qsort(k, f->nclocks, sizeof(*k), clock_cmp);
	/* drop points with equal ticks (keep the first) and make ns non-decreasing */
	uint32_t n = 1;
	for (uint32_t i = 1; i < f->nclocks; i++) {
		if (k[i].ticks == k[n - 1].ticks)
			continue;
		k[n] = k[i];
		if (k[n].mono_ns < k[n - 1].mono_ns)
			k[n].mono_ns = k[n - 1].mono_ns;
		n++;
	}
	f->nclocks = n;
	cm->n = n;
	cm->k = k;
	cm->slope = malloc(n * sizeof(double));
	if (!cm->slope)
		return false;
	if (n == 1) {
		uint64_t tps = k[0].ticks_per_second ? k[0].ticks_per_second : 1000000000ull;
		cm->slope[0] = 1e9 / (double)tps;
	} else {
		for (uint32_t i = 0; i + 1 < n; i++)
			cm->slope[i] = (double)(k[i + 1].mono_ns - k[i].mono_ns) /
				       (double)(k[i + 1].ticks - k[i].ticks);
		cm->slope[n - 1] = cm->slope[n - 2]; /* after the last point: the last slope */
	}
	clockmap_segment(cm, 0);
	return true;
}

/* ns of `ticks` through point k with slope s (any distance, either side of the point). */
static int64_t clockmap_through(const struct model_clock *k, double s, uint64_t ticks)
{
	if (s == 1.0 && ticks >= k->ticks && ticks - k->ticks < ((uint64_t)1 << 61))
		return clamp_time(k->mono_ns + (int64_t)(ticks - k->ticks));
	double d = ticks >= k->ticks ? (double)(ticks - k->ticks) : -(double)(k->ticks - ticks);
	double x = (double)k->mono_ns + d * s;
	if (!(x < (double)TIME_LIMIT))
		return TIME_LIMIT;
	if (x < -(double)TIME_LIMIT)
		return -TIME_LIMIT;
	/* round half away from zero, like llround, without the call */
	return x >= 0 ? (int64_t)(x + 0.5) : -(int64_t)(0.5 - x);
}

/* A time outside the current segment: find its segment (the last point at or before it, or
 * the first point for times before all of them) and make it current. */
static int64_t clockmap_far(struct clockmap *cm, uint64_t ticks)
{
	uint32_t i = 0;
	if (cm->n > 1 && ticks > cm->k[0].ticks) {
		uint32_t lo = 0, hi = cm->n - 1;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo + 1) / 2;
			if (cm->k[mid].ticks <= ticks)
				lo = mid;
			else
				hi = mid - 1;
		}
		i = lo;
	}
	clockmap_segment(cm, i);
	return clockmap_through(&cm->k[i], cm->slope[i], ticks);
}

/* ticks -> ns through segment g, if ticks fall in it (and map below the time limit). */
static inline bool seg_ns(const struct clock_seg *g, uint64_t ticks, int64_t *ns)
{
	uint64_t d = ticks - g->lo;
	if (d >= g->span)
		return false;
	if (g->s == 1.0) {
		*ns = clamp_time(g->base_ns + (int64_t)d);
		return true;
	}
	double x = (double)g->base_ns + (double)(int64_t)d * g->s;
	if (!(x < (double)TIME_LIMIT))
		return false;
	*ns = (int64_t)(x + 0.5); /* x >= 0: mono_ns >= 0, d >= 0, slope >= 0 */
	return true;
}

/* ticks -> ns, with *g the caller's copy of the current segment. Times come mostly in order,
 * so nearly every lookup falls in the segment of the previous one: a subtraction, a compare
 * and the arithmetic of clockmap_through with its rare branches taken out. */
static inline int64_t clockmap_ns(struct clockmap *cm, struct clock_seg *g, uint64_t ticks)
{
	int64_t ns;
	if (seg_ns(g, ticks, &ns))
		return ns;
	ns = clockmap_far(cm, ticks);
	*g = cm->seg;
	return ns;
}

/* Ticks to ns for every range of t (start in start_ns and end in dur_ns, as loaded): start
 * and duration, and the track's time span. Runs of ranges inside one segment with a slope
 * other than 1 go through a loop with the segment's constants in registers and without the
 * per-time checks of seg_ns (the same arithmetic, so the same ns); anything else, the
 * careful way. */
static void clock_ranges(struct clockmap *cm, struct clock_seg *g, struct model_track *t)
{
	int64_t lo = t->min_ns, hi = t->max_ns;
	int64_t *start = t->ranges.start_ns, *end = t->ranges.dur_ns;
	for (uint64_t j = 0, n = t->nranges; j < n;) {
		/* the segment maps below TIME_LIMIT all the way: no check per time */
		double top = (double)g->base_ns + (double)(int64_t)(g->span - 1) * g->s;
		if (g->s != 1.0 && g->span <= ((uint64_t)1 << 61) && top < (double)TIME_LIMIT / 2) {
			const uint64_t glo = g->lo, span = g->span;
			const double base = (double)g->base_ns, slope = g->s;
			for (; j < n; j++) {
				uint64_t ds = (uint64_t)start[j] - glo, de = (uint64_t)end[j] - glo;
				if (ds >= span || de >= span)
					break;
				int64_t s = (int64_t)(base + (double)(int64_t)ds * slope + 0.5);
				int64_t e = (int64_t)(base + (double)(int64_t)de * slope + 0.5);
				e = e > s ? e : s;
				start[j] = s;
				end[j] = e - s;
				lo = s < lo ? s : lo;
				hi = e > hi ? e : hi;
			}
			if (j == n)
				break;
		}
		int64_t s = clockmap_ns(cm, g, (uint64_t)start[j]);
		int64_t e = clockmap_ns(cm, g, (uint64_t)end[j]);
		e = e > s ? e : s;
		start[j] = s;
		end[j] = e - s;
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
		j++;
	}
	t->min_ns = lo;
	t->max_ns = hi;
}

/* ---------------------------------------------------------------------------------------- */
/* Loading a .opscope file. */

enum ref_kind { REF_NONE, REF_RANGE, REF_INSTANT };

/* Loader state of one track of the file being loaded. */
struct load_track {
	uint64_t *stack; /* open ranges, innermost last (range indices) */
	uint64_t nstack, stack_cap;
	uint64_t last_ticks;	 /* time of the latest event (times never go back) */
	uint64_t marks;		 /* sum of DROP_MARK counts */
	uint64_t drops_record;	 /* last DROPS total */
	bool has_drops_record;	 /* a DROPS record was seen */
	enum ref_kind last_kind; /* what the next ARG of this track attaches to */
	uint32_t last_track;	 /* its track (an async begin's range is on the async track) */
	uint64_t last_index;	 /* its index */
};

struct loader {
	struct model *m;
	struct reader r;
	struct model_file *file; /* m->files[fi]; refreshed after growth of m->files */
	uint32_t fi;		 /* index of the file in m->files */
	uint32_t first_track;	 /* tracks from here on belong to this file */
	uint64_t first_flow;	 /* flows from here on belong to this file */
	uint64_t first_mark;	 /* drop marks from here on belong to this file */
	uint32_t *strmap;	 /* file string id -> model id + 1, 0 if undefined */
	uint32_t nstrmap;	 /* entries in strmap */
	struct load_track *lt;	 /* per track, indexed by track - first_track */
	uint64_t lt_cap;	 /* entries allocated in lt */
	struct hmap tracks;	 /* file track -> model track; (1 << 32 | pid) -> async track */
	struct hmap flows;	 /* flow id -> index in m->flows */
	struct hmap asyncs;	 /* async id -> (async track << 40 | range index) */
	struct load_track *cur;	 /* state of the track whose events are being read */
	uint64_t max_ticks;	 /* latest tick of the file */
};

static int loader_oom(struct loader *L, size_t offset)
{
	L->m->oom = true;
	snprintf(L->r.err, sizeof(L->r.err), "%s: offset %zu: out of memory", L->r.name, offset);
	L->r.rc = OPSCOPE_ENOMEM;
	return OPSCOPE_ENOMEM;
}

static uint32_t loader_str(struct loader *L, uint64_t id)
{
	if (id == 0)
		return 0;
	if (id < L->nstrmap && L->strmap[id] != 0)
		return L->strmap[id] - 1;
	L->file->bad_strings++;
	return 0;
}

static struct load_track *loader_lt(struct loader *L, uint32_t track)
{
	return &L->lt[track - L->first_track];
}

/* A new model track of this file, with its loader state. */
static uint32_t loader_new_track(struct loader *L, uint32_t kind, uint32_t pid, uint64_t tid)
{
	uint32_t t = model_add_track(L->m, kind, pid, tid, 0);
	if (t == MODEL_NO_TRACK)
		return t;
	uint64_t need = (uint64_t)t - L->first_track + 1;
	if (!grow((void **)&L->lt, sizeof(*L->lt), &L->lt_cap, need)) {
		L->m->oom = true;
		L->m->ntracks--;
		return MODEL_NO_TRACK;
	}
	memset(&L->lt[need - 1], 0, sizeof(*L->lt));
	L->m->tracks[t].file = L->fi;
	return t;
}

static uint32_t loader_track(struct loader *L, uint32_t file_track)
{
	uint64_t *v = hmap_find(&L->tracks, file_track);
	if (v)
		return (uint32_t)*v;
	uint32_t t = loader_new_track(L, MODEL_TRACK_THREAD, L->r.hdr.pid, 0);
	if (t == MODEL_NO_TRACK)
		return t;
	L->m->tracks[t].file_track = file_track;
	if (!hmap_put(&L->tracks, file_track, t)) {
		L->m->oom = true;
		return MODEL_NO_TRACK;
	}
	return t;
}

static uint32_t loader_async_track(struct loader *L, uint32_t pid)
{
	uint64_t key = ((uint64_t)1 << 32) | pid;
	uint64_t *v = hmap_find(&L->tracks, key);
	if (v)
		return (uint32_t)*v;
	uint32_t t = loader_new_track(L, MODEL_TRACK_ASYNC, pid, 0);
	if (t == MODEL_NO_TRACK)
		return t;
	L->m->tracks[t].file_track = UINT32_MAX;
	L->m->tracks[t].name = model_intern(L->m, "async", 5);
	if (!hmap_put(&L->tracks, key, t)) {
		L->m->oom = true;
		return MODEL_NO_TRACK;
	}
	return t;
}

static int load_metadata(struct loader *L, const struct reader_record *rec)
{
	struct cursor c;
	reader_payload_cursor(&L->r, rec, &c);
	uint32_t count = cursor_u32(&c);
	for (uint32_t i = 0; i < count && !c.failed; i++) {
		uint32_t klen, vlen;
		const char *k = cursor_str(&c, &klen);
		const char *v = cursor_str(&c, &vlen);
		if (c.failed)
			break;
		uint32_t key = model_intern(L->m, k, klen);
		if (key)
			model_set_meta(L->m, L->r.hdr.pid, key, model_intern(L->m, v, vlen));
	}
	if (c.failed)
		return reader_fail(&L->r, rec->offset, "METADATA payload is cut short");
	return L->m->oom ? loader_oom(L, rec->offset) : 0;
}

static int load_strings(struct loader *L, const struct reader_record *rec)
{
	struct cursor c;
	reader_payload_cursor(&L->r, rec, &c);
	uint32_t first = cursor_u32(&c);
	uint32_t count = cursor_u32(&c);
	if (c.failed)
		return reader_fail(&L->r, rec->offset, "STRINGS payload is cut short");
	if (count > cursor_left(&c) / 4)
		return reader_fail(&L->r, rec->offset, "STRINGS count %u exceeds the payload",
				   count);
	uint64_t end = (uint64_t)first + count;
	if (end > MAX_FILE_STRING_IDS)
		return reader_fail(&L->r, rec->offset, "string id %llu beyond the limit of %u",
				   (unsigned long long)end, MAX_FILE_STRING_IDS);
	if (end > L->nstrmap) {
		/* calloc: untouched pages of a sparse id space cost no memory; 0 = undefined */
		uint64_t cap = L->nstrmap ? L->nstrmap : 256;
		while (cap < end)
			cap *= 2;
		if (cap > MAX_FILE_STRING_IDS)
			cap = MAX_FILE_STRING_IDS;
		uint32_t *p = calloc((size_t)cap, sizeof(*p));
		if (!p)
			return loader_oom(L, rec->offset);
		if (L->nstrmap)
			memcpy(p, L->strmap, (size_t)L->nstrmap * sizeof(*p));
		free(L->strmap);
		L->strmap = p;
		L->nstrmap = (uint32_t)cap;
	}
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len;
		const char *s = cursor_str(&c, &len);
		if (c.failed)
			return reader_fail(&L->r, rec->offset, "STRINGS payload is cut short");
		if ((uint64_t)first + i == 0)
			continue; /* id 0 is always "" */
		L->strmap[first + i] = model_intern(L->m, s, len) + 1;
	}
	return L->m->oom ? loader_oom(L, rec->offset) : 0;
}

static int load_thread(struct loader *L, const struct reader_record *rec)
{
	struct ops_thread_payload p;
	int rc = reader_parse_thread(&L->r, rec, &p);
	if (rc)
		return rc;
	uint32_t t = loader_track(L, p.track);
	if (t == MODEL_NO_TRACK)
		return loader_oom(L, rec->offset);
	struct model_track *tr = &L->m->tracks[t];
	tr->pid = p.pid;
	tr->tid = p.tid;
	tr->flags = p.flags;
	if (p.name_id)
		tr->name = loader_str(L, p.name_id);
	return 0;
}

static int load_timers(struct loader *L, const struct reader_record *rec)
{
	struct cursor c;
	reader_payload_cursor(&L->r, rec, &c);
	uint32_t count = cursor_u32(&c);
	if (c.failed || count > cursor_left(&c) / sizeof(struct ops_timer_entry))
		return reader_fail(&L->r, rec->offset, "TIMERS count exceeds the payload");
	struct model *m = L->m;
	if (!grow32((void **)&m->timers, sizeof(*m->timers), &m->timers_cap,
		    (uint64_t)m->ntimers + count))
		return loader_oom(L, rec->offset);
	for (uint32_t i = 0; i < count; i++) {
		struct model_timer *t = &m->timers[m->ntimers++];
		t->pid = L->r.hdr.pid;
		t->name = loader_str(L, cursor_u32(&c));
		(void)cursor_u32(&c);
		t->count = cursor_u64(&c);
		t->total_ns = cursor_u64(&c);
		t->max_ns = cursor_u64(&c);
		t->min_ns = cursor_u64(&c);
	}
	return 0;
}

static bool loader_push(struct load_track *lt, uint64_t idx)
{
	if (!grow((void **)&lt->stack, sizeof(*lt->stack), &lt->stack_cap, lt->nstack + 1))
		return false;
	lt->stack[lt->nstack++] = idx;
	return true;
}

/* Close range `idx` of `track` at `ticks` (dur_ns holds the end tick until the file ends). */
static void loader_close(struct model_track *t, uint64_t idx, uint64_t ticks)
{
	t->ranges.dur_ns[idx] = (int64_t)ticks;
}

static int loader_end(struct loader *L, uint32_t track, const struct reader_event *ev,
		      uint64_t ticks)
{
	struct load_track *lt = loader_lt(L, track);
	struct model_track *t = &L->m->tracks[track];
	if (lt->nstack == 0) {
		L->file->unmatched_ends++;
		return 0;
	}
	uint64_t top = lt->stack[lt->nstack - 1];
	uint32_t name = ev->name_id ? loader_str(L, ev->name_id) : 0;
	if (!ev->name_id || t->ranges.name[top] == name) {
		loader_close(t, top, ticks);
		lt->nstack--;
		L->cur->last_kind = REF_RANGE;
		L->cur->last_track = track;
		L->cur->last_index = top;
		return 0;
	}
	/* The END names an outer range: close everything inside it too. The search is bounded
	 * by the stack, which is bounded by the events already read. */
	L->file->mismatched_ends++;
	uint64_t k = lt->nstack;
	while (k > 0 && t->ranges.name[lt->stack[k - 1]] != name)
		k--;
	if (k == 0)
		return 0; /* names nothing open: ignored */
	for (uint64_t j = lt->nstack; j > k; j--) {
		uint64_t idx = lt->stack[j - 1];
		loader_close(t, idx, ticks);
		t->ranges.flags[idx] |= MODEL_RANGEF_MISMATCH;
	}
	uint64_t idx = lt->stack[k - 1];
	loader_close(t, idx, ticks);
	lt->nstack = k - 1;
	L->cur->last_kind = REF_RANGE;
	L->cur->last_track = track;
	L->cur->last_index = idx;
	return 0;
}

/* Append an argument to the event whose first_arg and nargs are *first and *n (fewer than
 * UINT32_MAX), keeping the event's arguments consecutive. 0 or OPSCOPE_ENOMEM. */
static int attach_arg(struct model *m, uint64_t *first, uint32_t *n, uint32_t key, uint8_t type,
		      uint64_t bits)
{
	if (*n && *first + *n != m->nargs) {
		/* args of this event are not the last block (args came after its END):
		 * move them to the end so they stay consecutive */
		uint64_t old = *first, cnt = *n;
		*first = m->nargs;
		for (uint64_t i = 0; i < cnt; i++) {
			if (model_add_arg(m, m->args.key[old + i], m->args.type[old + i],
					  m->args.bits[old + i]) == MODEL_NONE)
				return OPSCOPE_ENOMEM;
		}
	}
	uint64_t a = model_add_arg(m, key, type, bits);
	if (a == MODEL_NONE)
		return OPSCOPE_ENOMEM;
	if (*n == 0)
		*first = a;
	(*n)++;
	return 0;
}

static int loader_arg(struct loader *L, const struct reader_event *ev)
{
	struct model *m = L->m;
	uint64_t *first;
	uint32_t *n;
	if (L->cur->last_kind == REF_RANGE) {
		first = &m->tracks[L->cur->last_track].ranges.first_arg[L->cur->last_index];
		n = &m->tracks[L->cur->last_track].ranges.nargs[L->cur->last_index];
	} else if (L->cur->last_kind == REF_INSTANT) {
		first = &m->tracks[L->cur->last_track].instants.first_arg[L->cur->last_index];
		n = &m->tracks[L->cur->last_track].instants.nargs[L->cur->last_index];
	} else {
		L->file->orphan_args++;
		return 0;
	}
	if (*n == UINT32_MAX) {
		L->file->orphan_args++;
		return 0;
	}
	uint32_t key = loader_str(L, ev->name_id);
	uint64_t bits = ev->value;
	if (ev->arg_type == OPS_ARG_STR)
		bits = loader_str(L, ev->value);
	return attach_arg(m, first, n, key, ev->arg_type, bits);
}

static int loader_flow(struct loader *L, uint32_t track, const struct reader_event *ev,
		       uint64_t ticks)
{
	struct model *m = L->m;
	struct load_track *lt = loader_lt(L, track);
	uint64_t range = lt->nstack ? lt->stack[lt->nstack - 1] : MODEL_NONE;
	bool out = ev->kind == OPS_EV_FLOW_OUT;
	uint64_t *v = hmap_find(&L->flows, ev->value);
	struct model_flow *f = NULL;
	if (v) {
		f = &m->flows[*v];
		if ((out ? f->from_track : f->to_track) != MODEL_NO_TRACK)
			f = NULL; /* that end is taken: the id was reused, start a new flow */
	}
	if (!f) {
		if (!grow((void **)&m->flows, sizeof(*m->flows), &m->flows_cap, m->nflows + 1))
			return OPSCOPE_ENOMEM;
		f = &m->flows[m->nflows];
		*f = (struct model_flow){ ev->value, MODEL_NO_TRACK, MODEL_NO_TRACK, 0,
					  0,	     MODEL_NONE,     MODEL_NONE };
		if (!hmap_put(&L->flows, ev->value, m->nflows))
			return OPSCOPE_ENOMEM;
		m->nflows++;
	}
	if (out) {
		f->from_track = track;
		f->from_ns = (int64_t)ticks;
		f->from_range = range;
	} else {
		f->to_track = track;
		f->to_ns = (int64_t)ticks;
		f->to_range = range;
	}
	return 0;
}

static int loader_async_begin(struct loader *L, uint32_t track, const struct reader_event *ev,
			      uint64_t ticks)
{
	uint32_t at = loader_async_track(L, L->m->tracks[track].pid);
	if (at == MODEL_NO_TRACK)
		return OPSCOPE_ENOMEM;
	L->cur = loader_lt(L, track); /* L->lt may have moved */
	uint64_t idx = model_add_range(L->m, at, (int64_t)ticks, (int64_t)ticks,
				       loader_str(L, ev->name_id), ev->category, 0);
	if (idx == MODEL_NONE || idx >= ((uint64_t)1 << 40))
		return OPSCOPE_ENOMEM;
	/* open until ASYNC_END: flagged unclosed now, the flag is cleared when it ends */
	L->m->tracks[at].ranges.flags[idx] = MODEL_RANGEF_UNCLOSED;
	if (!hmap_put(&L->asyncs, ev->value, ((uint64_t)at << 40) | idx))
		return OPSCOPE_ENOMEM;
	L->cur->last_kind = REF_RANGE;
	L->cur->last_track = at;
	L->cur->last_index = idx;
	return 0;
}

static int loader_async_end(struct loader *L, const struct reader_event *ev, uint64_t ticks)
{
	uint64_t *v = hmap_find(&L->asyncs, ev->value);
	if (!v || *v == MODEL_NONE) {
		L->file->unmatched_async++;
		return 0;
	}
	uint32_t at = (uint32_t)(*v >> 40);
	uint64_t idx = *v & (((uint64_t)1 << 40) - 1);
	struct model_track *t = &L->m->tracks[at];
	uint64_t start = (uint64_t)t->ranges.start_ns[idx];
	loader_close(t, idx, ticks > start ? ticks : start);
	t->ranges.flags[idx] &= (uint8_t)~MODEL_RANGEF_UNCLOSED;
	*v = MODEL_NONE;
	L->cur->last_kind = REF_RANGE;
	L->cur->last_track = at;
	L->cur->last_index = idx;
	return 0;
}

/* One event the general way: every kind but the BEGINs and ENDs the loop in load_events
 * does itself (a BEGIN still comes here when its columns need room or its name id is not
 * defined, an END when it names an outer range or nothing is open). */
static int load_event(struct loader *L, uint32_t track, const struct reader_event *ev)
{
	struct model *m = L->m;
	struct load_track *lt = L->cur;
	uint64_t ticks = ev->ticks, idx;
	switch (ev->kind) {
	case OPS_EV_BEGIN:
		idx = model_add_range(m, track, (int64_t)ticks, (int64_t)ticks,
				      loader_str(L, ev->name_id), ev->category,
				      lt->nstack > UINT32_MAX ? UINT32_MAX : (uint32_t)lt->nstack);
		if (idx == MODEL_NONE || !loader_push(lt, idx))
			return OPSCOPE_ENOMEM;
		lt->last_kind = REF_RANGE;
		lt->last_track = track;
		lt->last_index = idx;
		return 0;
	case OPS_EV_END:
		return loader_end(L, track, ev, ticks);
	case OPS_EV_INSTANT:
		idx = model_add_instant(m, track, (int64_t)ticks, loader_str(L, ev->name_id),
					ev->category);
		if (idx == MODEL_NONE)
			return OPSCOPE_ENOMEM;
		lt->last_kind = REF_INSTANT;
		lt->last_track = track;
		lt->last_index = idx;
		return 0;
	case OPS_EV_COUNTER:
		lt->last_kind = REF_NONE;
		if (model_add_counter(m, track, (int64_t)ticks, loader_str(L, ev->name_id),
				      ev->f64) == MODEL_NONE)
			return OPSCOPE_ENOMEM;
		return 0;
	case OPS_EV_ARG:
		return loader_arg(L, ev);
	case OPS_EV_FLOW_OUT:
	case OPS_EV_FLOW_IN:
		lt->last_kind = REF_NONE;
		return loader_flow(L, track, ev, ticks);
	case OPS_EV_ASYNC_BEGIN:
		return loader_async_begin(L, track, ev, ticks);
	case OPS_EV_ASYNC_END:
		return loader_async_end(L, ev, ticks);
	case OPS_EV_DROP_MARK:
		lt->marks += ev->value;
		lt->last_kind = REF_NONE;
		if (!grow((void **)&m->drop_marks, sizeof(*m->drop_marks), &m->drop_marks_cap,
			  m->ndrop_marks + 1))
			return OPSCOPE_ENOMEM;
		m->drop_marks[m->ndrop_marks++] =
			(struct model_drop_mark){ track, (int64_t)ticks, ev->value };
		return 0;
	}
	return 0;
}

/* The hot state of the track whose events are being read, in locals of load_events: stores
 * into the columns could otherwise alias it, and the compiler would reload it after each.
 * Kept small enough for registers: what the fast loop did (how many BEGINs and ENDs, so the
 * target of the next ARG) is worked out when it is written back. */
struct hot_track {
	struct model_ranges r;
	uint64_t nranges, nstack, *stack;
	uint64_t ranges_cap, stack_cap; /* room in the columns and the stack */
	uint64_t last_index;		/* range of the latest BEGIN or END of the fast loop */
	const uint32_t *strmap;
	uint64_t nstrmap;
	uint64_t nranges0, nstack0; /* nranges and nstack when read */
	uint64_t args;		    /* ARGs the block loop attached (load2_blocks) */
};

static struct hot_track hot_get(const struct loader *L, uint32_t track)
{
	const struct model_track *t = &L->m->tracks[track];
	const struct load_track *lt = &L->lt[track - L->first_track];
	return (struct hot_track){ .r = t->ranges,
				   .nranges = t->nranges,
				   .nstack = lt->nstack,
				   .stack = lt->stack,
				   .ranges_cap = t->nranges_cap,
				   .stack_cap = lt->stack_cap,
				   .last_index = lt->last_index,
				   .strmap = L->strmap,
				   .nstrmap = L->nstrmap,
				   .nranges0 = t->nranges,
				   .nstack0 = lt->nstack };
}

static void hot_put(struct loader *L, uint32_t track, const struct hot_track *h)
{
	struct load_track *lt = loader_lt(L, track);
	/* the fast loop appends a range per BEGIN and pops one per END, and nothing else */
	uint64_t begins = h->nranges - h->nranges0, ends = h->nstack0 + begins - h->nstack;
	L->m->tracks[track].nranges = h->nranges;
	lt->nstack = h->nstack;
	L->file->by_kind[OPS_EV_BEGIN] += begins;
	L->file->by_kind[OPS_EV_END] += ends;
	L->file->by_kind[OPS_EV_ARG] += h->args;
	if (begins || ends) {
		lt->last_kind = REF_RANGE;
		lt->last_track = track;
		lt->last_index = h->last_index;
	}
}

/* An event the loops in load_events do not do themselves, through load_event, with the hot state
 * written back before and read again after (it may grow and move anything). Takes and returns
 * the state by value, so that the caller's copy never has its address taken. */
static struct hot_track load_other(struct loader *L, uint32_t track, struct hot_track h,
				   const struct reader_event *ev, uint64_t ticks, int *rc)
{
	hot_put(L, track, &h);
	L->file->by_kind[ev->kind & 15]++;
	struct reader_event e = *ev;
	e.ticks = ticks;
	L->cur = loader_lt(L, track);
	*rc = load_event(L, track, &e);
	return hot_get(L, track);
}

/* The time of an event on its track: times never go back on a track, even across records,
 * so one before the latest is taken as the latest (*last). An ARG has its event's time. */
static inline uint64_t track_ticks(uint64_t *last, const struct reader_event *ev)
{
	if (ev->kind == OPS_EV_ARG)
		return ev->ticks;
	*last = ev->ticks < *last ? *last : ev->ticks;
	return *last;
}

/* The ARG the block loop of load2_blocks stopped at, if it belongs to the latest BEGIN or END
 * of the fast loops (any since hot_get: the target of ARGs stays the same across ARGs) and
 * nothing about it is odd; false (nothing consumed) sends it the general way. Its fields are
 * in their streams: the block that stopped at it had room for it. */
__attribute__((noinline)) static bool block_arg(struct model *m, struct reader_events *it,
						struct hot_track *h)
{
	unsigned tag = it->c.base[it->c.pos];
	unsigned tw = OPS_TIME_WIDTH(OPS_TAG_TIME(tag)), iw = OPS_ID_WIDTH(OPS_TAG_ID(tag));
	size_t tp = it->pos[READER_TIME], ip = it->pos[READER_ID], bp = it->pos[READER_BYTE];
	bool target = h->nranges != h->nranges0 || h->nstack != h->nstack0;
	if (OPS_TAG_KIND(tag) != OPS_EV_ARG || !target || it->end[READER_TIME] - tp < 8 ||
	    it->end[READER_ID] - ip < 4 || it->end[READER_BYTE] - bp < 1)
		return false;
	uint64_t t = reader_time_field(it->payload + tp, OPS_TAG_TIME(tag));
	uint32_t id = reader_id_field(it->payload + ip, OPS_TAG_ID(tag));
	unsigned type = it->payload[bp];
	uint64_t bits = type == OPS_ARG_I64 ? (uint64_t)zigzag_decode(t) : t;
	const uint32_t *strmap = h->strmap;
	bool bad_str = type == OPS_ARG_STR && t && (t >= h->nstrmap || !strmap[t]);
	if (type < OPS_ARG_I64 || type > OPS_ARG_STR || bad_str || id >= h->nstrmap ||
	    (id && !strmap[id]) || h->r.nargs[h->last_index] == UINT32_MAX)
		return false;
	if (type == OPS_ARG_STR && t)
		bits = strmap[t] - 1;
	uint64_t i = h->last_index;
	if (attach_arg(m, &h->r.first_arg[i], &h->r.nargs[i], id ? strmap[id] - 1 : 0,
		       (uint8_t)type, bits) != 0)
		return false;
	it->c.pos++;
	it->seen++;
	it->pos[READER_TIME] = tp + tw;
	it->pos[READER_ID] = ip + iw;
	it->pos[READER_BYTE] = bp + 1;
	h->args++;
	return true;
}

/*
 * The BEGINs and ENDs of an EVENTS2 record, in blocks of events that cannot run past a stream
 * even at the widest fields: with that checked once per block and the state in locals, an
 * event is a tag, two masked loads, a few compares and the stores into the columns. An ARG
 * ends a block and is attached by block_arg (in the block loop it would cost the other events
 * registers). Stops at the first event of any other kind or anything odd (a bad id, a
 * time that would overflow, an END that is not the innermost's, a full column or stack) and
 * at the record's last few events, for reader_fast2_next and the general path.
 */
static inline __attribute__((always_inline)) void
load2_blocks(struct model *m, struct reader_events *it, struct hot_track *h, uint64_t *last)
{
	const uint8_t *p = it->payload;
	for (;;) {
		uint64_t k = it->count - it->seen;
		uint64_t room[4] = { (it->end[READER_TIME] - it->pos[READER_TIME]) / 8,
				     (it->end[READER_ID] - it->pos[READER_ID]) / 4,
				     it->end[READER_BYTE] - it->pos[READER_BYTE],
				     h->ranges_cap - h->nranges };
		for (int i = 0; i < 4; i++)
			k = room[i] < k ? room[i] : k;
		if (k < 16 || it->ticks < *last)
			return; /* a short block is not worth it; times clamped go the other way */
		const uint8_t *tg = it->c.base + it->c.pos, *tp = p + it->pos[READER_TIME];
		const uint8_t *ip = p + it->pos[READER_ID], *bp = p + it->pos[READER_BYTE];
		uint64_t ticks = it->ticks, nr = h->nranges, ns = h->nstack;
		const struct model_ranges r = h->r;
		uint64_t *stack = h->stack;
		const uint32_t *strmap = h->strmap;
		uint64_t nstrmap = h->nstrmap, stack_cap = h->stack_cap;
		uint64_t j = 0;
		/* k leaves room in the columns for a BEGIN per event */
		for (; j < k; j++) {
			unsigned tag = tg[j], tc = OPS_TAG_TIME(tag), ic = OPS_TAG_ID(tag);
			uint64_t t = reader_time_field(tp, tc);
			uint32_t id = reader_id_field(ip, ic);
			if (t > UINT64_MAX - ticks)
				break;
			uint64_t now = ticks + t;
			if (OPS_TAG_KIND(tag) == OPS_EV_BEGIN) {
				if (ns == stack_cap || id >= nstrmap || (id && !strmap[id]))
					break; /* the general path grows, or reports */
				uint64_t idx = nr++;
				r.start_ns[idx] = (int64_t)now;
				r.dur_ns[idx] = (int64_t)now;
				r.name[idx] = id ? strmap[id] - 1 : 0;
				r.category[idx] = *bp++;
				r.depth[idx] = (uint32_t)(ns < UINT32_MAX ? ns : UINT32_MAX);
				/* flags, first_arg and nargs are 0 already (column memory) */
				stack[ns++] = idx;
			} else if (OPS_TAG_KIND(tag) == OPS_EV_END && ns &&
				   (id == 0 || (id < nstrmap && strmap[id] != 0 &&
						r.name[stack[ns - 1]] == strmap[id] - 1))) {
				r.dur_ns[stack[--ns]] = (int64_t)now;
			} else {
				break;
			}
			ticks = now;
			tp += OPS_TIME_WIDTH(tc);
			ip += OPS_ID_WIDTH(ic);
		}
		it->seen += (uint32_t)j;
		it->c.pos += j;
		it->pos[READER_TIME] = (size_t)(tp - p);
		it->pos[READER_ID] = (size_t)(ip - p);
		it->pos[READER_BYTE] = (size_t)(bp - p);
		it->ticks = ticks;
		if (j)
			*last = ticks; /* >= *last: checked before the block; times only grow */
		h->nranges = nr;
		h->nstack = ns;
		/* the range of the block's last event, for ARGs: a BEGIN's is the newest range, an
		 * END's is still in the stack slot it was popped from */
		if (j)
			h->last_index =
				OPS_TAG_KIND(tg[j - 1]) == OPS_EV_BEGIN ? nr - 1 : stack[ns];
		if (j < k && !block_arg(m, it, h))
			return;
	}
}

/* The events of an EVENTS (v2 false) or EVENTS2 record: inlined once per fast decoder, so
 * that each loop has its decoder's state in registers, and once without them (use_fast
 * false: model.general_only). */
static inline __attribute__((always_inline)) int load_events_with(struct loader *L,
								  struct reader_events *it,
								  const struct reader_record *rec,
								  bool v2, bool use_fast)
{
	int rc = 0;
	uint32_t track = loader_track(L, it->track);
	if (track == MODEL_NO_TRACK)
		return loader_oom(L, rec->offset);
	uint64_t last = loader_lt(L, track)->last_ticks;
	struct hot_track h = hot_get(L, track);
	struct reader_event ev;
	/* the last event of the track stays the target of ARGs across records: a chunk may
	 * end between an event and its arguments */
	for (;;) {
		struct reader_fast fast;
		struct reader_fast2 fast2;
		if (v2 && use_fast)
			load2_blocks(L->m, it, &h, &last);
		if (v2)
			reader_fast2_begin(it, &fast2);
		else
			reader_fast_begin(it, &fast);
		while (use_fast &&
		       (v2 ? reader_fast2_next(&fast2, &ev) : reader_fast_next(&fast, &ev))) {
			uint64_t ticks = track_ticks(&last, &ev);
			uint32_t id = ev.name_id;
			/* a BEGIN with room for it (else the general path grows the columns) */
			if (ev.kind == OPS_EV_BEGIN && h.nranges < h.ranges_cap &&
			    h.nstack < h.stack_cap && id < h.nstrmap && (id == 0 || h.strmap[id])) {
				uint64_t idx = h.nranges++;
				h.r.start_ns[idx] = (int64_t)ticks;
				h.r.dur_ns[idx] = (int64_t)ticks;
				h.r.name[idx] = id ? h.strmap[id] - 1 : 0;
				h.r.category[idx] = ev.category;
				h.r.depth[idx] =
					(uint32_t)(h.nstack < UINT32_MAX ? h.nstack : UINT32_MAX);
				/* flags, first_arg and nargs are 0 already (column memory) */
				h.stack[h.nstack++] = idx;
				h.last_index = idx;
				continue;
			}
			/* an END that closes the innermost range: unnamed or naming it (a bad id goes
			 * to loader_end, which counts it) */
			if (ev.kind == OPS_EV_END && h.nstack &&
			    (id == 0 || (id < h.nstrmap && h.strmap[id] != 0 &&
					 h.r.name[h.stack[h.nstack - 1]] == h.strmap[id] - 1))) {
				uint64_t top = h.stack[--h.nstack];
				h.r.dur_ns[top] = (int64_t)ticks;
				h.last_index = top;
				continue;
			}
			h = load_other(L, track, h, &ev, ticks, &rc);
			if (rc != 0)
				break;
		}
		if (v2)
			reader_fast2_end(it, &fast2);
		else
			reader_fast_end(it, &fast);
		if (rc != 0) {
			rc = loader_oom(L, rec->offset);
			break;
		}
		/* the event the fast decoder stopped at, the general way */
		rc = reader_events_next(&L->r, it, &ev);
		if (rc != 1)
			break;
		h = load_other(L, track, h, &ev, track_ticks(&last, &ev), &rc);
		if (rc != 0) {
			rc = loader_oom(L, rec->offset);
			break;
		}
	}
	hot_put(L, track, &h);
	/* counted once per record; on an error, the events before it */
	L->m->tracks[track].events += it->seen;
	L->file->events += it->seen;
	loader_lt(L, track)->last_ticks = last;
	if (last > L->max_ticks)
		L->max_ticks = last;
	return rc;
}

static int load_events(struct loader *L, const struct reader_record *rec)
{
	struct reader_events it;
	int rc = reader_events_begin(&L->r, rec, &it);
	if (rc)
		return rc;
	if (L->m->general_only)
		return load_events_with(L, &it, rec, it.v2, false);
	return it.v2 ? load_events_with(L, &it, rec, true, true)
		     : load_events_with(L, &it, rec, false, true);
}

static int load_record(struct loader *L, const struct reader_record *rec)
{
	struct model_file *f = L->file;
	switch (rec->type) {
	case OPS_REC_METADATA:
		return load_metadata(L, rec);
	case OPS_REC_CLOCK: {
		struct ops_clock_payload p;
		int rc = reader_parse_clock(&L->r, rec, &p);
		if (rc)
			return rc;
		if (f->nclocks >= (1u << 20))
			return 0;	   /* a sane file has a handful; ignore a flood */
		uint64_t cap = f->nclocks; /* grown one by one: a handful per file */
		if (!grow((void **)&f->clocks, sizeof(*f->clocks), &cap, (uint64_t)f->nclocks + 1))
			return loader_oom(L, rec->offset);
		int64_t mono = p.monotonic_ns > (uint64_t)TIME_LIMIT ? TIME_LIMIT
								     : (int64_t)p.monotonic_ns;
		f->clocks[f->nclocks++] =
			(struct model_clock){ p.ticks, mono, p.realtime_ns, p.ticks_per_second };
		return 0;
	}
	case OPS_REC_STRINGS:
		return load_strings(L, rec);
	case OPS_REC_THREAD:
		return load_thread(L, rec);
	case OPS_REC_EVENTS:
	case OPS_REC_EVENTS2:
		return load_events(L, rec);
	case OPS_REC_DROPS: {
		struct ops_drops_payload p;
		int rc = reader_parse_drops(&L->r, rec, &p);
		if (rc)
			return rc;
		uint32_t t = loader_track(L, p.track);
		if (t == MODEL_NO_TRACK)
			return loader_oom(L, rec->offset);
		loader_lt(L, t)->drops_record = p.dropped;
		loader_lt(L, t)->has_drops_record = true;
		return 0;
	}
	case OPS_REC_TIMERS:
		return load_timers(L, rec);
	case OPS_REC_END: {
		int rc = reader_parse_end(&L->r, rec, &f->end);
		if (rc)
			return rc;
		f->complete = true;
		return 0;
	}
	}
	return 0;
}

/* The file is read: close what is open, map ticks to ns, sort, sum up. */
static void loader_finish(struct loader *L)
{
	struct model *m = L->m;
	struct model_file *f = L->file;
	uint64_t stop = L->max_ticks;
	if (f->complete && f->end.stop_ticks > stop)
		stop = f->end.stop_ticks;
	struct clockmap cm;
	if (!clockmap_init(&cm, f)) {
		m->oom = true;
		return;
	}
	struct clock_seg g = cm.seg;
	uint64_t file_dropped = 0;
	for (uint32_t ti = L->first_track; ti < m->ntracks; ti++) {
		struct model_track *t = &m->tracks[ti];
		struct load_track *lt = loader_lt(L, ti);
		struct model_ranges *r = &t->ranges;
		/* ranges still open: closed at the track's last time, or the stop time */
		uint64_t close = lt->last_ticks;
		if (f->complete && f->end.stop_ticks > close)
			close = f->end.stop_ticks;
		for (uint64_t j = 0; j < lt->nstack; j++) {
			uint64_t idx = lt->stack[j];
			loader_close(t, idx, close);
			r->flags[idx] |= MODEL_RANGEF_UNCLOSED;
		}
		if (t->kind == MODEL_TRACK_ASYNC) {
			for (uint64_t j = 0; j < t->nranges; j++)
				if (r->flags[j] & MODEL_RANGEF_UNCLOSED)
					r->dur_ns[j] = (int64_t)stop;
		}
		clock_ranges(&cm, &g, t);
		for (uint64_t j = 0; j < t->ninstants; j++) {
			int64_t s = clockmap_ns(&cm, &g, (uint64_t)t->instants.ts_ns[j]);
			t->instants.ts_ns[j] = s;
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		for (uint64_t j = 0; j < t->ncounters; j++) {
			int64_t s = clockmap_ns(&cm, &g, (uint64_t)t->counters.ts_ns[j]);
			t->counters.ts_ns[j] = s;
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		t->dropped = lt->has_drops_record ? lt->drops_record : lt->marks;
		file_dropped += t->dropped;
		if (t->min_ns < m->min_ns)
			m->min_ns = t->min_ns;
		if (t->max_ns > m->max_ns)
			m->max_ns = t->max_ns;
		free(lt->stack);
		lt->stack = NULL;
	}
	for (uint64_t i = L->first_flow; i < m->nflows; i++) {
		struct model_flow *fl = &m->flows[i];
		if (fl->from_track != MODEL_NO_TRACK)
			fl->from_ns = clockmap_ns(&cm, &g, (uint64_t)fl->from_ns);
		if (fl->to_track != MODEL_NO_TRACK)
			fl->to_ns = clockmap_ns(&cm, &g, (uint64_t)fl->to_ns);
	}
	for (uint64_t i = L->first_mark; i < m->ndrop_marks; i++)
		m->drop_marks[i].ts_ns = clockmap_ns(&cm, &g, (uint64_t)m->drop_marks[i].ts_ns);
	for (uint32_t ti = L->first_track; ti < m->ntracks; ti++)
		model_sort_track(m, ti);
	free(cm.slope);
	if (f->complete && f->end.events_dropped > file_dropped)
		file_dropped = f->end.events_dropped;
	f->dropped = file_dropped;
	m->dropped_total += file_dropped;
	m->events_total += f->events;
	m->complete = (m->nfiles == 1 || m->complete) && f->complete;
}

/* Decompressing takes a third of the time of a load of zstd records: a thread reads ahead
 * (reader_ahead_*) for compressed files of 1 MiB and more. OPSCOPE_LOAD_THREADS=0 or 1
 * decides instead (the tests use both). */
static bool loader_reads_ahead(const struct loader *L)
{
	const char *env = getenv("OPSCOPE_LOAD_THREADS");
	if (env && *env)
		return strcmp(env, "0") != 0;
	return (L->r.hdr.features & OPS_FEAT_ZSTD) && L->r.size >= (1u << 20);
}

static int loader_run(struct model *m, struct loader *L, char *err, size_t errsize)
{
	int rc = 0;
	L->m = m;
	L->first_track = m->ntracks;
	L->first_flow = m->nflows;
	L->first_mark = m->ndrop_marks;
	if (!grow32((void **)&m->files, sizeof(*m->files), &m->files_cap,
		    (uint64_t)m->nfiles + 1)) {
		m->oom = true;
		snprintf(err, errsize, "%s: out of memory", L->r.name);
		return OPSCOPE_ENOMEM;
	}
	L->fi = m->nfiles++;
	L->file = &m->files[L->fi];
	struct model_file *f = L->file;
	memset(f, 0, sizeof(*f));
	f->path = model_intern(m, L->r.name, strlen(L->r.name));
	f->format = model_intern(m, "opscope", 7);
	f->pid = L->r.hdr.pid;
	f->version = L->r.hdr.version;
	f->min_reader = L->r.hdr.min_reader_version;
	f->features = L->r.hdr.features;
	f->create_realtime_ns = L->r.hdr.create_realtime_ns;
	f->file_bytes = L->r.size;
	struct reader_record rec;
	struct reader_ahead ahead;
	bool ahead_on = loader_reads_ahead(L) && reader_ahead_start(&ahead, &L->r) == 0;
	while ((rc = ahead_on ? reader_ahead_next(&ahead, &rec) : reader_next(&L->r, &rec)) == 1) {
		if ((rc = load_record(L, &rec)) != 0)
			break;
	}
	if (ahead_on)
		reader_ahead_stop(&ahead, &L->r);
	f->valid_end = L->r.valid_end;
	f->discarded_bytes = L->r.discarded_bytes;
	f->records = L->r.records;
	f->skipped_records = L->r.skipped_records;
	if (L->r.tail_msg[0])
		f->tail_msg = model_intern(m, L->r.tail_msg, strlen(L->r.tail_msg));
	loader_finish(L);
	if (rc == 0 && m->oom)
		rc = loader_oom(L, L->r.pos);
	if (rc < 0 && err && errsize)
		snprintf(err, errsize, "%s", L->r.err[0] ? L->r.err : opscope_strerror(rc));
	return rc < 0 ? rc : 0;
}

static void loader_free(struct loader *L)
{
	if (L->lt && L->m) {
		for (uint64_t i = 0; i < L->lt_cap && L->first_track + i < L->m->ntracks; i++)
			free(L->lt[i].stack);
	}
	free(L->lt);
	free(L->strmap);
	hmap_free(&L->tracks);
	hmap_free(&L->flows);
	hmap_free(&L->asyncs);
	reader_close(&L->r);
}

int model_load_mem(struct model *m, const char *name, const void *data, size_t size, char *err,
		   size_t errsize)
{
	struct loader L;
	memset(&L, 0, sizeof(L));
	int rc = reader_open_mem(&L.r, name, data, size);
	if (rc) {
		if (err && errsize)
			snprintf(err, errsize, "%s", L.r.err);
		reader_close(&L.r);
		return rc;
	}
	rc = loader_run(m, &L, err, errsize);
	loader_free(&L);
	return rc;
}

int model_load_file(struct model *m, const char *path, char *err, size_t errsize)
{
	struct loader L;
	memset(&L, 0, sizeof(L));
	int rc = reader_open_file(&L.r, path);
	if (rc) {
		if (err && errsize)
			snprintf(err, errsize, "%s", L.r.err);
		return rc;
	}
	rc = loader_run(m, &L, err, errsize);
	loader_free(&L);
	return rc;
}

/* model_nest_track(), with out of memory reported in *oom (see sort_track). */
static uint64_t nest_track(struct model *m, uint32_t track, bool *oom)
{
	struct model_track *t = &m->tracks[track];
	struct model_ranges *r = &t->ranges;
	uint64_t n = t->nranges;
	if (n == 0)
		return 0;
	/* order: start ascending, then longer first (a parent before its children); recorded
	 * and most imported tracks are in that order already, and then no keys are made */
	bool sorted = true;
	for (uint64_t i = 1; i < n && sorted; i++)
		sorted = r->start_ns[i - 1] < r->start_ns[i] ||
			 (r->start_ns[i - 1] == r->start_ns[i] && r->dur_ns[i - 1] >= r->dur_ns[i]);
	if (!sorted) {
		struct sort_key *k = malloc(n * sizeof(*k));
		if (!k) {
			*oom = true;
			return 0;
		}
		for (uint64_t i = 0; i < n; i++)
			k[i] = (struct sort_key){ r->start_ns[i],
						  (uint64_t)(INT64_MAX - r->dur_ns[i]), i };
		if (!sort_keys_by_start(k, n)) {
			free(k);
			*oom = true;
			return 0;
		}
		permute_ranges(m, track, k, oom); /* frees k */
	}
	/* depth = number of open ranges that contain the start; ends of open ranges on a stack */
	uint64_t cap = 64, top = 0, overlaps = 0;
	int64_t *ends = malloc(cap * sizeof(*ends));
	if (!ends) {
		*oom = true;
		return 0;
	}
	for (uint64_t i = 0; i < n; i++) {
		int64_t s = r->start_ns[i], e = s + r->dur_ns[i];
		while (top && ends[top - 1] <= s) /* a range ending where this starts is done */
			top--;
		if (top && e > ends[top - 1])
			overlaps++; /* crosses the end of its parent: still nested under it */
		r->depth[i] = (uint32_t)(top < UINT32_MAX ? top : UINT32_MAX);
		if (top == cap) {
			int64_t *p = realloc(ends, 2 * cap * sizeof(*ends));
			if (!p) {
				*oom = true;
				break;
			}
			ends = p;
			cap *= 2;
		}
		ends[top++] = e;
	}
	free(ends);
	return overlaps;
}

uint64_t model_nest_track(struct model *m, uint32_t track)
{
	return nest_track(m, track, &m->oom);
}

/* model_nest_tracks' work on one track; its sums are per track, so that threads share
 * nothing they write. */
struct nest_job {
	struct model *m;
	uint64_t *overlaps; /* per track */
	bool *oom;	    /* per track */
};

static void nest_one(void *arg, uint32_t track)
{
	struct nest_job *j = arg;
	j->overlaps[track] = nest_track(j->m, track, &j->oom[track]);
	sort_track(j->m, track, &j->oom[track]);
}

static int larger_first(const void *a, const void *b, void *arg)
{
	const struct model *m = arg;
	uint64_t x = m->tracks[*(const uint32_t *)a].nranges;
	uint64_t y = m->tracks[*(const uint32_t *)b].nranges;
	return (x < y) - (x > y);
}

uint32_t *model_tracks_largest_first(const struct model *m, uint32_t first)
{
	uint32_t n = first < m->ntracks ? m->ntracks - first : 0;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		order[i] = first + i;
	qsort_r(order, n, sizeof(*order), larger_first, (void *)m);
	return order;
}

unsigned model_threads_for(const struct model *m, uint32_t first)
{
	uint64_t ranges = 0;
	for (uint32_t t = first; t < m->ntracks; t++)
		ranges += m->tracks[t].nranges;
	return ranges >= 200000 ? parallel_cpus() : 1;
}

uint64_t model_nest_tracks(struct model *m, uint32_t first, unsigned threads)
{
	uint32_t n = first < m->ntracks ? m->ntracks - first : 0;
	uint32_t *order = NULL;
	struct nest_job j = { m, NULL, NULL };
	if (n > 1 && threads > 1) {
		order = model_tracks_largest_first(m, first);
		j.overlaps = calloc(m->ntracks, sizeof(*j.overlaps));
		j.oom = calloc(m->ntracks, sizeof(*j.oom));
	}
	uint64_t overlaps = 0;
	if (!order || !j.overlaps || !j.oom) { /* one thread (or no memory for more) */
		for (uint32_t t = first; t < m->ntracks; t++) {
			overlaps += model_nest_track(m, t);
			model_sort_track(m, t);
		}
	} else {
		/* a track only reads the flows that end on other tracks, and writes its own
		 * columns: one thread a track needs no lock */
		parallel_for(n, order, threads, nest_one, &j);
		for (uint32_t t = first; t < m->ntracks; t++) {
			overlaps += j.overlaps[t];
			m->oom |= j.oom[t];
		}
	}
	free(order);
	free(j.overlaps);
	free(j.oom);
	return overlaps;
}

void model_finish_tracks(struct model *m, uint32_t first_track)
{
	for (uint32_t ti = first_track; ti < m->ntracks; ti++) {
		struct model_track *t = &m->tracks[ti];
		t->min_ns = INT64_MAX;
		t->max_ns = INT64_MIN;
		for (uint64_t j = 0; j < t->nranges; j++) {
			int64_t s = t->ranges.start_ns[j], e = s + t->ranges.dur_ns[j];
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = e > t->max_ns ? e : t->max_ns;
		}
		for (uint64_t j = 0; j < t->ninstants; j++) {
			int64_t s = t->instants.ts_ns[j];
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		for (uint64_t j = 0; j < t->ncounters; j++) {
			int64_t s = t->counters.ts_ns[j];
			t->min_ns = s < t->min_ns ? s : t->min_ns;
			t->max_ns = s > t->max_ns ? s : t->max_ns;
		}
		m->min_ns = t->min_ns < m->min_ns ? t->min_ns : m->min_ns;
		m->max_ns = t->max_ns > m->max_ns ? t->max_ns : m->max_ns;
	}
}

uint32_t model_add_file(struct model *m, const char *path, const char *format)
{
	if (!grow32((void **)&m->files, sizeof(*m->files), &m->files_cap,
		    (uint64_t)m->nfiles + 1)) {
		m->oom = true;
		return UINT32_MAX;
	}
	struct model_file *f = &m->files[m->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = model_intern(m, path, strlen(path));
	f->format = model_intern(m, format, strlen(format));
	return m->nfiles++;
}
