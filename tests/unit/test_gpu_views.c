/*
 * test_gpu_views.c: the GPU analyses behind the `gpu` and `gpumem` views (gpu_util.h,
 * gpu_mem.h) on small models built by hand (modelbuild.h), every expected number worked out
 * in the comments; then the two views' tables from the same models. tests/e2e/
 * test_gpu_views.sh checks real traces against an independent checker.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/analysis.h"
#include "analyze/gpu_mem.h"
#include "analyze/gpu_util.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"
#include "report/views.h"

/* Attach an argument to the last range (or instant) i of track t: args are appended, so an
 * event's arguments are consecutive from its first. */
static void arg_add(struct model *m, uint32_t t, uint64_t i, bool instant, const char *key,
		    uint8_t type, uint64_t bits)
{
	uint64_t a = model_add_arg(m, S(m, key), type, bits);
	uint64_t *first = instant ? m->tracks[t].instants.first_arg : m->tracks[t].ranges.first_arg;
	uint32_t *n = instant ? m->tracks[t].instants.nargs : m->tracks[t].ranges.nargs;
	if (n[i] == 0)
		first[i] = a;
	n[i]++;
}

static void arg_json(struct model *m, uint32_t t, uint64_t i, const char *key, const char *text)
{
	arg_add(m, t, i, false, key, MODEL_ARG_JSON, S(m, text));
}

static void arg_f64(struct model *m, uint32_t t, uint64_t i, const char *key, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	arg_add(m, t, i, false, key, MODEL_ARG_F64, bits);
}

TEST(bucket_length)
{
	/* the smallest power of 10 µs giving at most 100 buckets */
	CHECK_EQ_I(gpu_util_bucket_ns(0), 0);
	CHECK_EQ_I(gpu_util_bucket_ns(1), 1000);	   /* 1 bucket of 1 µs */
	CHECK_EQ_I(gpu_util_bucket_ns(100000), 1000);	   /* 100 µs: 100 of 1 µs */
	CHECK_EQ_I(gpu_util_bucket_ns(100001), 10000);	   /* 101 of 1 µs: too many */
	CHECK_EQ_I(gpu_util_bucket_ns(150000), 10000);	   /* 15 of 10 µs */
	CHECK_EQ_I(gpu_util_bucket_ns(13896000), 1000000); /* the plugin's test: 14 of 1 ms */
}

/*
 * Device 0 has 100 SMs (metadata gpu.0.sm_count); two steps [0,1000) and [1000,2000), no
 * runtime calls, so the steps are their host ranges.
 *   stream 1: K1 [100,300) grid 50x1x1 -> 0.5; memcpy [500,600); K3 [900,1200) grid 200 -> 1
 *   stream 2: K2 [200,400) grid 8x10x1 -> 0.8; K4 [1500,1600) "blocks per SM" 0.25 -> 0.25;
 *             K5 [1700,1800) no grid, no blocks per SM -> no value (counts as 0)
 * Step 1: kernels [100,400) + [900,1000) = 400; work + [500,600) = 500; SM: [100,200) 0.5
 *   = 50, [200,300) 0.5 + 0.8 capped at 1 = 100, [300,400) 0.8 = 80, [900,1000) 1 = 100:
 *   330; kernels starting in it: K1, K2, K3 = 3.
 * Step 2: kernels [1000,1200) + [1500,1600) + [1700,1800) = 400, work 400; SM: 200 + 25 =
 *   225; kernels K4, K5 = 2.
 * Window [0,2000): 800, 900, 555, 5. Buckets: 2000 ns -> 1 µs buckets, the two steps again.
 * Device 1 has a memset [0,50) only: no kernel, no SM value.
 */
