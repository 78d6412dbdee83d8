/*
 * test_merge.c: partial summaries (report/partial.h) on models built by hand: a partial
 * written and read back gives the kernel aggregation and the rank analysis of the model it
 * came from (values worked out in the comments), strings survive the escapes byte for byte,
 * and the reader refuses a newer version, a trace given twice and a cut partial in one line
 * naming the offset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/aggregate.h"
#include "analyze/analysis.h"
#include "analyze/gpu_mem.h"
#include "analyze/gpu_time.h"
#include "analyze/gpu_util.h"
#include "analyze/ranks.h"
#include "analyze/steps.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"
#include "report/partial.h"

/* The partial of m as text (malloc'd, NUL-terminated). */
static char *write_partial(const struct model *m, const char *input)
{
	struct analysis a;
	if (analysis_run(&a, m) != 0)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	const char *inputs[] = { input };
	int rc = out ? partial_write(out, &a, inputs, 1) : -1;
	if (out)
		fclose(out);
	analysis_free(&a);
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Read `text` as the partial named `name` into ps; the reader's return, its line in err. */
static int read_text(struct partial_set *ps, const char *text, const char *name, char *err,
		     size_t n)
{
	FILE *in = fmemopen((void *)text, strlen(text), "rb");
	if (!in)
		return -2;
	int rc = partial_read_stream(ps, in, name, err, n);
	fclose(in);
	return rc;
}

/* The item of a named `name`, or NULL. */
static const struct agg_item *item(const struct model *m, const struct agg *a, const char *name)
{
	for (uint32_t i = 0; i < a->n; i++)
		if (strcmp(model_str(m, a->v[i].name), name) == 0)
			return &a->v[i];
	return NULL;
}

/*
 * Two ranks as in test_ranks.c's ranks_straggler_compute: rank 0 computes 400 and arrives at
 * 500, rank 1 computes 600 and arrives at 700 on a clock 1000 late; both leave at 800.
 * Each in its own partial, merged: gemm 2 calls, total 400 + 600 = 1000, max 600, min 400;
 * the all-reduce 2 calls, 300 + 100 = 400, max 300, min 100; all kernels 1400 (nvprof's GPU
 * side too; its API side: cudaLaunchKernel 4 calls of 10 ns). The ranks:
 * offset of rank 1 = 800 - 1800 = -1000; rank 1 the straggler by 1000 - 800 = 200 (rank 0
 * waited 700 - 500 = 200 at the all-reduce), longer compute by 600 - 400 = 200.
 */
TEST(merge_two_partials)
{
	struct model *m0 = model_new(), *m1 = model_new();
	add_rank(m0, "r0.json", 0, 0, 400, 500);
	add_rank(m1, "r1.json", 1, 1000, 600, 700);
	nest(m0);
	nest(m1);
	char *p0 = write_partial(m0, "r0.json"), *p1 = write_partial(m1, "r1.json");
	REQUIRE(p0 && p1);
	CHECK(strncmp(p0, "opscope-partial\t11\ninput\t=r0.json\nfile\t=r0.json\t=test\t", 52) ==
	      0);
	struct partial_set ps;
	REQUIRE(partial_set_init(&ps) == 0);
	char err[256] = "";
	/* given in the other order: the files are ordered by path */
	CHECK_EQ_I(read_text(&ps, p1, "p1", err, sizeof(err)), 0);
	CHECK_EQ_I(read_text(&ps, p0, "p0", err, sizeof(err)), 0);
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	REQUIRE(ps.m->nfiles == 2);
	CHECK_STR(model_str(ps.m, ps.m->files[0].path), "r0.json");
	CHECK_STR(model_str(ps.m, ps.m->files[1].path), "r1.json");
	REQUIRE(ps.ninputs == 2);
	CHECK_STR(ps.inputs[0], "r0.json");
	const struct agg_item *g = item(ps.m, &ps.pre.kernels, "gemm");
	const struct agg_item *n = item(ps.m, &ps.pre.kernels, NCCL);
	REQUIRE(g && n);
	CHECK_EQ_U(g->calls, 2);
	CHECK_EQ_I(g->gpu_ns, 1000);
	CHECK_EQ_I(g->gpu_max_ns, 600);
	CHECK_EQ_I(g->gpu_min_ns, 400);
	CHECK_EQ_U(n->calls, 2);
	CHECK_EQ_I(n->gpu_ns, 400);
	CHECK_EQ_I(n->gpu_max_ns, 300);
	CHECK_EQ_I(n->gpu_min_ns, 100);
	CHECK_EQ_I(ps.pre.kernels_ns, 1400);
	/* gemm was seen first in r0.json, as agg_kernels of both files loaded would see it */
	CHECK(ps.pre.kernels.v[0].name == g->name);
	/* nvprof: the same GPU work (1400 ns), and 2 launches of 10 ns per rank: 4 calls, 40 */
	CHECK_EQ_I(ps.pre.nvprof_ns[0], 1400);
	CHECK_EQ_I(ps.pre.nvprof_ns[1], 40);
	const struct agg_item *l = item(ps.m, &ps.pre.nvprof, "cudaLaunchKernel");
	REQUIRE(l);
	CHECK(l->kind == AGG_NVPROF_API);
	CHECK_EQ_U(l->calls, 4);
	CHECK_EQ_I(l->gpu_ns, 40);
	struct ranks r;
	REQUIRE(ranks_combine(ps.m, ps.pre.ranks, ps.pre.nranks, &r) == 0);
	CHECK_EQ_U(r.nnotes, 0);
	REQUIRE(r.nranks == 2 && r.nsteps == 1 && r.ncolls == 1);
	CHECK_EQ_I(r.ranks[1].offset_ns, -1000);
	CHECK_EQ_I(r.colls[0].transfer_ns, 100);
	CHECK_EQ_U(r.steps[0].straggler, 1);
	CHECK_EQ_I(r.steps[0].margin_ns, 200);
	CHECK_EQ_I(r.steps[0].why, RANKS_WHY_COMPUTE);
	CHECK_EQ_I(r.steps[0].why_ns, 200);
	CHECK_EQ_I(r.steps[0].per[0].wait_ns, 200);
	ranks_free(&r);
	partial_set_free(&ps);
	free(p0);
	free(p1);
	model_free(m0);
	model_free(m1);
}

/* One partial's text read into ps (named `name`). */
static int read_model(struct partial_set *ps, const struct model *m, const char *name)
{
	char err[256] = "";
	char *p = write_partial(m, name);
	int rc = p ? read_text(ps, p, name, err, sizeof(err)) : -1;
	free(p);
	return rc;
}

/*
 * Operators from two files. a.json: "op" [0,100) holding the inner phase "inner" [10,30),
 * which holds a launch [12,14) of kernel "k" [50,60). b.json: "op" [0,200), nothing inside.
 * Merged: op 2 calls, CPU 100 + 200 = 300, max 200, min 100; GPU (kernel time launched from
 * inside) 10 + 0 = 10, max 10, min 0; self 80 + 200 = 280. Under it "inner": 1 call, CPU 20,
 * GPU 10; under that "k": 1 call, GPU 10. The op's own launches: none (the launch is the
 * inner phase's), so "inner" is its only child.
 */
TEST(merge_operators)
{
	struct model *a = model_new(), *b = model_new();
	model_add_file(a, "a.json", "test");
	uint32_t h = model_add_track(a, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t d = model_add_track(a, MODEL_TRACK_DEVICE, 0, 7, 0);
	R(a, h, 0, 100, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(a, h, 10, 30, "inner", OPSCOPE_CAT_OPERATOR_INNER, -1);
	R(a, h, 12, 14, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(a, d, 50, 60, "k", OPSCOPE_CAT_KERNEL, 1);
	model_add_file(b, "b.json", "test");
	h = model_add_track(b, MODEL_TRACK_THREAD, 1, 1, 0);
	R(b, h, 0, 200, "op", OPSCOPE_CAT_OPERATOR, -1);
	nest(a);
	nest(b);
	struct partial_set ps;
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(read_model(&ps, b, "pb"), 0);
	CHECK_EQ_I(read_model(&ps, a, "pa"), 0);
	char err[256] = "";
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	const struct agg *o = &ps.pre.ops;
	REQUIRE(o->n == 3);
	const struct agg_item *op = &o->v[0], *in = &o->v[1], *k = &o->v[2];
	CHECK_STR(model_str(ps.m, op->name), "op");
	CHECK_EQ_U(op->calls, 2);
	CHECK_EQ_I(op->cpu_ns, 300);
	CHECK_EQ_I(op->cpu_max_ns, 200);
	CHECK_EQ_I(op->cpu_min_ns, 100);
	CHECK_EQ_I(op->gpu_ns, 10);
	CHECK_EQ_I(op->gpu_max_ns, 10);
	CHECK_EQ_I(op->gpu_min_ns, 0);
	CHECK_EQ_I(op->self_ns, 280);
	CHECK_STR(model_str(ps.m, in->name), "inner");
	CHECK(in->parent == 0 && in->kind == AGG_KIND_INNER && op->first_child == 1);
	CHECK_EQ_U(in->calls, 1);
	CHECK_EQ_I(in->cpu_ns, 20);
	CHECK_EQ_I(in->gpu_ns, 10);
	CHECK_STR(model_str(ps.m, k->name), "k");
	CHECK(k->parent == 1 && k->kind == AGG_KIND_KERNEL);
	CHECK_EQ_I(k->gpu_ns, 10);
	CHECK_EQ_I(ps.ops_cpu, 300);
	partial_set_free(&ps);
	model_free(a);
	model_free(b);
}

/* A path and a kernel name with a tab, a newline, a backslash and a CR come back the same. */
TEST(merge_escapes)
{
	const char *path = "a\tb\\c\nd\r";
	struct model *m = model_new();
	model_add_file(m, path, "test");
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	R(m, d, 0, 10, "k\t\\1", OPSCOPE_CAT_KERNEL, -1);
	nest(m);
	char *p = write_partial(m, path);
	REQUIRE(p);
	struct partial_set ps;
	REQUIRE(partial_set_init(&ps) == 0);
	char err[256] = "";
	CHECK_EQ_I(read_text(&ps, p, "p", err, sizeof(err)), 0);
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	REQUIRE(ps.m->nfiles == 1 && ps.pre.kernels.n == 1);
	CHECK_STR(model_str(ps.m, ps.m->files[0].path), path);
	CHECK_STR(model_str(ps.m, ps.pre.kernels.v[0].name), "k\t\\1");
	CHECK_EQ_I(ps.pre.kernels.v[0].gpu_ns, 10);
	CHECK_EQ_I(ps.pre.ranks[0].rank, -1);
	partial_set_free(&ps);
	free(p);
	model_free(m);
}

/* Refusals: one line, the partial's name and the record's byte offset. */
TEST(merge_refusals)
{
	struct partial_set ps;
	char err[256];
	/* a newer version: offset 0 */
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK(read_text(&ps, "opscope-partial\t12\nend\t0\n", "new", err, sizeof(err)) != 0);
	CHECK_STR(err, "new: offset 0: partial format version 12 is newer than this opscope reads "
		       "(11): merge with a newer opscope");
	partial_set_free(&ps);
	/* no end record: the offset is the end of the text (18 + 9 = 27 bytes) */
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK(read_text(&ps, "opscope-partial\t1\ninput\t=x\n", "cut", err, sizeof(err)) != 0);
	CHECK_STR(err, "cut: offset 27: truncated: no end record");
	partial_set_free(&ps);
	/* a record for a file before any file record, at offset 18 */
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK(read_text(&ps, "opscope-partial\t1\nk\t=a\t1\t1\t1\t1\nend\t0\n", "early", err,
			sizeof(err)) != 0);
	CHECK_STR(err, "early: offset 18: k record before any file record");
	partial_set_free(&ps);
	/* the same trace in two partials: the second named, with its file record's offset */
	const char *one = "opscope-partial\t1\nfile\t=t.json\t=x\t1\t0\t0\t1\t-\nend\t1\n";
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(read_text(&ps, one, "a", err, sizeof(err)), 0);
	CHECK_EQ_I(read_text(&ps, one, "b", err, sizeof(err)), 0);
	CHECK(partial_finish(&ps, err, sizeof(err)) != 0);
	CHECK_STR(err, "b: offset 18: trace t.json is also in a (a partial given twice?)");
	partial_set_free(&ps);
	/* calls that sum to 2^63 over two files: the tables show calls as int64, so refused
	 * (2^62 each is inside a partial's bounds) */
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(
		read_text(
			&ps,
			"opscope-partial\t9\n"
			"file\t=u\t=x\t1\t0\t0\t1\t-\nkernels\t0\nk\t=g\t4611686018427387904\t0\t0\t0\n"
			"file\t=v\t=x\t1\t0\t0\t1\t-\nkernels\t0\nk\t=g\t4611686018427387904\t0\t0\t0\n"
			"end\t2\n",
			"uv", err, sizeof(err)),
		0);
	CHECK(partial_finish(&ps, err, sizeof(err)) != 0);
	CHECK(strstr(err, "summed over the files, exceed 2^63") != NULL);
	partial_set_free(&ps);
}

/*
 * The step view from sv and sr records written by hand. a.json: 1 step dropped, and two rows:
 * S1 [100,1100) (1000 ns: Kernel 600, Memcpy 100, Runtime 50, CPU Exec 250; gap 100, compute
 * 700, tail 150, drain 50; 3 GPU events) and S2 [2000,2501) (501 ns: Kernel 301, CPU Exec 200;
 * gap 1, compute 400, tail 100, drain 0; 4 events). The average, in integers as steps_analyze
 * makes it: duration 1501 / 2 = 750, Kernel 901 / 2 = 450, Memcpy 50, Runtime 25, CPU Exec
 * 450 / 2 = 225, gap 101 / 2 = 50, compute 550, tail 125, drain 25, events 7 / 2 = 3.
 * With a file of version 1 (no sv record) beside it, the set carries no step view.
 */
TEST(merge_steps)
{
	static const char a[] =
		"opscope-partial\t2\nfile\t=a.json\t=x\t1\t0\t0\t1\t-\nsv\t1\n"
		"sr\t=S1\t100\t1100\t600\t100\t0\t0\t50\t0\t250\t0\t100\t700\t150\t50\t3\n"
		"sr\t=S2\t2000\t2501\t301\t0\t0\t0\t0\t0\t200\t0\t1\t400\t100\t0\t4\n"
		"end\t1\n";
	struct partial_set ps;
	char err[256] = "";
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(read_text(&ps, a, "a", err, sizeof(err)), 0);
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	REQUIRE(ps.pre.steps != NULL);
	const struct step_table *st = &ps.pre.steps[0];
	REQUIRE(st->nrows == 2);
	CHECK_EQ_U(st->dropped, 1);
	CHECK_STR(model_str(ps.m, st->rows[1].name), "S2");
	CHECK_EQ_I(st->rows[1].end_ns - st->rows[1].start_ns, 501);
	CHECK_EQ_I(st->avg.end_ns, 750);
	CHECK_EQ_I(st->avg.role_ns[STEP_KERNEL], 450);
	CHECK_EQ_I(st->avg.role_ns[STEP_MEMCPY], 50);
	CHECK_EQ_I(st->avg.role_ns[STEP_RUNTIME], 25);
	CHECK_EQ_I(st->avg.role_ns[STEP_CPU_EXEC], 225);
	CHECK_EQ_I(st->avg.role_ns[STEP_OTHER], 0);
	CHECK_EQ_I(st->avg.gap_ns, 50);
	CHECK_EQ_I(st->avg.compute_ns, 550);
	CHECK_EQ_I(st->avg.tail_ns, 125);
	CHECK_EQ_I(st->avg.drain_ns, 25);
	CHECK_EQ_U(st->avg.gpu_events, 3);
	partial_set_free(&ps);
	/* beside a version 1 partial (no step rows): no step view */
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(read_text(&ps, a, "a", err, sizeof(err)), 0);
	CHECK_EQ_I(read_text(&ps, "opscope-partial\t1\nfile\t=b.json\t=x\t1\t0\t0\t1\t-\nend\t1\n",
			     "b", err, sizeof(err)),
		   0);
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	CHECK(ps.pre.steps == NULL);
	partial_set_free(&ps);
	/* a part longer than its step (11 ns of Kernel in 10 ns), at the sr record's offset:
	 * 18 + 21 + 5 = 44 */
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK(read_text(&ps,
			"opscope-partial\t2\nfile\t=c\t=x\t1\t0\t0\t1\t-\nsv\t0\n"
			"sr\t-\t0\t10\t11\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\nend\t1\n",
			"c", err, sizeof(err)) != 0);
	CHECK_STR(err, "c: offset 44: field 5: 11 is out of range");
	partial_set_free(&ps);
}

/*
 * The GPU time breakdown from gv, gt and gs records written by hand: a.json (rank 0) has GPU 3
 * with window [0,100) (compute 60, comm 10, idle host 30 in 2 gaps) and one step S [0,100) the
 * same; b.json (rank 0 again: a second copy, left out as gpu_time_analyze leaves it) and
 * c.json (rank 1) each GPU 0, window [5,15) all compute. Merged: 2 devices, a.json's (file 0)
 * and c.json's (file 2). A span whose parts sum to 99 of its 100 ns is refused.
 */
TEST(merge_gputime)
{
	static const char a[] =
		"opscope-partial\t3\n"
		"file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
		"rank\t0\t-\t-1\n"
		"gv\n"
		"gt\t3\t0\t100\t60\t10\t0\t0\t0\t0\t30\t0\t0\t0\t0\t0\t0\t0\t2\t0\n"
		"gs\t=S\t0\t100\t60\t10\t0\t0\t0\t0\t30\t0\t0\t0\t0\t0\t0\t0\t2\t0\n"
		"end\t1\n";
	static const char bc[] = "opscope-partial\t3\n"
				 "file\t=b.json\t=x\t1\t0\t0\t1\t-\n"
				 "rank\t0\t-\t-1\n"
				 "gv\n"
				 "gt\t0\t5\t15\t10\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\n"
				 "file\t=c.json\t=x\t1\t0\t0\t1\t-\n"
				 "rank\t1\t-\t-1\n"
				 "gv\n"
				 "gt\t0\t5\t15\t10\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\n"
				 "end\t2\n";
	struct partial_set ps;
	char err[256] = "";
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(read_text(&ps, bc, "bc", err, sizeof(err)), 0);
	CHECK_EQ_I(read_text(&ps, a, "a", err, sizeof(err)), 0);
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	REQUIRE(ps.pre.gputime != NULL);
	REQUIRE(ps.pre.gputime->ndev == 2);
	const struct gpu_time_device *g = &ps.pre.gputime->dev[0];
	CHECK_EQ_U(g->file, 0);
	CHECK_EQ_U(g->device, 3);
	REQUIRE(g->nsteps == 1);
	CHECK_STR(model_str(ps.m, g->steps[0].name), "S");
	CHECK_EQ_I(g->window.part[GPU_TIME_COMPUTE], 60);
	CHECK_EQ_I(g->window.part[GPU_TIME_IDLE_HOST], 30);
	CHECK_EQ_U(g->window.gaps[GPU_TIME_IDLE_HOST], 2);
	CHECK_EQ_U(ps.pre.gputime->dev[1].file, 2);
	CHECK_EQ_I(ps.pre.gputime->dev[1].window.s, 5);
	CHECK(partial_carries(&ps, "gputime") && partial_carries(&ps, "kernel"));
	CHECK(!partial_carries(&ps, "step")); /* no sv records here */
	partial_set_free(&ps);
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK(read_text(&ps,
			"opscope-partial\t3\n"
			"file\t=d\t=x\t1\t0\t0\t1\t-\n"
			"rank\t-1\t-\t-1\n"
			"gv\n"
			"gt\t0\t0\t100\t60\t10\t0\t0\t0\t0\t29\t0\t0\t0\t0\t0\t0\t0\t0\t0\n"
			"end\t1\n",
			"d", err, sizeof(err)) != 0);
	/* the gt record's offset: 18 + 21 (file) + 13 (rank) + 3 (gv) = 55 */
	CHECK_STR(err, "d: offset 55: GPU time span: its parts do not sum to its length");
	partial_set_free(&ps);
}

/*
 * The GPU utilization from uv, ut, us and ub records written by hand: a.json's GPU 2 (108 SMs,
 * SM values known, 5 kernels, 3 with SM values, buckets of 10000 ns) with window [0,100):
 * kernel busy 40, device busy 50, SM integral 0x1.8p+4 = 24.0, 5 kernels; one step S the
 * same and one bucket [0,100). The hex float reads back exactly. A second copy of rank 0 is
 * not left out here (gpu_util_analyze keeps every file). A 101st bucket is refused.
 */
TEST(merge_gpu)
{
	static const char a[] = "opscope-partial\t4\n"
				"file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
				"uv\n"
				"ut\t2\t108\t1\t5\t3\t10000\t0\t100\t40\t50\t0x1.8p+4\t5\n"
				"us\t=S\t0\t100\t40\t50\t0x1.8p+4\t5\n"
				"ub\t0\t100\t40\t50\t0x1.8p+4\t5\n"
				"end\t1\n";
	struct partial_set ps;
	char err[256] = "";
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(read_text(&ps, a, "a", err, sizeof(err)), 0);
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	REQUIRE(ps.pre.gpu != NULL && ps.pre.gpu->ndev == 1);
	const struct gpu_util_device *g = &ps.pre.gpu->dev[0];
	CHECK_EQ_U(g->device, 2);
	CHECK_EQ_U(g->sm_count, 108);
	CHECK(g->sm_known);
	CHECK_EQ_U(g->kernels_sm, 3);
	CHECK_EQ_I(g->bucket_ns, 10000);
	CHECK_EQ_I(g->window.kernel_ns, 40);
	CHECK_EQ_I(g->window.work_ns, 50);
	CHECK(g->window.sm_eff_ns == 24.0);
	REQUIRE(g->nsteps == 1 && g->nbuckets == 1);
	CHECK_STR(model_str(ps.m, g->steps[0].name), "S");
	CHECK_EQ_U(g->buckets[0].kernels, 5);
	CHECK(partial_carries(&ps, "gpu") && !partial_carries(&ps, "gputime"));
	partial_set_free(&ps);
	/* 101 buckets: the 101st refused */
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	REQUIRE(out);
	fputs("opscope-partial\t4\nfile\t=b\t=x\t1\t0\t0\t1\t-\nuv\n"
	      "ut\t0\t0\t0\t0\t0\t1\t0\t101\t0\t0\t0\t0\n",
	      out);
	for (int k = 0; k < 101; k++)
		fprintf(out, "ub\t%d\t%d\t0\t0\t0\t0\n", k, k + 1);
	fputs("end\t1\n", out);
	fclose(out);
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK(read_text(&ps, text, "b", err, sizeof(err)) != 0);
	CHECK(strstr(err, ": more than 100 buckets for a device") != NULL);
	partial_set_free(&ps);
	free(text);
}

/*
 * Launch statistics of two files written by hand, summed by name. a.json: "k" 3 ops (launch
 * total 30, max 20; delay total 9, max 5; op total 300; 1 short, 0 shorter, 0 and 1
 * outliers), "m" 1 op (launch 7, delay 0, op 2, short). b.json: "k" 2 ops (launch 50, max 40;
 * delay 12, max 12; op 100; 2 short, 1 shorter, 1 and 0 outliers). Merged: k 5 ops, launch
 * 80 max 40, delay 21 max 12, op 400, short 3, shorter 1, outliers 1 and 1; m as it was.
 * Order: k (5) before m (1). All: 6 ops, launch 87 max 40, delay 21 max 12, op 402, short 4.
 */
TEST(merge_launch)
{
	static const char a[] = "opscope-partial\t5\n"
				"file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
				"lv\t2\n"
				"lr\t=m\t5\t1\t7\t7\t0\t0\t2\t1\t0\t0\t0\n"
				"lr\t=k\t4\t3\t30\t20\t9\t5\t300\t1\t0\t0\t1\n"
				"end\t1\n";
	static const char b[] = "opscope-partial\t5\n"
				"file\t=b.json\t=x\t1\t0\t0\t1\t-\n"
				"lv\t0\n"
				"lr\t=k\t4\t2\t50\t40\t12\t12\t100\t2\t1\t1\t0\n"
				"end\t1\n";
	struct partial_set ps;
	char err[256] = "";
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(read_text(&ps, b, "b", err, sizeof(err)), 0);
	CHECK_EQ_I(read_text(&ps, a, "a", err, sizeof(err)), 0);
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	const struct gpu_launch *l = ps.pre.launch;
	REQUIRE(l != NULL && l->nrows == 2);
	CHECK_STR(model_str(ps.m, l->rows[0].name), "k");
	CHECK_EQ_U(l->rows[0].count, 5);
	CHECK_EQ_I(l->rows[0].cpu_sum_ns, 80);
	CHECK_EQ_I(l->rows[0].cpu_max_ns, 40);
	CHECK_EQ_I(l->rows[0].delay_sum_ns, 21);
	CHECK_EQ_I(l->rows[0].delay_max_ns, 12);
	CHECK_EQ_I(l->rows[0].gpu_sum_ns, 400);
	CHECK_EQ_U(l->rows[0].short_ops, 3);
	CHECK_EQ_U(l->rows[0].shorter, 1);
	CHECK_EQ_U(l->rows[0].cpu_outliers, 1);
	CHECK_EQ_U(l->rows[0].delay_outliers, 1);
	CHECK_STR(model_str(ps.m, l->rows[1].name), "m");
	CHECK_EQ_U(l->total.count, 6);
	CHECK_EQ_I(l->total.cpu_sum_ns, 87);
	CHECK_EQ_I(l->total.cpu_max_ns, 40);
	CHECK_EQ_I(l->total.delay_sum_ns, 21);
	CHECK_EQ_I(l->total.gpu_sum_ns, 402);
	CHECK_EQ_U(l->total.short_ops, 4);
	CHECK_EQ_U(l->unlaunched, 2);
	partial_set_free(&ps);
	/* a max above its total: refused at the lr record (offset 18 + 21 + 5 = 44), field 6 */
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK(read_text(&ps,
			"opscope-partial\t5\nfile\t=c\t=x\t1\t0\t0\t1\t-\nlv\t0\n"
			"lr\t=k\t4\t1\t5\t6\t0\t0\t0\t0\t0\t0\t0\nend\t1\n",
			"c", err, sizeof(err)) != 0);
	CHECK_STR(err, "c: offset 44: field 6: 6 is out of range");
	partial_set_free(&ps);
}

/*
 * Queue lengths from qv, qt and qb records written by hand: a.json (rank 0), GPU 1 stream 7
 * named "s7", 4 ops, buckets of 50 ns, window [0,100) with at most 2 queued, 150 op-ns, 0 ns
 * full, and 2 buckets; b.json (rank 0 again) a stream too, left out as a second copy of
 * rank 0, as gpu_queue_analyze leaves it. Merged: one stream, file 0.
 */
TEST(merge_queue)
{
	static const char a[] = "opscope-partial\t6\n"
				"file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
				"rank\t0\t-\t-1\n"
				"qv\n"
				"qt\t1\t7\t=s7\t4\t50\t0\t100\t2\t150\t0\n"
				"qb\t0\t50\t2\t100\t0\n"
				"qb\t50\t100\t1\t50\t0\n"
				"file\t=b.json\t=x\t1\t0\t0\t1\t-\n"
				"rank\t0\t-\t-1\n"
				"qv\n"
				"qt\t0\t3\t-\t1\t0\t0\t10\t1\t10\t0\n"
				"end\t2\n";
	struct partial_set ps;
	char err[256] = "";
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(read_text(&ps, a, "a", err, sizeof(err)), 0);
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	REQUIRE(ps.pre.queue != NULL && ps.pre.queue->nst == 1);
	const struct gpu_queue_stream *q = &ps.pre.queue->st[0];
	CHECK_EQ_U(q->file, 0);
	CHECK_EQ_U(q->device, 1);
	CHECK_EQ_U(q->stream, 7);
	CHECK_STR(model_str(ps.m, q->name), "s7");
	CHECK_EQ_U(q->ops, 4);
	CHECK_EQ_U(q->window.max, 2);
	CHECK_EQ_I(q->window.queued_ns, 150);
	REQUIRE(q->nbuckets == 2);
	CHECK_EQ_I(q->buckets[1].s, 50);
	CHECK_EQ_I(q->buckets[1].queued_ns, 50);
	CHECK(partial_carries(&ps, "queue") && !partial_carries(&ps, "launch"));
	partial_set_free(&ps);
}

/*
 * GPU memory from mv, md, ml and mb records written by hand: a.json's GPU 0, 3 allocations
 * and 1 free (300 and 100 bytes), allocator totals, addresses, records from 10 to 90, 50
 * bytes at start, 250 at end, peak 350 at 40, 1 allocation of 100 bytes never freed; its
 * largest allocation 200 bytes at 20 freed at 60 at 0x1000 by "fwd", one never freed (100
 * bytes at 30, by none), one bucket [10,90). An 11th allocation in a list is refused.
 */
TEST(merge_gpumem)
{
	static const char a[] =
		"opscope-partial\t7\n"
		"file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
		"mv\n"
		"md\t0\t3\t1\t300\t100\t1\t1\t10\t90\t50\t250\t350\t40\t1\t100\t1000\n"
		"ml\t0\t20\t200\t60\t4096\t=fwd\n"
		"ml\t1\t30\t100\t-\t8192\t-\n"
		"mb\t10\t90\t250\t350\n"
		"end\t1\n";
	struct partial_set ps;
	char err[256] = "";
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK_EQ_I(read_text(&ps, a, "a", err, sizeof(err)), 0);
	REQUIRE(partial_finish(&ps, err, sizeof(err)) == 0);
	REQUIRE(ps.pre.gpumem != NULL && ps.pre.gpumem->ndev == 1);
	const struct gpu_mem_device *g = &ps.pre.gpumem->dev[0];
	CHECK_EQ_U(g->allocs, 3);
	CHECK_EQ_I(g->free_bytes, 100);
	CHECK(g->totals && g->addresses);
	CHECK_EQ_I(g->peak_bytes, 350);
	CHECK_EQ_I(g->peak_ns, 40);
	CHECK_EQ_U(g->never_freed, 1);
	REQUIRE(g->nlargest == 1 && g->nleaks == 1 && g->nbuckets == 1);
	CHECK_EQ_I(g->largest[0].freed_ns, 60);
	CHECK_EQ_U(g->largest[0].address, 4096);
	CHECK_STR(model_str(ps.m, g->largest[0].launcher), "fwd");
	CHECK(g->leaks[0].freed_ns == INT64_MIN);
	CHECK_EQ_U(g->leaks[0].launcher, 0);
	CHECK_EQ_I(g->buckets[0].max_bytes, 350);
	CHECK(partial_carries(&ps, "gpumem") && !partial_carries(&ps, "queue"));
	partial_set_free(&ps);
	/* 11 allocations in the largest list: the 11th refused */
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	REQUIRE(out);
	fputs("opscope-partial\t7\nfile\t=b\t=x\t1\t0\t0\t1\t-\nmv\n"
	      "md\t0\t11\t0\t11\t0\t0\t0\t0\t10\t0\t11\t11\t10\t0\t0\t0\n",
	      out);
	for (int k = 0; k < 11; k++)
		fprintf(out, "ml\t0\t%d\t1\t-\t0\t-\n", k);
	fputs("end\t1\n", out);
	fclose(out);
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK(read_text(&ps, text, "b", err, sizeof(err)) != 0);
	CHECK(strstr(err, ": more than 10 allocations in a list of a device") != NULL);
	partial_set_free(&ps);
	free(text);
}

/* A two-file set's totals and ranges read from `text`; 0, or the reader's error (printed). */
static int read_finish(struct partial_set *ps, const char *text)
{
	if (partial_set_init(ps) != 0)
		return -2;
	char err[256] = "";
	int rc = read_text(ps, text, "t", err, sizeof(err));
	if (!rc)
		rc = partial_finish(ps, err, sizeof(err));
	if (rc)
		printf("# %s\n", err);
	return rc;
}

/*
 * The totals and ranges by name (tv, ti, h). a.json: host ranges over [0,100), steps [0,50)
 * and [60,80), step kernel 5 and device 10 ns; user-defined "u" 2 calls, CPU 30 (max 20, min
 * 10). b.json: host ranges over [40,300), a step [40,70), kernel 7, device 20; "u" 1 call of
 * 50, and a Python function "f" of 5. Merged: total = the union of the steps, [0,80) = 80 ns
 * (not the 100 + 260 of the spans: steps exist); step kernel 12, device 30; "u" 3 calls, CPU
 * 80, max 50, min 10; "f" under Python functions. Without any step (spans [10,20) and
 * [5,15)): the total is from the first start to the last end, 20 - 5 = 15.
 */
TEST(merge_host)
{
	static const char ab[] = "opscope-partial\t8\n"
				 "file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
				 "tv\t1\t0\t100\t5\t10\n"
				 "ti\t0\t50\n"
				 "ti\t60\t80\n"
				 "h\t1\t=u\t2\t30\t20\t10\t0\t0\t0\t30\n"
				 "file\t=b.json\t=x\t1\t0\t0\t1\t-\n"
				 "tv\t1\t40\t300\t7\t20\n"
				 "ti\t40\t70\n"
				 "h\t1\t=u\t1\t50\t50\t50\t0\t0\t0\t50\n"
				 "h\t3\t=f\t1\t5\t5\t5\t0\t0\t0\t2\n"
				 "end\t2\n";
	struct partial_set ps;
	REQUIRE(read_finish(&ps, ab) == 0);
	REQUIRE(ps.pre.has_host);
	CHECK_EQ_I(ps.pre.total_ns, 80);
	CHECK_EQ_I(ps.pre.step_kernel_ns, 12);
	CHECK_EQ_I(ps.pre.step_device_ns, 30);
	const struct agg_item *u = item(ps.m, &ps.pre.host[AGG_USER_DEFINED], "u");
	REQUIRE(u);
	CHECK_EQ_U(u->calls, 3);
	CHECK_EQ_I(u->cpu_ns, 80);
	CHECK_EQ_I(u->cpu_max_ns, 50);
	CHECK_EQ_I(u->cpu_min_ns, 10);
	CHECK(item(ps.m, &ps.pre.host[AGG_PYTHON_FUNCTIONS], "f") != NULL);
	CHECK_EQ_U(ps.pre.host[AGG_MEMORY].n, 0);
	CHECK(partial_carries(&ps, "python") && partial_carries(&ps, "memcpy"));
	struct analysis an;
	memset(&an, 0, sizeof(an));
	partial_analysis(&ps, &an);
	CHECK_EQ_I(an.total_ns, 80);
	partial_set_free(&ps);
	static const char cd[] = "opscope-partial\t8\n"
				 "file\t=c.json\t=x\t1\t0\t0\t1\t-\n"
				 "tv\t1\t10\t20\t0\t0\n"
				 "file\t=d.json\t=x\t1\t0\t0\t1\t-\n"
				 "tv\t1\t5\t15\t0\t0\n"
				 "end\t2\n";
	REQUIRE(read_finish(&ps, cd) == 0);
	CHECK_EQ_I(ps.pre.total_ns, 15);
	partial_set_free(&ps);
}

/*
 * Module trees of two files. a.json: Net (1 call, 100 ns, self 40) > Linear (1, 60). b.json:
 * Net (1, 50, self 0) > Conv (1, 20) and Linear (1, 30). Merged: Net 2 calls, 150 ns, self
 * 40 + 0 = 40; under it Linear first (seen first, in a.json): 2 calls, 90; then Conv 1, 20.
 * A child whose parent index is not an earlier record is refused.
 */
TEST(merge_modules)
{
	static const char ab[] = "opscope-partial\t9\n"
				 "file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
				 "tv\t1\t0\t100\t0\t0\n"
				 "mm\n"
				 "mo\t-1\t=Net\t1\t100\t100\t100\t0\t0\t0\t40\t0\n"
				 "mo\t0\t=Linear\t1\t60\t60\t60\t0\t0\t0\t60\t0\n"
				 "file\t=b.json\t=x\t1\t0\t0\t1\t-\n"
				 "tv\t1\t0\t50\t0\t0\n"
				 "mm\n"
				 "mo\t-1\t=Net\t1\t50\t50\t50\t0\t0\t0\t0\t0\n"
				 "mo\t0\t=Conv\t1\t20\t20\t20\t0\t0\t0\t20\t0\n"
				 "mo\t0\t=Linear\t1\t30\t30\t30\t0\t0\t0\t30\t0\n"
				 "end\t2\n";
	struct partial_set ps;
	REQUIRE(read_finish(&ps, ab) == 0);
	REQUIRE(ps.pre.has_modules);
	const struct agg *a = &ps.pre.modules;
	REQUIRE(a->n == 3);
	const struct agg_item *net = &a->v[a->first_top];
	CHECK_STR(model_str(ps.m, net->name), "Net");
	CHECK_EQ_U(net->calls, 2);
	CHECK_EQ_I(net->cpu_ns, 150);
	CHECK_EQ_I(net->self_ns, 40);
	REQUIRE(net->first_child != AGG_NONE);
	const struct agg_item *lin = &a->v[net->first_child];
	CHECK_STR(model_str(ps.m, lin->name), "Linear");
	CHECK_EQ_U(lin->calls, 2);
	CHECK_EQ_I(lin->cpu_ns, 90);
	REQUIRE(lin->next != AGG_NONE);
	CHECK_STR(model_str(ps.m, a->v[lin->next].name), "Conv");
	CHECK(partial_carries(&ps, "module"));
	partial_set_free(&ps);
	char err[256] = "";
	REQUIRE(partial_set_init(&ps) == 0);
	CHECK(read_text(&ps,
			"opscope-partial\t9\nfile\t=c\t=x\t1\t0\t0\t1\t-\nmm\n"
			"mo\t0\t=Net\t1\t1\t1\t1\t0\t0\t0\t1\t0\nend\t1\n",
			"c", err, sizeof(err)) != 0);
	/* offset 18 + 21 + 3 = 42; field 2 (the parent) may be -1 only, no record before */
	CHECK_STR(err, "c: offset 42: field 2: 0 is out of range");
	partial_set_free(&ps);
}

/* The error of reading one partial: a file record (offset 18, 20 bytes and the events), then
 * `rec` at offset 38 + strlen(events); "read" when it is read. */
static void read_one(const char *events, const char *rec, char *err, size_t n)
{
	char text[512];
	snprintf(text, sizeof(text), "opscope-partial\t9\nfile\t=z\t=x\t%s\t0\t0\t1\t-\n%send\t1\n",
		 events, rec);
	struct partial_set ps;
	err[0] = '\0';
	if (partial_set_init(&ps) == 0 && read_text(&ps, text, "z", err, n) == 0)
		snprintf(err, n, "read");
	partial_set_free(&ps);
}

/*
 * Integers as the reader takes them (parse_digits, which replaced strtoll): -2^63 is an
 * integer (out of a rank's range), 2^63 is not, nor "+1", "-", "1x" or ""; a count takes
 * 2^64 - 1 but not 2^64. The rank record is at offset 18 + 21 = 39.
 */
TEST(merge_numbers)
{
	char err[256];
	read_one("1", "rank\t-9223372036854775808\t-\t-1\n", err, sizeof(err));
	CHECK_STR(err, "z: offset 39: field 2: -9223372036854775808 is out of range");
	read_one("1", "rank\t9223372036854775808\t-\t-1\n", err, sizeof(err));
	CHECK_STR(err, "z: offset 39: field 2: not an integer");
	read_one("1", "rank\t+1\t-\t-1\n", err, sizeof(err));
	CHECK_STR(err, "z: offset 39: field 2: not an integer");
	read_one("1", "rank\t-\t-\t-1\n", err, sizeof(err));
	CHECK_STR(err, "z: offset 39: field 2: not an integer");
	read_one("1", "rank\t1x\t-\t-1\n", err, sizeof(err));
	CHECK_STR(err, "z: offset 39: field 2: not an integer");
	read_one("1", "rank\t\t-\t-1\n", err, sizeof(err));
	CHECK_STR(err, "z: offset 39: field 2: not an integer");
	read_one("1", "rank\t-1\t-\t7\n", err, sizeof(err));
	CHECK_STR(err, "read");
	read_one("18446744073709551615", "", err, sizeof(err));
	CHECK_STR(err, "read");
	read_one("18446744073709551616", "", err, sizeof(err));
	CHECK_STR(err, "z: offset 18: field 4: not a count");
}

/*
 * The Perf Summary from pv and pt records: a.json's steps of 1 s (Dataloader 0.25 s, 100
 * samples) and 2 s (0.5 s, 100), b.json's of 1 s (0, 50). Merged as one run of 3 steps:
 * reader avg (0.25 + 0.5 + 0) / 3 = 0.25 s, max 0.5, min 0; batch avg 4 / 3 s; ips avg
 * 250 samples / 4 s = 62.5, max 100 (a.json's first), min 50.
 */
TEST(merge_perf)
{
	static const char ab[] = "opscope-partial\t10\n"
				 "file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
				 "pv\n"
				 "pt\t250000000\t1000000000\t100\n"
				 "pt\t500000000\t2000000000\t100\n"
				 "file\t=b.json\t=x\t1\t0\t0\t1\t-\n"
				 "pv\n"
				 "pt\t0\t1000000000\t50\n"
				 "end\t2\n";
	struct partial_set ps;
	REQUIRE(read_finish(&ps, ab) == 0);
	REQUIRE(ps.pre.has_perf);
	const struct throughput *tp = &ps.pre.perf;
	CHECK_EQ_U(tp->steps, 3);
	CHECK_EQ_I(tp->samples, 250);
	CHECK_EQ_I(tp->batch_ns, 4000000000);
	CHECK(tp->reader_cost_s.avg == 0.25 && tp->reader_cost_s.max == 0.5 &&
	      tp->reader_cost_s.min == 0);
	CHECK(tp->batch_cost_s.avg == 4.0 / 3.0 && tp->batch_cost_s.max == 2.0);
	CHECK(tp->ips.avg == 62.5 && tp->ips.max == 100 && tp->ips.min == 50);
	CHECK(partial_carries(&ps, "perf"));
	partial_set_free(&ps);
}

/*
 * The samples view from sa, saf, sae records. b.json comes first in the partial but a.json
 * first by path. a.json: "z" flat 20 cum 20, "b" (b.py) flat 10 cum 30, an unnamed frame at
 * 0x1000 flat 0 cum 30; pairs b -> z 20, 0x1000 -> b 30; 3 samples (1 truncated), weight 30.
 * b.json: "z" flat 10 cum 10, "a" flat 30 cum 30, 2 samples, weight 40 ("z" interned before
 * "a", in a line read first). Merged: a 30/30, z 30/30 (tied: by text, a first), b 10/30,
 * 0x1000 0/30; pairs 0x1000 -> b 30, then b -> z 20; weight 70, 5 samples, 1 truncated.
 */
TEST(merge_samples)
{
	static const char ab[] = "opscope-partial\t11\n"
				 "file\t=b.json\t=x\t1\t0\t0\t1\t-\n"
				 "sa\t2\t40\t0\t0\t2\n"
				 "saf\t=z\t-\t0\t10\t10\n"
				 "saf\t=a\t-\t0\t30\t30\n"
				 "file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
				 "sa\t3\t30\t1\t0\t3\n"
				 "saf\t=z\t-\t0\t20\t20\n"
				 "saf\t=b\t=b.py\t0\t10\t30\n"
				 "saf\t-\t-\t4096\t0\t30\n"
				 "sae\t1\t0\t20\n"
				 "sae\t2\t1\t30\n"
				 "end\t2\n";
	struct partial_set ps;
	REQUIRE(read_finish(&ps, ab) == 0);
	REQUIRE(partial_carries(&ps, "samples"));
	const struct samples_profile *p = ps.pre.samples;
	CHECK_EQ_I(p->total, 70);
	CHECK_EQ_U(p->samples, 5);
	CHECK_EQ_U(p->truncated, 1);
	REQUIRE(p->nfns == 4);
	static const char *const names[] = { "a", "z", "b", "" };
	static const int64_t flat[] = { 30, 30, 10, 0 }, cum[] = { 30, 30, 30, 30 };
	for (int i = 0; i < 4; i++) {
		CHECK(strcmp(model_str(ps.m, p->fns[i].name), names[i]) == 0);
		CHECK_EQ_I(p->fns[i].flat, flat[i]);
		CHECK_EQ_I(p->fns[i].cum, cum[i]);
	}
	CHECK_EQ_U(p->fns[3].address, 4096);
	REQUIRE(p->nedges == 2);
	CHECK(p->edges[0].caller == 3 && p->edges[0].callee == 2 && p->edges[0].weight == 30);
	CHECK(p->edges[1].caller == 2 && p->edges[1].callee == 1 && p->edges[1].weight == 20);
	partial_set_free(&ps);
}

/*
 * The flops view from fl* records (as tests/fuzz-corpus/partial/flops_rows): a.json has device
 * work, b.json none, so the basis is device time: total 1000 + 0 = 1000 ns; GEMM 3 + 1 calls,
 * 900 + 0 ns. The aten::mm row of both: 4 calls, CPU 4700, GPU 900 ns, 8e6 FLOPs, 1.3e6
 * bytes, its first call's attributes and device (a.json's: "GPU X", eligible). The roofline
 * of the merged row: FP32 on tensor cores (it used them: 450 ns) is TF32 at 2^46 FLOP/s,
 * 8e6 / 2^46 s = 113.687 ns against bytes 1.3e6 / 2^41 B/s = 591.172 ns: memory bound, at
 * 591.172 ns of its 900 ns; the category's roofline sum is that one row's.
 */
TEST(merge_flops)
{
	static const char ab[] =
		"opscope-partial\t11\n"
		"file\t=a.json\t=x\t1\t0\t0\t1\t-\n"
		"fl\t1\t1\t1000\t5000\t2\t0\t-\n"
		"flc\t1\t3\t900\t4000\t6000000\t1000000\n"
		"flc\t0\t2\t100\t1000\t0\t0\n"
		"flp\t=GPU X\t=datasheet\t90\t0x1p+40\t0x1p+43\t0x1p+46\t0x1p+47\t0x1p+47\t0x1p+48\t0x1p+48\t0x1p+41\n"
		"flr\t=aten::mm\t=[[8, 8], [8, 8]]\t=[\"float\", \"float\"]\t-\t2\t1\t2\t-\t3\t4000\t900\t900\t450\t3\t6000000\t1000000\t0\t=GPU X\n"
		"flg\t=aten::foo\t=no model for this operator\t2\t1000\t100\n"
		"file\t=b.json\t=x\t1\t0\t0\t1\t-\n"
		"fl\t1\t0\t0\t700\t0\t0\t=CPU Y\n"
		"flc\t1\t1\t0\t700\t2000000\t300000\n"
		"flr\t=aten::mm\t=[[8, 8], [8, 8]]\t=[\"float\", \"float\"]\t-\t2\t1\t2\t=K = 3 not a multiple of 8\t1\t700\t0\t0\t0\t0\t2000000\t300000\t-1\t-\n"
		"end\t2\n";
	struct partial_set ps;
	REQUIRE(read_finish(&ps, ab) == 0);
	REQUIRE(partial_carries(&ps, "flops"));
	const struct flops_result *f = ps.pre.flops;
	CHECK(f->device_time);
	CHECK_EQ_I(f->total_ns, 1000);
	CHECK_EQ_U(f->cat[1].calls, 4);
	CHECK_EQ_I(f->cat[1].time_ns, 900);
	REQUIRE(f->nrows == 1);
	const struct flops_row *r = &f->rows[0];
	CHECK_EQ_U(r->calls, 4);
	CHECK_EQ_I(r->cpu_ns, 4700);
	CHECK_EQ_I(r->gpu_ns, 900);
	CHECK_EQ_U(r->flops, 8000000);
	CHECK_EQ_U(r->bytes, 1300000);
	CHECK(r->tc_eligible && r->tc_reason == NULL);
	REQUIRE(r->peaks != NULL);
	CHECK(strcmp(r->peaks->name, "GPU X") == 0 && r->peaks->mem_bw_bytes == 0x1p+41);
	double roof = 1300000.0 / 0x1p+41 * 1e9;
	CHECK(f->cat[1].roofline_ns == roof);
	CHECK_EQ_I(f->cat[1].peak_time_ns, 900);
	REQUIRE(f->ngaps == 1);
	CHECK(strcmp(f->gaps[0].reason, "no model for this operator") == 0);
	partial_set_free(&ps);
}

/* ranks_kept_shares: ranks 1, none, 1, 0: the second 1 (share 2) is left out, 1 of them */
TEST(merge_kept_shares)
{
	struct ranks_file rf[4];
	memset(rf, 0, sizeof(rf));
	rf[0].rank = 1;
	rf[1].rank = -1;
	rf[2].rank = 1;
	rf[3].rank = 0;
	bool keep[4];
	CHECK_EQ_U(ranks_kept_shares(rf, 4, keep), 1);
	CHECK(keep[0] && keep[1] && !keep[2] && keep[3]);
}

TEST_MAIN(merge_two_partials, merge_operators, merge_escapes, merge_refusals, merge_steps,
	  merge_gputime, merge_gpu, merge_launch, merge_queue, merge_gpumem, merge_host,
	  merge_modules, merge_numbers, merge_perf, merge_samples, merge_flops, merge_kept_shares)
