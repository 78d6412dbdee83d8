/*
 * test_analyze.c: the analysis stage of `opscope report` on small models built by hand, each
 * number worked out in the comments: interval rules, the tree (runtime calls under their
 * innermost range, launches by correlation within one file only, the last call of an id
 * wins, annotations on the device are not work, async tracks stay out), and the views on the
 * edge cases the worked model of test_report.c does not reach: no devices, no ProfileStep,
 * overlaps across threads and streams, the Paddle bugs we do not copy (Distribution), the
 * memory manipulation / user-defined split, nvprof's copy names, kernel sort keys, and
 * Paddle's kernel display-name regex against Python's re.match.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/intervals.h"
#include "analyze/tree.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"
#include "report/table.h"
#include "report/views.h"
#include "reportcheck.h"

/* Index of the range of track t named `name` starting at s. */
static uint64_t idx(const struct model *m, uint32_t t, const char *name, int64_t s)
{
	const struct model_ranges *r = &m->tracks[t].ranges;
	for (uint64_t i = 0; i < m->tracks[t].nranges; i++)
		if (r->start_ns[i] == s && strcmp(model_str(m, r->name[i]), name) == 0)
			return i;
	return MODEL_NONE;
}

static struct report_ctx *run(struct model *m, struct report_opts *o)
{
	static struct report_ctx ctx;
	return report_run_all(&ctx, m, o);
}

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

