/*
 * parallel.c: parallel_for of parallel.h: an atomic counter hands out the items; threads
 * are started per call (tens of microseconds, against tens of milliseconds of work).
 */
#include "util/parallel.h"

#include <stdatomic.h>
#include <stddef.h>

#include <pthread.h>
#include <unistd.h>

struct parallel_job {
	uint32_t n;
	const uint32_t *order;
	void (*fn)(void *arg, uint32_t item);
	void *arg;
	atomic_uint next;
};

static void *parallel_worker(void *p)
{
	struct parallel_job *j = p;
	for (uint32_t k; (k = atomic_fetch_add(&j->next, 1)) < j->n;)
		j->fn(j->arg, j->order ? j->order[k] : k);
	return NULL;
}

void parallel_for(uint32_t n, const uint32_t *order, unsigned threads,
		  void (*fn)(void *arg, uint32_t item), void *arg)
{
	struct parallel_job j = { n, order, fn, arg, 0 };
	if (threads > n)
		threads = n;
	if (threads > PARALLEL_THREADS_MAX)
		threads = PARALLEL_THREADS_MAX;
	pthread_t tid[PARALLEL_THREADS_MAX];
	unsigned started = 0;
	while (started + 1 < threads &&
	       pthread_create(&tid[started], NULL, parallel_worker, &j) == 0)
		started++;
	parallel_worker(&j);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

unsigned parallel_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? (unsigned)n : 1;
}
