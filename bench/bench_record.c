/*
 * bench_record.c: costs of the recording core, each measured in this one run.
 *
 *   bench_record pairs             ns per enabled begin+end (1 thread), disabled, floor
 *   bench_record pairs2            ns per enabled begin+end with 2 threads recording at once
 *   bench_record stream OUT MODE   a realistic event stream into OUT (MODE: none | zstd);
 *                                  prints events and file bytes
 *   bench_record writer            events per second through the writer's encode + write
 *
 * Output is "key value" lines that bench/run.sh collects into results.json.
 * The floor is what any timestamped range recorder must do: two TSC reads and two 16-byte
 * stores into a thread-local buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>
#include <x86intrin.h>

#include "opscope/opscope.h"

#include "trace/encode.h"
#include "trace/tracefile.h"

#define ROUNDS 7
#define PAIRS  2000000

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ---- floor: 2 x (rdtsc + 16-byte store into a TLS ring) ---- */
struct floor_slot {
	uint64_t ticks;
	uint32_t id;
	uint32_t kind;
};
static __thread struct floor_slot floor_ring[4096];
static __thread unsigned floor_pos;

static __attribute__((noinline)) void floor_event(uint32_t id, uint32_t kind)
{
	struct floor_slot *s = &floor_ring[floor_pos++ & 4095];
	s->ticks = __rdtsc();
	s->id = id;
	s->kind = kind;
}

static double bench_floor(void)
{
	double best = 1e30;
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();
		for (int i = 0; i < PAIRS; i++) {
			floor_event(1, 1);
			floor_event(1, 2);
		}
		double ns = (now_ns() - t0) / PAIRS;
		if (ns < best)
			best = ns;
	}
	return best;
}

static double bench_pairs_loop(void)
{
	double best = 1e30;
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();
		for (int i = 0; i < PAIRS; i++) {
			OPSCOPE_RANGE_BEGIN(OPSCOPE_CAT_USER_DEFINED, "pair");
			OPSCOPE_RANGE_END();
		}
		double ns = (now_ns() - t0) / PAIRS;
		if (ns < best)
			best = ns;
	}
	return best;
}

static double bench_disabled(void)
{
	double best = 1e30;
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();
		for (int i = 0; i < PAIRS * 10; i++) {
			OPSCOPE_RANGE_BEGIN(OPSCOPE_CAT_USER_DEFINED, "pair");
			OPSCOPE_RANGE_END();
			__asm__ volatile("" ::: "memory"); /* keep the loop */
		}
		double ns = (now_ns() - t0) / (PAIRS * 10.0);
		if (ns < best)
			best = ns;
	}
	return best;
}

static void start_session(const char *path, int compression)
{
	struct opscope_options o = { .output = path,
				     .buffer_bytes = 512u << 20,
				     .compression = compression };
	if (opscope_session_start(&o) != 0) {
		fprintf(stderr, "bench: %s\n", opscope_last_error());
		exit(1);
	}
}

static uint64_t stop_session(void)
{
	opscope_session_stop();
	struct opscope_session_stats st;
	opscope_session_get_stats(&st);
	return st.events_dropped;
}

static void *pairs_thread(void *arg)
{
	*(double *)arg = bench_pairs_loop();
	return NULL;
}

/* ---- realistic stream: 200 names, nesting 1-4, 0-2 us between events ---- */
static uint64_t lcg = 12345;
static uint32_t rnd(uint32_t n)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(lcg >> 33) % n;
}

static void spin_ticks(uint64_t t)
{
	uint64_t end = __rdtsc() + t;
	while (__rdtsc() < end)
		;
}

static void stream(int events_target)
{
	static char names[200][32];
	for (int i = 0; i < 200; i++)
		snprintf(names[i], sizeof(names[i]), "aten::op_%03d", i);
	int events = 0;
	while (events < events_target) {
		int depth = 1 + (int)rnd(4);
		for (int d = 0; d < depth; d++) {
			opscope_range_begin(OPSCOPE_CAT_OPERATOR, names[rnd(200)]);
			spin_ticks(rnd(5000));
		}
		for (int d = 0; d < depth; d++) {
			spin_ticks(rnd(2000));
			opscope_range_end();
		}
		events += 2 * depth;
	}
}

