/*
 * test_sampler.c: the CPU stack sampler (src/record/sampler.c) in process, for the sanitizer
 * runs (scripts/test.sh runs it under TSan too): sessions that sample while threads burn CPU,
 * threads come and go, a thread sleeps (wall-clock mode), and sessions stop and start again;
 * through each mechanism (perf_event where the kernel allows it, and the SIGPROF timers).
 * Each file is loaded back and must hold samples on the threads that ran, about as many as
 * their CPU time at that rate allows (wide floors: the machine is shared). The e2e tests
 * (test_sampler.sh) check the stacks' shape; here it is the concurrency that is under test:
 * the sampler thread attaching to and detaching from threads while they start and end, the
 * handler writing rings that the sampler thread drains, and the writer thread taking the
 * queued samples.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "formats/opscope/opscope_load.h"
#include "harness.h"
#include "model/model.h"
#include "record/sampler.h"

static double thread_cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Spend `seconds` of this thread's CPU; the sum is returned (and kept by the caller) so that
 * the loop is not optimized away. */
static unsigned long burn(double seconds)
{
	volatile unsigned long sink = 0;
	double end = thread_cpu_s() + seconds;
	while (thread_cpu_s() < end)
		for (unsigned long i = 0; i < 20000; i++)
			sink += i * i;
	return sink;
}

struct worker {
	pthread_t thread;
	double cpu_s;
	_Atomic pid_t tid;
	unsigned long sum; /* what burn() computed */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	w->sum = burn(w->cpu_s);
	return NULL;
}

/* Many short threads, one after another: each may end while the sampler attaches to it. */
static void *churn_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 40; i++) {
		struct worker w = { .cpu_s = 0.002 };
		if (pthread_create(&w.thread, NULL, worker_main, &w) == 0)
			pthread_join(w.thread, NULL);
	}
	return NULL;
}

/* Sleep `ms` in full: wall-clock samples cut sleeps short (EINTR), so sleep the rest. */
static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

static void *sleeper_main(void *arg)
{
	struct worker *w = arg;
	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	sleep_ms((long)(w->cpu_s * 1000));
	return NULL;
}

/* Samples of the loaded model on the track of thread `tid` (all tracks when tid is 0). */
static uint64_t samples_of(const struct model *m, pid_t tid)
{
	uint64_t n = 0;
	for (uint32_t t = 0; t < m->ntracks; t++)
		if (tid == 0 || m->tracks[t].tid == (uint64_t)tid)
			n += m->tracks[t].nsamples;
	return n;
}

/* Whether the sampler has armed a CPU-time timer that signals thread tid: the kernel lists
 * each POSIX timer of the process in /proc/self/timers, one signalling a thread with the line
 * "notify: signal/tid.TID". Waits for it up to 5 s (without that file, 0.2 s). */
static bool timer_armed_for(pid_t tid)
{
	char want[48], line[256];
	snprintf(want, sizeof(want), "/tid.%d\n", (int)tid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen("/proc/self/timers", "r");
		if (!f) { /* a kernel without CONFIG_CHECKPOINT_RESTORE: wait 0.2 s instead */
			struct timespec ts = { 0, 200000000 };
			nanosleep(&ts, NULL);
			return true;
		}
		bool found = false;
		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, want) != NULL;
		if (f)
			fclose(f);
		if (found)
			return true;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

static struct model *load(const char *path)
{
	struct model *m = model_new();
	char err[256];
	if (!m || opscope_load_file(m, path, err, sizeof(err)) != 0) {
		printf("# load %s: %s\n", path, err);
		model_free(m);
		return NULL;
	}
	return m;
}

static const char *meta(const struct model *m, const char *key)
{
	const char *v = m->nfiles ? model_get_meta(m, m->files[0].pid, key) : NULL;
	return v ? v : "";
}

/* A session into a new temporary file `path` (a "/tmp/opscope_test_sampler_XXXXXX" array)
 * that samples at `hz` in `mode` through `mech` (NULL: perf_event where allowed), flushing
 * every `flush_ms` (0: the default). 0, or -1 when it could not start. */
static int start_sampling(char *path, const char *mech, int mode, uint32_t hz, uint32_t flush_ms)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	if (mech)
		setenv("OPSCOPE_SAMPLE_MECH", mech, 1);
	else
		unsetenv("OPSCOPE_SAMPLE_MECH");
	setenv("OPSCOPE_QUIET", "1", 1);
	struct opscope_options o = {
		.output = path, .sample_hz = hz, .sample_mode = mode, .flush_interval_ms = flush_ms
	};
	return opscope_session_start(&o);
}

