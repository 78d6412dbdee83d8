/*
 * test_report.c: the analysis behind `opscope report` on a model built by hand, with every
 * expected number worked out below: the tree (runtime calls under their innermost range,
 * kernels under the calls with their correlation id), the interval rules, every view, sort
 * keys, and the three renderings (escaping of hostile names included).
 *
 * The model (times in ns), thread 1:
 *   ProfileStep#1 [0,1000)
 *     Dataloader [0,100)
 *     Forward [100,500)
 *       matmul [100,300)            Operator
 *         compute [110,200)         OperatorInner
 *           cudaLaunchKernel [120,130) corr 1 -> gemm<float>(int) [130,330)
 *         cudaMemcpyAsync [210,220)  corr 2 -> Memcpy HtoD [220,240)
 *       relu [300,400)
 *         cudaLaunchKernel [310,320) corr 3 -> relu_k [330,350)
 *     Backward [500,800)
 *       matmul [500,700)
 *         cudaLaunchKernel [510,520) corr 4 -> gemm<float>(int) [520,620)
 *     Optimization [800,950)
 * thread 2: matmul [200,260); a hostile user range (PythonUserDefined) [270,280)
 * device 0 stream 7: the kernels above, orphan [0,10) (no call), ncclKernel_x [600,700).
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

static const char hostile[] = "a\"b\n\x01\xff,c";

static struct model *build(void)
{
	struct model *m = model_new();
	model_add_file(m, "synthetic", "test");
	uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, 1, 1, 0);
	uint32_t h2 = model_add_track(m, MODEL_TRACK_THREAD, 1, 2, 0);
	uint32_t d = model_add_track(m, MODEL_TRACK_DEVICE, 0, 7, 0);
	R(m, h, 0, 1000, "ProfileStep#1", OPSCOPE_CAT_PROFILE_STEP, -1);
	R(m, h, 0, 100, "load", OPSCOPE_CAT_DATALOADER, -1);
	R(m, h, 100, 500, "forward", OPSCOPE_CAT_FORWARD, -1);
	R(m, h, 100, 300, "matmul", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 110, 200, "compute", OPSCOPE_CAT_OPERATOR_INNER, -1);
	R(m, h, 120, 130, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 1);
	R(m, h, 210, 220, "cudaMemcpyAsync", OPSCOPE_CAT_CUDA_RUNTIME, 2);
	R(m, h, 300, 400, "relu", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 310, 320, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 3);
	R(m, h, 500, 800, "backward", OPSCOPE_CAT_BACKWARD, -1);
	R(m, h, 500, 700, "matmul", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h, 510, 520, "cudaLaunchKernel", OPSCOPE_CAT_CUDA_RUNTIME, 4);
	R(m, h, 800, 950, "step", OPSCOPE_CAT_OPTIMIZATION, -1);
	R(m, h2, 200, 260, "matmul", OPSCOPE_CAT_OPERATOR, -1);
	R(m, h2, 270, 280, hostile, OPSCOPE_CAT_PYTHON_USER_DEFINED, -1);
	R(m, d, 130, 330, "gemm<float>(int)", OPSCOPE_CAT_KERNEL, 1);
	R(m, d, 220, 240, "Memcpy HtoD (Pageable -> Device)", OPSCOPE_CAT_MEMCPY, 2);
	R(m, d, 330, 350, "relu_k", OPSCOPE_CAT_KERNEL, 3);
	R(m, d, 520, 620, "gemm<float>(int)", OPSCOPE_CAT_KERNEL, 4);
	R(m, d, 0, 10, "orphan", OPSCOPE_CAT_KERNEL, -1);
	R(m, d, 600, 700, "ncclKernel_x", OPSCOPE_CAT_COMMUNICATION, -1);
	for (uint32_t t = 0; t < m->ntracks; t++)
		model_nest_track(m, t);
	return m;
}

/* The row of table t whose first text column is `name` (NULL if none). */
static const struct rrow *find_row(const struct rtable *t, int col, const char *name)
{
	for (size_t i = 0; i < t->nrows; i++) {
		const struct rcell *c = &t->rows[i].cells[col];
		if (c->text && c->len == strlen(name) && memcmp(c->text, name, c->len) == 0)
			return &t->rows[i];
	}
	return NULL;
}

static struct report_ctx *run(struct model *m, struct report_opts *o)
{
	static struct report_ctx c;
	return report_run_all(&c, m, o);
}

