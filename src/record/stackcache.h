/*
 * stackcache.h: a thread's last sampled stack with the sample store's entry of each frame
 * (stackcache.c), so that a sampler interns only the frames below the part a new stack shares
 * with the last one, from the outermost frame on.
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

/* The frame id of frame i (innermost first) of the stack being interned, or
 * RECORD_SAMPLE_NONE to leave that frame out. */
typedef uint32_t (*stackcache_lookup_fn)(void *ctx, size_t i);

/* The sample store's stack of the n frames whose keys are keys[0..n) (INNERMOST FIRST; equal
 * keys stand for equal frames, and a key's frame id must not change while it is kept): the
 * frames shared with the last stack from the outermost on reuse its entries, `lookup` is
 * called for the others only (outermost first), and the new stack is kept. *shared (when not
 * NULL) gets how many were reused. RECORD_SAMPLE_NONE when no frame is left or interning
 * fails (nothing is kept then). n is cut to STACKCACHE_MAX, keeping the innermost frames. */
uint32_t stackcache_intern(struct stackcache *c, const uint64_t *keys, size_t n,
			   stackcache_lookup_fn lookup, void *ctx, size_t *shared);

#endif
