/*
 * test_analyze_partition.c: properties of the tables whose rows docs/report.md says partition
 * a total, over many random traces (a seeded generator, so a failure names the seed that
 * reproduces it): the Model Summary's phases and Others add up to the total time with no
 * negative row, and no Overview ratio exceeds 100 %. The traces mix what broke these before:
 * phase ranges outside the steps, phases on several threads that overlap, nested phases,
 * gaps between steps, no steps at all, kernels on several streams.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>

#include "opscope/opscope.h"

#include "analyze/analysis.h"
#include "analyze/overview.h"
#include "analyze/phases.h"
#include "analyze/steps.h"
#include "formats/import.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"

/* xorshift64*: the same seed gives the same trace on every machine. */
static uint64_t rng_state;

static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return n ? (rng_state * 0x2545F4914F6CDD1DULL >> 11) % n : 0;
}

struct gen {
	struct model *m;
	uint32_t dev[2];     /* device tracks (streams) */
	int64_t dev_free[2]; /* where the next kernel may start on each */
	int64_t corr;
};

static const uint8_t inner_cats[] = {
	OPSCOPE_CAT_DATALOADER,	  OPSCOPE_CAT_FORWARD,	    OPSCOPE_CAT_BACKWARD,
	OPSCOPE_CAT_OPTIMIZATION, OPSCOPE_CAT_OPERATOR,	    OPSCOPE_CAT_OPERATOR,
	OPSCOPE_CAT_USER_DEFINED, OPSCOPE_CAT_CUDA_RUNTIME, OPSCOPE_CAT_CUDA_RUNTIME,
};

/* A runtime call [s, e) that launches a kernel on a random stream, after the call starts. */
static void launch(struct gen *g, uint32_t t, int64_t s, int64_t e)
{
	int64_t c = ++g->corr;
	R(g->m, t, s, e, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, c);
	int k = (int)rnd(2);
	int64_t ks = s + (int64_t)rnd(30);
	ks = ks > g->dev_free[k] ? ks : g->dev_free[k];
	int64_t ke = ks + 1 + (int64_t)rnd(60);
	R(g->m, g->dev[k], ks, ke, rnd(8) ? "gemm" : "ncclKernel_AllReduce",
	  rnd(8) ? OPSCOPE_CAT_KERNEL : OPSCOPE_CAT_COMMUNICATION, c);
	g->dev_free[k] = ke;
}

/* Children of [s, e) on track t, in start order, nested to `depth` more levels. */
static void children(struct gen *g, uint32_t t, int64_t s, int64_t e, int depth)
{
	int64_t at = s;
	while (depth > 0 && at < e && rnd(4)) {
		int64_t cs = at + (int64_t)rnd((uint64_t)(e - at) / 2 + 1);
		int64_t ce = cs + (int64_t)rnd((uint64_t)(e - cs) + 1);
		if (ce > e)
			ce = e;
		uint8_t cat = inner_cats[rnd(sizeof(inner_cats))];
		if (cat == OPSCOPE_CAT_CUDA_RUNTIME) {
			launch(g, t, cs, ce);
		} else {
			R(g->m, t, cs, ce, opscope_category_name(cat), cat, -1);
			children(g, t, cs, ce, depth - 1);
		}
		at = ce + (int64_t)rnd(5);
	}
}

/* A random trace: 1 to 3 host threads, the first with ProfileStep ranges (or none),
 * top-level ranges on the others (phases among them) anywhere, in the steps or not. */
static struct model *random_trace(void)
{
	struct gen g;
	memset(&g, 0, sizeof(g));
	g.m = model_new();
	model_add_file(g.m, "random", "test");
	int threads = 1 + (int)rnd(3);
	uint32_t host[3];
	for (int k = 0; k < threads; k++)
		host[k] = model_add_track(g.m, MODEL_TRACK_THREAD, 1, (uint32_t)(k + 1), 0);
	g.dev[0] = model_add_track(g.m, MODEL_TRACK_DEVICE, 0, 7, 0);
	g.dev[1] = model_add_track(g.m, MODEL_TRACK_DEVICE, 0, 8, 0);
	bool steps = rnd(5) != 0;
	int64_t at = (int64_t)rnd(50);
	for (int k = 0; k < 1 + (int)rnd(5); k++) { /* main thread: steps, with ranges between */
		int64_t len = 20 + (int64_t)rnd(300);
		uint8_t cat = steps && rnd(4) ? OPSCOPE_CAT_PROFILE_STEP
					      : inner_cats[rnd(sizeof(inner_cats) - 2)];
		char name[32];
		snprintf(name, sizeof(name), "ProfileStep#%d", k);
		R(g.m, host[0], at, at + len,
		  cat == OPSCOPE_CAT_PROFILE_STEP ? name : opscope_category_name(cat), cat, -1);
		children(&g, host[0], at, at + len, 3);
		at += len + (int64_t)rnd(3) * (int64_t)rnd(40);
	}
	for (int k = 1; k < threads; k++)
		children(&g, host[k], (int64_t)rnd(100), at + (int64_t)rnd(100), 3);
	nest(g.m);
	return g.m;
}

