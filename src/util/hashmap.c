/*
 * hashmap.c: growth of the tables of hashmap.h. The slot arrays are written once when
 * allocated (zeroed_table, or a fill with HMAP_EMPTY_KEY) so that their pages are mapped
 * writable before the probing starts (see util/zeroed.h).
 */
#include "util/hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/zeroed.h"

/* Double the index (first allocation: HINDEX_MIN_CAP) when one more entry would fill it more
 * than half; the entries move to the new slots by the caller's hash. */
bool hindex_reserve(struct hindex *x, hindex_hash_fn *hash, const void *ctx)
{
	if (((uint64_t)x->count + 1) * 2 <= x->cap)
		return true;
	if (x->cap >= HINDEX_MAX_CAP)
		return false;
	uint32_t cap = x->cap ? x->cap * 2 : HINDEX_MIN_CAP;
	uint32_t *slots = zeroed_table(cap, sizeof(*slots));
	if (!slots)
		return false;
	uint32_t mask = cap - 1;
	for (uint32_t k = 0; k < x->cap; k++) {
		uint32_t s = x->slots[k];
		if (!s)
			continue;
		uint32_t i = (uint32_t)hash(ctx, s - 1) & mask;
		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = s;
	}
	free(x->slots);
	x->slots = slots;
	x->cap = cap;
	return true;
}

void hindex_remove(struct hindex *x, uint64_t h, uint32_t entry, hindex_hash_fn *hash,
		   const void *ctx)
{
	uint32_t mask = x->cap - 1;
	uint32_t i = (uint32_t)h & mask;
	while (x->slots[i] != entry + 1)
		i = (i + 1) & mask;
	/* i is the hole; an entry after it stays only if its home lies cyclically in (i, j],
	 * where a lookup from its home reaches it without passing the hole */
	for (uint32_t j = (i + 1) & mask; x->slots[j]; j = (j + 1) & mask) {
		uint32_t home = (uint32_t)hash(ctx, x->slots[j] - 1) & mask;
		bool stays = i <= j ? home > i && home <= j : home > i || home <= j;
		if (!stays) {
			x->slots[i] = x->slots[j];
			i = j;
		}
	}
	x->slots[i] = 0;
	x->count--;
}

void hindex_free(struct hindex *x)
{
	free(x->slots);
	memset(x, 0, sizeof(*x));
}

/* Slots for a map: cap of them, all empty. */
static struct hmap_slot *hmap_slots(uint64_t cap)
{
	if (cap > SIZE_MAX / sizeof(struct hmap_slot))
		return NULL;
	struct hmap_slot *s = malloc((size_t)cap * sizeof(*s));
	if (s)
		memset(s, 0xff, (size_t)cap * sizeof(*s)); /* keys HMAP_EMPTY_KEY */
	return s;
}

/* Set key's value; doubles (first allocation: 64 slots) past half full. */
bool hmap_put(struct hmap *h, uint64_t key, uint64_t val)
{
	uint64_t *v = hmap_find(h, key);
	if (v) {
		*v = val;
		return true;
	}
	if (key == HMAP_EMPTY_KEY) {
		h->has_max = true;
		h->max_val = val;
		return true;
	}
	if ((h->count + 1) * 2 > h->cap) {
		uint64_t cap = h->cap ? h->cap * 2 : 64;
		struct hmap_slot *slots = hmap_slots(cap);
		if (!slots)
			return false;
		for (uint64_t k = 0; k < h->cap; k++) {
			if (h->slots[k].key == HMAP_EMPTY_KEY)
				continue;
			uint64_t i = hash_u64(h->slots[k].key) & (cap - 1);
			while (slots[i].key != HMAP_EMPTY_KEY)
				i = (i + 1) & (cap - 1);
			slots[i] = h->slots[k];
		}
		free(h->slots);
		h->slots = slots;
		h->cap = cap;
	}
	uint64_t i = hash_u64(key) & (h->cap - 1);
	while (h->slots[i].key != HMAP_EMPTY_KEY)
		i = (i + 1) & (h->cap - 1);
	h->slots[i] = (struct hmap_slot){ key, val };
	h->count++;
	return true;
}

void hmap_free(struct hmap *h)
{
	free(h->slots);
	memset(h, 0, sizeof(*h));
}
