/*
 * cuda_fake_profiler.c: the profiler's GPU target from the C API (opscope_profiler_options
 * .gpu = 1), with no CUDA injection: the profiler starts the CUPTI collector itself. Linked
 * with libopscope; the "GPU" is the fake libcupti (a test double, tests/doubles/fake_cupti/)
 * named by OPSCOPE_CUPTI_LIB, loaded here first to drive it (the collector's dlopen of the
 * same path gets the same library).
 *
 * Usage: cuda_fake_profiler OUTDIR STEPS. Every step is recorded (no schedule); each step
 * launches two kernels inside operator ranges: "step_kernel_a" and "step_kernel_b" on device
 * 0, stream 5. Prints the number of kernels launched.
 */
#include <stdio.h>
#include <stdlib.h>

#include <dlfcn.h>

#include "opscope/opscope.h"

#include "../doubles/fake_cupti/fake_cupti.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cuda_fake_profiler OUTDIR STEPS\n");
		return 2;
	}
	int steps = atoi(argv[2]);
	const char *fake = getenv("FAKE_CUPTI_PATH");
	if (!fake || !*fake)
		fake = getenv("OPSCOPE_CUPTI_LIB");
	void *lib = fake ? dlopen(fake, RTLD_NOW | RTLD_GLOBAL) : NULL;
	fakecupti_kernel_fn kernel =
		lib ? (fakecupti_kernel_fn)dlsym(lib, "fakecupti_kernel") : NULL;
	if (!kernel) {
		fprintf(stderr, "cuda_fake_profiler: no fake CUPTI\n");
		return 2;
	}
	struct opscope_profiler_options o = { .output = argv[1], .gpu = 1 };
	struct opscope_profiler *p = opscope_profiler_create(&o);
	if (!p || opscope_profiler_start(p) != 0) {
		fprintf(stderr, "cuda_fake_profiler: %s\n", opscope_last_error());
		return 1;
	}
	const uint32_t g[3] = { 8, 1, 1 }, b[3] = { 128, 1, 1 };
	for (int i = 0; i < steps; i++) {
		opscope_range_begin(OPSCOPE_CAT_OPERATOR, "op_a");
		kernel("step_kernel_a", 0, 5, 2000, g, b, 24, 0);
		opscope_range_end();
		opscope_range_begin(OPSCOPE_CAT_OPERATOR, "op_b");
		kernel("step_kernel_b", 0, 5, 1000, g, b, 24, 0);
		opscope_range_end();
		opscope_profiler_step(p, -1);
	}
	opscope_profiler_stop(p);
	opscope_profiler_destroy(p);
	printf("kernels %d\n", 2 * steps);
	return 0;
}
