/*
 * test_flops.c: the FLOPs analysis (analyze/flops.h) on models built by hand (modelbuild.h):
 * which calls count (the outermost modelled operator of a nest, nothing twice), which are
 * listed as having no model, forward and backward with the link through sequence numbers,
 * a forward convolution's output taken from its backward, device time and tensor-core time
 * from the kernels each call launched, the device's peaks from the trace's metadata, and CPU
 * time on a trace without device work. Every number is worked out in the comments; the
 * formulas themselves are test_perfmodel.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/analysis.h"
#include "analyze/flops.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"

/* Give range i of track t the arguments of an operator call as Kineto writes them: "Input
 * Dims" and "Input type" (JSON text) and, when seq >= 0, "Sequence number". */
static void op_args(struct model *m, uint32_t t, uint64_t i, const char *dims, const char *types,
		    int64_t seq)
{
	uint64_t a = model_add_arg(m, S(m, "Input Dims"), MODEL_ARG_JSON, S(m, dims));
	model_add_arg(m, S(m, "Input type"), MODEL_ARG_JSON, S(m, types));
	uint32_t n = 2;
	if (seq >= 0) {
		model_add_arg(m, S(m, "Sequence number"), MODEL_ARG_I64, (uint64_t)seq);
		n++;
	}
	m->tracks[t].ranges.first_arg[i] = a;
	m->tracks[t].ranges.nargs[i] = n;
}

/* The row named `name` going `backward` (NULL if none). */
static const struct flops_row *row_of(const struct model *m, const struct flops_result *r,
				      const char *name, bool backward)
{
	for (uint32_t i = 0; i < r->nrows; i++)
		if (strcmp(model_str(m, r->rows[i].name), name) == 0 &&
		    r->rows[i].backward == backward)
			return &r->rows[i];
	return NULL;
}

/* Ops are added parent first; the ranges' order on the track is by start. */
static uint64_t op(struct model *m, uint32_t t, int64_t s, int64_t e, const char *name)
{
	return R(m, t, s, e, name, OPSCOPE_CAT_OPERATOR, -1);
}

/*
 * One thread (pid 1) and one stream of device 0, a "Tesla V100-SXM2-16GB":
 *   aten::linear [0,100) x[4,8] w[16,8] b[16], seq 10: GEMM M=4 N=16 K=8 with bias:
 *       2*4*16*8 + 4*16 = 1088 FLOPs
 *     aten::addmm [10,90): inside a modelled call, not counted again
 *       cudaLaunchKernel [20,30) corr 1 -> volta_sgemm_128x64_nn [100,150): 50 ns, no TC
 *   aten::foo [130,160): no model, listed; aten::bar [135,150) inside it: not listed
 *   aten::outer_unknown [170,260): no model, but aten::mm [180,250) [2,3]x[3,5] inside is
 *       counted (2*2*5*3 = 60), so the outer one is not listed
 *   AddmmBackward0 [300,400), seq 10: an autograd node (no shapes, not listed: modelled inside)
 *     aten::mm [310,350) [4,16]x[16,8]: backward, 2*4*8*16 = 1024, forward op aten::linear
 *       cudaLaunchKernel [320,330) corr 2 -> volta_h884gemm_64x64_nn [400,430): 30 ns, TC
 *   aten::view [500,510): no work
 */
