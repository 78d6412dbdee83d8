/*
 * make_trace.c: write the deterministic sample trace of tracebuild.c to a file, for the e2e
 * tests of the CLI and the fuzz seeds. usage: make_trace OUT [--no-end] [--zstd] [--v2]
 * [--long]. --long writes instead a trace of long EVENTS records (the loader's fast loops run
 * on them): nesting, arguments of every type, ENDs naming the innermost range, an outer one or
 * an undefined string, and times that go back between records. --stacks[=DEFECT] writes the
 * stack samples trace of tracebuild.c (tb_stacks_trace), whole or with one DEFECT:
 * bad-stack, bad-mapping, bad-parent, bad-frame, short-entries, cut-table, gap-ids,
 * v2-header.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tracebuild.h"

static uint32_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

/* Two tracks, four records of 300 events each per track (see the header). */
static void long_trace(struct tb *b, int v2)
{
	if (v2)
		tb_init_v2(b, 9);
	else
		tb_init(b, 9);
	tb_clock(b, 0, 0, 0, 3000000000ull);
	uint32_t names[4] = { tb_str(b, "conv"), tb_str(b, "relu"), tb_str(b, "matmul"),
			      tb_str(b, "shape") };
	tb_thread(b, 0, 9, 90, 0, 0);
	tb_thread(b, 1, 9, 91, 0, 0);
	uint64_t seed = 42, ticks[2] = { 1000, 1000 };
	for (int rec = 0; rec < 8; rec++) {
		int track = rec % 2, depth = 0;
		if (rec >= 4)
			ticks[track] -= 700; /* back in time across records */
		tb_events_begin(b, (uint32_t)track, ticks[track]);
		for (int i = 0; i < 300; i++) {
			uint32_t r = lcg(&seed);
			ticks[track] += r % 7 == 0 ? 70000 + r % 9000 : r % 400;
			uint32_t name = names[r % 4];
			if (depth < 5 && (depth == 0 || r % 3 != 0)) {
				tb_ev_begin(b, ticks[track], (uint8_t)(r % 8), name);
				depth++;
				if (r % 5 == 0)
					tb_ev_arg_str(b, names[3], names[r % 3]);
				else if (r % 11 == 0)
					tb_ev_arg_i64(b, names[3], -(int64_t)(r % 1000));
				else if (r % 13 == 0)
					tb_ev_arg_f64(b, names[3], r / 7.0);
				else if (r % 17 == 0)
					tb_ev_arg_u64(b, names[3], (uint64_t)r << 20);
			} else {
				/* mostly unnamed; sometimes a name (matching or not), or one undefined */
				uint32_t end = r % 29 == 0 ? 999 : r % 4 == 0 ? name : 0;
				tb_ev_end(b, ticks[track], end);
				depth--;
			}
			if (r % 97 == 0)
				tb_ev_counter(b, ticks[track], names[0], r / 3.0);
			if (r % 89 == 0)
				tb_ev_instant(b, ticks[track], 7, names[1]);
		}
		tb_events_end(b);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: make_trace OUT [--no-end] [--zstd] [--v2] [--long]\n");
		return 2;
	}
	int flags = 0, long_records = 0, stacks = -1;
	static const char *const defects[] = { "",	     "bad-stack", "bad-mapping",
					       "bad-parent", "bad-frame", "short-entries",
					       "cut-table",  "gap-ids",	  "v2-header" };
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--no-end") == 0)
			flags |= TB_SAMPLE_NO_END;
		else if (strcmp(argv[i], "--v2") == 0)
			flags |= TB_SAMPLE_V2;
		else if (strcmp(argv[i], "--long") == 0)
			long_records = 1;
		else if (strcmp(argv[i], "--zstd") == 0)
			flags |= TB_SAMPLE_ZSTD;
		else if (strcmp(argv[i], "--stacks") == 0)
			stacks = TB_STACKS_OK;
		else if (strncmp(argv[i], "--stacks=", 9) == 0) {
			for (int d = 1; d < (int)(sizeof(defects) / sizeof(defects[0])); d++)
				if (strcmp(argv[i] + 9, defects[d]) == 0)
					stacks = d;
			if (stacks < 0) {
				fprintf(stderr, "make_trace: unknown defect %s\n", argv[i] + 9);
				return 2;
			}
		} else {
			fprintf(stderr, "make_trace: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	struct tb b;
	if (stacks >= 0)
		tb_stacks_trace(&b, (enum tb_stacks_defect)stacks);
	else if (long_records)
		long_trace(&b, (flags & TB_SAMPLE_V2) != 0);
	else
		tb_sample(&b, flags);
	int rc = tb_write(&b, argv[1]);
	tb_free(&b);
	if (rc) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