TEST(intervals)
{
	struct ivec a = { 0 }, b = { 0 }, o = { 0 }, x = { 0 };
	ivec_push(&a, 10, 20);
	ivec_push(&a, 0, 5);
	ivec_push(&a, 5, 8);   /* touches [0,5): merges */
	ivec_push(&a, 12, 15); /* inside [10,20) */
	ivec_merge(&a);
	CHECK_EQ_U(a.n, 2);
	CHECK_EQ_I(a.v[0].s, 0);
	CHECK_EQ_I(a.v[0].e, 8);
	CHECK_EQ_I(ivec_sum(&a), 18);
	ivec_push(&b, 6, 12);
	ivec_merge(&b);
	ivec_intersect(&a, &b, &o);
	CHECK_EQ_I(ivec_sum(&o), 4); /* [6,8) + [10,12) */
	ivec_subtract(&a, &b, &x);
	CHECK_EQ_I(ivec_sum(&x), 14); /* [0,6) + [12,20) */
	CHECK_EQ_I(ivec_sum_within(&a, 4, 15), 4 + 5);
	ivec_free(&a);
	ivec_free(&b);
	ivec_free(&o);
	ivec_free(&x);
}

TEST(tree)
{
	struct model *m = build();
	struct tree t;
	REQUIRE(tree_build(&t, m) == 0);
	const struct tree_track *h = &t.tracks[0];
	/* ranges of thread 1 in (start, depth) order: 0 ProfileStep, 1 load, 2 forward,
	 * 3 matmul, 4 compute, 5 launch, 6 memcpy call, 7 relu, 8 launch, 9 backward,
	 * 10 matmul, 11 launch, 12 step */
	CHECK_EQ_U(h->parent[5], 4);
	CHECK_EQ_U(h->parent[6], 3);
	CHECK_EQ_U(h->parent[3], 2);
	CHECK(h->parent[0] == MODEL_NONE);
	CHECK_EQ_I(h->gpu_ns[3], 200);	/* gemm only: the copy is not a kernel */
	CHECK_EQ_I(h->ggpu_ns[3], 220); /* gemm + copy */
	CHECK_EQ_I(h->gpu_ns[0], 320);
	CHECK_EQ_I(h->ggpu_ns[0], 340);
	CHECK_EQ_I(h->self_ns[3], 200 - 90 - 10);
	CHECK_EQ_I(h->self_ns[0], 1000 - 100 - 400 - 300 - 150);
	CHECK(!t.tracks[2].launched[0]); /* orphan: first on the device, launched by nobody */
	CHECK(t.tracks[2].launched[1]);	 /* gemm */
	tree_free(&t);
	model_free(m);
}

TEST(overview_model_distributed)
{
	struct model *m = build();
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);
	CHECK_EQ_I(c->an.total_ns, 1000);
	const struct rtable *ov = find_table(c, "overview");
	REQUIRE(ov != NULL);
	CHECK_EQ_I(total_of(ov, "total_ns"), 1000);
	CHECK_EQ_I(total_of(ov, "gpu_busy_ns"), 410);
	const struct rrow *r = find_row(ov, 0, "Operator");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[2].i, 4);	/* calls */
	CHECK_EQ_I(r->cells[3].i, 500); /* [100,400) + [500,700), merged across threads */
	r = find_row(ov, 0, "Forward");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[3].i, 400);
	CHECK_NEAR(r->cells[4].ratio, 0.4, 1e-9);
	/* GPU rows come after the CPU rows; the Kernel row counts the NCCL kernel too */
	int64_t kernel = -1, comm = -1, memcpy_ns = -1;
	for (size_t i = 0; i < ov->nrows; i++) {
		const struct rcell *x = ov->rows[i].cells;
		if (x[1].len == 3 && memcmp(x[1].text, "gpu", 3) == 0) {
			if (x[0].len == 6 && !memcmp(x[0].text, "Kernel", 6))
				kernel = x[3].i;
			if (x[0].len == 13 && !memcmp(x[0].text, "Communication", 13))
				comm = x[3].i;
			if (x[0].len == 6 && !memcmp(x[0].text, "Memcpy", 6))
				memcpy_ns = x[3].i;
		}
	}
	CHECK_EQ_I(kernel, 410);
	CHECK_EQ_I(comm, 100);
	CHECK_EQ_I(memcpy_ns, 20);

	const struct rtable *md = find_table(c, "model");
	REQUIRE(md != NULL);
	r = find_row(md, 0, "ProfileStep");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[3].st.total, 320); /* kernels launched inside, no copy */
	r = find_row(md, 0, "Forward");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[2].st.total, 400);
	CHECK_EQ_I(r->cells[3].st.total, 220);
	CHECK_NEAR(r->cells[3].st.ratio, 220.0 / 320.0, 1e-9);
	r = find_row(md, 0, "Others");
	REQUIRE(r != NULL);
	CHECK_EQ_I(r->cells[2].st.total, 50);
	CHECK(r->cells[2].st.only_total);
	CHECK_EQ_I(r->cells[3].st.total, 0);

	const struct rtable *di = find_table(c, "distributed");
	REQUIRE(di != NULL);
	CHECK_EQ_I(find_row(di, 0, "Communication")->cells[1].i, 100);
	CHECK_EQ_I(find_row(di, 0, "Computation")->cells[1].i, 330);
	CHECK_EQ_I(find_row(di, 0, "Overlap")->cells[1].i, 20);
	report_ctx_free(c);
	model_free(m);
}

