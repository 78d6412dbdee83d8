/*
 * test_writer_wake.c: the session writer sleeps up to a flush interval while it has nothing
 * to write (session.c), and a thread that takes one of the last quarter of the pool's chunks
 * wakes it (buffers.c). Its own executable: the chunk pool is made once per process, and this
 * test needs a small one (1 MiB, 16 chunks of 64 KiB).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "harness.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A session into a new file at `path` (a mkstemp template) with a 1 MiB pool of 64 KiB
 * chunks (the first session of the process makes the pool), flushing every flush_ms (0: the
 * default, 100 ms). */
static int start_small(char *path, uint32_t flush_ms)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	struct opscope_options o = { .output = path,
				     .buffer_bytes = 1u << 20,
				     .chunk_bytes = 64u << 10,
				     .flush_interval_ms = flush_ms };
	return opscope_session_start(&o);
}

/* After 1.2 s without events the writer sleeps half a second or more at a time (its sleeps
 * double up to the 5 s flush interval). Then a range every 4 us or so (about 490,000 events
 * a second in 16-byte slots, 7.8 MB/s) for 0.6 s: 4.4 MB through a pool of 1 MiB, which the
 * program fills in 0.13 s. Without the pool's wake the writer sleeps through that and events
 * are dropped (244 in a run with the wake taken out: the first drop wakes it too); with it
 * none are. */
TEST(low_pool_wakes_a_sleeping_writer)
{
	char path[] = "/tmp/opscope_test_writer_wake_XXXXXX";
	REQUIRE(start_small(path, 5000) == 0);
	double idle_until = now_s() + 1.2;
	while (now_s() < idle_until) {
		struct timespec ts = { 0, 50000000 };
		nanosleep(&ts, NULL);
	}
	double start = now_s(), t = start;
	unsigned long ranges = 0;
	while (t - start < 0.6) {
		OPSCOPE_RANGE_BEGIN(OPSCOPE_CAT_USER_DEFINED, "paced");
		OPSCOPE_RANGE_END();
		ranges++;
		double until = t + 4e-6;
		while ((t = now_s()) < until)
			;
	}
	REQUIRE(opscope_session_stop() == 0);
	struct opscope_session_stats st;
	opscope_session_get_stats(&st);
	printf("# %lu ranges in 0.6 s; %llu events written, %llu dropped, %llu bytes\n", ranges,
	       (unsigned long long)st.events_written, (unsigned long long)st.events_dropped,
	       (unsigned long long)st.bytes_written);
	CHECK(ranges * 2 * 16 > 2 * (1u << 20)); /* the pool went round more than twice */
	CHECK_EQ_U(st.events_dropped, 0);
	CHECK_EQ_U(st.events_written, ranges * 2);
	unlink(path);
}

/* The writer's voluntary context switches (its wake-ups) while the session records nothing:
 * its sleeps double up to the flush interval (100 ms), about 17 in the first second. It woke
 * every 8 ms before (125 a second, 0.4% of a CPU on this VM). */
static long writer_switches(void)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	long n = -1;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == self)
			continue;
		char p[300], line[256];
		snprintf(p, sizeof(p), "/proc/self/task/%s/status", e->d_name);
		FILE *f = fopen(p, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
				break;
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

TEST(idle_writer_wakes_rarely)
{
	char path[] = "/tmp/opscope_test_writer_wake_XXXXXX";
	REQUIRE(start_small(path, 0) == 0);
	long before = writer_switches();
	struct timespec ts = { 1, 0 };
	nanosleep(&ts, NULL);
	long after = writer_switches();
	printf("# the writer woke %ld times in a second (%ld, %ld)\n", after - before, before,
	       after);
	REQUIRE(before >= 0); /* the session has exactly one thread besides this one */
	CHECK(after - before < 40);
	CHECK_EQ_I(opscope_session_stop(), 0);
	unlink(path);
}

TEST_MAIN(low_pool_wakes_a_sleeping_writer, idle_writer_wakes_rarely)
