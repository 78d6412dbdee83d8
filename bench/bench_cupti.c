/*
 * bench_cupti.c: the driver of bench/bench_cupti.sh. It plays a CUDA program against the fake
 * libcupti (a test double, tests/doubles/fake_cupti/, loaded from $FAKE_CUPTI_PATH): N kernel
 * launches on one thread, each optionally inside an opscope C API range (found with dlsym in
 * a preloaded libopscope, as under `opscope record`), then a flush. It prints what the
 * launching thread spent per launch and what the fake measured around the completion
 * callbacks (the client's processing of every record).
 *
 * Usage: bench_cupti MODE N [ranges]
 *   bare    no CUPTI client: the fake writes no record (the launch's floor in the double)
 *   walk    a minimal CUPTI client of this program's own: it enables what a launch makes
 *           (runtime API, concurrent kernel, external correlation), hands out 4 MiB buffers
 *           and only walks each buffer with cuptiActivityGetNextRecord: the double's own
 *           cost of producing and walking records, with nothing of opscope in the callback
 *   inject  calls InitializeInjection() of $CUDA_INJECTION64_PATH as libcuda's cuInit would:
 *           under `opscope record`, opscope's collector is the client
 *   ranges  each launch inside opscope_range_begin/end (an operator range; with the
 *           collector on, an external correlation id pushed and popped around it)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>
#include <dlfcn.h>

#include "../tests/doubles/fake_cupti/fake_cupti.h"

static __typeof__(cuptiActivityGetNextRecord) *next_record;
static uint64_t walked;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "bench_cupti: %s not found\n", name);
		exit(2);
	}
	return p;
}

static void CUPTIAPI walk_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*size = 4u << 20;
	*buffer = aligned_alloc(8, *size);
	*max_records = 0;
}

static void CUPTIAPI walk_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				   size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	CUpti_Activity *r = NULL;
	while (next_record(buffer, valid, &r) == CUPTI_SUCCESS)
		walked++;
	free(buffer);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_cupti bare|walk|inject N [ranges]\n");
		return 2;
	}
	const char *mode = argv[1];
	long n = atol(argv[2]);
	int ranges = argc > 3 && !strcmp(argv[3], "ranges");
	const char *path = getenv("FAKE_CUPTI_PATH");
	void *lib = path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
	if (!lib) {
		fprintf(stderr, "bench_cupti: cannot load the fake CUPTI (%s)\n",
			path ? dlerror() : "FAKE_CUPTI_PATH not set");
		return 2;
	}
	fakecupti_kernel_fn kernel;
	*(void **)&kernel = sym(lib, "fakecupti_kernel");
	__typeof__(cuptiActivityFlushAll) *flush_all;
	*(void **)&flush_all = sym(lib, "cuptiActivityFlushAll");
	*(void **)&next_record = sym(lib, "cuptiActivityGetNextRecord");
	void (*op_begin)(int, const char *) = NULL;
	void (*op_end)(void) = NULL;
	if (ranges) {
		*(void **)&op_begin = sym(RTLD_DEFAULT, "opscope_range_begin");
		*(void **)&op_end = sym(RTLD_DEFAULT, "opscope_range_end");
	}

	if (!strcmp(mode, "walk")) {
		__typeof__(cuptiActivityRegisterCallbacks) *reg;
		__typeof__(cuptiActivityEnable) *enable;
		*(void **)&reg = sym(lib, "cuptiActivityRegisterCallbacks");
		*(void **)&enable = sym(lib, "cuptiActivityEnable");
		reg(walk_request, walk_complete);
		enable(CUPTI_ACTIVITY_KIND_RUNTIME);
		enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
	} else if (!strcmp(mode, "inject")) {
		const char *inj = getenv("CUDA_INJECTION64_PATH");
		void *h = inj && *inj ? dlopen(inj, RTLD_NOW) : NULL;
		int (*init)(void) = NULL;
		if (h)
			*(void **)&init = dlsym(h, "InitializeInjection");
		if (!init) {
			fprintf(stderr, "bench_cupti: no InitializeInjection (run under opscope "
					"record)\n");
			return 2;
		}
		init();
	} else if (strcmp(mode, "bare") != 0) {
		fprintf(stderr, "bench_cupti: unknown mode %s\n", mode);
		return 2;
	}

	const uint32_t grid[3] = { 64, 2, 1 }, block[3] = { 256, 1, 1 };
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		if (ranges)
			op_begin(0 /* OPSCOPE_CAT_OPERATOR */, "aten::mm");
		kernel("gemm_kernel", 0, 7, 1000, grid, block, 32, 4096);
		if (ranges)
			op_end();
	}
	uint64_t t1 = now_ns();
	flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	uint64_t t2 = now_ns();

	struct fakecupti_stats st;
	fakecupti_stats_fn stats;
	*(void **)&stats = sym(lib, "fakecupti_stats");
	stats(&st);
	printf("launches %ld\n", n);
	printf("launch_ns %.1f\n", (double)(t1 - t0) / (double)n);
	printf("flush_ms %.1f\n", (double)(t2 - t1) / 1e6);
	printf("records %llu dropped %llu buffers %llu\n", (unsigned long long)st.records,
	       (unsigned long long)st.dropped, (unsigned long long)st.buffers);
	printf("complete_records %llu\n", (unsigned long long)st.complete_records);
	printf("complete_cpu_ns_per_record %.1f\n",
	       st.complete_records ? (double)st.complete_cpu_ns / (double)st.complete_records
				   : 0.0);
	printf("complete_ns_per_record %.1f\n",
	       st.complete_records ? (double)st.complete_ns / (double)st.complete_records : 0.0);
	return 0;
}
