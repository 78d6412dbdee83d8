/*
 * test_advice.c: the advisor's rules (analyze/advice.h), each on a small model built by hand
 * that makes it fire and on one that does not, with the numbers worked out in the comments.
 * Times are in units of U = 1 us so that the finding texts read as they would on a trace.
 * test_advice.sh checks the same rules on real Kineto traces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/advice.h"
#include "analyze/analysis.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"

#define U 1000 /* ns: one us */

/* A new model with one file, host thread h (pid 1) and device 0's streams 7 (d) and 8 (d2). */
static struct model *new_model(uint32_t *h, uint32_t *d, uint32_t *d2)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	*h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	*d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	if (d2)
		*d2 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 8, 0);
	return m;
}

/* A cudaLaunchKernel [ls, ls + 2U) on h launching `name` [ks, ke) of category cat on d. */
static void launch(struct model *m, uint32_t h, uint32_t d, int64_t ls, int64_t ks, int64_t ke,
		   const char *name, uint8_t cat, int64_t corr)
{
	R(m, h, ls, ls + 2 * U, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, corr);
	R(m, d, ks, ke, name, cat, corr);
}

/* Run the advisor on m (nested first); the findings in *out. */
static void advise(struct model *m, struct analysis *an, struct advice *out)
{
	nest(m);
	REQUIRE(analysis_run(an, m) == 0);
	REQUIRE(advice_run(an, NULL, out) == 0);
}

/* Free what advise() made of m, and m. */
static void done(struct model *m, struct analysis *an, struct advice *ad)
{
	advice_free(ad);
	analysis_free(an);
	model_free(m);
}

/* The finding of rule r (NULL if none). */
static const struct advice_finding *find(const struct advice *ad, enum advice_rule_id r)
{
	for (uint32_t i = 0; i < ad->n; i++)
		if (ad->v[i].rule == r)
			return &ad->v[i];
	return NULL;
}

/*
 * Rule 1, input-bound: three CPU steps of 1000U at 0, 1000U, 2000U, each opening with a
 * Dataloader range of `dl`: gap = DataLoader time = dl. dl = 100U: 300U of 3000U = 10% > 5%,
 * fires, at stake 300U, every step above 5%, worst (the first of equals) step #0. dl = 40U:
 * 4% <= 5%, silent. The same Dataloader ranges without ProfileStep ranges: silent.
 */
static struct model *input_model(int64_t dl, bool steps)
{
	uint32_t h, d;
	struct model *m = new_model(&h, &d, NULL);
	char name[32];
	for (int k = 0; k < 3; k++) {
		int64_t s = k * 1000 * U;
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		if (steps)
			R(m, h, s, s + 1000 * U, name, OPSCOPE_CAT_PROFILE_STEP, -1);
		R(m, h, s, s + dl, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
		  OPSCOPE_CAT_DATALOADER, -1);
		R(m, h, s + dl, s + 900 * U, "aten::add", OPSCOPE_CAT_OPERATOR, -1);
	}
	return m;
}

TEST(advice_input_bound)
{
	struct analysis an;
	struct advice ad;
	struct model *m = input_model(100 * U, true);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 1); /* CPU only: no GPU rule, and nothing else holds */
	const struct advice_finding *x = find(&ad, ADVICE_INPUT_BOUND);
	REQUIRE(x != NULL);
	CHECK_EQ_I(x->at_stake_ns, 300 * U);
	CHECK_EQ_I(x->base_ns, 3000 * U);
	CHECK(x->measured > 0.0999 && x->measured < 0.1001);
	CHECK(x->threshold == 0.05);
	CHECK_EQ_U(x->steps, 3);
	CHECK_EQ_U(x->file, 0);
	CHECK_EQ_I(x->start_ns, 0);
	CHECK_EQ_I(x->end_ns, 1000 * U);
	CHECK(strstr(x->finding, "10.0%") != NULL);
	CHECK(strstr(x->evidence, "worst ProfilerStep#0") != NULL);
	CHECK(strstr(x->change, "num_workers") != NULL);
	done(m, &an, &ad);

	m = input_model(40 * U, true);
	advise(m, &an, &ad);
	CHECK(find(&ad, ADVICE_INPUT_BOUND) == NULL);
	done(m, &an, &ad);

	m = input_model(100 * U, false); /* no steps: the step rules are silent */
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 0);
	done(m, &an, &ad);
}