TEST(flops_rows_gaps_and_links)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	model_set_meta(m, 1, S(m, "device.0.name"), S(m, "Tesla V100-SXM2-16GB"));
	const char *f2 = "[\"float\", \"float\"]", *f3 = "[\"float\", \"float\", \"float\"]";
	op_args(m, h, op(m, h, 0, 100, "aten::linear"), "[[4, 8], [16, 8], [16]]", f3, 10);
	op_args(m, h, op(m, h, 10, 90, "aten::addmm"), "[[16], [4, 8], [8, 16], [], []]",
		"[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]", -1);
	R(m, h, 20, 30, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	op_args(m, h, op(m, h, 130, 160, "aten::foo"), "[[3]]", "[\"float\"]", -1);
	op_args(m, h, op(m, h, 135, 150, "aten::bar"), "[[3]]", "[\"float\"]", -1);
	op_args(m, h, op(m, h, 170, 260, "aten::outer_unknown"), "[[2, 3]]", "[\"float\"]", -1);
	op_args(m, h, op(m, h, 180, 250, "aten::mm"), "[[2, 3], [3, 5]]", f2, -1);
	uint64_t node = op(m, h, 300, 400, "AddmmBackward0");
	uint64_t a = model_add_arg(m, S(m, "Sequence number"), MODEL_ARG_I64, 10);
	m->tracks[h].ranges.first_arg[node] = a;
	m->tracks[h].ranges.nargs[node] = 1;
	op_args(m, h, op(m, h, 310, 350, "aten::mm"), "[[4, 16], [16, 8]]", f2, -1);
	R(m, h, 320, 330, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	op_args(m, h, op(m, h, 500, 510, "aten::view"), "[[4, 16], []]", "[\"float\", \"\"]", -1);
	R(m, d, 100, 150, "volta_sgemm_128x64_nn", OPSCOPE_CAT_KERNEL, 1);
	R(m, d, 400, 430, "volta_h884gemm_64x64_nn", OPSCOPE_CAT_KERNEL, 2);
	nest(m);
	struct analysis an;
	REQUIRE(analysis_run(&an, m) == 0);
	struct flops_result r;
	REQUIRE(flops_run(&an, NULL, &r) == 0);
	CHECK(r.device_time);
	CHECK_EQ_U(r.nrows, 3);

	const struct flops_row *lin = row_of(m, &r, "aten::linear", false);
	REQUIRE(lin != NULL);
	CHECK_EQ_U(lin->calls, 1);
	CHECK_EQ_U(lin->flops, 1088);
	CHECK_EQ_I(lin->gpu_ns, 50);
	CHECK_EQ_I(lin->kernel_ns, 50);
	CHECK_EQ_U(lin->kernels, 1);
	CHECK_EQ_I(lin->tc_ns, 0);
	CHECK_EQ_I(lin->cpu_ns, 100);
	CHECK_EQ_U(lin->category, PERFMODEL_GEMM);
	CHECK_EQ_U(lin->fwd_op, 0);
	REQUIRE(lin->peaks != NULL);
	CHECK(strstr(lin->peaks->name, "V100") != NULL);
	CHECK_STR(model_str(m, lin->device_name), "Tesla V100-SXM2-16GB");
	CHECK(row_of(m, &r, "aten::addmm", false) == NULL);

	const struct flops_row *mm = row_of(m, &r, "aten::mm", false);
	REQUIRE(mm != NULL);
	CHECK_EQ_U(mm->flops, 60);
	CHECK_EQ_I(mm->gpu_ns, 0);
	CHECK_EQ_U(mm->kernels, 0);

	const struct flops_row *bwd = row_of(m, &r, "aten::mm", true);
	REQUIRE(bwd != NULL);
	CHECK_EQ_U(bwd->flops, 1024);
	CHECK_EQ_I(bwd->gpu_ns, 30);
	CHECK_EQ_I(bwd->tc_ns, 30);
	CHECK_STR(model_str(m, bwd->fwd_op), "aten::linear");

	/* the gaps: aten::foo alone (aten::bar is inside it; outer_unknown has mm inside;
	 * AddmmBackward0 too) */
	REQUIRE(r.ngaps == 1);
	CHECK_STR(model_str(m, r.gaps[0].name), "aten::foo");
	CHECK_EQ_U(r.gaps[0].calls, 1);
	CHECK_EQ_I(r.gaps[0].cpu_ns, 30);
	CHECK(r.gaps[0].reason != NULL);
	CHECK_EQ_U(r.no_work_calls, 1);

	/* categories: three GEMM calls of 50 + 0 + 30 ns device time; the outermost calls are
	 * linear 50, foo 0, outer_unknown 0, AddmmBackward0 30, view 0: 80 */
	CHECK_EQ_U(r.cat[PERFMODEL_GEMM].calls, 3);
	CHECK_EQ_I(r.cat[PERFMODEL_GEMM].time_ns, 80);
	CHECK_EQ_U(r.cat[PERFMODEL_GEMM].flops, 1088 + 60 + 1024);
	CHECK_EQ_U(r.cat[PERFMODEL_NONE].calls, 1);
	CHECK_EQ_I(r.total_ns, 80);

	/* derived: 1024 FLOPs in 30 ns = 34.13 GFLOP/s; the bound and roofline need the
	 * V100's peaks, which the row has. Its kernel ran on tensor cores, but a V100 has no
	 * TF32 rate for FP32 there: the FP32 vector peak bounds it. */
	struct flops_derived dv;
	flops_derive(bwd, true, &dv);
	CHECK_NEAR(dv.flops_per_s, 1024 / 30e-9, 1.0);
	CHECK(dv.bound != NULL);
	CHECK(dv.roofline_ns > 0);
	CHECK_NEAR(dv.peak_flops, hardware_peak_flops(bwd->peaks, PERFMODEL_DT_FP32, false), 1.0);
	flops_free(&r);

	/* peaks by hand replace the table's for every device */
	struct hardware_peaks mine = { "mine", "--peak", 0, 1e12, 0, 0, 0, 0, 0, 1e11, 0 };
	struct flops_opts o = { .peaks = &mine };
	REQUIRE(flops_run(&an, &o, &r) == 0);
	lin = row_of(m, &r, "aten::linear", false);
	REQUIRE(lin != NULL);
	CHECK(lin->peaks == &mine);
	flops_free(&r);
	analysis_free(&an);
	model_free(m);
}

/*
 * No device work: the time basis is CPU time (aten::mm [0,40): 40 ns), and no row has peaks
 * unless given by hand. A trace whose operators have no shapes at all gives nothing.
 */
TEST(flops_cpu_time_and_no_shapes)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	op_args(m, h, op(m, h, 0, 40, "aten::mm"), "[[2, 3], [3, 5]]", "[\"float\", \"float\"]",
		-1);
	nest(m);
	struct analysis an;
	REQUIRE(analysis_run(&an, m) == 0);
	struct flops_result r;
	REQUIRE(flops_run(&an, NULL, &r) == 0);
	CHECK(!r.device_time);
	REQUIRE(r.nrows == 1);
	CHECK(r.rows[0].peaks == NULL);
	CHECK_EQ_I(r.cat[PERFMODEL_GEMM].time_ns, 40);
	struct flops_derived dv;
	flops_derive(&r.rows[0], false, &dv);
	CHECK_NEAR(dv.flops_per_s, 60 / 40e-9, 1.0);
	CHECK(dv.bound == NULL);
	flops_free(&r);
	struct hardware_peaks cpu = { "cpu", "--peak", 0, 1e11, 0, 0, 0, 0, 0, 2e10, 0 };
	struct flops_opts o = { .peaks = &cpu };
	REQUIRE(flops_run(&an, &o, &r) == 0);
	REQUIRE(r.nrows == 1);
	CHECK(r.rows[0].peaks == &cpu);
	flops_derive(&r.rows[0], false, &dv);
	CHECK_NEAR(dv.pct_peak_flops, (60 / 40e-9) / 1e11, 1e-9);
	flops_free(&r);
	analysis_free(&an);
	model_free(m);

	struct model *n = model_new();
	model_add_file(n, "y", "test");
	uint32_t t = model_add_track(n, MODEL_TRACK_THREAD, 1, 1, 0);
	op(n, t, 0, 10, "aten::mm");
	nest(n);
	REQUIRE(analysis_run(&an, n) == 0);
	REQUIRE(flops_run(&an, NULL, &r) == 0);
	CHECK_EQ_U(r.nrows, 0);
	CHECK_EQ_U(r.ngaps, 0);
	flops_free(&r);
	analysis_free(&an);
	model_free(n);
}