TEST(operator_tree_and_sort)
{
	struct model *m = build();
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);
	const struct rtable *op = find_table(c, "operator");
	REQUIRE(op != NULL);
	/* matmul: 3 calls over both threads */
	const struct rrow *r = &op->rows[0];
	CHECK(r->cells[0].len == 6 && memcmp(r->cells[0].text, "matmul", 6) == 0);
	CHECK_EQ_I(r->cells[1].i, 3);
	CHECK_EQ_I(r->cells[2].st.total, 460);
	CHECK_EQ_I(r->cells[2].st.max, 200);
	CHECK_EQ_I(r->cells[2].st.min, 60);
	CHECK_NEAR(r->cells[2].st.ratio, 460.0 / 560.0, 1e-9);
	CHECK_EQ_I(r->cells[3].st.total, 320);
	CHECK_EQ_I(r->cells[3].st.min, 0);
	CHECK_NEAR(r->cells[3].st.ratio, 320.0 / 340.0, 1e-9);
	/* op detail: the inner phase, its kernel, then the operator's own kernels */
	REQUIRE(op->nrows >= 6);
	CHECK(op->rows[1].indent == 1 && memcmp(op->rows[1].cells[0].text, "compute", 7) == 0);
	CHECK_EQ_I(op->rows[1].cells[2].st.total, 90);
	CHECK_NEAR(op->rows[1].cells[2].st.ratio, 90.0 / 460.0, 1e-9);
	CHECK_EQ_I(op->rows[1].cells[3].st.total, 200);
	CHECK(op->rows[2].indent == 2);
	CHECK_EQ_I(op->rows[2].cells[3].st.total, 200);
	CHECK_NEAR(op->rows[2].cells[3].st.ratio, 1.0, 1e-9);
	CHECK(op->rows[2].cells[2].empty);
	CHECK(op->rows[3].indent == 1 && memcmp(op->rows[3].cells[0].text, "Memcpy HtoD", 11) == 0);
	CHECK_EQ_I(op->rows[3].cells[3].st.total, 20);
	CHECK(op->rows[4].indent == 1 && memcmp(op->rows[4].cells[0].text, "gemm", 4) == 0);
	CHECK_EQ_I(op->rows[4].cells[3].st.total, 100);
	CHECK_NEAR(op->rows[4].cells[3].st.ratio, 100.0 / 320.0, 1e-9);
	report_ctx_free(c);

	/* CPUMin sorts ascending: matmul (min 60) before relu (min 100); CPUMax descending:
	 * matmul (200) first too; Calls: matmul (3) first; GPUMin ascending: matmul (0). */
	o.op_detail = false;
	o.sort = SORT_CPU_MIN;
	c = run(m, &o);
	REQUIRE(c != NULL);
	op = find_table(c, "operator");
	CHECK(memcmp(op->rows[0].cells[0].text, "matmul", 6) == 0);
	CHECK(memcmp(op->rows[1].cells[0].text, "relu", 4) == 0);
	report_ctx_free(c);
	o.sort = SORT_GPU_AVG; /* relu 20 > matmul 320/3 = 106? no: 106 > 20 */
	c = run(m, &o);
	op = find_table(c, "operator");
	CHECK(memcmp(op->rows[0].cells[0].text, "matmul", 6) == 0);
	report_ctx_free(c);
	o.sort = SORT_CPU_AVG; /* matmul 153 > relu 100 */
	o.thread_sep = true;
	c = run(m, &o);
	size_t groups = 0;
	for (size_t i = 0; i < c->ntables; i++)
		groups += strcmp(c->tables[i]->view, "operator") == 0;
	CHECK_EQ_U(groups, 2); /* one per thread */
	report_ctx_free(c);
	model_free(m);
}

