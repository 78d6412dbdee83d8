/*
 * test_hashmap.c: util/hashmap.h. The index over the caller's array through growth, with a
 * constant hash (every entry in one probe chain, across rehashes) and against a linear-search
 * reference on random keys; removal against a reference, with hashes that cluster at the end
 * of the slots so that probe runs wrap around; the u64 map through growth, with the reserved key UINT64_MAX and
 * 0, replacement of values, and against a sorted reference on random keys.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/hashmap.h"

/* The caller's array of the index tests: keys, and whether the hash is constant. */
struct keys {
	uint64_t *v;
	uint32_t n;
	bool constant_hash;
};

struct probe {
	const struct keys *k;
	uint64_t key;
};

static uint64_t key_hash(const struct keys *k, uint64_t key)
{
	return k->constant_hash ? 42 : hash_u64(key);
}

static bool eq_fn(const void *ctx, uint32_t e)
{
	const struct probe *p = ctx;
	return p->k->v[e] == p->key;
}

static uint64_t hash_fn(const void *ctx, uint32_t e)
{
	const struct keys *k = ctx;
	return key_hash(k, k->v[e]);
}

/* The entry of key, made on first use (the pattern of model_intern and agg_get). */
static uint32_t get(struct hindex *x, struct keys *k, uint64_t key)
{
	uint64_t h = key_hash(k, key);
	struct probe p = { k, key };
	uint32_t e = hindex_find(x, h, eq_fn, &p);
	if (e != HINDEX_NONE)
		return e;
	if (!hindex_reserve(x, hash_fn, k))
		return HINDEX_NONE;
	e = k->n++;
	k->v[e] = key;
	hindex_insert(x, h, e);
	return e;
}

static uint32_t find(const struct hindex *x, const struct keys *k, uint64_t key)
{
	struct probe p = { k, key };
	return hindex_find(x, key_hash(k, key), eq_fn, &p);
}

TEST(hindex_empty)
{
	struct hindex x = { 0 };
	struct keys k = { NULL, 0, false };
	CHECK_EQ_U(find(&x, &k, 7), HINDEX_NONE);
	hindex_free(&x);
	CHECK(x.slots == NULL && x.cap == 0 && x.count == 0);
}

/* Keys 0..n-1 (times a stride), through many doublings; each found, at its entry. */
static void growth(bool constant_hash, uint32_t n)
{
	struct hindex x = { 0 };
	struct keys k = { calloc(n, sizeof(uint64_t)), 0, constant_hash };
	REQUIRE(k.v);
	int bad = 0;
	for (uint32_t i = 0; i < n; i++)
		bad += get(&x, &k, (uint64_t)i * 1000003) != i;
	CHECK_EQ_I(bad, 0);
	CHECK_EQ_U(x.count, n);
	CHECK(x.cap >= 2 * n && (x.cap & (x.cap - 1)) == 0);
	for (uint32_t i = 0; i < n; i++) {
		bad += find(&x, &k, (uint64_t)i * 1000003) != i; /* after the last rehash */
		bad += get(&x, &k, (uint64_t)i * 1000003) != i;	 /* no second entry */
		bad += find(&x, &k, (uint64_t)i * 1000003 + 1) != HINDEX_NONE;
	}
	CHECK_EQ_I(bad, 0);
	CHECK_EQ_U(k.n, n);
	hindex_free(&x);
	free(k.v);
}

TEST(hindex_growth)
{
	growth(false, 100000);
}

TEST(hindex_constant_hash)
{
	growth(true, 1500); /* one chain: every lookup probes all the entries before */
}

TEST(hindex_random_against_reference)
{
	enum { N = 20000 };
	struct hindex x = { 0 };
	struct keys k = { calloc(N, sizeof(uint64_t)), 0, false };
	REQUIRE(k.v);
	uint64_t s = 99;
	int bad = 0;
	for (int i = 0; i < N; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t key = (s >> 40) % 5000; /* many repeats */
		uint32_t ref = HINDEX_NONE;	 /* linear search */
		for (uint32_t e = 0; e < k.n && ref == HINDEX_NONE; e++)
			if (k.v[e] == key)
				ref = e;
		bad += find(&x, &k, key) != ref;
		uint32_t e = get(&x, &k, key);
		bad += ref != HINDEX_NONE ? e != ref : e != k.n - 1;
	}
	CHECK_EQ_I(bad, 0);
	CHECK_EQ_U(x.count, k.n);
	hindex_free(&x);
	free(k.v);
}

/* The removal test's hash: spread, or crowded into the last slots of the first allocation
 * (HINDEX_MIN_CAP slots: the test keeps fewer than half that many entries), so that runs
 * wrap past the end and backward shifts cross it. */
struct live_keys {
	uint64_t *v;
	bool crowded;
};

struct live_probe {
	const struct live_keys *k;
	uint64_t key;
};

static uint64_t live_hash(const struct live_keys *k, uint64_t key)
{
	return k->crowded ? HINDEX_MIN_CAP - 6 + key % 9 : hash_u64(key);
}

static bool live_eq(const void *ctx, uint32_t e)
{
	const struct live_probe *p = ctx;
	return p->k->v[e] == p->key;
}

static uint64_t live_hash_fn(const void *ctx, uint32_t e)
{
	const struct live_keys *k = ctx;
	return live_hash(k, k->v[e]);
}