/* The row whose column `key` is `name` and, when sec is not NULL, whose "section" is sec. */
static const struct rrow *row(const struct rtable *t, const char *key, const char *name,
			      const char *sec)
{
	int k = col(t, key), s = sec ? col(t, "section") : -1;
	if (k < 0 || (sec && s < 0))
		return NULL;
	for (size_t i = 0; i < t->nrows; i++)
		if (cell_is(&t->rows[i].cells[k], name) &&
		    (!sec || cell_is(&t->rows[i].cells[s], sec)))
			return &t->rows[i];
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */

TEST(interval_rules)
{
	struct ivec a = { 0 }, b = { 0 }, o = { 0 };
	ivec_merge(&a); /* empty */
	CHECK_EQ_I(ivec_sum(&a), 0);
	ivec_push(&a, 30, 40);
	ivec_push(&a, 0, 10);
	ivec_push(&a, 10, 12); /* touches [0,10): one interval [0,12) */
	ivec_push(&a, 2, 5);   /* inside: absorbed */
	ivec_push(&a, 0, 3);   /* equal start, shorter: absorbed */
	ivec_push(&a, 35, 50); /* overlaps [30,40): [30,50) */
	ivec_push(&a, 60, 60); /* empty interval: kept, adds nothing */
	ivec_merge(&a);
	REQUIRE(a.n == 3);
	CHECK_EQ_I(a.v[0].s, 0);
	CHECK_EQ_I(a.v[0].e, 12);
	CHECK_EQ_I(a.v[1].s, 30);
	CHECK_EQ_I(a.v[1].e, 50);
	CHECK_EQ_I(ivec_sum(&a), 12 + 20);
	/* intersection: touching is not overlapping */
	ivec_push(&b, 12, 30);
	ivec_merge(&b);
	ivec_intersect(&a, &b, &o);
	CHECK_EQ_U(o.n, 0);
	/* subtraction: holes in the middle, at the start, past the end */
	ivec_free(&b);
	ivec_push(&b, 0, 1);
	ivec_push(&b, 5, 6);
	ivec_push(&b, 45, 70);
	ivec_merge(&b);
	ivec_subtract(&a, &b, &o);
	CHECK_EQ_I(ivec_sum(&o), (5 - 1) + (12 - 6) + (45 - 30)); /* [1,5) [6,12) [30,45) */
	CHECK_EQ_U(o.n, 3);
	/* a \ a is empty; a ∩ a is a */
	struct ivec z = { 0 }, y = { 0 };
	ivec_subtract(&a, &a, &z);
	CHECK_EQ_U(z.n, 0);
	ivec_intersect(&a, &a, &y);
	CHECK_EQ_I(ivec_sum(&y), ivec_sum(&a));
	CHECK_EQ_I(ivec_sum_within(&a, 100, 200), 0);
	/* distinct ranges: duplicates count once, nested ones count */
	struct ivec dd = { 0 };
	ivec_push(&dd, 5, 9);
	ivec_push(&dd, 0, 10);
	ivec_push(&dd, 5, 9);
	ivec_push(&dd, 0, 10);
	ivec_push(&dd, 0, 11);
	CHECK_EQ_U(ivec_count_distinct(&dd), 3);
	CHECK_EQ_U(dd.n, 5);
	CHECK_EQ_I(dd.v[0].e, 10); /* sorted by start, then end */
	ivec_free(&dd);
	/* already in start order (one track's ranges): merged as they are; counted after all
	 * the same, since equal starts may come with their ends in any order */
	ivec_push(&dd, 0, 10);
	ivec_push(&dd, 0, 3);
	ivec_push(&dd, 0, 10);
	ivec_push(&dd, 10, 12);
	ivec_push(&dd, 20, 25);
	struct ivec same = dd;
	same.v = malloc(dd.n * sizeof(*dd.v));
	REQUIRE(same.v);
	memcpy(same.v, dd.v, dd.n * sizeof(*dd.v));
	same.cap = dd.n;
	CHECK_EQ_U(ivec_count_distinct(&dd), 4);
	ivec_merge(&same);
	REQUIRE(same.n == 2);
	CHECK(same.v[0].s == 0 && same.v[0].e == 12 && same.v[1].s == 20 && same.v[1].e == 25);
	ivec_free(&same);
	ivec_free(&dd);
	/* ivec_add: in start order the list stays merged as it grows; in any order, once merged,
	 * it is the union ivec_push + ivec_merge give */
	static const int64_t iv[][2] = { { 0, 5 },   { 2, 4 },	 { 5, 7 }, { 9, 12 }, { 9, 10 },
					 { 11, 20 }, { 30, 31 }, { 1, 3 }, { 25, 30 } };
	struct ivec added = { 0 }, pushed = { 0 };
	for (size_t i = 0; i < 7; i++)
		ivec_add(&added, iv[i][0], iv[i][1]);
	REQUIRE(added.n == 3); /* [0,7) [9,20) [30,31) */
	CHECK(added.v[0].e == 7 && added.v[1].s == 9 && added.v[1].e == 20);
	for (size_t i = 7; i < 9; i++)
		ivec_add(&added, iv[i][0], iv[i][1]);
	for (size_t i = 0; i < 9; i++)
		ivec_push(&pushed, iv[i][0], iv[i][1]);
	ivec_merge(&added);
	ivec_merge(&pushed);
	REQUIRE(added.n == pushed.n);
	CHECK(memcmp(added.v, pushed.v, added.n * sizeof(*added.v)) == 0);
	CHECK_EQ_I(ivec_sum(&added), 7 + 11 + 6);
	ivec_free(&added);
	ivec_free(&pushed);
	CHECK_EQ_I(ivec_sum_within(&a, 11, 31), 2);
	ivec_free(&a);
	ivec_free(&b);
	ivec_free(&o);
	ivec_free(&y);
	ivec_free(&z);
}

static int ivl_ref_cmp(const void *x, const void *y)
{
	const struct ivl *a = x, *b = y;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return (a->e > b->e) - (a->e < b->e);
}

/* Sorting (the natural merge sort of intervals.c) against qsort, on lists made the way the
 * views make them: a few ascending runs one after the other (one per track), random lists,
 * many equal starts, lists in order, descending lists. */
TEST(interval_sort_matches_qsort)
{
	uint64_t seed = 7;
	for (int round = 0; round < 40; round++) {
		size_t n = (size_t)round * (size_t)round * 37 % 5000 + (size_t)round;
		int kind = round % 5, runs = 1 + round % 9;
		struct ivec a = { 0 };
		for (size_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			int64_t s, d = (int64_t)((seed >> 40) % 50);
			if (kind == 0) /* ascending runs */
				s = (int64_t)(i % (n / (size_t)runs + 1)) * 10 +
				    (int64_t)(seed >> 61);
			else if (kind == 1) /* random */
				s = (int64_t)((seed >> 20) % 100000) - 50000;
			else if (kind == 2) /* many equal starts */
				s = (int64_t)((seed >> 20) % 4);
			else if (kind == 3) /* in order */
				s = (int64_t)i;
			else /* descending */
				s = -(int64_t)i;
			ivec_push(&a, s, s + d);
		}
		struct ivl *ref = malloc((n ? n : 1) * sizeof(*ref));
		REQUIRE(ref);
		if (n)
			memcpy(ref, a.v, n * sizeof(*ref));
		qsort(ref, n, sizeof(*ref), ivl_ref_cmp);
		size_t distinct = n ? 1 : 0;
		for (size_t i = 1; i < n; i++)
			distinct += ref[i].s != ref[i - 1].s || ref[i].e != ref[i - 1].e;
		CHECK_EQ_U(ivec_count_distinct(&a), distinct);
		CHECK(n == 0 || memcmp(a.v, ref, n * sizeof(*ref)) == 0);
		/* merged: the union of the sorted list, touching intervals joined */
		size_t o = 0;
		for (size_t i = 1; i < n; i++) {
			if (ref[i].s <= ref[o].e) {
				if (ref[i].e > ref[o].e)
					ref[o].e = ref[i].e;
			} else {
				ref[++o] = ref[i];
			}
		}
		ivec_merge(&a);
		CHECK_EQ_U(a.n, n ? o + 1 : 0);
		CHECK(n == 0 || memcmp(a.v, ref, a.n * sizeof(*ref)) == 0);
		free(ref);
		ivec_free(&a);
	}
}

/*
 * file 0: thread 1
 *   op A [0,100)
 *     inner B [10,50)
 *       runtime R1 [20,30) corr 1 -> kernel K1 [100,150); annotation [100,160) corr 1
 *     runtime R2 [60,70) corr 2 -> memcpy M2 [150,160)
 *     runtime R3 [70,75) corr 3 -> kernel K3a [160,170)   (R3 and R4 share id 3: R4 wins)
 *     runtime R4 [80,85) corr 3
 *   async track: two overlapping ranges
 * file 1: thread 1 runtime [0,10) corr 1 (never launches file 0's K1); device: kernel corr 9
 * (no call), kernel corr 1 [50,60) launched by file 1's call.
 */
TEST(tree_links)
{
	struct model *m = model_new();
	model_add_file(m, "f0", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	uint32_t as = model_add_track(m, MODEL_TRACK_ASYNC, 1, 99, 0);
	R(m, h, 0, 100, "A", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 10, 50, "B", OPSCOPE_CAT_OPERATOR_INNER, -1);
	R(m, h, 20, 30, "R1", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 60, 70, "R2", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, h, 70, 75, "R3", OPSCOPE_CAT_CUDA_DRIVER, 3);
	R(m, h, 80, 85, "R4", OPSCOPE_CAT_CUDA_RUNTIME, 3);
	R(m, d, 100, 150, "K1", OPSCOPE_CAT_KERNEL, 1);
	R(m, d, 100, 160, "annotation", OPSCOPE_CAT_USER_DEFINED, 1);
	R(m, d, 150, 160, "M2", OPSCOPE_CAT_MEMCPY, 2);
	R(m, d, 160, 170, "K3a", OPSCOPE_CAT_KERNEL, 3);
	R(m, as, 0, 50, "async1", OPSCOPE_CAT_PYTHON_USER_DEFINED, -1);
	R(m, as, 10, 60, "async2", OPSCOPE_CAT_PYTHON_USER_DEFINED, -1);
	model_add_file(m, "f1", "test");
	uint32_t h1 = model_add_track(m, MODEL_TRACK_THREAD, 2, 1, 0);
	uint32_t d1 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	R(m, h1, 0, 10, "R1", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, d1, 20, 30, "orphan", OPSCOPE_CAT_KERNEL, 9);
	R(m, d1, 50, 60, "K1b", OPSCOPE_CAT_KERNEL, 1);
	nest(m);
	REQUIRE(!m->oom);
	struct tree t;
	REQUIRE(tree_build(&t, m) == 0);
	const struct tree_track *th = &t.tracks[h];
	uint64_t a = idx(m, h, "A", 0), b = idx(m, h, "B", 10), r1 = idx(m, h, "R1", 20);
	uint64_t r2 = idx(m, h, "R2", 60), r3 = idx(m, h, "R3", 70), r4 = idx(m, h, "R4", 80);
	REQUIRE(a != MODEL_NONE && b != MODEL_NONE && r1 != MODEL_NONE && r4 != MODEL_NONE);
	/* runtime calls hang under their innermost range */
	CHECK_EQ_U(th->parent[r1], b);
	CHECK_EQ_U(th->parent[r2], a);
	CHECK_EQ_U(th->parent[b], a);
	CHECK(th->parent[a] == MODEL_NONE);
	/* self = duration - children (runtime calls included) */
	CHECK_EQ_I(th->self_ns[a], 100 - 40 - 10 - 5 - 5);
	CHECK_EQ_I(th->self_ns[b], 40 - 10);
	CHECK_EQ_I(th->self_ns[r1], 10);
	/* device time: K1 50 under B; the annotation is not work; M2 counts in general only;
	 * id 3: the last call (R4) launched K3a, R3 nothing */
	CHECK_EQ_I(th->gpu_ns[b], 50);
	CHECK_EQ_I(th->ggpu_ns[b], 50);
	CHECK_EQ_I(th->gpu_ns[r3], 0);
	CHECK_EQ_I(th->gpu_ns[r4], 10);
	CHECK(th->launches[r3] == TREE_NONE);
	CHECK_EQ_I(th->gpu_ns[a], 50 + 10);
	CHECK_EQ_I(th->ggpu_ns[a], 50 + 10 + 10);
	/* the launch list of R1: K1 only (not the annotation) */
	REQUIRE(th->launches[r1] != TREE_NONE);
	const struct tree_launch *L = &t.launches[th->launches[r1]];
	CHECK_EQ_U(L->track, d);
	CHECK(strcmp(model_str(m, m->tracks[d].ranges.name[L->range]), "K1") == 0);
	CHECK(L->next == TREE_NONE);
	/* file 1: its call launched its own K1b, not file 0's K1; the orphan has no call */
	uint64_t r1b = idx(m, h1, "R1", 0);
	CHECK_EQ_I(t.tracks[h1].gpu_ns[r1b], 10);
	CHECK(!t.tracks[d1].launched[idx(m, d1, "orphan", 20)]);
	CHECK(t.tracks[d1].launched[idx(m, d1, "K1b", 50)]);
	CHECK(t.tracks[d].launched[idx(m, d, "K1", 100)]);
	CHECK(!t.tracks[d].launched[idx(m, d, "annotation", 100)]);
	/* async tracks are not part of the tree */
	CHECK(t.tracks[as].parent == NULL);
	tree_free(&t);
	model_free(m);
}

/* Correlation ids far apart (the index of tree.c falls back from an array to a hash map):
 * the same links as dense ids give, the last call with an id winning, and an id between the
 * calls' ids that no call has. */
TEST(tree_links_sparse_ids)
{
	static const int64_t ids[] = { 5, (int64_t)1 << 40, (int64_t)1 << 62, 77777 };
	struct model *m = model_new();
	model_add_file(m, "sparse", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	for (int i = 0; i < 4; i++) {
		R(m, h, i * 100, i * 100 + 10, "call", OPSCOPE_CAT_CUDA_RUNTIME, ids[i]);
		R(m, d, i * 100 + 50, i * 100 + 50 + i + 1, "k", OPSCOPE_CAT_KERNEL, ids[i]);
	}
	/* the same id as the first call, on a later track: this call wins */
	R(m, h2, 20, 30, "again", OPSCOPE_CAT_CUDA_RUNTIME, ids[0]);
	R(m, d, 900, 950, "nobody", OPSCOPE_CAT_KERNEL, ((int64_t)1 << 40) + 1);
	nest(m);
	REQUIRE(!m->oom);
	struct tree t;
	REQUIRE(tree_build(&t, m) == 0);
	for (int i = 1; i < 4; i++)
		CHECK_EQ_I(t.tracks[h].gpu_ns[idx(m, h, "call", i * 100)], i + 1);
	CHECK_EQ_I(t.tracks[h].gpu_ns[idx(m, h, "call", 0)], 0);
	CHECK_EQ_I(t.tracks[h2].gpu_ns[idx(m, h2, "again", 20)], 1);
	CHECK(!t.tracks[d].launched[idx(m, d, "nobody", 900)]);
	CHECK(t.tracks[d].launched[idx(m, d, "k", 350)]);
	CHECK_EQ_U(t.nlaunches, 4);
	tree_free(&t);
	model_free(m);
}

/* Host ranges only (an .opscope trace of a CPU program): no devices, no ProfileStep. */
TEST(no_devices_no_steps)
{
	struct model *m = model_new();
	model_add_file(m, "cpu", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 5, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 5, 2, 0);
	R(m, h, 100, 200, "conv", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 120, 130, "compute", OPSCOPE_CAT_OPERATOR_INNER, -1);
	R(m, h, 300, 400, "block", OPSCOPE_CAT_PYTHON_USER_DEFINED, -1);
	R(m, h2, 150, 250, "conv", OPSCOPE_CAT_OPERATOR, -1);
	nest(m);
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);
	CHECK(!c->an.has_steps);
	CHECK_EQ_I(c->an.total_ns, 400 - 100); /* the span of the host ranges */
	/* nothing on a GPU: no device, kernel, nvprof, distributed, step table; no model
	 * table without phases */
	CHECK(find_table(c, "device") == NULL);
	CHECK(find_table(c, "kernel") == NULL);
	CHECK(find_table(c, "nvprof") == NULL);
	CHECK(find_table(c, "distributed") == NULL);
	CHECK(find_table(c, "model") == NULL);
	const struct rtable *ov = find_table(c, "overview");
	REQUIRE(ov != NULL);
	CHECK_EQ_I(total_of(ov, "gpu_busy_ns"), 0);
	CHECK_EQ_I(total_of(ov, "total_ns"), 300);
	const struct rrow *r = row(ov, "type", "Operator", "cpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[col(ov, "calls")].i, 2);
	CHECK_EQ_I(r->cells[col(ov, "time_ns")].i, 150); /* [100,250) merged across threads */
	CHECK_NEAR(r->cells[col(ov, "ratio")].ratio, 0.5, 1e-12);
	CHECK(row(ov, "type", "Kernel", "gpu") == NULL);
	const struct rtable *op = find_table(c, "operator");
	REQUIRE(op != NULL);
	r = row(op, "name", "conv", NULL);
	REQUIRE(r != NULL);
	int gpu = col(op, "gpu");
	CHECK_EQ_I(r->cells[gpu].st.total, 0);
	CHECK_NEAR(r->cells[gpu].st.ratio, 0.0, 0);
	CHECK_NEAR(r->cells[col(op, "cpu")].st.ratio, 1.0, 1e-12);
	const struct rtable *ud = find_table(c, "userdefined");
	REQUIRE(ud != NULL);
	r = row(ud, "name", "block", NULL);
	REQUIRE(r != NULL);
	CHECK_NEAR(r->cells[col(ud, "cpu")].st.ratio, 100.0 / 300.0, 1e-12);
	/* every view renders in every format without a GPU */
	for (int f = 0; f < 3; f++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		struct rformat_opts fo = { (enum rformat)f, 1, 0, NULL, 0 };
		CHECK(report_render(out, c->tables, c->ntables, &fo, NULL, 0) == 0);
		fclose(out);
		CHECK(len > 0);
		CHECK(strstr(buf, "Device Summary") == NULL);
		free(buf);
	}
	report_ctx_free(c);

	/* the session's CPU utilization makes the Device table (rows only for what is there) */
	model_set_meta(m, 5, S(m, "cpu.process_utilization"), S(m, "1.25"));
	c = run(m, &o);
	REQUIRE(c != NULL);
	const struct rtable *dv = find_table(c, "device");
	REQUIRE(dv != NULL);
	CHECK_EQ_U(dv->nrows, 1);
	r = row(dv, "device", "CPU(Process)", NULL);
	REQUIRE(r != NULL);
	CHECK_NEAR(r->cells[col(dv, "utilization")].ratio, 1.25, 1e-12);
	report_ctx_free(c);

	/* two processes recorded it: a row each, with the pid */
	model_set_meta(m, 6, S(m, "cpu.process_utilization"), S(m, "0.5"));
	model_set_meta(m, 6, S(m, "cpu.system_utilization"), S(m, "0.25"));
	c = run(m, &o);
	REQUIRE(c != NULL);
	dv = find_table(c, "device");
	REQUIRE(dv != NULL);
	CHECK_EQ_U(dv->nrows, 3);
	r = row(dv, "device", "CPU(Process) (pid 6)", NULL);
	REQUIRE(r != NULL);
	CHECK_NEAR(r->cells[col(dv, "utilization")].ratio, 0.5, 1e-12);
	CHECK(row(dv, "device", "CPU(Process) (pid 5)", NULL) != NULL);
	r = row(dv, "device", "CPU(System)", NULL);
	REQUIRE(r != NULL);
	CHECK_NEAR(r->cells[col(dv, "utilization")].ratio, 0.25, 1e-12);
	report_ctx_free(c);
	model_free(m);
}

/*
 * Steps on two threads, phases nested in phases, overlapping streams:
 * thread 1: ProfileStep#1 [0,200)
 *             Forward [0,80)
 *               Forward [10,30)         (inside a phase: not counted by Model / Overview)
 *             op [100,180)
 *               op [110,120)
 * thread 2: op [150,250); ProfileStep#2 [300,400)
 * device 0: stream 1 kernel [0,50); stream 2 kernel [25,75), memcpy [75,100) (touches);
 *           an annotation [0,400) (never busy)
 */
TEST(overview_model_device)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t s1 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	uint32_t s2 = model_add_track(m, MODEL_TRACK_DEVICE, 0, 2, 0);
	R(m, h, 0, 200, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 80, "fwd", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 10, 30, "fwd.inner", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 100, 180, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 110, 120, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h2, 150, 250, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h2, 300, 400, "ProfileStep#2", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, s1, 0, 50, "k", OPSCOPE_CAT_KERNEL, -1);
	R(m, s1, 0, 400, "annotation", OPSCOPE_CAT_USER_DEFINED, -1);
	R(m, s2, 25, 75, "k", OPSCOPE_CAT_KERNEL, -1);
	R(m, s2, 75, 100, "Memcpy DtoH (Device -> Pageable)", OPSCOPE_CAT_MEMCPY, -1);
	nest(m);
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);
	CHECK_EQ_I(c->an.total_ns, 300); /* [0,200) + [300,400) */
	const struct rtable *ov = find_table(c, "overview");
	REQUIRE(ov != NULL);
	CHECK_EQ_I(total_of(ov, "gpu_busy_ns"), 100); /* [0,75) + [75,100), not the annotation */
	int calls = col(ov, "calls"), time = col(ov, "time_ns"), rat = col(ov, "ratio");
	const struct rrow *r = row(ov, "type", "ProfileStep", "cpu");
	REQUIRE(r != NULL);
	CHECK(r == &ov->rows[0] && r->indent == 0); /* first, unindented */
	CHECK_EQ_I(r->cells[calls].i, 2);
	CHECK_EQ_I(r->cells[time].i, 300);
	CHECK_NEAR(r->cells[rat].ratio, 1.0, 1e-12);
	r = row(ov, "type", "Operator", "cpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[calls].i, 3);
	/* [100,180) ∪ [110,120) ∪ [150,250) clipped to the steps: [100,200) */
	CHECK_EQ_I(r->cells[time].i, 100);
	CHECK(r->indent == 1);
	r = row(ov, "type", "Forward", "cpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[calls].i, 1); /* outermost only */
	CHECK_EQ_I(r->cells[time].i, 80);
	r = row(ov, "type", "Kernel", "gpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[calls].i, 2);
	CHECK_EQ_I(r->cells[time].i, 75); /* streams merged */
	CHECK_NEAR(r->cells[rat].ratio, 0.25, 1e-12);
	r = row(ov, "type", "Memcpy", "gpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[time].i, 25);
	CHECK(row(ov, "type", "UserDefined", "gpu") == NULL);
	/* CPU rows (after ProfileStep) by time, descending */
	for (size_t i = 2; i < ov->nrows; i++)
		if (cell_is(&ov->rows[i].cells[col(ov, "section")], "cpu"))
			CHECK(ov->rows[i].cells[time].i <= ov->rows[i - 1].cells[time].i);

	const struct rtable *md = find_table(c, "model");
	REQUIRE(md != NULL);
	int cpu = col(md, "cpu");
	r = row(md, "name", "ProfileStep", NULL);
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[col(md, "calls")].i, 2);
	CHECK_EQ_I(r->cells[cpu].st.total, 300);
	CHECK_EQ_I(r->cells[cpu].st.max, 200);
	CHECK_EQ_I(r->cells[cpu].st.min, 100);
	r = row(md, "name", "Forward", NULL);
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[col(md, "calls")].i, 1);
	CHECK_EQ_I(r->cells[cpu].st.total, 80);
	r = row(md, "name", "Others", NULL);
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[cpu].st.total, 300 - 80);
	CHECK(r->cells[col(md, "calls")].empty);

	/* GPU0: union of its kernels over both streams / total time */
	const struct rtable *dv = find_table(c, "device");
	REQUIRE(dv != NULL);
	r = row(dv, "device", "GPU0", NULL);
	REQUIRE(r != NULL);
	CHECK_NEAR(r->cells[col(dv, "utilization")].ratio, 75.0 / 300.0, 1e-12);
	CHECK(row(dv, "device", "CPU(Process)", NULL) == NULL);
	report_ctx_free(c);
	model_free(m);
}

/*
 * ProfileStep [0,200) on thread 1:
 *   Communication "nccl:all_reduce" [0,50) > runtime [10,20) corr 1 -> "gemm_in_comm" [20,60)
 *   Operator "matmul" [60,100) > runtime [70,80) corr 2 -> "k2" [80,120)
 * device: NCCL kernel (category Communication, no call) [100,130)
 * Communication = [0,50) ∪ [20,60) ∪ [100,130) = 90; Computation = [80,120) = 40 (Paddle would
 * add the kernel under the communication range too: 80); Overlap = [100,120) = 20.
 */
TEST(distributed)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	R(m, h, 0, 200, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 50, "nccl:all_reduce", OPSCOPE_CAT_COMMUNICATION, -1);
	R(m, h, 10, 20, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 60, 100, "matmul", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 70, 80, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, d, 20, 60, "gemm_in_comm", OPSCOPE_CAT_KERNEL, 1);
	R(m, d, 80, 120, "k2", OPSCOPE_CAT_KERNEL, 2);
	R(m, d, 100, 130, "ncclDevKernel_AllReduce", OPSCOPE_CAT_COMMUNICATION, -1);
	nest(m);
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);
	const struct rtable *di = find_table(c, "distributed");
	REQUIRE(di != NULL);
	CHECK(strcmp(di->title, "Distribution Summary") == 0);
	int tm = col(di, "time_ns"), rt = col(di, "ratio");
	const struct rrow *r = row(di, "name", "ProfileStep", NULL);
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[tm].i, 200);
	r = row(di, "name", "Communication", NULL);
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[tm].i, 90);
	CHECK_NEAR(r->cells[rt].ratio, 0.45, 1e-12);
	r = row(di, "name", "Computation", NULL);
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[tm].i, 40);
	r = row(di, "name", "Overlap", NULL);
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[tm].i, 20);
	/* the overview's Communication rows are the same sets: CPU [0,50); GPU the kernel under
	 * the communication range and the NCCL kernel, [20,60) + [100,130); Kernel counts every
	 * kernel, NCCL ones included */
	const struct rtable *ov = find_table(c, "overview");
	REQUIRE(ov != NULL);
	r = row(ov, "type", "Communication", "cpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[col(ov, "calls")].i, 1);
	CHECK_EQ_I(r->cells[col(ov, "time_ns")].i, 50);
	r = row(ov, "type", "Communication", "gpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[col(ov, "calls")].i, 2);
	CHECK_EQ_I(r->cells[col(ov, "time_ns")].i, 70);
	r = row(ov, "type", "Kernel", "gpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[col(ov, "calls")].i, 3);
	CHECK_EQ_I(r->cells[col(ov, "time_ns")].i, 40 + 50); /* [20,60) + [80,130) */
	report_ctx_free(c);
	model_free(m);
}

/* Memory manipulation vs user-defined; nvprof's copy names and API calls; kernel sort keys. */
TEST(memcpy_userdefined_nvprof)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 1, 0);
	R(m, h, 0, 1000, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 100, "MemCpy wrapper", OPSCOPE_CAT_USER_DEFINED, -1);
	R(m, h, 10, 20, "cudaMemcpyAsync", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 100, 200, "block", OPSCOPE_CAT_PYTHON_USER_DEFINED, -1);
	R(m, h, 110, 130, "cuLaunchKernel", OPSCOPE_CAT_CUDA_DRIVER, 2);
	R(m, h, 200, 250, "zero MEMSET", OPSCOPE_CAT_PYTHON_USER_DEFINED, -1);
	R(m, h, 210, 220, "cudaMemsetAsync", OPSCOPE_CAT_CUDA_RUNTIME, 3);
	R(m, h, 300, 310, "other", OPSCOPE_CAT_USER_DEFINED, -1);
	R(m, d, 20, 50, "Memcpy HtoD (Pageable -> Device)", OPSCOPE_CAT_MEMCPY, 1);
	R(m, d, 130, 140, "A", OPSCOPE_CAT_KERNEL, 2);
	R(m, d, 140, 200, "A", OPSCOPE_CAT_KERNEL, -1);
	R(m, d, 200, 205, "B", OPSCOPE_CAT_KERNEL, -1);
	R(m, d, 220, 224, "Memset (Device)", OPSCOPE_CAT_MEMSET, 3);
	R(m, d, 230, 236, "a strange copy", OPSCOPE_CAT_MEMCPY, -1);
	R(m, d, 240, 242, "Memcpy DtoD (Device -> Device)", OPSCOPE_CAT_MEMCPY, -1);
	nest(m);
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);
	/* memory manipulation: first-seen order, general GPU ratio of the step's (30+10+4) */
	const struct rtable *mm = find_table(c, "memcpy");
	REQUIRE(mm != NULL);
	REQUIRE(mm->nrows == 2);
	CHECK(cell_is(&mm->rows[0].cells[col(mm, "name")], "MemCpy wrapper"));
	CHECK(cell_is(&mm->rows[1].cells[col(mm, "name")], "zero MEMSET"));
	CHECK_EQ_I(mm->rows[0].cells[col(mm, "gpu")].st.total, 30);
	CHECK_NEAR(mm->rows[0].cells[col(mm, "gpu")].st.ratio, 30.0 / 44.0, 1e-12);
	CHECK_NEAR(mm->rows[1].cells[col(mm, "cpu")].st.ratio, 50.0 / 1000.0, 1e-12);
	const struct rtable *ud = find_table(c, "userdefined");
	REQUIRE(ud != NULL);
	/* C API / C++ UserDefined ranges are listed with the Python ones (issue 16.12), by CPU
	 * total; the copies are the memory manipulation table's */
	REQUIRE(ud->nrows == 2);
	CHECK(cell_is(&ud->rows[0].cells[col(ud, "name")], "block"));
	CHECK(cell_is(&ud->rows[1].cells[col(ud, "name")], "other"));
	CHECK_NEAR(ud->rows[1].cells[col(ud, "cpu")].st.ratio, 10.0 / 1000.0, 1e-12);

	const struct rtable *nv = find_table(c, "nvprof");
	REQUIRE(nv != NULL);
	int tot = col(nv, "total_ns"), calls = col(nv, "calls"), mn = col(nv, "min_ns");
	const struct rrow *r = row(nv, "name", "[CUDA memcpy HtoD]", "gpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[tot].i, 30);
	CHECK(row(nv, "name", "[CUDA memcpy DtoD]", "gpu") != NULL);
	CHECK(row(nv, "name", "[CUDA memset]", "gpu") != NULL);
	CHECK(row(nv, "name", "a strange copy", "gpu") != NULL);
	r = row(nv, "name", "A", "gpu");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[calls].i, 2); /* launched or not */
	CHECK_EQ_I(r->cells[tot].i, 70);
	CHECK_EQ_I(r->cells[mn].i, 10);
	CHECK_EQ_I(r->cells[col(nv, "max_ns")].i, 60);
	CHECK_EQ_I(r->cells[col(nv, "avg_ns")].i, 35);
	CHECK_NEAR(r->cells[col(nv, "ratio")].ratio, 70.0 / (30 + 70 + 5 + 4 + 6 + 2), 1e-12);
	r = row(nv, "name", "cuLaunchKernel", "api");
	REQUIRE(r != NULL);
	CHECK_NEAR(r->cells[col(nv, "ratio")].ratio, 20.0 / 40.0, 1e-12);
	/* GPU section first, each section by time descending */
	CHECK(cell_is(&nv->rows[0].cells[col(nv, "section")], "gpu"));
	CHECK(cell_is(&nv->rows[0].cells[col(nv, "name")], "A"));
	for (size_t i = 1; i < nv->nrows; i++) {
		bool same = cell_is(&nv->rows[i].cells[col(nv, "section")], "gpu") ==
			    cell_is(&nv->rows[i - 1].cells[col(nv, "section")], "gpu");
		if (same)
			CHECK(nv->rows[i].cells[tot].i <= nv->rows[i - 1].cells[tot].i);
	}
	/* kernel table: A (70, min 10) before B (5) by total; a CPU key sorts by total too */
	const struct rtable *k = find_table(c, "kernel");
	REQUIRE(k != NULL && k->nrows == 2);
	CHECK(cell_is(&k->rows[0].cells[col(k, "name")], "A"));
	report_ctx_free(c);
	o.sort = SORT_GPU_MIN; /* ascending: B (5) before A (10) */
	c = run(m, &o);
	REQUIRE(c != NULL);
	k = find_table(c, "kernel");
	REQUIRE(k != NULL);
	CHECK(cell_is(&k->rows[0].cells[col(k, "name")], "B"));
	report_ctx_free(c);
	o.sort = SORT_GPU_MAX; /* descending: A (60) */
	c = run(m, &o);
	REQUIRE(c != NULL);
	k = find_table(c, "kernel");
	CHECK(cell_is(&k->rows[0].cells[col(k, "name")], "A"));
	report_ctx_free(c);
	model_free(m);
}

