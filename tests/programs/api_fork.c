/*
 * api_fork.c: a process tree under `opscope record`: the parent records 100 "parent"
 * ranges, forks a child that records 200 "child" ranges, and runs itself again through exec
 * (argument "exec") to record 300 "exec" ranges. Each process must get its own file.
 */
#include <stdio.h>
#include <string.h>

#include <sys/wait.h>
#include <unistd.h>

#include "opscope/opscope.h"

static void ranges(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		opscope_range_begin(OPSCOPE_CAT_USER_DEFINED, name);
		opscope_range_end();
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		ranges("exec", 300);
		return 0;
	}
	ranges("parent", 100);
	pid_t child = fork();
	if (child == 0) {
		ranges("child", 200);
		_exit(0); /* no atexit: the child's trace must still be complete enough */
	}
	pid_t execd = fork();
	if (execd == 0) {
		execl(argv[0], argv[0], "exec", (char *)NULL);
		_exit(127);
	}
	int st1, st2;
	waitpid(child, &st1, 0);
	waitpid(execd, &st2, 0);
	return WIFEXITED(st1) && WEXITSTATUS(st1) == 0 && WIFEXITED(st2) && WEXITSTATUS(st2) == 0
		       ? 0
		       : 1;
}
