/*
 * test_diff.c: the diff of two analyses (analyze/diff.h) on models built by hand
 * (modelbuild.h), every total, change, spread and noise verdict worked out in the comments;
 * step ranges of one trace; a range the trace does not have; the --fail-if rules' parser on
 * good and bad rules, and when a rule fires.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/analysis.h"
#include "analyze/diff.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"

/*
 * Three steps of 100 ns, step k at b = 100k, on thread h:
 *   ProfileStep [b, b+100) > Forward [b+1, b+99) > nn.Module: Net [b+2, b+98)
 *     > nn.Module: Linear [b+3, b+97) > mm [b+4, b+4+mm[k])      (operator)
 *                                     > cudaLaunchKernel [b+75, b+77) -> `kernel` [b+77, b+82)
 *                                     > relu [b+80, b+80+relu[k]) (operator)
 * thread h2: NVTX "fwd" [b+10, b+20) in every step;
 * with `user`, a user-defined range "mine" [400, 410) on h, outside the steps.
 */
static struct model *build(const int64_t mm[3], const int64_t relu[3], const char *kernel,
			   bool user)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	for (int k = 0; k < 3; k++) {
		int64_t b = 100 * k;
		char step[32];
		snprintf(step, sizeof(step), "ProfilerStep#%d", k);
		R(m, h, b, b + 100, step, OPSCOPE_CAT_PROFILE_STEP, -1);
		R(m, h, b + 1, b + 99, "Forward", OPSCOPE_CAT_FORWARD, -1);
		R(m, h, b + 2, b + 98, "nn.Module: Net", OPSCOPE_CAT_PYTHON_FUNCTION, -1);
		R(m, h, b + 3, b + 97, "nn.Module: Linear", OPSCOPE_CAT_PYTHON_FUNCTION, -1);
		R(m, h, b + 4, b + 4 + mm[k], "mm", OPSCOPE_CAT_OPERATOR, -1);
		R(m, h, b + 75, b + 77, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, k + 1);
		R(m, d, b + 77, b + 82, kernel, OPSCOPE_CAT_KERNEL, k + 1);
		R(m, h, b + 80, b + 80 + relu[k], "relu", OPSCOPE_CAT_OPERATOR, -1);
		R(m, h2, b + 10, b + 20, "fwd", OPSCOPE_CAT_NVTX, -1);
	}
	if (user)
		R(m, h, 400, 410, "mine", OPSCOPE_CAT_USER_DEFINED, -1);
	nest(m);
	return m;
}

static const struct diff_row *find(const struct diff *d, enum diff_kind k, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->rows[i].kind == k && strcmp(d->rows[i].name, name) == 0)
			return &d->rows[i];
	return NULL;
}

/* A: mm 20, 30, 40; relu 10, 10, 10; kernel gemm; "mine" outside the steps.
 * B: mm 50, 60, 70; relu 11, 13, 9;  kernel gemm2. */
