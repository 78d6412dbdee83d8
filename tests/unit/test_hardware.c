/*
 * test_hardware.c: the peak table (analyze/hardware.c): device names as the traces in
 * ../shared/data give them map to the right rows, unknown names to none; the peak chosen per
 * dtype and unit; the --peak parser on good and bad text; and the tensor-core verdict on real
 * kernel names copied from those traces.
 */
#include <stdio.h>
#include <string.h>

#include "analyze/hardware.h"
#include "harness.h"

static const char *row_name(const char *device)
{
	const struct hardware_peaks *p = hardware_find(device);
	return p ? p->name : "(none)";
}

/* Names from the traces' deviceProperties (HTA and tb_plugin), then nvidia-smi style names
 * of the form factors, then names that must match nothing. */
TEST(names_from_traces)
{
	CHECK_STR(row_name("Tesla V100-DGXS-32GB"), "NVIDIA Tesla V100 SXM2"); /* tb_plugin */
	CHECK_STR(row_name("Tesla V100-SXM2-16GB"), "NVIDIA Tesla V100 SXM2"); /* trace_diff */
	CHECK_STR(row_name("Tesla V100-SXM2-32GB"), "NVIDIA Tesla V100 SXM2");
	CHECK_STR(row_name("NVIDIA A100-PG509-200"), "NVIDIA A100 SXM4 40GB");
	CHECK_STR(row_name("NVIDIA A100-SXM4-80GB"), "NVIDIA A100 SXM4 80GB");
	CHECK_STR(row_name("NVIDIA A100-SXM4-40GB"), "NVIDIA A100 SXM4 40GB");
}

TEST(form_factors_pick_their_rows)
{
	CHECK_STR(row_name("Tesla V100-PCIE-32GB"), "NVIDIA Tesla V100 PCIe");
	CHECK_STR(row_name("NVIDIA A100-PCIE-40GB"), "NVIDIA A100 PCIe 40GB");
	CHECK_STR(row_name("NVIDIA A100 80GB PCIe"), "NVIDIA A100 PCIe 80GB");
	CHECK_STR(row_name("NVIDIA H100 NVL"), "NVIDIA H100 NVL");
	CHECK_STR(row_name("NVIDIA H100 PCIe"), "NVIDIA H100 PCIe 80GB");
	CHECK_STR(row_name("NVIDIA H100 80GB HBM3"), "NVIDIA H100 SXM5 80GB");
	CHECK_STR(row_name("nvidia h100 pcie"), "NVIDIA H100 PCIe 80GB"); /* case-insensitive */
	CHECK_STR(row_name("NVIDIA H200"), "NVIDIA H200 SXM 141GB");
	CHECK_STR(row_name("NVIDIA B200"), "NVIDIA B200 (HGX, 1000 W)");
	CHECK_STR(row_name("Tesla T4"), "NVIDIA T4");
	CHECK_STR(row_name("NVIDIA L4"), "NVIDIA L4");
	CHECK_STR(row_name("NVIDIA L40S"), "NVIDIA L40S");
	CHECK_STR(row_name("NVIDIA A10"), "NVIDIA A10");
	CHECK_STR(row_name("AMD Instinct MI250X"), "AMD Instinct MI250X (one GCD)");
	CHECK_STR(row_name("AMD Instinct MI250"), "AMD Instinct MI250 (one GCD)");
	CHECK_STR(row_name("AMD Instinct MI300X"), "AMD Instinct MI300X");
	/* family only: the SXM row (documented fallback) */
	CHECK_STR(row_name("NVIDIA A100"), "NVIDIA A100 SXM4 80GB");
}

TEST(unknown_names_match_nothing)
{
	CHECK(hardware_find("AMD Radeon Graphics") == NULL); /* HTA's MI250 trace */
	CHECK(hardware_find("ARTEMIS") == NULL);	     /* HTA's MTIA trace */
	CHECK(hardware_find("NVIDIA L40") == NULL);	     /* not L4, not L40S */
	CHECK(hardware_find("NVIDIA A10G") == NULL);	     /* not A10 */
	CHECK(hardware_find("Tesla T40") == NULL);	     /* not T4 */
	CHECK(hardware_find("") == NULL);
	CHECK(hardware_find(NULL) == NULL);
}

TEST(table_is_well_formed)
{
	int rows = 0;
	for (const struct hardware_peaks *p = hardware_table; p->name; p++) {
		rows++;
		CHECK(p->source && *p->source);
		CHECK(p->mem_bw_bytes >= 0 && p->fp32_flops >= 0 && p->fp16_flops >= 0);
		/* dense tensor rates are never below the vector FP32 rate where both are given */
		if (p->fp16_flops > 0 && p->fp32_flops > 0)
			CHECK(p->fp16_flops >= p->fp32_flops);
	}
	CHECK_EQ_I(rows, 18);
}