/* Check the partitions of the trace of one seed. */
static void check_trace(uint64_t seed)
{
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	struct model *m = random_trace();
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct phases ph;
	REQUIRE(phases_analyze(&a, &ph) == 0);
	int64_t cpu = ph.others_cpu_ns;
	bool ok = ph.others_cpu_ns >= 0;
	for (int k = PHASE_DATALOADER; k < PHASE_COUNT; k++) {
		const struct phase_time *p = &ph.phase[k];
		ok = ok && p->cpu_ns >= 0 && p->cpu_ns <= a.total_ns;
		ok = ok && (!p->calls || (p->cpu_max_ns <= p->cpu_ns && p->cpu_min_ns >= 0));
		cpu += p->cpu_ns;
	}
	ok = ok && cpu == a.total_ns;
	struct overview ov;
	REQUIRE(overview_analyze(&a, &ov) == 0);
	for (int k = 0; k < OPSCOPE_CAT_COUNT_; k++)
		ok = ok && ov.host[k].time_ns >= 0 && ov.host[k].time_ns <= a.total_ns &&
		     ov.gpu[k].time_ns >= 0 && ov.gpu[k].time_ns <= a.total_ns &&
		     ov.host[k].calls <= ov.host[k].ranges;
	if (!ok)
		fprintf(stderr, "# seed %llu: total %lld, others cpu %lld, phases sum %lld\n",
			(unsigned long long)seed, (long long)a.total_ns,
			(long long)ph.others_cpu_ns, (long long)cpu);
	CHECK(ok);
	phases_free(&ph);
	analysis_free(&a);
	model_free(m);
}

TEST(random_traces_partition)
{
	for (uint64_t seed = 1; seed <= 2000; seed++)
		check_trace(seed);
}

/*
 * Steps [0,100) and [100,200) on thread 1; Forward [10,60) and Backward [60,120) on thread 1,
 * Forward [40,90) on thread 2 (overlapping the first); the DataLoader's last next() [200,260)
 * after the last step. Total 200. Forward: [10,90) = 80 (thread 1's call 50, thread 2's the
 * rest, 30); Backward: what Forward leaves of [60,120), [90,120) = 30; Dataloader: outside
 * the steps, no call; Others 200 - 110 = 90. Before, Others was 200 - 60 - 100 - 60 = -20.
 */
TEST(phases_clipped_and_merged)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h1 = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	R(m, h1, 0, 100, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h1, 10, 60, "fwd", OPSCOPE_CAT_FORWARD, -1);
	R(m, h1, 60, 120, "bwd", OPSCOPE_CAT_BACKWARD, -1);
	R(m, h1, 100, 200, "ProfileStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h1, 200, 260, "next", OPSCOPE_CAT_DATALOADER, -1);
	R(m, h2, 40, 90, "fwd", OPSCOPE_CAT_FORWARD, -1);
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct phases ph;
	REQUIRE(phases_analyze(&a, &ph) == 0);
	CHECK_EQ_I(a.total_ns, 200);
	CHECK_EQ_U(ph.phase[PHASE_FORWARD].calls, 2);
	CHECK_EQ_I(ph.phase[PHASE_FORWARD].cpu_ns, 80);
	CHECK_EQ_I(ph.phase[PHASE_FORWARD].cpu_max_ns, 50);
	CHECK_EQ_I(ph.phase[PHASE_FORWARD].cpu_min_ns, 30);
	CHECK_EQ_U(ph.phase[PHASE_BACKWARD].calls, 1);
	CHECK_EQ_I(ph.phase[PHASE_BACKWARD].cpu_ns, 30);
	CHECK_EQ_U(ph.phase[PHASE_DATALOADER].calls, 0);
	CHECK_EQ_I(ph.phase[PHASE_DATALOADER].cpu_ns, 0);
	CHECK_EQ_I(ph.others_cpu_ns, 90);
	struct overview ov;
	REQUIRE(overview_analyze(&a, &ov) == 0);
	CHECK_EQ_I(ov.host[OPSCOPE_CAT_FORWARD].time_ns, 80);
	CHECK_EQ_U(ov.host[OPSCOPE_CAT_FORWARD].calls, 2);
	CHECK_EQ_I(ov.host[OPSCOPE_CAT_BACKWARD].time_ns, 60);
	CHECK_EQ_I(ov.host[OPSCOPE_CAT_DATALOADER].time_ns, 0);
	CHECK_EQ_U(ov.host[OPSCOPE_CAT_DATALOADER].calls, 0);
	phases_free(&ph);
	analysis_free(&a);
	model_free(m);
}