/*
 * Rule 2, GPU idle: two steps of 1000U; in each, aten::cpu_heavy [s, s+300U) with no device
 * work, then aten::mm [s+300U, s+400U) whose cudaLaunchKernel [s+310U, s+312U) runs a kernel
 * [s+320U, s+320U+klen). klen = 300U: kernels busy 30% < 50% in both steps, fires: idle
 * (no data wait) 700U per step, 1400U in all of 2000U; measured busy = 1 - 1400/2000 = 0.3;
 * the evidence names aten::cpu_heavy, 2 calls, 600U. klen = 600U: 60%, silent.
 */
static struct model *idle_model(int64_t klen)
{
	uint32_t h, d;
	struct model *m = new_model(&h, &d, NULL);
	char name[32];
	for (int k = 0; k < 2; k++) {
		int64_t s = k * 1000 * U;
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		R(m, h, s, s + 1000 * U, name, OPSCOPE_CAT_PROFILE_STEP, -1);
		R(m, h, s, s + 300 * U, "aten::cpu_heavy", OPSCOPE_CAT_OPERATOR, -1);
		R(m, h, s + 300 * U, s + 400 * U, "aten::mm", OPSCOPE_CAT_OPERATOR, -1);
		launch(m, h, d, s + 310 * U, s + 320 * U, s + 320 * U + klen, "gemm",
		       OPSCOPE_CAT_KERNEL, k + 1);
	}
	return m;
}

TEST(advice_gpu_idle)
{
	struct analysis an;
	struct advice ad;
	struct model *m = idle_model(300 * U);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 1);
	const struct advice_finding *x = find(&ad, ADVICE_GPU_IDLE);
	REQUIRE(x != NULL);
	CHECK_EQ_I(x->at_stake_ns, 1400 * U);
	CHECK_EQ_I(x->base_ns, 2000 * U);
	CHECK(x->measured > 0.2999 && x->measured < 0.3001);
	CHECK_EQ_U(x->steps, 2);
	CHECK(strstr(x->finding, "GPU0") != NULL);
	CHECK(strstr(x->evidence, "aten::cpu_heavy (2, 600.0 us)") != NULL);
	CHECK(strstr(x->evidence, "aten::mm") == NULL); /* it launched device work */
	done(m, &an, &ad);

	m = idle_model(600 * U);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 0);
	done(m, &an, &ad);
}

/*
 * Rule 3, synchronizations: two steps of 1000U, each with a kernel [s+10U, s+900U) (busy 89%,
 * no GPU-idle finding) and aten::item [s+100U, s+200U) holding a cudaStreamSynchronize
 * [s+110U, s+110U+sync) and a cudaMemcpyAsync (not a sync); after the steps a
 * cudaDeviceSynchronize [2100U, 2500U) that is in no step. sync = 50U: 100U blocked of 2000U
 * = 5% >= 1%, fires, 2 calls (1 per step), credited to aten::item; the longest 50U at
 * [110U, 160U). sync = 5U: 0.5% < 1%, silent (the one outside the steps never counts).
 */
static struct model *sync_model(int64_t sync)
{
	uint32_t h, d;
	struct model *m = new_model(&h, &d, NULL);
	char name[32];
	for (int k = 0; k < 2; k++) {
		int64_t s = k * 1000 * U;
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		R(m, h, s, s + 1000 * U, name, OPSCOPE_CAT_PROFILE_STEP, -1);
		launch(m, h, d, s, s + 10 * U, s + 900 * U, "gemm", OPSCOPE_CAT_KERNEL, k + 1);
		R(m, h, s + 100 * U, s + 200 * U, "aten::item", OPSCOPE_CAT_OPERATOR, -1);
		R(m, h, s + 102 * U, s + 104 * U, "cudaMemcpyAsync", OPSCOPE_CAT_CUDA_RUNTIME, -1);
		R(m, h, s + 110 * U, s + 110 * U + sync, "cudaStreamSynchronize",
		  OPSCOPE_CAT_CUDA_RUNTIME, -1);
	}
	R(m, h, 2100 * U, 2500 * U, "cudaDeviceSynchronize", OPSCOPE_CAT_CUDA_RUNTIME, -1);
	return m;
}

