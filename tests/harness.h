/*
 * harness.h: the in-tree test harness. A test file defines TEST(name) functions and lists
 * them in a TEST_LIST; checks print the values they compared; output is TAP, ending with
 * "N passed, N failed". A test calls SKIP("why") to be skipped; a file whose every test
 * skipped exits 77 so CTest reports it as skipped.
 *
 *     TEST(varint_roundtrip) { CHECK_EQ_U(decode(encode(5)), 5); }
 *     TEST_MAIN(varint_roundtrip, other_test)
 */
#ifndef OPSCOPE_TESTS_HARNESS_H
#define OPSCOPE_TESTS_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct harness_state {
	int failed_checks; /* checks that failed in the current test */
	int skipped;	   /* the current test called SKIP */
};
extern struct harness_state harness;

#define TEST(name) static void test_##name(void)

#define CHECK_FAIL_(fmt, ...)                                                    \
	do {                                                                     \
		harness.failed_checks++;                                         \
		printf("#   %s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define CHECK(cond)                                             \
	do {                                                    \
		if (!(cond))                                    \
			CHECK_FAIL_("check failed: %s", #cond); \
	} while (0)

#define CHECK_EQ_U(a, b)                                                                  \
	do {                                                                              \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                          \
		if (a_ != b_)                                                             \
			CHECK_FAIL_("%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, a_, b_); \
	} while (0)

#define CHECK_EQ_I(a, b)                                                                  \
	do {                                                                              \
		int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);                             \
		if (a_ != b_)                                                             \
			CHECK_FAIL_("%s == %s: %" PRId64 " != %" PRId64, #a, #b, a_, b_); \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                          \
	do {                                                                           \
		double a_ = (double)(a), b_ = (double)(b);                             \
		if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol)))                           \
			CHECK_FAIL_("%s ~= %s: %.9g vs %.9g (tol %g)", #a, #b, a_, b_, \
				    (double)(tol));                                    \
	} while (0)

#define CHECK_STR(a, b)                                                                       \
	do {                                                                                  \
		const char *a_ = (a), *b_ = (b);                                              \
		if (!a_ || !b_ || strcmp(a_, b_) != 0)                                        \
			CHECK_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", \
				    b_ ? b_ : "(null)");                                      \
	} while (0)

/* Stop the current test here if the check failed (for checks later code depends on). */
#define REQUIRE(cond)                                       \
	do {                                                \
		if (!(cond)) {                              \
			CHECK_FAIL_("required: %s", #cond); \
			return;                             \
		}                                           \
	} while (0)

#define SKIP(why)                              \
	do {                                   \
		harness.skipped = 1;           \
		printf("#   skip: %s\n", why); \
		return;                        \
	} while (0)

struct harness_test {
	const char *name;
	void (*fn)(void);
};

int harness_run(const struct harness_test *tests, int count);

#define HARNESS_ENTRY_(name)	 { #name, test_##name },
#define HARNESS_FOREACH_(M, ...) HARNESS_MAP_(M, __VA_ARGS__)

/* TEST_MAIN(a, b, c): a main() that runs tests a, b and c in order. Up to 32 tests. */
#define TEST_MAIN(...)                                                                     \
	struct harness_state harness;                                                      \
	int main(void)                                                                     \
	{                                                                                  \
		static const struct harness_test tests[] = { HARNESS_LIST_(__VA_ARGS__) }; \
		return harness_run(tests, (int)(sizeof(tests) / sizeof(tests[0])));        \
	}

#define HARNESS_E_(n)        \
	{                    \
#n, test_##n \
	}
#define HARNESS_LIST_(...)                                                                  \
	HARNESS_PICK_(__VA_ARGS__, HARNESS_L32_, HARNESS_L31_, HARNESS_L30_, HARNESS_L29_,  \
		      HARNESS_L28_, HARNESS_L27_, HARNESS_L26_, HARNESS_L25_, HARNESS_L24_, \
		      HARNESS_L23_, HARNESS_L22_, HARNESS_L21_, HARNESS_L20_, HARNESS_L19_, \
		      HARNESS_L18_, HARNESS_L17_, HARNESS_L16_, HARNESS_L15_, HARNESS_L14_, \
		      HARNESS_L13_, HARNESS_L12_, HARNESS_L11_, HARNESS_L10_, HARNESS_L9_,  \
		      HARNESS_L8_, HARNESS_L7_, HARNESS_L6_, HARNESS_L5_, HARNESS_L4_,      \
		      HARNESS_L3_, HARNESS_L2_, HARNESS_L1_)                                \
	(__VA_ARGS__)
#define HARNESS_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, \
		      _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32,  \
		      M, ...)                                                                     \
	M
#define HARNESS_L1_(a)	     HARNESS_E_(a)
#define HARNESS_L2_(a, ...)  HARNESS_E_(a), HARNESS_L1_(__VA_ARGS__)
#define HARNESS_L3_(a, ...)  HARNESS_E_(a), HARNESS_L2_(__VA_ARGS__)
#define HARNESS_L4_(a, ...)  HARNESS_E_(a), HARNESS_L3_(__VA_ARGS__)
#define HARNESS_L5_(a, ...)  HARNESS_E_(a), HARNESS_L4_(__VA_ARGS__)
#define HARNESS_L6_(a, ...)  HARNESS_E_(a), HARNESS_L5_(__VA_ARGS__)
#define HARNESS_L7_(a, ...)  HARNESS_E_(a), HARNESS_L6_(__VA_ARGS__)
#define HARNESS_L8_(a, ...)  HARNESS_E_(a), HARNESS_L7_(__VA_ARGS__)
#define HARNESS_L9_(a, ...)  HARNESS_E_(a), HARNESS_L8_(__VA_ARGS__)
#define HARNESS_L10_(a, ...) HARNESS_E_(a), HARNESS_L9_(__VA_ARGS__)
#define HARNESS_L11_(a, ...) HARNESS_E_(a), HARNESS_L10_(__VA_ARGS__)
#define HARNESS_L12_(a, ...) HARNESS_E_(a), HARNESS_L11_(__VA_ARGS__)
#define HARNESS_L13_(a, ...) HARNESS_E_(a), HARNESS_L12_(__VA_ARGS__)
#define HARNESS_L14_(a, ...) HARNESS_E_(a), HARNESS_L13_(__VA_ARGS__)
#define HARNESS_L15_(a, ...) HARNESS_E_(a), HARNESS_L14_(__VA_ARGS__)
#define HARNESS_L16_(a, ...) HARNESS_E_(a), HARNESS_L15_(__VA_ARGS__)
#define HARNESS_L17_(a, ...) HARNESS_E_(a), HARNESS_L16_(__VA_ARGS__)
#define HARNESS_L18_(a, ...) HARNESS_E_(a), HARNESS_L17_(__VA_ARGS__)
#define HARNESS_L19_(a, ...) HARNESS_E_(a), HARNESS_L18_(__VA_ARGS__)
#define HARNESS_L20_(a, ...) HARNESS_E_(a), HARNESS_L19_(__VA_ARGS__)
#define HARNESS_L21_(a, ...) HARNESS_E_(a), HARNESS_L20_(__VA_ARGS__)
#define HARNESS_L22_(a, ...) HARNESS_E_(a), HARNESS_L21_(__VA_ARGS__)
#define HARNESS_L23_(a, ...) HARNESS_E_(a), HARNESS_L22_(__VA_ARGS__)
#define HARNESS_L24_(a, ...) HARNESS_E_(a), HARNESS_L23_(__VA_ARGS__)
#define HARNESS_L25_(a, ...) HARNESS_E_(a), HARNESS_L24_(__VA_ARGS__)
#define HARNESS_L26_(a, ...) HARNESS_E_(a), HARNESS_L25_(__VA_ARGS__)
#define HARNESS_L27_(a, ...) HARNESS_E_(a), HARNESS_L26_(__VA_ARGS__)
#define HARNESS_L28_(a, ...) HARNESS_E_(a), HARNESS_L27_(__VA_ARGS__)
#define HARNESS_L29_(a, ...) HARNESS_E_(a), HARNESS_L28_(__VA_ARGS__)
#define HARNESS_L30_(a, ...) HARNESS_E_(a), HARNESS_L29_(__VA_ARGS__)
#define HARNESS_L31_(a, ...) HARNESS_E_(a), HARNESS_L30_(__VA_ARGS__)
#define HARNESS_L32_(a, ...) HARNESS_E_(a), HARNESS_L31_(__VA_ARGS__)

#endif
