/*
 * api_steps.c: the same training loop with opscope_step() at the start of each iteration or
 * at its end, for the test that both give the same steps (issue 16, point 10). A "setup" range
 * before the loop and a "save" range after it, then ITERS iterations of "load", "forward" and
 * "backward" (the last one sleeps long enough that a step is never a few microseconds), run
 * under `opscope record`. Usage: api_steps start|end|end-closed ITERS
 * (end-closed: calls at the end, and opscope_step_end() after the loop).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opscope/opscope.h"

static void work(int category, const char *name, long us)
{
	opscope_range_begin(category, name);
	struct timespec t = { 0, us * 1000 };
	nanosleep(&t, NULL);
	opscope_range_end();
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: api_steps start|end|end-closed ITERS\n");
		return 2;
	}
	bool at_start = strcmp(argv[1], "start") == 0;
	bool closed = strcmp(argv[1], "end-closed") == 0;
	int iters = atoi(argv[2]);
	work(OPSCOPE_CAT_USER_DEFINED, "setup", 3000);
	for (int i = 0; i < iters; i++) {
		if (at_start)
			opscope_step(8);
		work(OPSCOPE_CAT_DATALOADER, "load", 200);
		work(OPSCOPE_CAT_FORWARD, "forward", 500);
		work(OPSCOPE_CAT_BACKWARD, "backward", 1000);
		if (!at_start)
			opscope_step(8);
	}
	if (closed)
		opscope_step_end(-1);
	work(OPSCOPE_CAT_USER_DEFINED, "save", 2000);
	return 0;
}