TEST(advice_sync_in_step)
{
	struct analysis an;
	struct advice ad;
	struct model *m = sync_model(50 * U);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 1);
	const struct advice_finding *x = find(&ad, ADVICE_SYNC);
	REQUIRE(x != NULL);
	CHECK_EQ_I(x->at_stake_ns, 100 * U);
	CHECK_EQ_I(x->base_ns, 2000 * U);
	CHECK(x->measured > 0.0499 && x->measured < 0.0501);
	CHECK_EQ_U(x->steps, 2);
	CHECK_EQ_I(x->start_ns, 110 * U);
	CHECK_EQ_I(x->end_ns, 160 * U);
	CHECK(strstr(x->finding, "in 2 synchronizations") != NULL);
	CHECK(strstr(x->finding, "1.0 per step") != NULL);
	CHECK(strstr(x->evidence, "aten::item (2, 100.0 us)") != NULL);
	done(m, &an, &ad);

	m = sync_model(5 * U);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 0);
	done(m, &an, &ad);
}

/*
 * Rule 4, pageable copies (no steps needed): host op [0, 1000U) makes the total 1000U; a copy
 * named `name` [100U, 150U) on the device: "Pageable" in the name, 50U = 5% >= 1%, fires,
 * at stake 50U at [100U, 150U). Pinned: silent.
 */
static struct model *copy_model(const char *name)
{
	uint32_t h, d;
	struct model *m = new_model(&h, &d, NULL);
	R(m, h, 0, 1000 * U, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 90 * U, 92 * U, "cudaMemcpyAsync", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, d, 100 * U, 150 * U, name, OPSCOPE_CAT_MEMCPY, 1);
	return m;
}

TEST(advice_pageable_copy)
{
	struct analysis an;
	struct advice ad;
	struct model *m = copy_model("Memcpy HtoD (Pageable -> Device)");
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 1);
	const struct advice_finding *x = find(&ad, ADVICE_PAGEABLE);
	REQUIRE(x != NULL);
	CHECK_EQ_I(x->at_stake_ns, 50 * U);
	CHECK_EQ_I(x->base_ns, 1000 * U);
	CHECK_EQ_I(x->start_ns, 100 * U);
	CHECK_EQ_I(x->end_ns, 150 * U);
	CHECK(strstr(x->finding, "1 copies") != NULL);
	CHECK(strstr(x->change, "pin_memory") != NULL);
	done(m, &an, &ad);

	m = copy_model("Memcpy HtoD (Pinned -> Device)");
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 0);
	done(m, &an, &ad);
}

/*
 * Rule 5, tiny kernels: two steps of 1000U, each with 120 launches [s+8iU, s+8iU+2U) of a
 * kernel [s+8iU+2U, s+8iU+2U+klen). klen = 5U < 10 us: 240 of 240 kernels tiny (100% >=
 * 50%), 120 per step >= 100, fires; at stake = the launch calls' time, 240 x 2U = 480U.
 * Kernels busy 600U of 1000U: no GPU-idle finding. klen = 12U: none tiny, silent.
 */
static struct model *tiny_model(int64_t klen)
{
	uint32_t h, d;
	struct model *m = new_model(&h, &d, NULL);
	char name[32];
	for (int k = 0; k < 2; k++) {
		int64_t s = k * 1000 * U;
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		R(m, h, s, s + 1000 * U, name, OPSCOPE_CAT_PROFILE_STEP, -1);
		for (int i = 0; i < 120; i++) {
			int64_t ls = s + 8 * i * U;
			launch(m, h, d, ls, ls + 2 * U, ls + 2 * U + klen, "elementwise",
			       OPSCOPE_CAT_KERNEL, k * 1000 + i + 1);
		}
	}
	return m;
}

