/*
 * test_ranks.c: the rank analysis (analyze/ranks.h) on models built by hand, one file per
 * rank, each number worked out in the comments: clock offsets from collective ends, the
 * collective's transfer, wait and spread, per-step cells, the straggler and its cause (longer
 * compute, or a late arrival), the notes for duplicate and missing ranks and clocks that cannot
 * be aligned, and the helpers (collective names, bus bandwidth factors, dtype sizes).
 */
#include <math.h>
#include <string.h>

#include "opscope/opscope.h"

#include "analyze/analysis.h"
#include "analyze/ranks.h"
#include "harness.h"
#include "model/model.h"
#include "modelbuild.h"

/*
 * rank 0: compute 400 -> arrives at the all-reduce at 500; clock right.
 * rank 1: compute 600 -> arrives at 700; clock +1000 (its times are 1000 later).
 * Both leave at 800 (true). Offset of rank 1 = ref end - own end = 800 - 1800 = -1000.
 * Collective: durations 300 and 100 -> transfer 100, mean 200, wait 100; arrivals (aligned)
 * 500 and 700 -> spread 200, last rank 1; 2 ranks, no Group size arg -> group 2, factor
 * 2(2-1)/2 = 1; no "In msg nelems" -> bytes -1.
 * Step: compute 400 / 600 (Kernel role), communication 300 / 100 (NCCL, not under compute),
 * data wait 0 (no DataLoader), collective wait 700-500 = 200 / 0; both end at 1000 (aligned);
 * ready = 1000-200 = 800 / 1000 -> straggler rank 1 by 200; compute excess 600-400 = 200 >=
 * 200/2 -> longer compute, +200.
 */
TEST(ranks_straggler_compute)
{
	struct model *m = model_new();
	add_rank(m, "r0", 0, 0, 400, 500);
	add_rank(m, "r1", 1, 1000, 600, 700);
	nest(m);
	CHECK(ranks_present(m));
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct ranks r;
	REQUIRE(ranks_analyze(&a, &r) == 0);
	CHECK_EQ_U(r.nnotes, 0);
	REQUIRE(r.nranks == 2);
	CHECK_EQ_I(r.ranks[0].rank, 0);
	CHECK_EQ_I(r.ranks[1].rank, 1);
	CHECK_EQ_I(r.ranks[0].offset_ns, 0);
	CHECK_EQ_I(r.ranks[1].offset_ns, -1000);
	CHECK(r.aligned && r.ranks[1].aligned);
	CHECK_EQ_U(r.ranks[1].ncolls, 1);
	REQUIRE(r.ncolls == 1);
	const struct ranks_coll *c = &r.colls[0];
	CHECK_EQ_I(c->transfer_ns, 100);
	CHECK_EQ_I(c->mean_ns, 200);
	CHECK_EQ_I(c->spread_ns, 200);
	CHECK_EQ_U(c->last, 1);
	CHECK_EQ_I(c->arrive_ns[0], 500);
	CHECK_EQ_I(c->arrive_ns[1], 700);
	CHECK_EQ_I(c->group, 2);
	CHECK_EQ_I(c->bytes, -1);
	CHECK(strcmp(c->op, "allreduce") == 0);
	CHECK(strcmp(c->algo, "RING LL") == 0);
	CHECK(fabs(c->busbw_factor - 1.0) < 1e-12);
	CHECK_EQ_U(c->step, 0);
	REQUIRE(r.nsteps == 1);
	const struct ranks_step *s = &r.steps[0];
	CHECK_EQ_I(s->per[0].compute_ns, 400);
	CHECK_EQ_I(s->per[1].compute_ns, 600);
	CHECK_EQ_I(s->per[0].comm_ns, 300);
	CHECK_EQ_I(s->per[1].comm_ns, 100);
	CHECK_EQ_I(s->per[0].data_ns, 0);
	CHECK_EQ_I(s->per[0].wait_ns, 200);
	CHECK_EQ_I(s->per[1].wait_ns, 0);
	CHECK_EQ_I(s->per[0].end_ns, 1000);
	CHECK_EQ_I(s->per[1].end_ns, 1000);
	CHECK_EQ_U(s->straggler, 1);
	CHECK_EQ_I(s->margin_ns, 200);
	CHECK_EQ_I(s->why, RANKS_WHY_COMPUTE);
	CHECK_EQ_I(s->why_ns, 200);
	ranks_free(&r);
	analysis_free(&a);
	model_free(m);
}

