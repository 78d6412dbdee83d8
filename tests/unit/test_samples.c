/*
 * test_samples.c: the stack sample profile (analyze/samples.h) on models built by hand, each
 * number worked out in the comments: flat and cum per function with recursion counted once,
 * caller -> callee weights, weights other than 1, samples without a stack, --under (ranges of
 * a name, nested ones of the same name, other threads), an empty model; the samples view's
 * tables from it; and the .opscope loader on the tracebuild stacks trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/samples.h"
#include "formats/opscope/opscope_load.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"
#include "report/table.h"
#include "report/views.h"
#include "reportcheck.h"
#include "tracebuild.h"

static int col(const struct rtable *t, const char *key)
{
	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].key, key) == 0)
			return i;
	return -1;
}

static bool cell_is(const struct rcell *c, const char *s)
{
	return c->text && c->len == strlen(s) && memcmp(c->text, s, c->len) == 0;
}

/* A native frame named `name` (interned). */
static uint32_t F(struct model *m, const char *name)
{
	return model_add_frame(m, S(m, name), 0, 0, 0, 0, MODEL_FRAME_NATIVE);
}

/* The stack of n frames given outermost first; its innermost entry. */
static uint32_t ST(struct model *m, int n, const uint32_t *frames)
{
	uint32_t s = MODEL_NO_STACK;
	for (int i = 0; i < n; i++)
		s = model_add_stack(m, s, frames[i]);
	return s;
}

static const struct samples_fn *fn(const struct model *m, const struct samples_profile *p,
				   const char *name)
{
	for (uint32_t i = 0; i < p->nfns; i++)
		if (strcmp(model_str(m, p->fns[i].name), name) == 0)
			return &p->fns[i];
	return NULL;
}

static int64_t edge(const struct model *m, const struct samples_profile *p, const char *from,
		    const char *to)
{
	for (uint64_t e = 0; e < p->nedges; e++)
		if (strcmp(model_str(m, p->fns[p->edges[e].caller].name), from) == 0 &&
		    strcmp(model_str(m, p->fns[p->edges[e].callee].name), to) == 0)
			return p->edges[e].weight;
	return -1;
}

/*
 * Track 0: main -> a -> b -> c  x 6 (ts 10..60), main -> a -> b x 3 (ts 110..130),
 *          main -> a -> a -> a  x 2 (ts 210, 220; recursion), no stack x 1 (ts 300),
 *          main -> a -> b -> c weight 4 (ts 400)
 * Track 1: main -> c x 1 (ts 15; c called from main directly)
 * Ranges on track 0: "op" [0, 100), "op" [200, 250) with a nested "op" [205, 215), "other"
 * [100, 500); track 1: "op" [0, 100) (whose sample at 15 counts under "op" too).
 */
static struct model *build(void)
{
	struct model *m = model_new();
	uint32_t t0 = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t t1 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t fm = F(m, "main"), fa = F(m, "a"), fb = F(m, "b"), fc = F(m, "c");
	uint32_t s_abc = ST(m, 4, (uint32_t[]){ fm, fa, fb, fc });
	uint32_t s_ab = ST(m, 3, (uint32_t[]){ fm, fa, fb });
	uint32_t s_aaa = ST(m, 4, (uint32_t[]){ fm, fa, fa, fa });
	uint32_t s_mc = ST(m, 2, (uint32_t[]){ fm, fc });
	for (int i = 1; i <= 6; i++)
		model_add_sample(m, t0, 10 * i, s_abc, 1);
	for (int i = 1; i <= 3; i++)
		model_add_sample(m, t0, 100 + 10 * i, s_ab, 1);
	model_add_sample(m, t0, 210, s_aaa, 1);
	model_add_sample(m, t0, 220, s_aaa, 1);
	model_add_sample(m, t0, 300, MODEL_NO_STACK, 1);
	uint64_t w4 = model_add_sample(m, t0, 400, s_abc, 4);
	m->tracks[t0].samples.flags[w4] |= MODEL_SAMPLEF_TRUNCATED;
	model_add_sample(m, t1, 15, s_mc, 1);
	R(m, t0, 0, 100, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, t0, 100, 500, "other", OPSCOPE_CAT_OPERATOR, -1);
	R(m, t0, 200, 250, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, t0, 205, 215, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, t1, 0, 100, "op", OPSCOPE_CAT_OPERATOR, -1);
	nest(m);
	for (uint32_t t = 0; t < m->ntracks; t++)
		model_sort_track(m, t);
	return m;
}

