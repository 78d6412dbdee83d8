/*
 * test_model_room.c: the parts of the event model made for what comes next (many ranks and
 * hosts, a GPU collector, stack sampling): the process table from .opscope files (the same pid
 * in two files is two processes; program, host and rank from METADATA) and from Kineto JSON
 * (distributedInfo rank, host_name, process names, device tracks' process); device tracks'
 * own device and stream ids; the correlation column (equal to the "correlation" argument on
 * every range of a real trace, filled by both loaders, kept aligned by sorting); frames and
 * stacks interned, and stack samples sorted with their track.
 */
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "formats/import.h"
#include "formats/opscope/opscope_load.h"
#include "fuzz/model_check.h"
#include "harness.h"
#include "model/model.h"
#include "tracebuild.h"

/* A small .opscope file of process `pid` with one thread and one range, and metadata. */
static void small_trace(struct tb *b, uint32_t pid, const char *host, const char *rank)
{
	tb_init_v2(b, pid);
	tb_clock_identity(b);
	tb_meta(b, "program", "train");
	if (host)
		tb_meta(b, "hostname", host);
	if (rank)
		tb_meta(b, "rank", rank);
	uint32_t s_main = tb_str(b, "main"), s_step = tb_str(b, "step");
	tb_thread(b, 0, pid, pid, s_main, OPS_THREADF_MAIN);
	tb_events_begin(b, 0, 1000);
	tb_ev_begin(b, 1000, OPSCOPE_CAT_PROFILE_STEP, s_step);
	tb_ev_end(b, 2000, 0);
	tb_events_end(b);
	tb_end(b, 2, 0, 2500, 1);
}

static int load_tb(struct model *m, const struct tb *b, const char *name)
{
	char err[320] = "";
	int rc = opscope_load_mem(m, name, b->out.data, b->out.len, err, sizeof(err));
	if (rc)
		printf("#   load: %s\n", err);
	return rc;
}

static int load_json(struct model *m, const char *json)
{
	char err[320] = "";
	int rc = import_load_mem(m, "t.json", json, strlen(json), err, sizeof(err));
	if (rc)
		printf("#   import: %s\n", err);
	return rc;
}

TEST(processes_of_opscope_files)
{
	struct tb a, b;
	small_trace(&a, 4242, "node-a", "0");
	small_trace(&b, 4242, "node-b", "1");
	struct model *m = model_new();
	REQUIRE(m);
	REQUIRE(load_tb(m, &a, "a.opscope") == 0);
	REQUIRE(load_tb(m, &b, "b.opscope") == 0);
	/* the same pid in two files: two processes, one per file */
	REQUIRE(m->nprocesses == 2);
	REQUIRE(m->ntracks == 2);
	for (uint32_t f = 0; f < 2; f++) {
		const struct model_process *p = &m->processes[f];
		CHECK_EQ_U(p->file, f);
		CHECK_EQ_U(p->pid, 4242);
		CHECK_EQ_I(p->rank, (int64_t)f);
		CHECK_STR(model_str(m, p->name), "train");
		CHECK_STR(model_str(m, p->host), f ? "node-b" : "node-a");
		CHECK_EQ_U(m->tracks[f].process, f);
		CHECK_EQ_U(m->tracks[f].pid, 4242); /* the legacy field stays */
	}
	CHECK_EQ_U(model_find_process(m, 1, 4242), 1);
	CHECK_EQ_U(model_find_process(m, 1, 4243), MODEL_NO_PROCESS);
	fuzz_model_check(m);
	model_free(m);
	tb_free(&a);
	tb_free(&b);

	/* no rank in the metadata (or not a number): -1; a THREAD of another pid: its own */
	small_trace(&a, 7, NULL, "x1");
	m = model_new();
	REQUIRE(load_tb(m, &a, "c.opscope") == 0);
	REQUIRE(m->nprocesses == 1);
	CHECK_EQ_I(m->processes[0].rank, -1);
	CHECK_EQ_U(m->processes[0].host, 0);
	model_free(m);
	tb_free(&a);
	tb_init_v2(&a, 7);
	tb_clock_identity(&a);
	tb_thread(&a, 0, 7, 7, 0, 0);
	tb_thread(&a, 1, 8, 80, 0, 0);
	tb_events_begin(&a, 1, 1000);
	tb_ev_instant(&a, 1000, OPSCOPE_CAT_USER_DEFINED, 0);
	tb_events_end(&a);
	m = model_new();
	REQUIRE(load_tb(m, &a, "d.opscope") == 0);
	REQUIRE(m->nprocesses == 2);
	REQUIRE(m->ntracks == 2);
	CHECK_EQ_U(m->processes[m->tracks[0].process].pid, 7);
	CHECK_EQ_U(m->processes[m->tracks[1].process].pid, 8);
	model_free(m);
	tb_free(&a);
}