TEST(kernel_and_nvprof)
{
	struct model *m = build();
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);
	const struct rtable *k = find_table(c, "kernel");
	REQUIRE(k != NULL);
	CHECK_EQ_U(k->nrows, 4);
	/* by total: gemm 300, nccl 100, relu 20, orphan 10; display name keeps <...> only */
	CHECK(k->rows[0].cells[0].len == 11 &&
	      memcmp(k->rows[0].cells[0].text, "gemm<float>", 11) == 0);
	CHECK(k->rows[0].cells[3].len == 16); /* the full name, "gemm<float>(int)" */
	CHECK_EQ_I(k->rows[0].cells[1].i, 2);
	CHECK_EQ_I(k->rows[0].cells[2].st.total, 300);
	CHECK_NEAR(k->rows[0].cells[2].st.ratio, 300.0 / 430.0, 1e-9);
	CHECK(memcmp(k->rows[3].cells[0].text, "orphan", 6) == 0);
	const struct rtable *nv = find_table(c, "nvprof");
	REQUIRE(nv != NULL);
	/* gpu rows: gemm 300, nccl 100, then the copy and relu_k (20 each), orphan 10; then
	 * the API calls: cudaLaunchKernel 30 (3 calls), cudaMemcpyAsync 10 */
	REQUIRE(nv->nrows == 7);
	const struct rrow *cp = find_row(nv, 7, "[CUDA memcpy HtoD]");
	REQUIRE(cp != NULL);
	CHECK_EQ_I(cp->cells[2].i, 20);
	CHECK_NEAR(cp->cells[1].ratio, 20.0 / 450.0, 1e-9);
	const struct rrow *api = find_row(nv, 7, "cudaLaunchKernel");
	REQUIRE(api != NULL);
	CHECK_EQ_I(api->cells[3].i, 3);
	CHECK_NEAR(api->cells[1].ratio, 30.0 / 40.0, 1e-9);
	CHECK(api->cells[0].len == 3 && memcmp(api->cells[0].text, "api", 3) == 0);
	report_ctx_free(c);
	model_free(m);
}

TEST(nvprof_times)
{
	char b[32];
	rformat_nvprof_time(b, sizeof(b), 97765000);
	CHECK_STR(b, "97.765ms");
	rformat_nvprof_time(b, sizeof(b), 1083500);
	CHECK_STR(b, "1.0835ms");
	rformat_nvprof_time(b, sizeof(b), 5751);
	CHECK_STR(b, "5.7510us");
	rformat_nvprof_time(b, sizeof(b), 992);
	CHECK_STR(b, "992ns");
	rformat_nvprof_time(b, sizeof(b), 353084000000);
	CHECK_STR(b, "353.084s");
	rformat_nvprof_time(b, sizeof(b), 19243800000);
	CHECK_STR(b, "19.2438s");
}

/* Render every table in a format into a string. */
static char *render(struct report_ctx *c, enum rformat f, const char *columns)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct rformat_opts o = { f, 1, 0, columns, 0 };
	const char *inputs[] = { "in\"put" };
	int rc = report_render(out, c->tables, c->ntables, &o, inputs, 1);
	fclose(out);
	return rc == 0 ? buf : (free(buf), NULL);
}