TEST(flat_cum_recursion)
{
	struct model *m = build();
	struct samples_profile p;
	REQUIRE(samples_profile(m, NULL, &p) == 0);
	/* 6 + 3 + 2 + 1 + 4 (weight) + 1 = 17; 14 samples, one without a stack, one truncated */
	CHECK_EQ_I(p.total, 17);
	CHECK_EQ_U(p.samples, 14);
	CHECK_EQ_U(p.all_samples, 14);
	CHECK_EQ_U(p.no_stack, 1);
	CHECK_EQ_U(p.truncated, 1);
	REQUIRE(p.nfns == 4);
	const struct samples_fn *a = fn(m, &p, "a"), *b = fn(m, &p, "b"), *c = fn(m, &p, "c");
	const struct samples_fn *mn = fn(m, &p, "main");
	REQUIRE(a && b && c && mn);
	/* c: 6 + 4 + 1 = 11 flat and cum; b: 3 flat, 6 + 3 + 4 = 13 cum */
	CHECK_EQ_I(c->flat, 11);
	CHECK_EQ_I(c->cum, 11);
	CHECK_EQ_I(b->flat, 3);
	CHECK_EQ_I(b->cum, 13);
	/* a: innermost in the 2 recursive samples; cum 6 + 3 + 2 + 4 = 15, not 19 */
	CHECK_EQ_I(a->flat, 2);
	CHECK_EQ_I(a->cum, 15);
	/* main: in every sample with a stack: 17 - 1 */
	CHECK_EQ_I(mn->flat, 0);
	CHECK_EQ_I(mn->cum, 16);
	/* sorted by flat: c, b, a, main */
	CHECK(p.fns[0].flat == 11 && p.fns[1].flat == 3 && p.fns[2].flat == 2);
	/* pairs: main->a 15, a->b 13, b->c 10, a->a 2 (once per sample though twice in it),
	 * main->c 1 */
	CHECK_EQ_I(edge(m, &p, "main", "a"), 15);
	CHECK_EQ_I(edge(m, &p, "a", "b"), 13);
	CHECK_EQ_I(edge(m, &p, "b", "c"), 10);
	CHECK_EQ_I(edge(m, &p, "a", "a"), 2);
	CHECK_EQ_I(edge(m, &p, "main", "c"), 1);
	CHECK_EQ_I(edge(m, &p, "c", "b"), -1);
	CHECK_EQ_U(p.nedges, 5);
	samples_profile_free(&p);
	model_free(m);
}

/* The node of the flame graph at the path of n names, or NULL. */
static const struct samples_node *node(const struct model *m, const struct samples_profile *p,
				       int n, const char *const *names)
{
	uint32_t parent = UINT32_MAX;
	const struct samples_node *found = NULL;
	for (int d = 0; d < n; d++) {
		found = NULL;
		for (uint32_t i = 0; i < p->nnodes && !found; i++)
			if (p->nodes[i].parent == parent &&
			    strcmp(model_str(m, p->fns[p->nodes[i].fn].name), names[d]) == 0) {
				found = &p->nodes[i];
				parent = i;
			}
		if (!found)
			return NULL;
	}
	return found;
}

/* The flame graph of build(): per path, self = the samples ending there, total = the samples
 * under it; recursion is a node per level (a;a;a is three nodes). */