static const char kineto_ranked[] =
	"{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, "
	"\"world_size\": 8}, \"host_name\": \"gpu-node-7\", \"traceEvents\": ["
	"{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 500, \"tid\": 0, "
	"\"args\": {\"name\": \"python3\"}},"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 500, \"tid\": 501, "
	"\"ts\": 10, \"dur\": 20},"
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 500, "
	"\"tid\": 501, \"ts\": 12, \"dur\": 5, \"args\": {\"correlation\": 77}},"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"loader\", \"pid\": 600, \"tid\": 601, "
	"\"ts\": 11, \"dur\": 2},"
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 1, \"tid\": 7, "
	"\"ts\": 30, \"dur\": 4, \"args\": {\"correlation\": 77, \"stream\": 7}},"
	"{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, "
	"\"tid\": 13, \"ts\": 40, \"dur\": 4, \"args\": {\"correlation\": 78}}"
	"]}";

TEST(processes_of_kineto_trace)
{
	struct model *m = model_new();
	REQUIRE(m);
	REQUIRE(load_json(m, kineto_ranked) == 0);
	REQUIRE(m->nprocesses == 2);
	uint32_t p500 = model_find_process(m, 0, 500), p600 = model_find_process(m, 0, 600);
	REQUIRE(p500 != MODEL_NO_PROCESS && p600 != MODEL_NO_PROCESS);
	/* distributedInfo.rank: the main process (the most ranges); host_name: every process */
	CHECK_EQ_I(m->processes[p500].rank, 3);
	CHECK_EQ_I(m->processes[p600].rank, -1);
	CHECK_STR(model_str(m, m->processes[p500].host), "gpu-node-7");
	CHECK_STR(model_str(m, m->processes[p600].host), "gpu-node-7");
	CHECK_STR(model_str(m, m->processes[p500].name), "python3");
	CHECK_EQ_U(m->processes[p600].name, 0);
	uint32_t ndev = 0;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind == MODEL_TRACK_DEVICE) {
			ndev++;
			CHECK_EQ_U(tr->process, p500); /* launched by the main process */
		} else {
			REQUIRE(tr->process < m->nprocesses);
			CHECK_EQ_U(m->processes[tr->process].pid, tr->pid);
		}
	}
	CHECK_EQ_U(ndev, 2);
	fuzz_model_check(m);

	/* a second file with the same pids: processes of its own */
	REQUIRE(load_json(m, kineto_ranked) == 0);
	CHECK_EQ_U(m->nprocesses, 4);
	CHECK_EQ_U(model_find_process(m, 1, 500), 2);
	for (uint32_t t = 0; t < m->ntracks; t++)
		if (m->tracks[t].file == 1)
			CHECK_EQ_U(m->processes[m->tracks[t].process].file, 1);
	model_free(m);

	/* no distributedInfo, no host: unknown */
	m = model_new();
	REQUIRE(load_json(m, "[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 9, \"tid\": 9, "
			     "\"ts\": 1, \"dur\": 1}]") == 0);
	REQUIRE(m->nprocesses == 1);
	CHECK_EQ_I(m->processes[0].rank, -1);
	CHECK_EQ_U(m->processes[0].host, 0);
	model_free(m);
}

