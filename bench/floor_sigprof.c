/*
 * floor_sigprof.c: the floor of any signal-based sampler, as a preload library for
 * bench_sampler_peers.sh: a SIGPROF handler that does nothing, driven at $FLOOR_HZ either
 *  - by ITIMER_PROF (the process's CPU time; the timer gperftools' CPUPROFILE uses), whose
 *    ticks come with the kernel's HZ (250 here), so it delivers fewer signals than asked; or
 *  - with FLOOR_MECH=perf, by a perf_event task-clock event on the main thread that signals
 *    it at each sample (F_SETSIG, F_SETOWN_EX), as opscope's sampler does in a Python
 *    process: the same rate and the same interrupt and signal, nothing else (the handler only
 *    marks the event's small ring as read). FLOOR_STACK=N adds what perf_event would copy
 *    for an unwinder off the thread (PERF_SAMPLE_REGS_USER ip/sp/bp and N bytes of user
 *    stack, in a ring big enough for one such record): the kernel's cost of that copy.
 * What a run under it costs over a plain run is the timer interrupt and the signal delivery
 * alone. At exit it prints "floor signals N" on stderr.
 * bench/sampler_interleave.py loads it with ctypes instead and turns the perf_event floor on
 * and off for the calling thread (floor_enable, floor_disable), between phases of one run.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asm/perf_regs.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static atomic_ulong signals;
static struct perf_event_mmap_page *ring;
static int ring_fd = -1;
static size_t ring_bytes;

static void on_sigprof(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&signals, 1, memory_order_relaxed);
	if (ring) /* all read: the kernel keeps room for the next record and its wakeup */
		__atomic_store_n(&ring->data_tail,
				 __atomic_load_n(&ring->data_head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
}

static int perf_floor(long hz)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = (unsigned long long)(1000000000L / hz);
	a.sample_type = PERF_SAMPLE_TID;
	const char *stack = getenv("FLOOR_STACK");
	long pages = 8;
	if (stack && atol(stack) > 0) {
		a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a.sample_regs_user =
			1ull << PERF_REG_X86_BP | 1ull << PERF_REG_X86_SP | 1ull << PERF_REG_X86_IP;
		a.sample_stack_user = (unsigned)atol(stack);
		pages = 16; /* 64 KiB: room for a 24 KiB record and the next */
	}
	a.wakeup_events = 1;
	a.exclude_kernel = 1;
	a.disabled = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	long page = sysconf(_SC_PAGESIZE);
	void *m =
		mmap(NULL, (size_t)((pages + 1) * page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return -1;
	}
	ring = m;
	ring_fd = fd;
	ring_bytes = (size_t)((pages + 1) * page);
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
	if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) != 0)
		return -1;
	return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

static struct sigaction old_action;

/* The perf_event floor at `hz` on the calling thread, its handler installed (the previous
 * action kept for floor_disable). 0, or -1 when perf_event refused. */
int floor_enable(long hz)
{
	struct sigaction sa = { .sa_handler = on_sigprof, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, &old_action);
	if (perf_floor(hz) == 0)
		return 0;
	sigaction(SIGPROF, &old_action, NULL);
	return -1;
}

/* Stop the floor and put the previous action back: SIG_IGN where it was SIG_DFL, since a
 * signal already on its way would otherwise end the process. */
void floor_disable(void)
{
	if (ring_fd >= 0) {
		ioctl(ring_fd, PERF_EVENT_IOC_DISABLE, 0);
		close(ring_fd);
		ring_fd = -1;
	}
	struct perf_event_mmap_page *r = ring;
	ring = NULL;
	if (!(old_action.sa_flags & SA_SIGINFO) && old_action.sa_handler == SIG_DFL)
		old_action.sa_handler = SIG_IGN;
	sigaction(SIGPROF, &old_action, NULL);
	if (r)
		munmap(r, ring_bytes);
}

unsigned long floor_signals(void)
{
	return atomic_load(&signals);
}

__attribute__((constructor)) static void floor_start(void)
{
	const char *hz = getenv("FLOOR_HZ"), *mech = getenv("FLOOR_MECH");
	long n = hz ? atol(hz) : 0;
	if (n <= 0)
		return;
	struct sigaction sa = { .sa_handler = on_sigprof, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	if (mech && strcmp(mech, "perf") == 0) {
		if (perf_floor(n) != 0)
			fprintf(stderr, "floor: perf_event refused\n");
		return;
	}
	struct itimerval it = { { 0, 1000000 / n }, { 0, 1000000 / n } };
	setitimer(ITIMER_PROF, &it, NULL);
}

__attribute__((destructor)) static void floor_stop(void)
{
	if (getenv("FLOOR_HZ"))
		fprintf(stderr, "floor signals %lu\n", atomic_load(&signals));
}
