/*
 * bench_nvtx.c: cost of an NVTX push/pop pair, run by bench/run.sh twice: with no tool
 * attached, and with opscope attached through NVTX_INJECTION64_PATH and recording.
 * Built with the CUDA toolkit's header-only nvtx3; links nothing of ours.
 */
#include <stdio.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	enum { ROUNDS = 7, PAIRS = 2000000 };
	const char *key = argc > 1 ? argv[1] : "nvtx_pair_ns";
	double best = 1e30;
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();
		for (int i = 0; i < PAIRS; i++) {
			nvtxRangePushA("pair");
			nvtxRangePop();
		}
		double ns = (now_ns() - t0) / PAIRS;
		if (ns < best)
			best = ns;
	}
	printf("%s %.2f\n", key, best);
	return 0;
}