TEST(renderings_escape)
{
	struct model *m = build();
	struct report_opts o = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx *c = run(m, &o);
	REQUIRE(c != NULL);
	char *json = render(c, RFORMAT_JSON, NULL);
	REQUIRE(json != NULL);
	/* the hostile user range: quote and backslash escaped, control as \u0001, \xff as
	 * U+FFFD; no raw control byte anywhere */
	CHECK(strstr(json, "\"name\":\"a\\\"b\\n\\u0001\\ufffd,c\"") != NULL);
	CHECK(strstr(json, "\"inputs\":[\"in\\\"put\"]") != NULL);
	CHECK(strstr(json, "\"gpu_busy_ns\":410") != NULL);
	/* "columns": the text headers by key; the stats column "CPU Total / Avg / Max / Min /
	 * Ratio(%)" (key "cpu") as its five keys, each with the prefix "CPU " and its part */
	CHECK(strstr(json, "\"columns\":[{\"key\":\"name\",\"title\":\"Name\"},"
			   "{\"key\":\"calls\",\"title\":\"Calls\"},"
			   "{\"key\":\"cpu_total_ns\",\"title\":\"CPU Total\"},"
			   "{\"key\":\"cpu_avg_ns\",\"title\":\"CPU Avg\"},"
			   "{\"key\":\"cpu_max_ns\",\"title\":\"CPU Max\"},"
			   "{\"key\":\"cpu_min_ns\",\"title\":\"CPU Min\"},"
			   "{\"key\":\"cpu_ratio\",\"title\":\"CPU Ratio(%)\"},") != NULL);
	for (const char *p = json; *p; p++)
		CHECK(*p == '\n' || (unsigned char)*p >= 0x20);
	free(json);
	char *csv = render(c, RFORMAT_CSV, NULL);
	REQUIRE(csv != NULL);
	/* quoted (comma, quote, newline inside), quotes doubled, invalid byte as U+FFFD */
	CHECK(strstr(csv, "\"a\"\"b\n\x01\xef\xbf\xbd,c\"") != NULL);
	CHECK(strstr(csv, "name,calls,cpu_total_ms,cpu_avg_ms,cpu_max_ms,cpu_min_ms,cpu_ratio") !=
	      NULL);
	free(csv);
	char *text = render(c, RFORMAT_TEXT, NULL);
	REQUIRE(text != NULL);
	CHECK(strstr(text, "a\"b\\n\\x01\\xff,c") != NULL);
	CHECK(strstr(text, "-Operator Summary-") != NULL);
	CHECK(strstr(text, "0.46 / 0.15 / 0.20 / 0.06 / 82.14") == NULL); /* ms: all round to 0 */
	CHECK(strstr(text, "0.00 / 0.00 / 0.00 / 0.00 / 82.14") != NULL); /* matmul 460/560 */
	CHECK(strstr(text, "GPU activities:") != NULL);
	free(text);
	/* --columns keeps only the named keys */
	char *few = render(c, RFORMAT_JSON, "name,calls");
	REQUIRE(few != NULL);
	CHECK(strstr(few, "\"cpu_total_ns\"") == NULL);
	CHECK(strstr(few, "{\"level\":0,\"name\":\"matmul\",\"calls\":3}") != NULL);
	/* and "columns" lists just those, in that order */
	CHECK(strstr(few, "\"columns\":[{\"key\":\"name\",\"title\":\"Name\"},"
			  "{\"key\":\"calls\",\"title\":\"Calls\"}],\"rows\"") != NULL);
	free(few);
	char bad[16];
	CHECK(rformat_unknown_column("name,calls,gpu,display_name", c->tables, c->ntables, bad,
				     sizeof(bad)) == NULL);
	CHECK_STR(rformat_unknown_column("name,gpu_total_ns,calls", c->tables, c->ntables, bad,
					 sizeof(bad)),
		  "gpu_total_ns");
	CHECK_STR(rformat_unknown_column("a_very_long_key_indeed", c->tables, c->ntables, bad,
					 sizeof(bad)),
		  "a_very_long_key");
	report_ctx_free(c);
	model_free(m);
}

/* A table made by hand: a group naming a file with a newline in its name, a name with a C1
 * control (U+009B, CSI), a name of multi-byte characters cut by -w. */
