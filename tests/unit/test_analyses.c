/*
 * test_analyses.c: the analyses of src/analyze called directly, as an advisor, a diff or an
 * HTML page would call them, on small models built by hand (modelbuild.h), each number
 * worked out in the comments: the shared analysis (total time, step device time), device
 * usage (busy time is the union of a device's kernels over its streams), the overview's
 * per-type unions, the model phases, communication against computation, the aggregations by
 * name and the throughput of steps with num_samples. test_report.c and test_analyze.c check
 * the tables made from these.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/aggregate.h"
#include "analyze/analysis.h"
#include "analyze/device.h"
#include "analyze/distributed.h"
#include "analyze/overview.h"
#include "analyze/phases.h"
#include "analyze/throughput.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"

/* The top-level item of aggregation a named `name` (AGG_NONE if none). */
static uint32_t top_item(const struct model *m, const struct agg *a, const char *name)
{
	for (uint32_t i = a->n ? a->first_top : AGG_NONE; i != AGG_NONE; i = a->v[i].next)
		if (strcmp(model_str(m, a->v[i].name), name) == 0)
			return i;
	return AGG_NONE;
}

/* The child of item p named `name` (AGG_NONE if none). */
static uint32_t child_item(const struct model *m, const struct agg *a, uint32_t p, const char *name)
{
	for (uint32_t i = a->v[p].first_child; i != AGG_NONE; i = a->v[i].next)
		if (strcmp(model_str(m, a->v[i].name), name) == 0)
			return i;
	return AGG_NONE;
}

/* ---------------------------------------------------------------------------------------- */

/*
 * thread 1: ProfileStep#1 [0,100)  > cudaLaunchKernel [10,20) corr 1 -> kernel [20,60)
 *                                  > cudaMemcpyAsync  [30,40) corr 2 -> memcpy [60,70)
 * thread 2: ProfileStep#2 [50,150) (overlaps #1: the union counts [50,100) once)
 *           op [200,260)           (outside the steps)
 * total = |[0,150)| = 150; kernel time from inside the steps 40; all device time 50.
 */
