// gpu_check.cu: the CUDA program of scripts/gpu-check.sh, recorded on a real GPU by opscope
// and (where present) by Nsight Systems, whose kernel counts and times must agree. It makes a
// fixed, known amount of work: ITERS iterations (argument, default 200), each in an NVTX range
// "iter", of two kernels on each of two streams, a host-to-device and a device-to-host copy
// (pinned memory) and a memset; buffers are cudaMalloc'd before and cudaFree'd after.
// `gpu_check --probe` exits 0 when a CUDA device is usable, else prints why and exits 77.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(call)                                                                        \
	do {                                                                                \
		cudaError_t e_ = (call);                                                    \
		if (e_ != cudaSuccess) {                                                    \
			fprintf(stderr, "gpu_check: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

__global__ void scale(float *x, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

__global__ void add(float *x, const float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += y[i];
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--probe")) {
		int n = 0;
		cudaError_t e = cudaGetDeviceCount(&n);
		if (e != cudaSuccess || n == 0) {
			printf("%s\n", e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
			return 77;
		}
		cudaDeviceProp p;
		CHECK(cudaGetDeviceProperties(&p, 0));
		printf("%s\n", p.name);
		return 0;
	}
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	const int n = 1 << 20;
	const size_t bytes = n * sizeof(float);
	cudaStream_t s[2];
	float *d[2], *h;
	nvtxRangePushA("setup");
	CHECK(cudaStreamCreate(&s[0]));
	CHECK(cudaStreamCreate(&s[1]));
	CHECK(cudaMalloc(&d[0], bytes));
	CHECK(cudaMalloc(&d[1], bytes));
	CHECK(cudaMallocHost(&h, bytes));
	for (int i = 0; i < n; i++)
		h[i] = 1.0f;
	nvtxRangePop();
	const int block = 256, grid = (n + block - 1) / block;
	for (int it = 0; it < iters; it++) {
		nvtxRangePushA("iter");
		for (int k = 0; k < 2; k++) {
			CHECK(cudaMemcpyAsync(d[k], h, bytes, cudaMemcpyHostToDevice, s[k]));
			scale<<<grid, block, 0, s[k]>>>(d[k], n, 1.5f);
			add<<<grid, block, 0, s[k]>>>(d[k], d[k], n);
		}
		CHECK(cudaMemsetAsync(d[1], 0, bytes, s[1]));
		CHECK(cudaMemcpyAsync(h, d[0], bytes, cudaMemcpyDeviceToHost, s[0]));
		CHECK(cudaGetLastError());
		CHECK(cudaDeviceSynchronize());
		nvtxRangePop();
	}
	CHECK(cudaFreeHost(h));
	CHECK(cudaFree(d[0]));
	CHECK(cudaFree(d[1]));
	CHECK(cudaStreamDestroy(s[0]));
	CHECK(cudaStreamDestroy(s[1]));
	printf("gpu_check: kernels %d memcpy %d memset %d\n", 4 * iters, 3 * iters, iters);
	return 0;
}
