/*
 * autostart.c: recording with no code change, and the process events a recording must
 * survive.
 *
 * When the library is loaded with OPSCOPE_AUTOSTART=1 in the environment (set by
 * `opscope record`, together with LD_PRELOAD and OPSCOPE_OUTPUT), a constructor starts a
 * session before main() and an atexit handler stops it. Settings come from the environment:
 * OPSCOPE_BUFFER_MB, OPSCOPE_CHUNK_KB, OPSCOPE_FLUSH_MS, OPSCOPE_COMPRESS (none|zstd),
 * OPSCOPE_NVTX (0 to ignore NVTX), OPSCOPE_SAMPLE_HZ and OPSCOPE_SAMPLE_MODE (cpu|wall: CPU
 * stack sampling, sampler.c).
 *
 * _exit()/_Exit(): interposed, so a process that leaves without atexit (Python's os._exit in
 * multiprocessing and DataLoader workers) still finishes its file; in a vfork child, which
 * shares its parent's memory, they exit at once.
 *
 * fork(): the child continues recording into a file of its own (session_fork_child).
 * exec(): exec.c finishes the file first; the new image starts here again, with a new file.
 * Fatal and terminating signals whose disposition is the default get a handler that has the
 * writer finish the file (bounded wait), then re-raises the signal with the default action,
 * so the process dies the way it would have, with its trace intact. SIGKILL cannot be
 * caught; then the file holds everything up to the last flush (flush_interval_ms).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/syscall.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "record/session.h"

static const int autostart_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
					 SIGTERM, SIGINT, SIGHUP, SIGQUIT };
#define AUTOSTART_NSIG (sizeof(autostart_signals) / sizeof(autostart_signals[0]))

static void autostart_on_signal(int sig)
{
	session_stop_from_signal(sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void autostart_install_signals(void)
{
	for (size_t i = 0; i < AUTOSTART_NSIG; i++) {
		struct sigaction old;
		if (sigaction(autostart_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue; /* the program handles it itself */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = autostart_on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESETHAND | SA_NODEFER;
		sigaction(autostart_signals[i], &sa, NULL);
	}
}

static void autostart_at_exit(void)
{
	if (opscope_session_active())
		opscope_session_stop();
}

static size_t env_size(const char *name, size_t unit)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	unsigned long long n = strtoull(v, &end, 10);
	return *end ? 0 : (size_t)n * unit;
}

__attribute__((constructor(200))) static void autostart_init(void)
{
	const char *on = getenv("OPSCOPE_AUTOSTART");
	if (!on || strcmp(on, "1") != 0)
		return;
	/* The first process to start recording owns the output name; processes it starts
	 * (which inherit this variable) write files with their pid in the name. */
	if (!getenv("OPSCOPE_ROOT_PID")) {
		char pid[24];
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		setenv("OPSCOPE_ROOT_PID", pid, 1);
	}
	struct opscope_options o = { 0 };
	o.buffer_bytes = env_size("OPSCOPE_BUFFER_MB", 1u << 20);
	o.chunk_bytes = env_size("OPSCOPE_CHUNK_KB", 1u << 10);
	o.flush_interval_ms = (uint32_t)env_size("OPSCOPE_FLUSH_MS", 1);
	const char *c = getenv("OPSCOPE_COMPRESS");
	if (c && strcmp(c, "none") == 0)
		o.compression = OPSCOPE_COMPRESS_NONE;
	else if (c && strcmp(c, "zstd") == 0)
		o.compression = OPSCOPE_COMPRESS_ZSTD;
	const char *nvtx = getenv("OPSCOPE_NVTX");
	if (nvtx && strcmp(nvtx, "0") == 0)
		o.nvtx = -1;
	o.sample_hz = (uint32_t)env_size("OPSCOPE_SAMPLE_HZ", 1);
	const char *mode = getenv("OPSCOPE_SAMPLE_MODE");
	if (mode && strcmp(mode, "wall") == 0)
		o.sample_mode = OPSCOPE_SAMPLE_WALL;
	if (opscope_session_start(&o) != 0) {
		static const char msg[] = "opscope: cannot start recording: ";
		(void)!write(2, msg, sizeof(msg) - 1);
		const char *e = opscope_last_error();
		(void)!write(2, e, strlen(e));
		(void)!write(2, "\n", 1);
		return;
	}
	atexit(autostart_at_exit);
	autostart_install_signals();
}

/* Interposed _exit: finish this process's trace, then leave exactly like _exit. */
OPSCOPE_API void _exit(int status)
{
	if (session_owned_here())
		opscope_session_stop();
	for (;;)
		syscall(SYS_exit_group, status);
}

OPSCOPE_API void _Exit(int status)
{
	_exit(status);
}
