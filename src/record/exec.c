/*
 * exec.c: the exec family, interposed, so that a recording survives exec().
 *
 * exec keeps the pid and drops everything else: buffered events, the writer thread, atexit
 * handlers. Each wrapper here finishes the session first (session_exec_prepare: final round,
 * END, file closed), then calls the C library's function; if that returns, the exec failed
 * and recording goes on into a new file (session_exec_failed), with errno as the exec left
 * it. The new image records from the environment as the old one did (autostart.c) and never
 * takes the old image's file name (session.c, session_name).
 *
 * Interposed: execve, execv, execvp, execvpe, execl, execlp, execle, fexecve, execveat. The
 * C library's functions call its own execve internally, not through this one, so each exec
 * finishes the session once. posix_spawn and system() replace no image of ours (their child
 * never ran our code), so they are left alone.
 *
 * A vfork child shares its parent's memory: session_exec_prepare does nothing there (the
 * session is the parent's), and nothing here allocates for an argument list of up to
 * EXEC_STACK_ARGS entries or looks a symbol up: the C library's functions are found by a
 * constructor, before main().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "record/session.h"

/* execl's arguments up to this many go into an array on the stack. */
#define EXEC_STACK_ARGS 512

typedef int (*exec_pe_fn)(const char *, char *const[], char *const[]); /* execve, execvpe */
typedef int (*exec_p_fn)(const char *, char *const[]);		       /* execv, execvp */
typedef int (*exec_fd_fn)(int, char *const[], char *const[]);	       /* fexecve */
typedef int (*exec_at_fn)(int, const char *, char *const[], char *const[], int); /* execveat */

/* The C library's functions (the next definition after ours). */
static struct {
	exec_pe_fn execve, execvpe;
	exec_p_fn execv, execvp;
	exec_fd_fn fexecve;
	exec_at_fn execveat;
} exec_real;

/* dlsym returns void *; a function pointer is copied out of it (ISO C has no conversion). */
static void exec_lookup(void *fn, size_t size, const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p)
		memcpy(fn, &p, size);
}

__attribute__((constructor(101))) static void exec_init(void)
{
	exec_lookup(&exec_real.execve, sizeof(exec_real.execve), "execve");
	exec_lookup(&exec_real.execvpe, sizeof(exec_real.execvpe), "execvpe");
	exec_lookup(&exec_real.execv, sizeof(exec_real.execv), "execv");
	exec_lookup(&exec_real.execvp, sizeof(exec_real.execvp), "execvp");
	exec_lookup(&exec_real.fexecve, sizeof(exec_real.fexecve), "fexecve");
	exec_lookup(&exec_real.execveat, sizeof(exec_real.execveat), "execveat");
}

/* The exec returned: it failed. Record again, keeping the exec's errno for the caller. */
static int exec_returned(int stopped, int rc)
{
	if (stopped) {
		int err = errno;
		session_exec_failed();
		errno = err;
	}
	return rc;
}

/* Whether the C library's function `fn` is known: looked up now when an exec comes before
 * our constructor (from another library's constructor); errno ENOSYS if there is none. */
#define EXEC_FOUND(fn) (exec_real.fn || (exec_init(), exec_real.fn) || (errno = ENOSYS, 0))

OPSCOPE_API int execve(const char *path, char *const argv[], char *const envp[])
{
	if (!EXEC_FOUND(execve))
		return -1;
	int stopped = session_exec_prepare(path);
	return exec_returned(stopped, exec_real.execve(path, argv, envp));
}

OPSCOPE_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!EXEC_FOUND(execvpe))
		return -1;
	int stopped = session_exec_prepare(file);
	return exec_returned(stopped, exec_real.execvpe(file, argv, envp));
}

OPSCOPE_API int execv(const char *path, char *const argv[])
{
	if (!EXEC_FOUND(execv))
		return -1;
	int stopped = session_exec_prepare(path);
	return exec_returned(stopped, exec_real.execv(path, argv));
}

OPSCOPE_API int execvp(const char *file, char *const argv[])
{
	if (!EXEC_FOUND(execvp))
		return -1;
	int stopped = session_exec_prepare(file);
	return exec_returned(stopped, exec_real.execvp(file, argv));
}

OPSCOPE_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	if (!EXEC_FOUND(fexecve))
		return -1;
	char what[32];
	snprintf(what, sizeof(what), "/proc/self/fd/%d", fd);
	int stopped = session_exec_prepare(what);
	return exec_returned(stopped, exec_real.fexecve(fd, argv, envp));
}

#if __GLIBC_PREREQ(2, 34) /* the C library's execveat */
OPSCOPE_API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			 int flags)
{
	if (!EXEC_FOUND(execveat))
		return -1;
	int stopped = session_exec_prepare(path);
	return exec_returned(stopped, exec_real.execveat(dirfd, path, argv, envp, flags));
}
#endif

/* execl's variable arguments as an argv array, as the C library reads them: arg, then
 * pointers up to and including a NULL, then (execle) the environment. In `stack` when they
 * fit, else malloc'd (the caller frees what is not `stack`). NULL with errno on failure. */
static char **exec_argv(char **stack, const char *arg, va_list ap, char *const **envp)
{
	va_list count;
	va_copy(count, ap);
	size_t argc = 1;
	while (va_arg(count, char *))
		argc++;
	va_end(count);
	char **argv = argc < EXEC_STACK_ARGS ? stack : malloc((argc + 1) * sizeof(*argv));
	if (!argv)
		return NULL;
	argv[0] = (char *)arg;
	for (size_t i = 1; i <= argc; i++)
		argv[i] = va_arg(ap, char *);
	if (envp)
		*envp = va_arg(ap, char *const *);
	return argv;
}

OPSCOPE_API int execl(const char *path, const char *arg, ...)
{
	char *stack[EXEC_STACK_ARGS];
	va_list ap;
	va_start(ap, arg);
	char **argv = exec_argv(stack, arg, ap, NULL);
	va_end(ap);
	if (!argv)
		return -1;
	int rc = execv(path, argv);
	if (argv != stack)
		free(argv);
	return rc;
}

OPSCOPE_API int execlp(const char *file, const char *arg, ...)
{
	char *stack[EXEC_STACK_ARGS];
	va_list ap;
	va_start(ap, arg);
	char **argv = exec_argv(stack, arg, ap, NULL);
	va_end(ap);
	if (!argv)
		return -1;
	int rc = execvp(file, argv);
	if (argv != stack)
		free(argv);
	return rc;
}

OPSCOPE_API int execle(const char *path, const char *arg, ...)
{
	char *stack[EXEC_STACK_ARGS];
	char *const *envp = NULL;
	va_list ap;
	va_start(ap, arg);
	char **argv = exec_argv(stack, arg, ap, &envp);
	va_end(ap);
	if (!argv)
		return -1;
	int rc = execve(path, argv, envp);
	if (argv != stack)
		free(argv);
	return rc;
}
