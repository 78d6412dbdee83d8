/*
 * test_steps.c: the step view (src/analyze/steps.c): the priority partition, stretching steps
 * to the GPU work they launched, dropping trailing steps, and the step trace, on a model
 * built by hand; then the oracle of ../shared/data/README.md on the real ResNet-50 trace.
 */
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/steps.h"
#include "analyze/tree.h"
#include "formats/import.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"

/* The step table of one file, with the tree it needs. */
static int analyze(const struct model *m, uint32_t file, struct step_table *st)
{
	struct tree tree;
	if (tree_build(&tree, m) != 0)
		return OPSCOPE_ENOMEM;
	int rc = steps_analyze(&tree, file, st);
	tree_free(&tree);
	return rc;
}

/* Two steps on a host thread, kernels on one stream; step 1 launches a kernel that runs past
 * the host step's end; step 3 launches nothing and is dropped. */
TEST(synthetic_partition)
{
	struct model *m = model_new();
	CHECK(model_add_file(m, "synthetic", "test") == 0);
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	/* step 1: [0,100): dataloader [0,30), op [30,90) with a runtime call [40,50) */
	R(m, h, 0, 100, "ProfilerStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 30, "enumerate(DataLoader)#x.__next__", OPSCOPE_CAT_DATALOADER, -1);
	R(m, h, 30, 90, "aten::conv", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 40, 50, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 11);
	R(m, h, 60, 70, "autograd::engine::evaluate_function: X", OPSCOPE_CAT_BACKWARD, -1);
	/* step 2: [100,200): op [100,150), runtime [110,120) */
	R(m, h, 100, 200, "ProfilerStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 100, 150, "aten::mm", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 110, 120, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 12);
	/* step 3: no launches */
	R(m, h, 200, 300, "ProfilerStep#3", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, d, 55, 130, "k1", OPSCOPE_CAT_KERNEL, 11); /* runs past step 1's host end */
	R(m, d, 130, 140, "k2", OPSCOPE_CAT_KERNEL, 12);
	for (uint32_t t = 0; t < m->ntracks; t++)
		model_nest_track(m, t);
	struct step_table st;
	CHECK(analyze(m, 0, &st) == 0);
	CHECK_EQ_U(st.nrows, 2);
	CHECK_EQ_U(st.dropped, 1);
	/* step 1 stretched to k1's end: [0,130) */
	CHECK_EQ_I(st.rows[0].start_ns, 0);
	CHECK_EQ_I(st.rows[0].end_ns, 130);
	/* step 2 starts where step 1 ended: [130,200) */
	CHECK_EQ_I(st.rows[1].start_ns, 130);
	CHECK_EQ_I(st.rows[1].end_ns, 200);
	/* step 1: kernel [55,130) = 75; runtime [40,50) = 10; dataloader [0,30) = 30;
	 * cpu exec: op [30,90) + op2 [100,150) minus kernel and runtime inside [0,130):
	 * [30,40) + [50,55) = 15; other: [90,100) is covered by nothing... but kernel covers it */
	CHECK_EQ_I(st.rows[0].role_ns[STEP_KERNEL], 75);
	CHECK_EQ_I(st.rows[0].role_ns[STEP_RUNTIME], 10);
	CHECK_EQ_I(st.rows[0].role_ns[STEP_DATALOADER], 30);
	CHECK_EQ_I(st.rows[0].role_ns[STEP_CPU_EXEC], 15);
	CHECK_EQ_I(st.rows[0].role_ns[STEP_OTHER], 0);
	int64_t sum = 0;
	for (int r = 0; r < STEP_NROLES; r++)
		sum += st.rows[0].role_ns[r];
	CHECK_EQ_I(sum, 130);
	/* step 2 [130,200): kernel k2 [130,140) = 10; cpu exec [140,150) = 10; other 50 */
	CHECK_EQ_I(st.rows[1].role_ns[STEP_KERNEL], 10);
	CHECK_EQ_I(st.rows[1].role_ns[STEP_CPU_EXEC], 10);
	CHECK_EQ_I(st.rows[1].role_ns[STEP_OTHER], 50);
	CHECK_EQ_U(st.rows[0].gpu_events, 1);
	CHECK_EQ_U(st.rows[1].gpu_events, 1);
	/* step trace of step 1: data until 30, backward ends at 70, the host step at 100, its
	 * GPU work at 130 */
	CHECK_EQ_I(st.rows[0].gap_ns, 30);
	CHECK_EQ_I(st.rows[0].compute_ns, 40);
	CHECK_EQ_I(st.rows[0].tail_ns, 30);
	CHECK_EQ_I(st.rows[0].drain_ns, 30);
	/* averages */
	CHECK_EQ_I(st.avg.end_ns, (130 + 70) / 2);
	CHECK_EQ_I(st.avg.role_ns[STEP_KERNEL], (75 + 10) / 2);
	steps_free(&st);
	model_free(m);
}

/* No ProfileStep: the whole host span is one step. */
TEST(no_steps_one_span)
{
	struct model *m = model_new();
	model_add_file(m, "synthetic", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	R(m, h, 10, 50, "aten::add", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 60, 70, "aten::mul", OPSCOPE_CAT_OPERATOR, -1);
	struct step_table st;
	CHECK(analyze(m, 0, &st) == 0);
	CHECK_EQ_U(st.nrows, 1);
	CHECK_EQ_I(st.rows[0].start_ns, 10);
	CHECK_EQ_I(st.rows[0].end_ns, 70);
	CHECK_EQ_I(st.rows[0].role_ns[STEP_CPU_EXEC], 50);
	CHECK_EQ_I(st.rows[0].role_ns[STEP_OTHER], 10);
	steps_free(&st);
	model_free(m);
}

/* Which step a runtime call launched from: the one whose host span holds it entirely, also
 * when the call has no length and sits on the step's end (found by review: it went to the
 * next step, which starts there); a call crossing a step's end belongs to none; with nested
 * steps, the first in start order that holds it. */
TEST(calls_at_step_edges)
{
	struct model *m = model_new();
	model_add_file(m, "edges", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	R(m, h, 0, 100, "ProfilerStep#0", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 100, 200, "ProfilerStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 200, 300, "ProfilerStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 100, 100, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 5); /* no length */
	R(m, h, 150, 160, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 6);
	R(m, h2, 190, 210, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 7); /* crosses */
	R(m, h, 250, 260, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 8);
	R(m, d, 110, 120, "k5", OPSCOPE_CAT_KERNEL, 5);
	R(m, d, 165, 170, "k6", OPSCOPE_CAT_KERNEL, 6);
	R(m, d, 230, 240, "k7", OPSCOPE_CAT_KERNEL, 7);
	R(m, d, 270, 280, "k8", OPSCOPE_CAT_KERNEL, 8);
	for (uint32_t t = 0; t < m->ntracks; t++)
		model_nest_track(m, t);
	struct step_table st;
	REQUIRE(analyze(m, 0, &st) == 0);
	REQUIRE(st.nrows == 3);
	CHECK_EQ_U(st.rows[0].gpu_events, 1); /* k5: its call is on step 0's end */
	CHECK_EQ_I(st.rows[0].end_ns, 120);   /* stretched to it */
	CHECK_EQ_U(st.rows[1].gpu_events, 1); /* k6 only: k7's call crosses into step 2 */
	CHECK_EQ_U(st.rows[2].gpu_events, 1); /* k8 */
	steps_free(&st);
	model_free(m);
}

/* A trace of ../shared/data imported into a new model, or NULL when the data is not there
 * (a clean clone elsewhere). A file that is there but does not load gives an empty model,
 * so the checks that follow fail. */
static struct model *load_shared(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fclose(f);
	struct model *m = model_new();
	char err[512];
	if (import_load_path(m, path, err, sizeof(err)) != 0)
		printf("#   %s\n", err);
	return m;
}

/* The oracle: ResNet-50 on a V100 (TensorBoard plugin sample), ../shared/data/README.md. */
TEST(resnet50_v100_oracle)
{
	const char *path = OPSCOPE_TEST_DATA_DIR
		"/../../shared/data/kineto/tb_plugin/samples/"
		"resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz";
	struct model *m = load_shared(path);
	if (!m) {
		SKIP("shared data not present");
		return;
	}
	struct step_table st;
	CHECK(analyze(m, 0, &st) == 0);
	CHECK_EQ_U(st.nrows, 6);
	static const int64_t kernel_us[6] = { 98598, 98570, 98596, 98623, 98504, 98641 };
	for (uint32_t k = 0; k < st.nrows && k < 6; k++) {
		char want[32];
		snprintf(want, sizeof(want), "ProfilerStep#%u", 5 + k);
		CHECK_STR(model_str(m, st.rows[k].name), want);
		/* the plugin rounds µs to integers */
		CHECK_EQ_I((st.rows[k].role_ns[STEP_KERNEL] + 500) / 1000, kernel_us[k]);
	}
	CHECK_EQ_I((st.rows[0].role_ns[STEP_MEMCPY] + 500) / 1000, 1941);
	CHECK_EQ_I((st.rows[0].role_ns[STEP_MEMSET] + 500) / 1000, 90);
	CHECK_EQ_I((st.rows[5].role_ns[STEP_MEMCPY] + 500) / 1000, 1798);
	CHECK_EQ_I((st.rows[5].role_ns[STEP_MEMSET] + 500) / 1000, 88);
	CHECK_EQ_I((st.avg.end_ns + 500) / 1000, 177592);
	/* Kernel 55.51 % and DataLoader 33.37 % of the average step */
	double kpct = 100.0 * (double)st.avg.role_ns[STEP_KERNEL] / (double)st.avg.end_ns;
	double dpct = 100.0 * (double)st.avg.role_ns[STEP_DATALOADER] / (double)st.avg.end_ns;
	CHECK((int)(kpct * 100 + 0.5) == 5551);
	CHECK((int)(dpct * 100 + 0.5) == 3337);
	steps_free(&st);
	model_free(m);
}

/* HTA's assertion: 4876 GPU events (kernels, copies, memsets) launched in ProfilerStep#101
 * to #104 of the ns-resolution trace; #105 holds the rest of the file's 6095. */
TEST(hta_gpu_events_per_step)
{
	const char *path =
		OPSCOPE_TEST_DATA_DIR "/../../shared/data/kineto/hta/ns_resolution_trace/"
				      "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz";
	struct model *m = load_shared(path);
	if (!m) {
		SKIP("shared data not present");
		return;
	}
	struct step_table st;
	CHECK(analyze(m, 0, &st) == 0);
	REQUIRE(st.nrows == 5);
	uint64_t first4 = 0, all = 0;
	for (uint32_t k = 0; k < st.nrows; k++) {
		char want[32];
		snprintf(want, sizeof(want), "ProfilerStep#%u", 101 + k);
		CHECK_STR(model_str(m, st.rows[k].name), want);
		if (k < 4)
			first4 += st.rows[k].gpu_events;
		all += st.rows[k].gpu_events;
	}
	CHECK_EQ_U(first4, 4876);
	CHECK_EQ_U(all, 6095);
	steps_free(&st);
	model_free(m);
}

/*
 * The worked example of docs/report.md (Step Summary, the step trace). One step, host
 * [0,100): Dataloader [0,20); Forward [20,40) launching kernel A [30,60); zero_grad
 * (Optimization) [40,45); Backward [45,75) launching B [60,110); Optimizer.step [75,95)
 * launching C [110,130). The step runs to 130 (C's end). Gap 0->20 = 20, Compute 20->75 = 55,
 * Tail 75->100 = 25 (the optimizer step and what follows it on the host), GPU Drain 100->130
 * = 30. Without the Backward range (older Kineto traces: backward runs on the autograd
 * thread), compute ends where the last optimizer call starts, 75 too, not at zero_grad (40).
 */
TEST(step_trace_worked_example)
{
	for (int with_backward = 1; with_backward >= 0; with_backward--) {
		struct model *m = model_new();
		CHECK(model_add_file(m, "worked", "test") == 0);
		uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
		uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
		R(m, h, 0, 100, "ProfilerStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
		R(m, h, 0, 20, "enumerate(DataLoader)", OPSCOPE_CAT_DATALOADER, -1);
		R(m, h, 20, 40, "Net", OPSCOPE_CAT_FORWARD, -1);
		R(m, h, 25, 30, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
		R(m, h, 40, 45, "Optimizer.zero_grad#SGD.zero_grad", OPSCOPE_CAT_OPTIMIZATION, -1);
		if (with_backward)
			R(m, h, 45, 75, "backward", OPSCOPE_CAT_BACKWARD, -1);
		R(m, h, 50, 55, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 2);
		R(m, h, 75, 95, "Optimizer.step#SGD.step", OPSCOPE_CAT_OPTIMIZATION, -1);
		R(m, h, 80, 85, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 3);
		R(m, d, 30, 60, "A", OPSCOPE_CAT_KERNEL, 1);
		R(m, d, 60, 110, "B", OPSCOPE_CAT_KERNEL, 2);
		R(m, d, 110, 130, "C", OPSCOPE_CAT_KERNEL, 3);
		nest(m);
		struct step_table st;
		REQUIRE(analyze(m, 0, &st) == 0);
		REQUIRE(st.nrows == 1);
		const struct step_row *r = &st.rows[0];
		CHECK_EQ_I(r->end_ns - r->start_ns, 130);
		CHECK_EQ_I(r->gap_ns, 20);
		CHECK_EQ_I(r->compute_ns, 55);
		CHECK_EQ_I(r->tail_ns, 25);
		CHECK_EQ_I(r->drain_ns, 30);
		CHECK_EQ_I(r->gap_ns + r->compute_ns + r->tail_ns + r->drain_ns, 130);
		CHECK_EQ_I(r->role_ns[STEP_KERNEL], 100);
		steps_free(&st);
		model_free(m);
	}
}

TEST_MAIN(synthetic_partition, step_trace_worked_example, no_steps_one_span, calls_at_step_edges,
	  resnet50_v100_oracle, hta_gpu_events_per_step)
