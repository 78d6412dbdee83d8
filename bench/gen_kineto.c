/* gen_kineto: writes a synthetic but realistic PyTorch profiler (Kineto) JSON trace of about
 * the requested size, for the ingest benchmarks (bench/bench_ingest.sh).
 *
 *   gen_kineto SIZE OUT [--seed N] [--steps N]    SIZE: bytes, or with K/M/G (1G = 2^30); OUT: path or -
 *
 * The trace holds N ProfilerStep#k ranges (default 5, as a profiler schedule with active=5
 * records; a small SIZE gives fewer), each of as many micro-batches (gradient accumulation) as
 * SIZE needs. A micro-batch looks like a ResNet-50 training iteration on one GPU, as in the real
 * traces of shared/data/kineto: a DataLoader range with CPU-only ops; the input copies (memcpy
 * HtoD); forward: 53 convolutions, batch norms, ReLUs, adds, pooling, fc and loss, each a cpu_op
 * tree 1-5 deep ("External id", "Input Dims", "Input type", sequence numbers) around
 * cuda_runtime cudaLaunchKernel calls ("correlation"), each launching kernels with long
 * template names and grid/block/registers args on pid 0 tid 7, ac2g flows s/f, fwdbwd flows,
 * [memory] instants; backward on the autograd thread, NCCL all-reduce buckets on stream 20
 * overlapping the compute stream, memsets. A step adds zero_grad and the optimizer (per
 * parameter fill, mul_, add_) and a loss.item() sync. CPU ops are written when they end
 * (children before parents), as Kineto does; GPU events right after their launch. Metadata (M)
 * events close the array. Times are absolute µs with 3 decimals (ns resolution).
 *
 * Deterministic: the same SIZE, seed and steps give the same bytes. Prints to stdout (to stderr
 * when OUT is -)
 *   bytes B events E steps S micro_batches_per_step M kernels K kernel_total_ns T gpu_events G
 * (T is the exact sum of kernel durations, for cross-checks). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ output */

static FILE *out;
static char obuf[1 << 22];
static size_t olen;
static uint64_t obytes, n_events, n_kernels, n_gpu, kernel_total_ns;
static int first_event = 1;

static void flush_out(void)
{
	if (olen && fwrite(obuf, 1, olen, out) != olen) {
		perror("gen_kineto: write");
		exit(1);
	}
	obytes += olen;
	olen = 0;
}

static void put(const char *s, size_t n)
{
	if (olen + n > sizeof obuf)
		flush_out();
	memcpy(obuf + olen, s, n);
	olen += n;
}

static void puts_(const char *s)
{
	put(s, strlen(s));
}

