/*
 * test_timers.c: scoped timers across threads: exact count/total/min/max from known samples,
 * threads that exit before the read still count, reset, the printed table, the snapshot the
 * session writer stores. Also meant to run clean under TSan (a reader runs while writers do).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "opscope/opscope.h"

#include "harness.h"
#include "record/timers.h"

#define THREADS 8
#define SAMPLES 100000

/* Thread t adds t * 1000 + (i % 100) + 1 ns for i in [0, SAMPLES). */
static void *adder(void *arg)
{
	uint64_t t = (uint64_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < SAMPLES; i++)
		opscope_timer_add_ns("test.add", t * 1000 + (i % 100) + 1);
	for (int i = 0; i < 10; i++) {
		OPSCOPE_TIMER("test.scope");
	}
	return NULL;
}

static uint64_t expected_total(void)
{
	uint64_t total = 0;
	for (uint64_t t = 0; t < THREADS; t++)
		for (uint64_t i = 0; i < SAMPLES; i++)
			total += t * 1000 + (i % 100) + 1;
	return total;
}

static void run_adders(void)
{
	pthread_t th[THREADS];
	for (int t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, adder, (void *)(uintptr_t)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
}

/* 8 threads x 100000 samples, all exited before the read: exact figures. */
TEST(threads_exact)
{
	opscope_timers_reset();
	run_adders();
	struct opscope_timer_stats s;
	REQUIRE(opscope_timer_get("test.add", &s) == 0);
	CHECK_STR(s.name, "test.add");
	CHECK_EQ_U(s.count, THREADS * SAMPLES);
	CHECK_EQ_U(s.total_ns, expected_total());
	CHECK_EQ_U(s.min_ns, 1);
	CHECK_EQ_U(s.max_ns, (THREADS - 1) * 1000 + 100);
	CHECK_NEAR(s.avg_ns, (double)expected_total() / (THREADS * SAMPLES), 1e-6);
	REQUIRE(opscope_timer_get("test.scope", &s) == 0);
	CHECK_EQ_U(s.count, THREADS * 10);
	CHECK(s.min_ns <= s.max_ns);
	CHECK(s.total_ns >= s.max_ns);
}

/* Live threads and exited ones merge: the main thread adds too. */
TEST(live_and_retired_merge)
{
	opscope_timers_reset();
	opscope_timer_add_ns("test.add", 5000000);
	opscope_timer_add_ns("test.add", 0);
	run_adders();
	struct opscope_timer_stats s;
	REQUIRE(opscope_timer_get("test.add", &s) == 0);
	CHECK_EQ_U(s.count, THREADS * SAMPLES + 2);
	CHECK_EQ_U(s.total_ns, expected_total() + 5000000);
	CHECK_EQ_U(s.min_ns, 0);
	CHECK_EQ_U(s.max_ns, 5000000);
}

/* Reset zeroes everything, live and retired; timers stay known. */
TEST(reset)
{
	run_adders();
	opscope_timer_add_ns("test.add", 3);
	opscope_timers_reset();
	struct opscope_timer_stats s;
	REQUIRE(opscope_timer_get("test.add", &s) == 0);
	CHECK_EQ_U(s.count, 0);
	CHECK_EQ_U(s.total_ns, 0);
	CHECK_EQ_U(s.min_ns, 0);
	CHECK_EQ_U(s.max_ns, 0);
	CHECK_NEAR(s.avg_ns, 0, 0);
	/* after a reset, fresh samples (min/max not polluted by stale values) */
	opscope_timer_add_ns("test.add", 40);
	opscope_timer_add_ns("test.add", 20);
	REQUIRE(opscope_timer_get("test.add", &s) == 0);
	CHECK_EQ_U(s.count, 2);
	CHECK_EQ_U(s.total_ns, 60);
	CHECK_EQ_U(s.min_ns, 20);
	CHECK_EQ_U(s.max_ns, 40);
	CHECK_EQ_I(opscope_timer_get("test.never-registered", &s), OPSCOPE_EINVAL);
	CHECK_EQ_I(opscope_timer_get(NULL, &s), OPSCOPE_EINVAL);
}

/* Dynamic names: the per-thread cache is keyed by pointer but checked by content. */
TEST(dynamic_names)
{
	opscope_timers_reset();
	char name[32];
	snprintf(name, sizeof(name), "dyn.a");
	opscope_timer_add_ns(name, 1);
	snprintf(name, sizeof(name), "dyn.b"); /* same buffer, other name */
	opscope_timer_add_ns(name, 2);
	opscope_timer_add_ns("dyn.a", 10);
	struct opscope_timer_stats s;
	REQUIRE(opscope_timer_get("dyn.a", &s) == 0);
	CHECK_EQ_U(s.count, 2);
	CHECK_EQ_U(s.total_ns, 11);
	REQUIRE(opscope_timer_get("dyn.b", &s) == 0);
	CHECK_EQ_U(s.count, 1);
	CHECK_EQ_U(s.total_ns, 2);
}

/* opscope_timer_now/stop measure something plausible; a site keeps its id. */
TEST(site_timer)
{
	opscope_timers_reset();
	static struct opscope_timer_site site = { "site.sleep", 0 };
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = opscope_timer_now();
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
		opscope_timer_stop(&site, t0);
	}
	CHECK(site.id != 0);
	struct opscope_timer_stats s;
	REQUIRE(opscope_timer_get("site.sleep", &s) == 0);
	CHECK_EQ_U(s.count, 3);
	CHECK(s.min_ns >= 1500000);   /* slept 2 ms each */
	CHECK(s.max_ns < 5000000000); /* generous */
	/* a start after now counts as zero, not as a huge wrap-around */
	opscope_timer_stop(&site, opscope_timer_now() + 1000000000000ull);
	REQUIRE(opscope_timer_get("site.sleep", &s) == 0);
	CHECK_EQ_U(s.min_ns, 0);
	opscope_timer_stop(NULL, 0); /* ignored */
}