/* Paddle's re.match(r'(.+?)(<.*>)(\(.*\))', name): group 1 + group 2. Expected values are
 * what Python 3.11 prints for each name. */
TEST(kernel_display_name)
{
	static const struct {
		const char *name, *display;
	} cases[] = {
		{ "gemm<float>(int)", "gemm<float>" },
		{ "void foo<int>(int) [clone .kd]", "void foo<int>" },
		{ "<lambda>(x)", "<lambda>(x)" },
		{ "void k<a<b>, c>(int, d<e>)", "void k<a<b>, c>" },
		{ "void k<a>(b)<c>(d)", "void k<a>(b)<c>" },
		{ "relu_k", "relu_k" },
		{ "k<int>", "k<int>" },
		{ "k<int>()", "k<int>" },
		{ "k<int>(", "k<int>(" },
		{ "k<a\n>(x)", "k<a\n>(x)" },
		{ "a\n<b>(c)", "a\n<b>(c)" },
		{ "k<a>(x)\nmore", "k<a>" },
		{ "x<>(y)", "x<>" },
		{ "<a<b>(c)", "<a<b>" },
		{ "k<a>(b) x>(", "k<a>" },
		{ "k<a>(b>(c)", "k<a>(b>" },
		{ "", "" },
		{ "<", "<" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = report_kernel_display_len(cases[i].name, strlen(cases[i].name));
		if (n != strlen(cases[i].display) ||
		    memcmp(cases[i].name, cases[i].display, n) != 0)
			CHECK_FAIL_("display name of \"%s\": %zu bytes", cases[i].name, n);
	}
}

/* The tables of every kind of range (issue 16.12): NVTX as nsys' nvtx_sum, Python functions
 * with self time, the module tree with its levels; and a view asked for by name with nothing
 * to show gives an empty table that says so. */
TEST(range_kind_views)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t as = model_add_track(m, MODEL_TRACK_ASYNC, 1, 0, 0);
	R(m, h, 0, 100, "outer", OPSCOPE_CAT_PYTHON_FUNCTION, -1);
	R(m, h, 10, 30, "inner", OPSCOPE_CAT_PYTHON_FUNCTION, -1);
	R(m, h, 100, 400, "forward: Net", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 110, 200, "nn.Module: Linear", OPSCOPE_CAT_USER_DEFINED, -1);
	R(m, h, 200, 210, "nvtx_a", OPSCOPE_CAT_NVTX, -1);
	uint64_t b = R(m, h, 220, 250, "nvtx_b", OPSCOPE_CAT_NVTX, -1);
	uint64_t arg = model_add_arg(m, S(m, "domain"), MODEL_ARG_STR, S(m, "lib"));
	m->tracks[h].ranges.first_arg[b] = arg;
	m->tracks[h].ranges.nargs[b] = 1;
	R(m, as, 0, 60, "nvtx_a", OPSCOPE_CAT_NVTX, -1);
	nest(m);
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);

	const struct rtable *t = find_table(c, "nvtx");
	REQUIRE(t != NULL);
	REQUIRE(t->nrows == 3);
	/* by total: the start/end nvtx_a (60), "lib:nvtx_b" (30), the push/pop nvtx_a (10) */
	CHECK(cell_is(&t->rows[0].cells[col(t, "style")], "StartEnd"));
	CHECK(cell_is(&t->rows[1].cells[col(t, "range")], "lib:nvtx_b"));
	CHECK(cell_is(&t->rows[1].cells[col(t, "domain")], "lib"));
	CHECK(cell_is(&t->rows[1].cells[col(t, "name")], "nvtx_b"));
	CHECK(cell_is(&t->rows[2].cells[col(t, "range")], "nvtx_a"));
	CHECK(cell_is(&t->rows[2].cells[col(t, "style")], "PushPop"));
	CHECK_NEAR(t->rows[0].cells[col(t, "ratio")].ratio, 60.0 / 100.0, 1e-12);
	CHECK_EQ_I(t->rows[1].cells[col(t, "med_ns")].i, 30);
	CHECK_EQ_I(t->rows[1].cells[col(t, "instances")].i, 1);

	t = find_table(c, "python");
	REQUIRE(t != NULL);
	REQUIRE(t->nrows == 2);
	CHECK(cell_is(&t->rows[0].cells[col(t, "name")], "outer"));
	CHECK_EQ_I(t->rows[0].cells[col(t, "cpu")].st.total, 100);
	CHECK_EQ_I(t->rows[0].cells[col(t, "self_cpu_ns")].i, 80);

	t = find_table(c, "module");
	REQUIRE(t != NULL);
	REQUIRE(t->nrows == 2);
	CHECK(cell_is(&t->rows[0].cells[col(t, "name")], "Net")); /* the class alone */
	CHECK_EQ_I(t->rows[0].indent, 0);
	CHECK_EQ_I(t->rows[0].cells[col(t, "self_cpu_ns")].i, 300 - 90);
	CHECK(cell_is(&t->rows[1].cells[col(t, "name")], "Linear"));
	CHECK_EQ_I(t->rows[1].indent, 1);
	/* the module calls are not user-defined ranges; nothing else is: no table */
	CHECK(find_table(c, "userdefined") == NULL);
	report_ctx_free(c);

	/* asked for by name: an empty table that says so; not asked for: nothing */
	struct report_ctx ctx;
	o.views_explicit = true;
	REQUIRE(report_ctx_init(&ctx, m, &o) == 0);
	REQUIRE(report_run_views(&ctx, report_view_listed, (void *)"userdefined,nvtx") == 0);
	t = find_table(&ctx, "userdefined");
	REQUIRE(t != NULL);
	CHECK_EQ_U(t->nrows, 0);
	CHECK(t->empty &&
	      strcmp(t->empty, "UserDefined: no ranges of this kind in the trace") == 0);
	t = find_table(&ctx, "nvtx");
	REQUIRE(t != NULL);
	CHECK(t->empty == NULL && t->nrows == 3);
	CHECK(find_table(&ctx, "operator") == NULL);
	report_ctx_free(&ctx);
	model_free(m);
}