TEST(device_and_stream_of_gpu_tracks)
{
	struct model *m = model_new();
	REQUIRE(m);
	REQUIRE(load_json(m, kineto_ranked) == 0);
	uint32_t found = 0;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		if (tr->kind != MODEL_TRACK_DEVICE) {
			CHECK_EQ_U(tr->device, 0);
			CHECK_EQ_U(tr->stream, 0);
			continue;
		}
		REQUIRE(tr->nranges == 1);
		const char *name = model_str(m, tr->ranges.name[0]);
		if (strcmp(name, "gemm") == 0) {
			CHECK_EQ_U(tr->device, 1);
			CHECK_EQ_U(tr->stream, 7);
			found |= 1;
		} else if (strcmp(name, "Memcpy HtoD") == 0) {
			CHECK_EQ_U(tr->device, 0);
			CHECK_EQ_U(tr->stream, 13);
			found |= 2;
		}
		/* the legacy fields, which the outputs print, hold the same */
		CHECK_EQ_U(tr->pid, tr->device);
		CHECK_EQ_U(tr->tid, tr->stream);
	}
	CHECK_EQ_U(found, 3);
	/* the builder */
	uint32_t p = model_process(m, 0, 500);
	uint32_t d = model_add_device_track(m, 2, 1ull << 40, p, 0);
	REQUIRE(d != MODEL_NO_TRACK);
	CHECK_EQ_U(m->tracks[d].kind, MODEL_TRACK_DEVICE);
	CHECK_EQ_U(m->tracks[d].device, 2);
	CHECK_EQ_U(m->tracks[d].stream, 1ull << 40);
	CHECK_EQ_U(m->tracks[d].process, p);
	model_free(m);
}

/* The correlation id the column must hold: the first "correlation" argument if an integer. */
static uint64_t corr_from_args(const struct model *m, uint32_t t, uint64_t i)
{
	uint32_t key = model_find_str(m, "correlation");
	uint64_t a = key ? model_range_arg(m, t, i, key) : MODEL_NONE;
	if (a == MODEL_NONE ||
	    (m->args.type[a] != MODEL_ARG_I64 && m->args.type[a] != MODEL_ARG_U64))
		return 0;
	return m->args.bits[a];
}

/* Every range's column equals its argument; returns how many ranges have an id. */
static uint64_t check_corr_column(const struct model *m)
{
	uint64_t with = 0, bad = 0;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		for (uint64_t i = 0; i < tr->nranges; i++) {
			uint64_t c = model_range_correlation(tr, i);
			with += c != 0;
			if (c != corr_from_args(m, t, i) && bad++ < 5)
				printf("#   track %u range %llu: column %llu, argument %llu\n", t,
				       (unsigned long long)i, (unsigned long long)c,
				       (unsigned long long)corr_from_args(m, t, i));
		}
	}
	CHECK_EQ_U(bad, 0);
	return with;
}

TEST(correlation_column_of_real_trace)
{
	static const char *const paths[] = {
		OPSCOPE_TEST_DATA_DIR
		"/../../shared/data/kineto/tb_plugin/samples/"
		"resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
		OPSCOPE_TEST_DATA_DIR "/fuzz-corpus/kineto/full.json",
	};
	struct model *m = NULL;
	const char *path = NULL;
	char err[320] = "";
	for (size_t k = 0; k < 2 && !path; k++) {
		model_free(m);
		m = model_new();
		REQUIRE(m);
		if (import_load_path(m, paths[k], err, sizeof(err)) == 0)
			path = paths[k];
	}
	REQUIRE(path);
	printf("#   %s\n", path);
	uint64_t with = check_corr_column(m);
	CHECK(with > 0);
	fuzz_model_check(m);
	/* the column does not depend on which arguments are kept */
	static const char *const keep[] = { "num_samples", NULL };
	struct model *k = model_new();
	REQUIRE(k);
	k->keep_arg_keys = keep;
	REQUIRE(import_load_path(k, path, err, sizeof(err)) == 0);
	REQUIRE(k->ntracks == m->ntracks);
	uint64_t diff = 0, with_k = 0;
	for (uint32_t t = 0; t < m->ntracks; t++) {
		REQUIRE(k->tracks[t].nranges == m->tracks[t].nranges);
		for (uint64_t i = 0; i < m->tracks[t].nranges; i++) {
			diff += model_range_correlation(&k->tracks[t], i) !=
				model_range_correlation(&m->tracks[t], i);
			with_k += model_range_correlation(&k->tracks[t], i) != 0;
		}
	}
	CHECK_EQ_U(diff, 0);
	CHECK_EQ_U(with_k, with);
	model_free(k);
	model_free(m);

	/* the small trace: the launch and the kernel share 77, the copy has 78 */
	m = model_new();
	REQUIRE(load_json(m, kineto_ranked) == 0);
	CHECK_EQ_U(check_corr_column(m), 3);
	model_free(m);
}

