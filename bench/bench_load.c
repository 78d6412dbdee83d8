/*
 * bench_load.c: how fast a trace loads into the event model, in this process, without the
 * tool's start or output: .opscope files (reader + loader: decode, tick-to-ns mapping,
 * nesting; one core, the loader is single-threaded) and, for comparing importer changes,
 * any other trace `opscope report` reads (Kineto JSON: parser and committer threads).
 *
 *   bench_load FILE [RUNS]     prints "native_load_events_per_s N" (best of RUNS, default 5)
 *                              and "mb_per_s N" (the file's bytes over the best time)
 *
 * Events are the encoded events of the file (BEGIN, END, ARG, ... each count), as `opscope
 * info` counts them; for JSON, the trace events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sys/stat.h>

#include "formats/import.h"
#include "model/model.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_load FILE [RUNS]\n");
		return 2;
	}
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	double best = 1e30;
	uint64_t events = 0;
	for (int i = 0; i < runs; i++) {
		struct model *m = model_new();
		char err[512];
		double t0 = now();
		if (!m || import_load_path(m, argv[1], err, sizeof(err)) != 0) {
			fprintf(stderr, "bench_load: %s\n", m ? err : "out of memory");
			return 1;
		}
		double t = now() - t0;
		events = m->events_total;
		best = t < best ? t : best;
		model_free(m);
	}
	struct stat st;
	double bytes = stat(argv[1], &st) == 0 ? (double)st.st_size : 0;
	printf("events %llu\nbest_s %.6f\nnative_load_events_per_s %.0f\nmb_per_s %.1f\n",
	       (unsigned long long)events, best, (double)events / best, bytes / 1e6 / best);
	return 0;
}