TEST(advice_tiny_kernels)
{
	struct analysis an;
	struct advice ad;
	struct model *m = tiny_model(5 * U);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 1);
	const struct advice_finding *x = find(&ad, ADVICE_TINY_KERNELS);
	REQUIRE(x != NULL);
	CHECK_EQ_I(x->at_stake_ns, 480 * U);
	CHECK(x->measured == 1.0);
	CHECK_EQ_U(x->steps, 2);
	CHECK(strstr(x->finding, "(240 of 240, 120 per step)") != NULL);
	done(m, &an, &ad);

	m = tiny_model(12 * U);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 0);
	done(m, &an, &ad);
}

/*
 * Rule 6, tensor cores: on a "Tesla V100-SXM2-16GB", aten::mm [0, 100U) of float [64,64] x
 * [64,64] (eligible through reduced precision) launches `kernel` [20U, 120U). An SGEMM
 * (volta_sgemm_128x64_nn: no tensor cores): 100U of 100U off tensor cores, fires, at stake
 * 100U; V100 has no TF32, so the change is float16 autocast. An HMMA kernel
 * (volta_h884gemm_64x64_nn): tensor cores used, silent.
 */
static struct model *tc_model(const char *kernel)
{
	uint32_t h, d;
	struct model *m = new_model(&h, &d, NULL);
	model_set_meta(m, 1, S(m, "device.0.name"), S(m, "Tesla V100-SXM2-16GB"));
	uint64_t i = R(m, h, 0, 100 * U, "aten::mm", OPSCOPE_CAT_OPERATOR, -1);
	uint64_t a =
		model_add_arg(m, S(m, "Input Dims"), MODEL_ARG_JSON, S(m, "[[64, 64], [64, 64]]"));
	model_add_arg(m, S(m, "Input type"), MODEL_ARG_JSON, S(m, "[\"float\", \"float\"]"));
	m->tracks[h].ranges.first_arg[i] = a;
	m->tracks[h].ranges.nargs[i] = 2;
	launch(m, h, d, 10 * U, 20 * U, 120 * U, kernel, OPSCOPE_CAT_KERNEL, 1);
	return m;
}

TEST(advice_tensor_cores)
{
	struct analysis an;
	struct advice ad;
	struct model *m = tc_model("volta_sgemm_128x64_nn");
	advise(m, &an, &ad);
	const struct advice_finding *x = find(&ad, ADVICE_TENSOR_CORES);
	REQUIRE(x != NULL);
	CHECK_EQ_I(x->at_stake_ns, 100 * U);
	CHECK_EQ_I(x->base_ns, 100 * U);
	CHECK_EQ_U(x->file, ADVICE_NO_FILE);
	CHECK(strstr(x->evidence, "aten::mm (1, 100.0 us)") != NULL);
	CHECK(strstr(x->change, "float16") != NULL);
	done(m, &an, &ad);

	m = tc_model("volta_h884gemm_64x64_nn");
	advise(m, &an, &ad);
	CHECK(find(&ad, ADVICE_TENSOR_CORES) == NULL);
	done(m, &an, &ad);
}

/*
 * Rule 7, exposed communication: two steps of 1000U, each with a compute kernel [s+10U,
 * s+600U) on stream 7 and an NCCL kernel on stream 8 at [s+cs, s+cs+200U). cs = 600U: no
 * compute under it, 200U exposed per step, 400U of 2000U = 20% > 10%, fires. cs = 300U: the
 * NCCL kernel runs under the compute kernel, 0 exposed, silent. Kernels (NCCL ones too) busy
 * 79% and 59%: no GPU-idle finding.
 */
