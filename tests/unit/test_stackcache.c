/*
 * test_stackcache.c: a thread's stack cache (src/record/stackcache.c) gives every stack the
 * same entry as interning it whole (record_sample_stack) would, reuses the entries of the
 * frames it shares with the last stack from the outermost on, and looks up only the others;
 * with a map of stack entries, those below are taken from it when it has them, never for a
 * key whose lookup said its frame may change. Frames are native frames of a made-up mapping;
 * frame key k stands for address base + k.
 */
#include "harness.h"
#include "record/samples.h"
#include "record/stackcache.h"

#define BASE 0x7e0000000000ull

static uint32_t map_id;

/* lookup: key k -> frame id of address BASE + k; key 99 is left out (no frame); key 77
 * gets its frame but is marked as one whose id may change (keep = 0) */
struct look {
	const uint64_t *keys;
	int calls;
};

static uint32_t look_up(void *ctx, size_t i, int *keep)
{
	struct look *l = ctx;
	l->calls++;
	if (l->keys[i] == 99)
		return RECORD_SAMPLE_NONE;
	if (l->keys[i] == 77)
		*keep = 0;
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
	CHECK_EQ_U(stackcache_intern(&c, NULL, s1, 4, look_up, &l, &shared), whole(s1, 4));
	CHECK_EQ_U(shared, 0); /* an empty cache: all four looked up */
	CHECK_EQ_U(l.calls, 4);
	l = (struct look){ s2, 0 }; /* main a b: a prefix of the last, nothing looked up */
	CHECK_EQ_U(stackcache_intern(&c, NULL, s2, 3, look_up, &l, &shared), whole(s2, 3));
	CHECK_EQ_U(shared, 3);
	CHECK_EQ_U(l.calls, 0);
	l = (struct look){ s3, 0 }; /* main a x: main and a shared, x looked up */
	CHECK_EQ_U(stackcache_intern(&c, NULL, s3, 3, look_up, &l, &shared), whole(s3, 3));
	CHECK_EQ_U(shared, 2);
	CHECK_EQ_U(l.calls, 1);
	l = (struct look){ s1, 0 }; /* main a b c again: b and c looked up */
	CHECK_EQ_U(stackcache_intern(&c, NULL, s1, 4, look_up, &l, &shared), whole(s1, 4));
	CHECK_EQ_U(shared, 2);
	CHECK_EQ_U(l.calls, 2);
	CHECK_EQ_U(stackcache_intern(&c, NULL, s1, 0, look_up, &l, &shared), RECORD_SAMPLE_NONE);
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
	CHECK_EQ_U(stackcache_intern(&c, NULL, s, 3, look_up, &l, &shared), whole(ma, 2));
	CHECK_EQ_U(c.n, 2);
	l.calls = 0;
	CHECK_EQ_U(stackcache_intern(&c, NULL, s, 3, look_up, &l, &shared), whole(ma, 2));
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
		uint32_t got = stackcache_intern(&c, NULL, cur, n, look_up, &l, &shared);
		reused += shared;
		if (got != whole(cur, n))
			mismatches++;
	}
	CHECK_EQ_U(mismatches, 0);
	CHECK(reused > 1000); /* the cache was used, not only filled */
}