/* ---- writer: encode + write throughput of the default configuration ---- */
static void bench_writer(void)
{
	enum { N = 4000000, CHUNK = 4092 };
	struct ops_slot *slots = malloc(N * sizeof(*slots));
	uint64_t t = 1000000;
	for (int i = 0; i < N; i++) {
		t += 20 + rnd(3000);
		slots[i] = (struct ops_slot){ .ticks = t,
					      .name = 1 + rnd(200),
					      .kind = (i & 1) ? OPS_EV_END : OPS_EV_BEGIN,
					      .cat = OPSCOPE_CAT_OPERATOR };
	}
	const char *modes[2] = { "none", "zstd" };
	for (int m = 0; m < 2; m++) {
		struct tracefile tf;
		tracefile_open(&tf, "/tmp/opscope-bench-writer.opscope", 0, 0, m ? 1 : 0, 1, 0);
		struct buf b;
		buf_init(&b);
		struct encode_state st = { 0 };
		double t0 = now_ns();
		for (int i = 0; i < N; i += CHUNK) {
			int n = N - i < CHUNK ? N - i : CHUNK;
			buf_clear(&b);
			encode_begin(&b, &st, 0, slots[i].ticks);
			encode_slots(&b, &st, slots + i, (size_t)n);
			encode_finish(&b, &st);
			tracefile_record(&tf, OPS_REC_EVENTS2, b.data, b.len, 1);
		}
		tracefile_close(&tf);
		double s = (now_ns() - t0) / 1e9;
		printf("writer_events_per_s_%s %.0f\n", modes[m], N / s);
		encode_free(&st);
		buf_free(&b);
	}
	free(slots);
	remove("/tmp/opscope-bench-writer.opscope");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pairs";
	if (strcmp(mode, "pairs") == 0) {
		printf("floor_pair_ns %.2f\n", bench_floor());
		printf("disabled_pair_ns %.3f\n", bench_disabled());
		start_session("/tmp/opscope-bench-pairs.opscope", OPSCOPE_COMPRESS_DEFAULT);
		double ns = bench_pairs_loop();
		uint64_t dropped = stop_session();
		printf("range_pair_ns %.2f\n", ns);
		printf("range_pair_dropped %llu\n", (unsigned long long)dropped);
		remove("/tmp/opscope-bench-pairs.opscope");
	} else if (strcmp(mode, "pairs2") == 0) {
		start_session("/tmp/opscope-bench-pairs2.opscope", OPSCOPE_COMPRESS_DEFAULT);
		pthread_t th[2];
		double ns[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, pairs_thread, &ns[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		uint64_t dropped = stop_session();
		printf("range_pair_ns_2threads %.2f\n", (ns[0] + ns[1]) / 2);
		printf("range_pair_2threads_dropped %llu\n", (unsigned long long)dropped);
		remove("/tmp/opscope-bench-pairs2.opscope");
	} else if (strcmp(mode, "stream") == 0 && argc > 3) {
		int compression = strcmp(argv[3], "zstd") == 0 ? OPSCOPE_COMPRESS_ZSTD
							       : OPSCOPE_COMPRESS_NONE;
		start_session(argv[2], compression);
		stream(2000000);
		stop_session();
		struct opscope_session_stats st;
		opscope_session_get_stats(&st);
		printf("events %llu\nbytes %llu\ndropped %llu\n",
		       (unsigned long long)st.events_written, (unsigned long long)st.bytes_written,
		       (unsigned long long)st.events_dropped);
	} else if (strcmp(mode, "writer") == 0) {
		bench_writer();
	} else {
		fprintf(stderr, "usage: bench_record pairs|pairs2|stream OUT none|zstd|writer\n");
		return 2;
	}
	return 0;
}