/* --group-by input-shape: an Input Shapes column, one row per operator and shapes. */
TEST(operator_input_shapes)
{
	struct model *m = model_new();
	model_add_file(m, "x", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	const char *dims[] = { "[[1, 2]]", "[[3]]", "[[1, 2]]" };
	for (int k = 0; k < 3; k++) {
		uint64_t i = R(m, h, k * 100, k * 100 + 10 * (k + 1), "aten::add",
			       OPSCOPE_CAT_OPERATOR, -1);
		uint64_t a = model_add_arg(m, S(m, "Input Dims"), MODEL_ARG_STR, S(m, dims[k]));
		m->tracks[h].ranges.first_arg[i] = a;
		m->tracks[h].ranges.nargs[i] = 1;
	}
	nest(m);
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);
	const struct rtable *t = find_table(c, "operator");
	REQUIRE(t != NULL);
	CHECK_EQ_U(t->nrows, 1);
	CHECK(col(t, "input_shapes") < 0);
	report_ctx_free(c);
	o.group_by = REPORT_GROUP_INPUT_SHAPE;
	c = run(m, &o);
	REQUIRE(c != NULL);
	t = find_table(c, "operator");
	REQUIRE(t != NULL);
	REQUIRE(t->nrows == 2);
	int shapes = col(t, "input_shapes");
	REQUIRE(shapes >= 0);
	CHECK(cell_is(&t->rows[0].cells[shapes], "[[1, 2]]")); /* 10 + 30 */
	CHECK_EQ_I(t->rows[0].cells[col(t, "calls")].i, 2);
	CHECK(cell_is(&t->rows[1].cells[shapes], "[[3]]"));
	CHECK_EQ_I(t->rows[1].cells[col(t, "cpu")].st.total, 20);
	report_ctx_free(c);
	model_free(m);
}

TEST_MAIN(interval_rules, interval_sort_matches_qsort, tree_links, tree_links_sparse_ids,
	  no_devices_no_steps, overview_model_device, distributed, memcpy_userdefined_nvprof,
	  kernel_display_name, range_kind_views, operator_input_shapes)
