/*
 * train_loop.c: a training loop driven by the opscope profiler, the C counterpart of
 *
 *     prof = paddle.profiler.Profiler(scheduler=(3, 6), on_trace_ready=...)
 *     prof.start()
 *     for step, batch in enumerate(loader): train(batch); prof.step(num_samples=BATCH)
 *     prof.stop()
 *
 * Steps 3..5 are recorded into one trace file (step 2 is READY); the other steps only feed
 * the benchmark, whose Perf Summary is printed at stop(). Ranges mark the phases of a step
 * (like paddle.profiler.RecordEvent) and scoped timers add up time per name with or without
 * recording. The work itself is simulated with sleeps.
 *
 *     cc -std=c11 -Iinclude examples/train_loop.c -Lbuild/dev -lopscope -o train_loop
 *     ./train_loop [output-dir]          # default ./opscope_log/
 *     opscope info opscope_log/host_*_w0.opscope
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "opscope/opscope.h"

#define STEPS 20
#define BATCH 32

static void busy_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0) {
	}
}

/* The data loader: the reader hooks measure how long the loop waits for a batch. */
static void load_batch(void)
{
	opscope_reader_begin();
	OPSCOPE_SCOPE(OPSCOPE_CAT_DATALOADER, "load_batch");
	OPSCOPE_TIMER("data.load");
	busy_ms(2);
	opscope_reader_end();
}

static void forward(void)
{
	OPSCOPE_SCOPE(OPSCOPE_CAT_FORWARD, "forward");
	OPSCOPE_TIMER("model.forward");
	for (int layer = 0; layer < 3; layer++) {
		OPSCOPE_SCOPE(OPSCOPE_CAT_OPERATOR, "linear");
		busy_ms(1);
	}
}

static void backward(void)
{
	OPSCOPE_SCOPE(OPSCOPE_CAT_BACKWARD, "backward");
	OPSCOPE_TIMER("model.backward");
	busy_ms(4);
}

static void optimizer_step(void)
{
	OPSCOPE_SCOPE(OPSCOPE_CAT_OPTIMIZATION, "Optimization Step");
	OPSCOPE_TIMER("optimizer.step");
	busy_ms(1);
}

static void on_trace_ready(struct opscope_profiler *prof, const char *path, void *user)
{
	(void)user;
	printf("trace ready at step %llu: %s\n",
	       (unsigned long long)opscope_profiler_step_num(prof), path);
}

int main(int argc, char **argv)
{
	struct opscope_schedule sched;
	if (opscope_schedule_from_range(3, 6, &sched) != 0)
		return 1;
	struct opscope_profiler_options opts = { 0 };
	opts.output = argc > 1 ? argv[1] : NULL; /* NULL: ./opscope_log/ */
	opts.schedule = &sched;
	opts.on_trace_ready = on_trace_ready;
	opts.skip_steps = 5; /* the summary leaves out the first 5 steps (warm-up) */
	struct opscope_profiler *prof = opscope_profiler_create(&opts);
	if (!prof) {
		fprintf(stderr, "train_loop: %s\n", opscope_last_error());
		return 1;
	}
	if (opscope_profiler_start(prof) != 0) {
		fprintf(stderr, "train_loop: %s\n", opscope_last_error());
		opscope_profiler_destroy(prof);
		return 1;
	}
	for (int step = 0; step < STEPS; step++) {
		load_batch();
		forward();
		backward();
		optimizer_step();
		if (opscope_profiler_step(prof, BATCH) != 0)
			fprintf(stderr, "train_loop: step %d: %s\n", step, opscope_last_error());
		if ((step + 1) % 10 == 0) {
			char info[256];
			opscope_profiler_step_info(prof, "images", info, sizeof(info));
			printf("step %d:%s\n", step + 1, info);
		}
	}
	opscope_profiler_stop(prof); /* prints the Perf Summary */
	opscope_profiler_destroy(prof);
	printf("\n");
	opscope_timers_print(stdout);
	return 0;
}