/* One session at `hz` in `mode`: two workers burning 0.25 s of CPU each and the churn of
 * short threads (CPU mode), or one thread sleeping 0.3 s (wall mode). Checks its file. */
static void sample_session(const char *mech, int mode, uint32_t hz)
{
	char path[] = "/tmp/opscope_test_sampler_XXXXXX";
	int rc = start_sampling(path, mech, mode, hz, 0);
	CHECK_EQ_I(rc, 0);
	if (rc != 0)
		return;
	struct worker w[2] = { { .cpu_s = 0.25 }, { .cpu_s = 0.25 } };
	pthread_t churn;
	if (mode == OPSCOPE_SAMPLE_WALL) {
		w[0].cpu_s = 0.3;
		CHECK_EQ_I(pthread_create(&w[0].thread, NULL, sleeper_main, &w[0]), 0);
		pthread_join(w[0].thread, NULL);
	} else {
		CHECK_EQ_I(pthread_create(&churn, NULL, churn_main, NULL), 0);
		for (int i = 0; i < 2; i++)
			CHECK_EQ_I(pthread_create(&w[i].thread, NULL, worker_main, &w[i]), 0);
		for (int i = 0; i < 2; i++)
			pthread_join(w[i].thread, NULL);
		pthread_join(churn, NULL);
	}
	CHECK_EQ_I(opscope_session_stop(), 0);
	unsetenv("OPSCOPE_SAMPLE_MECH");
	struct model *m = load(path);
	CHECK(m != NULL);
	if (m) {
		const char *sampler = meta(m, "sampler");
		printf("# sampler: %s; samples %llu\n", sampler,
		       (unsigned long long)samples_of(m, 0));
		CHECK(strstr(sampler, " Hz ") != NULL);
		if (mode == OPSCOPE_SAMPLE_WALL) {
			/* 0.3 s asleep at hz: about 0.3 * hz samples of that thread */
			uint64_t n = samples_of(m, atomic_load(&w[0].tid));
			printf("# sleeping thread: %llu samples\n", (unsigned long long)n);
			CHECK(n >= (uint64_t)(0.3 * hz / 4));
		} else {
			/* 0.25 s of CPU each: about 0.25 * hz samples (the timers' 250 Hz tick
			 * caps the SIGPROF mechanism); an eighth of the lesser is the floor: with
			 * other jobs on both CPUs of this VM the CPU-time timers gave a worker 10
			 * of its nominal 62 */
			double rate = hz < 250 || (mech == NULL && strstr(sampler, "perf_event"))
					      ? hz
					      : 250;
			for (int i = 0; i < 2; i++) {
				uint64_t n = samples_of(m, atomic_load(&w[i].tid));
				printf("# worker %d: %llu samples\n", i, (unsigned long long)n);
				CHECK(n >= (uint64_t)(0.25 * rate / 8));
			}
		}
		model_free(m);
	}
	unlink(path);
}

TEST(perf_event_or_fallback_cpu_mode)
{
	sample_session(NULL, OPSCOPE_SAMPLE_CPU, 499);
}

TEST(sigprof_timers_cpu_mode)
{
	sample_session("timer", OPSCOPE_SAMPLE_CPU, 499);
}

TEST(wall_mode_samples_a_sleeping_thread)
{
	sample_session(NULL, OPSCOPE_SAMPLE_WALL, 199);
}

/* Stop and start again, quickly: the sampler thread of one session ends before the next
 * one's starts, and nothing of the first leaks into the second file. */
TEST(sessions_one_after_another)
{
	for (int i = 0; i < 3; i++)
		sample_session(i % 2 ? "timer" : NULL, OPSCOPE_SAMPLE_CPU, 997);
}

/* The signal path's per-thread ring holds the samples of a sampler thread that drains late
 * (kept off the CPU by other work): with the sampler's lock held (sampler_fork_prepare: its
 * rounds wait for it), this thread burns 0.22 s of CPU under the SIGPROF timers, whose CPU
 * clock ticks at the kernel's 250 Hz: about 55 samples in its ring on a quiet machine, fewer
 * than the 128 slots it has. Under load the timers fire less per CPU second (17 to 28 of a
 * nominal 40 were seen with other jobs on both CPUs), so the check is only that the ring
 * held more than the 16 slots it had and dropped none. The burn starts once the timer of
 * this thread is armed. */