TEST(two_traces)
{
	static const int64_t mm_a[3] = { 20, 30, 40 }, relu_a[3] = { 10, 10, 10 };
	static const int64_t mm_b[3] = { 50, 60, 70 }, relu_b[3] = { 11, 13, 9 };
	struct model *ma = build(mm_a, relu_a, "gemm", true);
	struct model *mb = build(mm_b, relu_b, "gemm2", false);
	struct analysis aa, ab;
	REQUIRE(analysis_run(&aa, ma) == 0);
	REQUIRE(analysis_run(&ab, mb) == 0);
	struct diff_side sa = { &aa, false, 0, 0 }, sb = { &ab, false, 0, 0 };
	struct diff_opts o = { false };
	struct diff d;
	REQUIRE(diff_compute(&sa, &sb, &o, &d) == 0);
	CHECK_EQ_U(d.nsteps[0], 3);
	CHECK_EQ_U(d.nsteps[1], 3);
	CHECK(d.has_steps[0] && d.has_steps[1]);
	/* rows: mm, gemm, gemm2, mine, relu, and the unchanged ProfileStep, Forward, Net,
	 * Net > Linear, fwd */
	CHECK_EQ_U(d.n, 10);

	/* mm: A 90 ns in 3 calls (20, 30, 40: mean 30, sd 10), B 180 (50, 60, 70: mean 60,
	 * sd 10); change +90 = +100 %. SE = sqrt(100/3 + 100/3) = 8.165, t = 30 / 8.165 =
	 * 3.674; df = (200/3)^2 / (2 (100/3)^2 / 2) = 4; t(0.975, 4) = 2.776 < 3.674: beyond. */
	const struct diff_row *r = find(&d, DIFF_OP, "mm");
	REQUIRE(r);
	CHECK(r == &d.rows[0]); /* the largest |change| first */
	CHECK_EQ_U(r->status, DIFF_BOTH);
	CHECK(!r->gpu);
	CHECK_EQ_U(r->side[0].calls, 3);
	CHECK_EQ_U(r->side[1].calls, 3);
	CHECK_EQ_I(r->side[0].time_ns, 90);
	CHECK_EQ_I(r->side[1].time_ns, 180);
	CHECK_EQ_I(r->change_ns, 90);
	CHECK_NEAR(r->change, 1.0, 1e-12);
	CHECK_NEAR(r->side[0].mean_ns, 30, 1e-9);
	CHECK_NEAR(r->side[0].sd_ns, 10, 1e-9);
	CHECK_NEAR(r->side[1].mean_ns, 60, 1e-9);
	CHECK_NEAR(r->side[1].sd_ns, 10, 1e-9);
	CHECK_NEAR(r->se_ns, sqrt(200.0 / 3), 1e-9);
	CHECK_NEAR(r->t, 3.674, 1e-3);
	CHECK_NEAR(r->df, 4, 1e-9);
	CHECK_EQ_U(r->noise, DIFF_NOISE_BEYOND);

	/* relu: 30 vs 33 (+10 %): means 10 and 11, sd 0 and 2 (11, 13, 9); SE = sqrt(4/3) =
	 * 1.155, t = 0.866, df = (4/3)^2 / ((4/3)^2 / 2) = 2; t(0.975, 2) = 4.303: within. */
	r = find(&d, DIFF_OP, "relu");
	REQUIRE(r);
	CHECK_EQ_I(r->change_ns, 3);
	CHECK_NEAR(r->change, 0.1, 1e-12);
	CHECK_NEAR(r->side[1].sd_ns, 2, 1e-9);
	CHECK_NEAR(r->t, 0.866, 1e-3);
	CHECK_NEAR(r->df, 2, 1e-9);
	CHECK_EQ_U(r->noise, DIFF_NOISE_WITHIN);

	/* gemm only in A: 3 calls of 5 ns, GPU time; removed, change -15 (-100 %); per step
	 * 5, 5, 5 against 0, 0, 0: no spread, so any difference is beyond noise */
	r = find(&d, DIFF_KERNEL, "gemm");
	REQUIRE(r);
	CHECK(r == &d.rows[1]);
	CHECK(r->gpu);
	CHECK_EQ_U(r->status, DIFF_REMOVED);
	CHECK_EQ_I(r->side[0].time_ns, 15);
	CHECK_EQ_I(r->change_ns, -15);
	CHECK_NEAR(r->change, -1.0, 1e-12);
	CHECK_EQ_U(r->noise, DIFF_NOISE_BEYOND);
	r = find(&d, DIFF_KERNEL, "gemm2");
	REQUIRE(r);
	CHECK(r == &d.rows[2]); /* equal |change|: by kind, then name */
	CHECK_EQ_U(r->status, DIFF_ADDED);
	CHECK_EQ_U(r->side[1].calls, 3);
	CHECK(isinf(r->change) && r->change > 0);

	/* "mine" lies outside the steps: in A's total (10 ns) but in no step, so there is no
	 * spread to judge the change by */
	r = find(&d, DIFF_USER, "mine");
	REQUIRE(r);
	CHECK(r == &d.rows[3]);
	CHECK_EQ_U(r->status, DIFF_REMOVED);
	CHECK_EQ_I(r->change_ns, -10);
	CHECK_EQ_U(r->noise, DIFF_NOISE_UNKNOWN);

	/* unchanged: steps of 100 (3 calls, 300 ns), Forward 98 a step (the phase's share),
	 * modules by path (Net 96 a step, Net > Linear 94), NVTX fwd 10 a step */
	r = find(&d, DIFF_STEP, "ProfileStep");
	REQUIRE(r);
	CHECK_EQ_U(r->side[0].calls, 3);
	CHECK_EQ_I(r->side[0].time_ns, 300);
	CHECK_EQ_I(r->change_ns, 0);
	CHECK_EQ_U(r->noise, DIFF_NOISE_WITHIN);
	r = find(&d, DIFF_PHASE, "Forward");
	REQUIRE(r);
	CHECK_EQ_U(r->side[0].calls, 3);
	CHECK_EQ_I(r->side[0].time_ns, 294);
	CHECK_NEAR(r->side[0].mean_ns, 98, 1e-9);
	r = find(&d, DIFF_MODULE, "Net");
	REQUIRE(r);
	CHECK_EQ_I(r->side[1].time_ns, 288);
	r = find(&d, DIFF_MODULE, "Net > Linear");
	REQUIRE(r);
	CHECK_EQ_I(r->side[0].time_ns, 282);
	CHECK_NEAR(r->side[0].mean_ns, 94, 1e-9);
	r = find(&d, DIFF_NVTX, "fwd");
	REQUIRE(r);
	CHECK_EQ_U(r->side[0].calls, 3);
	CHECK_EQ_I(r->side[1].time_ns, 30);

	diff_free(&d);
	analysis_free(&aa);
	analysis_free(&ab);
	model_free(ma);
	model_free(mb);
}