/* Peaks per dtype on the A100 SXM4 40GB row: the datasheet's 9.7 FP64, 19.5 FP32, 156 TF32,
 * 312 FP16/BF16, 624 INT8 TOPS (dense), no FP8. */
TEST(peak_per_dtype)
{
	const struct hardware_peaks *a = hardware_find("NVIDIA A100-SXM4-40GB");
	REQUIRE(a);
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_FP64, false), 9.7e12, 1);
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_FP32, false), 19.5e12, 1);
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_FP32, true), 156e12, 1); /* TF32 */
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_FP16, true), 312e12, 1);
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_BF16, true), 312e12, 1);
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_FP16, false), 19.5e12, 1); /* vector */
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_INT8, true), 624e12, 1);
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_FP8, true), 0, 0); /* none on Ampere */
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_INT, true), 0, 0);
	CHECK_NEAR(hardware_peak_flops(a, PERFMODEL_DT_UNKNOWN, false), 0, 0);
	CHECK_NEAR(hardware_peak_flops(NULL, PERFMODEL_DT_FP32, false), 0, 0);
	/* H100 SXM5: the datasheet's sparse 1,979 BF16 and 3,958 FP8 TFLOPS halved */
	const struct hardware_peaks *h = hardware_find("NVIDIA H100 80GB HBM3");
	REQUIRE(h);
	CHECK_NEAR(hardware_peak_flops(h, PERFMODEL_DT_BF16, true), 989.5e12, 1);
	CHECK_NEAR(hardware_peak_flops(h, PERFMODEL_DT_FP8, true), 1979e12, 1);
	CHECK_NEAR(h->mem_bw_bytes, 3.35e12, 1);
	/* V100 has no TF32: an FP32 op on tensor cores has no peak there */
	const struct hardware_peaks *v = hardware_find("Tesla V100-SXM2-16GB");
	REQUIRE(v);
	CHECK_NEAR(hardware_peak_flops(v, PERFMODEL_DT_FP32, true), 0, 0);
	CHECK_NEAR(hardware_peak_flops(v, PERFMODEL_DT_FP16, true), 125e12, 1);
	/* MI300X: AMD's dense figures for the rates a stored source gives; TF32 none */
	const struct hardware_peaks *x = hardware_find("AMD Instinct MI300X");
	REQUIRE(x);
	CHECK_NEAR(hardware_peak_flops(x, PERFMODEL_DT_BF16, true), 1307.4e12, 1e3);
	CHECK_NEAR(hardware_peak_flops(x, PERFMODEL_DT_FP8, true), 2614.9e12, 1e3);
	CHECK_NEAR(hardware_peak_flops(x, PERFMODEL_DT_FP32, false), 163.4e12, 1e3);
	CHECK_NEAR(hardware_peak_flops(x, PERFMODEL_DT_FP32, true), 0, 0);
}

TEST(parse_good)
{
	struct hardware_peaks p = hardware_table[0]; /* amend the V100 SXM2 row */
	char err[200] = "";
	REQUIRE(hardware_peaks_parse("fp32=19.5T,tf32=156T, bf16 = 312T,fp8=0,bw=1.555T,int8=624T",
				     &p, err, sizeof(err)));
	CHECK_NEAR(p.fp32_flops, 19.5e12, 1);
	CHECK_NEAR(p.tf32_flops, 156e12, 1);
	CHECK_NEAR(p.bf16_flops, 312e12, 1);
	CHECK_NEAR(p.fp8_flops, 0, 0);
	CHECK_NEAR(p.int8_ops, 624e12, 1);
	CHECK_NEAR(p.mem_bw_bytes, 1.555e12, 1);
	CHECK_NEAR(p.fp64_flops, 7.8e12, 1); /* not given: kept from the row */
	CHECK_NEAR(p.fp16_flops, 125e12, 1);
	CHECK_STR(p.name, "given by hand");
	CHECK_STR(p.source, "--peak");
	CHECK_EQ_I(p.tc_arch, 70);
	/* suffixes k M G P and plain numbers: 2k = 2000, 3M, 4G, 1P, 5 */
	struct hardware_peaks q = { 0 };
	REQUIRE(hardware_peaks_parse("fp64=2k,fp32=3M,fp16=4G,bf16=1P,bw=5", &q, err, sizeof(err)));
	CHECK_NEAR(q.fp64_flops, 2e3, 0);
	CHECK_NEAR(q.fp32_flops, 3e6, 0);
	CHECK_NEAR(q.fp16_flops, 4e9, 0);
	CHECK_NEAR(q.bf16_flops, 1e15, 0);
	CHECK_NEAR(q.mem_bw_bytes, 5, 0);
}

