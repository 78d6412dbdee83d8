/*
 * api_forever.c: records ranges until it is killed, and says on stdout (once) when it has
 * recorded ITERS of them, so a test knows when to kill it. Usage: api_forever ITERS
 * With "abort" as second argument it calls abort() at that point instead, and with "segv"
 * it dereferences NULL: crashes that must leave a readable trace.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opscope/opscope.h"

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 100000;
	const char *then = argc > 2 ? argv[2] : "";
	for (long i = 0;; i++) {
		OPSCOPE_RANGE_BEGIN(OPSCOPE_CAT_USER_DEFINED, "tick");
		OPSCOPE_RANGE_END();
		if (i + 1 == iters) {
			if (strcmp(then, "abort") == 0)
				abort();
			if (strcmp(then, "segv") == 0)
				raise(SIGSEGV);
			printf("recorded %ld\n", iters);
			fflush(stdout);
		}
		if (i + 1 >= iters) { /* keep recording, slowly, until killed */
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
	}
}