TEST(render_group_and_c1)
{
	struct rtable *t = rtable_new("step", "Step Summary");
	REQUIRE(t != NULL);
	snprintf(t->group, sizeof(t->group), "File: a\nb.json");
	int name = rtable_col(t, "Step", "step", RCOL_TEXT, 8);
	int tot = rtable_col(t, "Total", "total_ns", RCOL_TIME, 8);
	struct rrow *r = rtable_row(t, 0);
	REQUIRE(r != NULL);
	rcell_text(r, name,
		   "x\xc2\x9b"
		   "31m",
		   6);
	r->cells[tot].i = 1500000;
	r = rtable_row(t, 0);
	REQUIRE(r != NULL);
	static const char greek[] =
		"\xce\xb1\xce\xb2\xce\xb3\xce\xb4\xce\xb5\xce\xb6"; /* 6 letters */
	rcell_text(r, name, greek, sizeof(greek) - 1);
	struct rtable *tabs[] = { t };
	for (int f = 0; f < 3; f++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		struct rformat_opts o = { (enum rformat)f, 1, 5, NULL, 0 };
		CHECK(report_render(out, tabs, 1, &o, NULL, 0) == 0);
		fclose(out);
		REQUIRE(buf != NULL);
		if (f == RFORMAT_TEXT) {
			CHECK(strstr(buf, "File: a\\nb.json") != NULL);
			CHECK(strstr(buf, "x\\xc2\\x9b31m") == NULL);	   /* cut by -w 5 ... */
			CHECK(strstr(buf, "\xc2\x9b") == NULL);		   /* ... never raw */
			CHECK(strstr(buf, "\xce\xb1\xce\xb2...") != NULL); /* 2 letters + "..." */
		} else if (f == RFORMAT_CSV) {
			CHECK(strncmp(buf, "# Step Summary: File: a\\nb.json\nstep,total_ms\n",
				      46) == 0);
			CHECK(strstr(buf, "1.500000") != NULL);
		} else {
			CHECK(strstr(buf, "\"group\":\"File: a\\nb.json\"") != NULL);
			CHECK(strstr(buf, "\"step\":\"x\xc2\x9b"
					  "31m\"") != NULL); /* valid UTF-8 */
		}
		free(buf);
	}
	/* text without -w: the C1 control escaped, byte by byte */
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct rformat_opts o = { RFORMAT_TEXT, 1, 0, NULL, 0 };
	CHECK(report_render(out, tabs, 1, &o, NULL, 0) == 0);
	fclose(out);
	REQUIRE(buf != NULL);
	CHECK(strstr(buf, "x\\xc2\\x9b31m") != NULL);
	free(buf);
	rtable_free(t);
}

/* The HTML page: the JSON between the data element's tags, with every '<', '>' and '&' of a
 * name as a JSON escape, so that "</script>" in a name cannot end the element; invalid UTF-8
 * as U+FFFD (the JSON renderer's); the page's own two script elements and nothing else. */
TEST(render_html_escapes)
{
	struct rtable *t = rtable_new("kernel", "Kernel Summary");
	REQUIRE(t != NULL);
	int name = rtable_col(t, "Name", "name", RCOL_TEXT, 8);
	int tot = rtable_col(t, "Total", "total_ns", RCOL_TIME, 8);
	static const char evil[] = "</script><script>x=1</script>&\"'\x01\xff<!--";
	struct rrow *r = rtable_row(t, 0);
	REQUIRE(r != NULL);
	rcell_text(r, name, evil, sizeof(evil) - 1);
	r->cells[tot].i = 1234;
	struct rtable *tabs[] = { t };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct rformat_opts o = { RFORMAT_HTML, 1, 0, NULL, 0 };
	const char *inputs[] = { "a<b>&.json" };
	CHECK(report_render(out, tabs, 1, &o, inputs, 1) == 0);
	fclose(out);
	REQUIRE(buf != NULL);
	CHECK(strncmp(buf, "<!DOCTYPE html>", 15) == 0);
	const char *open = "<script type=\"application/json\" id=\"opscope-data\">";
	const char *data = strstr(buf, open);
	REQUIRE(data != NULL);
	data += strlen(open);
	const char *end = strstr(data, "</script>");
	REQUIRE(end != NULL);
	/* the data ends where the JSON does: after "]}" */
	CHECK(end - data > 2 && end[-2] == ']' && end[-1] == '}');
	size_t n = (size_t)(end - data);
	CHECK(memchr(data, '<', n) == NULL);
	CHECK(memchr(data, '>', n) == NULL);
	CHECK(memchr(data, '&', n) == NULL);
	CHECK(strstr(data, "\"inputs\":[\"a\\u003cb\\u003e\\u0026.json\"]") != NULL);
	/* the name: < > & escaped, the quote and \x01 as JSON escapes, \xff as \ufffd */
	CHECK(strstr(data, "\"name\":\"\\u003c/script\\u003e\\u003cscript\\u003ex=1"
			   "\\u003c/script\\u003e\\u0026\\\"'\\u0001\\ufffd\\u003c!--\"") != NULL);
	CHECK(strstr(data, "\"total_ns\":1234") != NULL);
	/* two script elements in all: the data and the page's code */
	int scripts = 0;
	for (const char *p = buf; (p = strstr(p, "<script")) != NULL; p++)
		scripts++;
	CHECK_EQ_I(scripts, 2);
	CHECK(strstr(buf, "</html>") != NULL);
	free(buf);
	rtable_free(t);
}

TEST_MAIN(intervals, tree, overview_model_distributed, operator_tree_and_sort, kernel_and_nvprof,
	  nvprof_times, renderings_escape, render_group_and_c1, render_html_escapes)