TEST(flame)
{
	struct model *m = build();
	struct samples_profile p;
	REQUIRE(samples_profile(m, NULL, &p) == 0);
	CHECK_EQ_U(p.nnodes, 7);
	const char *abc[] = { "main", "a", "b", "c" }, *aaa[] = { "main", "a", "a", "a" };
	const char *mc[] = { "main", "c" };
	const struct samples_node *x;
	/* main: every sample with a stack, 17 - 1 = 16; none ends there */
	REQUIRE((x = node(m, &p, 1, abc)) != NULL);
	CHECK_EQ_I(x->total, 16);
	CHECK_EQ_I(x->self, 0);
	CHECK(x->parent == UINT32_MAX);
	/* main;a: 6 + 3 + 2 + 4 = 15 */
	REQUIRE((x = node(m, &p, 2, abc)) != NULL);
	CHECK_EQ_I(x->total, 15);
	/* main;a;b: 6 + 3 + 4 = 13, of them 3 ending at b */
	REQUIRE((x = node(m, &p, 3, abc)) != NULL);
	CHECK_EQ_I(x->total, 13);
	CHECK_EQ_I(x->self, 3);
	/* main;a;b;c: 6 + weight 4 */
	REQUIRE((x = node(m, &p, 4, abc)) != NULL);
	CHECK_EQ_I(x->total, 10);
	CHECK_EQ_I(x->self, 10);
	/* main;a;a and main;a;a;a: the 2 recursive samples, on both levels */
	REQUIRE((x = node(m, &p, 3, aaa)) != NULL);
	CHECK_EQ_I(x->total, 2);
	CHECK_EQ_I(x->self, 0);
	REQUIRE((x = node(m, &p, 4, aaa)) != NULL);
	CHECK_EQ_I(x->self, 2);
	/* main;c: the sample of thread 2 */
	REQUIRE((x = node(m, &p, 2, mc)) != NULL);
	CHECK_EQ_I(x->total, 1);
	CHECK_EQ_I(x->self, 1);
	/* callers come before their callees */
	for (uint32_t i = 0; i < p.nnodes; i++)
		CHECK(p.nodes[i].parent == UINT32_MAX || p.nodes[i].parent < i);
	samples_profile_free(&p);
	/* under "op": abc x 6 (track 0, [0, 100)), aaa x 2 ([200, 250)), mc x 1 (track 1) */
	REQUIRE(samples_profile(m, "op", &p) == 0);
	REQUIRE((x = node(m, &p, 1, abc)) != NULL);
	CHECK_EQ_I(x->total, 9);
	REQUIRE((x = node(m, &p, 4, abc)) != NULL);
	CHECK_EQ_I(x->total, 6);
	REQUIRE((x = node(m, &p, 3, abc)) != NULL);
	CHECK_EQ_I(x->self, 0); /* the main;a;b samples lie outside "op" */
	CHECK_EQ_U(p.nnodes, 7);
	samples_profile_free(&p);
	model_free(m);
}

/* The range names that hold the most samples, each sample once per name: "other" [100, 500)
 * on track 0 holds 3 + 2 + 1 (stackless) + 4 (weight) = 10; "op" holds 6 + 2 on track 0 (its
 * nested [205, 215) adds nothing) and 1 on track 1 = 9. */
TEST(top_ranges)
{
	struct model *m = build();
	struct samples_range top[4];
	REQUIRE(samples_top_ranges(m, 4, top) == 2);
	CHECK_STR(model_str(m, top[0].name), "other");
	CHECK_EQ_I(top[0].weight, 10);
	CHECK_STR(model_str(m, top[1].name), "op");
	CHECK_EQ_I(top[1].weight, 9);
	/* as --under counts them */
	struct samples_profile p;
	REQUIRE(samples_profile(m, "op", &p) == 0);
	CHECK_EQ_I(p.total, 9);
	samples_profile_free(&p);
	REQUIRE(samples_top_ranges(m, 1, top) == 1);
	CHECK_STR(model_str(m, top[0].name), "other");
	model_free(m);
}

