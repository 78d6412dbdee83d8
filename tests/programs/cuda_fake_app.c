/*
 * cuda_fake_app.c: a fake CUDA program for the CUPTI collector's tests. It plays the CUDA
 * driver and application against the fake libcupti (a test double,
 * tests/doubles/fake_cupti/): it loads the library $FAKE_CUPTI_PATH or else
 * $OPSCOPE_CUPTI_LIB names, then, like
 * libcuda's cuInit, dlopens $CUDA_INJECTION64_PATH and calls its InitializeInjection(), and
 * makes "GPU work" through the fake's control API. Nothing of opscope is linked: the host
 * ranges are NVTX pushes (nvtx3, header-only) and C API ranges found with dlsym in the
 * preloaded libopscope (absent: none).
 *
 * Usage: cuda_fake_app [options] THREADS ITERS
 *   --no-clock            the fake refuses the collector's timestamp callback
 *   --foreign-subscriber  another tool holds CUPTI's subscriber slot
 *   --drops N             the fake drops N records (as if no buffer were free)
 *   --allocs              more allocations, inside operators (the GPU memory view's test):
 *                         before the workers, "aten::empty" allocates 2 MiB on device 0
 *                         and 3 MiB on device 1, then "aten::zeros" 4 MiB on device 0;
 *                         after them the 2 MiB is freed; the 3 and 4 MiB never are
 *
 * The work (durations in the fake's clock units, see fake_cupti.h):
 *   once: devices 0 and 1 ("Fake GPU 0/1"), 1 MiB allocated on each and freed at the end,
 *         a 2048-byte peer copy 0 -> 1 on stream 3, one CUPTI overhead record of 777;
 *   per thread t and iteration: NVTX range "iter" holding
 *         C API operator "aten::mm"   -> kernel "gemm_kernel" (device t%2, stream 7+t, 1000,
 *                                        grid 64x2x1, block 256x1x1, 32 registers, 4096 B)
 *         C API operator "aten::relu" -> kernel "relu_kernel" (same stream, 500)
 *         a 4096-byte HtoD copy (Pageable -> Device, 300), a 1024-byte DtoH copy
 *         (Device -> Pinned, 200), a 512-byte memset (100), a stream synchronize (50).
 * It prints the totals the reports must show, and the NVTX pushes and pops that reached the
 * fake's own NVTX hooks (chained behind opscope's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>

#include "../doubles/fake_cupti/fake_cupti.h"

static fakecupti_kernel_fn fk;
static fakecupti_memcpy_fn fm;
static fakecupti_memcpy_peer_fn fpeer;
static fakecupti_memset_fn fs;
static fakecupti_sync_fn fsync_;
static fakecupti_memory_fn fmem;
static fakecupti_overhead_fn fover;
static fakecupti_device_fn fdev;
static void (*op_begin)(int category, const char *name);
static void (*op_end)(void);
static int iters;

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "cuda_fake_app: %s not in the fake CUPTI\n", name);
		exit(2);
	}
	return p;
}

static void op(const char *name)
{
	if (op_begin)
		op_begin(0 /* OPSCOPE_CAT_OPERATOR */, name);
}

static void op_done(void)
{
	if (op_end)
		op_end();
}

