/*
 * stackcache.c: interning a sampled stack against the thread's last one and the entries
 * interned before (stackcache.h).
 *
 * Consecutive samples of a thread share most of their outer frames (the program's main loop
 * down to the function that runs). The cache keeps the last stack outermost first with the
 * stack entry of each frame; a new stack walks its frames from the outermost on while their
 * keys equal the kept ones, takes the entry of the last equal one as the parent, and interns
 * only the frames below it (record_sample_stack_under). Interning every frame of every sample
 * (about 40 on a Python + torch workload: a frame lookup and a hash probe under a lock each)
 * was most of the sampler thread's CPU. Below the shared part, a stack mostly goes down a path
 * some earlier sample took (the same loop body at another line): the map of the entries
 * interned so far, (parent entry, frame key) -> entry, gives those with one probe each, in
 * slots that hold the key, where the store costs a frame lookup, the store's lock and two
 * probes that each read an entry from its own page (cold cache lines after the program ran).
 *
 * Invariants: keys[0..n) and entries[0..n) describe one stack that was interned whole
 * (entries[i] is the entry of keys[i] under entries[i-1]); a frame that `lookup` left out is
 * in neither, so the kept depth counts interned frames only. A map entry (parent, key) ->
 * entry is an entry of the sample store whose frame is the one `lookup` gives for key; the
 * store's entries never change, so it stays right while the key's frame id does (the caller
 * clears the map when its keys change meaning, and `keep` keeps out the keys that may).
 */
#include "record/stackcache.h"

#include <stdlib.h>
#include <string.h>

#include "record/samples.h"
#include "util/hashmap.h"

#define MAP_MIN_SLOTS 4096u

/* The slot holding (parent, key), or the empty one where it would go. */
static uint32_t map_probe(const struct stackcache_edge *slots, uint32_t mask, uint32_t parent,
			  uint64_t key)
{
	uint32_t i = (uint32_t)hash_u64(key ^ ((uint64_t)parent << 32 | parent)) & mask;
	while (slots[i].entry1 && !(slots[i].key == key && slots[i].parent == parent))
		i = (i + 1) & mask;
	return i;
}

/* The entry of key under parent, or RECORD_SAMPLE_NONE. */
static uint32_t map_find(const struct stackcache_map *m, uint32_t parent, uint64_t key)
{
	if (!m->mask)
		return RECORD_SAMPLE_NONE;
	return m->slots[map_probe(m->slots, m->mask, parent, key)].entry1 - 1;
}

/* Room for one more entry: the slots doubled when half full, or emptied at the maximum.
 * 0, or -1 when none could be made (the entry is then not added). */
static int map_room(struct stackcache_map *m)
{
	if (m->mask && m->count < (m->mask + 1) / 2)
		return 0;
	if (m->mask + 1 >= STACKCACHE_MAP_MAX) {
		stackcache_map_clear(m);
		return 0;
	}
	uint32_t size = m->mask ? (m->mask + 1) * 2 : MAP_MIN_SLOTS;
	struct stackcache_edge *slots = calloc(size, sizeof(*slots));
	if (!slots)
		return -1;
	for (uint32_t i = 0; m->mask && i <= m->mask; i++)
		if (m->slots[i].entry1)
			slots[map_probe(slots, size - 1, m->slots[i].parent, m->slots[i].key)] =
				m->slots[i];
	free(m->slots);
	m->slots = slots;
	m->mask = size - 1;
	return 0;
}

static void map_put(struct stackcache_map *m, uint32_t parent, uint64_t key, uint32_t entry)
{
	if (entry == RECORD_SAMPLE_NONE || map_room(m) != 0)
		return;
	uint32_t i = map_probe(m->slots, m->mask, parent, key);
	if (!m->slots[i].entry1)
		m->count++;
	m->slots[i] = (struct stackcache_edge){ key, parent, entry + 1 };
}

void stackcache_map_clear(struct stackcache_map *m)
{
	if (m->slots)
		memset(m->slots, 0, ((size_t)m->mask + 1) * sizeof(*m->slots));
	m->count = 0;
}

void stackcache_map_free(struct stackcache_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->mask = m->count = 0;
}

uint32_t stackcache_intern(struct stackcache *c, struct stackcache_map *map, const uint64_t *keys,
			   size_t n, stackcache_lookup_fn lookup, void *ctx, size_t *shared_out)
{
	if (n > STACKCACHE_MAX)
		n = STACKCACHE_MAX;
	uint32_t parent = RECORD_SAMPLE_NONE, fresh[STACKCACHE_MAX];
	uint8_t keep[STACKCACHE_MAX];
	size_t shared = 0, nfresh = 0;
	int same = 1;		       /* still on the last stack's frames */
	for (size_t i = n; i-- > 0;) { /* outermost first */
		if (nfresh == 0 && same && shared < c->n && c->keys[shared] == keys[i]) {
			parent = c->entries[shared++];
			continue;
		}
		if (nfresh == 0 && map) {
			uint32_t e = map_find(map, parent, keys[i]);
			if (e != RECORD_SAMPLE_NONE) {
				same = 0; /* c->keys[shared] is overwritten */
				c->keys[shared] = keys[i];
				c->entries[shared++] = parent = e;
				continue;
			}
		}
		int k = 1;
		uint32_t f = lookup(ctx, i, &k);
		if (f == RECORD_SAMPLE_NONE)
			continue; /* left out: the next frame may still be the last stack's */
		c->keys[shared + nfresh] = keys[i];
		keep[nfresh] = (uint8_t)k;
		fresh[nfresh++] = f;
	}
	if (shared_out)
		*shared_out = shared;
	uint32_t stack = parent;
	if (nfresh) {
		stack = record_sample_stack_under(parent, fresh, nfresh, c->entries + shared);
		/* each frame's entry under its parent, but for frames whose id may change (a
		 * later sample may give the key another frame, so another entry) */
		if (map && stack != RECORD_SAMPLE_NONE)
			for (size_t j = 0; j < nfresh; j++)
				if (keep[j])
					map_put(map, j ? c->entries[shared + j - 1] : parent,
						c->keys[shared + j], c->entries[shared + j]);
	}
	c->n = stack == RECORD_SAMPLE_NONE ? 0 : shared + nfresh;
	return stack;
}