TEST(under)
{
	struct model *m = build();
	struct samples_profile p;
	/* "op": track 0 [0, 100) holds the 6 abc samples (10..60); [200, 250) with its nested
	 * "op" holds 210 and 220 (aaa) once each; track 1's [0, 100) holds its sample at 15 */
	REQUIRE(samples_profile(m, "op", &p) == 0);
	CHECK_EQ_U(p.samples, 9);
	CHECK_EQ_I(p.total, 9);
	CHECK_EQ_U(p.all_samples, 14);
	const struct samples_fn *a = fn(m, &p, "a"), *c = fn(m, &p, "c");
	REQUIRE(a && c);
	CHECK_EQ_I(c->flat, 7);
	CHECK_EQ_I(a->flat, 2);
	CHECK_EQ_I(a->cum, 8);
	CHECK(fn(m, &p, "b") && fn(m, &p, "b")->flat == 0);
	samples_profile_free(&p);
	/* "other" [100, 500): ab x 3, aaa x 2, no stack, abc weight 4 = 10 weight */
	REQUIRE(samples_profile(m, "other", &p) == 0);
	CHECK_EQ_U(p.samples, 7);
	CHECK_EQ_I(p.total, 10);
	CHECK_EQ_I(fn(m, &p, "b")->flat, 3);
	CHECK_EQ_I(fn(m, &p, "c")->flat, 4);
	samples_profile_free(&p);
	/* a name no range has, and one that is no string of the model: nothing */
	REQUIRE(samples_profile(m, "main", &p) == 0);
	CHECK_EQ_U(p.samples, 0);
	CHECK_EQ_U(p.nfns, 0);
	samples_profile_free(&p);
	REQUIRE(samples_profile(m, "no such range", &p) == 0);
	CHECK_EQ_U(p.samples, 0);
	samples_profile_free(&p);
	model_free(m);
}

TEST(empty)
{
	struct model *m = model_new();
	struct samples_profile p;
	REQUIRE(samples_profile(m, NULL, &p) == 0);
	CHECK_EQ_U(p.samples, 0);
	CHECK_EQ_U(p.nfns, 0);
	CHECK_EQ_U(p.nedges, 0);
	samples_profile_free(&p);
	/* frames and stacks but no samples: no function has weight */
	uint32_t f = F(m, "x");
	model_add_stack(m, MODEL_NO_STACK, f);
	model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	REQUIRE(samples_profile(m, NULL, &p) == 0);
	CHECK_EQ_U(p.nfns, 0);
	samples_profile_free(&p);
	/* the view gives no table then, and the empty line when asked for by name */
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	static struct report_ctx ctx;
	struct report_ctx *c = report_run_all(&ctx, m, &o);
	REQUIRE(c != NULL);
	CHECK(find_table(c, "samples") == NULL);
	report_ctx_free(c);
	model_free(m);
}

/* Functions of equal flat and cum weight come by the text of their names, whatever order
 * the names were interned in: "zeta" is interned first (a smaller string id) yet comes after
 * "alpha" and "mid"; each is a stack of one frame with one sample of weight 1, so all three
 * have flat = cum = 1. */
TEST(tie_order_by_text)
{
	struct model *m = model_new();
	uint32_t t = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t fz = F(m, "zeta"), fm = F(m, "mid"), fa = F(m, "alpha");
	model_add_sample(m, t, 10, ST(m, 1, (uint32_t[]){ fz }), 1);
	model_add_sample(m, t, 20, ST(m, 1, (uint32_t[]){ fm }), 1);
	model_add_sample(m, t, 30, ST(m, 1, (uint32_t[]){ fa }), 1);
	struct samples_profile p;
	REQUIRE(samples_profile(m, NULL, &p) == 0);
	REQUIRE(p.nfns == 3);
	CHECK(strcmp(model_str(m, p.fns[0].name), "alpha") == 0);
	CHECK(strcmp(model_str(m, p.fns[1].name), "mid") == 0);
	CHECK(strcmp(model_str(m, p.fns[2].name), "zeta") == 0);
	samples_profile_free(&p);
	model_free(m);
}

