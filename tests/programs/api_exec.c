/*
 * api_exec.c: one process, three images, under `opscope record` (tests/e2e/test_exec.sh).
 * Every image records ranges and then replaces itself with exec, keeping its pid, so each
 * image's events must reach a file that the next image does not overwrite:
 *
 *   image 0: 100 "image0" ranges; an exec that fails (recording goes on); 50
 *            "after_failed_exec" ranges; execlp(itself, "1");
 *   image 1: a second thread records 70 "thread" ranges and stays alive in pause() (its
 *            events are in its partly filled chunk when exec comes); 200 "image1" ranges in
 *            main; execv(itself, "2");
 *   image 2: 300 "image2" ranges; vfork() and exec /bin/true in the child (which shares our
 *            memory and must not touch our session); 10 "after_vfork" ranges; exit.
 *
 * Exit status 0 when every step did what it should, else the step that failed (3..7).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pthread.h>
#include <semaphore.h>
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

static sem_t thread_done;

static void *bystander(void *arg)
{
	(void)arg;
	ranges("thread", 70);
	sem_post(&thread_done);
	for (;;)
		pause(); /* still alive, its chunk still its own, when main execs */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *stage = argc > 1 ? argv[1] : "0";
	if (strcmp(stage, "0") == 0) {
		ranges("image0", 100);
		char *const none[] = { "missing", NULL };
		execv("/nonexistent/opscope-no-such-program", none);
		if (errno != ENOENT)
			return 3; /* the exec's errno reaches the caller */
		ranges("after_failed_exec", 50);
		execlp(argv[0], argv[0], "1", (char *)NULL);
		return 4;
	}
	if (strcmp(stage, "1") == 0) {
		pthread_t t;
		sem_init(&thread_done, 0, 0);
		if (pthread_create(&t, NULL, bystander, NULL) != 0)
			return 5;
		ranges("image1", 200);
		while (sem_wait(&thread_done) != 0)
			;
		char *const next[] = { argv[0], "2", NULL };
		execv(argv[0], next);
		return 6;
	}
	ranges("image2", 300);
	pid_t child = vfork();
	if (child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 7;
	ranges("after_vfork", 10);
	return 0;
}