/* An .opscope trace whose runtime calls and device-like ranges carry "correlation" ARGs (as a
 * GPU collector will write them), in and out of the loader's block loop. */
static void corr_trace(struct tb *b)
{
	tb_init_v2(b, 300);
	tb_clock_identity(b);
	uint32_t s_launch = tb_str(b, "cudaLaunchKernel"), s_corr = tb_str(b, "correlation");
	uint32_t s_op = tb_str(b, "op"), s_other = tb_str(b, "other");
	tb_thread(b, 0, 300, 300, 0, 0);
	tb_events_begin(b, 0, 1000);
	uint64_t ts = 1000;
	for (uint32_t i = 0; i < 100; i++) {
		tb_ev_begin(b, ts, OPSCOPE_CAT_OPERATOR, s_op);
		for (uint32_t j = 0; j < 20; j++) /* plain BEGIN/END: the block loop's */
			tb_ev_begin(b, ts + 1 + j, OPSCOPE_CAT_OPERATOR, s_op),
				tb_ev_end(b, ts + 1 + j, 0);
		tb_ev_begin(b, ts + 30, OPSCOPE_CAT_CUDA_RUNTIME, s_launch);
		tb_ev_arg_i64(b, s_other, 5);
		if (i % 3 == 0)
			tb_ev_arg_u64(b, s_corr, 1000 + i);
		else if (i % 3 == 1)
			tb_ev_arg_i64(b, s_corr, 1000 + i);
		else
			tb_ev_arg_f64(b, s_corr, 1.5); /* not an integer: no id */
		tb_ev_end(b, ts + 40, 0);
		tb_ev_end(b, ts + 50, 0);
		ts += 100;
	}
	tb_events_end(b);
	tb_end(b, 0, 0, ts, 1);
}

TEST(correlation_column_of_opscope_trace)
{
	struct tb b;
	corr_trace(&b);
	for (int general = 0; general < 2; general++) {
		struct model *m = model_new();
		REQUIRE(m);
		m->general_only = general;
		REQUIRE(load_tb(m, &b, "corr.opscope") == 0);
		CHECK_EQ_U(check_corr_column(m), 67);
		REQUIRE(m->ntracks == 1);
		const struct model_track *tr = &m->tracks[0];
		REQUIRE(tr->ranges.correlation);
		uint64_t launches = 0;
		for (uint64_t i = 0; i < tr->nranges; i++) {
			if (tr->ranges.category[i] != OPSCOPE_CAT_CUDA_RUNTIME) {
				CHECK_EQ_U(model_range_correlation(tr, i), 0);
				continue;
			}
			uint64_t want = launches % 3 == 2 ? 0 : 1000 + launches;
			CHECK_EQ_U(model_range_correlation(tr, i), want);
			launches++;
		}
		CHECK_EQ_U(launches, 100);
		fuzz_model_check(m);
		model_free(m);
	}
	tb_free(&b);
	/* no key anywhere: no column made */
	small_trace(&b, 5, NULL, NULL);
	struct model *m = model_new();
	REQUIRE(load_tb(m, &b, "plain.opscope") == 0);
	CHECK(m->tracks[0].ranges.correlation == NULL);
	model_free(m);
	tb_free(&b);
}