static void *worker(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;
	uint32_t dev = t % 2, stream = 7 + t;
	const uint32_t grid[3] = { 64, 2, 1 }, block[3] = { 256, 1, 1 };
	for (int i = 0; i < iters; i++) {
		nvtxRangePushA("iter");
		op("aten::mm");
		fk("gemm_kernel", dev, stream, 1000, grid, block, 32, 4096);
		op_done();
		op("aten::relu");
		fk("relu_kernel", dev, stream, 500, grid, block, 16, 0);
		op_done();
		fm(1 /* HtoD */, 1 /* pageable */, 3 /* device */, 4096, dev, stream, 300);
		fm(2 /* DtoH */, 3 /* device */, 2 /* pinned */, 1024, dev, stream, 200);
		fs(512, 0, dev, stream, 100);
		fsync_(3 /* stream synchronize */, dev, stream, 50);
		nvtxRangePop();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int no_clock = 0, foreign = 0, drops = 0, allocs = 0, a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--no-clock"))
			no_clock = 1;
		else if (!strcmp(argv[a], "--foreign-subscriber"))
			foreign = 1;
		else if (!strcmp(argv[a], "--allocs"))
			allocs = 1;
		else if (!strcmp(argv[a], "--drops") && a + 1 < argc)
			drops = atoi(argv[++a]);
		else {
			fprintf(stderr, "cuda_fake_app: unknown option %s\n", argv[a]);
			return 2;
		}
	}
	if (argc - a != 2) {
		fprintf(stderr, "usage: cuda_fake_app [options] THREADS ITERS\n");
		return 2;
	}
	int threads = atoi(argv[a]);
	iters = atoi(argv[a + 1]);
	/* FAKE_CUPTI_PATH: the fake, when OPSCOPE_CUPTI_LIB names another library on purpose */
	const char *path = getenv("FAKE_CUPTI_PATH");
	if (!path || !*path)
		path = getenv("OPSCOPE_CUPTI_LIB");
	void *lib = path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
	if (!lib) {
		fprintf(stderr, "cuda_fake_app: cannot load the fake CUPTI (%s)\n",
			path ? dlerror() : "OPSCOPE_CUPTI_LIB not set");
		return 2;
	}
	fk = (fakecupti_kernel_fn)sym(lib, "fakecupti_kernel");
	fm = (fakecupti_memcpy_fn)sym(lib, "fakecupti_memcpy");
	fpeer = (fakecupti_memcpy_peer_fn)sym(lib, "fakecupti_memcpy_peer");
	fs = (fakecupti_memset_fn)sym(lib, "fakecupti_memset");
	fsync_ = (fakecupti_sync_fn)sym(lib, "fakecupti_sync");
	fmem = (fakecupti_memory_fn)sym(lib, "fakecupti_memory");
	fover = (fakecupti_overhead_fn)sym(lib, "fakecupti_overhead");
	fdev = (fakecupti_device_fn)sym(lib, "fakecupti_device");
	((fakecupti_set_fn)sym(lib, "fakecupti_refuse_timestamp_callback"))(no_clock);
	((fakecupti_set_fn)sym(lib, "fakecupti_foreign_subscriber"))(foreign);
	*(void **)&op_begin = dlsym(RTLD_DEFAULT, "opscope_range_begin");
	*(void **)&op_end = dlsym(RTLD_DEFAULT, "opscope_range_end");

	/* cuInit: the driver's injection step */
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj && strcmp(inj, "none") != 0) {
		void *h = dlopen(inj, RTLD_NOW);
		int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
		if (!init) {
			fprintf(stderr, "cuda_fake_app: no InitializeInjection in %s\n", inj);
			return 2;
		}
		init();
	}

	/* a tool started after opscope (torch.profiler, Nsight) must find CUPTI's one
	 * subscriber slot free: subscribe as it would (int: CUptiResult, 0 = success) */
	int (*subscribe)(void **, void *, void *);
	*(void **)&subscribe = sym(lib, "cuptiSubscribe");
	void *sub = NULL;
	printf("late subscriber: %s\n", foreign				   ? "skipped"
					: subscribe(&sub, NULL, NULL) == 0 ? "ok"
									   : "refused");

	fdev(0, "Fake GPU 0", 108, 8, 0, 40ull << 30);
	fdev(1, "Fake GPU 1", 108, 8, 0, 40ull << 30);
	fmem(0, 0, 0x7f0000000000ull, 1 << 20);
	fmem(0, 1, 0x7f1000000000ull, 1 << 20);
	if (allocs) {
		op("aten::empty");
		fmem(0, 0, 0x7f0000200000ull, 2 << 20);
		fmem(0, 1, 0x7f1000200000ull, 3 << 20);
		op_done();
		op("aten::zeros");
		fmem(0, 0, 0x7f0000600000ull, 4 << 20);
		op_done();
	}
	fpeer(0, 1, 2048, 3, 400);
	fover(777);
	if (drops) {
		((fakecupti_set_fn)sym(lib, "fakecupti_drop_records"))(drops);
		const uint32_t g[3] = { 1, 1, 1 };
		for (int i = 0; i < drops; i++) /* a launch makes a call record and a kernel */
			fk("dropped_kernel", 0, 0, 10, g, g, 1, 0);
	}
	/* NVTX's loader initializes on the first call; made here, before the workers, since
	 * nvtx3's header reads its slots with plain loads while another thread initializes
	 * them (a data race in the program's own NVTX code that TSan would report) */
	nvtxMarkA("workers start");
	pthread_t th[64];
	if (threads > 64)
		threads = 64;
	for (int t = 0; t < threads; t++)
		pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t);
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	if (allocs)
		fmem(1, 0, 0x7f0000200000ull, 2 << 20);
	fmem(1, 0, 0x7f0000000000ull, 1 << 20);
	fmem(1, 1, 0x7f1000000000ull, 1 << 20);

	/* the worker's deliveries as they are on an idle machine: under load (ASan, parallel
	 * tests) it lagged, and only 72 of thousands of buffers were in before the stats */
	((fakecupti_drain_fn)sym(lib, "fakecupti_drain"))();
	struct fakecupti_stats st;
	((fakecupti_stats_fn)sym(lib, "fakecupti_stats"))(&st);
	long n = (long)threads * iters;
	printf("kernels %ld gemm %ld relu %ld gemm_time %ld relu_time %ld\n", 2 * n, n, n, 1000 * n,
	       500 * n);
	printf("memcpy HtoD %ld bytes %ld DtoH %ld bytes %ld memset %ld bytes %ld\n", n, 4096 * n,
	       n, 1024 * n, n, 512 * n);
	void (*nvtx_counts)(uint64_t *, uint64_t *);
	*(void **)&nvtx_counts = sym(lib, "fakecupti_nvtx_counts");
	uint64_t push = 0, pop = 0;
	nvtx_counts(&push, &pop);
	printf("fake nvtx: push %llu pop %llu\n", (unsigned long long)push,
	       (unsigned long long)pop);
	printf("fake: records %llu dropped %llu buffers %llu out_of_order %llu on_worker %llu "
	       "names_poisoned %llu\n",
	       (unsigned long long)st.records, (unsigned long long)st.dropped,
	       (unsigned long long)st.buffers, (unsigned long long)st.out_of_order,
	       (unsigned long long)st.on_worker, (unsigned long long)st.names_poisoned);
	return 0;
}
