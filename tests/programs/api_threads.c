/*
 * api_threads.c: records `ITERS` "work" ranges (nested in an "outer" range every 10) on each
 * of `THREADS` threads through the C API, without starting a session itself: it is meant to
 * be run under `opscope record`. Usage: api_threads THREADS ITERS
 */
#include <stdio.h>
#include <stdlib.h>

#include <pthread.h>

#include "opscope/opscope.h"

static int iters;

static void *worker(void *arg)
{
	char name[32];
	snprintf(name, sizeof(name), "worker-%d", (int)(long)arg);
	opscope_thread_name(name);
	for (int i = 0; i < iters; i++) {
		if (i % 10 == 0)
			OPSCOPE_RANGE_BEGIN(OPSCOPE_CAT_USER_DEFINED, "outer");
		OPSCOPE_RANGE_BEGIN(OPSCOPE_CAT_OPERATOR, "work");
		OPSCOPE_RANGE_END();
		if (i % 10 == 9 || i == iters - 1)
			OPSCOPE_RANGE_END();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	iters = argc > 2 ? atoi(argv[2]) : 1000;
	pthread_t th[256];
	if (threads > 256)
		threads = 256;
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	opscope_instant(OPSCOPE_CAT_USER_DEFINED, "done");
	return 0;
}
