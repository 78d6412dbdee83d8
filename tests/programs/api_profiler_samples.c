/*
 * api_profiler_samples.c: CPU stack sampling reached from the C API, not from `opscope
 * record` (issue 17, point 1): a profiler whose session options ask for samples
 * (opscope_options.sample_hz) records windows of steps 1-2 and 4-5 of six, each step burning
 * CPU in a "forward" range, into DIR; then a plain session with sample_hz in wall-clock mode
 * that only sleeps, into DIR/wall.opscope. Usage: api_profiler_samples DIR HZ
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "opscope/opscope.h"

static double cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Spend `seconds` of this thread's CPU time. */
static volatile unsigned long sink;
static void burn(double seconds)
{
	double end = cpu_seconds() + seconds;
	while (cpu_seconds() < end)
		for (unsigned long i = 0; i < 100000; i++)
			sink += i * i;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: api_profiler_samples DIR HZ\n");
		return 2;
	}
	struct opscope_options session = { .sample_hz = (uint32_t)atoi(argv[2]) };
	/* closed 1, ready 0, record 2, repeat 2: windows of steps 1-2 and 4-5 */
	struct opscope_schedule sched = { .closed = 1, .ready = 0, .record = 2, .repeat = 2 };
	if (opscope_schedule_check(&sched) != 0)
		return 1;
	struct opscope_profiler_options po = { .output = argv[1],
					       .schedule = &sched,
					       .session = &session };
	struct opscope_profiler *prof = opscope_profiler_create(&po);
	if (!prof || opscope_profiler_start(prof) != 0)
		return 1;
	for (int step = 0; step < 6; step++) {
		opscope_range_begin(OPSCOPE_CAT_FORWARD, "forward");
		burn(0.15);
		opscope_range_end();
		opscope_profiler_step(prof, -1);
	}
	opscope_profiler_stop(prof);
	opscope_profiler_destroy(prof);

	char path[4096];
	snprintf(path, sizeof(path), "%s/wall.opscope", argv[1]);
	struct opscope_options wall = { .output = path,
					.sample_hz = (uint32_t)atoi(argv[2]),
					.sample_mode = OPSCOPE_SAMPLE_WALL };
	if (opscope_session_start(&wall) != 0)
		return 1;
	/* Wall-clock samples interrupt sleeps (docs/sampling.md): sleep the rest, as Python does */
	struct timespec t = { 0, 300 * 1000 * 1000 };
	while (nanosleep(&t, &t) != 0)
		;
	return opscope_session_stop() != 0;
}
