/*
 * test_gputime.c: the analyses behind the `gputime`, `launch` and `queue` views (gpu_time.h)
 * on a model built by hand (modelbuild.h), every expected number worked out in the
 * comments; then the three views' tables from it. tests/e2e/test_gputime.sh checks real
 * traces against an independent checker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/analysis.h"
#include "analyze/gpu_time.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"
#include "report/views.h"

#define US 1000 /* the model's times are in µs */

/*
 * One file, host thread (pid 1) and device 0 with streams 1 and 2; times in µs:
 *   host: ProfileStep#1 [0,1000); enumerate(DataLoader) [0,100) (Dataloader);
 *         cudaLaunchKernel [110,120) corr 1, cudaLaunchKernel [130,140) corr 2,
 *         cudaMemcpyAsync [150,210) corr 3, cudaStreamSynchronize [460,520),
 *         cudaLaunchKernel [600,610) corr 4, cudaMemsetAsync [640,650) corr 5
 *   s1:   K1 [150,300) corr 1; Memcpy HtoD [350,450) corr 3; K2 [650,700) corr 4;
 *         Memset (Device) [800,805) corr 5
 *   s2:   ncclKernel_AllReduce [200,400) corr 2, category Kernel (lifted by its name)
 * The step: its calls are all inside [0,1000) and its work ends at 805: [0,1000).
 * Busy: compute K1 + K2 = 150 + 50 = 200; comm outside compute [300,400) = 100; memcpy
 * outside both [400,450) = 50; memset 5.
 * Queued ([call end, op start)): [120,150) K1, [140,200) nccl, [210,350) the copy, [610,650)
 * K2, [650,800) the memset.
 * Idle gaps, instant by instant (data, else sync, else other when queued, else host):
 *   [0,150): data [0,100) 100, host [100,120) 20, other [120,150) 30;
 *   [450,650): host [450,460) 10, sync [460,520) 60, host [520,610) 90, other [610,650) 40;
 *   [700,800): other 100; [805,1000): host 195.
 * data 100, sync 60, host 20 + 10 + 90 + 195 = 315, other 30 + 40 + 100 = 170;
 * 355 + 100 + 60 + 315 + 170 = 1000, the step.
 */
static struct model *gt_model(void)
{
	struct model *m = model_new();
	model_add_file(m, "a", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t s1 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	uint32_t s2 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 2, 0);
	R(m, h, 0, 1000 * US, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 100 * US, "enumerate(DataLoader)#x", OPSCOPE_CAT_DATALOADER, -1);
	R(m, h, 110 * US, 120 * US, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 130 * US, 140 * US, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, h, 150 * US, 210 * US, "cudaMemcpyAsync", OPSCOPE_CAT_CUDA_RUNTIME, 3);
	R(m, h, 460 * US, 520 * US, "cudaStreamSynchronize", OPSCOPE_CAT_CUDA_RUNTIME, -1);
	R(m, h, 600 * US, 610 * US, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 4);
	R(m, h, 640 * US, 650 * US, "cudaMemsetAsync", OPSCOPE_CAT_CUDA_RUNTIME, 5);
	R(m, s1, 150 * US, 300 * US, "K1", OPSCOPE_CAT_KERNEL, 1);
	R(m, s1, 350 * US, 450 * US, "Memcpy HtoD", OPSCOPE_CAT_MEMCPY, 3);
	R(m, s1, 650 * US, 700 * US, "K2", OPSCOPE_CAT_KERNEL, 4);
	R(m, s1, 800 * US, 805 * US, "Memset (Device)", OPSCOPE_CAT_MEMSET, 5);
	R(m, s2, 200 * US, 400 * US, "ncclKernel_AllReduce", OPSCOPE_CAT_KERNEL, 2);
	nest(m);
	return m;
}