static void put_i64(int64_t v)
{
	char b[24];
	int i = sizeof b;
	uint64_t u = v < 0 ? (uint64_t) - (v + 1) + 1 : (uint64_t)v;
	do {
		b[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		b[--i] = '-';
	put(b + i, sizeof b - (size_t)i);
}

/* ns -> µs with 3 decimals */
static void put_us(int64_t ns)
{
	char b[4];
	put_i64(ns / 1000);
	b[0] = '.';
	b[1] = (char)('0' + ns / 100 % 10);
	b[2] = (char)('0' + ns / 10 % 10);
	b[3] = (char)('0' + ns % 10);
	put(b, 4);
}

/* a fixed-point figure with 6 decimals, like Kineto's "blocks per SM" */
static void put_fix6(uint64_t micro)
{
	char b[8];
	put_i64((int64_t)(micro / 1000000));
	snprintf(b, sizeof b, ".%06u", (unsigned)(micro % 1000000));
	put(b, 7);
}

static void sep(void)
{
	if (!first_event)
		put(",\n", 2);
	first_event = 0;
	n_events++;
}

/* ------------------------------------------------------------------ random */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static int64_t urand(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* base ns +- 25 %, to the ns */
static int64_t jitter(int64_t base)
{
	return base - base / 4 + urand(0, base / 2 > 0 ? base / 2 : 0);
}

/* ------------------------------------------------------------------ model of the run */

enum { PID = 25738, TID_MAIN = 25738, TID_BWD = 25873, STREAM = 7, NCCL_STREAM = 20 };

static int64_t now;	 /* CPU clock, ns */
static int64_t gpu_t[2]; /* end of the last GPU op, per stream (7, 20) */
static uint64_t ext_id = 1, corr = 34400, seq_nr = 18000, ev_idx;
static int64_t mem_alloc = 3000000000, mem_reserved = 4294967296;

struct kspec {
	const char *name; /* JSON-escaped */
	int64_t ns;	  /* typical duration */
	int regs, smem;
	int grid[3], block[3];
};

#define K(n, ns, r, s, g0, g1, b0)          \
	{                                   \
		n, ns, r, s, { g0, g1, 1 }, \
		{                           \
			b0, 1, 1            \
		}                           \
	}
static const struct kspec kern[] = {
	/* 0 */ K("cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)", 2100, 38, 0,
		  50, 1, 128),
	/* 1 */ K("volta_scudnn_128x64_relu_interior_nn_v1", 412000, 128, 16384, 196, 2, 128),
	/* 2 */
	K("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)",
	  61000, 40, 0, 392, 2, 256),
	/* 3 */
	K("void cudnn::winograd_nonfused::winogradForwardFilter4x4<float, float>(cudnn::winograd_nonfused::WinogradFilterParams<float, float>)",
	  9500, 40, 0, 64, 4, 256),
	/* 4 */ K("volta_sgemm_64x64_nt", 158000, 126, 8192, 72, 16, 64),
	/* 5 */
	K("void cudnn::winograd_nonfused::winogradForwardOutput4x4<float, float>(cudnn::winograd_nonfused::WinogradOutputParams<float, float>)",
	  57000, 40, 0, 392, 2, 256),
	/* 6 */
	K("void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
	  410000, 128, 12544, 1568, 1, 256),
	/* 7 */
	K("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
	  160000, 32, 4096, 256, 1, 512),
	/* 8 */
	K("void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float, cudnn::reduced_divisor, int, cudnn::reduced_divisor, cudnn::bnFwPersistentState*, int, float, float, float, int, float, float, cudnnStatus_t*, bool)",
	  98000, 64, 8192, 80, 8, 512),
	/* 9 */
	K("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_scalar_kernel_impl(at::TensorIterator&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::clamp_min_scalar_kernel_impl(at::TensorIterator&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
	  71000, 16, 0, 12544, 1, 128),
	/* 10 */
	K("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)",
	  12900, 20, 0, 6272, 1, 128),
	/* 11 */
	K("void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, float*, long*)",
	  232000, 40, 0, 25088, 1, 256),
	/* 12 */
	K("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4>)",
	  44000, 32, 16, 2048, 1, 512),
	/* 13 */ K("volta_sgemm_128x32_nt", 21000, 55, 12544, 8, 4, 256),
	/* 14 */
	K("void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*)",
	  3200, 32, 0, 250, 1, 128),
	/* 15 */
	K("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
	  6100, 32, 0, 32, 1, 512),
	/* 16 */
	K("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)",
	  4800, 30, 0, 1, 1, 32),
	/* 17 */
	K("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)",
	  498000, 128, 24576, 784, 1, 512),
	/* 18 */
	K("void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
	  426000, 64, 26624, 16, 8, 128),
	/* 19 */
	K("void cudnn::ops::scalePackedTensor_kernel<float, float>(cudnnTensor4dStruct, float*, float)",
	  3500, 22, 0, 144, 1, 256),
	/* 20 */
	K("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
	  226000, 48, 8192, 256, 1, 512),
	/* 21 */ K("void at::native::vectorized_elementwise_kernel<4, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3>)", 103000, 20, 0, 12544, 1, 128),
	/* 22 */
	K("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
	  1900, 16, 0, 32, 1, 128),
	/* 23 */
	K("void at::native::vectorized_elementwise_kernel<4, at::native::MulScalarFunctor<float, float>, at::detail::Array<char*, 2> >(int, at::native::MulScalarFunctor<float, float>, at::detail::Array<char*, 2>)", 2300,
	  16, 0, 32, 1, 128),
	/* 24 */
	K("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 1900000,
	  96, 0, 4, 1, 256),
	/* 25 */
	K("void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)",
	  3100, 24, 0, 1, 1, 32),
	/* 26: a name with quotes and a backslash, JSON-escaped here */
	/* 26 */
	K("void at::native::(anonymous namespace)::indexing_backward_kernel<float, 4>(long const*, long const*, float const*, float*, long, long, long, long, bool) [with tag=\\\"sorted\\\" \\\\ stride]",
	  5200, 40, 0, 64, 1, 128),
	/* 27 */
	K("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, int)",
	  5900, 32, 0, 32, 1, 512),
};
enum { NK = sizeof kern / sizeof kern[0] };

/* ------------------------------------------------------------------ events */

static void put_ids(int pid, int tid)
{
	puts_("\"pid\": ");
	put_i64(pid);
	puts_(", \"tid\": ");
	put_i64(tid);
}

/* a CPU-side X event: cpu_op (dims, types, seq >= 0: sequence number), user_annotation, or
 * cuda_runtime (cbid > 0: "cbid" and "correlation" c) */
static void x_cpu(const char *cat, const char *name, int tid, int64_t ts, int64_t dur, uint64_t ext,
		  const char *dims, const char *types, int64_t seq, int cbid, uint64_t c)
{
	sep();
	puts_("  {\n    \"ph\": \"X\", \"cat\": \"");
	puts_(cat);
	puts_("\", \"name\": \"");
	puts_(name);
	puts_("\", ");
	put_ids(PID, tid);
	puts_(",\n    \"ts\": ");
	put_us(ts);
	puts_(", \"dur\": ");
	put_us(dur);
	puts_(",\n    \"args\": {\n      \"External id\": ");
	put_i64((int64_t)ext);
	if (seq >= 0) {
		puts_(",\"Sequence number\": ");
		put_i64(seq);
		puts_(", \"Fwd thread id\": 0");
	}
	if (dims) {
		puts_(",\"Record function id\": 0, \"Input Dims\": ");
		puts_(dims);
		puts_(", \"Input type\": ");
		puts_(types);
	}
	if (cbid > 0) {
		puts_(",      \"cbid\": ");
		put_i64(cbid);
		puts_(", \"correlation\": ");
		put_i64((int64_t)c);
	} else {
		puts_(", \"Ev Idx\": ");
		put_i64((int64_t)ev_idx++);
	}
	puts_("\n    }\n  }");
}

static void flow(const char *cat, char ph, uint64_t id, int pid, int tid, int64_t ts)
{
	sep();
	puts_("  {\n    \"ph\": \"");
	put(&ph, 1);
	puts_("\", \"id\": ");
	put_i64((int64_t)id);
	puts_(", ");
	put_ids(pid, tid);
	puts_(", \"ts\": ");
	put_us(ts);
	puts_(",\n    \"cat\": \"");
	puts_(cat);
	puts_("\", \"name\": \"");
	puts_(cat);
	puts_(ph == 'f' ? "\", \"bp\": \"e\"\n  }" : "\"\n  }");
}

static void memory_instant(int tid, int64_t bytes)
{
	mem_alloc += bytes;
	sep();
	puts_("  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    ");
	put_ids(PID, tid);
	puts_(",\n    \"ts\": ");
	put_us(now);
	puts_(",\n    \"args\": {\n      \"Total Reserved\": ");
	put_i64(mem_reserved);
	puts_(", \"Total Allocated\": ");
	put_i64(mem_alloc);
	puts_(", \"Bytes\": ");
	put_i64(bytes);
	puts_(", \"Addr\": ");
	put_i64(140215470000000 + (int64_t)(rnd() % 1000000000) * 512);
	puts_(", \"Device Id\": 0, \"Device Type\": 1");
	puts_("\n    }\n  }");
	now += urand(200, 900);
}

/* a GPU op on stream s (0: compute, 1: NCCL) launched at time launch; returns its start */
static int64_t gpu_slot(int s, int64_t launch, int64_t dur)
{
	int64_t ts = launch + urand(2500, 9000);
	if (gpu_t[s] > ts)
		ts = gpu_t[s];
	/* back to back (touching) a third of the time, else a small gap */
	gpu_t[s] = ts + dur + (rnd() % 3 == 0 ? 0 : urand(700, 3500));
	return ts;
}

static void put_gpu_common(int stream, uint64_t ext, uint64_t c)
{
	puts_(",\n    \"args\": {\n      \"External id\": ");
	put_i64((int64_t)ext);
	puts_(",      \"queued\": 0, \"device\": 0, \"context\": 1,      \"stream\": ");
	put_i64(stream);
	puts_(", \"correlation\": ");
	put_i64((int64_t)c);
}

/* cudaLaunchKernel of kernel k by the op with External id ext, on thread tid */
static void launch(int k, int tid, uint64_t ext)
{
	const struct kspec *ks = &kern[k];
	int s = k == 24 ? 1 : 0;
	int stream = s ? NCCL_STREAM : STREAM;
	uint64_t c = corr++;
	int64_t rt_ts = now, rt_dur = urand(3800, 9500);
	int64_t dur = jitter(ks->ns);
	int64_t ts;

	now += rt_dur;
	x_cpu("cuda_runtime", "cudaLaunchKernel", tid, rt_ts, rt_dur, ext, NULL, NULL, -1, 211, c);
	flow("ac2g", 's', c, PID, tid, rt_ts);

	ts = gpu_slot(s, rt_ts, dur);
	sep();
	puts_("  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"");
	puts_(ks->name);
	puts_("\", ");
	put_ids(0, stream);
	puts_(",\n    \"ts\": ");
	put_us(ts);
	puts_(", \"dur\": ");
	put_us(dur);
	put_gpu_common(stream, ext, c);
	puts_(",      \"registers per thread\": ");
	put_i64(ks->regs);
	puts_(",      \"shared memory\": ");
	put_i64(ks->smem);
	puts_(",      \"blocks per SM\": ");
	uint64_t blocks = (uint64_t)ks->grid[0] * (uint64_t)ks->grid[1] * (uint64_t)ks->grid[2];
	put_fix6(blocks * 1000000 / 80);
	puts_(",      \"warps per SM\": ");
	put_fix6(blocks * (uint64_t)((ks->block[0] + 31) / 32) * 1000000 / 80);
	puts_(",      \"grid\": [");
	put_i64(ks->grid[0]);
	puts_(", ");
	put_i64(ks->grid[1]);
	puts_(", ");
	put_i64(ks->grid[2]);
	puts_("],      \"block\": [");
	put_i64(ks->block[0]);
	puts_(", ");
	put_i64(ks->block[1]);
	puts_(", ");
	put_i64(ks->block[2]);
	puts_("],      \"est. achieved occupancy %\": ");
	put_i64(urand(12, 100));
	puts_("\n    }\n  }");
	flow("ac2g", 'f', c, 0, stream, ts);
	n_kernels++;
	n_gpu++;
	kernel_total_ns += (uint64_t)dur;
	now += urand(300, 1500);
}

/* cudaMemcpyAsync / cudaMemsetAsync and their GPU op */
static void copy_or_set(int memset, int tid, uint64_t ext, int64_t bytes)
{
	uint64_t c = corr++;
	int64_t rt_ts = now, rt_dur = urand(9000, 30000);
	int64_t dur = memset ? 1000 + bytes / 800 : 1000 + bytes / 11;
	int64_t ts;

	now += rt_dur;
	x_cpu("cuda_runtime", memset ? "cudaMemsetAsync" : "cudaMemcpyAsync", tid, rt_ts, rt_dur,
	      ext, NULL, NULL, -1, memset ? 51 : 41, c);
	flow("ac2g", 's', c, PID, tid, rt_ts);
	ts = gpu_slot(0, rt_ts, dur);
	sep();
	puts_(memset ? "  {\n    \"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", "
		     : "  {\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", ");
	put_ids(0, STREAM);
	puts_(",\n    \"ts\": ");
	put_us(ts);
	puts_(", \"dur\": ");
	put_us(dur);
	put_gpu_common(STREAM, ext, c);
	puts_(",      \"bytes\": ");
	put_i64(bytes);
	puts_(", \"memory bandwidth (GB/s)\": ");
	put_fix6((uint64_t)(bytes * 1000000 / dur));
	puts_("\n    }\n  }");
	flow("ac2g", 'f', c, 0, STREAM, ts);
	n_gpu++;
	now += urand(500, 2000);
}

/* ------------------------------------------------------------------ op trees */

struct level {
	const char *name, *dims, *types;
	int64_t ts;
	uint64_t ext;
	int64_t seq;
};

/* A cpu_op chain name[0] > name[1] > ... > name[depth-1]: the innermost launches kernels
 * ks[0..nk). Written children first, as Kineto does. Returns the outermost op's start. */
static int64_t op_chain(int tid, int depth, const char *const *names, const char *dims,
			const char *types, const int *ks, int nk, int64_t alloc, int fwd_seq,
			uint64_t *ext_out)
{
	struct level lv[6];
	for (int i = 0; i < depth; i++) {
		now += urand(1200, 6000);
		lv[i].name = names[i];
		lv[i].dims = i < 2 ? dims : NULL;
		lv[i].types = types;
		lv[i].ts = now;
		lv[i].ext = ext_id++;
		lv[i].seq = (i == 0 && fwd_seq) ? (int64_t)seq_nr++ : -1;
	}
	if (ext_out)
		*ext_out = lv[0].ext;
	if (alloc)
		memory_instant(tid, alloc);
	for (int j = 0; j < nk; j++)
		launch(ks[j], tid, lv[depth - 1].ext);
	for (int i = depth - 1; i >= 0; i--) {
		now += urand(800, 4000);
		x_cpu("cpu_op", lv[i].name, tid, lv[i].ts, now - lv[i].ts, lv[i].ext, lv[i].dims,
		      lv[i].dims ? lv[i].types : NULL, lv[i].seq, 0, 0);
	}
	return lv[0].ts;
}

/* ResNet-50 layers */
enum { L_CONV, L_BN, L_RELU, L_ADD, L_MAXPOOL, L_AVGPOOL, L_FC, L_LOSS };
struct layer {
	int kind, variant;
	char dims[160];
	uint64_t fwd_flow;
	int64_t fwd_ts;
};
static struct layer layers[256];
static int nlayers;

static void add_layer(int kind, int c_in, int c_out, int hw, int k)
{
	struct layer *l = &layers[nlayers++];
	l->kind = kind;
	l->variant = nlayers % 3;
	switch (kind) {
	case L_CONV:
		snprintf(
			l->dims, sizeof l->dims,
			"[[32, %d, %d, %d], [%d, %d, %d, %d], [], [], [], [], [], [], [], [], [], [], []]",
			c_in, hw, hw, c_out, c_in, k, k);
		break;
	case L_BN:
		snprintf(l->dims, sizeof l->dims,
			 "[[32, %d, %d, %d], [%d], [%d], [%d], [%d], [], [], [], []]", c_out, hw,
			 hw, c_out, c_out, c_out, c_out);
		break;
	case L_FC:
		snprintf(l->dims, sizeof l->dims, "[[32, 2048], [1000, 2048], [1000]]");
		break;
	default:
		snprintf(l->dims, sizeof l->dims, "[[32, %d, %d, %d], [32, %d, %d, %d], []]", c_out,
			 hw, hw, c_out, hw, hw);
	}
}

static void build_resnet50(void)
{
	static const int blocks[4] = { 3, 4, 6, 3 }, width[4] = { 64, 128, 256, 512 },
			 hw[4] = { 56, 28, 14, 7 };
	int c = 64;
	add_layer(L_CONV, 3, 64, 112, 7);
	add_layer(L_BN, 64, 64, 112, 0);
	add_layer(L_RELU, 64, 64, 112, 0);
	add_layer(L_MAXPOOL, 64, 64, 56, 0);
	for (int s = 0; s < 4; s++)
		for (int b = 0; b < blocks[s]; b++) {
			int w = width[s], h = hw[s];
			add_layer(L_CONV, c, w, h, 1);
			add_layer(L_BN, w, w, h, 0);
			add_layer(L_RELU, w, w, h, 0);
			add_layer(L_CONV, w, w, h, 3);
			add_layer(L_BN, w, w, h, 0);
			add_layer(L_RELU, w, w, h, 0);
			add_layer(L_CONV, w, 4 * w, h, 1);
			add_layer(L_BN, 4 * w, 4 * w, h, 0);
			if (b == 0) {
				add_layer(L_CONV, c, 4 * w, h, 1);
				add_layer(L_BN, 4 * w, 4 * w, h, 0);
			}
			add_layer(L_ADD, 4 * w, 4 * w, h, 0);
			add_layer(L_RELU, 4 * w, 4 * w, h, 0);
			c = 4 * w;
		}
	add_layer(L_AVGPOOL, 2048, 2048, 1, 0);
	add_layer(L_FC, 2048, 1000, 1, 0);
	add_layer(L_LOSS, 1000, 1000, 1, 0);
}

static const char *const conv_types =
	"[\"float\", \"float\", \"\", \"ScalarList\", \"ScalarList\", \"ScalarList\", \"Bool\", \"ScalarList\", \"Int\", \"Bool\", \"Bool\", \"Bool\", \"Bool\"]";
static const char *const bn_types =
	"[\"float\", \"float\", \"float\", \"float\", \"float\", \"Bool\", \"Double\", \"Double\", \"Bool\"]";
static const char *const ew_types = "[\"float\", \"float\", \"Scalar\"]";

static void forward_layer(struct layer *l)
{
	static const char *const conv[] = { "aten::conv2d", "aten::convolution",
					    "aten::_convolution", "aten::cudnn_convolution" };
	static const char *const bn[] = { "aten::batch_norm", "aten::_batch_norm_impl_index",
					  "aten::cudnn_batch_norm" };
	static const char *const relu[] = { "aten::relu_", "aten::clamp_min_" };
	static const char *const add[] = { "aten::add_" };
	static const char *const maxpool[] = { "aten::max_pool2d",
					       "aten::max_pool2d_with_indices" };
	static const char *const avg[] = { "aten::adaptive_avg_pool2d", "aten::mean", "aten::sum",
					   "aten::div_" };
	static const char *const fc[] = { "aten::linear", "aten::t", "aten::addmm" };
	static const char *const lsm[] = { "aten::cross_entropy_loss", "aten::log_softmax",
					   "aten::_log_softmax" };
	static const char *const nll[] = { "aten::nll_loss_nd", "aten::nll_loss",
					   "aten::nll_loss_forward" };
	static const int conv_k[3][4] = { { 0, 1 }, { 2, 3, 4, 5 }, { 6 } },
			 conv_n[3] = { 2, 4, 1 };
	static const int bn_k[2] = { 7, 8 };
	int k1[2];
	uint64_t ext;

	switch (l->kind) {
	case L_CONV:
		/* a fwdbwd flow from the forward op to its backward: at the ops' starts */
		l->fwd_ts = op_chain(TID_MAIN, 4, conv, l->dims, conv_types, conv_k[l->variant],
				     conv_n[l->variant], 6422528, 1, &ext);
		l->fwd_flow = ext;
		flow("fwdbwd", 's', ext, PID, TID_MAIN, l->fwd_ts);
		break;
	case L_BN:
		op_chain(TID_MAIN, 3, bn, l->dims, bn_types, &bn_k[l->variant & 1], 1, 3211264, 1,
			 NULL);
		break;
	case L_RELU:
		k1[0] = 9;
		op_chain(TID_MAIN, 2, relu, l->dims, ew_types, k1, 1, 0, 1, NULL);
		break;
	case L_ADD:
		k1[0] = 10;
		op_chain(TID_MAIN, 1, add, l->dims, ew_types, k1, 1, 0, 1, NULL);
		break;
	case L_MAXPOOL:
		k1[0] = 11;
		op_chain(TID_MAIN, 2, maxpool, l->dims, ew_types, k1, 1, 25690112, 1, NULL);
		break;
	case L_AVGPOOL:
		k1[0] = 12;
		op_chain(TID_MAIN, 4, avg, l->dims, ew_types, k1, 1, 262144, 1, NULL);
		break;
	case L_FC:
		k1[0] = 13;
		k1[1] = 14;
		op_chain(TID_MAIN, 3, fc, l->dims, ew_types, k1, 2, 128000, 1, NULL);
		break;
	case L_LOSS:
		k1[0] = 15;
		op_chain(TID_MAIN, 3, lsm, l->dims, ew_types, k1, 1, 128000, 1, NULL);
		k1[0] = 16;
		op_chain(TID_MAIN, 3, nll, l->dims, ew_types, k1, 1, 512, 1, NULL);
		break;
	}
}

static void accumulate_grad(void)
{
	static const char *const acc[] = {
		"autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
		"torch::autograd::AccumulateGrad", "aten::add_"
	};
	int k = 10;
	op_chain(TID_BWD, 3, acc, NULL, NULL, &k, 1, 0, 0, NULL);
}

static void nccl_bucket(int b)
{
	static const char *const nc[] = { "nccl:all_reduce", "record_param_comms" };
	int k = 24;
	(void)b;
	op_chain(TID_BWD, 2, nc, "[[6553600]]", "[\"float\"]", &k, 1, 0, 0, NULL);
}

static void backward_layer(struct layer *l, int *bucket)
{
	static const char *const conv[] = {
		"autograd::engine::evaluate_function: ConvolutionBackward0", "ConvolutionBackward0",
		"aten::convolution_backward"
	};
	static const char *const bn[] = {
		"autograd::engine::evaluate_function: CudnnBatchNormBackward0",
		"CudnnBatchNormBackward0", "aten::cudnn_batch_norm_backward"
	};
	static const char *const relu[] = { "autograd::engine::evaluate_function: ReluBackward0",
					    "ReluBackward0", "aten::threshold_backward" };
	static const char *const add[] = { "autograd::engine::evaluate_function: AddBackward0",
					   "AddBackward0" };
	static const char *const fc[] = { "autograd::engine::evaluate_function: AddmmBackward0",
					  "AddmmBackward0", "aten::mm" };
	static const char *const lsm[] = {
		"autograd::engine::evaluate_function: LogSoftmaxBackward0", "LogSoftmaxBackward0",
		"aten::_log_softmax_backward_data"
	};
	static const char *const nll[] = { "autograd::engine::evaluate_function: NllLossBackward0",
					   "NllLossBackward0", "aten::nll_loss_backward",
					   "aten::zero_", "aten::fill_" };
	static const char *const zero[] = { "aten::zeros", "aten::zero_", "aten::fill_" };
	static const char *const idx[] = { "autograd::engine::evaluate_function: MeanBackward1",
					   "MeanBackward1", "aten::expand", "aten::index_put_",
					   "aten::_index_put_impl_" };
	int ks[3] = { 0, 0, 0 };

	switch (l->kind) {
	case L_CONV:
		ks[0] = 19, ks[1] = 17, ks[2] = 18;
		flow("fwdbwd", 'f', l->fwd_flow, PID, TID_BWD,
		     op_chain(TID_BWD, 3, conv, l->dims, conv_types, ks + (l->variant == 2),
			      3 - (l->variant == 2), 6422528, 0, NULL));
		accumulate_grad();
		if (++*bucket % 13 == 0)
			nccl_bucket(*bucket / 13);
		break;
	case L_BN:
		ks[0] = 20;
		op_chain(TID_BWD, 3, bn, l->dims, bn_types, ks, 1, 3211264, 0, NULL);
		accumulate_grad();
		accumulate_grad();
		break;
	case L_RELU:
		ks[0] = 21;
		op_chain(TID_BWD, 3, relu, l->dims, ew_types, ks, 1, -3211264, 0, NULL);
		break;
	case L_ADD:
		op_chain(TID_BWD, 2, add, NULL, NULL, ks, 0, 0, 0, NULL);
		break;
	case L_MAXPOOL:
	case L_AVGPOOL:
		ks[0] = 26;
		op_chain(TID_BWD, 5, idx, l->dims, ew_types, ks, 1, 262144, 0, NULL);
		break;
	case L_FC:
		ks[0] = 13, ks[1] = 4, ks[2] = 14;
		op_chain(TID_BWD, 3, fc, l->dims, ew_types, ks, 3, 8192000, 0, NULL);
		accumulate_grad();
		accumulate_grad();
		break;
	case L_LOSS:
		ks[0] = 27;
		op_chain(TID_BWD, 3, lsm, l->dims, ew_types, ks, 1, 128000, 0, NULL);
		{
			uint64_t e;
			now += urand(1000, 3000);
			op_chain(TID_BWD, 3, zero, "[[32, 1000], [], [], [], []]",
				 "[\"ScalarList\", \"Int\", \"\", \"\", \"Bool\"]", ks, 0, 128000,
				 0, &e);
			copy_or_set(1, TID_BWD, e, 128000);
		}
		ks[0] = 25;
		op_chain(TID_BWD, 5, nll, l->dims, ew_types, ks, 1, 128000, 0, NULL);
		break;
	}
}

static void user_range(const char *name, int tid, int64_t ts, uint64_t ext)
{
	x_cpu("user_annotation", name, tid, ts, now - ts, ext, NULL, NULL, -1, 0, 0);
}

static uint64_t target_per_step; /* bytes */
static int micro_per_step; /* micro-batches (gradient accumulation) per step; 0: not known yet */

/* one micro-batch: DataLoader, input copies, forward, backward with its all-reduce buckets */
static void micro_batch(int64_t *gpu_first)
{
	static const char *const dl_ops[] = { "aten::to", "aten::_to_copy", "aten::copy_" };
	static const char *const dl_cpu[] = { "aten::stack", "aten::cat", "aten::_cat" };
	static const char *const dl_div[] = { "aten::sub", "aten::div", "aten::empty_strided" };
	int64_t t;
	uint64_t e, e_rng;
	int bucket = 0, k = 0;

	/* DataLoader: CPU-only ops */
	t = now;
	e_rng = ext_id++;
	now += urand(5000, 20000);
	for (int i = 0; i < 32; i++) {
		op_chain(TID_MAIN, 3, dl_div, "[[3, 224, 224], [3, 1, 1]]",
			 "[\"float\", \"float\"]", &k, 0, 602112, 0, NULL);
		now += urand(20000, 60000);
	}
	op_chain(TID_MAIN, 3, dl_cpu, "[[], []]", "[\"TensorList\", \"Int\"]", &k, 0, 19267584, 0,
		 NULL);
	user_range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", TID_MAIN, t,
		   e_rng);

	/* the input and target copies */
	for (int i = 0; i < 2; i++) {
		op_chain(TID_MAIN, 3, dl_ops,
			 i ? "[[32], [], [], [], [], [], [], []]"
			   : "[[32, 3, 224, 224], [], [], [], [], [], [], []]",
			 "[\"long\", \"Int\", \"Int\", \"Device\", \"\", \"Bool\", \"Bool\", \"\"]",
			 &k, 0, i ? 256 : 19267584, 0, &e);
		if (*gpu_first < 0)
			*gpu_first = gpu_t[0] > now ? gpu_t[0] : now;
		copy_or_set(0, TID_MAIN, e, i ? 256 : 19267584);
	}

	/* forward */
	t = now;
	e_rng = ext_id++;
	for (int i = 0; i < nlayers; i++)
		forward_layer(&layers[i]);
	user_range("## forward ##", TID_MAIN, t, e_rng);

	/* backward on the autograd thread */
	t = now;
	e_rng = ext_id++;
	for (int i = nlayers - 1; i >= 0; i--)
		backward_layer(&layers[i], &bucket);
	nccl_bucket(99);
	user_range("## backward ##", TID_BWD, t, e_rng);
}

/* ProfilerStep#n: zero_grad, micro-batches, optimizer step, loss.item() */
static void step(int n)
{
	static const char *const zg[] = { "aten::zero_", "aten::fill_" };
	static const char *const upd[] = { "aten::add_" };
	static const char *const mul[] = { "aten::mul_" };
	static const char *const item[] = { "aten::item", "aten::_local_scalar_dense" };
	char name[64];
	int64_t t_step = now, t;
	uint64_t e_step = ext_id++, e, e_rng;
	int64_t gpu_first = -1;
	uint64_t b0 = obytes + olen, b1;
	int k = 0;

	/* zero_grad: one fill per parameter */
	t = now;
	e_rng = ext_id++;
	for (int i = 0; i < nlayers; i++)
		if (layers[i].kind == L_CONV || layers[i].kind == L_BN || layers[i].kind == L_FC) {
			k = 22;
			op_chain(TID_MAIN, 2, zg, "[[64, 64, 3, 3]]", "[\"float\"]", &k, 1, 0, 0,
				 NULL);
		}
	user_range("Optimizer.zero_grad#SGD.zero_grad", TID_MAIN, t, e_rng);
	b1 = obytes + olen;

	for (int m = 0; m == 0 || m < micro_per_step; m++) {
		uint64_t mb0 = obytes + olen;
		micro_batch(&gpu_first);
		if (micro_per_step == 0) {
			/* sized by the first one: the optimizer writes about 3 x zero_grad */
			uint64_t mb = obytes + olen - mb0, over = 4 * (b1 - b0);
			micro_per_step = target_per_step > over + mb
						 ? (int)((target_per_step - over + mb / 2) / mb)
						 : 1;
		}
	}

	/* optimizer: mul_ and add_ per parameter */
	t = now;
	e_rng = ext_id++;
	for (int i = 0; i < nlayers; i++)
		if (layers[i].kind == L_CONV || layers[i].kind == L_BN || layers[i].kind == L_FC) {
			k = 23;
			op_chain(TID_MAIN, 1, mul, "[[64, 64, 3, 3], []]",
				 "[\"float\", \"Scalar\"]", &k, 1, 0, 0, NULL);
			k = 10;
			op_chain(TID_MAIN, 1, upd, "[[64, 64, 3, 3], [64, 64, 3, 3], []]",
				 "[\"float\", \"float\", \"Scalar\"]", &k, 1, 0, 0, NULL);
			op_chain(TID_MAIN, 1, upd, "[[64, 64, 3, 3], [64, 64, 3, 3], []]",
				 "[\"float\", \"float\", \"Scalar\"]", &k, 1, 0, 0, NULL);
		}
	user_range("Optimizer.step#SGD.step", TID_MAIN, t, e_rng);

	/* loss.item(): waits for the GPU */
	op_chain(TID_MAIN, 2, item, "[[]]", "[\"float\"]", &k, 0, 0, 0, &e);
	{
		int64_t ts = now, end = gpu_t[0] > gpu_t[1] ? gpu_t[0] : gpu_t[1];
		if (end < now)
			end = now;
		now = end + urand(3000, 8000);
		x_cpu("cuda_runtime", "cudaStreamSynchronize", TID_MAIN, ts, now - ts, e, NULL,
		      NULL, -1, 131, corr++);
	}
	now += urand(10000, 30000);
	snprintf(name, sizeof name, "ProfilerStep#%d", n);
	user_range(name, TID_MAIN, t_step, e_step);
	/* the step on the GPU's timeline (not a GPU op: excluded from busy time) */
	sep();
	puts_("  {\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"");
	puts_(name);
	puts_("\", ");
	put_ids(0, STREAM);
	puts_(",\n    \"ts\": ");
	put_us(gpu_first);
	puts_(", \"dur\": ");
	put_us(gpu_t[0] - gpu_first);
	puts_(",\n    \"args\": {\n      \"External id\": ");
	put_i64((int64_t)e_step);
	puts_("\n    }\n  }");
}

static void meta(const char *what, int pid, int tid, const char *key, const char *val, int is_str)
{
	sep();
	puts_("  {\n    \"name\": \"");
	puts_(what);
	puts_("\", \"ph\": \"M\", \"ts\": ");
	put_us(now);
	puts_(", ");
	put_ids(pid, tid);
	puts_(",\n    \"args\": {\n      \"");
	puts_(key);
	puts_(is_str ? "\": \"" : "\": ");
	puts_(val);
	puts_(is_str ? "\"\n    }\n  }" : "\n    }\n  }");
}

static uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	uint64_t mul = 1;
	if (errno || end == s || v < 0)
		return 0;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1ull << 30;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	return *end ? 0 : (uint64_t)(v * (double)mul);
}

int main(int argc, char **argv)
{
	uint64_t target, seed = 42;
	int steps = 0, nsteps = 5;
	for (int i = 3; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--seed") == 0)
			seed = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--steps") == 0)
			nsteps = atoi(argv[i + 1]);
		else
			argc = 0;
	}
	if (argc < 3 || argc % 2 == 0 || nsteps < 1) {
		fprintf(stderr,
			"usage: gen_kineto SIZE OUT [--seed N] [--steps N]\n"
			"  SIZE: bytes, or 200M, 1G, ...; OUT: a path or -; steps: ProfilerSteps (default 5)\n");
		return 2;
	}
	target = parse_size(argv[1]);
	if (!target) {
		fprintf(stderr, "gen_kineto: bad size '%s'\n", argv[1]);
		return 2;
	}
	out = strcmp(argv[2], "-") == 0 ? stdout : fopen(argv[2], "wb");
	if (!out) {
		fprintf(stderr, "gen_kineto: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	rng_state = seed;
	now = 1623142623460111000 + (int64_t)(seed % 1000) * 1000000;
	gpu_t[0] = gpu_t[1] = now;
	build_resnet50();

	puts_("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n"
	      "      \"id\": 0, \"name\": \"Tesla V100-SXM2-32GB\", \"totalGlobalMem\": 34079637504,\n"
	      "      \"computeMajor\": 7, \"computeMinor\": 0,\n"
	      "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
	      "      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
	      "      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 98304,\n"
	      "      \"numSms\": 80, \"sharedMemPerBlockOptin\": 98304\n    }\n  ],\n"
	      "  \"record_shapes\": 1,\n"
	      "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8, \"pg_count\": 1, "
	      "\"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", "
	      "\"pg_size\": 8, \"ranks\": [0, 1, 2, 3, 4, 5, 6, 7]}], \"nccl_version\": \"2.18.3\"},\n"
	      "  \"traceEvents\": [\n");
	/* a few profiler steps (schedule active=5), each as many micro-batches as the size needs;
	 * a small size gives fewer steps */
	target_per_step = target / (uint64_t)nsteps;
	while (steps < nsteps && (steps == 0 || obytes + olen + target_per_step / 2 < target))
		step(++steps);
	char pidbuf[24];
	snprintf(pidbuf, sizeof pidbuf, "%d", PID);
	meta("process_name", PID, 0, "name", "python3", 1);
	meta("process_labels", PID, 0, "labels", "CPU", 1);
	meta("process_sort_index", PID, 0, "sort_index", pidbuf, 0);
	meta("process_name", 0, 0, "name", "GPU 0", 1);
	meta("process_labels", 0, 0, "labels", "GPU 0", 1);
	meta("process_sort_index", 0, 0, "sort_index", "5000000", 0);
	meta("thread_name", PID, TID_MAIN, "name", "thread 25738 (python3)", 1);
	meta("thread_sort_index", PID, TID_MAIN, "sort_index", pidbuf, 0);
	meta("thread_name", PID, TID_BWD, "name", "thread 25873 (pt_autograd_0)", 1);
	meta("thread_sort_index", PID, TID_BWD, "sort_index", "25873", 0);
	meta("thread_name", 0, STREAM, "name", "stream 7", 1);
	meta("thread_sort_index", 0, STREAM, "sort_index", "7", 0);
	meta("thread_name", 0, NCCL_STREAM, "name", "stream 20 nccl", 1);
	meta("thread_sort_index", 0, NCCL_STREAM, "sort_index", "20", 0);
	sep();
	puts_("  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
	put_us(now);
	puts_("\n  }\n  ],\n  \"traceName\": \"synthetic_resnet50.pt.trace.json\",\n  \"displayTimeUnit\": \"ns\"\n}\n");
	flush_out();
	if (out != stdout && fclose(out) != 0) {
		perror("gen_kineto: close");
		return 1;
	}
	fprintf(out == stdout ? stderr : stdout,
		"bytes %" PRIu64 " events %" PRIu64
		" steps %d micro_batches_per_step %d kernels %" PRIu64 " kernel_total_ns %" PRIu64
		" gpu_events %" PRIu64 "\n",
		obytes, n_events, steps, micro_per_step, n_kernels, kernel_total_ns, n_gpu);
	return 0;
}
