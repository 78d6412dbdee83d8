/*
 * hashmap.h: the tools' open-addressing hash tables (model, formats, analyze), in two shapes
 * that share one probing scheme (linear probing, a power-of-two number of slots, at most half
 * full):
 *
 *   struct hindex: an index of uint32_t entries into the caller's own array (string ids,
 *   aggregate items). The caller hashes its keys and says when an entry matches; the index
 *   stores only entry + 1 per slot (0 = empty), so a key lives once, in the caller's array.
 *   Lookups are static inline with an equality callback that the compiler inlines where the
 *   callback is a known function, so that hot loops pay no indirect call. Entries can be
 *   removed (backward-shift deletion: no tombstones, so lookups stay as short as if the
 *   removed entry had never been added), for tables of things that come and go.
 *
 *   struct hmap: a map u64 key -> u64 value, keys and values in the slots. Every key is
 *   allowed: UINT64_MAX marks empty slots, and that key itself is kept beside the slots.
 *   No removal.
 *
 * Single-threaded: a table is read and written by one thread at a time (the recording
 * runtime's lock-free tables are not this). Allocation failure leaves a table as it was.
 */
#ifndef OPSCOPE_UTIL_HASHMAP_H
#define OPSCOPE_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A good 64-bit mix (splitmix64's finalizer) for integer keys. */
static inline uint64_t hash_u64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* ---------------------------------------------------------------------------------------- */
/* struct hindex */

#define HINDEX_NONE    UINT32_MAX /* hindex_find: no such entry */
#define HINDEX_MAX_CAP (1u << 31) /* slots at most: entries below 2^30 */
#define HINDEX_MIN_CAP 256u	  /* slots of the first allocation */

struct hindex {
	uint32_t *slots; /* entry + 1 per slot, 0 = empty; NULL before the first entry */
	uint32_t cap;	 /* slots: 0 or a power of two */
	uint32_t count;	 /* entries held */
};

/* Does `entry` of the caller's array hold the key looked for (ctx says which)? */
typedef bool hindex_eq_fn(const void *ctx, uint32_t entry);
/* The caller's hash of the key of `entry` (for rehashing when the index grows). */
typedef uint64_t hindex_hash_fn(const void *ctx, uint32_t entry);

/* The entry whose key hashes to h and satisfies eq(ctx, entry), or HINDEX_NONE. */
static inline uint32_t hindex_find(const struct hindex *x, uint64_t h, hindex_eq_fn *eq,
				   const void *ctx)
{
	if (!x->cap)
		return HINDEX_NONE;
	uint32_t mask = x->cap - 1;
	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		uint32_t s = x->slots[i];
		if (!s)
			return HINDEX_NONE;
		if (eq(ctx, s - 1))
			return s - 1;
	}
}

/* Make room for one more entry, doubling and rehashing (hash(ctx, e) for each entry e held)
 * when the index would be more than half full. False when out of memory or at
 * HINDEX_MAX_CAP; the index is then as it was. */
bool hindex_reserve(struct hindex *x, hindex_hash_fn *hash, const void *ctx);

/* Add `entry` (below UINT32_MAX, not yet held) with hash h; hindex_reserve must have made
 * room. */
static inline void hindex_insert(struct hindex *x, uint64_t h, uint32_t entry)
{
	uint32_t mask = x->cap - 1;
	uint32_t i = (uint32_t)h & mask;
	while (x->slots[i])
		i = (i + 1) & mask;
	x->slots[i] = entry + 1;
	x->count++;
}

/* Remove `entry` (held, with hash h): the entries after it in its probe run that could not
 * otherwise be reached move back (hash(ctx, e) says where each one belongs). The caller's
 * array is untouched: the entry's index is not reused by the index. */
void hindex_remove(struct hindex *x, uint64_t h, uint32_t entry, hindex_hash_fn *hash,
		   const void *ctx);

void hindex_free(struct hindex *x);

/* ---------------------------------------------------------------------------------------- */
/* struct hmap */

#define HMAP_EMPTY_KEY UINT64_MAX /* marks an empty slot; as a key, kept in has_max/max_val */

struct hmap_slot {
	uint64_t key; /* HMAP_EMPTY_KEY: empty */
	uint64_t val;
};

struct hmap {
	struct hmap_slot *slots; /* NULL before the first key */
	uint64_t cap;		 /* slots: 0 or a power of two */
	uint64_t count;		 /* keys in the slots */
	bool has_max;		 /* key UINT64_MAX is held, its value in max_val */
	uint64_t max_val;
};

/* The value of key, or NULL; valid until the next hmap_put. */
static inline uint64_t *hmap_find(struct hmap *h, uint64_t key)
{
	if (key == HMAP_EMPTY_KEY)
		return h->has_max ? &h->max_val : NULL;
	if (!h->cap)
		return NULL;
	uint64_t mask = h->cap - 1;
	for (uint64_t i = hash_u64(key) & mask;; i = (i + 1) & mask) {
		struct hmap_slot *s = &h->slots[i];
		if (s->key == key)
			return &s->val;
		if (s->key == HMAP_EMPTY_KEY)
			return NULL;
	}
}

/* Set key's value (added or replaced). False when out of memory: the map is as it was. */
bool hmap_put(struct hmap *h, uint64_t key, uint64_t val);

void hmap_free(struct hmap *h);

#endif