TEST(sorting_keeps_correlation_aligned)
{
	struct model *m = model_new();
	REQUIRE(m);
	uint32_t t = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	/* out of order, nested, more than the radix sort's threshold; ids follow the start */
	uint64_t n = 0;
	for (int64_t k = 999; k >= 0; k--) {
		uint64_t r = model_add_range(m, t, k * 100, 50, 0, 0, 0);
		uint64_t c = model_add_range(m, t, k * 100 + 10, 20, 0, 0, 0);
		REQUIRE(r != MODEL_NONE && c != MODEL_NONE);
		if (k % 7) /* some without: 0 */
			REQUIRE(model_set_correlation(m, t, r, (uint64_t)k * 100 + 1));
		REQUIRE(model_set_correlation(m, t, c, (uint64_t)k * 100 + 11));
		n += 2;
	}
	CHECK_EQ_U(model_nest_track(m, t), 0);
	model_sort_track(m, t);
	const struct model_track *tr = &m->tracks[t];
	REQUIRE(tr->nranges == n);
	uint64_t bad = 0;
	for (uint64_t i = 0; i < n; i++) {
		int64_t s = tr->ranges.start_ns[i];
		uint64_t want = (s / 100) % 7 || s % 100 ? (uint64_t)s + 1 : 0;
		bad += i && s < tr->ranges.start_ns[i - 1];
		bad += model_range_correlation(tr, i) != want;
		bad += tr->ranges.depth[i] != (s % 100 ? 1u : 0u);
	}
	CHECK_EQ_U(bad, 0);
	/* ranges added after the column exists start with no id */
	uint64_t last = model_add_range(m, t, 200000, 1, 0, 0, 0);
	REQUIRE(last != MODEL_NONE);
	CHECK_EQ_U(model_range_correlation(&m->tracks[t], last), 0);
	/* 0 on a track without the column makes none */
	uint32_t t2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint64_t r2 = model_add_range(m, t2, 5, 1, 0, 0, 0);
	CHECK(model_set_correlation(m, t2, r2, 0));
	CHECK(m->tracks[t2].ranges.correlation == NULL);
	model_free(m);
}

