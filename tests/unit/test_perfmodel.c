/*
 * test_perfmodel.c: the operator performance model (analyze/perfmodel.c) against cases
 * worked out by hand (the arithmetic is in the comments), the parser on texts copied from
 * real Kineto traces (../shared/data/kineto: the ResNet-50 V100 trace, HTA's trace_diff and
 * mtia traces) and on malformed ones, overflow, and the tensor-core rule.
 */
#include <stdio.h>
#include <string.h>

#include "analyze/perfmodel.h"
#include "harness.h"

static struct perfmodel_call call_;
static char scratch_[4096];
static const char *parse_reason_;

/* Evaluate name over the three texts (types/concrete may be NULL) with an optional output
 * hint ("[32, 64, 112, 112]"). A parse failure comes back as a NONE with the reason
 * "parse: ...". */
static struct perfmodel_result ev_hint(const char *name, const char *dims, const char *types,
				       const char *conc, const char *hint)
{
	struct perfmodel_result r;
	memset(&r, 0, sizeof(r));
	if (!perfmodel_parse_inputs(&call_, dims, types, conc, scratch_, sizeof(scratch_),
				    &parse_reason_)) {
		r.reason = "parse failed";
		printf("#   parse failed: %s\n", parse_reason_);
		return r;
	}
	call_.name = name;
	if (hint) {
		static struct perfmodel_call h;
		static char hs[64];
		const char *why;
		char buf[128];
		snprintf(buf, sizeof(buf), "[[%s]]", hint);
		if (!perfmodel_parse_inputs(&h, buf, NULL, NULL, hs, sizeof(hs), &why)) {
			r.reason = "hint parse failed";
			return r;
		}
		call_.out_ndims = h.in[0].ndims;
		memcpy(call_.out_dims, h.in[0].dims, sizeof(call_.out_dims));
	}
	perfmodel_eval(&call_, &r);
	return r;
}

static struct perfmodel_result ev(const char *name, const char *dims, const char *types,
				  const char *conc)
{
	return ev_hint(name, dims, types, conc, NULL);
}

/* The result is modelled with these category, FLOPs and bytes. */
#define CHECK_MODEL(r, cat, fl, rd, wr)                                                         \
	do {                                                                                    \
		CHECK_STR((r).reason ? (r).reason : "(modelled)", "(modelled)");                \
		CHECK_STR(perfmodel_category_name((r).category), perfmodel_category_name(cat)); \
		CHECK_EQ_U((r).flops, (fl));                                                    \
		CHECK_EQ_U((r).bytes_read, (rd));                                               \
		CHECK_EQ_U((r).bytes_written, (wr));                                            \
	} while (0)

/* The result is no model, for this reason, with zero counts. */
#define CHECK_NONE(r, why)                                                     \
	do {                                                                   \
		CHECK_EQ_U((r).category, PERFMODEL_NONE);                      \
		CHECK_STR((r).reason, (why));                                  \
		CHECK_EQ_U((r).flops + (r).bytes_read + (r).bytes_written, 0); \
	} while (0)

TEST(dtypes)
{
	CHECK_EQ_U(perfmodel_dtype_bytes("float"), 4);
	CHECK_EQ_U(perfmodel_dtype_bytes("c10::Half"), 2);
	CHECK_EQ_U(perfmodel_dtype_bytes("c10::half"), 2); /* c10 names ignore case */
	CHECK_EQ_U(perfmodel_dtype_bytes("c10::BFloat16"), 2);
	CHECK_EQ_U(perfmodel_dtype_bytes("long int"), 8);
	CHECK_EQ_U(perfmodel_dtype_bytes("long"), 8);
	CHECK_EQ_U(perfmodel_dtype_bytes("int"), 4);
	CHECK_EQ_U(perfmodel_dtype_bytes("double"), 8);
	CHECK_EQ_U(perfmodel_dtype_bytes("unsigned char"), 1);
	CHECK_EQ_U(perfmodel_dtype_bytes("bool"), 1);
	CHECK_EQ_U(perfmodel_dtype_bytes("c10::Float8_e4m3fn"), 1);
	/* scalar arguments are not tensors */
	CHECK_EQ_U(perfmodel_dtype_bytes("Int"), 0);
	CHECK_EQ_U(perfmodel_dtype_bytes("Double"), 0);
	CHECK_EQ_U(perfmodel_dtype_bytes("Scalar"), 0);
	CHECK_EQ_U(perfmodel_dtype_bytes("TensorList"), 0);
	CHECK_EQ_U(perfmodel_dtype_bytes(""), 0);
	CHECK_EQ_U(perfmodel_dtype_of("c10::BFloat16"), PERFMODEL_DT_BF16);
	CHECK_EQ_U(perfmodel_dtype_of("c10::Float8_e5m2"), PERFMODEL_DT_FP8);
	CHECK_EQ_U(perfmodel_dtype_of("signed char"), PERFMODEL_DT_INT8);
	CHECK_EQ_U(perfmodel_dtype_of("long int"), PERFMODEL_DT_INT);
	CHECK_EQ_U(perfmodel_dtype_of("quaternion"), PERFMODEL_DT_UNKNOWN);
	CHECK_STR(perfmodel_dtype_name(PERFMODEL_DT_BF16), "bf16");
	CHECK_STR(perfmodel_dtype_name((enum perfmodel_dtype)99), "?");
	CHECK_STR(perfmodel_category_name(PERFMODEL_NONE), "no model");
	CHECK_STR(perfmodel_category_name(PERFMODEL_NORMALIZATION), "normalization");
}

