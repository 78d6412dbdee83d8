/*
 * test_timeline.c: the HTML report's aggregated timeline (analyze/timeline.h) on a model built
 * by hand, every number worked out in the comments, and the step view's timeline tables,
 * which only the HTML page asks for.
 *
 * Thread 1: ProfileStep#1 [0, 1000); Forward [0, 400) { conv [0, 300) { relu [100, 200) },
 *           add [300, 350) }; Backward [400, 900) { conv [450, 850) }
 * Thread 2: mm [900, 1000)
 * Device:   k1 [100, 600), k2 [200, 300) (two streams: they overlap)
 * The span is [0, 1000): 4 windows of 250 ns: W0 [0, 250), W1 [250, 500), W2 [500, 750),
 * W3 [750, 1000).
 */
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/timeline.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"
#include "report/table.h"
#include "report/views.h"

static struct model *build(void)
{
	struct model *m = model_new();
	uint32_t t1 = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t t2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t d0 = model_add_track(m, MODEL_TRACK_DEVICE, 1, 7, 0);
	uint32_t d1 = model_add_track(m, MODEL_TRACK_DEVICE, 1, 8, 0);
	R(m, t1, 0, 1000, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, t1, 0, 400, "Forward", OPSCOPE_CAT_FORWARD, -1);
	R(m, t1, 0, 300, "conv", OPSCOPE_CAT_OPERATOR, -1);
	R(m, t1, 100, 200, "relu", OPSCOPE_CAT_OPERATOR, -1);
	R(m, t1, 300, 350, "add", OPSCOPE_CAT_OPERATOR, -1);
	R(m, t1, 400, 900, "Backward", OPSCOPE_CAT_BACKWARD, -1);
	R(m, t1, 450, 850, "conv", OPSCOPE_CAT_OPERATOR, -1);
	R(m, t2, 900, 1000, "mm", OPSCOPE_CAT_OPERATOR, -1);
	R(m, d0, 100, 600, "k1", OPSCOPE_CAT_KERNEL, -1);
	R(m, d1, 200, 300, "k2", OPSCOPE_CAT_KERNEL, -1);
	nest(m);
	for (uint32_t t = 0; t < m->ntracks; t++)
		model_sort_track(m, t);
	return m;
}

/* The cell of lane l, window w, or NULL. */
static const struct timeline_cell *cell(const struct timeline *tl, int l, uint32_t w)
{
	for (uint64_t i = 0; i < tl->ncells; i++)
		if (tl->cells[i].lane == l && tl->cells[i].win == w)
			return &tl->cells[i];
	return NULL;
}

static void expect(const struct model *m, const struct timeline *tl, int l, uint32_t w,
		   int64_t busy, const char *top, int64_t top_ns)
{
	const struct timeline_cell *c = cell(tl, l, w);
	REQUIRE(c != NULL);
	CHECK_EQ_I(c->busy_ns, busy);
	CHECK_STR(model_str(m, c->top), top);
	CHECK_EQ_I(c->top_ns, top_ns);
}

TEST(windows)
{
	struct model *m = build();
	struct timeline tl;
	REQUIRE(timeline_run(m, 4, &tl) == 0);
	CHECK_EQ_I(tl.t0_ns, 0);
	CHECK_EQ_I(tl.win_ns, 250);
	CHECK_EQ_U(tl.nwin, 4);
	/* phases: Forward 250 in W0, 150 in W1; Backward 100 in W1, 250 in W2, 150 in W3 */
	expect(m, &tl, TIMELINE_PHASES, 0, 250, "Forward", 250);
	expect(m, &tl, TIMELINE_PHASES, 1, 250, "Forward", 150);
	expect(m, &tl, TIMELINE_PHASES, 2, 250, "Backward", 250);
	expect(m, &tl, TIMELINE_PHASES, 3, 150, "Backward", 150);
	/* operators, outermost only (relu lies in conv): W0 conv 250; W1 conv 50 + 50, add 50;
	 * W2 conv 250; W3 conv 100 and mm 100 (thread 2): a tie, conv interned first */
	expect(m, &tl, TIMELINE_OPERATORS, 0, 250, "conv", 250);
	expect(m, &tl, TIMELINE_OPERATORS, 1, 150, "conv", 100);
	expect(m, &tl, TIMELINE_OPERATORS, 2, 250, "conv", 250);
	expect(m, &tl, TIMELINE_OPERATORS, 3, 200, "conv", 100);
	/* kernels: W0 k1 150 + k2 50; W1 k1 250 + k2 50 (more than the window: two streams);
	 * W2 k1 100; nothing in W3 */
	expect(m, &tl, TIMELINE_KERNELS, 0, 200, "k1", 150);
	expect(m, &tl, TIMELINE_KERNELS, 1, 300, "k1", 250);
	expect(m, &tl, TIMELINE_KERNELS, 2, 100, "k1", 100);
	CHECK(cell(&tl, TIMELINE_KERNELS, 3) == NULL);
	CHECK_EQ_U(tl.ncells, 11);
	/* cells by lane, then window */
	for (uint64_t i = 1; i < tl.ncells; i++)
		CHECK(tl.cells[i - 1].lane < tl.cells[i].lane ||
		      (tl.cells[i - 1].lane == tl.cells[i].lane &&
		       tl.cells[i - 1].win < tl.cells[i].win));
	/* the one step, as it is */
	REQUIRE(tl.nsteps == 1);
	CHECK_STR(model_str(m, tl.steps[0].name), "ProfileStep#1");
	CHECK_EQ_I(tl.steps[0].start_ns, 0);
	CHECK_EQ_I(tl.steps[0].dur_ns, 1000);
	timeline_free(&tl);
	model_free(m);
}

TEST(empty)
{
	struct model *m = model_new();
	model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	struct timeline tl;
	REQUIRE(timeline_run(m, 400, &tl) == 0);
	CHECK_EQ_U(tl.ncells, 0);
	CHECK_EQ_U(tl.nsteps, 0);
	CHECK_EQ_U(tl.nwin, 0);
	timeline_free(&tl);
	model_free(m);
}

/* The step view gives the timeline tables for the HTML page only. */
TEST(step_view_html_only)
{
	struct model *m = build();
	for (int html = 0; html < 2; html++) {
		struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true, .html = html };
		struct report_ctx c;
		REQUIRE(report_ctx_init(&c, m, &o) == 0);
		REQUIRE(report_run_views(&c, report_view_listed, (void *)"step") == 0);
		const struct rtable *steps = NULL, *wins = NULL;
		for (size_t i = 0; i < c.ntables; i++) {
			if (strcmp(c.tables[i]->title, "Timeline: Steps") == 0)
				steps = c.tables[i];
			if (strcmp(c.tables[i]->title, "Timeline") == 0)
				wins = c.tables[i];
		}
		if (!html) {
			CHECK(steps == NULL && wins == NULL);
		} else {
			REQUIRE(steps != NULL && wins != NULL);
			CHECK_EQ_U(steps->nrows, 1);
			/* 400 windows of (1000 + 399) / 400 = 3 ns (integer division), a row per
			 * busy window of each lane: phases [0, 900): windows 0..299, 300 rows;
			 * operators [0, 350): 0..116, [450, 850): 150..283, [900, 1000): 300..333,
			 * 117 + 134 + 34 = 285; kernels [100, 600): 33..199, 167. In all 752. */
			CHECK_EQ_U(wins->nrows, 752);
			CHECK(steps->text_hidden && wins->text_hidden);
		}
		report_ctx_free(&c);
	}
	model_free(m);
}

TEST_MAIN(windows, empty, step_view_html_only)
