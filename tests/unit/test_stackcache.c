/*
 * test_stackcache.c: a thread's stack cache (src/record/stackcache.c) gives every stack the
 * same entry as interning it whole (record_sample_stack) would, reuses the entries of the
 * frames it shares with the last stack from the outermost on, and looks up only the others.
 * Frames are native frames of a made-up mapping; frame key k stands for address base + k.
 */
#include "harness.h"
#include "record/samples.h"
#include "record/stackcache.h"

#define BASE 0x7e0000000000ull

static uint32_t map_id;

/* lookup: key k -> frame id of address BASE + k; key 99 is left out (no frame) */
struct look {
	const uint64_t *keys;
	int calls;
};

static uint32_t look_up(void *ctx, size_t i)
{
	struct look *l = ctx;
	l->calls++;
	if (l->keys[i] == 99)
		return RECORD_SAMPLE_NONE;
	return record_sample_frame_native(map_id, BASE + l->keys[i]);
}

/* The entry of keys[0..n) (innermost first) interned whole, key 99 left out. */
static uint32_t whole(const uint64_t *keys, size_t n)
{
	uint32_t ids[STACKCACHE_MAX];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (keys[i] != 99)
			ids[k++] = record_sample_frame_native(map_id, BASE + keys[i]);
	return record_sample_stack(ids, k);
}

static void setup(void)
{
	if (!map_id)
		map_id = record_sample_mapping(BASE, BASE + 0x100000, 0, "/opt/t/libt.so", NULL);
}

/* main=1, a=2, b=3, c=4, x=5 (innermost first in each array) */
TEST(shares_outer_frames)
{
	setup();
	static struct stackcache c;
	const uint64_t s1[] = { 4, 3, 2, 1 }, s2[] = { 3, 2, 1 }, s3[] = { 5, 2, 1 };
	size_t shared = 9;
	struct look l = { s1, 0 };
	CHECK_EQ_U(stackcache_intern(&c, s1, 4, look_up, &l, &shared), whole(s1, 4));
	CHECK_EQ_U(shared, 0); /* an empty cache: all four looked up */
	CHECK_EQ_U(l.calls, 4);
	l = (struct look){ s2, 0 }; /* main a b: a prefix of the last, nothing looked up */
	CHECK_EQ_U(stackcache_intern(&c, s2, 3, look_up, &l, &shared), whole(s2, 3));
	CHECK_EQ_U(shared, 3);
	CHECK_EQ_U(l.calls, 0);
	l = (struct look){ s3, 0 }; /* main a x: main and a shared, x looked up */
	CHECK_EQ_U(stackcache_intern(&c, s3, 3, look_up, &l, &shared), whole(s3, 3));
	CHECK_EQ_U(shared, 2);
	CHECK_EQ_U(l.calls, 1);
	l = (struct look){ s1, 0 }; /* main a b c again: b and c looked up */
	CHECK_EQ_U(stackcache_intern(&c, s1, 4, look_up, &l, &shared), whole(s1, 4));
	CHECK_EQ_U(shared, 2);
	CHECK_EQ_U(l.calls, 2);
	CHECK_EQ_U(stackcache_intern(&c, s1, 0, look_up, &l, &shared), RECORD_SAMPLE_NONE);
	CHECK_EQ_U(c.n, 0); /* no frame: nothing kept */
}

/* A frame the lookup leaves out is in neither the stack nor the cache: main 99 a twice gives
 * main -> a both times; the second reuses main and a (2 shared) and asks for 99 again. */
TEST(left_out_frames)
{
	setup();
	static struct stackcache c;
	const uint64_t s[] = { 2, 99, 1 };
	size_t shared;
	struct look l = { s, 0 };
	const uint64_t ma[] = { 2, 1 };
	CHECK_EQ_U(stackcache_intern(&c, s, 3, look_up, &l, &shared), whole(ma, 2));
	CHECK_EQ_U(c.n, 2);
	l.calls = 0;
	CHECK_EQ_U(stackcache_intern(&c, s, 3, look_up, &l, &shared), whole(ma, 2));
	CHECK_EQ_U(shared, 2);
	CHECK_EQ_U(l.calls, 1);
}

/* 5,000 stacks, each the last one cut at a random depth with a random tail (keys 1-12, some
 * 99), as consecutive samples are: every one gets interning's own entry. */
TEST(random_sequences)
{
	setup();
	static struct stackcache c;
	uint64_t cur[64];
	size_t n = 0;
	uint64_t rng = 88172645463325252ull;
	int mismatches = 0;
	size_t reused = 0;
	for (int round = 0; round < 5000; round++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		size_t keep = n ? (size_t)(rng % (n + 1)) : 0; /* outer frames kept */
		size_t len = keep + (size_t)((rng >> 8) % 6);
		if (len == 0 || len > 64)
			len = 1;
		uint64_t next[64];
		/* innermost first: the kept outer frames are the last `keep` of cur */
		for (size_t i = 0; i < keep && i < len; i++)
			next[len - 1 - i] = cur[n - 1 - i];
		for (size_t i = keep; i < len; i++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			next[len - 1 - i] = rng % 16 == 0 ? 99 : 1 + rng % 12;
		}
		for (size_t i = 0; i < len; i++)
			cur[i] = next[i];
		n = len;
		size_t shared;
		struct look l = { cur, 0 };
		uint32_t got = stackcache_intern(&c, cur, n, look_up, &l, &shared);
		reused += shared;
		if (got != whole(cur, n))
			mismatches++;
	}
	CHECK_EQ_U(mismatches, 0);
	CHECK(reused > 1000); /* the cache was used, not only filled */
}

TEST_MAIN(shares_outer_frames, left_out_frames, random_sequences)