static void check_parts(const struct gpu_time_span *sp, const int64_t *want)
{
	int64_t sum = 0;
	for (int p = 0; p < GPU_TIME_NPARTS; p++) {
		CHECK_EQ_I(sp->part[p], want[p] * US);
		sum += sp->part[p];
	}
	CHECK_EQ_I(sum, sp->e - sp->s); /* the invariant */
}

TEST(names)
{
	CHECK(gpu_time_is_comm_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
	CHECK(gpu_time_is_comm_name("void rcclGenericKernel<1>"));
	CHECK(gpu_time_is_comm_name("cross_device_reduce_1stage<bf16, 8>"));
	CHECK(!gpu_time_is_comm_name("volta_sgemm_128x64_nn"));
	CHECK(gpu_time_is_sync_call("cudaDeviceSynchronize"));
	CHECK(gpu_time_is_sync_call("cudaStreamSynchronize"));
	CHECK(gpu_time_is_sync_call("cuCtxSynchronize"));
	CHECK(gpu_time_is_sync_call("hipEventSynchronize"));
	CHECK(gpu_time_is_sync_call("cudaMemcpy"));	  /* blocking copy */
	CHECK(!gpu_time_is_sync_call("cudaMemcpyAsync")); /* does not wait */
	CHECK(!gpu_time_is_sync_call("cudaLaunchKernel"));
	CHECK(!gpu_time_is_sync_call("aten::copy_"));
}

TEST(breakdown)
{
	struct model *m = gt_model();
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct gpu_time t;
	REQUIRE(gpu_time_analyze(&a, &t) == 0);
	REQUIRE(t.ndev == 1);
	const struct gpu_time_device *g = &t.dev[0];
	CHECK_EQ_U(g->device, 0);
	REQUIRE(g->nsteps == 1);
	CHECK_STR(model_str(m, g->steps[0].name), "ProfileStep#1");
	CHECK_EQ_I(g->steps[0].s, 0);
	CHECK_EQ_I(g->steps[0].e, 1000 * US);
	/* compute, comm, memcpy, memset, data, sync, host, other (see gt_model) */
	static const int64_t want[GPU_TIME_NPARTS] = { 200, 100, 50, 5, 100, 60, 315, 170 };
	check_parts(&g->steps[0], want);
	check_parts(&g->window, want); /* one step: the window is the step */
	CHECK_EQ_U(g->steps[0].gaps[GPU_TIME_IDLE_DATA], 1);
	CHECK_EQ_U(g->steps[0].gaps[GPU_TIME_IDLE_SYNC], 1);
	CHECK_EQ_U(g->steps[0].gaps[GPU_TIME_IDLE_OTHER], 3); /* every gap but the last */
	CHECK_EQ_U(g->steps[0].gaps[GPU_TIME_IDLE_HOST], 3);  /* every gap but [700,800) */
	CHECK_EQ_U(g->steps[0].gaps[GPU_TIME_COMPUTE], 0);
	gpu_time_free(&t);
	analysis_free(&a);
	model_free(m);
}

/* Without the sync call and the Dataloader (and so no data wait), only the queue decides:
 * [0,150): host [0,120) 120, other [120,150) 30; [450,650): host [450,610) 160, other
 * [610,650) 40; [700,800) other 100; [805,1000) host 195. Host 475, other 170. */
TEST(breakdown_causes_fall_through)
{
	struct model *m = gt_model();
	/* rename the sync call and the Dataloader: a plain runtime call, a plain range */
	uint32_t h = 0;
	for (uint64_t i = 0; i < m->tracks[h].nranges; i++) {
		const char *n = model_str(m, m->tracks[h].ranges.name[i]);
		if (strcmp(n, "cudaStreamSynchronize") == 0)
			m->tracks[h].ranges.name[i] = S(m, "cudaEventQuery");
		if (strcmp(n, "enumerate(DataLoader)#x") == 0)
			m->tracks[h].ranges.category[i] = OPSCOPE_CAT_USER_DEFINED;
	}
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct gpu_time t;
	REQUIRE(gpu_time_analyze(&a, &t) == 0);
	REQUIRE(t.ndev == 1 && t.dev[0].nsteps == 1);
	static const int64_t want[GPU_TIME_NPARTS] = { 200, 100, 50, 5, 0, 0, 475, 170 };
	check_parts(&t.dev[0].steps[0], want);
	CHECK_EQ_U(t.dev[0].steps[0].gaps[GPU_TIME_IDLE_HOST], 3);
	gpu_time_free(&t);
	analysis_free(&a);
	model_free(m);
}

/*
 * Launch (µs): call, delay = op start - call end, op length:
 *   K1 10, 30, 150; nccl 10, 60, 200; Memcpy 60, 140, 100; K2 10, 40, 50; Memset 10, 150, 5.
 * All: 5 ops, calls 100 (max 60), delays 420 (max 150), ops 505; under 10 µs: the memset;
 * HTA's short (call <= 50, op < call): the memset; call > 50: the memcpy's; delay > 100:
 * memcpy and memset. Rows: one op each, so by name (strcmp: capitals first).
 */
TEST(launch_stats)
{
	struct model *m = gt_model();
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct gpu_launch l;
	REQUIRE(gpu_launch_analyze(&a, &l) == 0);
	REQUIRE(l.nrows == 5);
	static const char *const order[] = { "K1", "K2", "Memcpy HtoD", "Memset (Device)",
					     "ncclKernel_AllReduce" };
	for (int i = 0; i < 5; i++)
		CHECK_STR(model_str(m, l.rows[i].name), order[i]);
	const struct gpu_launch_row *cp = &l.rows[2];
	CHECK_EQ_U(cp->count, 1);
	CHECK_EQ_I(cp->cpu_sum_ns, 60 * US);
	CHECK_EQ_I(cp->delay_max_ns, 140 * US);
	CHECK_EQ_U(cp->cpu_outliers, 1);
	CHECK_EQ_U(cp->delay_outliers, 1);
	CHECK_EQ_U(cp->short_ops, 0);
	const struct gpu_launch_row *ms = &l.rows[3];
	CHECK_EQ_U(ms->short_ops, 1);
	CHECK_EQ_U(ms->shorter, 1);
	CHECK_EQ_U(ms->delay_outliers, 1);
	const struct gpu_launch_row *x = &l.total;
	CHECK_EQ_U(x->count, 5);
	CHECK_EQ_I(x->cpu_sum_ns, 100 * US);
	CHECK_EQ_I(x->cpu_max_ns, 60 * US);
	CHECK_EQ_I(x->delay_sum_ns, 420 * US);
	CHECK_EQ_I(x->delay_max_ns, 150 * US);
	CHECK_EQ_I(x->gpu_sum_ns, 505 * US);
	CHECK_EQ_U(x->short_ops, 1);
	CHECK_EQ_U(x->shorter, 1);
	CHECK_EQ_U(x->cpu_outliers, 1);
	CHECK_EQ_U(x->delay_outliers, 2);
	CHECK_EQ_U(l.unlaunched, 0);
	gpu_launch_free(&l);
	analysis_free(&a);
	model_free(m);
}

/*
 * Queue (µs), +1 at the call's start, -1 at the op's start:
 *   s1: K1 [110,150), Memcpy [150,350), K2 [600,650), Memset [640,800): 1 over [110,350),
 *       1 over [600,640), 2 over [640,650), 1 over [650,800): max 2, integral 240 + 40 +
 *       2 x 10 + 150 = 450 µs x op.
 *   s2: nccl [130,200): max 1, integral 70.
 * Window [0,1000) -> buckets of 10 µs, 100 of them; bucket 64 = [640,650): max 2, 20.
 */
TEST(queue_length)
{
	struct model *m = gt_model();
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct gpu_queue q;
	REQUIRE(gpu_queue_analyze(&a, &q) == 0);
	REQUIRE(q.nst == 2);
	const struct gpu_queue_stream *s1 = &q.st[0], *s2 = &q.st[1];
	CHECK_EQ_U(s1->stream, 1);
	CHECK_EQ_U(s1->ops, 4);
	CHECK_EQ_U(s1->window.max, 2);
	CHECK_EQ_I(s1->window.queued_ns, 450 * US);
	CHECK_EQ_I(s1->window.full_ns, 0);
	CHECK_EQ_U(s2->stream, 2);
	CHECK_EQ_U(s2->window.max, 1);
	CHECK_EQ_I(s2->window.queued_ns, 70 * US);
	CHECK_EQ_I(s1->bucket_ns, 10 * US);
	REQUIRE(s1->nbuckets == 100);
	CHECK_EQ_I(s1->buckets[64].s, 640 * US);
	CHECK_EQ_U(s1->buckets[64].max, 2);
	CHECK_EQ_I(s1->buckets[64].queued_ns, 20 * US);
	CHECK_EQ_U(s1->buckets[50].max, 0); /* [500,510): nothing queued */
	gpu_queue_free(&q);
	analysis_free(&a);
	model_free(m);
}

/* The views render those numbers; the queue's series is hidden from the text report unless
 * views were named. */
TEST(views_render_the_analyses)
{
	struct model *m = gt_model();
	struct report_opts o = { 0 };
	struct report_ctx c;
	REQUIRE(report_ctx_init(&c, m, &o) == 0);
	REQUIRE(report_run_views(&c, report_view_listed, (void *)"gputime,launch,queue") == 0);
	/* files (always), the breakdown, the launch table, the queue and its series */
	REQUIRE(c.ntables == 5);
	const struct rtable *t = c.tables[1];
	CHECK_STR(t->title, "GPU Time Breakdown");
	REQUIRE(t->nrows == 2); /* the step, the window */
	CHECK(t->rows[1].summary);
	CHECK_EQ_I(t->rows[0].cells[3].i, 1000 * US);	      /* duration */
	CHECK_NEAR(t->rows[0].cells[4].ratio, 0.2, 1e-12);    /* compute 200 of 1000 */
	CHECK_NEAR(t->rows[0].cells[10].ratio, 0.315, 1e-12); /* host-bound 315 */
	CHECK_EQ_I(t->rows[0].cells[12].i, 200 * US);	      /* compute_ns */
	t = c.tables[2];
	CHECK_STR(t->title, "Kernel Launch Statistics");
	REQUIRE(t->nrows == 6); /* 5 names and All */
	CHECK(t->rows[5].summary);
	CHECK_EQ_I(t->rows[5].cells[1].i, 5);	    /* count */
	CHECK_EQ_I(t->rows[5].cells[2].i, 20 * US); /* launch avg: 100 / 5 */
	CHECK_EQ_I(t->rows[5].cells[4].i, 84 * US); /* delay avg: 420 / 5 */
	t = c.tables[3];
	CHECK_STR(t->title, "Queue Length");
	REQUIRE(t->nrows == 2);
	CHECK_EQ_I(t->rows[0].cells[4].i, 2);		  /* max */
	CHECK_NEAR(t->rows[0].cells[5].num, 0.45, 1e-12); /* 450 µs x op / 1000 µs */
	CHECK(!t->text_hidden);
	CHECK_STR(c.tables[4]->title, "Queue Length over time");
	CHECK_EQ_U(c.tables[4]->nrows, 200); /* 100 buckets per stream */
	CHECK(c.tables[4]->text_hidden);     /* no view named: views_explicit is false */
	report_ctx_free(&c);
	o.views_explicit = true;
	REQUIRE(report_ctx_init(&c, m, &o) == 0);
	REQUIRE(report_run_views(&c, report_view_listed, (void *)"queue") == 0);
	REQUIRE(c.ntables == 3);
	CHECK(!c.tables[2]->text_hidden);
	report_ctx_free(&c);
	model_free(m);
}

TEST_MAIN(names, breakdown, breakdown_causes_fall_through, launch_stats, queue_length,
	  views_render_the_analyses)
