/*
 * test_throughput.c: the profiler's throughput figures (record/throughput.c: timer-only mode,
 * Perf Summary, step_info) on a fake clock, with exact figures and the exact printed text;
 * plus one real loop with sleeps that only checks generous bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "harness.h"
#include "record/throughput.h"

static uint64_t fake_now_ns;

static uint64_t fake_clock(void)
{
	return fake_now_ns;
}

#define MS 1000000ull

/* One step: reader_ms inside batch_ms, then step(num_samples). */
static void fake_step(struct opscope_profiler *p, uint64_t reader_ms, uint64_t batch_ms,
		      int64_t num_samples)
{
	if (reader_ms) {
		opscope_reader_begin();
		fake_now_ns += reader_ms * MS;
		opscope_reader_end();
	}
	fake_now_ns += (batch_ms - reader_ms) * MS;
	opscope_step(num_samples); /* the global entry point reaches the active profiler */
	(void)p;
}

struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static struct opscope_profiler *timer_profiler(struct capture *c, int skip_steps)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	struct opscope_profiler_options o = { 0 };
	o.timer_only = 1;
	o.skip_steps = skip_steps;
	o.summary_out = c->f;
	o.output = "/nonexistent-opscope-dir/never/";
	return opscope_profiler_create(&o);
}

static const char header_line[] = "============================================Perf Summary"
				  "============================================\n";
static const char columns_line[] =
	"|                 |       avg       |       max       |       min       |\n";

/* skip 2 of 5 steps: the kept steps are 2, 3, 4 for every series (Paddle mixes 3 and 4). */
TEST(summary_samples_exact)
{
	struct capture c;
	throughput_set_clock_for_test(fake_clock);
	fake_now_ns = 1000 * MS;
	struct opscope_profiler *p = timer_profiler(&c, 2);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	static const uint64_t r[] = { 100, 200, 300, 400, 500 };
	static const uint64_t b[] = { 1000, 2000, 1000, 3000, 2000 };
	for (int i = 0; i < 5; i++)
		fake_step(p, r[i], b[i], 8);
	CHECK_EQ_U(opscope_profiler_step_num(p), 0); /* timer_only: no scheduler steps */
	struct opscope_bench_summary s;
	REQUIRE(opscope_profiler_bench_summary(p, &s) == 0);
	CHECK_EQ_U(s.steps, 3);
	CHECK_EQ_I(s.samples_mode, 1);
	CHECK_NEAR(s.reader_avg_s, 0.4, 1e-12);
	CHECK_NEAR(s.reader_max_s, 0.5, 1e-12);
	CHECK_NEAR(s.reader_min_s, 0.3, 1e-12);
	CHECK_NEAR(s.batch_avg_s, 2.0, 1e-12);
	CHECK_NEAR(s.batch_max_s, 3.0, 1e-12);
	CHECK_NEAR(s.batch_min_s, 1.0, 1e-12);
	CHECK_NEAR(s.ips_avg, 4.0, 1e-12);
	CHECK_NEAR(s.ips_max, 8.0, 1e-12);
	CHECK_NEAR(s.ips_min, 8.0 / 3.0, 1e-12);
	CHECK_NEAR(s.reader_ratio, 20.0, 1e-9);
	REQUIRE(opscope_profiler_stop(p) == 0);
	fflush(c.f);
	char want[2048];
	snprintf(want, sizeof(want),
		 "%sReader Ratio: 20.000%%\n"
		 "Time Unit: s, IPS Unit: samples/s\n"
		 "%s"
		 "|   reader_cost   |     0.40000     |     0.50000     |     0.30000     |\n"
		 "|    batch_cost   |     2.00000     |     3.00000     |     1.00000     |\n"
		 "|       ips       |     4.00000     |     8.00000     |     2.66667     |\n",
		 header_line, columns_line);
	CHECK_STR(c.text, want);
	/* the summary stays readable after stop */
	REQUIRE(opscope_profiler_bench_summary(p, &s) == 0);
	CHECK_EQ_U(s.steps, 3);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);
	throughput_set_clock_for_test(NULL);
}