TEST(signal_ring_holds_a_late_drain)
{
	char path[] = "/tmp/opscope_test_sampler_XXXXXX";
	REQUIRE(start_sampling(path, "timer", OPSCOPE_SAMPLE_CPU, 999, 0) == 0);
	/* the sampler's first rounds arm our timer: under load that took over 50 ms, and a burn
	 * before it gave this thread 1 or 2 samples */
	REQUIRE(timer_armed_for((pid_t)syscall(SYS_gettid)));
	sampler_fork_prepare();
	unsigned long sum = burn(0.22);
	sampler_fork_parent();
	CHECK_EQ_I(opscope_session_stop(), 0);
	unsetenv("OPSCOPE_SAMPLE_MECH");
	struct model *m = load(path);
	REQUIRE(m != NULL);
	const char *cost = meta(m, "sampler_cost");
	uint64_t n = samples_of(m, (pid_t)syscall(SYS_gettid));
	printf("# sampler_cost: %s; this thread: %llu samples (sum %lu)\n", cost,
	       (unsigned long long)n, sum);
	CHECK(strstr(cost, "; 0 samples dropped for a full signal ring;") != NULL);
	CHECK(n > 16);
	model_free(m);
	unlink(path);
}

/* A thread started right after another ended (join then create: tens of microseconds, so
 * almost always within one 10 ms round) leaves the thread count as it was, which is all the
 * sampler looks at between two listings of /proc/self/task: the listing it still does every
 * 10 rounds must find the new one. It burns 0.25 s of CPU at 499 Hz: about 125 samples, of
 * which it loses those of at most 100 ms before it is found; the floor is the other tests'
 * eighth (15). */
TEST(thread_replacing_an_ended_one_is_sampled)
{
	char path[] = "/tmp/opscope_test_sampler_XXXXXX";
	REQUIRE(start_sampling(path, NULL, OPSCOPE_SAMPLE_CPU, 499, 0) == 0);
	struct worker a = { .cpu_s = 0.05 }, b = { .cpu_s = 0.25 };
	REQUIRE(pthread_create(&a.thread, NULL, worker_main, &a) == 0);
	pthread_join(a.thread, NULL);
	REQUIRE(pthread_create(&b.thread, NULL, worker_main, &b) == 0);
	pthread_join(b.thread, NULL);
	CHECK_EQ_I(opscope_session_stop(), 0);
	struct model *m = load(path);
	REQUIRE(m != NULL);
	const char *sampler = meta(m, "sampler");
	double rate = strstr(sampler, "perf_event") ? 499 : 250;
	uint64_t n = samples_of(m, atomic_load(&b.tid));
	printf("# sampler: %s; replacing thread: %llu samples\n", sampler, (unsigned long long)n);
	CHECK(n >= (uint64_t)(0.25 * rate / 8));
	model_free(m);
	unlink(path);
}

/* While samples come, a signal mechanism's sampler thread sleeps up to 100 ms between
 * rounds (its rings cannot fill sooner at 99 Hz) and the handlers look at the thread count:
 * a thread started meanwhile wakes it early (sig_check_threads), as the `sampler_cost` line
 * counts. This thread burns CPU under the SIGPROF timers (so its handler runs at 99 Hz) while
 * it starts five workers one after another; a listing of the sampler's own could find a
 * worker first (a 10 ms window in each 100 ms round), hence five, and the check is that one
 * at least woke it, and that every worker was sampled. The figures count from the process's
 * start: this test runs first. */
TEST(new_thread_wakes_a_busy_sampler)
{
	char path[] = "/tmp/opscope_test_sampler_XXXXXX";
	REQUIRE(start_sampling(path, "timer", OPSCOPE_SAMPLE_CPU, 99, 0) == 0);
	REQUIRE(timer_armed_for((pid_t)syscall(SYS_gettid)));
	unsigned long sum = burn(0.15);
	struct worker w[5];
	for (int i = 0; i < 5; i++) {
		w[i] = (struct worker){ .cpu_s = 0.1 };
		REQUIRE(pthread_create(&w[i].thread, NULL, worker_main, &w[i]) == 0);
		sum += burn(0.15);
		pthread_join(w[i].thread, NULL);
	}
	CHECK_EQ_I(opscope_session_stop(), 0);
	unsetenv("OPSCOPE_SAMPLE_MECH");
	struct model *m = load(path);
	REQUIRE(m != NULL);
	const char *cost = meta(m, "sampler_cost");
	printf("# sampler_cost: %s (sum %lu)\n", cost, sum);
	const char *early = strstr(cost, " of them woken early");
	REQUIRE(early != NULL);
	const char *num = early;
	while (num > cost && num[-1] >= '0' && num[-1] <= '9')
		num--;
	CHECK(atoi(num) >= 1);
	for (int i = 0; i < 5; i++)
		CHECK(samples_of(m, atomic_load(&w[i].tid)) >= 1);
	model_free(m);
	unlink(path);
}

