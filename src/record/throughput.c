/*
 * throughput.c: the training throughput of a profiler (reader cost, batch cost and ips per
 * step) behind its timer-only mode and Perf Summary, the C form of paddle.profiler's timer.py
 * (Benchmark, Event, TimeAverager). Not the benchmark suite of the repository (bench/), which
 * measures opscope itself.
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
#include "record/throughput.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t (*_Atomic throughput_clock_hook)(void);

void throughput_set_clock_for_test(uint64_t (*now_ns)(void))
{
	throughput_clock_hook = now_ns;
}

/* CLOCK_MONOTONIC: read once per step, so exactness matters more than the cost of a call. */
static uint64_t throughput_now_ns(void)
{
	uint64_t (*hook)(void) = throughput_clock_hook;
	if (hook)
		return hook();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void throughput_series_add(struct throughput_series *s, double v)
{
	if (s->n == 0 || v > s->max)
		s->max = v;
	if (s->n == 0 || v < s->min)
		s->min = v;
	s->total += v;
	s->n++;
}

static void throughput_reset_locked(struct throughput *b)
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

void throughput_init(struct throughput *b, int skip_steps)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	b->skip_steps = skip_steps < 0 ? 0 : skip_steps;
	throughput_reset_locked(b);
}

void throughput_destroy(struct throughput *b)
{
	pthread_mutex_destroy(&b->lock);
}

void throughput_begin(struct throughput *b)
{
	pthread_mutex_lock(&b->lock);
	throughput_reset_locked(b);
	b->running = 1;
	b->step_start_ns = throughput_now_ns();
	pthread_mutex_unlock(&b->lock);
}

void throughput_step(struct throughput *b, int64_t num_samples)
{
	pthread_mutex_lock(&b->lock);
	if (!b->running) {
		pthread_mutex_unlock(&b->lock);
		return;
	}
	uint64_t now = throughput_now_ns();
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
		throughput_series_add(&b->reader, (double)reader_ns);
		throughput_series_add(&b->batch, (double)batch_ns);
		if (num_samples > 0)
			b->samples += (uint64_t)num_samples;
		/* A zero-length step has no finite throughput: it counts in the batch series
		 * (and so in the averages) but adds no max/min of throughput. */
		if (batch_ns > 0) {
			double s = (double)batch_ns / 1e9;
			throughput_series_add(&b->ips_steps, 1.0 / s);
			if (num_samples >= 0)
				throughput_series_add(&b->ips_samples, (double)num_samples / s);
		}
	}
	pthread_mutex_unlock(&b->lock);
}

void throughput_reader_begin(struct throughput *b)
{
	pthread_mutex_lock(&b->lock);
	b->reader_start_ns = throughput_now_ns();
	b->reader_open = 1;
	pthread_mutex_unlock(&b->lock);
}

void throughput_reader_end(struct throughput *b)
{
	pthread_mutex_lock(&b->lock);
	if (b->running && b->reader_open) {
		uint64_t now = throughput_now_ns();
		if (now > b->reader_start_ns)
			b->step_reader_ns += now - b->reader_start_ns;
	}
	b->reader_open = 0;
	pthread_mutex_unlock(&b->lock);
}

static void throughput_summary_locked(const struct throughput *b, struct opscope_bench_summary *out)
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
	const struct throughput_series *ips = b->samples_mode ? &b->ips_samples : &b->ips_steps;
	if (batch_total_s > 0)
		out->ips_avg = (b->samples_mode ? (double)b->samples : n) / batch_total_s;
	if (ips->n) {
		out->ips_max = ips->max;
		out->ips_min = ips->min;
	}
	if (out->batch_avg_s > 0)
		out->reader_ratio = out->reader_avg_s / out->batch_avg_s * 100.0;
}

void throughput_summary(struct throughput *b, struct opscope_bench_summary *out)
{
	pthread_mutex_lock(&b->lock);
	throughput_summary_locked(b, out);
	pthread_mutex_unlock(&b->lock);
}

/* Python's str.center(width): with an odd margin and an odd width the extra space goes left. */
static void throughput_center(FILE *out, const char *s, int width)
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

static void throughput_row(FILE *out, const char *item, double avg, double max, double min)
{
	char a[64], x[64], n[64];
	snprintf(a, sizeof(a), "%.5f", avg);
	snprintf(x, sizeof(x), "%.5f", max);
	snprintf(n, sizeof(n), "%.5f", min);
	const char *cells[4] = { item, a, x, n };
	for (int i = 0; i < 4; i++) {
		fputs("| ", out);
		throughput_center(out, cells[i], 15);
		fputc(' ', out);
	}
	fputs("|\n", out);
}

static void throughput_print_locked(const struct throughput *b, FILE *out)
{
	if (b->steps <= (uint64_t)b->skip_steps)
		return;
	struct opscope_bench_summary s;
	throughput_summary_locked(b, &s);
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
		throughput_center(out, head[i], 15);
		fputc(' ', out);
	}
	fputs("|\n", out);
	if (s.reader_avg_s != 0)
		throughput_row(out, "reader_cost", s.reader_avg_s, s.reader_max_s, s.reader_min_s);
	throughput_row(out, "batch_cost", s.batch_avg_s, s.batch_max_s, s.batch_min_s);
	throughput_row(out, "ips", s.ips_avg, s.ips_max, s.ips_min);
	fflush(out);
}

void throughput_print(struct throughput *b, FILE *out)
{
	pthread_mutex_lock(&b->lock);
	throughput_print_locked(b, out);
	pthread_mutex_unlock(&b->lock);
}

void throughput_end(struct throughput *b, FILE *out)
{
	pthread_mutex_lock(&b->lock);
	if (b->running && out)
		throughput_print_locked(b, out);
	b->running = 0;
	b->reader_open = 0;
	pthread_mutex_unlock(&b->lock);
}

int throughput_step_info(struct throughput *b, const char *unit, char *buf, size_t size)
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
