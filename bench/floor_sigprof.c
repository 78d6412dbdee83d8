/*
 * floor_sigprof.c: the floor of any signal-based sampler, as a preload library for
 * bench_sampler_peers.sh: a SIGPROF handler that does nothing, driven by ITIMER_PROF at
 * $FLOOR_HZ (the process's CPU time; the timer gperftools' CPUPROFILE uses), so what a run
 * under it costs over a plain run is the timer interrupt and the signal delivery alone. At
 * exit it prints "floor signals N" on stderr.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static atomic_ulong signals;

static void on_sigprof(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&signals, 1, memory_order_relaxed);
}

__attribute__((constructor)) static void floor_start(void)
{
	const char *hz = getenv("FLOOR_HZ");
	long n = hz ? atol(hz) : 0;
	if (n <= 0)
		return;
	struct sigaction sa = { .sa_handler = on_sigprof, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = { { 0, 1000000 / n }, { 0, 1000000 / n } };
	setitimer(ITIMER_PROF, &it, NULL);
}

__attribute__((destructor)) static void floor_stop(void)
{
	if (getenv("FLOOR_HZ"))
		fprintf(stderr, "floor signals %lu\n", atomic_load(&signals));
}