/*
 * Same compute (400) on both ranks, but rank 1 reaches the all-reduce at 700 (its host was
 * late): the others' medians of compute and data wait equal its own (excess 0 < 200/2), so
 * the cause is the collective where it arrived last: 700 - 500 = 200 after the next rank.
 */
TEST(ranks_straggler_late)
{
	struct model *m = model_new();
	add_rank(m, "r0", 0, 0, 400, 500);
	add_rank(m, "r1", 1, -50, 400, 700);
	nest(m);
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct ranks r;
	REQUIRE(ranks_analyze(&a, &r) == 0);
	REQUIRE(r.nsteps == 1 && r.ncolls == 1);
	CHECK_EQ_I(r.ranks[1].offset_ns, 50); /* 800 - 750 */
	CHECK_EQ_U(r.steps[0].straggler, 1);
	CHECK_EQ_I(r.steps[0].margin_ns, 200);
	CHECK_EQ_I(r.steps[0].why, RANKS_WHY_LATE);
	CHECK_EQ_I(r.steps[0].why_ns, 200);
	CHECK_EQ_U(r.steps[0].why_coll, 0);
	ranks_free(&r);
	analysis_free(&a);
	model_free(m);
}

/*
 * Three files, no steps, no collectives: ranks 0 ("a"), 0 again ("b") and 3 ("c"). Without a
 * world size the world is taken as ranks 0..3: 1 and 2 are missing. Notes, in order: the
 * duplicate, the missing ranks, rank 3's clock (no collective in common), the two ranks
 * without steps. One file alone is not "ranks present"; a file with no rank is a note.
 */
TEST(ranks_notes)
{
	struct model *m = model_new();
	const char *paths[] = { "a", "b", "c" };
	int32_t ranks[] = { 0, 0, 3 };
	for (int i = 0; i < 3; i++) {
		model_add_file(m, paths[i], "test");
		uint32_t h = model_add_track(m, MODEL_TRACK_THREAD, (uint32_t)(10 + i), 1, 0);
		m->processes[m->tracks[h].process].rank = ranks[i];
		R(m, h, 0, 10, "op", OPSCOPE_CAT_OPERATOR, -1);
	}
	nest(m);
	CHECK(ranks_present(m));
	struct analysis a;
	REQUIRE(analysis_run(&a, m) == 0);
	struct ranks r;
	REQUIRE(ranks_analyze(&a, &r) == 0);
	CHECK_EQ_U(r.nranks, 2);
	REQUIRE(r.nnotes == 5);
	CHECK(strcmp(r.notes[0], "duplicate rank 0: a and b; the first is used") == 0);
	CHECK(strcmp(r.notes[1], "missing ranks: 2 of world size 4 loaded; not here: 1-2") == 0);
	CHECK(strcmp(r.notes[2], "rank 3: no collective in common with rank 0: clocks cannot be "
				 "aligned, compared as recorded") == 0);
	CHECK(strcmp(r.notes[3], "rank 0 (a): no steps: no step to compare") == 0);
	CHECK(strcmp(r.notes[4], "rank 3 (c): no steps: no step to compare") == 0);
	CHECK(!r.aligned);
	CHECK_EQ_U(r.nsteps, 0);
	CHECK_EQ_U(r.ncolls, 0);
	ranks_free(&r);
	analysis_free(&a);
	model_free(m);

	struct model *one = model_new();
	model_add_file(one, "x", "test");
	uint32_t h = model_add_track(one, MODEL_TRACK_THREAD, 1, 1, 0);
	one->processes[one->tracks[h].process].rank = 0;
	model_add_file(one, "y", "test"); /* no rank */
	uint32_t h2 = model_add_track(one, MODEL_TRACK_THREAD, 2, 1, 0);
	R(one, h, 0, 10, "op", OPSCOPE_CAT_OPERATOR, -1);
	R(one, h2, 0, 10, "op", OPSCOPE_CAT_OPERATOR, -1);
	nest(one);
	CHECK(!ranks_present(one));
	REQUIRE(analysis_run(&a, one) == 0);
	REQUIRE(ranks_analyze(&a, &r) == 0);
	CHECK_EQ_U(r.nranks, 1);
	REQUIRE(r.nnotes == 2); /* y has no rank; x has no ProfileStep range */
	CHECK(strcmp(r.notes[0], "y: no rank (no distributedInfo.rank, no rank metadata): left "
				 "out") == 0);
	CHECK(strcmp(r.notes[1], "rank 0 (x): no steps: no step to compare") == 0);
	ranks_free(&r);
	analysis_free(&a);
	model_free(one);
}