/* Per step of a trace: the Model rows' GPU time adds up to the step's, which is the Step
 * table's Kernel column, for the steps that table keeps; nothing negative. Returns the steps
 * checked. */
static void check_model_against_steps(const struct model *m, const char *what, uint32_t *checked)
{
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct phases ph;
	REQUIRE(phases_analyze(&a, &ph) == 0);
	uint32_t k = 0;
	int64_t others = 0;
	for (uint32_t f = 0; f < m->nfiles; f++) {
		struct step_table st;
		REQUIRE(steps_analyze(&a.tree, f, &st) == 0);
		REQUIRE(k + st.nspans <= ph.nsteps);
		for (uint32_t r = 0; r < st.nrows; r++) {
			const struct phase_step *ps = &ph.steps[k + r];
			int64_t sum = ps->others_gpu_ns;
			bool ok =
				ps->others_gpu_ns >= 0 && ps->phase_gpu_ns[PHASE_PROFILE_STEP] == 0;
			for (int p = PHASE_DATALOADER; p < PHASE_COUNT; p++) {
				ok = ok && ps->phase_gpu_ns[p] >= 0;
				sum += ps->phase_gpu_ns[p];
			}
			ok = ok && ps->s == st.rows[r].start_ns && sum == ps->gpu_ns &&
			     ps->gpu_ns == st.rows[r].role_ns[STEP_KERNEL];
			if (!ok)
				printf("#   %s step %u: model rows %lld, step kernel %lld\n", what,
				       r, (long long)sum,
				       (long long)st.rows[r].role_ns[STEP_KERNEL]);
			CHECK(ok);
			(*checked)++;
		}
		k += st.nspans;
		steps_free(&st);
	}
	CHECK_EQ_U(k, ph.nsteps);
	int64_t step_gpu = 0;
	for (uint32_t i = 0; i < ph.nsteps; i++) {
		step_gpu += ph.steps[i].gpu_ns;
		others += ph.steps[i].others_gpu_ns;
	}
	CHECK_EQ_I(ph.phase[PHASE_PROFILE_STEP].gpu_ns, step_gpu);
	CHECK_EQ_I(ph.others_gpu_ns, others);
	phases_free(&ph);
	analysis_free(&a);
}

/* Every real trace under ../shared/data with steps: the Model rows' GPU time per step is the
 * Step table's kernel time. */
static uint32_t walk(const char *dir, uint32_t *traces)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	uint32_t steps = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		size_t n = strlen(path);
		if (de->d_type == DT_DIR) {
			steps += walk(path, traces);
			continue;
		}
		if (!(n > 5 && strcmp(path + n - 5, ".json") == 0) &&
		    !(n > 8 && strcmp(path + n - 8, ".json.gz") == 0))
			continue;
		struct model *m = model_new();
		char err[512];
		if (import_load_path(m, path, err, sizeof(err)) == 0) {
			uint32_t k = 0;
			check_model_against_steps(m, path, &k);
			steps += k;
			*traces += k > 0;
		}
		model_free(m);
	}
	closedir(d);
	return steps;
}

TEST(real_traces_model_gpu_is_step_kernel)
{
	const char *dir = OPSCOPE_TEST_DATA_DIR "/../../shared/data/kineto";
	DIR *d = opendir(dir);
	if (!d) {
		SKIP("shared data not present");
		return;
	}
	closedir(d);
	uint32_t traces = 0, steps = walk(dir, &traces);
	printf("#   %u steps of %u traces\n", steps, traces);
	CHECK(traces >= 10);
}

