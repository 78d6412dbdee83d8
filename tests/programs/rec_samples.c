/*
 * rec_samples.c: records synthetic CPU stack samples of a known shape through the record
 * stage's sample store (src/record/samples.h), the way the future sampler will: from a
 * sampler thread of its own, on behalf of two worker threads. Linked with the runtime's
 * internals (rec_* programs), not through LD_PRELOAD. Usage: rec_samples OUTPUT
 *
 * The shape, per worker thread (tests/e2e/test_samples.sh checks it):
 *   while the worker is inside its range "aten::conv2d":
 *     60 samples  main.py:main -> libsynth.so a -> b -> c     (c innermost)
 *   after it closed the range:
 *     30 samples  main -> a -> b
 *     10 samples  main -> a
 *      2 samples  a -> a -> a (recursion: a counts once in its cum)
 *      1 sample   truncated: b -> c with the RECORD_SAMPLE_TRUNCATED flag
 * so per run (2 workers): 206 samples; flat c 122, b 60, a 24, main 0; cum a 204, b 182,
 * c 122, main 200; under aten::conv2d only the 120 samples main -> a -> b -> c.
 * The mapping is made up ([0x7f0000000000, +0x10000) of /opt/synth/libsynth.so from file
 * offset 0x1000, build-id "00112233"): frames show as libsynth.so+0xOFFSET.
 */
#include <stdio.h>
#include <stdlib.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "record/record.h"
#include "record/samples.h"

#define MAP_START 0x7f0000000000ull

static pthread_barrier_t inside, sampled;
static pid_t tids[2];

static void *worker(void *arg)
{
	int i = (int)(long)arg;
	char name[32];
	snprintf(name, sizeof(name), "worker-%d", i);
	opscope_thread_name(name);
	tids[i] = (pid_t)syscall(SYS_gettid);
	opscope_range_begin(OPSCOPE_CAT_OPERATOR, "aten::conv2d");
	pthread_barrier_wait(&inside);	/* the sampler samples us inside the range */
	pthread_barrier_wait(&sampled); /* ... and is done */
	opscope_range_end();
	pthread_barrier_wait(&inside); /* now outside it */
	pthread_barrier_wait(&sampled);
	return NULL;
}

static uint32_t stack(uint32_t n, const uint32_t *frames)
{
	uint32_t s = record_sample_stack(frames, n);
	if (s == RECORD_SAMPLE_NONE) {
		fprintf(stderr, "rec_samples: record_sample_stack failed\n");
		exit(1);
	}
	return s;
}

static void emit(uint32_t track, uint32_t st, int count, uint32_t flags)
{
	for (int i = 0; i < count; i++)
		if (record_sample(track, record_ticks(), st, 1, flags) != 0) {
			fprintf(stderr, "rec_samples: record_sample failed\n");
			exit(1);
		}
}

int main(int argc, char **argv)
{
	struct opscope_options o = { .output = argc > 1 ? argv[1] : "samples.opscope" };
	if (opscope_session_start(&o) != 0) {
		fprintf(stderr, "rec_samples: %s\n", opscope_last_error());
		return 1;
	}
	uint32_t map = record_sample_mapping(MAP_START, MAP_START + 0x10000, 0x1000,
					     "/opt/synth/libsynth.so", "00112233");
	uint32_t fmain = record_sample_frame_python("main", "main.py", 7);
	uint32_t fa = record_sample_frame_native(map, MAP_START + 0x100);
	uint32_t fb = record_sample_frame_native(map, MAP_START + 0x200);
	uint32_t fc = record_sample_frame_native(map, MAP_START + 0x300);
	if (map == RECORD_SAMPLE_NONE || fmain == RECORD_SAMPLE_NONE || fa == RECORD_SAMPLE_NONE ||
	    fb == RECORD_SAMPLE_NONE || fc == RECORD_SAMPLE_NONE ||
	    record_sample_frame_native(map, MAP_START + 0x10000) != RECORD_SAMPLE_NONE) {
		fprintf(stderr, "rec_samples: interning frames failed\n");
		return 1;
	}
	/* innermost first */
	const uint32_t s_cba[] = { fc, fb, fa, fmain }, s_ba[] = { fb, fa, fmain };
	const uint32_t s_a[] = { fa, fmain }, s_aaa[] = { fa, fa, fa }, s_trunc[] = { fc, fb };
	uint32_t cba = stack(4, s_cba), ba = stack(3, s_ba), a = stack(2, s_a);
	uint32_t aaa = stack(3, s_aaa), trunc = stack(2, s_trunc);
	if (stack(4, s_cba) != cba) {
		fprintf(stderr, "rec_samples: equal stacks got different ids\n");
		return 1;
	}
	/* record_sample_stack_under, outermost first, gives the same entries: main -> a is a's
	 * stack, b and c under it are ba's and cba's; every entry on the way is reported; an
	 * empty tail is the parent itself; an unknown parent or frame fails. */
	const uint32_t tail_bc[] = { fb, fc }, root_ma[] = { fmain, fa }, bad[] = { 0xfffffff0u };
	uint32_t ids[2] = { 0, 0 }, ids2[2] = { 0, 0 };
	if (record_sample_stack_under(RECORD_SAMPLE_NONE, root_ma, 2, ids2) != a || ids2[1] != a ||
	    record_sample_stack_under(a, tail_bc, 2, ids) != cba || ids[0] != ba || ids[1] != cba ||
	    record_sample_stack_under(ba, NULL, 0, NULL) != ba ||
	    record_sample_stack_under(0xfffffff0u, tail_bc, 2, NULL) != RECORD_SAMPLE_NONE ||
	    record_sample_stack_under(a, bad, 1, NULL) != RECORD_SAMPLE_NONE) {
		fprintf(stderr, "rec_samples: record_sample_stack_under disagrees\n");
		return 1;
	}

	pthread_barrier_init(&inside, NULL, 3);
	pthread_barrier_init(&sampled, NULL, 3);
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
	pthread_barrier_wait(&inside);
	/* the sampler's side: a track per sampled thread, asked once */
	uint32_t tracks[2] = { record_sample_track(tids[0]), record_sample_track(tids[1]) };
	for (int i = 0; i < 2; i++)
		emit(tracks[i], cba, 60, 0);
	pthread_barrier_wait(&sampled);
	pthread_barrier_wait(&inside);
	for (int i = 0; i < 2; i++) {
		emit(tracks[i], ba, 30, 0);
		emit(tracks[i], a, 10, 0);
		emit(tracks[i], aaa, 2, 0);
		emit(tracks[i], trunc, 1, RECORD_SAMPLE_TRUNCATED);
	}
	pthread_barrier_wait(&sampled);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return opscope_session_stop() == 0 ? 0 : 1;
}