/* Two threads' caches and one map: main=1, a=2, b=3, c=4, x=5, y=77 (may change), z=6. */
TEST(map_gives_entries_interned_before)
{
	setup();
	static struct stackcache t1, t2;
	static struct stackcache_map map;
	const uint64_t s1[] = { 4, 3, 2, 1 }, s2[] = { 5, 2, 1 }, s3[] = { 6, 77, 2, 1 };
	size_t shared;
	struct look l = { s1, 0 };
	CHECK_EQ_U(stackcache_intern(&t1, &map, s1, 4, look_up, &l, &shared), whole(s1, 4));
	CHECK_EQ_U(l.calls, 4);
	CHECK_EQ_U(map.count, 4);   /* main, main>a, main>a>b, main>a>b>c */
	l = (struct look){ s1, 0 }; /* thread 2, empty cache: all four from the map */
	CHECK_EQ_U(stackcache_intern(&t2, &map, s1, 4, look_up, &l, &shared), whole(s1, 4));
	CHECK_EQ_U(shared, 4);
	CHECK_EQ_U(l.calls, 0);
	CHECK_EQ_U(t2.n, 4);	    /* and kept as its last stack */
	l = (struct look){ s2, 0 }; /* thread 1: main a shared, x looked up and added */
	CHECK_EQ_U(stackcache_intern(&t1, &map, s2, 3, look_up, &l, &shared), whole(s2, 3));
	CHECK_EQ_U(shared, 2);
	CHECK_EQ_U(l.calls, 1);
	CHECK_EQ_U(map.count, 5);
	l = (struct look){ s1, 0 }; /* thread 1: main a from its cache, b c from the map */
	CHECK_EQ_U(stackcache_intern(&t1, &map, s1, 4, look_up, &l, &shared), whole(s1, 4));
	CHECK_EQ_U(shared, 4);
	CHECK_EQ_U(l.calls, 0);
	/* main a y z: y's entry stays out of the map (its frame may change), z's goes in */
	l = (struct look){ s3, 0 };
	CHECK_EQ_U(stackcache_intern(&t1, &map, s3, 4, look_up, &l, &shared), whole(s3, 4));
	CHECK_EQ_U(l.calls, 2);
	CHECK_EQ_U(map.count, 6);
	l = (struct look){ s3, 0 }; /* thread 2 (last: main a b c): y and z looked up again */
	CHECK_EQ_U(stackcache_intern(&t2, &map, s3, 4, look_up, &l, &shared), whole(s3, 4));
	CHECK_EQ_U(shared, 2);
	CHECK_EQ_U(l.calls, 2);
	stackcache_map_clear(&map);
	CHECK_EQ_U(map.count, 0);
	t2.n = 0; /* nothing kept anywhere: all four looked up again */
	l = (struct look){ s1, 0 };
	CHECK_EQ_U(stackcache_intern(&t2, &map, s1, 4, look_up, &l, &shared), whole(s1, 4));
	CHECK_EQ_U(shared, 0);
	CHECK_EQ_U(l.calls, 4);
	stackcache_map_free(&map);
}

/* Random stacks as in random_sequences, over keys 1-400 (some 99 and 77) and three threads
 * taking turns, so that the map grows past its first 4,096 slots (about 20,000 distinct
 * entries): every stack gets interning's own entry, and the map serves most frames. */
TEST(map_random_threads)
{
	setup();
	static struct stackcache c[3];
	static struct stackcache_map map;
	uint64_t cur[3][64];
	size_t n[3] = { 0, 0, 0 };
	uint64_t rng = 2463534242ull;
	int mismatches = 0;
	size_t reused = 0, looked = 0;
	for (int round = 0; round < 30000; round++) {
		size_t t = (size_t)round % 3;
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		size_t keep = n[t] ? (size_t)(rng % (n[t] + 1)) : 0;
		size_t len = keep + (size_t)((rng >> 8) % 6);
		if (len == 0 || len > 64)
			len = 1;
		uint64_t next[64];
		for (size_t i = 0; i < keep && i < len; i++)
			next[len - 1 - i] = cur[t][n[t] - 1 - i];
		for (size_t i = keep; i < len; i++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			uint64_t r = rng % 40;
			next[len - 1 - i] = r == 0   ? 99
					    : r == 1 ? 77
						     : 1 + (rng >> 16) % (r < 30 ? 8 : 400);
		}
		for (size_t i = 0; i < len; i++)
			cur[t][i] = next[i];
		n[t] = len;
		size_t shared;
		struct look l = { cur[t], 0 };
		uint32_t got = stackcache_intern(&c[t], &map, cur[t], n[t], look_up, &l, &shared);
		reused += shared;
		looked += (size_t)l.calls;
		if (got != whole(cur[t], n[t]))
			mismatches++;
	}
	CHECK_EQ_U(mismatches, 0);
	CHECK(map.mask + 1 > 4096); /* it grew */
	CHECK(reused > looked);
	stackcache_map_free(&map);
}

TEST_MAIN(shares_outer_frames, left_out_frames, random_sequences, map_gives_entries_interned_before,
	  map_random_threads)