static struct model *comm_model(int64_t cs)
{
	uint32_t h, d, d2;
	struct model *m = new_model(&h, &d, &d2);
	char name[32];
	for (int k = 0; k < 2; k++) {
		int64_t s = k * 1000 * U;
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		R(m, h, s, s + 1000 * U, name, OPSCOPE_CAT_PROFILE_STEP, -1);
		launch(m, h, d, s, s + 10 * U, s + 600 * U, "gemm", OPSCOPE_CAT_KERNEL, 2 * k + 1);
		launch(m, h, d2, s + 4 * U, s + cs, s + cs + 200 * U, "ncclAllReduceRingLLKernel",
		       OPSCOPE_CAT_COMMUNICATION, 2 * k + 2);
	}
	return m;
}

TEST(advice_exposed_comm)
{
	struct analysis an;
	struct advice ad;
	struct model *m = comm_model(600 * U);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 1);
	const struct advice_finding *x = find(&ad, ADVICE_EXPOSED_COMM);
	REQUIRE(x != NULL);
	CHECK_EQ_I(x->at_stake_ns, 400 * U);
	CHECK_EQ_I(x->base_ns, 2000 * U);
	CHECK(x->measured > 0.1999 && x->measured < 0.2001);
	CHECK_EQ_U(x->steps, 2);
	done(m, &an, &ad);

	m = comm_model(300 * U);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 0);
	done(m, &an, &ad);
}

/*
 * Rule 8, first step: four CPU steps back to back lasting first, 1000U, 1200U, 1100U; the
 * median of the other three is 1100U. first = 4000U > 1.5 x 1100U = 1650U, fires: at stake
 * 4000U - 1100U = 2900U, measured 4000/1100. first = 1600U: silent. Two steps only: silent.
 */
static struct model *first_model(int64_t first, int nsteps)
{
	uint32_t h, d;
	struct model *m = new_model(&h, &d, NULL);
	const int64_t dur[4] = { first, 1000 * U, 1200 * U, 1100 * U };
	char name[32];
	int64_t s = 0;
	for (int k = 0; k < nsteps; k++) {
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		R(m, h, s, s + dur[k], name, OPSCOPE_CAT_PROFILE_STEP, -1);
		R(m, h, s, s + dur[k] / 2, "aten::add", OPSCOPE_CAT_OPERATOR, -1);
		s += dur[k];
	}
	return m;
}

TEST(advice_first_step)
{
	struct analysis an;
	struct advice ad;
	struct model *m = first_model(4000 * U, 4);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 1);
	const struct advice_finding *x = find(&ad, ADVICE_FIRST_STEP);
	REQUIRE(x != NULL);
	CHECK_EQ_I(x->at_stake_ns, 2900 * U);
	CHECK(x->measured > 3.636 && x->measured < 3.637);
	CHECK_EQ_I(x->start_ns, 0);
	CHECK_EQ_I(x->end_ns, 4000 * U);
	CHECK(strstr(x->finding, "3.64x the median of the other 3 steps") != NULL);
	done(m, &an, &ad);

	m = first_model(1600 * U, 4);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 0);
	done(m, &an, &ad);

	m = first_model(4000 * U, 2);
	advise(m, &an, &ad);
	CHECK_EQ_U(ad.n, 0);
	done(m, &an, &ad);
}

/*
 * Ranking: the GPU-idle model (1400U at stake) gets a pageable copy [1500U, 1520U) in its
 * second step (in the last step: a last step with fewer GPU events than the one before would
 * be dropped) of 20U, 1% of the 2000U total, so it fires too: idle first, then the copy.
 */
TEST(advice_ranked_by_time_at_stake)
{
	struct model *m = idle_model(300 * U);
	uint32_t h = 0, d = 1;
	R(m, h, 1450 * U, 1452 * U, "cudaMemcpyAsync", OPSCOPE_CAT_CUDA_RUNTIME, 99);
	R(m, d, 1500 * U, 1520 * U, "Memcpy HtoD (Pageable -> Device)", OPSCOPE_CAT_MEMCPY, 99);
	struct analysis an;
	struct advice ad;
	advise(m, &an, &ad);
	REQUIRE(ad.n == 2);
	CHECK_EQ_U(ad.v[0].rule, ADVICE_GPU_IDLE);
	CHECK_EQ_U(ad.v[1].rule, ADVICE_PAGEABLE);
	CHECK_EQ_I(ad.v[1].at_stake_ns, 20 * U);
	done(m, &an, &ad);
}

