/*
 * bench.c: the step benchmark behind the profiler's timer-only mode and Perf Summary, the C
 * form of paddle.profiler's timer.py (Benchmark, Event, TimeAverager).
 *
 * Per step: reader cost = the time between opscope_reader_begin and opscope_reader_end calls
 * that ended inside the step (summed when a step reads more than once); batch cost = the time
 * from the previous step boundary (or start()) to this one, reader time included; throughput =
 * num_samples / batch cost, or 1 / batch cost once any step came without num_samples.
 *
 * Invariants, where we deliberately differ from Paddle (docs/profiler.md lists each quirk):
 *   - the summary keeps exactly the steps after the first `skip_steps`, and every series
 *     (reader, batch, throughput) covers the same steps and is averaged over that many values;
 *   - max and min are updated independently, so min is never left at +inf;
 *   - both throughput series (samples/s and steps/s) are kept for every step, so that a late
 *     switch to steps/s does not mix units in max/min;
 *   - step_info averages the reader cost per step, like the batch cost, not per reader call.
 * All fields are under `lock`: the reader hooks may come from a data-loading thread.
 */
#include "record/bench.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t (*_Atomic bench_clock_hook)(void);

void bench_set_clock_for_test(uint64_t (*now_ns)(void))
{
	bench_clock_hook = now_ns;
}

/* CLOCK_MONOTONIC: read once per step, so exactness matters more than the cost of a call. */
static uint64_t bench_now_ns(void)
{
	uint64_t (*hook)(void) = bench_clock_hook;
	if (hook)
		return hook();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void bench_series_add(struct bench_series *s, double v)
{
	if (s->n == 0 || v > s->max)
		s->max = v;
	if (s->n == 0 || v < s->min)
		s->min = v;
	s->total += v;
	s->n++;
}

static void bench_reset_locked(struct bench *b)
{
	b->running = 0;
	b->samples_mode = 1;
	b->step_start_ns = 0;
	b->reader_start_ns = 0;
	b->reader_open = 0;
	b->step_reader_ns = 0;
	b->steps = 0;
	memset(&b->reader, 0, sizeof(b->reader));
	memset(&b->batch, 0, sizeof(b->batch));
	memset(&b->ips_samples, 0, sizeof(b->ips_samples));
	memset(&b->ips_steps, 0, sizeof(b->ips_steps));
	b->samples = 0;
	b->info_steps = b->info_reader_ns = b->info_batch_ns = b->info_samples = 0;
	snprintf(b->speed_unit, sizeof(b->speed_unit), "samples/s");
}

void bench_init(struct bench *b, int skip_steps)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	b->skip_steps = skip_steps < 0 ? 0 : skip_steps;
	bench_reset_locked(b);
}

void bench_destroy(struct bench *b)
{
	pthread_mutex_destroy(&b->lock);
}

void bench_begin(struct bench *b)
{
	pthread_mutex_lock(&b->lock);
	bench_reset_locked(b);
	b->running = 1;
	b->step_start_ns = bench_now_ns();
	pthread_mutex_unlock(&b->lock);
}

void bench_step(struct bench *b, int64_t num_samples)
{
	pthread_mutex_lock(&b->lock);
	if (!b->running) {
		pthread_mutex_unlock(&b->lock);
		return;
	}
	uint64_t now = bench_now_ns();
	uint64_t batch_ns = now > b->step_start_ns ? now - b->step_start_ns : 0;
	uint64_t reader_ns = b->step_reader_ns;
	b->step_start_ns = now;
	b->step_reader_ns = 0;
	if (num_samples < 0)
		b->samples_mode = 0; /* for good, like paddle */

	b->info_steps++;
	b->info_reader_ns += reader_ns;
	b->info_batch_ns += batch_ns;
	if (num_samples > 0)
		b->info_samples += (uint64_t)num_samples;

	if (b->steps++ >= (uint64_t)b->skip_steps) {
		bench_series_add(&b->reader, (double)reader_ns);
		bench_series_add(&b->batch, (double)batch_ns);
		if (num_samples > 0)
			b->samples += (uint64_t)num_samples;
		/* A zero-length step has no finite throughput: it counts in the batch series
		 * (and so in the averages) but adds no max/min of throughput. */
		if (batch_ns > 0) {
			double s = (double)batch_ns / 1e9;
			bench_series_add(&b->ips_steps, 1.0 / s);
			if (num_samples >= 0)
				bench_series_add(&b->ips_samples, (double)num_samples / s);
		}
	}
	pthread_mutex_unlock(&b->lock);
}

void bench_reader_begin(struct bench *b)
{
	pthread_mutex_lock(&b->lock);
	b->reader_start_ns = bench_now_ns();
	b->reader_open = 1;
	pthread_mutex_unlock(&b->lock);
}

void bench_reader_end(struct bench *b)
{
	pthread_mutex_lock(&b->lock);
	if (b->running && b->reader_open) {
		uint64_t now = bench_now_ns();
		if (now > b->reader_start_ns)
			b->step_reader_ns += now - b->reader_start_ns;
	}
	b->reader_open = 0;
	pthread_mutex_unlock(&b->lock);
}