/* The table: header, one row per timer with samples, sorted by total; names escaped. */
TEST(print_table)
{
	opscope_timers_reset();
	opscope_timer_add_ns("print.small", 1000000);  /* 1 ms */
	opscope_timer_add_ns("print.big", 30000000);   /* 30 ms */
	opscope_timer_add_ns("print.big", 10000000);   /* 10 ms */
	opscope_timer_add_ns("bad\x01name\x1b[2J", 5); /* a terminal escape in a name */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	REQUIRE(f);
	int rows = opscope_timers_print(f);
	fclose(f);
	CHECK_EQ_I(rows, 3);
	CHECK(strstr(text, "Name") == text);
	CHECK(strstr(text, "Calls") && strstr(text, "Total(ms)") && strstr(text, "Avg(ms)") &&
	      strstr(text, "Max(ms)") && strstr(text, "Min(ms)"));
	const char *big = strstr(text, "print.big");
	const char *small = strstr(text, "print.small");
	const char *bad = strstr(text, "bad\\x01name\\x1b[2J");
	CHECK(big && small && bad);
	CHECK(big < small && small < bad); /* by total, descending */
	CHECK(strchr(text, '\x1b') == NULL && strchr(text, '\x01') == NULL);
	/* the row of print.big: 2 calls, 40 ms total, 20 avg, 30 max, 10 min */
	const char *eol = big ? strchr(big, '\n') : NULL;
	REQUIRE(eol);
	char row[256];
	snprintf(row, sizeof(row), "%.*s", (int)(eol - big), big);
	char nm[64];
	unsigned long long calls = 0;
	double total = 0, avg = 0, max = 0, min = 0;
	CHECK(sscanf(row, "%63s %llu %lf %lf %lf %lf", nm, &calls, &total, &avg, &max, &min) == 6);
	CHECK_EQ_U(calls, 2);
	CHECK_NEAR(total, 40.0, 1e-9);
	CHECK_NEAR(avg, 20.0, 1e-9);
	CHECK_NEAR(max, 30.0, 1e-9);
	CHECK_NEAR(min, 10.0, 1e-9);
	free(text);
}

/* timers_snapshot: every registered timer, names owned by the library. */
TEST(snapshot)
{
	opscope_timers_reset();
	opscope_timer_add_ns("snap.one", 7);
	struct opscope_timer_stats *all = NULL;
	size_t n = 0;
	REQUIRE(timers_snapshot(&all, &n) == 0);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(all[i].name, "snap.one") == 0) {
			found = 1;
			CHECK_EQ_U(all[i].count, 1);
			CHECK_EQ_U(all[i].total_ns, 7);
		} else if (strcmp(all[i].name, "test.add") == 0) {
			CHECK_EQ_U(all[i].count, 0); /* reset */
		}
	}
	CHECK(found);
	free(all);
}

/* A reader (print/get) runs while writer threads add and exit: no race (TSan) and the final
 * figures are exact. */
static atomic_int readers_stop;

static void *reader_loop(void *arg)
{
	(void)arg;
	FILE *sink = fopen("/dev/null", "w");
	while (!atomic_load(&readers_stop)) {
		struct opscope_timer_stats s;
		opscope_timer_get("test.add", &s);
		if (sink)
			opscope_timers_print(sink);
	}
	if (sink)
		fclose(sink);
	return NULL;
}

TEST(concurrent_reader)
{
	opscope_timers_reset();
	pthread_t r;
	atomic_store(&readers_stop, 0);
	pthread_create(&r, NULL, reader_loop, NULL);
	run_adders();
	atomic_store(&readers_stop, 1);
	pthread_join(r, NULL);
	struct opscope_timer_stats s;
	REQUIRE(opscope_timer_get("test.add", &s) == 0);
	CHECK_EQ_U(s.count, THREADS * SAMPLES);
	CHECK_EQ_U(s.total_ns, expected_total());
}

TEST_MAIN(threads_exact, live_and_retired_merge, reset, dynamic_names, site_timer, print_table,
	  snapshot, concurrent_reader)
