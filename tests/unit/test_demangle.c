/*
 * test_demangle.c: util/demangle.c on the kernel names CUPTI gave on an H200
 * (tests/data/h200), the forms nvprof and Kineto print for them, and names it must leave
 * alone (plain C names, Kineto's already demangled ones, a broken mangling). Skips the
 * demangling checks where libstdc++ cannot be loaded, after saying so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/demangle.h"

/* demangle_cxx(in) equals want (NULL: left alone) */
static int same(const char *in, const char *want)
{
	char *d = demangle_cxx(in);
	int ok = want ? d && strcmp(d, want) == 0 : d == NULL;
	if (!ok)
		fprintf(stderr, "demangle_cxx(%s) = %s, want %s\n", in ? in : "NULL",
			d ? d : "NULL", want ? want : "NULL");
	free(d);
	return ok;
}

TEST(kernel_names)
{
	if (!demangle_available()) {
		fprintf(stderr, "no libstdc++ demangler here: checks skipped\n");
		return;
	}
	/* scripts/gpu-check/gpu_check.cu's kernels, as nvprof names them */
	CHECK(same("_Z3addPfPKfi", "add(float*, float const*, int)"));
	CHECK(same("_Z5scalePfif", "scale(float*, int, float)"));
	/* a cuBLAS kernel of the H200 training loop, as torch.profiler named it */
	CHECK(same("_ZN7cutlass7Kernel2I41cutlass_80_simt_sgemm_64x64_8x5_tn_align1EEvNT_6ParamsE",
		   "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>("
		   "cutlass_80_simt_sgemm_64x64_8x5_tn_align1::Params)"));
}

TEST(left_alone)
{
	CHECK(same(NULL, NULL));
	CHECK(same("", NULL));
	CHECK(same("gemm_kernel", NULL)); /* extern "C" kernels are not mangled */
	CHECK(same("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8", NULL));
	CHECK(same("void at::native::reduce_kernel<128, 4>()", NULL)); /* already readable */
	CHECK(same("_Z", NULL));				       /* a prefix, not a name */
	CHECK(same("_Z3ad", NULL)); /* a length longer than the name left: broken */
}

TEST_MAIN(kernel_names, left_alone)