static void removal(bool crowded)
{
	enum { KEYS = 100, OPS = 40000 };
	struct live_keys k = { malloc(OPS * sizeof(uint64_t)), crowded };
	uint32_t entry_of[KEYS]; /* reference: key's live entry, or HINDEX_NONE */
	REQUIRE(k.v);
	for (int i = 0; i < KEYS; i++)
		entry_of[i] = HINDEX_NONE;
	struct hindex x = { 0 };
	uint32_t n = 0, live = 0;
	uint64_t s = 5;
	int bad = 0;
	for (int op = 0; op < OPS; op++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t key = (s >> 33) % KEYS;
		struct live_probe p = { &k, key };
		uint64_t h = live_hash(&k, key);
		uint32_t e = hindex_find(&x, h, live_eq, &p);
		bad += e != entry_of[key];
		if (e == HINDEX_NONE) {
			REQUIRE(hindex_reserve(&x, live_hash_fn, &k));
			k.v[n] = key;
			hindex_insert(&x, h, n);
			entry_of[key] = n++;
			live++;
		} else {
			hindex_remove(&x, h, e, live_hash_fn, &k);
			k.v[e] = UINT64_MAX - 1; /* the array keeps the entry; no key matches it */
			entry_of[key] = HINDEX_NONE;
			live--;
		}
		if (op % 97 == 0) /* every key, not only the one touched */
			for (uint64_t q = 0; q < KEYS; q++) {
				struct live_probe pq = { &k, q };
				bad += hindex_find(&x, live_hash(&k, q), live_eq, &pq) !=
				       entry_of[q];
			}
	}
	CHECK_EQ_I(bad, 0);
	CHECK_EQ_U(x.count, live);
	if (crowded)
		CHECK_EQ_U(x.cap, HINDEX_MIN_CAP); /* the runs did wrap: never grew */
	hindex_free(&x);
	free(k.v);
}

TEST(hindex_remove_spread)
{
	removal(false);
}

TEST(hindex_remove_wrapping)
{
	removal(true);
}

TEST(hmap_basics)
{
	struct hmap h = { 0 };
	CHECK(hmap_find(&h, 0) == NULL);
	CHECK(hmap_find(&h, UINT64_MAX) == NULL);
	REQUIRE(hmap_put(&h, 0, 10));
	REQUIRE(hmap_put(&h, UINT64_MAX, 20));
	REQUIRE(hmap_put(&h, UINT64_MAX - 1, 30));
	REQUIRE(hmap_find(&h, 0) && hmap_find(&h, UINT64_MAX) && hmap_find(&h, UINT64_MAX - 1));
	CHECK_EQ_U(*hmap_find(&h, 0), 10);
	CHECK_EQ_U(*hmap_find(&h, UINT64_MAX), 20);
	CHECK_EQ_U(*hmap_find(&h, UINT64_MAX - 1), 30);
	CHECK(hmap_find(&h, 1) == NULL);
	REQUIRE(hmap_put(&h, UINT64_MAX, 21)); /* replaced */
	REQUIRE(hmap_put(&h, 0, 11));
	CHECK_EQ_U(*hmap_find(&h, UINT64_MAX), 21);
	CHECK_EQ_U(*hmap_find(&h, 0), 11);
	CHECK_EQ_U(h.count, 2); /* UINT64_MAX is kept beside the slots */
	*hmap_find(&h, 0) = 12; /* values are writable in place */
	CHECK_EQ_U(*hmap_find(&h, 0), 12);
	/* growth: the early keys survive many rehashes */
	for (uint64_t i = 1; i <= 200000; i++)
		REQUIRE(hmap_put(&h, i << 20, i));
	int bad = 0;
	for (uint64_t i = 1; i <= 200000; i++) {
		uint64_t *v = hmap_find(&h, i << 20);
		bad += !v || *v != i;
		bad += hmap_find(&h, (i << 20) + 1) != NULL;
	}
	CHECK_EQ_I(bad, 0);
	CHECK_EQ_U(*hmap_find(&h, 0), 12);
	CHECK_EQ_U(*hmap_find(&h, UINT64_MAX), 21);
	CHECK(h.cap >= 2 * h.count);
	hmap_free(&h);
	CHECK(hmap_find(&h, 0) == NULL && hmap_find(&h, UINT64_MAX) == NULL);
}

TEST(hmap_random_against_reference)
{
	enum { KEYS = 4096, OPS = 50000 };
	/* reference: key i of a fixed random set, its value or 0 for absent (values are >= 1) */
	uint64_t *key = malloc(KEYS * sizeof(uint64_t)), *val = calloc(KEYS, sizeof(uint64_t));
	REQUIRE(key && val);
	uint64_t s = 7;
	for (int i = 0; i < KEYS; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		key[i] = i < 4 ? (uint64_t)i * (UINT64_MAX / 3) : s; /* 0 and UINT64_MAX too */
	}
	struct hmap h = { 0 };
	int bad = 0;
	for (int op = 0; op < OPS; op++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		int i = (int)((s >> 33) % KEYS);
		uint64_t *v = hmap_find(&h, key[i]);
		bad += val[i] ? !v || *v != val[i] : v != NULL;
		if (s & 1) {
			val[i] = (uint64_t)op + 1;
			REQUIRE(hmap_put(&h, key[i], val[i]));
		}
	}
	uint64_t held = 0;
	for (int i = 0; i < KEYS; i++)
		held += val[i] && key[i] != UINT64_MAX;
	CHECK_EQ_I(bad, 0);
	CHECK_EQ_U(h.count, held);
	hmap_free(&h);
	free(key);
	free(val);
}

TEST_MAIN(hindex_empty, hindex_growth, hindex_constant_hash, hindex_random_against_reference,
	  hindex_remove_spread, hindex_remove_wrapping, hmap_basics, hmap_random_against_reference)