TEST(view_tables)
{
	struct model *m = build();
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true, .under = NULL };
	static struct report_ctx ctx;
	struct report_ctx *c = report_run_all(&ctx, m, &o);
	REQUIRE(c != NULL);
	const struct rtable *top = NULL, *tree = NULL;
	for (size_t i = 0; i < c->ntables; i++)
		if (strcmp(c->tables[i]->view, "samples") == 0)
			*(top ? &tree : &top) = c->tables[i];
	REQUIRE(top && tree);
	REQUIRE(top->nrows == 4);
	CHECK(cell_is(&top->rows[0].cells[col(top, "name")], "c"));
	CHECK_EQ_I(top->rows[0].cells[col(top, "flat")].i, 11);
	CHECK_NEAR(top->rows[0].cells[col(top, "flat_ratio")].ratio, 11.0 / 17, 1e-12);
	CHECK_NEAR(top->rows[1].cells[col(top, "sum_ratio")].ratio, 14.0 / 17, 1e-12);
	CHECK_EQ_I(top->rows[2].cells[col(top, "cum")].i, 15);
	/* tree: c (self), its callers b (10 of 11) and main (1 of 11) */
	REQUIRE(tree->nrows >= 3);
	int cn = col(tree, "name"), cr = col(tree, "role"), cc = col(tree, "cum");
	CHECK(cell_is(&tree->rows[0].cells[cr], "self") && tree->rows[0].indent == 0);
	CHECK(cell_is(&tree->rows[1].cells[cn], "b") &&
	      cell_is(&tree->rows[1].cells[cr], "caller"));
	CHECK_EQ_I(tree->rows[1].cells[cc].i, 10);
	CHECK_NEAR(tree->rows[1].cells[col(tree, "share")].ratio, 10.0 / 11, 1e-12);
	CHECK(cell_is(&tree->rows[2].cells[cn], "main") && tree->rows[2].indent == 1);
	report_ctx_free(c);
	model_free(m);
}

TEST(loader)
{
	struct tb b;
	tb_stacks_trace(&b, TB_STACKS_OK);
	struct model *m = model_new();
	char err[320] = "";
	REQUIRE(opscope_load_mem(m, "s.opscope", b.out.data, b.out.len, err, sizeof(err)) == 0);
	tb_free(&b);
	/* 5 frames, 6 stacks; track 0 has 14 samples, track 1 two */
	CHECK_EQ_U(m->nframes, 5);
	CHECK_EQ_U(m->nstacks, 6);
	REQUIRE(m->ntracks == 2);
	CHECK_EQ_U(m->tracks[0].nsamples, 14);
	CHECK_EQ_U(m->tracks[1].nsamples, 2);
	const struct model_frame *f1 = &m->frames[m->stacks[1].frame];
	CHECK_STR(model_str(m, f1->name), "libtorch.so+0x1100");
	CHECK_STR(model_str(m, f1->module), "/usr/lib/libtorch.so");
	CHECK_EQ_U(f1->address, 0x10100);
	CHECK_EQ_U(f1->kind, MODEL_FRAME_NATIVE);
	const struct model_frame *f0 = &m->frames[m->stacks[0].frame];
	CHECK_STR(model_str(m, f0->name), "main");
	CHECK_STR(model_str(m, f0->file), "train.py");
	CHECK_EQ_I(f0->line, 3);
	CHECK_EQ_U(f0->kind, MODEL_FRAME_PYTHON);
	const struct model_track *t = &m->tracks[0];
	CHECK_EQ_I(t->samples.ts_ns[12], 5000);
	CHECK(t->samples.flags[12] & MODEL_SAMPLEF_TRUNCATED);
	CHECK_EQ_U(t->samples.stack[13], MODEL_NO_STACK);
	CHECK_EQ_I(m->tracks[1].samples.weight[0], 5);
	/* under aten::conv2d [1000, 2000): the 10 samples at 1100..1190 */
	struct samples_profile p;
	REQUIRE(samples_profile(m, "aten::conv2d", &p) == 0);
	CHECK_EQ_U(p.samples, 10);
	CHECK_EQ_I(fn(m, &p, "gemm")->flat, 6);
	CHECK_EQ_I(fn(m, &p, "libtorch.so+0x1200")->cum, 10);
	samples_profile_free(&p);
	model_free(m);
}

TEST_MAIN(flat_cum_recursion, flame, top_ranges, under, empty, tie_order_by_text, view_tables,
	  loader)