/* nccl-tests' factors: allreduce 2(n-1)/n = 14/8 for n = 8; allgather (n-1)/n = 7/8;
 * broadcast 1; unknown 0. Names old and new; dtypes as Kineto writes them. */
TEST(ranks_helpers)
{
	CHECK(strcmp(ranks_coll_op("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL"),
		     "reducescatter") == 0);
	CHECK(strcmp(ranks_coll_op("ncclKernel_AllGather_RING_LL_Sum_int8_t"), "allgather") == 0);
	CHECK(strcmp(ranks_coll_op("ncclKernel_Broadcast_RING_LL_Sum_int8_t"), "broadcast") == 0);
	CHECK(strcmp(ranks_coll_op("ncclDevKernel_Reduce_Sum_f32_RING_LL"), "reduce") == 0);
	CHECK(strcmp(ranks_coll_op("gemm"), "") == 0);
	CHECK(fabs(ranks_busbw_factor("allreduce", 8) - 1.75) < 1e-12);
	CHECK(fabs(ranks_busbw_factor("allgather", 8) - 0.875) < 1e-12);
	CHECK(fabs(ranks_busbw_factor("reducescatter", 4) - 0.75) < 1e-12);
	CHECK(fabs(ranks_busbw_factor("broadcast", 8) - 1.0) < 1e-12);
	CHECK(ranks_busbw_factor("", 8) == 0);
	CHECK(ranks_busbw_factor("allreduce", 0) == 0);
	CHECK_EQ_I(ranks_dtype_bytes("Float"), 4);
	CHECK_EQ_I(ranks_dtype_bytes("BFloat16"), 2);
	CHECK_EQ_I(ranks_dtype_bytes("c10::Half"), 2);
	CHECK_EQ_I(ranks_dtype_bytes("long int"), 8);
	CHECK_EQ_I(ranks_dtype_bytes("unsigned char"), 1);
	CHECK_EQ_I(ranks_dtype_bytes("complex"), 0);
	CHECK_EQ_I(ranks_dtype_bytes(NULL), 0);
}

/* Files of ranks 1, 0, 1 and one without a rank: the second file of rank 1 (index 2) is the
 * one left out; the first of each rank and the file without a rank are counted. */
TEST(ranks_kept)
{
	struct model *m = model_new();
	add_rank(m, "a", 1, 0, 400, 500);
	add_rank(m, "b", 0, 0, 400, 500);
	add_rank(m, "c", 1, 0, 400, 500);
	add_rank(m, "d", 2, 0, 400, 500);
	m->processes[m->tracks[m->ntracks - 3].process].rank = -1; /* d: no rank */
	bool keep[4];
	CHECK_EQ_U(ranks_kept_files(m, keep), 1);
	CHECK(keep[0] && keep[1] && !keep[2] && keep[3]);
	model_free(m);
}

TEST_MAIN(ranks_straggler_compute, ranks_straggler_late, ranks_notes, ranks_helpers, ranks_kept)
