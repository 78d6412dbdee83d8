/*
 * test_drops.c: a writer that cannot keep up. Its own program, because the event buffer is
 * sized by the first session of a process and this one must be tiny.
 */
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "formats/opscope/opscope_load.h"
#include "harness.h"
#include "model/model.h"
#include "trace/decode.h"

static char tmpdir[] = "/tmp/opscope-test-record-XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

struct worker_arg {
	int ranges; /* begin/end pairs to record */
	int depth;  /* nesting depth of each group */
};

static void *worker(void *p)
{
	const struct worker_arg *a = p;
	for (int i = 0; i < a->ranges; i += a->depth) {
		for (int d = 0; d < a->depth; d++)
			OPSCOPE_RANGE_BEGIN(OPSCOPE_CAT_USER_DEFINED, "work");
		for (int d = 0; d < a->depth; d++)
			OPSCOPE_RANGE_END();
	}
	return NULL;
}

static void run_threads(int nthreads, int ranges, int depth)
{
	pthread_t th[64];
	struct worker_arg a = { ranges, depth };
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, &a);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
}

/* Load a file into a fresh model; returns NULL on error (message printed). */
static struct model *load(const char *path)
{
	struct model *m = model_new();
	char err[512];
	if (opscope_load_file(m, path, err, sizeof(err)) != 0) {
		printf("#   load %s: %s\n", path, err);
		model_free(m);
		return NULL;
	}
	return m;
}

/* A buffer far too small for the burst: the program goes on, drops are exact. */
TEST(drops_are_counted)
{
	struct opscope_options o = { .output = tmp_path("drops.opscope"),
				     .buffer_bytes = 4 * 4096,
				     .chunk_bytes = 4096,
				     .flush_interval_ms = 1000 };
	REQUIRE(opscope_session_start(&o) == 0);
	run_threads(4, 200000, 1);
	REQUIRE(opscope_session_stop() == 0);
	struct opscope_session_stats st;
	opscope_session_get_stats(&st);
	CHECK_EQ_U(st.events_written + st.events_dropped, 4ull * 400000);
	struct model *m = load(o.output);
	REQUIRE(m);
	CHECK_EQ_U(m->events_total - m->files[0].by_kind[OPS_EV_DROP_MARK], st.events_written);
	printf("#   written %llu dropped %llu marks %llu\n", (unsigned long long)st.events_written,
	       (unsigned long long)st.events_dropped,
	       (unsigned long long)m->files[0].by_kind[OPS_EV_DROP_MARK]);
	CHECK(st.events_dropped > 0);
	CHECK_EQ_U(m->dropped_total, st.events_dropped);
	/* Where the gaps are: a thread that got a chunk again after dropping wrote DROP_MARKs;
	 * one that never did (a loaded machine: the writer may not free a chunk before the burst
	 * ends) has its losses in its DROPS record. Either way every loss is on a track. */
	uint64_t on_tracks = 0;
	for (uint32_t t = 0; t < m->ntracks; t++)
		on_tracks += m->tracks[t].dropped;
	CHECK_EQ_U(on_tracks, st.events_dropped);
	model_free(m);
}

struct harness_state harness;

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	static const struct harness_test tests[] = {
		{ "drops_are_counted", test_drops_are_counted },
	};
	int rc = harness_run(tests, 1);
	if (rc == 0) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		(void)!system(cmd);
	}
	return rc;
}