/*
 * Rule 9, straggler: one file per rank, three steps of 1000U each at k * 1000U, rank r's clock
 * late by r * 10000U (alignment takes it out: offsets -r * 10000U from the all-reduce ends).
 * In each step a rank computes on one kernel [cs, cs + c) and then reaches an all-reduce
 * that every rank leaves at 900U (its arrival = cs + c); a DataLoader range [0, dl) delays
 * its compute. Ranks 0 and 1: cs 100U, c 400U (arrive 500U), no DataLoader. Rank 2:
 *   step 0: c 600U, arrives 700U. The others wait 700U - 500U = 200U, so their ready time is
 *           1000U - 200U = 800U against rank 2's 1000U: margin 200U > 5% x 1000U = 50U.
 *           Cause: compute 600U - median(400U, 400U) = 200U >= 200U / 2: longer compute.
 *   step 1: DataLoader [0, 400U), cs 400U, c 400U, arrives 800U: margin 800U - 500U = 300U
 *           > 50U; data wait 400U - median(0, 0) = 400U >= 150U: waited for data.
 *   step 2: c 420U, arrives 520U: margin 20U = 2% of the step: not counted.
 * Rank 2 led 2 of 3 steps above 5% (>= half, and no other rank led any): fires. At stake
 * 200U + 300U = 500U; base: rank 2's three steps, 3000U; measured 500U / 2000U = 0.25 (the
 * margins over the step time of the two steps). The cause with the larger margins is data
 * (300U against 200U): the change is about DataLoader workers. Worst step: step 1, on rank
 * 2's own clock [1000U + 20000U, 2000U + 20000U). The evidence lists the steps by margin.
 */
struct strag_rank {
	int32_t rank;  /* its rank */
	int64_t c[3];  /* compute kernel duration per step */
	int64_t dl[3]; /* DataLoader range [0, dl) per step; 0: none, compute at 100U */
};