/* The writer holds samples until a snapshot round (every flush_interval_ms) a second after
 * their last writing, a flush, or a batch of 4,096: with a 10 s interval, the file of a
 * session that sampled this thread for 0.2 s of CPU (about 100-200 samples at 997 Hz) has
 * none of them yet; opscope_session_flush writes them. At the stop the writer says what
 * writing them cost (`samples_write_cost`), over every sample of the file. */
TEST(samples_reach_the_file_at_a_snapshot)
{
	char path[] = "/tmp/opscope_test_sampler_XXXXXX";
	REQUIRE(start_sampling(path, NULL, OPSCOPE_SAMPLE_CPU, 997, 10000) == 0);
	unsigned long sum = burn(0.2);
	sleep_ms(50); /* past the sampler's round that hands the last samples over */
	struct model *m = load(path);
	REQUIRE(m != NULL); /* mid-session: a file readable up to its last record */
	uint64_t before = samples_of(m, 0);
	model_free(m);
	CHECK_EQ_I(opscope_session_flush(), 0);
	m = load(path);
	REQUIRE(m != NULL);
	uint64_t after = samples_of(m, 0);
	printf("# samples before the flush %llu, after %llu (sum %lu)\n",
	       (unsigned long long)before, (unsigned long long)after, sum);
	CHECK_EQ_U(before, 0);
	CHECK(after >= 10);
	model_free(m);
	CHECK_EQ_I(opscope_session_stop(), 0);
	/* the writer's share, counted over the samples it wrote */
	m = load(path);
	REQUIRE(m != NULL);
	const char *cost = meta(m, "samples_write_cost");
	printf("# samples_write_cost: %s\n", cost);
	CHECK_EQ_U(strtoull(cost, NULL, 10), samples_of(m, 0));
	CHECK(strstr(cost, " ns of the writer's CPU a sample") != NULL);
	model_free(m);
	unlink(path);
}

/* With snapshots every 50 ms, samples still go to the file in batches, once a second (each
 * writing compresses a record per table and one of samples: at every snapshot it cost the
 * writer 1.0-1.2 us of CPU a sample at 1 kHz), and reach it without a flush. */
TEST(samples_are_written_once_a_second)
{
	char path[] = "/tmp/opscope_test_sampler_XXXXXX";
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	REQUIRE(start_sampling(path, NULL, OPSCOPE_SAMPLE_CPU, 997, 50) == 0);
	unsigned long sum = burn(0.6);
	sleep_ms(1400); /* past the sampler's last round and a snapshot a second on */
	struct model *m = load(path);
	REQUIRE(m != NULL);
	uint64_t unflushed = samples_of(m, 0);
	model_free(m);
	CHECK_EQ_I(opscope_session_stop(), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	m = load(path);
	REQUIRE(m != NULL);
	const char *cost = meta(m, "samples_write_cost");
	unsigned long long n = 0, writings = 0;
	CHECK_EQ_I(sscanf(cost, "%llu samples in %llu writings", &n, &writings), 2);
	printf("# %llu samples in the file before the stop, %llu after in %llu writings over "
	       "%.2f s (sum %lu)\n",
	       (unsigned long long)unflushed, n, writings, seconds, sum);
	CHECK(unflushed >= 10);
	CHECK_EQ_U(n, samples_of(m, 0));
	/* one writing a second at most, and the stop's: at every snapshot it would be 12 */
	CHECK(writings >= 1 && (double)writings <= seconds + 1.0);
	model_free(m);
	unlink(path);
}

TEST_MAIN(new_thread_wakes_a_busy_sampler, perf_event_or_fallback_cpu_mode, sigprof_timers_cpu_mode,
	  wall_mode_samples_a_sleeping_thread, sessions_one_after_another,
	  signal_ring_holds_a_late_drain, thread_replacing_an_ended_one_is_sampled,
	  samples_reach_the_file_at_a_snapshot, samples_are_written_once_a_second)