static void bench_summary_locked(const struct bench *b, struct opscope_bench_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->samples_mode = b->samples_mode;
	out->steps = b->batch.n;
	if (b->batch.n == 0)
		return;
	double n = (double)b->batch.n;
	out->reader_avg_s = b->reader.total / n / 1e9;
	out->reader_max_s = b->reader.max / 1e9;
	out->reader_min_s = b->reader.min / 1e9;
	out->batch_avg_s = b->batch.total / n / 1e9;
	out->batch_max_s = b->batch.max / 1e9;
	out->batch_min_s = b->batch.min / 1e9;
	double batch_total_s = b->batch.total / 1e9;
	const struct bench_series *ips = b->samples_mode ? &b->ips_samples : &b->ips_steps;
	if (batch_total_s > 0)
		out->ips_avg = (b->samples_mode ? (double)b->samples : n) / batch_total_s;
	if (ips->n) {
		out->ips_max = ips->max;
		out->ips_min = ips->min;
	}
	if (out->batch_avg_s > 0)
		out->reader_ratio = out->reader_avg_s / out->batch_avg_s * 100.0;
}

void bench_summary(struct bench *b, struct opscope_bench_summary *out)
{
	pthread_mutex_lock(&b->lock);
	bench_summary_locked(b, out);
	pthread_mutex_unlock(&b->lock);
}

/* Python's str.center(width): with an odd margin and an odd width the extra space goes left. */
static void bench_center(FILE *out, const char *s, int width)
{
	int len = (int)strlen(s);
	int margin = width - len;
	if (margin <= 0) {
		fputs(s, out);
		return;
	}
	int left = margin / 2 + (margin & width & 1);
	fprintf(out, "%*s%s%*s", left, "", s, margin - left, "");
}

static void bench_row(FILE *out, const char *item, double avg, double max, double min)
{
	char a[64], x[64], n[64];
	snprintf(a, sizeof(a), "%.5f", avg);
	snprintf(x, sizeof(x), "%.5f", max);
	snprintf(n, sizeof(n), "%.5f", min);
	const char *cells[4] = { item, a, x, n };
	for (int i = 0; i < 4; i++) {
		fputs("| ", out);
		bench_center(out, cells[i], 15);
		fputc(' ', out);
	}
	fputs("|\n", out);
}

static void bench_print_locked(const struct bench *b, FILE *out)
{
	if (b->steps <= (uint64_t)b->skip_steps)
		return;
	struct opscope_bench_summary s;
	bench_summary_locked(b, &s);
	static const char title[] = "Perf Summary";
	int margin = 100 - (int)(sizeof(title) - 1);
	int left = margin / 2 + (margin & 100 & 1);
	for (int i = 0; i < left; i++)
		fputc('=', out);
	fputs(title, out);
	for (int i = left; i < margin; i++)
		fputc('=', out);
	fputc('\n', out);
	if (s.reader_ratio != 0)
		fprintf(out, "Reader Ratio: %.3f%%\n", s.reader_ratio);
	fprintf(out, "Time Unit: s, IPS Unit: %s\n", s.samples_mode ? b->speed_unit : "steps/s");
	const char *head[4] = { "", "avg", "max", "min" };
	for (int i = 0; i < 4; i++) {
		fputs("| ", out);
		bench_center(out, head[i], 15);
		fputc(' ', out);
	}
	fputs("|\n", out);
	if (s.reader_avg_s != 0)
		bench_row(out, "reader_cost", s.reader_avg_s, s.reader_max_s, s.reader_min_s);
	bench_row(out, "batch_cost", s.batch_avg_s, s.batch_max_s, s.batch_min_s);
	bench_row(out, "ips", s.ips_avg, s.ips_max, s.ips_min);
	fflush(out);
}

void bench_print(struct bench *b, FILE *out)
{
	pthread_mutex_lock(&b->lock);
	bench_print_locked(b, out);
	pthread_mutex_unlock(&b->lock);
}

void bench_end(struct bench *b, FILE *out)
{
	pthread_mutex_lock(&b->lock);
	if (b->running && out)
		bench_print_locked(b, out);
	b->running = 0;
	b->reader_open = 0;
	pthread_mutex_unlock(&b->lock);
}

int bench_step_info(struct bench *b, const char *unit, char *buf, size_t size)
{
	char msg[512]; /* the longest possible message is well under this */
	size_t len = 0;
	msg[0] = '\0';
	pthread_mutex_lock(&b->lock);
	double steps = (double)b->info_steps;
	double reader = steps > 0 ? (double)b->info_reader_ns / steps / 1e9 : 0;
	double batch = steps > 0 ? (double)b->info_batch_ns / steps / 1e9 : 0;
	double total_s = (double)b->info_batch_ns / 1e9;
	double ips = 0;
	if (total_s > 0)
		ips = b->samples_mode ? (double)b->info_samples / total_s : steps / total_s;
	if (reader != 0)
		len += (size_t)snprintf(msg + len, sizeof(msg) - len, " reader_cost: %.5f s",
					reader);
	if (batch != 0) {
		if (b->samples_mode)
			snprintf(b->speed_unit, sizeof(b->speed_unit), "%s/s",
				 unit ? unit : "samples");
		len += (size_t)snprintf(msg + len, sizeof(msg) - len, " batch_cost: %.5f s", batch);
	}
	if (ips != 0 && len < sizeof(msg))
		snprintf(msg + len, sizeof(msg) - len, " ips: %.3f %s", ips,
			 b->samples_mode ? b->speed_unit : "steps/s");
	b->info_steps = b->info_reader_ns = b->info_batch_ns = b->info_samples = 0;
	pthread_mutex_unlock(&b->lock);
	return snprintf(buf, size, "%s", msg);
}
