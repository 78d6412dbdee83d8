/*
 * record_demo.c: a toy training loop instrumented with opscope ranges.
 *
 * It records nothing by itself: run it under `opscope record -- ./example_record_demo` and
 * the preloaded runtime records its ranges (a loader thread producing batches, the
 * forward/backward/optimizer phases of each step, a loss counter) with no code change.
 * Without opscope the macros cost one relaxed load each.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <time.h>

#include <pthread.h>

#include "opscope/opscope.h"

enum { STEPS = 20, QUEUE = 4 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready_batches;

static void busy_us(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void *loader(void *arg)
{
	(void)arg;
	opscope_thread_name("data-loader");
	for (int i = 0; i < STEPS; i++) {
		OPSCOPE_RANGE_BEGIN(OPSCOPE_CAT_DATALOADER, "load_batch");
		busy_us(300);
		OPSCOPE_RANGE_END();
		pthread_mutex_lock(&lock);
		while (ready_batches >= QUEUE)
			pthread_cond_wait(&cond, &lock);
		ready_batches++;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void layer(const char *name, long us)
{
	opscope_range_begin(OPSCOPE_CAT_OPERATOR, name);
	busy_us(us);
	opscope_range_end();
}

int main(void)
{
	pthread_t th;
	pthread_create(&th, NULL, loader, NULL);
	double loss = 2.0;
	for (int step = 0; step < STEPS; step++) {
		{
			OPSCOPE_SCOPE(OPSCOPE_CAT_DATALOADER, "next_batch");
			pthread_mutex_lock(&lock);
			while (ready_batches == 0)
				pthread_cond_wait(&cond, &lock);
			ready_batches--;
			pthread_cond_signal(&cond);
			pthread_mutex_unlock(&lock);
		}
		{
			OPSCOPE_SCOPE(OPSCOPE_CAT_FORWARD, "forward");
			layer("conv1", 200);
			layer("relu", 50);
			layer("linear", 100);
		}
		{
			OPSCOPE_SCOPE(OPSCOPE_CAT_BACKWARD, "backward");
			layer("linear_backward", 200);
			layer("conv1_backward", 400);
		}
		{
			OPSCOPE_SCOPE(OPSCOPE_CAT_OPTIMIZATION, "sgd_step");
			busy_us(100);
		}
		loss *= 0.9;
		OPSCOPE_COUNTER("loss", loss);
		opscope_step(32);
	}
	pthread_join(th, NULL);
	printf("trained %d steps, final loss %.4f\n", STEPS, loss);
	return 0;
}
