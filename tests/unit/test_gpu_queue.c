/*
 * test_gpu_queue.c: the queue of GPU entries between a collector and the writer
 * (src/record/gpu.c). Entries handed over come out of gpu_take as they went in, only for the
 * session generation that queued them; and the array the writer gives back is reused as the
 * queue, so a steady stream of GPU records does not allocate (and fault in) a fresh array in
 * the completion callback every writer round.
 */
#include <stdint.h>
#include <string.h>

#include "opscope/opscope.h"

#include "harness.h"
#include "record/gpu.h"

static void put(uint32_t first, size_t n)
{
	struct ops_gpu_entry e[8];
	memset(e, 0, sizeof(e));
	for (size_t i = 0; i < n; i++) {
		e[i].kind = 1;
		e[i].correlation = first + (uint32_t)i;
	}
	CHECK_EQ_U(record_gpu_entries(e, n), n);
}

TEST(entries_in_order_for_their_generation)
{
	__atomic_store_n(&opscope_recording_word, 2 * 7 + 1, __ATOMIC_RELEASE);
	put(100, 5);
	put(105, 3);
	size_t n, cap;
	struct ops_gpu_entry *q = gpu_take(7, &n, &cap);
	REQUIRE(q);
	CHECK_EQ_U(n, 8);
	CHECK(cap >= n);
	for (size_t i = 0; i < n; i++)
		CHECK_EQ_U(q[i].correlation, 100 + i);
	gpu_give_back(q, cap);
	CHECK(gpu_take(7, &n, &cap) == NULL);
	CHECK_EQ_U(n, 0);
	put(1, 2);
	CHECK(gpu_take(8, &n, &cap) == NULL); /* another session's: dropped */
	CHECK(gpu_take(7, &n, &cap) == NULL);
	__atomic_store_n(&opscope_recording_word, 2 * 7, __ATOMIC_RELEASE);
}

TEST(given_back_array_is_reused)
{
	__atomic_store_n(&opscope_recording_word, 2 * 9 + 1, __ATOMIC_RELEASE);
	size_t n, cap_a, cap_b, cap;
	put(1, 4);
	struct ops_gpu_entry *a = gpu_take(9, &n, &cap_a);
	REQUIRE(a);
	gpu_give_back(a, cap_a);
	put(2, 4);
	struct ops_gpu_entry *b = gpu_take(9, &n, &cap_b);
	REQUIRE(b);
	/* the queue was taken before `a` came back: b is another array, and `a` the queue now */
	gpu_give_back(b, cap_b);
	put(3, 4);
	struct ops_gpu_entry *c = gpu_take(9, &n, &cap);
	CHECK(c == a);
	CHECK_EQ_U(n, 4);
	CHECK_EQ_U(c[0].correlation, 3);
	gpu_give_back(c, cap);
	put(4, 1);
	struct ops_gpu_entry *d = gpu_take(9, &n, &cap);
	CHECK(d == b);
	gpu_give_back(d, cap);
	__atomic_store_n(&opscope_recording_word, 2 * 9, __ATOMIC_RELEASE);
}

TEST_MAIN(entries_in_order_for_their_generation, given_back_array_is_reused)