/* No num_samples: steps/s; no reader: neither the ratio line nor the reader row. A strictly
 * decreasing batch cost would leave Paddle's max at its first value and min right; a strictly
 * increasing one would leave Paddle's min at inf: check both stay finite. */
TEST(summary_steps_mode)
{
	struct capture c;
	throughput_set_clock_for_test(fake_clock);
	struct opscope_profiler *p = timer_profiler(&c, -1); /* skip nothing */
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	fake_step(p, 0, 1000, -1);
	fake_step(p, 0, 500, -1);
	fake_step(p, 0, 250, -1);
	REQUIRE(opscope_profiler_stop(p) == 0);
	fflush(c.f);
	char want[2048];
	snprintf(want, sizeof(want),
		 "%sTime Unit: s, IPS Unit: steps/s\n"
		 "%s"
		 "|    batch_cost   |     0.58333     |     1.00000     |     0.25000     |\n"
		 "|       ips       |     1.71429     |     4.00000     |     1.00000     |\n",
		 header_line, columns_line);
	CHECK_STR(c.text, want);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);

	p = timer_profiler(&c, -1);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	fake_step(p, 0, 1000, 4);
	fake_step(p, 0, 2000, 4);
	fake_step(p, 0, 3000, 4);
	struct opscope_bench_summary s;
	REQUIRE(opscope_profiler_bench_summary(p, &s) == 0);
	CHECK_NEAR(s.batch_min_s, 1.0, 1e-12); /* Paddle: inf */
	CHECK_NEAR(s.batch_max_s, 3.0, 1e-12);
	CHECK_NEAR(s.ips_max, 4.0, 1e-12);
	CHECK_NEAR(s.ips_min, 4.0 / 3.0, 1e-12);
	CHECK_EQ_U(s.steps, 3);
	REQUIRE(opscope_profiler_stop(p) == 0);
	fflush(c.f);
	CHECK(strstr(c.text, "inf") == NULL);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);
	throughput_set_clock_for_test(NULL);
}

/* A step without num_samples switches to steps/s for good; max/min are then in steps/s too
 * (Paddle keeps the samples/s max it saw before the switch). */
TEST(samples_then_steps)
{
	struct capture c;
	throughput_set_clock_for_test(fake_clock);
	struct opscope_profiler *p = timer_profiler(&c, -1);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	fake_step(p, 0, 1000, 10);
	fake_step(p, 0, 1000, 10);
	fake_step(p, 0, 2000, -1);
	fake_step(p, 0, 1000, 10);
	struct opscope_bench_summary s;
	REQUIRE(opscope_profiler_bench_summary(p, &s) == 0);
	CHECK_EQ_I(s.samples_mode, 0);
	CHECK_NEAR(s.ips_avg, 4.0 / 5.0, 1e-12);
	CHECK_NEAR(s.ips_max, 1.0, 1e-12);
	CHECK_NEAR(s.ips_min, 0.5, 1e-12);
	REQUIRE(opscope_profiler_stop(p) == 0);
	fflush(c.f);
	CHECK(strstr(c.text, "IPS Unit: steps/s\n") != NULL);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);
	throughput_set_clock_for_test(NULL);
}

