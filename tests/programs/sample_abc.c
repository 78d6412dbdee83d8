/*
 * sample_abc.c: a program of known CPU shape for the sampler's tests (tests/e2e/test_sampler.sh),
 * built with frame pointers (tests/CMakeLists.txt). Nothing of opscope is linked: it is
 * recorded with `opscope record --sample`.
 *
 *   sample_abc abc [ITERS]   two threads, each calling a() ITERS times: a spends ~10% of the
 *                            CPU in itself, b ~20%, c ~70% (busy loops in noinline functions),
 *                            the stacks main-less: thread start -> worker -> a -> b -> c.
 *                            The threads start after recording started (the sampler must find
 *                            them). A third thread blocks in read() on a pipe and in
 *                            nanosleep() meanwhile, and says if either saw EINTR.
 *   sample_abc fork [ITERS]  the same work in a forked child (one thread), the parent waits.
 *   sample_abc forknow [ITERS]  forks first thing in main, while the recorder's threads may
 *                            still be starting; the child works, the parent waits.
 *   sample_abc deep [ITERS]  1,000 nested calls of recurse(), then the work at the bottom.
 *
 * SAMPLE_ABC_FLOOR_HZ=N (for bench/bench_sampler.sh): each worker arms a timer on its own CPU
 * clock that sends it SIGPROF N times a second of CPU, to a handler that only counts: the
 * floor a signal-based sampler cannot go below. The count goes to stderr.
 *
 * Prints the addresses of a, b, c and recurse relative to their module's load address
 * ("sym NAME 0xOFFSET"), so the test can map module+0x... frames to names without a
 * symbolizer.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long iters = 3000;
static volatile uint64_t sink;

__attribute__((noinline)) static void burn(long n)
{
	uint64_t x = sink;
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) void c(void)
{
	uint64_t x = sink;
	for (long i = 0; i < 70000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
	burn(1); /* not a leaf: GCC 12 gives leaf functions no frame whatever the flags */
}

__attribute__((noinline)) void b(void)
{
	uint64_t x = sink;
	for (long i = 0; i < 20000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
	c();
}

__attribute__((noinline)) void a(void)
{
	uint64_t x = sink;
	for (long i = 0; i < 10000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
	b();
}

__attribute__((noinline)) static void work(void)
{
	for (long i = 0; i < iters; i++)
		a();
}

__attribute__((noinline)) int recurse(int depth)
{
	if (depth == 0) {
		work();
		return 0;
	}
	int r = recurse(depth - 1);
	sink += (uint64_t)r;
	return r + 1;
}

static _Atomic long floor_signals;

static void floor_handler(int sig)
{
	(void)sig;
	floor_signals++;
}

static void floor_arm(void)
{
	const char *hz = getenv("SAMPLE_ABC_FLOOR_HZ");
	if (!hz || atol(hz) <= 0)
		return;
	signal(SIGPROF, floor_handler);
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	timer_t t;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t) != 0)
		return;
	struct itimerspec its = { { 0, 1000000000L / atol(hz) }, { 0, 1000000000L / atol(hz) } };
	timer_settime(t, 0, &its, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	floor_arm();
	work();
	return NULL;
}

static int pipefd[2];
static volatile int waiter_eintr;

static void *waiter(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	if (nanosleep(&ts, NULL) != 0)
		waiter_eintr |= 1;
	char ch;
	ssize_t r = read(pipefd[0], &ch, 1);
	if (r != 1)
		waiter_eintr |= errno == EINTR ? 2 : 4;
	return NULL;
}

static void print_syms(void);
int main(int argc, char **argv);
static void print_syms(void)
{
	void *fns[] = { (void *)a,	    (void *)b,	  (void *)c,	  (void *)recurse,
			(void *)burn,	    (void *)work, (void *)worker, (void *)waiter,
			(void *)print_syms, (void *)main };
	const char *names[] = { "a",	"b",	  "c",	    "recurse",	  "burn",
				"work", "worker", "waiter", "print_syms", "main" };
	for (int i = 0; i < 10; i++) {
		Dl_info info;
		if (dladdr(fns[i], &info) && info.dli_fbase)
			printf("sym %s 0x%lx\n", names[i],
			       (unsigned long)((uintptr_t)fns[i] - (uintptr_t)info.dli_fbase));
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "abc";
	if (argc > 2)
		iters = atol(argv[2]);
	if (strcmp(mode, "forknow") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			work();
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	print_syms();
	burn(1000);
	if (strcmp(mode, "abc") == 0) {
		pthread_t t[3];
		if (pipe(pipefd) != 0)
			return 1;
		pthread_create(&t[2], NULL, waiter, NULL);
		pthread_create(&t[0], NULL, worker, NULL);
		pthread_create(&t[1], NULL, worker, NULL);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		if (write(pipefd[1], "x", 1) != 1)
			return 1;
		pthread_join(t[2], NULL);
		if (getenv("SAMPLE_ABC_FLOOR_HZ"))
			fprintf(stderr, "floor signals %ld\n", (long)floor_signals);
		printf("waiter %s%s%s\n", waiter_eintr & 1 ? "nanosleep-EINTR " : "",
		       waiter_eintr & 2 ? "read-EINTR " : "", waiter_eintr ? "" : "ok");
		return (waiter_eintr & 6) ? 3 : 0;
	}
	if (strcmp(mode, "fork") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			work();
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (strcmp(mode, "deep") == 0)
		return recurse(1000) == 1000 ? 0 : 1;
	fprintf(stderr, "sample_abc: unknown mode %s\n", mode);
	return 2;
}