/* Each bad text: false, *out untouched, an error naming the key (or the item) and why. */
static void bad(const char *text, const char *want)
{
	struct hardware_peaks p = hardware_table[0];
	char err[200] = "";
	bool ok = hardware_peaks_parse(text, &p, err, sizeof(err));
	CHECK(!ok);
	if (!strstr(err, want))
		CHECK_STR(err, want); /* prints both */
	CHECK_NEAR(p.fp32_flops, 15.7e12, 1);
	CHECK_STR(p.name, "NVIDIA Tesla V100 SXM2");
}

TEST(parse_bad)
{
	bad("", "empty");
	bad(NULL, "empty");
	bad("fp32", "\"fp32\" has no '='");
	bad("fp33=1T", "unknown key \"fp33\"");
	bad("fp32=", "fp32: \"\" has no value");
	bad("fp32=abc", "fp32: \"abc\" is not a number");
	bad("fp32=-1T", "fp32: \"-1T\" is not a number");
	bad("fp32=1.2.3T", "is not a number");
	bad("fp32=1X", "fp32: \"1X\" has an unknown suffix");
	bad("fp32=1Tb", "unknown suffix");
	bad("fp32=1e3", "unknown suffix");
	bad("fp32=inf", "is not a number");
	bad("fp32=1T,,bw=2T", "empty item");
	bad("fp32=1T,", "empty item");
	bad("fp32=1T,fp32=2T", "key fp32 given twice");
	bad("fp32=20T,bw=x", "bw: \"x\" is not a number"); /* fp32 not applied either */
}

/* Kernel names copied from the traces in ../shared/data/kineto (HTA A100/V100/MI250 traces and
 * the tb_plugin ResNet-50 V100 trace). */
TEST(tensor_core_names)
{
	static const char *tc[] = {
		"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_"
		"stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
		"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x64_"
		"stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train",
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(cutlass_80_"
		"tensorop_s1688gemm_64x64_16x6_nn_align4::Params)",
		"void cutlass::Kernel<cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_64x2_tn_align8>("
		"cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_64x2_tn_align8::Params)",
		"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_"
		"nhwc_align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4::"
		"Params)",
		"Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1",
	};
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		if (!hardware_kernel_uses_tc(tc[i], 0))
			CHECK_STR("not tensor cores", tc[i]);
	}
	CHECK(hardware_kernel_uses_tc(tc[0], 80));
	CHECK(!hardware_kernel_uses_tc(tc[0], 70)); /* sm80_ names apply from Ampere on */
	CHECK(hardware_kernel_uses_tc(tc[2], 80));
	/* from public Hopper profiles (docs/peaks.md) */
	CHECK(hardware_kernel_uses_tc("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_"
				      "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
				      90));
	/* PyProf's own list: h884 (Volta cuBLAS fp16) */
	CHECK(hardware_kernel_uses_tc("volta_h884gemm_64x64_ldg8_nn", 70));
}

TEST(not_tensor_core_names)
{
	static const char *no[] = {
		"volta_sgemm_128x64_nn",
		"ampere_sgemm_128x64_nn",
		"volta_cgemm_32x32_tn",
		"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, "
		"false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
		"cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
		"float> >",
		"void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_"
		"sgemm_128x32_8x5_nn_align1::Params)",
		"void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>("
		"int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned "
		"long long, int, float, float, int, float const*, float const*, bool, int, int)",
		"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, "
		"float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, "
		"int, unsigned long long, int, float, int, int, int)",
		"void explicit_convolve_sgemm<float, int, 1024, 5, 5, 3, 3, 3, 0, false>(int, int, int, "
		"float const*, int, float const*, int, float*, kernel_conv_params, unsigned long long, "
		"int, unsigned long long, int, float, float, int, float const*, float const*)",
		"void cudnn::winograd_nonfused::winogradWgradData4x4<float, float>(cudnn::winograd_"
		"nonfused::WinogradDataParams<float, float>)",
		"nvjet_tst_64x8_64x16_2x1_v_bz_splitK_TNT", /* not listed: see hardware.c */
	};
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (hardware_kernel_uses_tc(no[i], 0))
			CHECK_STR("tensor cores", no[i]);
	}
	CHECK(!hardware_kernel_uses_tc(NULL, 0));
	CHECK(!hardware_kernel_uses_tc("", 80));
}

TEST_MAIN(names_from_traces, form_factors_pick_their_rows, unknown_names_match_nothing,
	  table_is_well_formed, peak_per_dtype, parse_good, parse_bad, tensor_core_names,
	  not_tensor_core_names)