/* ResNet-50 on a V100: the autograd thread's kernels are Backward's, and the ProfileStep GPU
 * time is the Step table's 98.59 ms of kernels a step (it was 34.24: the main thread's
 * launches only). */
TEST(resnet50_backward_kernels)
{
	const char *path = OPSCOPE_TEST_DATA_DIR
		"/../../shared/data/kineto/tb_plugin/samples/"
		"resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz";
	FILE *f = fopen(path, "rb");
	if (!f) {
		SKIP("shared data not present");
		return;
	}
	fclose(f);
	struct model *m = model_new();
	char err[512];
	REQUIRE(import_load_path(m, path, err, sizeof(err)) == 0);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct phases ph;
	REQUIRE(phases_analyze(&a, &ph) == 0);
	const struct phase_time *ps = &ph.phase[PHASE_PROFILE_STEP];
	CHECK_EQ_U(ps->calls, 6);
	/* 98598 + 98570 + 98596 + 98623 + 98504 + 98641 us, to the ns */
	CHECK_EQ_I(ps->gpu_ns / 6 / 1000, 98588);
	CHECK_EQ_U(ph.phase[PHASE_BACKWARD].calls, 6);
	CHECK(ph.phase[PHASE_BACKWARD].gpu_ns > ps->gpu_ns / 2);
	CHECK(ph.others_gpu_ns >= 0 && ph.others_gpu_ns < ps->gpu_ns / 2);
	phases_free(&ph);
	analysis_free(&a);
	model_free(m);
}

/*
 * One Forward per forward pass. Step 1 [0,100): module calls Net [0,30) and CrossEntropyLoss
 * [32,40), Backward [40,80), Optimization [80,95). Step 2 [100,200): Net [100,130), loss
 * [131,140), Backward [140,170), then a second pass (gradient accumulation): Net [170,180),
 * Backward [180,190). Step 3 [200,300): Net [200,220); step 4 [300,400): Net [300,320) (a
 * step starts between them: two passes). Forward calls: [0,40), [100,140), [170,180),
 * [200,220), [300,320): 5 (each module call was one: 7), 40 + 40 + 10 + 20 + 20 = 130.
 */
TEST(one_forward_per_pass)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	R(m, h, 0, 100, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 30, "Net", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 32, 40, "CrossEntropyLoss", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 40, 80, "backward", OPSCOPE_CAT_BACKWARD, -1);
	R(m, h, 80, 95, "Optimizer.step", OPSCOPE_CAT_OPTIMIZATION, -1);
	R(m, h, 100, 200, "ProfileStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 100, 130, "Net", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 131, 140, "CrossEntropyLoss", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 140, 170, "backward", OPSCOPE_CAT_BACKWARD, -1);
	R(m, h, 170, 180, "Net", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 180, 190, "backward", OPSCOPE_CAT_BACKWARD, -1);
	R(m, h, 200, 300, "ProfileStep#3", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 200, 220, "Net", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 300, 400, "ProfileStep#4", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 300, 320, "Net", OPSCOPE_CAT_FORWARD, -1);
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct phases ph;
	REQUIRE(phases_analyze(&a, &ph) == 0);
	CHECK_EQ_U(ph.phase[PHASE_FORWARD].calls, 5);
	CHECK_EQ_I(ph.phase[PHASE_FORWARD].cpu_ns, 130);
	CHECK_EQ_I(ph.phase[PHASE_FORWARD].cpu_max_ns, 40);
	CHECK_EQ_I(ph.phase[PHASE_FORWARD].cpu_min_ns, 10);
	CHECK_EQ_U(ph.phase[PHASE_BACKWARD].calls, 3);
	struct overview ov;
	REQUIRE(overview_analyze(&a, &ov) == 0);
	CHECK_EQ_U(ov.host[OPSCOPE_CAT_FORWARD].calls, 5);
	CHECK_EQ_I(ov.host[OPSCOPE_CAT_FORWARD].time_ns, 130);
	phases_free(&ph);
	analysis_free(&a);
	model_free(m);
}

TEST_MAIN(random_traces_partition, one_forward_per_pass, phases_clipped_and_merged,
	  real_traces_model_gpu_is_step_kernel, resnet50_backward_kernels)
