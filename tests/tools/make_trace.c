/*
 * make_trace.c: write the deterministic sample trace of tracebuild.c to a file, for the e2e
 * tests of the CLI. usage: make_trace OUT [--no-end] [--zstd]
 */
#include <stdio.h>
#include <string.h>

#include "tracebuild.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: make_trace OUT [--no-end] [--zstd]\n");
		return 2;
	}
	int flags = 0;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--no-end") == 0)
			flags |= TB_SAMPLE_NO_END;
		else if (strcmp(argv[i], "--zstd") == 0)
			flags |= TB_SAMPLE_ZSTD;
		else {
			fprintf(stderr, "make_trace: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	struct tb b;
	tb_sample(&b, flags);
	int rc = tb_write(&b, argv[1]);
	tb_free(&b);
	if (rc) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