TEST(gemm_mm_addmm)
{
	/* ResNet-50 trace: aten::mm [32, 1000] x [1000, 2048]: M 32, K 1000, N 2048.
	 * FLOPs 2·32·2048·1000 = 131072000; read 4·(32000 + 2048000) = 8320000; written
	 * 4·32·2048 = 262144. FP32 with M, N, K multiples of 4: TF32 only. */
	struct perfmodel_result r =
		ev("aten::mm", "[[32, 1000], [1000, 2048]]", "[\"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 131072000, 8320000, 262144);
	CHECK_EQ_U(r.dtype, PERFMODEL_DT_FP32);
	CHECK(r.tc_eligible && r.tc_tf32_only && !r.tc_reason);
	/* aten::addmm [1000], [32, 2048], [2048, 1000]: M 32, K 2048, N 1000: FLOPs
	 * 2·32·1000·2048 + 32·1000 (bias) = 131072000 + 32000; read 4·(1000 + 65536 + 2048000)
	 * = 8458144; written 4·32000 = 128000. */
	r = ev("aten::addmm", "[[1000], [32, 2048], [2048, 1000], [], []]",
	       "[\"float\", \"float\", \"float\", \"Int\", \"Int\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 131104000, 8458144, 128000);
	/* mtia: addmm with K 1705: 1705 % 4 = 1 */
	r = ev("aten::addmm", "[[512], [1024, 1705], [1705, 512], [], []]",
	       "[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]", NULL);
	CHECK(!r.tc_eligible && !r.tc_tf32_only);
	CHECK_STR(r.tc_reason, "K not a multiple of 4");
	/* inner dimensions that differ */
	r = ev("aten::mm", "[[4, 5], [6, 7]]", "[\"float\", \"float\"]", NULL);
	CHECK_NONE(r, "GEMM inner dimensions differ");
	r = ev("aten::mm", "[[4, 5], [5, 7]]", "[\"quaternion\", \"float\"]", NULL);
	CHECK_NONE(r, "unknown dtype");
}

TEST(gemm_bmm_matmul_linear)
{
	/* mtia: bmm [1024, 96, 50] x [1024, 50, 8]: B 1024, M 96, K 50, N 8. FLOPs
	 * 2·1024·96·8·50 = 78643200; read 4·(4915200 + 409600) = 21299200; written
	 * 4·1024·96·8 = 3145728. */
	struct perfmodel_result r =
		ev("aten::bmm", "[[1024, 96, 50], [1024, 50, 8]]", "[\"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 78643200, 21299200, 3145728);
	CHECK_STR(r.tc_reason, "K not a multiple of 4");
	/* baddbmm fp16 [4, 8, 16] + [4, 8, 32] x [4, 32, 16]: FLOPs 2·4·8·16·32 + 4·8·16 =
	 * 32768 + 512; read 2·(512 + 1024 + 2048) = 7168; written 2·512 = 1024. */
	r = ev("aten::baddbmm", "[[4, 8, 16], [4, 8, 32], [4, 32, 16], [], []]",
	       "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"Scalar\", \"Scalar\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 33280, 7168, 1024);
	CHECK(r.tc_eligible && !r.tc_tf32_only);
	/* mtia: matmul [1024, 96, 50] x [50, 15]: batch 1024, M 96, K 50, N 15. FLOPs
	 * 2·1024·96·15·50 = 147456000; read 4·(4915200 + 750) = 19663800; written
	 * 4·1024·96·15 = 5898240. */
	r = ev("aten::matmul", "[[1024, 96, 50], [50, 15]]", "[\"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 147456000, 19663800, 5898240);
	/* 1-d · 1-d: a dot product of 7: FLOPs 14, read 56, written 4; M = 1 */
	r = ev("aten::matmul", "[[7], [7]]", "[\"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 14, 56, 4);
	CHECK_STR(r.tc_reason, "M not a multiple of 4");
	/* 2-d · 1-d: M 3, K 4, N 1: FLOPs 24, read 4·16, written 4·3 */
	r = ev("aten::matmul", "[[3, 4], [4]]", "[\"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 24, 64, 12);
	/* 1-d · 3-d: [4] x [2, 4, 6]: batch 2, M 1, N 6: FLOPs 2·2·6·4 = 96, read 4·(4 + 48),
	 * written 4·12 */
	r = ev("aten::matmul", "[[4], [2, 4, 6]]", "[\"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 96, 208, 48);
	/* broadcast batches [2, 1] and [5] -> [2, 5]: 10 GEMMs of 3x4x6: FLOPs 2·10·3·6·4 =
	 * 1440; read 4·(24 + 120) = 576; written 4·10·18 = 720 */
	r = ev("aten::matmul", "[[2, 1, 3, 4], [5, 4, 6]]", "[\"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 1440, 576, 720);
	r = ev("aten::matmul", "[[2, 3, 4], [3, 4, 6]]", "[\"float\", \"float\"]", NULL);
	CHECK_NONE(r, "matmul batch dimensions do not broadcast");
	/* mtia: linear [1024, 1705] x [512, 1705]ᵀ + [512]: M 1024, K 1705, N 512. FLOPs
	 * 2·1024·512·1705 + 1024·512 = 1787822080 + 524288; read 4·(1745920 + 872960 + 512) =
	 * 10477568; written 4·524288 = 2097152. */
	r = ev("aten::linear", "[[1024, 1705], [512, 1705], [512]]",
	       "[\"float\", \"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 1788346368, 10477568, 2097152);
	/* 3-d input, no bias: M 2·3, K 8, N 4: FLOPs 384, read 4·(48 + 32), written 4·24 */
	r = ev("aten::linear", "[[2, 3, 8], [4, 8], []]", "[\"float\", \"float\", \"\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_GEMM, 384, 320, 96);
}

TEST(gemm_einsum)
{
	/* bij,bjk->bik over [2, 3, 4] and [2, 4, 5]: B 2, M 3, K 4, N 5. FLOPs 2·2·3·5·4 =
	 * 240; read 4·(24 + 40) = 256; written 4·2·15 = 120. */
	struct perfmodel_result r =
		ev("aten::einsum", "[[], [[2, 3, 4], [2, 4, 5]], []]", "[\"str\", \"float\", \"\"]",
		   "[\"bij,bjk->bik\", \"\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_GEMM, 240, 256, 120);
	/* implicit output: ij,jk -> ik: 2·3·5·4 = 120; read 4·(12 + 20); written 4·15 */
	r = ev("aten::einsum", "[[], [[3, 4], [4, 5]], []]", "[\"str\", \"float\", \"\"]",
	       "[\"ij,jk\", \"\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_GEMM, 120, 128, 60);
	/* k summed out of the second operand alone: not a GEMM */
	r = ev("aten::einsum", "[[], [[3, 4], [4, 5]], []]", "[\"str\", \"float\", \"\"]",
	       "[\"ij,jk->i\", \"\", \"\"]");
	CHECK_NONE(r, "einsum equation is not a GEMM");
	r = ev("aten::einsum", "[[], [[3, 4], [5, 6]], []]", "[\"str\", \"float\", \"\"]",
	       "[\"ij,jk\", \"\", \"\"]");
	CHECK_NONE(r, "einsum operand sizes differ");
	r = ev("aten::einsum", "[[], [[3, 4], [4, 5]], []]", "[\"str\", \"float\", \"\"]",
	       "[\"...ij,jk\", \"\", \"\"]");
	CHECK_NONE(r, "einsum equation is not a GEMM");
	/* implicit output of 9 indices (fuzz): more than a tensor's dimensions */
	r = ev("aten::einsum", "[[], [[2, 3, 4], [2, 4, 5]], []]", "[\"str\", \"float\", \"\"]",
	       "[\"hiz,long bjk\", \"\", \"\"]");
	CHECK_NONE(r, "einsum equation is not a GEMM");
	/* torch writes "TensorList" as the type of a list: its dtype is not known */
	r = ev("aten::einsum", "[[], [[3, 4], [4, 5]], []]", "[\"str\", \"TensorList\", \"\"]",
	       "[\"ij,jk\", \"\", \"\"]");
	CHECK_NONE(r, "dtype of the tensor list not recorded");
	r = ev("aten::einsum", "[[], [[3, 4], [4, 5]], []]", "[\"str\", \"float\", \"\"]", NULL);
	CHECK_NONE(r, "einsum equation not recorded");
}

#define CONV_T \
	"[\"float\", \"float\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\", \"Bool\", \"Bool\", \"Bool\"]"

TEST(conv_forward)
{
	/* ResNet-50 trace, torch 1.8: cudnn_convolution [32, 3, 224, 224] * [64, 3, 7, 7], no
	 * Concrete Inputs: stride and padding unknown */
	const char *d = "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]";
	struct perfmodel_result r = ev("aten::cudnn_convolution", d, CONV_T, NULL);
	CHECK_NONE(r, "stride/padding not recorded");
	/* with the output [32, 64, 112, 112] from the backward's grad_output: 25690112 outputs
	 * of 3·7·7 = 147 MACs: FLOPs 2·25690112·147 = 7552892928; read 4·(4816896 + 9408) =
	 * 19305216; written 4·25690112 = 102760448. C_in 3: no tensor cores. */
	r = ev_hint("aten::cudnn_convolution", d, CONV_T, NULL, "32, 64, 112, 112");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 7552892928ull, 19305216, 102760448);
	CHECK_STR(r.tc_reason, "C_in/groups not a multiple of 4");
	/* the same from its arguments (torch 1.8 order: padding, stride, dilation): out =
	 * floor((224 + 2·3 - 1·6 - 1)/2) + 1 = 112 */
	r = ev("aten::cudnn_convolution", d, CONV_T,
	       "[\"\", \"\", \"[3, 3]\", \"[2, 2]\", \"[1, 1]\", \"1\", \"False\", \"False\", \"True\"]");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 7552892928ull, 19305216, 102760448);
	/* aten::convolution [x, w, None, stride, padding, dilation, transposed, output_padding,
	 * groups] */
	r = ev("aten::convolution",
	       "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]",
	       "[\"float\", \"float\", \"\", \"GenericList\", \"GenericList\", \"GenericList\", \"Bool\", \"GenericList\", \"Int\"]",
	       "[\"\", \"\", \"\", \"[2, 2]\", \"[3, 3]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 7552892928ull, 19305216, 102760448);
	/* x has w[0] channels, no concrete flag: transposed or not cannot be told */
	r = ev_hint(
		"aten::convolution",
		"[[32, 64, 56, 56], [64, 64, 1, 1], [], [], [], [], [], [], []]",
		"[\"float\", \"float\", \"\", \"GenericList\", \"GenericList\", \"GenericList\", \"Bool\", \"GenericList\", \"Int\"]",
		NULL, "32, 64, 56, 56");
	CHECK_NONE(r, "transposed flag not recorded");
	/* depthwise conv2d [2, 8, 10, 10] * [8, 1, 3, 3] + [8], padding 1, groups 8: out 10x10;
	 * 1600 outputs of 9 MACs: FLOPs 28800 + 1600 (bias); read 4·(1600 + 72 + 8) = 6720;
	 * written 6400 */
	r = ev("aten::conv2d", "[[2, 8, 10, 10], [8, 1, 3, 3], [8], [], [], [], []]",
	       "[\"float\", \"float\", \"float\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\"]",
	       "[\"\", \"\", \"\", \"[1]\", \"[1]\", \"[1]\", \"8\"]");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 30400, 6720, 6400);
	CHECK_STR(r.tc_reason, "C_in/groups not a multiple of 4");
	/* conv_transpose2d [1, 4, 5, 5] * [4, 2, 3, 3], stride 2, padding 1, output_padding 1:
	 * out (5-1)·2 - 2 + 2 + 1 + 1 = 10; MACs 100 inputs x 2·9 = 1800: FLOPs 3600; read
	 * 4·(100 + 72) = 688; written 4·(2·10·10) = 800 */
	r = ev("aten::conv_transpose2d", "[[1, 4, 5, 5], [4, 2, 3, 3], [], [], [], [], [], []]",
	       "[\"float\", \"float\", \"\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\", \"GenericList\"]",
	       "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"1\", \"[1, 1]\"]");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 3600, 688, 800);
	/* conv1d [4, 16, 50] * [32, 16, 5] + [32], dilation 2: out (50 - 2·4 - 1) + 1 = 42;
	 * 4·32·42 = 5376 outputs of 80 MACs: FLOPs 860160 + 5376; read 4·(3200 + 2560 + 32) =
	 * 23168; written 4·5376 = 21504 */
	r = ev("aten::conv1d", "[[4, 16, 50], [32, 16, 5], [32], [], [], [], []]",
	       "[\"float\", \"float\", \"float\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\"]",
	       "[\"\", \"\", \"\", \"[1]\", \"[0]\", \"[2]\", \"1\"]");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 865536, 23168, 21504);
	CHECK(r.tc_eligible && r.tc_tf32_only);
	/* conv3d fp16 [1, 8, 4, 4, 4] * [16, 8, 3, 3, 3], padding 1: 16·64 = 1024 outputs of
	 * 8·27 = 216 MACs: FLOPs 442368; read 2·(512 + 3456) = 7936; written 2048; C 8, 16:
	 * tensor cores */
	r = ev("aten::conv3d", "[[1, 8, 4, 4, 4], [16, 8, 3, 3, 3], [], [], [], [], []]",
	       "[\"c10::Half\", \"c10::Half\", \"\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\"]",
	       "[\"\", \"\", \"\", \"[1, 1, 1]\", \"[1, 1, 1]\", \"[1, 1, 1]\", \"1\"]");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 442368, 7936, 2048);
	CHECK(r.tc_eligible && !r.tc_tf32_only);
	/* a kernel larger than the padded input */
	r = ev("aten::conv2d", "[[1, 1, 2, 2], [1, 1, 5, 5], [], [], [], [], []]",
	       "[\"float\", \"float\", \"\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\"]",
	       "[\"\", \"\", \"\", \"[1]\", \"[0]\", \"[1]\", \"1\"]");
	CHECK_NONE(r, "convolution output would be empty");
}

#define BWD18_T \
	"[\"float\", \"float\", \"float\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\", \"Bool\", \"Bool\", \"Bool\", \"GenericList\"]"

TEST(conv_backward)
{
	/* ResNet-50 trace: cudnn_convolution_backward [input, grad_output, weight]: x [32, 512,
	 * 7, 7] (802816), go [32, 2048, 7, 7] (3211264), w [2048, 512, 1, 1] (1048576). MACs
	 * 3211264·512 = 1644167168 per pass; dgrad + wgrad: FLOPs 4·1644167168 = 6576668672;
	 * read 4·(3211264 + 1048576 + 802816) = 20250624; written 4·(802816 + 1048576) =
	 * 7405568. */
	const char *d =
		"[[32, 512, 7, 7], [32, 2048, 7, 7], [2048, 512, 1, 1], [], [], [], [], [], [], [], []]";
	struct perfmodel_result r = ev("aten::cudnn_convolution_backward", d, BWD18_T, NULL);
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 6576668672ull, 20250624, 7405568);
	/* torch >= 1.11 convolution_backward [grad_output, input, weight, bias_sizes, ...,
	 * output_mask]: all three: + 3211264 FLOPs, + 4·2048 written */
	const char *d11 =
		"[[32, 2048, 7, 7], [32, 512, 7, 7], [2048, 512, 1, 1], [], [], [], [], [], [], [], []]";
	const char *t11 =
		"[\"float\", \"float\", \"float\", \"GenericList\", \"GenericList\", \"GenericList\", \"GenericList\", \"Bool\", \"GenericList\", \"Int\", \"GenericList\"]";
	r = ev("aten::convolution_backward", d11, t11,
	       "[\"\", \"\", \"\", \"[2048]\", \"[1, 1]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\", \"[True, True, True]\"]");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 6579879936ull, 20250624, 7413760);
	/* weight gradient only: 2·1644167168; read 4·(3211264 + 802816); written 4·1048576 */
	r = ev("aten::convolution_backward", d11, t11,
	       "[\"\", \"\", \"\", \"[2048]\", \"[1, 1]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\", \"[False, True, False]\"]");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 3288334336ull, 16056320, 4194304);
	/* no Concrete Inputs: go has w[0] channels and x does not: not transposed; both
	 * gradients */
	r = ev("aten::convolution_backward", d11, t11, NULL);
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 6576668672ull, 20250624, 7405568);
	/* cudnn_convolution_backward_input [sizes, grad_output, weight]: the input size from
	 * the hint: 2·1644167168; read 4·(3211264 + 1048576) = 17039360; written 4·802816 */
	const char *di = "[[], [32, 2048, 7, 7], [2048, 512, 1, 1], [], [], [], [], [], [], []]";
	const char *ti =
		"[\"GenericList\", \"float\", \"float\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\", \"Bool\", \"Bool\", \"Bool\"]";
	r = ev("aten::cudnn_convolution_backward_input", di, ti, NULL);
	CHECK_NONE(r, "input size not recorded");
	r = ev_hint("aten::cudnn_convolution_backward_input", di, ti, NULL, "32, 512, 7, 7");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 3288334336ull, 17039360, 3211264);
	/* cudnn_convolution_backward_weight [sizes, grad_output, input], the weight size from
	 * Concrete Inputs: read 4·(3211264 + 802816) = 16056320; written 4·1048576 */
	r = ev("aten::cudnn_convolution_backward_weight",
	       "[[], [32, 2048, 7, 7], [32, 512, 7, 7], [], [], [], [], [], [], []]", ti,
	       "[\"[2048, 512, 1, 1]\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_CONVOLUTION, 3288334336ull, 16056320, 4194304);
	CHECK(r.tc_eligible && r.tc_tf32_only);
}

#define SDPA_T \
	"[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Double\", \"Bool\", \"Bool\", \"\"]"
#define QKV "[2, 8, 128, 64], [2, 8, 128, 64], [2, 8, 128, 64]"

TEST(attention)
{
	/* flash SDPA, B 2, H 8, N 128, d 64: 16 heads x 128·128 = 16384 pairs x 2·(64 + 64):
	 * FLOPs 67108864; q, k, v read: 3·2·131072 = 786432; out written 262144 */
	struct perfmodel_result r =
		ev("aten::_scaled_dot_product_flash_attention", "[" QKV ", [], [], [], []]", SDPA_T,
		   "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_ATTENTION, 67108864, 786432, 262144);
	CHECK(r.tc_eligible);
	CHECK_EQ_U(r.dtype, PERFMODEL_DT_BF16);
	/* causal: 128·129/2 = 8256 pairs: 2·16·8256·128 = 33816576 */
	r = ev("aten::_scaled_dot_product_flash_attention", "[" QKV ", [], [], [], []]", SDPA_T,
	       "[\"\", \"\", \"\", \"0.\", \"True\", \"False\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_ATTENTION, 33816576, 786432, 262144);
	r = ev("aten::_scaled_dot_product_flash_attention", "[" QKV ", [], [], [], []]", SDPA_T,
	       NULL);
	CHECK_NONE(r, "is_causal not recorded");
	/* GQA: q [1, 8, 16, 64], k, v [1, 2, 16, 64]: 8 heads x 256 pairs x 256 = 524288 */
	r = ev("aten::_scaled_dot_product_flash_attention",
	       "[[1, 8, 16, 64], [1, 2, 16, 64], [1, 2, 16, 64], [], [], [], []]", SDPA_T,
	       "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_ATTENTION, 524288, 2 * (8192 + 2048 + 2048), 2 * 8192);
	/* causal with different query and key lengths */
	r = ev("aten::_scaled_dot_product_flash_attention",
	       "[[1, 8, 16, 64], [1, 8, 32, 64], [1, 8, 32, 64], [], [], [], []]", SDPA_T,
	       "[\"\", \"\", \"\", \"0.\", \"True\", \"False\", \"\"]");
	CHECK_NONE(r, "causal attention with different query and key lengths");
	/* backward [grad_out, q, k, v, out, logsumexp, cum_q, cum_k, max_q, max_k, dropout,
	 * is_causal, philox_seed, philox_offset, scale]: 16 heads x 16384 pairs x 2·(3·64 +
	 * 2·64) = 167772160; read go, q, k, v, out 5·262144; written dq, dk, dv 3·262144 */
	r = ev("aten::_scaled_dot_product_flash_attention_backward",
	       "[[2, 8, 128, 64], " QKV
	       ", [2, 8, 128, 64], [2, 8, 128], [], [], [], [], [], [], [], [], []]",
	       "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"float\", \"\", \"\", \"Int\", \"Int\", \"Double\", \"Bool\", \"long int\", \"long int\", \"\"]",
	       "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"128\", \"128\", \"0.\", \"False\", \"\", \"\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_ATTENTION, 167772160, 1310720, 786432);
	/* fp32, head dimension 62: 62 % 4 = 2 */
	r = ev("aten::_scaled_dot_product_efficient_attention",
	       "[[1, 1, 4, 62], [1, 1, 4, 62], [1, 1, 4, 62], [], [], [], [], []]",
	       "[\"float\", \"float\", \"float\", \"\", \"Bool\", \"Double\", \"Bool\", \"\"]",
	       "[\"\", \"\", \"\", \"\", \"False\", \"0.\", \"False\", \"\"]");
	CHECK_STR(r.tc_reason, "head dimension not a multiple of 4");
	/* flash_attn's (B, N, H, d) layout: B 1, N 4, H 2, d 8: 2 heads x 16 pairs x 2·16 */
	r = ev("flash_attn::_flash_attn_forward",
	       "[[1, 4, 2, 8], [1, 4, 2, 8], [1, 4, 2, 8], [], [], []]",
	       "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"Double\", \"Double\", \"Bool\"]",
	       "[\"\", \"\", \"\", \"0.\", \"0.35\", \"False\"]");
	CHECK_MODEL(r, PERFMODEL_ATTENTION, 1024, 3 * 128, 128);
	/* _flash_attention_backward, (B, N, H, d) = (1, 4, 2, 8), causal: 4·5/2 = 10 pairs per
	 * head, 2 heads x 10 x 2·(3·8 + 2·8): 1600; read go, q, k, v, out 5·128; written 3·128 */
	r = ev("aten::_flash_attention_backward",
	       "[[1, 4, 2, 8], [1, 4, 2, 8], [1, 4, 2, 8], [1, 4, 2, 8], [1, 4, 2, 8], [1, 2, 4], [], [], [], [], [], [], [], [], []]",
	       "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"c10::Half\", \"c10::Half\", \"float\", \"\", \"\", \"Int\", \"Int\", \"Double\", \"Bool\", \"long int\", \"long int\", \"\"]",
	       "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"4\", \"4\", \"0.\", \"True\", \"\", \"\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_ATTENTION, 1600, 640, 384);
}

TEST(elementwise)
{
	/* ResNet-50: add [32, 2048, 7, 7] + same: n 3211264: FLOPs n, read 8n, written 4n */
	struct perfmodel_result r = ev("aten::add", "[[32, 2048, 7, 7], [32, 2048, 7, 7], []]",
				       "[\"float\", \"float\", \"Int\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 3211264, 25690112, 12845056);
	CHECK(!r.tc_eligible && !r.tc_reason);
	/* mtia: add_ [1024, 96, 15] += [15] (broadcast, in place): n 1474560; read
	 * 4·(1474560 + 15); written 4·1474560 */
	r = ev("aten::add_", "[[1024, 96, 15], [15], []]", "[\"float\", \"float\", \"Scalar\"]",
	       NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 1474560, 5898300, 5898240);
	/* relu_ [32, 64, 112, 112]: n 25690112, in place */
	r = ev("aten::relu_", "[[32, 64, 112, 112]]", "[\"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 25690112, 102760448, 102760448);
	/* div by a 0-d long tensor: one more element of 8 bytes read; float out */
	r = ev("aten::div", "[[32, 2048, 7, 7], []]", "[\"float\", \"long int\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 3211264, 12845064, 12845056);
	/* mul_ [64] by a 0-d double: read 256 + 8, written 256 */
	r = ev("aten::mul_", "[[64], []]", "[\"float\", \"double\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 64, 264, 256);
	/* eq of two long [1024]: bool out: read 16384, written 1024 */
	r = ev("aten::eq", "[[1024], [1024]]", "[\"long\", \"long\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 1024, 16384, 1024);
	/* broadcast [4, 1, 3] x [5, 1] -> [4, 5, 3] = 60: read 2·(12 + 5), written 2·60 */
	r = ev("aten::mul", "[[4, 1, 3], [5, 1]]", "[\"c10::Half\", \"c10::Half\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 60, 34, 120);
	r = ev("aten::add", "[[3], [4], []]", "[\"float\", \"float\", \"Int\"]", NULL);
	CHECK_NONE(r, "shapes do not broadcast");
	r = ev("aten::add_", "[[1], [4], []]", "[\"float\", \"float\", \"Int\"]", NULL);
	CHECK_NONE(r, "in-place operand smaller than the broadcast shape");
	/* mtia: addcdiv_ [49] x3: 3 FLOPs per element: 147; read 3·196; written 196 */
	r = ev("aten::addcdiv_", "[[49], [49], [49], []]",
	       "[\"float\", \"float\", \"float\", \"Scalar\"]",
	       "[\"\", \"\", \"\", \"-4.3996000000000004e-05\"]");
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 147, 588, 196);
	/* mtia: where(bool [1024], long [1024], long [1024]): long out: read 1024 + 2·8192,
	 * written 8192 */
	r = ev("aten::where", "[[1024], [1024], [1024]]", "[\"bool\", \"long\", \"long\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 1024, 17408, 8192);
	/* mtia: where(bool [1024], 0-d float, 0-d float): the condition takes no part in the
	 * promotion: float out; with two unrecorded Scalars: not known */
	r = ev("aten::where", "[[1024], [], []]", "[\"bool\", \"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 1024, 1032, 4096);
	r = ev("aten::where", "[[1024], [], []]", "[\"bool\", \"Scalar\", \"Scalar\"]", NULL);
	CHECK_NONE(r, "output dtype not recorded");
	/* mtia: clamp with scalar bounds */
	r = ev("aten::clamp", "[[1024, 64], [], []]", "[\"float\", \"Scalar\", \"Scalar\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 65536, 262144, 262144);
	/* type promotion of the output: half with float gives float (read 2·4 + 4·4, written
	 * 4·4); half with bfloat16 gives float; integer true division gives float; an integer
	 * times a floating Scalar gives the default float32; two longs stay long */
	r = ev("aten::mul", "[[4], [4]]", "[\"c10::Half\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 4, 24, 16);
	r = ev("aten::mul", "[[4], [4]]", "[\"c10::Half\", \"c10::BFloat16\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 4, 16, 16);
	r = ev("aten::div", "[[1024], [1024]]", "[\"long\", \"long\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 1024, 16384, 4096);
	r = ev("aten::div", "[[1024], [1024], []]", "[\"long\", \"long\", \"str\"]",
	       "[\"\", \"\", \"floor\"]");
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 1024, 16384, 8192);
	r = ev("aten::mul", "[[4], []]", "[\"long\", \"Scalar\"]", "[\"\", \"0.5\"]");
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 4, 32, 16);
	r = ev("aten::mul", "[[4], []]", "[\"long\", \"Scalar\"]", "[\"\", \"3\"]");
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 4, 32, 32);
	r = ev("aten::mul", "[[4], []]", "[\"long\", \"Scalar\"]", NULL);
	CHECK_NONE(r, "output dtype not recorded");
	r = ev("aten::mul", "[[4], []]", "[\"long\", \"double\"]", NULL);
	CHECK_NONE(r, "output dtype not recorded");
	r = ev("aten::add", "[[4], [4], []]", "[\"long\", \"long\", \"Scalar\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 4, 64, 32);
	/* mtia: pow(0.9, long 0-d): float32 */
	r = ev("aten::pow", "[[], []]", "[\"Scalar\", \"long\"]",
	       "[\"0.90000000000000002\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 1, 8, 4);
	/* max(a, b) is elementwise */
	r = ev("aten::max", "[[4], [4]]", "[\"float\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 4, 32, 16);
}

TEST(copies)
{
	/* ResNet-50: copy_ [32, 3, 224, 224]: 4816896 elements of 4 bytes each way, no FLOPs */
	struct perfmodel_result r = ev("aten::copy_", "[[32, 3, 224, 224], [32, 3, 224, 224], []]",
				       "[\"float\", \"float\", \"Bool\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 0, 19267584, 19267584);
	/* a conversion: half <- float [10]: read 40, written 20 */
	r = ev("aten::copy_", "[[10], [10], []]", "[\"c10::Half\", \"float\", \"Bool\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 0, 40, 20);
	/* mtia: clone [1024, 96, 50]: 4915200·4 each way */
	r = ev("aten::clone", "[[1024, 96, 50], []]", "[\"float\", \"Scalar\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 0, 19660800, 19660800);
	/* _to_copy to dtype 5 (half): read 40, written 20 */
	r = ev("aten::_to_copy", "[[10], [], [], [], [], [], []]",
	       "[\"float\", \"Scalar\", \"\", \"\", \"\", \"Scalar\", \"\"]",
	       "[\"\", \"5\", \"\", \"\", \"\", \"False\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 0, 40, 20);
	/* mtia: _to_copy with no Concrete Inputs: the target dtype is not known */
	r = ev("aten::_to_copy", "[[951, 1024], [], [], [], [], [], []]",
	       "[\"int\", \"Scalar\", \"Scalar\", \"\", \"\", \"Scalar\", \"\"]", NULL);
	CHECK_NONE(r, "target dtype not recorded");
	/* to.dtype to the same dtype may return its input */
	r = ev("aten::to", "[[10], [], [], [], []]",
	       "[\"float\", \"Scalar\", \"Scalar\", \"Scalar\", \"\"]",
	       "[\"\", \"6\", \"False\", \"False\", \"\"]");
	CHECK_NONE(r, "aten::to without a dtype change (a no-op or a device copy)");
	r = ev("aten::to", "[[10], [], [], [], []]",
	       "[\"float\", \"Scalar\", \"Scalar\", \"Scalar\", \"\"]",
	       "[\"\", \"15\", \"False\", \"False\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 0, 40, 20);
	/* mtia: contiguous may or may not copy */
	r = ev("aten::contiguous", "[[1024, 128, 21], []]", "[\"float\", \"Scalar\"]",
	       "[\"\", \"0\"]");
	CHECK_NONE(r, "contiguous copies only when needed (its aten::clone child is modelled)");
	/* fill_ [64]: written only */
	r = ev("aten::fill_", "[[64], []]", "[\"float\", \"Int\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 0, 0, 256);
}

TEST(foreach_and_fused)
{
	/* _foreach_add_(list, list, alpha) over [10] and [20, 3]: 70 elements: FLOPs 70; read
	 * 4·140; written 4·70 */
	struct perfmodel_result r =
		ev("aten::_foreach_add_", "[[[10], [20, 3]], [[10], [20, 3]], []]",
		   "[\"float\", \"float\", \"Scalar\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 70, 560, 280);
	r = ev("aten::_foreach_add_", "[[[10], [20, 3]], [[10], [20, 3]], []]",
	       "[\"TensorList\", \"TensorList\", \"Scalar\"]", NULL);
	CHECK_NONE(r, "dtype of the tensor list not recorded");
	/* list sizes not recorded (older torch writes "[]" for a list) */
	r = ev("aten::_foreach_mul_", "[[], []]", "[\"TensorList\", \"Scalar\"]", NULL);
	CHECK_NONE(r, "tensor list sizes not recorded");
	/* _foreach_sqrt (out of place) over 4 + 6: FLOPs 10; read 40; written 40 */
	r = ev("aten::_foreach_sqrt", "[[[4], [6]]]", "[\"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 10, 40, 40);
	/* _foreach_addcdiv_ over [8] x 3 lists: 3 FLOPs per element: 24; read 96; written 32 */
	r = ev("aten::_foreach_addcdiv_", "[[[8]], [[8]], [[8]], []]",
	       "[\"float\", \"float\", \"float\", \"Scalar\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 24, 96, 32);
	/* _fused_adam_ over params of 100 + 50: 13·150 = 1950 FLOPs; params, grads, exp_avgs,
	 * exp_avg_sqs read 4·4·150 = 2400; params, exp_avgs, exp_avg_sqs written 4·3·150 */
	r = ev("aten::_fused_adam_",
	       "[[[100], [50]], [[100], [50]], [[100], [50]], [[100], [50]], [], [[], []], [], [], [], [], [], [], [], [], []]",
	       "[\"float\", \"float\", \"float\", \"float\", \"TensorList\", \"TensorList\", \"Double\", \"Double\", \"Double\", \"Double\", \"Double\", \"Bool\", \"Bool\", \"\", \"\"]",
	       NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 1950, 2400, 1800);
	/* _foreach_zero_: written only */
	r = ev("aten::_foreach_zero_", "[[[4], [6]]]", "[\"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 0, 0, 40);
	r = ev("aten::_foreach_add_", "[[[10], [20, 3]], [[10]], []]",
	       "[\"float\", \"float\", \"Scalar\"]", NULL);
	CHECK_NONE(r, "tensor lists of different lengths");
}

TEST(reductions)
{
	/* mtia: sum [1024, 40] with dim None (type ""): everything: FLOPs 40960, read 163840,
	 * written 4 */
	struct perfmodel_result r = ev("aten::sum", "[[1024, 40], [], [], []]",
				       "[\"float\", \"\", \"Scalar\", \"\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 40960, 163840, 4);
	/* mtia: sum(x, dtype=None) [979, 1024] int: 1002496 elements; an integer sum is int64 */
	r = ev("aten::sum", "[[979, 1024], []]", "[\"int\", \"\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 1002496, 4009984, 8);
	/* the dtype argument not recorded */
	r = ev("aten::sum", "[[979, 1024], []]", "[\"int\", \"Scalar\"]", NULL);
	CHECK_NONE(r, "output dtype not recorded");
	/* argmax writes int64, any bool */
	r = ev("aten::argmax", "[[4, 5], [], []]", "[\"float\", \"Scalar\", \"Scalar\"]",
	       "[\"\", \"1\", \"False\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 20, 80, 32);
	r = ev("aten::any", "[[4, 5]]", "[\"bool\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 20, 20, 1);
	/* sum(x, dtype=float): the 6 is a dtype, not a dim (two arguments) */
	r = ev("aten::sum", "[[979, 1024], []]", "[\"int\", \"Scalar\"]", "[\"\", \"6\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 1002496, 4009984, 4);
	/* ResNet-50: mean over a GenericList that was not recorded */
	const char *d = "[[32, 2048, 7, 7], [], [], []]";
	const char *t = "[\"float\", \"GenericList\", \"Bool\", \"\"]";
	r = ev("aten::mean", d, t, NULL);
	CHECK_NONE(r, "reduced dimensions not recorded");
	/* dims [-1, -2]: 32·2048 = 65536 outputs: FLOPs 3211264; read 12845056; written
	 * 262144; the same with the output hint */
	r = ev("aten::mean", d, t, "[\"\", \"[-1, -2]\", \"True\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 3211264, 12845056, 262144);
	r = ev_hint("aten::mean", d, t, NULL, "32, 2048, 1, 1");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 3211264, 12845056, 262144);
	r = ev("aten::mean", d, t, "[\"\", \"[4]\", \"True\", \"\"]");
	CHECK_NONE(r, "reduced dimension out of range");
	/* mtia: max.dim [1, 1] over dim 0: one value and one int64 index */
	r = ev("aten::max", "[[1, 1], [], []]", "[\"long\", \"Scalar\", \"Scalar\"]",
	       "[\"\", \"0\", \"False\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 1, 8, 16);
	/* max(x): the value only */
	r = ev("aten::max", "[[4, 5]]", "[\"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 20, 80, 4);
	/* mtia: linalg_vector_norm [49], ord 2, dim None: 2 FLOPs per element */
	r = ev("aten::linalg_vector_norm", "[[49], [], [], [], []]",
	       "[\"float\", \"Scalar\", \"\", \"Scalar\", \"\"]",
	       "[\"\", \"2.\", \"\", \"False\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 98, 196, 4);
	/* mtia: cumsum [6144] int to dtype 3 (int32): one output per input */
	r = ev("aten::cumsum", "[[6144], [], []]", "[\"int\", \"Scalar\", \"Scalar\"]",
	       "[\"\", \"0\", \"3\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 6144, 24576, 24576);
	/* mtia: its out= variant: the out tensor's dtype */
	r = ev("aten::cumsum", "[[6144], [], [], [6144]]",
	       "[\"int\", \"Scalar\", \"Scalar\", \"int\"]", "[\"\", \"0\", \"3\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 6144, 24576, 24576);
	/* cumsum of int with dtype None: int64 out */
	r = ev("aten::cumsum", "[[6144], [], []]", "[\"int\", \"Scalar\", \"\"]",
	       "[\"\", \"0\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 6144, 24576, 49152);
}

TEST(softmax)
{
	/* ResNet-50: _log_softmax [32, 1000]: 5 FLOPs per element: 160000; 128000 each way */
	struct perfmodel_result r = ev("aten::_log_softmax", "[[32, 1000], [], []]",
				       "[\"float\", \"Int\", \"Bool\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 160000, 128000, 128000);
	/* half_to_float: [8, 16] half in (256 bytes), float out (512) */
	r = ev("aten::_softmax", "[[8, 16], [], []]", "[\"c10::Half\", \"Int\", \"Bool\"]",
	       "[\"\", \"-1\", \"True\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 640, 256, 512);
	/* softmax(x, dim, dtype=float) of half [8, 16]: float out; not recorded: no model */
	r = ev("aten::softmax", "[[8, 16], [], []]", "[\"c10::Half\", \"Int\", \"Int\"]",
	       "[\"\", \"-1\", \"6\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 640, 256, 512);
	r = ev("aten::log_softmax", "[[32, 1000], [], []]", "[\"float\", \"Int\", \"Int\"]", NULL);
	CHECK_NONE(r, "output dtype not recorded");
	/* ResNet-50: _log_softmax_backward_data [grad, output, dim, self]: 4 FLOPs per element;
	 * two tensors read */
	r = ev("aten::_log_softmax_backward_data", "[[32, 1000], [32, 1000], [], [32, 1000]]",
	       "[\"float\", \"float\", \"Int\", \"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 128000, 256000, 128000);
}

TEST(pooling)
{
	const char *d = "[[32, 64, 112, 112], [], [], [], [], []]";
	const char *t =
		"[\"float\", \"GenericList\", \"GenericList\", \"GenericList\", \"GenericList\", \"Bool\"]";
	struct perfmodel_result r = ev("aten::max_pool2d_with_indices", d, t, NULL);
	CHECK_NONE(r, "kernel size not recorded");
	/* 3x3, stride 2, padding 1: out floor((112 + 2 - 2 - 1)/2) + 1 = 56; 32·64·3136 =
	 * 6422528 outputs of 9 comparisons: 57802752 FLOPs; read 4·25690112; written
	 * (4 + 8)·6422528 = 77070336 (values and int64 indices) */
	r = ev("aten::max_pool2d_with_indices", d, t,
	       "[\"\", \"[3, 3]\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"False\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 57802752, 102760448, 77070336);
	/* ResNet-50: its backward [grad_output, input, ..., indices]: one addition per output
	 * gradient; grad_output and indices read, grad_input written */
	r = ev("aten::max_pool2d_with_indices_backward",
	       "[[32, 64, 56, 56], [32, 64, 112, 112], [], [], [], [], [], [32, 64, 56, 56]]",
	       "[\"float\", \"float\", \"GenericList\", \"GenericList\", \"GenericList\", \"GenericList\", \"Bool\", \"long int\"]",
	       NULL);
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 6422528, 77070336, 102760448);
	/* ResNet-50: adaptive_avg_pool2d [32, 2048, 7, 7] to 1x1: 65536 windows of 49 */
	r = ev("aten::adaptive_avg_pool2d", "[[32, 2048, 7, 7], []]",
	       "[\"float\", \"GenericList\"]", NULL);
	CHECK_NONE(r, "output_size not recorded");
	r = ev("aten::adaptive_avg_pool2d", "[[32, 2048, 7, 7], []]",
	       "[\"float\", \"GenericList\"]", "[\"\", \"[1, 1]\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 3211264, 12845056, 262144);
	r = ev_hint("aten::adaptive_avg_pool2d", "[[32, 2048, 7, 7], []]",
		    "[\"float\", \"GenericList\"]", NULL, "32, 2048, 1, 1");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 3211264, 12845056, 262144);
	/* adaptive 5 -> 3: windows [0, 2), [1, 4), [3, 5): 2 + 3 + 2 = 7 */
	r = ev("aten::adaptive_avg_pool1d", "[[1, 1, 5], []]", "[\"float\", \"GenericList\"]",
	       "[\"\", \"[3]\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 7, 20, 12);
	/* avg_pool2d 2x2, stride [] (= kernel): [1, 3, 8, 8] -> 4x4: 48 outputs x 4 */
	r = ev("aten::avg_pool2d", "[[1, 3, 8, 8], [], [], [], [], [], []]",
	       "[\"float\", \"GenericList\", \"GenericList\", \"GenericList\", \"Bool\", \"Bool\", \"\"]",
	       "[\"\", \"[2, 2]\", \"[]\", \"[0, 0]\", \"False\", \"True\", \"\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 192, 768, 192);
	/* ceil mode: 5 with 2x2 stride 2: (5 - 1 - 1 + 1)/2 + 1 = 3 (floor mode: 2): 9 outputs
	 * x 4 */
	r = ev("aten::max_pool2d", "[[1, 1, 5, 5], [], [], [], [], []]", t,
	       "[\"\", \"[2, 2]\", \"[2, 2]\", \"[0, 0]\", \"[1, 1]\", \"True\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 36, 100, 36);
	r = ev("aten::max_pool2d", "[[1, 1, 5, 5], [], [], [], [], []]", t,
	       "[\"\", \"[2, 2]\", \"[2, 2]\", \"[0, 0]\", \"[1, 1]\", \"False\"]");
	CHECK_MODEL(r, PERFMODEL_REDUCTION, 16, 100, 16);
}

TEST(normalization)
{
	/* mtia: native_layer_norm [1024, 512], weight and bias [512]: N 524288, C 512. FLOPs
	 * 6·512 + 2N + 3N = 2624512; read 4·(524288 + 1024) = 2101248; written y, mean and rstd
	 * (1024 rows each): 4·(524288 + 2048) = 2105344 */
	struct perfmodel_result r =
		ev("aten::native_layer_norm", "[[1024, 512], [], [512], [512], []]",
		   "[\"float\", \"\", \"float\", \"float\", \"Scalar\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_NORMALIZATION, 2624512, 2101248, 2105344);
	r = ev("aten::layer_norm", "[[1024, 512], [], [512], [512], [], []]",
	       "[\"float\", \"\", \"float\", \"float\", \"Scalar\", \"Scalar\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_NORMALIZATION, 2624512, 2101248, 2097152);
	r = ev("aten::layer_norm", "[[1024, 512], [], [], [], [], []]",
	       "[\"float\", \"\", \"\", \"\", \"Scalar\", \"Scalar\"]", NULL);
	CHECK_NONE(r, "normalized_shape not recorded");
	/* mtia: native_layer_norm_backward: E = 512: 4N + 5N = 4718592; read go, x, mean, rstd,
	 * weight: 4·(2·524288 + 2·1024 + 512) = 4204544; written dx, dw, db: 4·(524288 + 1024) */
	r = ev("aten::native_layer_norm_backward",
	       "[[1024, 512], [1024, 512], [], [1024, 1], [1024, 1], [512], [512], []]",
	       "[\"float\", \"float\", \"\", \"float\", \"float\", \"float\", \"float\", \"\"]",
	       NULL);
	CHECK_MODEL(r, PERFMODEL_NORMALIZATION, 4718592, 4204544, 2101248);
	/* ResNet-50: cudnn_batch_norm [32, 64, 112, 112], no Concrete Inputs */
	const char *d = "[[32, 64, 112, 112], [64], [64], [64], [64], [], [], []]";
	const char *t =
		"[\"float\", \"float\", \"float\", \"float\", \"float\", \"Bool\", \"Double\", \"Double\"]";
	r = ev("aten::cudnn_batch_norm", d, t, NULL);
	CHECK_NONE(r, "training flag not recorded");
	/* training: N 25690112, C 64: FLOPs 384 + 5N = 128450944; read 4·(N + 2·64 + 2·64) =
	 * 102761472; written y 4N, running stats 512, saved mean/invstd 512 = 102761472 */
	r = ev("aten::cudnn_batch_norm", d, t,
	       "[\"\", \"\", \"\", \"\", \"\", \"True\", \"0.1\", \"1e-05\"]");
	CHECK_MODEL(r, PERFMODEL_NORMALIZATION, 128450944, 102761472, 102761472);
	/* inference: 384 + 2N = 51380608; written y only */
	r = ev("aten::cudnn_batch_norm", d, t,
	       "[\"\", \"\", \"\", \"\", \"\", \"False\", \"0.1\", \"1e-05\"]");
	CHECK_MODEL(r, PERFMODEL_NORMALIZATION, 51380608, 102761472, 102760448);
	/* ResNet-50: cudnn_batch_norm_backward [x, go, w, rm, rv, save_mean, save_var, eps,
	 * reserve]: N 3211264, C 2048: 9N = 28901376; read 8N + 3·2048·4 = 25714688; written
	 * 4N + 2·2048·4 = 12861440 */
	r = ev("aten::cudnn_batch_norm_backward",
	       "[[32, 2048, 7, 7], [32, 2048, 7, 7], [2048], [2048], [2048], [2048], [2048], [], [0]]",
	       "[\"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"Double\", \"unsigned char\"]",
	       NULL);
	CHECK_MODEL(r, PERFMODEL_NORMALIZATION, 28901376, 25714688, 12861440);
	/* group_norm [2, 32, 8, 8], 8 groups: N 4096, C 32: 192 + 5·4096 = 20672; read
	 * 4·(4096 + 64); written 4·4096; native_group_norm also writes mean and rstd (2·8 each) */
	r = ev("aten::group_norm", "[[2, 32, 8, 8], [], [32], [32], [], []]",
	       "[\"float\", \"Int\", \"float\", \"float\", \"Double\", \"Bool\"]",
	       "[\"\", \"8\", \"\", \"\", \"1e-05\", \"True\"]");
	CHECK_MODEL(r, PERFMODEL_NORMALIZATION, 20672, 16640, 16384);
	r = ev("aten::native_group_norm", "[[2, 32, 8, 8], [32], [32], [], [], [], [], []]",
	       "[\"float\", \"float\", \"float\", \"Int\", \"Int\", \"Int\", \"Int\", \"Double\"]",
	       "[\"\", \"\", \"\", \"2\", \"32\", \"64\", \"8\", \"1e-05\"]");
	CHECK_MODEL(r, PERFMODEL_NORMALIZATION, 20672, 16640, 16512);
	r = ev("aten::group_norm", "[[2, 32, 8, 8], [], [32], [32], [], []]",
	       "[\"float\", \"Int\", \"float\", \"float\", \"Double\", \"Bool\"]",
	       "[\"\", \"5\", \"\", \"\", \"1e-05\", \"True\"]");
	CHECK_NONE(r, "num_groups does not divide the channels");
}

TEST(embedding)
{
	/* embedding weight [1000, 64], indices [8, 16] long: 128 rows of 64 floats: 32768
	 * bytes read and written, + 1024 bytes of indices read */
	struct perfmodel_result r =
		ev("aten::embedding", "[[1000, 64], [8, 16], [], [], []]",
		   "[\"float\", \"long int\", \"Int\", \"Bool\", \"Bool\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_OTHER, 0, 33792, 32768);
	/* embedding_dense_backward grad [8, 16, 64], 1000 weights: 8192 additions; grad and
	 * indices read; the 1000 x 64 gradient written */
	r = ev("aten::embedding_dense_backward", "[[8, 16, 64], [8, 16], [], [], []]",
	       "[\"float\", \"long int\", \"Int\", \"Int\", \"Bool\"]",
	       "[\"\", \"\", \"1000\", \"-1\", \"False\"]");
	CHECK_MODEL(r, PERFMODEL_OTHER, 8192, 33792, 256000);
	r = ev("aten::embedding_dense_backward", "[[8, 16, 64], [8, 16], [], [], []]",
	       "[\"float\", \"long int\", \"Int\", \"Int\", \"Bool\"]", NULL);
	CHECK_NONE(r, "num_weights not recorded");
}

TEST(no_work_and_no_model)
{
	static const char *const views[] = { "aten::view",	 "aten::t",	  "aten::transpose",
					     "aten::as_strided", "aten::empty",	  "aten::resize_",
					     "aten::detach",	 "aten::slice",	  "aten::flatten",
					     "aten::unsqueeze",	 "aten::permute", "aten::reshape" };
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		struct perfmodel_result r = ev(views[i], "[[1000, 2048], [], []]",
					       "[\"float\", \"Int\", \"Int\"]", NULL);
		CHECK_NONE(r, "no work (a view or allocation)");
	}
	struct perfmodel_result r = ev("aten::cat", "[[], []]", "[\"TensorList\", \"Int\"]", NULL);
	CHECK_NONE(r, "no model for this operator");
	/* a trailing '_' does not make a no-work row or a non-elementwise row match */
	r = ev("aten::view_", "[[4]]", "[\"float\"]", NULL);
	CHECK_NONE(r, "no model for this operator");
	r = ev("aten::mm_", "[[4, 4], [4, 4]]", "[\"float\", \"float\"]", NULL);
	CHECK_NONE(r, "no model for this operator");
	r = ev("", "[]", NULL, NULL);
	CHECK_NONE(r, "no model for this operator");
	/* no types: an unknown dtype where bytes are needed */
	r = ev("aten::relu", "[[4]]", NULL, NULL);
	CHECK_NONE(r, "unknown dtype");
}

TEST(parser_real_texts)
{
	const char *why = NULL;
	/* ResNet-50 aten::_convolution */
	REQUIRE(perfmodel_parse_inputs(
		&call_,
		"[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], [], [], [], [], []]",
		"[\"float\", \"float\", \"\", \"GenericList\", \"GenericList\", \"GenericList\", \"Bool\", \"GenericList\", \"Int\", \"Bool\", \"Bool\", \"Bool\", \"Bool\"]",
		NULL, scratch_, sizeof(scratch_), &why));
	CHECK_EQ_I(call_.ninputs, 13);
	CHECK_EQ_I(call_.in[0].ndims, 4);
	CHECK_EQ_I(call_.in[0].dims[3], 224);
	CHECK_EQ_I(call_.in[2].ndims, 0);
	CHECK_STR(call_.in[2].dtype, "");
	CHECK_STR(call_.in[12].dtype, "Bool");
	CHECK(call_.in[0].value == NULL);
	CHECK_EQ_I(call_.out_ndims, -1);
	/* mtia: addcdiv with Concrete Inputs */
	REQUIRE(perfmodel_parse_inputs(&call_, "[[49], [49], [49], [], [49]]",
				       "[\"float\", \"float\", \"float\", \"Scalar\", \"float\"]",
				       "[\"\", \"\", \"\", \"-4.3996000000000004e-05\", \"\"]",
				       scratch_, sizeof(scratch_), &why));
	CHECK_STR(call_.in[3].value, "-4.3996000000000004e-05");
	CHECK_STR(call_.in[0].value, "");
	/* white space anywhere between tokens */
	REQUIRE(perfmodel_parse_inputs(&call_, " \n[ [ 1 ,2 ] ,\t[ ] ]\r\n", " [ \"a\" , \"b\" ] ",
				       NULL, scratch_, sizeof(scratch_), &why));
	CHECK_EQ_I(call_.ninputs, 2);
	CHECK_EQ_I(call_.in[0].dims[1], 2);
	CHECK_STR(call_.in[1].dtype, "b");
	/* no inputs */
	REQUIRE(perfmodel_parse_inputs(&call_, "[]", "[]", "[]", scratch_, sizeof(scratch_), &why));
	CHECK_EQ_I(call_.ninputs, 0);
	/* a TensorList: 10 + 20·3 = 70 elements, two shapes kept */
	REQUIRE(perfmodel_parse_inputs(&call_, "[[[10], [20, 3], []], []]", NULL, NULL, scratch_,
				       sizeof(scratch_), &why));
	CHECK_EQ_I(call_.in[0].ndims, PERFMODEL_TENSOR_LIST);
	CHECK_EQ_U(call_.in[0].list_len, 3);
	CHECK_EQ_U(call_.in[0].list_numel, 71); /* the 0-d tensor is one element */
	CHECK_EQ_I(call_.in[0].list_ndims[1], 2);
	CHECK_EQ_I(call_.in[0].list_dims[1][1], 3);
	CHECK_EQ_I(call_.in[1].ndims, 0);
	/* JSON escapes: \" \\ \n, é (2 bytes), U+1F600 from a surrogate pair (4 bytes) */
	REQUIRE(perfmodel_parse_inputs(&call_, "[[], []]", NULL,
				       "[\"a\\\"b\\\\c\\n\", \"\\u00e9\\ud83d\\ude00\"]", scratch_,
				       sizeof(scratch_), &why));
	CHECK_STR(call_.in[0].value, "a\"b\\c\n");
	CHECK_STR(call_.in[1].value, "\xc3\xa9\xf0\x9f\x98\x80");
}

/* The parse fails with this reason. */
static void expect_bad(const char *dims, const char *types, const char *conc, size_t scratch_len,
		       const char *why)
{
	const char *got = NULL;
	bool ok = perfmodel_parse_inputs(&call_, dims, types, conc, scratch_, scratch_len, &got);
	CHECK(!ok);
	CHECK_STR(got, why);
	CHECK_EQ_I(call_.ninputs, 0);
}

TEST(parser_malformed)
{
	size_t n = sizeof(scratch_);
	expect_bad("[[1, 2]", NULL, NULL, n, "Input Dims: expected ',' or ']'");
	expect_bad("[[1, 2]]]", NULL, NULL, n, "Input Dims: text after the list");
	expect_bad("[[1,,2]]", NULL, NULL, n, "a dimension is not a number");
	expect_bad("[[1, 2.5]]", NULL, NULL, n, "Input Dims: expected ',' or ']'");
	expect_bad("", NULL, NULL, n, "Input Dims is not a list");
	expect_bad(NULL, NULL, NULL, n, "no Input Dims");
	expect_bad("[1]", NULL, NULL, n, "Input Dims: an input is not a list");
	expect_bad("[[99999999999999999999]]", NULL, NULL, n, "a dimension does not fit 64 bits");
	expect_bad("[[9223372036854775808]]", NULL, NULL, n, "a dimension does not fit 64 bits");
	expect_bad("[[1, 2, 3, 4, 5, 6, 7, 8, 9]]", NULL, NULL, n, "too many dimensions");
	expect_bad("[[[[1]]]]", NULL, NULL, n, "a dimension is not a number");
	expect_bad("[[[1], 2]]", NULL, NULL, n,
		   "Input Dims: a tensor list holds something else than shapes");
	expect_bad("[[[-1]]]", NULL, NULL, n, "negative dimension in a tensor list");
	expect_bad("[[[1048576, 1048576], [1]]]", NULL, NULL, n,
		   "tensor list of more than 2^40 elements");
	/* 33 inputs */
	char many[256] = "[";
	for (int i = 0; i < 33; i++)
		strcat(many, i ? ", []" : "[]");
	strcat(many, "]");
	expect_bad(many, NULL, NULL, n, "too many inputs");
	/* types and concrete inputs */
	expect_bad("[[1], [2]]", "[\"float\"]", NULL, n,
		   "Input type has fewer entries than Input Dims");
	expect_bad("[[1]]", "[\"float\", \"float\"]", NULL, n,
		   "Input type has more entries than Input Dims");
	expect_bad("[[1]]", "[\"float]", NULL, n, "unterminated string");
	expect_bad("[[1]]", "[float]", NULL, n, "expected a string");
	expect_bad("[[1]]", "[\"a\\x\"]", NULL, n, "bad escape in a string");
	expect_bad("[[1]]", "[\"\\u12\"]", NULL, n, "bad \\u escape in a string");
	expect_bad("[[1]]", "[\"\\udc00\"]", NULL, n, "bad \\u escape in a string");
	expect_bad("[[1]]", "[\"\\ud800x\"]", NULL, n, "bad \\u escape in a string");
	expect_bad("[[1]]", "[\"\\u0000\"]", NULL, n, "NUL in a string");
	expect_bad("[[1]]", "[\"a\tb\"]", NULL, n, "control character in a string");
	expect_bad("[[1]]", "[\"float\"] x", NULL, n, "Input type is not a list of strings");
	expect_bad("[[1]]", NULL, "[\"\", \"1\"]", n,
		   "Concrete Inputs has more entries than Input Dims");
	expect_bad("[[1]]", NULL, "[\"", n, "unterminated string");
	/* scratch: "float" needs 6 bytes */
	expect_bad("[[1]]", "[\"float\"]", NULL, 5, "scratch too small for the input texts");
	expect_bad("[[1]]", "[\"float\"]", NULL, 0, "scratch too small for the input texts");
	const char *why = NULL;
	CHECK(perfmodel_parse_inputs(&call_, "[[1]]", "[\"float\"]", NULL, scratch_, 6, &why));
}

TEST(bad_dimensions_and_overflow)
{
	/* a negative dimension parses but is no model */
	struct perfmodel_result r = ev("aten::relu", "[[-3, 4]]", "[\"float\"]", NULL);
	CHECK_NONE(r, "negative dimension");
	/* 2^40 elements is the limit: 2^41 is absurd */
	r = ev("aten::relu", "[[1048576, 1048576]]", "[\"float\"]", NULL);
	CHECK_MODEL(r, PERFMODEL_ELEMENTWISE, 1099511627776ull, 4398046511104ull, 4398046511104ull);
	r = ev("aten::relu", "[[1048576, 2097152]]", "[\"float\"]", NULL);
	CHECK_NONE(r, "tensor of more than 2^40 elements");
	/* a product past 2^64: matmul of [2^20, 1, 2^20, 1] and [2^20, 1, 2^20]: batch 2^40, M
	 * and N 2^20 each, K 1: 2^81 FLOPs */
	r = ev("aten::matmul", "[[1048576, 1, 1048576, 1], [1048576, 1, 1048576]]",
	       "[\"float\", \"float\"]", NULL);
	CHECK_NONE(r, "a count overflows 64 bits");
	/* an output hint with a negative size */
	r = ev_hint("aten::cudnn_convolution",
		    "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []]", CONV_T, NULL,
		    "1, 4, -6, 6");
	CHECK_NONE(r, "output hint out of range");
	/* an unknown dtype where bytes are needed */
	r = ev("aten::mm", "[[4, 4], [4, 4]]", "[\"c10::complex<c10::BFloat16>\", \"float\"]",
	       NULL);
	CHECK_NONE(r, "unknown dtype");
	r = ev("aten::mm", "[[4, 4], [4, 4]]", "[\"float\", \"c10::complex<c10::BFloat16>\"]",
	       NULL);
	CHECK_NONE(r, "unknown dtype");
	/* a call filled in by hand with nonsense */
	struct perfmodel_call c;
	memset(&c, 0, sizeof(c));
	c.name = "aten::relu";
	c.ninputs = 99;
	perfmodel_eval(&c, &r);
	CHECK_NONE(r, "too many inputs");
	c.ninputs = 1;
	c.in[0].ndims = 12;
	c.in[0].dtype = "float";
	perfmodel_eval(&c, &r);
	CHECK_NONE(r, "bad number of dimensions");
}

TEST(tensor_cores)
{
	struct perfmodel_result r;
	/* fp16 64x128x256: multiples of 8 */
	r = ev("aten::mm", "[[64, 128], [128, 256]]", "[\"c10::Half\", \"c10::Half\"]", NULL);
	CHECK(r.tc_eligible && !r.tc_tf32_only && !r.tc_reason);
	CHECK_EQ_U(r.dtype, PERFMODEL_DT_FP16);
	r = ev("aten::mm", "[[64, 100], [100, 256]]", "[\"c10::Half\", \"c10::Half\"]", NULL);
	CHECK(!r.tc_eligible);
	CHECK_STR(r.tc_reason, "K not a multiple of 8");
	r = ev("aten::mm", "[[64, 128], [128, 36]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]",
	       NULL);
	CHECK_STR(r.tc_reason, "N not a multiple of 8");
	/* int8 and fp8: multiples of 16 */
	r = ev("aten::mm", "[[32, 32], [32, 16]]", "[\"signed char\", \"signed char\"]", NULL);
	CHECK(r.tc_eligible);
	r = ev("aten::mm", "[[24, 32], [32, 16]]",
	       "[\"c10::Float8_e4m3fn\", \"c10::Float8_e4m3fn\"]", NULL);
	CHECK_STR(r.tc_reason, "M not a multiple of 16");
	/* fp32: TF32 with multiples of 4 */
	r = ev("aten::mm", "[[12, 20], [20, 4]]", "[\"float\", \"float\"]", NULL);
	CHECK(r.tc_eligible && r.tc_tf32_only);
	r = ev("aten::mm", "[[12, 20], [20, 4]]", "[\"double\", \"double\"]", NULL);
	CHECK(!r.tc_eligible && !r.tc_tf32_only);
	CHECK_STR(r.tc_reason, "float64");
	CHECK_EQ_U(r.dtype, PERFMODEL_DT_FP64);
	r = ev("aten::mm", "[[12, 20], [20, 4]]", "[\"long int\", \"long int\"]", NULL);
	CHECK_STR(r.tc_reason, "a dtype without tensor cores");
	/* a convolution in fp16 with 3 input channels */
	r = ev_hint(
		"aten::cudnn_convolution",
		"[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]",
		"[\"c10::Half\", \"c10::Half\", \"GenericList\", \"GenericList\", \"GenericList\", \"Int\", \"Bool\", \"Bool\", \"Bool\"]",
		NULL, "32, 64, 112, 112");
	CHECK_STR(r.tc_reason, "C_in/groups not a multiple of 8");
	/* elementwise ops are not matrix ops: no reason */
	r = ev("aten::relu", "[[4]]", "[\"c10::Half\"]", NULL);
	CHECK(!r.tc_eligible && !r.tc_reason);
}

TEST_MAIN(dtypes, gemm_mm_addmm, gemm_bmm_matmul_linear, gemm_einsum, conv_forward, conv_backward,
	  attention, elementwise, copies, foreach_and_fused, reductions, softmax, pooling,
	  normalization, embedding, no_work_and_no_model, parser_real_texts, parser_malformed,
	  bad_dimensions_and_overflow, tensor_cores)