static struct model *util_model(void)
{
	struct model *m = model_new();
	model_add_file(m, "a", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t s1 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	uint32_t s2 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 2, 0);
	uint32_t d1 = model_add_track(m, MODEL_TRACK_DEVICE, 1, 1, 0);
	model_set_meta(m, 1, S(m, "gpu.0.sm_count"), S(m, "100"));
	R(m, h, 0, 1000, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 1000, 2000, "ProfileStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	uint64_t k = R(m, s1, 100, 300, "K1", OPSCOPE_CAT_KERNEL, -1);
	arg_json(m, s1, k, "grid", "[50, 1, 1]");
	R(m, s1, 500, 600, "Memcpy HtoD", OPSCOPE_CAT_MEMCPY, -1);
	k = R(m, s1, 900, 1200, "K3", OPSCOPE_CAT_KERNEL, -1);
	arg_json(m, s1, k, "grid", "[200,1,1]");
	k = R(m, s2, 200, 400, "K2", OPSCOPE_CAT_KERNEL, -1);
	arg_json(m, s2, k, "grid", "[8, 10, 1]");
	k = R(m, s2, 1500, 1600, "K4", OPSCOPE_CAT_KERNEL, -1);
	arg_f64(m, s2, k, "blocks per SM", 0.25);
	R(m, s2, 1700, 1800, "K5", OPSCOPE_CAT_KERNEL, -1);
	R(m, d1, 0, 50, "Memset (Device)", OPSCOPE_CAT_MEMSET, -1);
	nest(m);
	return m;
}

static void check_span(const struct gpu_util_span *sp, int64_t s, int64_t e, int64_t kernel,
		       int64_t work, double sm, uint64_t kernels)
{
	CHECK_EQ_I(sp->s, s);
	CHECK_EQ_I(sp->e, e);
	CHECK_EQ_I(sp->kernel_ns, kernel);
	CHECK_EQ_I(sp->work_ns, work);
	CHECK_NEAR(sp->sm_eff_ns, sm, 1e-9);
	CHECK_EQ_U(sp->kernels, kernels);
}

TEST(utilization_per_step_and_window)
{
	struct model *m = util_model();
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct gpu_util u;
	REQUIRE(gpu_util_analyze(&a, &u) == 0);
	REQUIRE(u.ndev == 2);
	const struct gpu_util_device *g = &u.dev[0];
	CHECK_EQ_U(g->device, 0);
	CHECK_EQ_U(g->sm_count, 100);
	CHECK(g->sm_known);
	CHECK_EQ_U(g->kernels, 5);
	CHECK_EQ_U(g->kernels_sm, 4);
	REQUIRE(g->nsteps == 2);
	CHECK_STR(model_str(m, g->steps[0].name), "ProfileStep#1");
	check_span(&g->steps[0], 0, 1000, 400, 500, 330, 3);
	check_span(&g->steps[1], 1000, 2000, 400, 400, 225, 2);
	check_span(&g->window, 0, 2000, 800, 900, 555, 5);
	CHECK_EQ_I(g->bucket_ns, 1000);
	REQUIRE(g->nbuckets == 2);
	check_span(&g->buckets[0], 0, 1000, 400, 500, 330, 3);
	check_span(&g->buckets[1], 1000, 2000, 400, 400, 225, 2);
	const struct gpu_util_device *g1 = &u.dev[1];
	CHECK_EQ_U(g1->device, 1);
	CHECK(!g1->sm_known);
	CHECK_EQ_U(g1->sm_count, 0);
	check_span(&g1->window, 0, 2000, 0, 50, 0, 0);
	gpu_util_free(&u);
	analysis_free(&a);
	model_free(m);
}

/*
 * Steps stretched to the GPU work they launched (the Step table's rule): ProfileStep#1
 * [0,100) launches K [50,300) through a runtime call [10,20), ProfileStep#2 [150,250)
 * launches K2 [300,320) through [160,170). Step 1 ends at K's end, 300; step 2 starts
 * there (its host start 150 is earlier) and ends at 320. Window [0,320): kernels 250 + 20
 * = 270. Buckets: 320 ns -> one of 1 µs, [0,320).
 */
TEST(utilization_steps_stretched)
{
	struct model *m = model_new();
	model_add_file(m, "a", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t s = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	R(m, h, 0, 100, "ProfilerStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 10, 20, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 150, 250, "ProfilerStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 160, 170, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, s, 50, 300, "K", OPSCOPE_CAT_KERNEL, 1);
	R(m, s, 300, 320, "K2", OPSCOPE_CAT_KERNEL, 2);
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct gpu_util u;
	REQUIRE(gpu_util_analyze(&a, &u) == 0);
	REQUIRE(u.ndev == 1);
	const struct gpu_util_device *g = &u.dev[0];
	REQUIRE(g->nsteps == 2);
	check_span(&g->steps[0], 0, 300, 250, 250, 0, 1);
	check_span(&g->steps[1], 300, 320, 20, 20, 0, 1);
	check_span(&g->window, 0, 320, 270, 270, 0, 2);
	CHECK(!g->sm_known); /* no grid, no SM count */
	REQUIRE(g->nbuckets == 1);
	check_span(&g->buckets[0], 0, 320, 270, 270, 0, 2);
	gpu_util_free(&u);
	analysis_free(&a);
	model_free(m);
}

/* A "[memory]" instant at ts on track t; its arguments follow with arg_add(..., true, ...). */
static uint64_t mem(struct model *m, uint32_t t, int64_t ts)
{
	return model_add_instant(m, t, ts, S(m, "[memory]"), OPSCOPE_CAT_MEMORY);
}

static void iarg(struct model *m, uint32_t t, uint64_t i, const char *key, int64_t v)
{
	arg_add(m, t, i, true, key, MODEL_ARG_I64, (uint64_t)v);
}

/* PyTorch's records on a host thread, device 0 (Device Type 1):
 *   130 in aten::empty (around cudaMalloc): +1000 at 16, Total Allocated 5000
 *   300 in outer: +3000 at 32, total 8000;  400: -1000 at 16, total 7000
 *   500: a CPU record (Device Type 0), not counted;  600 in outer: +500 at 48, total 7500
 * -> allocations 3 (4500 bytes), frees 1 (1000), at start 5000 - 1000 = 4000, at end 7500,
 *    peak 8000 at 300; never freed: 3000 and 500 (2 allocations, 3500 bytes); largest:
 *    3000 (outer, never freed), 1000 (aten::empty, freed at 400: lifetime 270), 500 (outer).
 *    Series over [130, 600]: 471 ns -> one bucket of 1 µs, [130, 601): end 7500, max 8000.
 * Ours on device 1's track: +2048 at "0x7f00" (a string), "correlation" 7 of the cudaMalloc
 *    call [10,20) inside aten::zeros on another thread; no Total Allocated: the running
 *    sum from 0; never freed. */
TEST(memory_from_records)
{
	struct model *m = model_new();
	model_add_file(m, "a", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 1, 0, 0);
	R(m, h, 0, 1000, "outer", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 100, 200, "aten::empty", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 120, 150, "cudaMalloc", OPSCOPE_CAT_CUDA_RUNTIME, -1);
	R(m, h2, 0, 100, "aten::zeros", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h2, 10, 20, "cudaMalloc", OPSCOPE_CAT_CUDA_RUNTIME, 7);
	static const int64_t rec[][5] = {
		/* ts, device type, bytes, addr, total */
		{ 130, 1, 1000, 16, 5000 }, { 300, 1, 3000, 32, 8000 }, { 400, 1, -1000, 16, 7000 },
		{ 500, 0, 99, 64, 99 },	    { 600, 1, 500, 48, 7500 },
	};
	for (size_t k = 0; k < sizeof(rec) / sizeof(rec[0]); k++) {
		uint64_t i = mem(m, h, rec[k][0]);
		iarg(m, h, i, "Device Type", rec[k][1]);
		iarg(m, h, i, "Device Id", rec[k][1] ? 0 : -1);
		iarg(m, h, i, "Bytes", rec[k][2]);
		iarg(m, h, i, "Addr", rec[k][3]);
		iarg(m, h, i, "Total Allocated", rec[k][4]);
	}
	uint64_t i = mem(m, d, 10);
	iarg(m, d, i, "device", 1);
	iarg(m, d, i, "bytes", 2048);
	arg_add(m, d, i, true, "Addr", MODEL_ARG_STR, S(m, "0x7f00"));
	iarg(m, d, i, "correlation", 7);
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct gpu_mem g;
	REQUIRE(gpu_mem_analyze(&a, &g) == 0);
	REQUIRE(g.ndev == 2);
	const struct gpu_mem_device *x = &g.dev[0];
	CHECK_EQ_U(x->device, 0);
	CHECK(x->totals && x->addresses);
	CHECK_EQ_U(x->allocs, 3);
	CHECK_EQ_U(x->frees, 1);
	CHECK_EQ_I(x->alloc_bytes, 4500);
	CHECK_EQ_I(x->free_bytes, 1000);
	CHECK_EQ_I(x->start_bytes, 4000);
	CHECK_EQ_I(x->end_bytes, 7500);
	CHECK_EQ_I(x->peak_bytes, 8000);
	CHECK_EQ_I(x->peak_ns, 300);
	CHECK_EQ_U(x->never_freed, 2);
	CHECK_EQ_I(x->never_freed_bytes, 3500);
	REQUIRE(x->nlargest == 3);
	CHECK_EQ_I(x->largest[0].bytes, 3000);
	CHECK_STR(model_str(m, x->largest[0].launcher), "outer");
	CHECK_EQ_I(x->largest[0].freed_ns, INT64_MIN);
	CHECK_EQ_I(x->largest[1].bytes, 1000);
	CHECK_STR(model_str(m, x->largest[1].launcher), "aten::empty");
	CHECK_EQ_I(x->largest[1].freed_ns - x->largest[1].ts_ns, 270);
	CHECK_EQ_U(x->largest[1].address, 16);
	CHECK_EQ_I(x->largest[2].bytes, 500);
	REQUIRE(x->nleaks == 2);
	CHECK_EQ_I(x->leaks[0].bytes, 3000);
	CHECK_EQ_I(x->leaks[1].bytes, 500);
	CHECK_EQ_I(x->bucket_ns, 1000);
	REQUIRE(x->nbuckets == 1);
	CHECK_EQ_I(x->buckets[0].s, 130);
	CHECK_EQ_I(x->buckets[0].e, 601);
	CHECK_EQ_I(x->buckets[0].end_bytes, 7500);
	CHECK_EQ_I(x->buckets[0].max_bytes, 8000);
	const struct gpu_mem_device *y = &g.dev[1];
	CHECK_EQ_U(y->device, 1);
	CHECK(!y->totals && y->addresses);
	CHECK_EQ_U(y->allocs, 1);
	CHECK_EQ_I(y->peak_bytes, 2048);
	CHECK_EQ_U(y->never_freed, 1);
	REQUIRE(y->nlargest == 1);
	CHECK_EQ_U(y->largest[0].address, 0x7f00);
	CHECK_STR(model_str(m, y->largest[0].launcher), "aten::zeros");
	gpu_mem_free(&g);
	analysis_free(&a);
	model_free(m);
}

/* The two views render those numbers: the window row of device 0 and its hidden ns columns,
 * device 1 without SM efficiency; nothing for a model without a GPU. */
TEST(views_render_the_analyses)
{
	struct model *m = util_model();
	struct report_opts o = { 0 };
	struct report_ctx c;
	REQUIRE(report_ctx_init(&c, m, &o) == 0);
	REQUIRE(report_run_views(&c, report_view_listed, (void *)"gpu,gpumem") == 0);
	/* files (always), the utilization table and its series; no memory records */
	REQUIRE(c.ntables == 3);
	struct rtable *t = c.tables[1];
	CHECK_STR(t->title, "GPU Utilization");
	/* per device: the 2 steps, then the window */
	REQUIRE(t->nrows == 6);
	const struct rrow *w = &t->rows[2];
	CHECK(w->summary);
	CHECK_EQ_I(w->cells[3].i, 2000); /* duration */
	CHECK_NEAR(w->cells[4].ratio, 0.4, 1e-12);
	CHECK_NEAR(w->cells[5].ratio, 0.45, 1e-12);
	CHECK_NEAR(w->cells[6].ratio, 0.2775, 1e-12);
	CHECK_EQ_I(w->cells[7].i, 5);
	CHECK_EQ_I(w->cells[8].i, 800);
	CHECK_EQ_I(w->cells[9].i, 900);
	CHECK_EQ_I(w->cells[10].i, 555);
	CHECK(t->rows[5].summary);
	CHECK(t->rows[5].cells[6].empty);		     /* device 1: no kernel gives blocks */
	CHECK_NEAR(t->rows[5].cells[5].ratio, 0.025, 1e-12); /* its memset: 50 of 2000 ns */
	CHECK_STR(c.tables[2]->title, "GPU Utilization over time");
	CHECK_EQ_U(c.tables[2]->nrows, 4); /* 2 buckets of 1 µs per device */
	report_ctx_free(&c);
	model_free(m);
}

TEST_MAIN(bucket_length, utilization_per_step_and_window, utilization_steps_stretched,
	  memory_from_records, views_render_the_analyses)