TEST(frames_and_stacks_interned)
{
	struct model *m = model_new();
	REQUIRE(m);
	uint32_t s_main = model_intern(m, "main", 4), s_f = model_intern(m, "f", 1);
	uint32_t s_py = model_intern(m, "train.py", 8);
	uint32_t f_main = model_add_frame(m, s_main, 0, 0, 0, 0x401000, MODEL_FRAME_NATIVE);
	uint32_t f_f = model_add_frame(m, s_f, s_py, 12, 0, 0, MODEL_FRAME_PYTHON);
	REQUIRE(f_main != MODEL_NO_FRAME && f_f != MODEL_NO_FRAME);
	CHECK(f_main != f_f);
	CHECK_EQ_U(model_add_frame(m, s_main, 0, 0, 0, 0x401000, MODEL_FRAME_NATIVE), f_main);
	/* any field differing: another frame */
	CHECK(model_add_frame(m, s_f, s_py, 13, 0, 0, MODEL_FRAME_PYTHON) != f_f);
	CHECK(model_add_frame(m, s_main, 0, 0, 0, 0x401004, MODEL_FRAME_NATIVE) != f_main);
	CHECK_EQ_U(m->nframes, 4);
	uint32_t root = model_add_stack(m, MODEL_NO_STACK, f_main);
	uint32_t leaf = model_add_stack(m, root, f_f);
	REQUIRE(root != MODEL_NO_STACK && leaf != MODEL_NO_STACK);
	CHECK(root != leaf);
	CHECK_EQ_U(model_add_stack(m, MODEL_NO_STACK, f_main), root);
	CHECK_EQ_U(model_add_stack(m, root, f_f), leaf);
	CHECK(model_add_stack(m, MODEL_NO_STACK, f_f) != leaf); /* same frame, other caller */
	CHECK_EQ_U(m->stacks[leaf].parent, root);
	CHECK_EQ_U(m->stacks[leaf].frame, f_f);
	CHECK_EQ_U(m->nstacks, 3);
	/* no such parent or frame */
	CHECK_EQ_U(model_add_stack(m, 99, f_f), MODEL_NO_STACK);
	CHECK_EQ_U(model_add_stack(m, root, 99), MODEL_NO_STACK);
	CHECK(!m->oom);
	/* many: the index grows and keeps every entry (deep chains and wide fans) */
	uint32_t parent = MODEL_NO_STACK, first[2000];
	for (uint32_t d = 0; d < 2000; d++) {
		uint32_t f = model_add_frame(m, s_f, s_py, (int32_t)d, 0, 0, MODEL_FRAME_PYTHON);
		REQUIRE(f != MODEL_NO_FRAME);
		first[d] = parent = model_add_stack(m, parent, f);
		REQUIRE(parent != MODEL_NO_STACK);
		CHECK(model_add_stack(m, root, f) != MODEL_NO_STACK);
	}
	uint32_t nstacks = m->nstacks, nframes = m->nframes, bad = 0;
	parent = MODEL_NO_STACK;
	for (uint32_t d = 0; d < 2000; d++) {
		uint32_t f = model_add_frame(m, s_f, s_py, (int32_t)d, 0, 0, MODEL_FRAME_PYTHON);
		parent = model_add_stack(m, parent, f);
		bad += parent != first[d];
	}
	CHECK_EQ_U(bad, 0);
	CHECK_EQ_U(m->nstacks, nstacks);
	CHECK_EQ_U(m->nframes, nframes);
	for (uint32_t i = 0; i < m->nstacks; i++)
		bad += m->stacks[i].parent != MODEL_NO_STACK && m->stacks[i].parent >= i;
	CHECK_EQ_U(bad, 0);
	fuzz_model_check(m);
	model_free(m);
}

TEST(samples_sorted_with_track)
{
	struct model *m = model_new();
	REQUIRE(m);
	uint32_t t = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t stacks[10];
	for (uint32_t k = 0; k < 10; k++) {
		uint32_t f = model_add_frame(m, 0, 0, (int32_t)k, 0, 0, MODEL_FRAME_NATIVE);
		stacks[k] = model_add_stack(m, MODEL_NO_STACK, f);
		REQUIRE(stacks[k] != MODEL_NO_STACK);
	}
	/* out of time order: the stack and weight of a sample follow from its time */
	for (int64_t i = 0; i < 1000; i++) {
		int64_t ts = (i * 7919) % 1000 * 10;
		uint64_t s = model_add_sample(m, t, ts, stacks[(ts / 10) % 10], ts + 1);
		REQUIRE(s == (uint64_t)i);
	}
	model_add_range(m, t, 5000, 10, 0, 0, 0);
	model_sort_track(m, t);
	const struct model_track *tr = &m->tracks[t];
	REQUIRE(tr->nsamples == 1000);
	uint64_t bad = 0;
	for (uint64_t i = 0; i < tr->nsamples; i++) {
		int64_t ts = tr->samples.ts_ns[i];
		bad += ts != (int64_t)i * 10;
		bad += tr->samples.stack[i] != stacks[(ts / 10) % 10];
		bad += tr->samples.weight[i] != ts + 1;
	}
	CHECK_EQ_U(bad, 0);
	/* their times count in the track's span */
	model_finish_tracks(m, 0);
	CHECK_EQ_I(m->tracks[t].min_ns, 0);
	CHECK_EQ_I(m->tracks[t].max_ns, 9990);
	fuzz_model_check(m);
	model_free(m);
}

TEST_MAIN(processes_of_opscope_files, processes_of_kineto_trace, device_and_stream_of_gpu_tracks,
	  correlation_column_of_real_trace, correlation_column_of_opscope_trace,
	  sorting_keeps_correlation_aligned, frames_and_stacks_interned, samples_sorted_with_track)
