/*
 * schedule.c: the step scheduler of the profiler, the C form of paddle.profiler's
 * make_scheduler(closed, ready, record, repeat, skip_first) and of its (start, end) tuple.
 *
 * A schedule is a pure function of the step number; nothing here keeps state. After
 * `skip_first` CLOSED steps, cycles of closed + ready + record steps follow: `closed` CLOSED
 * steps, `ready` READY steps, `record - 1` RECORD steps and one RECORD_AND_RETURN step, which
 * is where a window's data is handed out. `repeat` cycles happen (0 = forever), then CLOSED.
 * All arithmetic is on uint64_t, so no uint32_t field can overflow it.
 */
#include <stdint.h>

#include "opscope/opscope.h"

OPSCOPE_API int opscope_schedule_check(const struct opscope_schedule *s)
{
	if (!s || s->record == 0)
		return OPSCOPE_EINVAL;
	return 0;
}

OPSCOPE_API int opscope_schedule_state(const struct opscope_schedule *s, uint64_t step)
{
	if (opscope_schedule_check(s) != 0 || step < s->skip_first)
		return OPSCOPE_STATE_CLOSED;
	uint64_t since = step - s->skip_first;
	uint64_t period = (uint64_t)s->closed + s->ready + s->record;
	if (s->repeat > 0 && since / period >= s->repeat)
		return OPSCOPE_STATE_CLOSED;
	uint64_t m = since % period;
	if (m < s->closed)
		return OPSCOPE_STATE_CLOSED;
	if (m < (uint64_t)s->closed + s->ready)
		return OPSCOPE_STATE_READY;
	if (m < period - 1)
		return OPSCOPE_STATE_RECORD;
	return OPSCOPE_STATE_RECORD_AND_RETURN;
}

/* paddle.profiler's (start_batch, end_batch): record [start, end). A start of 1 or more keeps
 * one READY step before the window (step start - 1); a start of 0 (or less, clamped like
 * Paddle) has no room for it and records from step 0. */
OPSCOPE_API int opscope_schedule_from_range(int64_t start, int64_t end,
					    struct opscope_schedule *out)
{
	if (!out || end <= start)
		return OPSCOPE_EINVAL;
	if (start < 0)
		start = 0;
	if (end <= start || end - start > (int64_t)UINT32_MAX || start - 1 > (int64_t)UINT32_MAX)
		return OPSCOPE_EINVAL;
	struct opscope_schedule s = { 0 };
	if (start >= 1) {
		s.closed = (uint32_t)(start - 1);
		s.ready = 1;
		s.record = (uint32_t)(end - start);
	} else {
		s.closed = 0;
		s.ready = 0;
		s.record = (uint32_t)end;
	}
	s.repeat = 1;
	s.skip_first = 0;
	*out = s;
	return 0;
}
