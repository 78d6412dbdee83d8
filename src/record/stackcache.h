/*
 * stackcache.h: a thread's last sampled stack with the sample store's entry of each frame
 * (stackcache.c), so that a sampler interns only the frames below the part a new stack shares
 * with the last one, from the outermost frame on; and a map of the stack entries interned so
 * far, (parent entry, frame key) -> entry, that finds most of those below without the sample
 * store.
 */
#ifndef OPSCOPE_RECORD_STACKCACHE_H
#define OPSCOPE_RECORD_STACKCACHE_H

#include <stddef.h>
#include <stdint.h>

#define STACKCACHE_MAX 384 /* frames a stack may have */

struct stackcache {
	uint64_t keys[STACKCACHE_MAX];	  /* the last stack's frame keys, outermost first */
	uint32_t entries[STACKCACHE_MAX]; /* the stack entry of each (record_sample_stack_under) */
	size_t n;			  /* frames in them; 0: nothing kept */
};

/* One entry of a stackcache_map. */
struct stackcache_edge {
	uint64_t key;	 /* the frame's key */
	uint32_t parent; /* the caller's stack entry, RECORD_SAMPLE_NONE at the root */
	uint32_t entry1; /* the stack entry of the frame under parent, plus one; 0: empty slot */
};

/* The stack entries a sampler interned, by (parent entry, frame key), for all its threads:
 * a frame below the part a stack shares with its thread's last one is found here without the
 * frame lookup and the sample store's lock. Open addressing, linear probing, at most half
 * full; emptied when full at STACKCACHE_MAP_MAX slots. Zeroed: empty. */
struct stackcache_map {
	struct stackcache_edge *slots; /* NULL before the first entry */
	uint32_t mask;		       /* slots - 1 (a power of two), 0 before the first entry */
	uint32_t count;		       /* entries held */
};

#define STACKCACHE_MAP_MAX (1u << 18) /* slots at most: 4 MiB */

/* Forget every entry (the caller's keys now stand for other frames). */
void stackcache_map_clear(struct stackcache_map *m);
/* Free the slots; the map is empty and usable again. */
void stackcache_map_free(struct stackcache_map *m);

/* The frame id of frame i (innermost first) of the stack being interned, or
 * RECORD_SAMPLE_NONE to leave that frame out. *keep (1 on the call) is set to 0 when the id
 * may change later for the same key: the frame's entry is then not put in a stackcache_map. */
typedef uint32_t (*stackcache_lookup_fn)(void *ctx, size_t i, int *keep);

/* The sample store's stack of the n frames whose keys are keys[0..n) (INNERMOST FIRST; equal
 * keys stand for equal frames, and a key's frame id must not change while it is kept in c or
 * map): the frames shared with the last stack from the outermost on reuse its entries, those
 * below them are taken from `map` (when not NULL) while it has them, `lookup` is called for
 * the rest only (outermost first), their entries go into `map`, and the new stack is kept.
 * *shared (when not NULL) gets how many entries were reused from c or map.
 * RECORD_SAMPLE_NONE when no frame is left or interning fails (nothing is kept then). n is
 * cut to STACKCACHE_MAX, keeping the innermost frames. */
uint32_t stackcache_intern(struct stackcache *c, struct stackcache_map *map, const uint64_t *keys,
			   size_t n, stackcache_lookup_fn lookup, void *ctx, size_t *shared);

#endif
