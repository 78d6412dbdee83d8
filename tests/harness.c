/*
 * harness.c: runs the tests of one test program and prints TAP (see harness.h).
 * Exit status: 0 all passed, 1 some failed, 77 every test skipped.
 */
#include "harness.h"

int harness_run(const struct harness_test *tests, int count)
{
	int passed = 0, failed = 0, skipped = 0;
	printf("1..%d\n", count);
	for (int i = 0; i < count; i++) {
		harness.failed_checks = 0;
		harness.skipped = 0;
		fflush(stdout);
		tests[i].fn();
		if (harness.failed_checks) {
			failed++;
			printf("not ok %d - %s\n", i + 1, tests[i].name);
		} else if (harness.skipped) {
			skipped++;
			printf("ok %d - %s # SKIP\n", i + 1, tests[i].name);
		} else {
			passed++;
			printf("ok %d - %s\n", i + 1, tests[i].name);
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	if (failed)
		return 1;
	return skipped == count ? 77 : 0;
}
