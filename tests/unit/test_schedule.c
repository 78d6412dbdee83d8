/*
 * test_schedule.c: the step scheduler against paddle.profiler's make_scheduler and (start, end)
 * tuple, on the worked examples of SPEC-seeds §1.2-1.3.
 */
#include "opscope/opscope.h"

#include "harness.h"

enum {
	C = OPSCOPE_STATE_CLOSED,
	Y = OPSCOPE_STATE_READY,
	R = OPSCOPE_STATE_RECORD,
	X = OPSCOPE_STATE_RECORD_AND_RETURN
};

static void check_states(const struct opscope_schedule *s, const int *want, int n)
{
	for (int i = 0; i < n; i++) {
		int got = opscope_schedule_state(s, (uint64_t)i);
		if (got != want[i])
			CHECK_FAIL_("step %d: %s != %s", i, opscope_state_name(got),
				    opscope_state_name(want[i]));
	}
}

/* closed=1, ready=1, record=4, repeat=1: READY at 1, record [2,5], then CLOSED for good. */
TEST(record4_repeat1)
{
	struct opscope_schedule s = { .closed = 1, .ready = 1, .record = 4, .repeat = 1 };
	static const int want[] = { C, Y, R, R, R, X, C, C, C, C, C, C, C, C };
	CHECK_EQ_I(opscope_schedule_check(&s), 0);
	check_states(&s, want, (int)(sizeof(want) / sizeof(want[0])));
	CHECK_EQ_I(opscope_schedule_state(&s, 1000000), C);
}

/* closed=1, ready=1, record=4, skip_first=1, repeat forever: [3,6], [9,12], [15,18], ... */
TEST(skip_first_forever)
{
	struct opscope_schedule s = { .closed = 1, .ready = 1, .record = 4, .skip_first = 1 };
	static const int want[] = { C, C, Y, R, R, R, X, C, Y, R, R, R, X, C, Y, R, R, R, X, C };
	check_states(&s, want, (int)(sizeof(want) / sizeof(want[0])));
	/* still cycling far away: step 1 + 6k + 5 is a RECORD_AND_RETURN */
	CHECK_EQ_I(opscope_schedule_state(&s, 1 + 6 * 100000 + 5), X);
	CHECK_EQ_I(opscope_schedule_state(&s, 1 + 6 * 100000 + 1), Y);
}

/* closed=1, ready=1, record=3, repeat=3: READY at 1, 6, 11; record [2,4], [7,9], [12,14]
 * (Paddle's docstring says [11,13] for the third window; the function gives [12,14]). */
TEST(record3_repeat3)
{
	struct opscope_schedule s = { .closed = 1, .ready = 1, .record = 3, .repeat = 3 };
	static const int want[] = { C, Y, R, R, X, C, Y, R, R, X, C, Y, R, R, X, C, C, C, C, C };
	check_states(&s, want, (int)(sizeof(want) / sizeof(want[0])));
}

/* (2, 5): 0 CLOSED, 1 READY, 2-3 RECORD, 4 RECORD_AND_RETURN, 5+ CLOSED. */
TEST(range_2_5)
{
	struct opscope_schedule s;
	REQUIRE(opscope_schedule_from_range(2, 5, &s) == 0);
	CHECK_EQ_U(s.closed, 1);
	CHECK_EQ_U(s.ready, 1);
	CHECK_EQ_U(s.record, 3);
	CHECK_EQ_U(s.repeat, 1);
	CHECK_EQ_U(s.skip_first, 0);
	static const int want[] = { C, Y, R, R, X, C, C, C, C, C, C, C };
	check_states(&s, want, (int)(sizeof(want) / sizeof(want[0])));
}

/* (0, 3): no room for READY: closed=0, ready=0, record=3, repeat=1. */
TEST(range_0_3)
{
	struct opscope_schedule s;
	REQUIRE(opscope_schedule_from_range(0, 3, &s) == 0);
	CHECK_EQ_U(s.closed, 0);
	CHECK_EQ_U(s.ready, 0);
	CHECK_EQ_U(s.record, 3);
	CHECK_EQ_U(s.repeat, 1);
	static const int want[] = { R, R, X, C, C, C, C };
	check_states(&s, want, (int)(sizeof(want) / sizeof(want[0])));
}

/* (1, 2): step 0 READY, step 1 the whole window. Negative starts clamp to 0 like Paddle. */
TEST(range_edges)
{
	struct opscope_schedule s;
	REQUIRE(opscope_schedule_from_range(1, 2, &s) == 0);
	static const int want[] = { Y, X, C, C };
	check_states(&s, want, 4);
	REQUIRE(opscope_schedule_from_range(-4, 2, &s) == 0);
	CHECK_EQ_U(s.record, 2);
	CHECK_EQ_U(s.ready, 0);
	static const int want2[] = { R, X, C };
	check_states(&s, want2, 3);
}

TEST(invalid)
{
	struct opscope_schedule s = { .closed = 1, .ready = 1, .record = 0 };
	CHECK_EQ_I(opscope_schedule_check(&s), OPSCOPE_EINVAL);
	CHECK_EQ_I(opscope_schedule_check(NULL), OPSCOPE_EINVAL);
	/* an invalid schedule never records */
	CHECK_EQ_I(opscope_schedule_state(&s, 2), C);
	CHECK_EQ_I(opscope_schedule_state(NULL, 0), C);
	struct opscope_schedule out = { .record = 77 };
	CHECK_EQ_I(opscope_schedule_from_range(5, 5, &out), OPSCOPE_EINVAL);
	CHECK_EQ_I(opscope_schedule_from_range(5, 2, &out), OPSCOPE_EINVAL);
	CHECK_EQ_I(opscope_schedule_from_range(-5, -1, &out), OPSCOPE_EINVAL); /* end <= 0 */
	CHECK_EQ_I(opscope_schedule_from_range(0, 1, NULL), OPSCOPE_EINVAL);
	CHECK_EQ_I(opscope_schedule_from_range(0, (int64_t)1 << 40, &out), OPSCOPE_EINVAL);
	CHECK_EQ_U(out.record, 77); /* untouched on error */
}

/* Big fields do not overflow: the period is computed in 64 bits. */
TEST(no_overflow)
{
	struct opscope_schedule s = {
		.closed = UINT32_MAX, .ready = UINT32_MAX, .record = UINT32_MAX, .repeat = 2
	};
	CHECK_EQ_I(opscope_schedule_state(&s, 0), C);
	CHECK_EQ_I(opscope_schedule_state(&s, (uint64_t)UINT32_MAX), Y);
	CHECK_EQ_I(opscope_schedule_state(&s, 2 * (uint64_t)UINT32_MAX), R);
	CHECK_EQ_I(opscope_schedule_state(&s, 3 * (uint64_t)UINT32_MAX - 1), X);
	CHECK_EQ_I(opscope_schedule_state(&s, 6 * (uint64_t)UINT32_MAX), C);
	/* a record-only schedule: every step is its own window */
	struct opscope_schedule one = { .record = 1 };
	CHECK_EQ_I(opscope_schedule_state(&one, 0), X);
	CHECK_EQ_I(opscope_schedule_state(&one, 12345), X);
}

TEST_MAIN(record4_repeat1, skip_first_forever, record3_repeat3, range_2_5, range_0_3, range_edges,
	  invalid, no_overflow)