TEST(analysis_totals)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	R(m, h, 0, 100, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 10, 20, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 30, 40, "cudaMemcpyAsync", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, h2, 50, 150, "ProfileStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h2, 200, 260, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, d, 20, 60, "k", OPSCOPE_CAT_KERNEL, 1);
	R(m, d, 60, 70, "Memcpy HtoD (Pageable -> Device)", OPSCOPE_CAT_MEMCPY, 2);
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	CHECK(a.m == m);
	CHECK(a.has_steps);
	CHECK_EQ_I(a.total_ns, 150);
	CHECK_EQ_I(a.step_kernel_ns, 40);
	CHECK_EQ_I(a.step_device_ns, 50);
	analysis_free(&a);

	/* without steps: the span of the host ranges, first start to last end (device ranges
	 * do not count) */
	struct model *n = model_new();
	model_add_file(n, "y", "test");
	uint32_t t = model_add_track(n, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t dd = model_add_track(n, MODEL_TRACK_DEVICE, 0, 7, 0);
	R(n, t, 100, 130, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(n, t, 300, 320, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(n, dd, 0, 1000, "k", OPSCOPE_CAT_KERNEL, -1);
	nest(n);
	REQUIRE(analysis_run(&a, n) == 0);
	CHECK(!a.has_steps);
	CHECK_EQ_I(a.total_ns, 320 - 100);
	CHECK_EQ_I(a.step_kernel_ns, 0);
	analysis_free(&a);
	CHECK(analysis_name_has("ncclAllReduce_sum", "allreduce"));
	CHECK(analysis_name_has("MEMCPY", "memcpy"));
	CHECK(!analysis_name_has("memcp", "memcpy"));
	model_free(m);
	model_free(n);
}

/*
 * One ProfileStep [0,1000). File 0: device 0, stream 1 kernels [0,100) and [300,400); stream
 * 2 kernel [50,150) (overlaps [0,100): the union is [0,150) + [300,400) = 250) and a memcpy
 * [500,900) (copies are not busy time); an NCCL kernel on stream 3 [140,160) (a kernel: the
 * union grows to [0,160) + [300,400) = 260). Device 1: kernel [0,10). A second file with
 * device 0 again: its own entry. CPU: process utilization of pids 1 and 2, system of pid 1.
 */
TEST(device_busy_is_the_union)
{
	struct model *m = model_new();
	model_add_file(m, "a", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t s1 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	uint32_t s2 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 2, 0);
	uint32_t s3 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 3, 0);
	uint32_t g1 = model_add_track(m, MODEL_TRACK_DEVICE, 1, 1, 0);
	model_add_file(m, "b", "test"); /* the tracks added from here on are its */
	uint32_t f2 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	R(m, h, 0, 1000, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, s1, 0, 100, "k", OPSCOPE_CAT_KERNEL, -1);
	R(m, s1, 300, 400, "k", OPSCOPE_CAT_KERNEL, -1);
	R(m, s2, 50, 150, "k", OPSCOPE_CAT_KERNEL, -1);
	R(m, s2, 500, 900, "Memcpy DtoH", OPSCOPE_CAT_MEMCPY, -1);
	R(m, s3, 140, 160, "ncclKernel", OPSCOPE_CAT_COMMUNICATION, -1);
	R(m, g1, 0, 10, "k", OPSCOPE_CAT_KERNEL, -1);
	R(m, f2, 0, 30, "k", OPSCOPE_CAT_KERNEL, -1);
	model_set_meta(m, 1, S(m, "cpu.process_utilization"), S(m, "1.5"));
	model_set_meta(m, 2, S(m, "cpu.process_utilization"), S(m, "0.25"));
	model_set_meta(m, 1, S(m, "cpu.system_utilization"), S(m, "0.75"));
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct device_usage d;
	REQUIRE(device_analyze(&a, &d) == 0);
	REQUIRE(d.ngpu == 3);
	CHECK_EQ_U(d.gpu[0].file, 0);
	CHECK_EQ_U(d.gpu[0].device, 0);
	CHECK_EQ_I(d.gpu[0].busy_ns, 260);
	CHECK_EQ_U(d.gpu[1].device, 1);
	CHECK_EQ_I(d.gpu[1].busy_ns, 10);
	CHECK_EQ_U(d.gpu[2].file, 1);
	CHECK_EQ_U(d.gpu[2].device, 0);
	CHECK_EQ_I(d.gpu[2].busy_ns, 30);
	/* process entries first, then system ones */
	REQUIRE(d.ncpu == 3);
	CHECK_EQ_U(d.ncpu_of[DEVICE_CPU_PROCESS], 2);
	CHECK_EQ_U(d.ncpu_of[DEVICE_CPU_SYSTEM], 1);
	CHECK(d.cpu[0].kind == DEVICE_CPU_PROCESS && d.cpu[1].kind == DEVICE_CPU_PROCESS);
	CHECK(d.cpu[2].kind == DEVICE_CPU_SYSTEM);
	double process_sum = d.cpu[0].utilization + d.cpu[1].utilization;
	CHECK_NEAR(process_sum, 1.75, 1e-12);
	CHECK_EQ_U(d.cpu[2].pid, 1);
	CHECK_NEAR(d.cpu[2].utilization, 0.75, 1e-12);
	device_free(&d);
	analysis_free(&a);
	model_free(m);
}

/*
 * thread 1: ProfileStep#1 [0,200) > Forward [0,80) > Forward [10,30) (nested: not counted)
 *                                  > Backward [80,150) > Dataloader [90,100) (inside a phase)
 *                                  > op [100,140) > op [110,120)
 *                                  > "c_allreduce_sum" Operator [150,170) (communication)
 * thread 2: op [130,180); Communication "nccl" [160,190); ProfileStep#2 [300,400)
 * device: kernel [0,50), kernel [25,75) (another stream), memcpy [75,100), memset [90,95),
 *         NCCL kernel [170,180), an annotation [0,400) (not GPU work)
 */
TEST(overview_unions)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t s1 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	uint32_t s2 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 2, 0);
	R(m, h, 0, 200, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 80, "fwd", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 10, 30, "fwd.inner", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 80, 150, "bwd", OPSCOPE_CAT_BACKWARD, -1);
	R(m, h, 90, 100, "reader", OPSCOPE_CAT_DATALOADER, -1);
	R(m, h, 100, 140, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 110, 120, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 150, 170, "c_allreduce_sum", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h2, 130, 180, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h2, 160, 190, "nccl", OPSCOPE_CAT_COMMUNICATION, -1);
	R(m, h2, 300, 400, "ProfileStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, s1, 0, 50, "k", OPSCOPE_CAT_KERNEL, -1);
	R(m, s1, 0, 400, "annotation", OPSCOPE_CAT_USER_DEFINED, -1);
	R(m, s1, 170, 180, "ncclKernel", OPSCOPE_CAT_COMMUNICATION, -1);
	R(m, s2, 25, 75, "k", OPSCOPE_CAT_KERNEL, -1);
	R(m, s2, 75, 100, "Memcpy DtoH", OPSCOPE_CAT_MEMCPY, -1);
	R(m, s2, 90, 95, "Memset", OPSCOPE_CAT_MEMSET, -1);
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	CHECK_EQ_I(a.total_ns, 300);
	struct overview ov;
	REQUIRE(overview_analyze(&a, &ov) == 0);
	const struct overview_type *o = &ov.host[OPSCOPE_CAT_PROFILE_STEP];
	CHECK_EQ_U(o->calls, 2);
	CHECK_EQ_I(o->time_ns, 300);
	/* operators: [100,140) ∪ [110,120) ∪ [150,170) ∪ [130,180) = [100,180) */
	o = &ov.host[OPSCOPE_CAT_OPERATOR];
	CHECK_EQ_U(o->ranges, 4);
	CHECK_EQ_U(o->calls, 4);
	CHECK_EQ_I(o->time_ns, 80);
	/* Forward: the outermost range only, summed */
	o = &ov.host[OPSCOPE_CAT_FORWARD];
	CHECK_EQ_U(o->ranges, 2);
	CHECK_EQ_U(o->calls, 1);
	CHECK_EQ_I(o->time_ns, 80);
	/* Dataloader inside Backward: a range of the type, but no outermost call */
	o = &ov.host[OPSCOPE_CAT_DATALOADER];
	CHECK_EQ_U(o->ranges, 1);
	CHECK_EQ_U(o->calls, 0);
	CHECK_EQ_I(o->time_ns, 0);
	CHECK_EQ_U(ov.host[OPSCOPE_CAT_OPTIMIZATION].ranges, 0);
	/* host communication: the Communication range and the operator named like allreduce:
	 * [150,170) ∪ [160,190) = 40, 2 distinct ranges */
	o = &ov.host[OPSCOPE_CAT_COMMUNICATION];
	CHECK_EQ_U(o->ranges, 2);
	CHECK_EQ_U(o->calls, 2);
	CHECK_EQ_I(o->time_ns, 40);
	/* GPU: kernels over both streams, NCCL included: [0,75) + [170,180) = 85 */
	o = &ov.gpu[OPSCOPE_CAT_KERNEL];
	CHECK_EQ_U(o->calls, 3);
	CHECK_EQ_I(o->time_ns, 85);
	CHECK_EQ_I(ov.gpu[OPSCOPE_CAT_MEMCPY].time_ns, 25);
	CHECK_EQ_I(ov.gpu[OPSCOPE_CAT_MEMSET].time_ns, 5);
	CHECK_EQ_I(ov.gpu[OPSCOPE_CAT_COMMUNICATION].time_ns, 10);
	CHECK_EQ_U(ov.gpu[OPSCOPE_CAT_USER_DEFINED].ranges, 0); /* the annotation */
	/* busy: [0,100) + [170,180) */
	CHECK_EQ_I(ov.gpu_busy_ns, 110);
	analysis_free(&a);
	model_free(m);
}

/*
 * ProfileStep#1 [0,100) > Dataloader [0,10); Forward [10,40) > cudaLaunchKernel corr 1 ->
 * kernel [20,50) (30); Backward [40,90) > Forward [50,60) (nested: not counted) >
 * cudaLaunchKernel corr 2 -> kernel [60,80) (20); ProfileStep#2 [100,150) > Forward
 * [100,130). total 150; Others CPU = 150 - (10 + 30 + 50 + 30) = 30; ProfileStep GPU 50,
 * phases' GPU 30 + 20: Others GPU 0.
 */
TEST(phases_outermost)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	R(m, h, 0, 100, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 10, "reader", OPSCOPE_CAT_DATALOADER, -1);
	R(m, h, 10, 40, "fwd", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 15, 18, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 40, 90, "bwd", OPSCOPE_CAT_BACKWARD, -1);
	R(m, h, 50, 60, "fwd.recompute", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 55, 58, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, h, 100, 150, "ProfileStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 100, 130, "fwd", OPSCOPE_CAT_FORWARD, -1);
	R(m, d, 20, 50, "k1", OPSCOPE_CAT_KERNEL, 1);
	R(m, d, 60, 80, "k2", OPSCOPE_CAT_KERNEL, 2);
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct phases ph;
	REQUIRE(phases_analyze(&a, &ph) == 0);
	const struct phase_time *p = &ph.phase[PHASE_PROFILE_STEP];
	CHECK(p->category == OPSCOPE_CAT_PROFILE_STEP);
	CHECK_EQ_U(p->calls, 2);
	CHECK_EQ_I(p->cpu_ns, 150);
	CHECK_EQ_I(p->cpu_max_ns, 100);
	CHECK_EQ_I(p->cpu_min_ns, 50);
	CHECK_EQ_I(p->gpu_ns, 50);
	CHECK_EQ_I(p->gpu_min_ns, 0);
	p = &ph.phase[PHASE_FORWARD];
	CHECK(p->category == OPSCOPE_CAT_FORWARD);
	CHECK_EQ_U(p->calls, 2); /* the recompute inside Backward is not counted */
	CHECK_EQ_I(p->cpu_ns, 30 + 30);
	CHECK_EQ_I(p->gpu_ns, 30);
	p = &ph.phase[PHASE_BACKWARD];
	CHECK_EQ_U(p->calls, 1);
	CHECK_EQ_I(p->cpu_ns, 50);
	CHECK_EQ_I(p->gpu_ns, 20); /* the kernel under the nested Forward is Backward's */
	CHECK_EQ_U(ph.phase[PHASE_DATALOADER].calls, 1);
	CHECK_EQ_U(ph.phase[PHASE_OPTIMIZATION].calls, 0);
	CHECK_EQ_I(ph.phase[PHASE_OPTIMIZATION].cpu_min_ns, INT64_MAX);
	CHECK_EQ_U(ph.nphases, 3);
	CHECK_EQ_I(ph.others_cpu_ns, 150 - (10 + 60 + 50));
	CHECK_EQ_I(ph.others_gpu_ns, 0);
	CHECK(phases_is_phase(OPSCOPE_CAT_DATALOADER) &&
	      !phases_is_phase(OPSCOPE_CAT_PROFILE_STEP));
	phases_free(&ph);
	analysis_free(&a);

	/* only ProfileStep ranges: no phase (Paddle prints no Model Summary) */
	struct model *n = model_new();
	model_add_file(n, "y", "test");
	uint32_t t = model_add_track(n, MODEL_TRACK_THREAD, 1, 1, 0);
	R(n, t, 0, 10, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	nest(n);
	REQUIRE(analysis_run(&a, n) == 0);
	REQUIRE(phases_analyze(&a, &ph) == 0);
	CHECK_EQ_U(ph.nphases, 0);
	CHECK_EQ_U(ph.phase[PHASE_PROFILE_STEP].calls, 1);
	phases_free(&ph);
	analysis_free(&a);
	model_free(m);
	model_free(n);
}

/*
 * thread 1: ProfileStep [0,300)
 *   Operator "broadcast" [0,40) > cudaLaunchKernel corr 1 -> "gemm" [30,70) (launched under
 *     communication: GPU communication)
 *   Operator "matmul" [100,150) > cudaLaunchKernel corr 2 -> "k" [120,200)
 * device: "nccl" (Communication, never launched in the window) [180,220); "late" kernel
 *   [250,260), not launched: computation by its category.
 * communication = [0,40) ∪ [30,70) ∪ [180,220) = 110; computation = [120,200) ∪ [250,260) = 90;
 * overlap = [180,200) = 20.
 */
TEST(distributed_overlap)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	uint32_t d2 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 2, 0);
	R(m, h, 0, 300, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 40, "Broadcast", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 10, 20, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 100, 150, "matmul", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 110, 115, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, d, 30, 70, "gemm", OPSCOPE_CAT_KERNEL, 1);
	R(m, d, 120, 200, "k", OPSCOPE_CAT_KERNEL, 2);
	R(m, d, 250, 260, "late", OPSCOPE_CAT_KERNEL, -1);
	R(m, d2, 180, 220, "nccl", OPSCOPE_CAT_COMMUNICATION, -1);
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct distributed dist;
	REQUIRE(distributed_analyze(&a, &dist) == 0);
	CHECK(dist.has_communication);
	CHECK_EQ_I(dist.communication_ns, 110);
	CHECK_EQ_I(dist.computation_ns, 90);
	CHECK_EQ_I(dist.overlap_ns, 20);
	/* the ranges themselves, not merged: host [0,40); GPU [30,70) and [180,220) */
	struct ivec host = { 0 }, gpu = { 0 };
	distributed_ranges(&a, &host, &gpu, NULL);
	CHECK_EQ_U(host.n, 1);
	CHECK_EQ_U(gpu.n, 2);
	CHECK_EQ_I(ivec_sum(&host), 40);
	ivec_free(&host);
	ivec_free(&gpu);
	analysis_free(&a);

	/* no communication at all */
	struct model *n = model_new();
	model_add_file(n, "y", "test");
	uint32_t t = model_add_track(n, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t dd = model_add_track(n, MODEL_TRACK_DEVICE, 0, 1, 0);
	R(n, t, 0, 10, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(n, dd, 0, 10, "k", OPSCOPE_CAT_KERNEL, -1);
	nest(n);
	REQUIRE(analysis_run(&a, n) == 0);
	REQUIRE(distributed_analyze(&a, &dist) == 0);
	CHECK(!dist.has_communication);
	CHECK_EQ_I(dist.communication_ns, 0);
	CHECK_EQ_I(dist.computation_ns, 10);
	CHECK_EQ_I(dist.overlap_ns, 0);
	analysis_free(&a);
	model_free(m);
	model_free(n);
}

/*
 * thread 1: "conv" [0,100) > "conv.infer_shape" [0,10) (inner phase)
 *                          > "conv.compute" [10,90) > cudaLaunchKernel corr 1 -> "k_inner" 30
 *                          > cudaLaunchKernel [90,95) corr 2 -> "k_own" 20
 *           "conv" [200,240); user-defined "MemcpyToGPU" [300,310) (memory);
 *           user-defined "my_block" [400,450)
 * thread 2: "conv" [0,60)
 */
TEST(aggregates_by_name)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	R(m, h, 0, 100, "conv", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 0, 10, "conv.infer_shape", OPSCOPE_CAT_OPERATOR_INNER, -1);
	R(m, h, 10, 90, "conv.compute", OPSCOPE_CAT_OPERATOR_INNER, -1);
	R(m, h, 20, 25, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 90, 95, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, h, 200, 240, "conv", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 300, 310, "MemcpyToGPU", OPSCOPE_CAT_PYTHON_USER_DEFINED, -1);
	R(m, h, 400, 450, "my_block", OPSCOPE_CAT_PYTHON_USER_DEFINED, -1);
	R(m, h2, 0, 60, "conv", OPSCOPE_CAT_OPERATOR, -1);
	R(m, d, 30, 60, "k_inner", OPSCOPE_CAT_KERNEL, 1);
	R(m, d, 100, 120, "k_own", OPSCOPE_CAT_KERNEL, 2);
	R(m, d, 130, 135, "Memset", OPSCOPE_CAT_MEMSET, -1);
	R(m, d, 140, 150, "Memcpy HtoD (Pageable -> Device)", OPSCOPE_CAT_MEMCPY, -1);
	R(m, d, 150, 170, "Memcpy HtoD (Pinned -> Device)", OPSCOPE_CAT_MEMCPY, -1);
	nest(m);
	struct analysis an;
	REQUIRE(analysis_run(&an, m) == 0);

	/* operators of every thread, with detail */
	struct agg a;
	REQUIRE(agg_host_ranges(&an, AGG_OPERATORS, MODEL_NO_TRACK, true, 0, &a) == 0);
	uint32_t conv = top_item(m, &a, "conv");
	REQUIRE(conv != AGG_NONE);
	CHECK_EQ_U(a.v[conv].calls, 3);
	CHECK_EQ_I(a.v[conv].cpu_ns, 100 + 40 + 60);
	CHECK_EQ_I(a.v[conv].cpu_max_ns, 100);
	CHECK_EQ_I(a.v[conv].cpu_min_ns, 40);
	CHECK_EQ_I(a.v[conv].gpu_ns, 30 + 20);
	CHECK_EQ_I(a.v[conv].gpu_min_ns, 0);
	uint32_t inner = child_item(m, &a, conv, "conv.compute");
	REQUIRE(inner != AGG_NONE);
	CHECK(a.v[inner].kind == AGG_KIND_INNER);
	CHECK_EQ_I(a.v[inner].cpu_ns, 80);
	CHECK_EQ_I(a.v[inner].gpu_ns, 30);
	uint32_t k = child_item(m, &a, inner, "k_inner");
	REQUIRE(k != AGG_NONE);
	CHECK(a.v[k].kind == AGG_KIND_KERNEL);
	CHECK_EQ_I(a.v[k].gpu_ns, 30);
	k = child_item(m, &a, conv, "k_own");
	REQUIRE(k != AGG_NONE);
	CHECK(a.v[k].kind == AGG_KIND_KERNEL);
	CHECK(child_item(m, &a, conv, "cudaLaunchKernel") == AGG_NONE); /* calls are no phase */
	CHECK(child_item(m, &a, conv, "conv.infer_shape") != AGG_NONE);
	agg_free(&a);

	/* one thread, no detail: thread 2's conv only, no children */
	REQUIRE(agg_host_ranges(&an, AGG_OPERATORS, h2, false, 0, &a) == 0);
	REQUIRE(a.n == 1);
	CHECK_EQ_U(a.v[0].calls, 1);
	CHECK_EQ_I(a.v[0].cpu_ns, 60);
	CHECK(a.v[0].first_child == AGG_NONE);
	agg_free(&a);

	/* user-defined ranges named like a copy are memory manipulation, not user-defined */
	REQUIRE(agg_host_ranges(&an, AGG_USER_DEFINED, MODEL_NO_TRACK, false, 0, &a) == 0);
	CHECK_EQ_U(a.n, 1);
	CHECK(top_item(m, &a, "my_block") != AGG_NONE);
	agg_free(&a);
	REQUIRE(agg_host_ranges(&an, AGG_MEMORY, MODEL_NO_TRACK, false, 0, &a) == 0);
	CHECK_EQ_U(a.n, 1);
	CHECK(top_item(m, &a, "MemcpyToGPU") != AGG_NONE);
	agg_free(&a);

	/* kernels by name: two kernels, 50 ns in all (copies and memsets are not kernels) */
	int64_t total = -1;
	REQUIRE(agg_kernels(m, &a, &total) == 0);
	CHECK_EQ_U(a.n, 2);
	CHECK_EQ_I(total, 50);
	agg_free(&a);

	/* nvprof: both HtoD copies share one item, named by kind; runtime calls on the API side */
	int64_t gpu = -1, api = -1;
	REQUIRE(agg_nvprof(m, &a, &gpu, &api) == 0);
	CHECK_EQ_I(gpu, 30 + 20 + 5 + 10 + 20);
	CHECK_EQ_I(api, 5 + 5);
	uint32_t ncopy = 0, napi = 0;
	for (uint32_t i = 0; i < a.n; i++) {
		const struct agg_item *it = &a.v[i];
		if (it->kind == AGG_NVPROF_API) {
			napi++;
			CHECK_EQ_U(it->calls, 2);
		} else if (it->kind == AGG_NVPROF_COPY) {
			ncopy++;
			const char *name = agg_nvprof_copy_name(it->name);
			if (strcmp(name, "[CUDA memcpy HtoD]") == 0) {
				CHECK_EQ_U(it->calls, 2);
				CHECK_EQ_I(it->gpu_ns, 30);
			} else {
				CHECK_STR(name, "[CUDA memset]");
				CHECK_EQ_I(it->gpu_ns, 5);
			}
		}
	}
	CHECK_EQ_U(napi, 1);
	CHECK_EQ_U(ncopy, 2);
	agg_free(&a);
	analysis_free(&an);
	model_free(m);
}

/*
 * Steps with num_samples: #1 [0,1000) 32 samples > Dataloader [0,100); #2 [1000,3000) 32
 * samples > Dataloader [1000,1500) > Dataloader [1100,1200) (nested: not direct, not
 * counted); #3 [3000,3500) without num_samples (left out).
 * batch cost 1 s and 2 s (in us here: 1e-6 s, 2e-6 s); reader 1e-7 s and 5e-7 s; ips
 * 32 / 1e-6 = 3.2e7 and 1.6e7, avg = 64 samples / 3e-6 s.
 */
TEST(throughput_of_steps)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t key = S(m, "num_samples");
	uint64_t s1 = R(m, h, 0, 1000, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 100, "reader", OPSCOPE_CAT_DATALOADER, -1);
	uint64_t s2 = R(m, h, 1000, 3000, "ProfileStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 1000, 1500, "reader", OPSCOPE_CAT_DATALOADER, -1);
	R(m, h, 1100, 1200, "reader.inner", OPSCOPE_CAT_DATALOADER, -1);
	R(m, h, 3000, 3500, "ProfileStep#3", OPSCOPE_CAT_PROFILE_STEP, -1);
	uint64_t steps[] = { s1, s2 };
	for (int i = 0; i < 2; i++) {
		m->tracks[h].ranges.first_arg[steps[i]] = model_add_arg(m, key, MODEL_ARG_I64, 32);
		m->tracks[h].ranges.nargs[steps[i]] = 1;
	}
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct throughput tp;
	REQUIRE(throughput_analyze(&a, &tp) == 0);
	CHECK_EQ_U(tp.steps, 2);
	CHECK_EQ_I(tp.samples, 64);
	CHECK_EQ_I(tp.batch_ns, 3000);
	CHECK_NEAR(tp.batch_cost_s.avg, 1.5e-6, 1e-18);
	CHECK_NEAR(tp.batch_cost_s.max, 2e-6, 1e-18);
	CHECK_NEAR(tp.batch_cost_s.min, 1e-6, 1e-18);
	CHECK_NEAR(tp.reader_cost_s.avg, 3e-7, 1e-18);
	CHECK_NEAR(tp.reader_cost_s.max, 5e-7, 1e-18);
	CHECK_NEAR(tp.reader_cost_s.min, 1e-7, 1e-18);
	CHECK_NEAR(tp.ips.max, 3.2e7, 1e-3);
	CHECK_NEAR(tp.ips.min, 1.6e7, 1e-3);
	CHECK_NEAR(tp.ips.avg, 64 / 3e-6, 1e-3); /* not the mean of the steps' (2.4e7) */
	analysis_free(&a);
	model_free(m);
}

/* A string argument key = value on range i of track t (its only argument). */
static void str_arg(struct model *m, uint32_t t, uint64_t i, const char *key, const char *value)
{
	uint64_t a = model_add_arg(m, S(m, key), MODEL_ARG_STR, S(m, value));
	m->tracks[t].ranges.first_arg[i] = a;
	m->tracks[t].ranges.nargs[i] = 1;
}

/*
 * Every kind of range a user records has its aggregation (issue 16.12):
 * thread 1: ProfileStep [0,1000)
 *             c_block (UserDefined, the C API) [0,100), py_block (PythonUserDefined) [100,200)
 *             train (PythonFunction) [200,600) > step [250,350), step [400,500)
 *             forward: Net (Forward) [600,900) > nn.Module: Seq [610,800)
 *                                                  > nn.Module: Conv [620,700)
 *                                                      > cudaLaunchKernel [630,640) -> k 50 ns
 *                                              > nn.Module: Conv [810,850)
 * thread 2: Nvtx a [0,10) [20,50) [60,61), Nvtx b in domain "dom" [100,140)
 * async:    Nvtx c (start/end) [0,100) [50,350)
 */
TEST(ranges_of_every_kind)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t as = model_add_track(m, MODEL_TRACK_ASYNC, 1, 0, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	R(m, h, 0, 1000, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 100, "c_block", OPSCOPE_CAT_USER_DEFINED, -1);
	R(m, h, 100, 200, "py_block", OPSCOPE_CAT_PYTHON_USER_DEFINED, -1);
	R(m, h, 200, 600, "train", OPSCOPE_CAT_PYTHON_FUNCTION, -1);
	R(m, h, 250, 350, "step", OPSCOPE_CAT_PYTHON_FUNCTION, -1);
	R(m, h, 400, 500, "step", OPSCOPE_CAT_PYTHON_FUNCTION, -1);
	R(m, h, 600, 900, "forward: Net", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 610, 800, "nn.Module: Seq", OPSCOPE_CAT_USER_DEFINED, -1);
	R(m, h, 620, 700, "nn.Module: Conv", OPSCOPE_CAT_USER_DEFINED, -1);
	R(m, h, 630, 640, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 810, 850, "nn.Module: Conv", OPSCOPE_CAT_PYTHON_FUNCTION, -1);
	R(m, d, 650, 700, "k", OPSCOPE_CAT_KERNEL, 1);
	R(m, h2, 0, 10, "a", OPSCOPE_CAT_NVTX, -1);
	R(m, h2, 20, 50, "a", OPSCOPE_CAT_NVTX, -1);
	R(m, h2, 60, 61, "a", OPSCOPE_CAT_NVTX, -1);
	str_arg(m, h2, R(m, h2, 100, 140, "b", OPSCOPE_CAT_NVTX, -1), "domain", "dom");
	R(m, as, 0, 100, "c", OPSCOPE_CAT_NVTX, -1);
	R(m, as, 50, 350, "c", OPSCOPE_CAT_NVTX, -1);
	nest(m);
	struct analysis an;
	REQUIRE(analysis_run(&an, m) == 0);

	/* user-defined: the C API's and Python's, not the module calls */
	struct agg a;
	REQUIRE(agg_host_ranges(&an, AGG_USER_DEFINED, MODEL_NO_TRACK, false, 0, &a) == 0);
	CHECK_EQ_U(a.n, 2);
	CHECK(top_item(m, &a, "c_block") != AGG_NONE);
	CHECK(top_item(m, &a, "py_block") != AGG_NONE);
	agg_free(&a);

	/* Python functions: inclusive and self time, not the module calls among them */
	REQUIRE(agg_host_ranges(&an, AGG_PYTHON_FUNCTIONS, MODEL_NO_TRACK, false, 0, &a) == 0);
	CHECK_EQ_U(a.n, 2);
	uint32_t it = top_item(m, &a, "train");
	REQUIRE(it != AGG_NONE);
	CHECK_EQ_I(a.v[it].cpu_ns, 400);
	CHECK_EQ_I(a.v[it].self_ns, 200);
	it = top_item(m, &a, "step");
	REQUIRE(it != AGG_NONE);
	CHECK_EQ_U(a.v[it].calls, 2);
	CHECK_EQ_I(a.v[it].cpu_ns, 200);
	CHECK_EQ_I(a.v[it].self_ns, 200);
	agg_free(&a);

	/* modules: a tree of paths; self = less the child modules */
	REQUIRE(agg_modules(&an, MODEL_NO_TRACK, &a) == 0);
	CHECK_EQ_U(a.n, 4);
	uint32_t net = top_item(m, &a, "forward: Net");
	REQUIRE(net != AGG_NONE);
	CHECK(a.v[net].next == AGG_NONE); /* the only top-level module */
	CHECK_EQ_I(a.v[net].cpu_ns, 300);
	CHECK_EQ_I(a.v[net].self_ns, 300 - 190 - 40);
	CHECK_EQ_I(a.v[net].gpu_ns, 50);
	CHECK_EQ_I(a.v[net].gpu_self_ns, 0);
	uint32_t seq = child_item(m, &a, net, "nn.Module: Seq");
	uint32_t conv2 = child_item(m, &a, net, "nn.Module: Conv");
	REQUIRE(seq != AGG_NONE && conv2 != AGG_NONE);
	CHECK_EQ_I(a.v[seq].self_ns, 190 - 80);
	CHECK_EQ_I(a.v[conv2].cpu_ns, 40);
	uint32_t conv1 = child_item(m, &a, seq, "nn.Module: Conv");
	REQUIRE(conv1 != AGG_NONE);
	CHECK(conv1 != conv2); /* one class, two places in the tree */
	CHECK_EQ_I(a.v[conv1].cpu_ns, 80);
	CHECK_EQ_I(a.v[conv1].gpu_self_ns, 50);
	CHECK(a.v[seq].first_child == conv1); /* Seq > Conv, and Net's children: Seq, Conv */
	CHECK(a.v[net].first_child == seq && a.v[seq].next == conv2);
	CHECK_EQ_U(agg_module_prefix_len("nn.Module: Seq"), 11);
	CHECK_EQ_U(agg_module_prefix_len("forward: Net"), 9);
	CHECK(!agg_is_module(OPSCOPE_CAT_FORWARD, "forward"));
	agg_free(&a);

	/* NVTX: per domain and name and style, with median and sample standard deviation */
	struct agg_nvtx nv;
	REQUIRE(agg_nvtx(m, &nv) == 0);
	CHECK_EQ_I(nv.total_ns, 10 + 30 + 1 + 40 + 100 + 300);
	uint32_t dflt = top_item(m, &nv.a, ""), dom = top_item(m, &nv.a, "dom");
	REQUIRE(dflt != AGG_NONE && dom != AGG_NONE);
	CHECK(nv.a.v[dflt].kind == AGG_NVTX_DOMAIN && nv.a.v[dom].kind == AGG_NVTX_DOMAIN);
	it = child_item(m, &nv.a, dflt, "a");
	REQUIRE(it != AGG_NONE);
	CHECK(nv.a.v[it].kind == AGG_NVTX_PUSHPOP);
	CHECK_EQ_U(nv.a.v[it].calls, 3);
	CHECK_EQ_I(nv.a.v[it].cpu_ns, 41);
	CHECK_EQ_I(nv.a.v[it].cpu_min_ns, 1);
	CHECK_EQ_I(nv.a.v[it].cpu_max_ns, 30);
	CHECK_EQ_I(nv.median_ns[it], 10);
	CHECK_EQ_I(nv.stddev_ns[it], 15); /* sqrt(((10-41/3)^2 + (30-41/3)^2 + (1-41/3)^2) / 2) */
	it = child_item(m, &nv.a, dflt, "c");
	REQUIRE(it != AGG_NONE);
	CHECK(nv.a.v[it].kind == AGG_NVTX_STARTEND);
	CHECK_EQ_I(nv.median_ns[it], 200); /* (100 + 300) / 2 */
	CHECK_EQ_I(nv.stddev_ns[it], 141);
	it = child_item(m, &nv.a, dom, "b");
	REQUIRE(it != AGG_NONE);
	CHECK_EQ_I(nv.median_ns[it], 40);
	CHECK_EQ_I(nv.stddev_ns[it], 0); /* one range */
	CHECK(child_item(m, &nv.a, dflt, "b") == AGG_NONE);
	agg_nvtx_free(&nv);
	analysis_free(&an);
	model_free(m);
}

/* Operators by name and input shapes ("Input Dims"), as key_averages(group_by_input_shape). */
TEST(operators_by_input_shape)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	str_arg(m, h, R(m, h, 0, 10, "mm", OPSCOPE_CAT_OPERATOR, -1), "Input Dims", "[[2, 3]]");
	str_arg(m, h, R(m, h, 20, 50, "mm", OPSCOPE_CAT_OPERATOR, -1), "Input Dims", "[[4, 4]]");
	str_arg(m, h, R(m, h, 60, 80, "mm", OPSCOPE_CAT_OPERATOR, -1), "Input Dims", "[[2, 3]]");
	R(m, h, 90, 95, "mm", OPSCOPE_CAT_OPERATOR, -1); /* no shapes recorded */
	nest(m);
	struct analysis an;
	REQUIRE(analysis_run(&an, m) == 0);
	struct agg a;
	REQUIRE(agg_host_ranges(&an, AGG_OPERATORS, MODEL_NO_TRACK, false, 0, &a) == 0);
	CHECK_EQ_U(a.n, 1);
	agg_free(&a);
	REQUIRE(agg_host_ranges(&an, AGG_OPERATORS, MODEL_NO_TRACK, false,
				model_find_str(m, "Input Dims"), &a) == 0);
	REQUIRE(a.n == 3);
	CHECK(strcmp(model_str(m, a.v[0].group), "[[2, 3]]") == 0);
	CHECK_EQ_U(a.v[0].calls, 2);
	CHECK_EQ_I(a.v[0].cpu_ns, 30);
	CHECK(strcmp(model_str(m, a.v[1].group), "[[4, 4]]") == 0);
	CHECK_EQ_I(a.v[1].cpu_ns, 30);
	CHECK_EQ_U(a.v[2].group, 0);
	CHECK_EQ_I(a.v[2].cpu_ns, 5);
	agg_free(&a);
	analysis_free(&an);
	model_free(m);
}

TEST_MAIN(analysis_totals, device_busy_is_the_union, overview_unions, phases_outermost,
	  distributed_overlap, aggregates_by_name, throughput_of_steps, ranges_of_every_kind,
	  operators_by_input_shape)