/* Ten steps with the default skip of 10: nothing printed (Paddle: total_iters <= 10). */
TEST(no_summary_when_all_skipped)
{
	struct capture c;
	throughput_set_clock_for_test(fake_clock);
	struct opscope_profiler *p = timer_profiler(&c, 0); /* 0 = default 10 */
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 10; i++)
		fake_step(p, 0, 100, 1);
	struct opscope_bench_summary s;
	REQUIRE(opscope_profiler_bench_summary(p, &s) == 0);
	CHECK_EQ_U(s.steps, 0);
	REQUIRE(opscope_profiler_stop(p) == 0);
	fflush(c.f);
	CHECK_EQ_U(c.len, 0);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);

	/* the eleventh step is the first one measured */
	p = timer_profiler(&c, 0);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 11; i++)
		fake_step(p, 0, i == 10 ? 700 : 100, 1);
	REQUIRE(opscope_profiler_bench_summary(p, &s) == 0);
	CHECK_EQ_U(s.steps, 1);
	CHECK_NEAR(s.batch_avg_s, 0.7, 1e-12);
	CHECK_NEAR(s.batch_min_s, 0.7, 1e-12);
	REQUIRE(opscope_profiler_stop(p) == 0);
	fflush(c.f);
	CHECK(c.len > 0);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);
	throughput_set_clock_for_test(NULL);
}

/* step_info: averages per step since the previous call, then reset; its unit becomes the
 * IPS unit of the Perf Summary. */
TEST(step_info)
{
	struct capture c;
	char buf[256];
	throughput_set_clock_for_test(fake_clock);
	struct opscope_profiler *p = timer_profiler(&c, -1);
	REQUIRE(p);
	CHECK_EQ_I(opscope_profiler_step_info(p, NULL, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "");
	REQUIRE(opscope_profiler_start(p) == 0);
	fake_step(p, 100, 1000, 8);
	fake_step(p, 200, 2000, 8);
	int n = opscope_profiler_step_info(p, "images", buf, sizeof(buf));
	CHECK_STR(buf, " reader_cost: 0.15000 s batch_cost: 1.50000 s ips: 5.333 images/s");
	CHECK_EQ_I(n, (int)strlen(buf));
	/* nothing since the last call */
	CHECK_EQ_I(opscope_profiler_step_info(p, "images", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "");
	/* the returned length is the full length even when the buffer is short */
	fake_step(p, 0, 4000, 8);
	char small[8];
	n = opscope_profiler_step_info(p, NULL, small, sizeof(small));
	CHECK_EQ_I(n, (int)strlen(" batch_cost: 4.00000 s ips: 2.000 samples/s"));
	CHECK_STR(small, " batch_");
	/* a step without samples: steps/s from now on */
	fake_step(p, 0, 500, -1);
	opscope_profiler_step_info(p, "images", buf, sizeof(buf));
	CHECK_STR(buf, " batch_cost: 0.50000 s ips: 2.000 steps/s");
	REQUIRE(opscope_profiler_stop(p) == 0);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);

	/* the unit of step_info reaches the summary */
	p = timer_profiler(&c, -1);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	fake_step(p, 0, 1000, 2);
	opscope_profiler_step_info(p, "images", buf, sizeof(buf));
	CHECK_STR(buf, " batch_cost: 1.00000 s ips: 2.000 images/s");
	REQUIRE(opscope_profiler_stop(p) == 0);
	fflush(c.f);
	CHECK(strstr(c.text, "Time Unit: s, IPS Unit: images/s\n") != NULL);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);
	throughput_set_clock_for_test(NULL);
}

/* Reader hooks: two reads in one step add up; hooks without an active profiler are ignored. */
TEST(reader_hooks)
{
	struct capture c;
	throughput_set_clock_for_test(fake_clock);
	opscope_reader_begin(); /* no profiler: nothing happens */
	opscope_reader_end();
	struct opscope_profiler *p = timer_profiler(&c, -1);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	opscope_reader_begin();
	fake_now_ns += 100 * MS;
	opscope_reader_end();
	opscope_reader_begin();
	fake_now_ns += 50 * MS;
	opscope_reader_end();
	opscope_reader_end(); /* an unmatched end adds nothing */
	fake_now_ns += 850 * MS;
	REQUIRE(opscope_profiler_step(p, 1) == 0);
	struct opscope_bench_summary s;
	REQUIRE(opscope_profiler_bench_summary(p, &s) == 0);
	CHECK_NEAR(s.reader_avg_s, 0.15, 1e-12);
	CHECK_NEAR(s.batch_avg_s, 1.0, 1e-12);
	CHECK_NEAR(s.reader_ratio, 15.0, 1e-9);
	REQUIRE(opscope_profiler_stop(p) == 0);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);
	throughput_set_clock_for_test(NULL);
}