/*
 * The forward operator of an autograd node is the latest call with its sequence number: torch
 * stamps a call that makes no node (aten::lift_fresh [0,5)) with the number the next node will
 * get (3), and the call that makes it (aten::mm [10,20)) carries it too. MmBackward0 [30,50)
 * (seq 3) holds aten::mm [32,40): its row's forward operator is aten::mm.
 */
TEST(flops_forward_op_is_the_latest_with_the_number)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	const char *f2 = "[\"float\", \"float\"]";
	op_args(m, h, op(m, h, 0, 5, "aten::lift_fresh"), "[[2, 3]]", "[\"float\"]", 3);
	op_args(m, h, op(m, h, 10, 20, "aten::mm"), "[[2, 3], [3, 5]]", f2, 3);
	op_args(m, h, op(m, h, 30, 50, "MmBackward0"), "[[2, 5]]", "[\"float\"]", 3);
	op_args(m, h, op(m, h, 32, 40, "aten::mm"), "[[2, 5], [5, 3]]", f2, -1);
	nest(m);
	struct analysis an;
	REQUIRE(analysis_run(&an, m) == 0);
	struct flops_result r;
	REQUIRE(flops_run(&an, NULL, &r) == 0);
	const struct flops_row *bwd = row_of(m, &r, "aten::mm", true);
	REQUIRE(bwd != NULL);
	CHECK_STR(model_str(m, bwd->fwd_op), "aten::mm");
	flops_free(&r);
	analysis_free(&an);
	model_free(m);
}