static void add_strag_rank(struct model *m, const struct strag_rank *x, int nsteps)
{
	char path[16], name[32];
	snprintf(path, sizeof(path), "rank%d", x->rank);
	model_add_file(m, path, "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, (uint32_t)(100 + x->rank), 1, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	uint32_t c = model_add_track(m, MODEL_TRACK_DEVICE, 0, 20, 0);
	m->processes[m->tracks[h].process].rank = x->rank;
	int64_t skew = x->rank * 10000 * U;
	for (int k = 0; k < nsteps; k++) {
		int64_t b = skew + k * 1000 * U, cs = x->dl[k] ? x->dl[k] : 100 * U;
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		R(m, h, b, b + 1000 * U, name, OPSCOPE_CAT_PROFILE_STEP, -1);
		if (x->dl[k])
			R(m, h, b, b + x->dl[k],
			  "enumerate(DataLoader)#_SingleProcessDataLoaderIter",
			  OPSCOPE_CAT_DATALOADER, -1);
		launch(m, h, d, b + cs - 90 * U, b + cs, b + cs + x->c[k], "gemm",
		       OPSCOPE_CAT_KERNEL, 2 * k + 1);
		launch(m, h, c, b + cs - 70 * U, b + cs + x->c[k], b + 900 * U,
		       "ncclKernel_AllReduce_RING_LL_Sum_float", OPSCOPE_CAT_COMMUNICATION,
		       2 * k + 2);
	}
}

static struct model *strag_model(const struct strag_rank *v, int n, int nsteps)
{
	struct model *m = model_new();
	for (int i = 0; i < n; i++)
		add_strag_rank(m, &v[i], nsteps);
	return m;
}

TEST(advice_straggler)
{
	const struct strag_rank slow[3] = {
		{ 0, { 400 * U, 400 * U, 400 * U }, { 0, 0, 0 } },
		{ 1, { 400 * U, 400 * U, 400 * U }, { 0, 0, 0 } },
		{ 2, { 600 * U, 400 * U, 420 * U }, { 0, 400 * U, 0 } },
	};
	struct analysis an;
	struct advice ad;
	struct model *m = strag_model(slow, 3, 3);
	advise(m, &an, &ad);
	const struct advice_finding *x = find(&ad, ADVICE_STRAGGLER);
	REQUIRE(x != NULL);
	CHECK_EQ_U(x->file, 2); /* rank 2's file */
	CHECK_EQ_I(x->at_stake_ns, 500 * U);
	CHECK_EQ_I(x->base_ns, 3000 * U);
	CHECK(x->measured > 0.2499 && x->measured < 0.2501);
	CHECK(x->threshold == 0.05);
	CHECK_EQ_U(x->steps, 2);
	CHECK_EQ_I(x->start_ns, 21000 * U);
	CHECK_EQ_I(x->end_ns, 22000 * U);
	CHECK(strcmp(x->finding,
		     "rank 2 ended last in 2 of 3 steps, by 250.0 us on average "
		     "(25.0% of its step): the other ranks waited 500.0 us for it") == 0);
	CHECK(strcmp(x->evidence,
		     "steps (margin): ProfilerStep#1 (300.0 us), ProfilerStep#0 (200.0 us); why: "
		     "waited for data in 1 (400.0 us more than the other ranks' median, on "
		     "average), longer compute in 1 (200.0 us more than the other ranks' median, "
		     "on average)") == 0);
	CHECK(strstr(x->change, "num_workers") != NULL);
	done(m, &an, &ad);

	/* balanced: every rank computes 400U; every margin is 0: silent */
	const struct strag_rank even[3] = {
		{ 0, { 400 * U, 400 * U, 400 * U }, { 0, 0, 0 } },
		{ 1, { 400 * U, 400 * U, 400 * U }, { 0, 0, 0 } },
		{ 2, { 400 * U, 400 * U, 400 * U }, { 0, 0, 0 } },
	};
	m = strag_model(even, 3, 3);
	advise(m, &an, &ad);
	CHECK(find(&ad, ADVICE_STRAGGLER) == NULL);
	done(m, &an, &ad);

	/* one rank alone (the slow rank 2 above): nothing to compare, silent */
	m = strag_model(&slow[2], 1, 3);
	advise(m, &an, &ad);
	CHECK(find(&ad, ADVICE_STRAGGLER) == NULL);
	done(m, &an, &ad);

	/* two ranks taking turns: rank 0 last by 200U in step 0 (c 600U), rank 1 by 200U in
	 * step 1; each led 1 of 2 steps (half): no one straggler, silent */
	const struct strag_rank turns[2] = {
		{ 0, { 600 * U, 400 * U, 0 }, { 0, 0, 0 } },
		{ 1, { 400 * U, 600 * U, 0 }, { 0, 0, 0 } },
	};
	m = strag_model(turns, 2, 2);
	advise(m, &an, &ad);
	CHECK(find(&ad, ADVICE_STRAGGLER) == NULL);
	done(m, &an, &ad);
	/* the same, step 1 balanced: rank 0 led 1 of 2 steps alone: fires, 200U at stake */
	const struct strag_rank once[2] = {
		{ 0, { 600 * U, 400 * U, 0 }, { 0, 0, 0 } },
		{ 1, { 400 * U, 400 * U, 0 }, { 0, 0, 0 } },
	};
	m = strag_model(once, 2, 2);
	advise(m, &an, &ad);
	x = find(&ad, ADVICE_STRAGGLER);
	REQUIRE(x != NULL);
	CHECK_EQ_U(x->file, 0);
	CHECK_EQ_I(x->at_stake_ns, 200 * U);
	CHECK_EQ_U(x->steps, 1);
	CHECK(strstr(x->change, "balance the work") != NULL); /* longer compute */
	done(m, &an, &ad);
}

TEST_MAIN(advice_input_bound, advice_gpu_idle, advice_sync_in_step, advice_pageable_copy,
	  advice_tiny_kernels, advice_tensor_cores, advice_exposed_comm, advice_first_step,
	  advice_ranked_by_time_at_stake, advice_straggler)