/* timer_only: no events, no files, no directory. */
TEST(timer_only_writes_nothing)
{
	char dir[] = "/tmp/opscope-bench-XXXXXX";
	REQUIRE(mkdtemp(dir) != NULL);
	char out[512];
	snprintf(out, sizeof(out), "%s/logs/", dir);
	struct opscope_profiler_options o = { 0 };
	o.timer_only = 1;
	o.output = out;
	FILE *sink = fopen("/dev/null", "w");
	o.summary_out = sink;
	struct opscope_profiler *p = opscope_profiler_create(&o);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 3; i++)
		REQUIRE(opscope_profiler_step(p, 1) == 0);
	CHECK_EQ_I(opscope_session_active(), 0);
	REQUIRE(opscope_profiler_stop(p) == 0);
	struct stat st;
	CHECK(stat(out, &st) != 0);
	opscope_profiler_destroy(p);
	fclose(sink);
	rmdir(dir);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0) {
	}
}

/* The real clock: bounds are loose on purpose (loaded CI machines). */
TEST(real_clock)
{
	struct capture c;
	struct opscope_profiler *p = timer_profiler(&c, -1);
	REQUIRE(p);
	REQUIRE(opscope_profiler_start(p) == 0);
	for (int i = 0; i < 3; i++) {
		opscope_reader_begin();
		sleep_ms(5);
		opscope_reader_end();
		sleep_ms(15);
		REQUIRE(opscope_profiler_step(p, 32) == 0);
	}
	struct opscope_bench_summary s;
	REQUIRE(opscope_profiler_bench_summary(p, &s) == 0);
	CHECK_EQ_U(s.steps, 3);
	CHECK(s.reader_avg_s >= 0.004 && s.reader_avg_s < 1.0);
	CHECK(s.batch_avg_s >= 0.019 && s.batch_avg_s < 2.0);
	CHECK(s.reader_min_s <= s.reader_avg_s && s.reader_avg_s <= s.reader_max_s);
	CHECK(s.batch_min_s <= s.batch_avg_s && s.batch_avg_s <= s.batch_max_s);
	CHECK(s.ips_avg > 16.0 && s.ips_avg < 1700.0);
	REQUIRE(opscope_profiler_stop(p) == 0);
	opscope_profiler_destroy(p);
	fclose(c.f);
	free(c.text);
}

TEST(misuse)
{
	struct opscope_bench_summary s;
	CHECK_EQ_I(opscope_profiler_step(NULL, 1), OPSCOPE_EINVAL);
	CHECK_EQ_I(opscope_profiler_bench_summary(NULL, &s), OPSCOPE_EINVAL);
	struct capture c;
	struct opscope_profiler *p = timer_profiler(&c, -1);
	REQUIRE(p);
	CHECK_EQ_I(opscope_profiler_step(p, 1), OPSCOPE_EINVAL); /* not started */
	CHECK_EQ_I(opscope_profiler_stop(p), OPSCOPE_EINVAL);
	REQUIRE(opscope_profiler_start(p) == 0);
	CHECK_EQ_I(opscope_profiler_start(p), OPSCOPE_EINVAL);
	struct capture c2;
	struct opscope_profiler *q = timer_profiler(&c2, -1);
	REQUIRE(q);
	CHECK_EQ_I(opscope_profiler_start(q), OPSCOPE_EBUSY); /* one active profiler */
	opscope_profiler_destroy(q);
	opscope_profiler_destroy(p); /* stops it */
	fclose(c.f);
	free(c.text);
	fclose(c2.f);
	free(c2.text);
}

TEST_MAIN(summary_samples_exact, summary_steps_mode, samples_then_steps,
	  no_summary_when_all_skipped, step_info, reader_hooks, timer_only_writes_nothing,
	  real_clock, misuse)