/*
 * A forward convolution with no concrete inputs (torch 1.8): x [2,3,8,8], w [4,3,3,3], bias
 * [4], seq 7; its backward node CudnnConvolutionBackward (seq 7) holds
 * aten::cudnn_convolution_backward with inputs (input, grad_output [2,4,6,6], weight). The
 * output is [2,4,6,6] (288 elements): 2 * (3*3*3) * 288 + 288 (bias) = 15840 FLOPs. A second
 * convolution (seq 8) whose backward's grad_output has another batch (3) is not given it:
 * no model, listed.
 */
TEST(flops_conv_output_from_backward)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	const char *ft = "[\"float\", \"float\", \"float\", \"GenericList\", \"GenericList\", "
			 "\"GenericList\", \"Int\"]";
	op_args(m, h, op(m, h, 0, 100, "aten::conv2d"),
		"[[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]", ft, 7);
	op_args(m, h, op(m, h, 100, 200, "aten::conv2d"),
		"[[2, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []]", ft, 8);
	const char *bt = "[\"float\", \"float\", \"float\", \"GenericList\", \"GenericList\", "
			 "\"GenericList\", \"Int\", \"Bool\", \"Bool\", \"Bool\", \"GenericList\"]";
	op_args(m, h, op(m, h, 300, 400, "CudnnConvolutionBackward"), "[[2, 4, 6, 6]]",
		"[\"float\"]", 7);
	op_args(m, h, op(m, h, 310, 390, "aten::cudnn_convolution_backward"),
		"[[2, 3, 8, 8], [2, 4, 6, 6], [4, 3, 3, 3], [], [], [], [], [], [], [], []]", bt,
		-1);
	op_args(m, h, op(m, h, 400, 500, "CudnnConvolutionBackward"), "[[3, 4, 6, 6]]",
		"[\"float\"]", 8);
	op_args(m, h, op(m, h, 410, 490, "aten::cudnn_convolution_backward"),
		"[[3, 3, 8, 8], [3, 4, 6, 6], [4, 3, 3, 3], [], [], [], [], [], [], [], []]", bt,
		-1);
	nest(m);
	struct analysis an;
	REQUIRE(analysis_run(&an, m) == 0);
	struct flops_result r;
	REQUIRE(flops_run(&an, NULL, &r) == 0);
	CHECK_EQ_U(r.out_from_bwd, 1);
	const struct flops_row *fwd = row_of(m, &r, "aten::conv2d", false);
	REQUIRE(fwd != NULL);
	CHECK_EQ_U(fwd->calls, 1);
	CHECK_EQ_U(fwd->flops, 15840);
	CHECK_EQ_U(fwd->category, PERFMODEL_CONVOLUTION);
	/* both backward calls are modelled from their own shapes (dgrad + wgrad) */
	const struct flops_row *bwd = row_of(m, &r, "aten::cudnn_convolution_backward", true);
	REQUIRE(bwd != NULL);
	CHECK_EQ_U(bwd->calls, 1); /* the other one has other shapes: its own row */
	CHECK_STR(model_str(m, bwd->fwd_op), "aten::conv2d");
	int listed = 0;
	for (uint32_t i = 0; i < r.ngaps; i++)
		listed += strcmp(model_str(m, r.gaps[i].name), "aten::conv2d") == 0;
	CHECK_EQ_I(listed, 1);
	flops_free(&r);
	analysis_free(&an);
	model_free(m);
}

TEST_MAIN(flops_rows_gaps_and_links, flops_cpu_time_and_no_shapes, flops_conv_output_from_backward,
	  flops_forward_op_is_the_latest_with_the_number)
