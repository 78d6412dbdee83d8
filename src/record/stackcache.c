/*
 * stackcache.c: interning a sampled stack against the thread's last one (stackcache.h).
 *
 * Consecutive samples of a thread share most of their outer frames (the program's main loop
 * down to the function that runs). The cache keeps the last stack outermost first with the
 * stack entry of each frame; a new stack walks its frames from the outermost on while their
 * keys equal the kept ones, takes the entry of the last equal one as the parent, and interns
 * only the frames below it (record_sample_stack_under). Interning every frame of every sample
 * (about 40 on a Python + torch workload: a frame lookup and a hash probe under a lock each)
 * was most of the sampler thread's CPU.
 *
 * Invariants: keys[0..n) and entries[0..n) describe one stack that was interned whole
 * (entries[i] is the entry of keys[i] under entries[i-1]); a frame that `lookup` left out is
 * in neither, so the kept depth counts interned frames only.
 */
#include "record/stackcache.h"

#include "record/samples.h"

uint32_t stackcache_intern(struct stackcache *c, const uint64_t *keys, size_t n,
			   stackcache_lookup_fn lookup, void *ctx, size_t *shared_out)
{
	if (n > STACKCACHE_MAX)
		n = STACKCACHE_MAX;
	uint32_t parent = RECORD_SAMPLE_NONE, fresh[STACKCACHE_MAX];
	size_t shared = 0, nfresh = 0;
	for (size_t i = n; i-- > 0;) { /* outermost first */
		if (nfresh == 0 && shared < c->n && c->keys[shared] == keys[i]) {
			parent = c->entries[shared++];
			continue;
		}
		uint32_t f = lookup(ctx, i);
		if (f == RECORD_SAMPLE_NONE)
			continue;
		c->keys[shared + nfresh] = keys[i];
		fresh[nfresh++] = f;
	}
	if (shared_out)
		*shared_out = shared;
	uint32_t stack = parent;
	if (nfresh)
		stack = record_sample_stack_under(parent, fresh, nfresh, c->entries + shared);
	c->n = stack == RECORD_SAMPLE_NONE ? 0 : shared + nfresh;
	return stack;
}
