/*
 * fuzz_partial.c: libFuzzer target for the partial reader and the merge (report/partial.c,
 * `opscope merge`). The input is one partial; it is read, the set finished, and the mergeable
 * views (files, ranks, operator, kernel, nvprof, step, gpu, gputime, launch, queue, gpumem,
 * userdefined, memcpy, python, module, perf) run on it and rendered as JSON, as `opscope merge`
 * does. Checked: a partial refused says why in one line (a message, no newline); one taken gives a
 * model with one file and one rank share per file record, and views that run.
 * Also linked without libFuzzer into the corpus replay test (tests/fuzz/replay.c).
 * Run: build/fuzz/fuzz/fuzz_partial -max_total_time=300 tests/fuzz-corpus/partial
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/partial.h"
#include "report/table.h"
#include "report/views.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The views merge makes: those every partial of the set carries. */
static bool fuzz_carried(const char *view, void *arg)
{
	return partial_carries(arg, view);
}

/* A refusal: one line, not empty. */
static void fuzz_check_err(const char *err)
{
	if (!err[0] || strchr(err, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct partial_set ps;
	if (partial_set_init(&ps) != 0)
		return 0;
	char err[512] = "";
	/* fmemopen of 0 bytes: a stream at its end */
	FILE *in = fmemopen(size ? (void *)data : (void *)"", size ? size : 1, "rb");
	if (!in) {
		partial_set_free(&ps);
		return 0;
	}
	if (!size)
		fgetc(in);
	int rc = partial_read_stream(&ps, in, "fuzz", err, sizeof(err));
	fclose(in);
	if (rc == 0) {
		err[0] = '\0';
		rc = partial_finish(&ps, err, sizeof(err));
	}
	if (rc != 0) {
		fuzz_check_err(err);
		partial_set_free(&ps);
		return 0;
	}
	if (ps.m->nfiles != ps.nfiles || ps.pre.nranks != ps.nfiles)
		abort();
	struct report_opts ro = { .sort = SORT_CPU_TOTAL, .op_detail = true };
	struct report_ctx ctx;
	if (report_ctx_init(&ctx, ps.m, &ro) == 0) {
		ctx.pre = &ps.pre;
		partial_analysis(&ps, &ctx.an);
		if (report_run_views(&ctx, fuzz_carried, &ps) == 0) {
			struct rformat_opts fo = { RFORMAT_JSON, 1, 0, NULL, 0 };
			FILE *out = fopen("/dev/null", "w");
			if (out) {
				const char *inputs[] = { "fuzz" };
				report_render(out, ctx.tables, ctx.ntables, &fo, inputs, 1);
				fclose(out);
			}
		}
		report_ctx_free(&ctx);
	}
	partial_set_free(&ps);
	return 0;
}