/* Two step ranges of one trace (A's model): step 0 against step 2. */
TEST(step_ranges)
{
	static const int64_t mm[3] = { 20, 30, 40 }, relu[3] = { 10, 10, 10 };
	struct model *m = build(mm, relu, "gemm", true);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct diff_side sa = { &a, true, 0, 0 }, sb = { &a, true, 2, 2 };
	struct diff_opts o = { false };
	struct diff d;
	REQUIRE(diff_compute(&sa, &sb, &o, &d) == 0);
	/* mm: 20 vs 40 in one call each, +100 %; one step a side: noise unknown */
	const struct diff_row *r = find(&d, DIFF_OP, "mm");
	REQUIRE(r);
	CHECK_EQ_U(r->side[0].calls, 1);
	CHECK_EQ_U(r->side[1].calls, 1);
	CHECK_EQ_I(r->side[0].time_ns, 20);
	CHECK_EQ_I(r->side[1].time_ns, 40);
	CHECK_EQ_U(r->side[0].nsteps, 1);
	CHECK_EQ_U(r->noise, DIFF_NOISE_UNKNOWN);
	CHECK(isnan(r->t));
	/* the step: one of 100 a side */
	r = find(&d, DIFF_STEP, "ProfileStep");
	REQUIRE(r);
	CHECK_EQ_U(r->side[1].calls, 1);
	CHECK_EQ_I(r->side[1].time_ns, 100);
	/* "mine" is in no step: not in a diff of step ranges */
	CHECK(find(&d, DIFF_USER, "mine") == NULL);
	diff_free(&d);

	/* steps 1-3: the trace has 3 (0-2) */
	sb.first_step = 1;
	sb.last_step = 3;
	CHECK_EQ_I(diff_compute(&sa, &sb, &o, &d), OPSCOPE_EINVAL);
	CHECK_EQ_U(d.nsteps[1], 3);
	CHECK_EQ_U(d.n, 0);
	analysis_free(&a);
	model_free(m);
}

TEST(t_critical_values)
{
	CHECK_NEAR(diff_t_crit(0.5), 12.706, 1e-9);
	CHECK_NEAR(diff_t_crit(1), 12.706, 1e-9);
	CHECK_NEAR(diff_t_crit(4), 2.776, 1e-9);
	CHECK_NEAR(diff_t_crit(4.9), 2.776, 1e-9); /* the table's df at or below: never less */
	CHECK_NEAR(diff_t_crit(30), 2.042, 1e-9);
	CHECK_NEAR(diff_t_crit(35), 2.042, 1e-9);
	CHECK_NEAR(diff_t_crit(1000), 1.980, 1e-9);
	CHECK_NEAR(diff_t_crit(INFINITY), 1.960, 1e-9);
}

TEST(rules_parse)
{
	struct diff_rule r;
	char err[256];
	REQUIRE(diff_rule_parse("step > +5%", &r, err, sizeof(err)) == 0);
	CHECK_EQ_U(r.kind, DIFF_STEP);
	CHECK_STR(r.glob, "*");
	CHECK(r.greater && r.percent);
	CHECK_NEAR(r.amount, 0.05, 1e-12);
	REQUIRE(diff_rule_parse("kernel:* > +10%", &r, err, sizeof(err)) == 0);
	CHECK_EQ_U(r.kind, DIFF_KERNEL);
	CHECK_STR(r.glob, "*");
	REQUIRE(diff_rule_parse("op:aten::mm > +2ms", &r, err, sizeof(err)) == 0);
	CHECK_EQ_U(r.kind, DIFF_OP);
	CHECK_STR(r.glob, "aten::mm");
	CHECK(!r.percent);
	CHECK_NEAR(r.amount, 2e6, 1e-6);
	REQUIRE(diff_rule_parse("phase:Backward > +1ms", &r, err, sizeof(err)) == 0);
	CHECK_EQ_U(r.kind, DIFF_PHASE);
	REQUIRE(diff_rule_parse("nvtx:forward > +3%", &r, err, sizeof(err)) == 0);
	CHECK_EQ_U(r.kind, DIFF_NVTX);
	CHECK_STR(r.glob, "forward");
	REQUIRE(diff_rule_parse("op:x<-1.5us", &r, err, sizeof(err)) == 0);
	CHECK(!r.greater);
	CHECK_NEAR(r.amount, -1500, 1e-9);
	REQUIRE(diff_rule_parse("user:a > 2s", &r, err, sizeof(err)) == 0); /* no sign: + */
	CHECK_NEAR(r.amount, 2e9, 1e-3);
	REQUIRE(diff_rule_parse("kernel:x > 7ns", &r, err, sizeof(err)) == 0);
	CHECK_NEAR(r.amount, 7, 1e-12);
	/* a module path has '>' in it: the comparison is the last one */
	REQUIRE(diff_rule_parse("module:Net > Linear > +1ms", &r, err, sizeof(err)) == 0);
	CHECK_EQ_U(r.kind, DIFF_MODULE);
	CHECK_STR(r.glob, "Net > Linear");

	static const char *const bad[] = {
		"",
		"step",
		"step >",
		"step > 5",
		"step > +5x",
		"foo > 5%",
		"op: > 5%",
		"step > inf%",
		"step > 0x10ms",
		"step >> 5%",
		"step > +%",
		"step > 5 %%",
		"kernel:* > +1e3ms",
		":x > 5%",
		"step > +-5%",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (diff_rule_parse(bad[i], &r, err, sizeof(err)) != -1)
			CHECK_FAIL_("rule '%s' was accepted", bad[i]);
		else if (!strstr(err, "bad rule '"))
			CHECK_FAIL_("rule '%s': message '%s' does not name it", bad[i], err);
	}
}

TEST(rules_fire)
{
	static const int64_t mm_a[3] = { 20, 30, 40 }, relu_a[3] = { 10, 10, 10 };
	static const int64_t mm_b[3] = { 50, 60, 70 }, relu_b[3] = { 11, 13, 9 };
	struct model *ma = build(mm_a, relu_a, "gemm", true);
	struct model *mb = build(mm_b, relu_b, "gemm2", false);
	struct analysis aa, ab;
	REQUIRE(analysis_run(&aa, ma) == 0);
	REQUIRE(analysis_run(&ab, mb) == 0);
	struct diff_side sa = { &aa, false, 0, 0 }, sb = { &ab, false, 0, 0 };
	struct diff_opts o = { false };
	struct diff d;
	REQUIRE(diff_compute(&sa, &sb, &o, &d) == 0);
	const struct diff_row *mm = find(&d, DIFF_OP, "mm"), *relu = find(&d, DIFF_OP, "relu");
	const struct diff_row *g2 = find(&d, DIFF_KERNEL, "gemm2"),
			      *g = find(&d, DIFF_KERNEL, "gemm");
	const struct diff_row *step = find(&d, DIFF_STEP, "ProfileStep");
	REQUIRE(mm && relu && g && g2 && step);
	struct diff_rule r;
	char err[256];
	/* mm: +100 %, +90 ns, beyond noise */
	REQUIRE(diff_rule_parse("op:mm > +50%", &r, err, sizeof(err)) == 0);
	CHECK(diff_rule_fires(&r, mm, true));
	CHECK(!diff_rule_fires(&r, g2, true)); /* another kind */
	REQUIRE(diff_rule_parse("op:mm > +100%", &r, err, sizeof(err)) == 0);
	CHECK(!diff_rule_fires(&r, mm, true)); /* not above */
	REQUIRE(diff_rule_parse("op:m? > +80ns", &r, err, sizeof(err)) == 0);
	CHECK(diff_rule_fires(&r, mm, true));
	CHECK(!diff_rule_fires(&r, relu, false)); /* "relu" is not m? */
	/* relu: +10 % but within noise: fires only without the noise check */
	REQUIRE(diff_rule_parse("op:* > +5%", &r, err, sizeof(err)) == 0);
	CHECK(!diff_rule_fires(&r, relu, true));
	CHECK(diff_rule_fires(&r, relu, false));
	/* an added kernel is an infinite increase; a removed one -100 % */
	REQUIRE(diff_rule_parse("kernel:* > +10%", &r, err, sizeof(err)) == 0);
	CHECK(diff_rule_fires(&r, g2, true));
	CHECK(!diff_rule_fires(&r, g, true));
	REQUIRE(diff_rule_parse("kernel:gemm < -50%", &r, err, sizeof(err)) == 0);
	CHECK(diff_rule_fires(&r, g, true));
	/* the step did not change */
	REQUIRE(diff_rule_parse("step > +5%", &r, err, sizeof(err)) == 0);
	CHECK(!diff_rule_fires(&r, step, true));
	CHECK(!diff_rule_fires(&r, step, false));
	diff_free(&d);
	analysis_free(&aa);
	analysis_free(&ab);
	model_free(ma);
	model_free(mb);
}

TEST_MAIN(two_traces, step_ranges, t_critical_values, rules_parse, rules_fire)
