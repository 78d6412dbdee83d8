/*
 * sampler.c: CPU stack sampling of every thread of this process (issue 17; docs/sampling.md).
 *
 * One sampler thread per process, started with the session (opscope_options.sample_hz, or
 * OPSCOPE_SAMPLE_HZ under `opscope record`), finds the process's threads by scanning
 * /proc/self/task in a round (10 ms) where the thread count changed, and at least every
 * SCAN_MAX_NS (so a new thread is sampled from at most one round after it starts, or 100 ms
 * when another ended in the same round) and samples each with one of two mechanisms. While the
 * signal mechanisms' handlers run, rounds are longer (half a ring of samples) and the
 * handlers wake the sampler thread when the thread count moves (sig_check_threads):
 *
 *  - perf_event (preferred): a software TASK_CLOCK event per thread (pid=tid, cpu=-1) with a
 *    fixed period of 1/HZ of CPU time, the user registers (ip, sp, bp) and a copy of the top
 *    SAMPLER_STACK_BYTES of the user stack, times on CLOCK_MONOTONIC, into an mmap'd ring
 *    that the sampler thread drains, unwinding each copy (unwind.c). The program gets no
 *    signal at all. In a process running CPython 3.11 (pystack.c) the event instead signals
 *    SIGPROF to its thread at each sample (MECH_PERF_SIGNAL), whose handler takes it as the
 *    timers' handler does: a Python stack can only be read on its thread, at the sample.
 *  - a SIGPROF timer (fallback, where perf_event_open is refused, or OPSCOPE_SAMPLE_MECH=timer):
 *    per thread a POSIX timer on that thread's CPU clock (SIGEV_THREAD_ID, so the signal goes
 *    to that thread). The handler unwinds the live stack (unwind.c) from the ucontext, every
 *    load checked against the thread's stack bounds, into a per-thread single-producer ring
 *    (which also holds the thread's unwind cache) that the sampler thread
 *    drains: the sample store takes a lock, so the handler never calls it. SA_RESTART, errno
 *    saved. CPU-clock timers tick with the kernel's HZ (250 here), so rates above it give
 *    fewer samples than asked for.
 *
 * Wall-clock mode (OPSCOPE_SAMPLE_WALL) samples waiting threads too: the sampler thread
 * itself ticks at HZ and queues SIGPROF to every thread (rt_tgsigqueueinfo, carrying the
 * thread's ring), with the same handler. Sleeps that the kernel never restarts (nanosleep,
 * poll, epoll_wait, select) return EINTR early in that mode; docs/sampling.md says so.
 *
 * Frames are turned into native frames of the sample store against the executable mappings
 * of /proc/self/maps (read again when an address is in none of them), each mapping with the
 * build-id read from its file's ELF notes (once per path). Return addresses are stored minus
 * one (inside the call). Stacks are unwound with the modules' .eh_frame (unwind.c), whose
 * module table the sampler thread refreshes every round when the loader's counts changed; a
 * walk that does not reach the thread's start (glibc's _start, clone3) is marked truncated.
 *
 * Python frames: the handler also reads the thread's Python stack (pystack_walk) into the
 * ring slot; the sampler thread merges it into the native stack at the interpreter's eval
 * loop frames (pystack_merge) and interns each (code, instruction) once.
 *
 * fork(): the child's sampler starts again with the child's session (events and timers belong
 * to the parent's threads). exec(): the session stops first (and with it the sampler).
 */
#include "record/sampler.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <asm/perf_regs.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "record/clock.h"
#include "record/pystack.h"
#include "record/record.h"
#include "record/samples.h"
#include "record/stackcache.h"
#include "record/unwind.h"
#include "record/wakeword.h"
#include "util/grow.h"
#include "util/hashmap.h"

#define SAMPLER_ROUND_NS 10000000ull /* how often threads are looked for and rings drained */
/* The round of a signal mechanism while its handlers run (the last round drained samples):
 * half a ring's worth of sample periods (a thread takes at most one sample per period of its
 * CPU time, so the ring cannot fill before the next), at most this and at least a plain
 * round (above 6.4 kHz a busy round drains more than half a ring). The handlers look for new
 * threads meanwhile and wake the sampler thread when the count moved (sig_check_threads).
 * Waking every 10 ms cost as much of the sampler thread's CPU as the rounds' work: about 45 us
 * a wake-up on this VM, 4-5 us a sample at 1 kHz. */
#define SAMPLER_BUSY_ROUND_NS 100000000ull
/* How often a handler looks at the thread count (one fstat), across all threads. */
#define SAMPLER_CHECK_NS   10000000ull
#define SAMPLER_MAX_FRAMES 256 /* frames kept per sample, innermost first */
/* Signal samples a thread can hold between two drains: 128 ms at 1 kHz, about 450 KiB. With
 * 16 (16 ms), a sampler thread kept off the CPU by other work (load average 8-10 on this
 * 2-vCPU VM) let 9% of the samples of bench/sampler_workload.py fall for a full ring. A busy
 * round drains half of it: 64 slots (32 ms rounds) cost 5.1-6.2 us of the sampler thread's
 * CPU a sample on that workload at 1 kHz, 128 slots 3.6-4.5 (the wake-ups). */
#define SIGRING_SLOTS	  128
#define SAMPLER_MAX_PY	  128	/* Python frames kept per sample, innermost first */
#define SIGNAL_RING_PAGES 8	/* perf ring of the signalled mode: its records are 16 bytes */
#define FD_RINGS	  65536 /* perf fds the signalled mode can map to their rings */
#define SIGRING_MAGIC	  0x6f70736373616d70ull
#define LOADER_TRIES	  64 /* addresses a round may look for in the loader's list */
/* The longest time between two listings of /proc/self/task when the thread count has not
 * changed: a thread that starts in the round another ends is found within 100 ms, not 10. */
#define SCAN_MAX_NS 100000000ull
/* The link count procfs gives /proc/self/task with n threads known to the sampler: 2, the
 * sampler thread, and those n. */
#define TASK_LINKS(n) ((n) + 3)
/* Bytes of user stack perf_event copies per sample, from the sampled sp up. docs/sampling.md
 * says how it was chosen: the deepest stacks of the Python and torch workloads measured. */
#define SAMPLER_STACK_BYTES 24576
/* Data pages of a perf ring: 1 MiB, 42 samples of 24 KiB: four 10 ms rounds at 1 kHz, so a
 * sampler thread that runs late on a busy machine loses nothing (512 KiB lost about 1% of
 * the samples on this 2-core VM shared with other work). Fewer pages where the
 * locked-memory limit of an unprivileged user refuses them (perf_map). Drained every round;
 * what does not fit is lost (counted by the kernel, reported in the `unwind` metadata). */
#define PERF_RING_PAGES 256

/* ---- The signal path's per-thread ring (written only by the handler on its thread). ---- */

struct sigslot {
	uint64_t ticks;
	uint32_t n;
	uint32_t flags;
	uint64_t
		pcs[SAMPLER_MAX_FRAMES]; /* pcs[0] the interrupted address, then return addresses */
	uint32_t npy, pyflags;		 /* the thread's Python stack (pystack_walk), when on */
	struct pystack_frame py[SAMPLER_MAX_PY];
};

struct sigring {
	/* SIGRING_MAGIC once ready for a handler: stored last (release) by ring_get, loaded
	 * first (acquire) by the handler, so that the handler sees the ring's reset state */
	_Atomic uint64_t magic;
	_Atomic uint64_t head; /* written by the handler */
	_Atomic uint64_t tail; /* written by the sampler thread */
	_Atomic uint64_t dropped;
	uintptr_t stack_lo, stack_hi; /* the thread's stack, found by the handler's first run */
	struct sigring *next_all;     /* every ring ever made (they are never freed) */
	struct sigring *next_free;
	struct sigslot slots[SIGRING_SLOTS];
	struct unwind_cache cache;   /* the handler's, kept while the ring is reused */
	_Atomic uint64_t walk_ticks; /* time the handler spent unwinding (record ticks) */
	_Atomic uint64_t hit_walks, hit_walk_ticks; /* of them, walks that only hit the cache */
	_Atomic uint64_t handler_ticks;		    /* time in the handler, all of it (ticks) */
	_Atomic uint64_t handler_runs;		    /* handler runs that took a sample */
};

/* ---- The sampled threads. ---- */

struct sthread {
	pid_t tid;
	int seen; /* found by the current scan */
	uint32_t track;
	int fd;		    /* perf event, or -1 */
	void *map;	    /* its ring */
	uint32_t map_pages; /* data pages of map */
	int timerid;	    /* kernel timer id (timer mechanism, CPU mode), or -1 */
	struct sigring *ring;
	struct stackcache *cache; /* its last stack (stack_of), from its first sample on */
	uint64_t cache_maps_gen;  /* S.maps_gen the cache's frames were looked up under */
};

/* MECH_PERF_SIGNAL: perf_event's overflow, one per sample, signals the sampled thread
 * (F_SETSIG, F_SETOWN_EX), whose handler takes the sample as the timers' do: the Python stack
 * can only be read there, on the thread, at the sample (pystack.c), and perf_event keeps the
 * rate exact where CPU-time timers tick at the kernel's HZ. */
enum { MECH_NONE, MECH_PERF, MECH_SIGNAL, MECH_PERF_SIGNAL };

struct mapping {
	uint64_t start, end, offset;
	char *path;
	uint32_t id; /* in the sample store; RECORD_SAMPLE_NONE until first used */
};

struct buildid {
	char *path;
	char hex[41 * 2];
};

static struct {
	pthread_mutex_t lock; /* the thread table; held by the sampler thread during a round */
	pthread_t thread;
	int running;
	_Atomic int stop;
	sem_t started; /* posted by the sampler thread as it starts (sampler_start) */
	uint32_t hz, last_hz;
	int mode, last_mode;
	int mech;
	pid_t self_tid;
	struct sthread *threads;
	size_t nthreads;
	uint64_t threads_cap;
	struct mapping *maps;
	size_t nmaps;
	uint64_t maps_cap;
	int maps_refreshed;    /* this round */
	uint64_t maps_gen;     /* bumped when S.maps is read again (ids and frames change) */
	uint64_t maps_changes; /* bumped when S.maps changes at all (read, or one added) */
	struct stackcache_map stack_map; /* stack entries by (parent, frame key): stack_of */
	uint64_t stack_map_changes;	 /* S.maps_changes its native frames were found under */
	uint64_t maps_reads;		 /* reads of /proc/self/maps */
	uint64_t maps_from_loader;	 /* mappings taken from the loader's list instead */
	uint32_t loader_tries;		 /* maps_add_from_loader calls this round */
	uint64_t maps_read_ns;		 /* CLOCK_MONOTONIC of the last read of /proc/self/maps */
	unsigned long long dl_adds, dl_subs; /* the loader's counts at that read */
	struct buildid *bids;
	size_t nbids;
	uint64_t bids_cap;
	uint64_t period_ns;
	uint64_t lost;
	struct unwind_cache perf_cache; /* the sampler thread's, for the perf_event copies */
	uint64_t perf_walk_ticks;	/* time it spent unwinding them (record ticks) */
	uint64_t perf_hit_walks, perf_hit_walk_ticks; /* of them, walks that only hit the cache */
	uint32_t stack_bytes;			      /* perf_event's copy per sample */
	struct sigaction old_sa;
	int handler_installed;
	_Atomic int python;	/* pystack is on: the handler reads Python stacks */
	struct hmap py_frames;	/* (code id << 32 | instruction) -> sample store frame id */
	uint64_t py_samples;	/* samples with Python frames */
	uint64_t samples;	/* samples handed to the sample store by this sampler */
	uint64_t thread_cpu_ns; /* the sampler threads' CPU time, added as each ends (ns) */
	_Atomic int task_fd;	/* /proc/self/task of this process, open while the thread runs */
	uint64_t scan_ns;	/* CLOCK_MONOTONIC of the last listing */
	/* What the handlers read to wake the sampler thread (sampler_wake, sig_check_threads):
	 * the link count /proc/self/task has while the thread count is the one known, and the
	 * record ticks of the last check and between two. */
	_Atomic uint64_t task_links;
	_Atomic uint64_t check_ticks, check_every;
	uint64_t wakeups, woken; /* the sampler thread's rounds, and those a handler asked for */
} S = { .lock = PTHREAD_MUTEX_INITIALIZER, .task_fd = -1 };

/* The sampler thread sleeps on this between rounds, to the round's deadline; sampler_wake
 * ends the sleep. */
static struct wakeword sampler_wakeword;

/* MECH_PERF_SIGNAL: the ring of the thread whose perf event has fd i (the overflow signal
 * names the fd, not the ring); mmap'd once, entries set before the fd may signal and
 * cleared before it is closed. */
static struct sigring *_Atomic *fd_rings;

static struct sigring *_Atomic rings_all;
static struct sigring *rings_free; /* under S.lock */

/* ---------------------------------------------------------------------------------------- */
/* The signal handler. Async-signal-safe: raw system calls, atomics, its own ring. */

/* The bounds of the mapping holding `sp` from /proc/self/maps, read with raw system calls. */
static void sig_stack_bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	*lo = *hi = 0;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[4096];
	size_t have = 0;
	for (;;) {
		ssize_t r = syscall(SYS_read, fd, buf + have, sizeof(buf) - have);
		if (r <= 0)
			break;
		have += (size_t)r;
		size_t line = 0;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			uintptr_t a = 0, b = 0;
			size_t j = line;
			for (; j < i && buf[j] != '-'; j++)
				a = a * 16 +
				    (uintptr_t)(buf[j] <= '9' ? buf[j] - '0' : buf[j] - 'a' + 10);
			for (j++; j < i && buf[j] != ' '; j++)
				b = b * 16 +
				    (uintptr_t)(buf[j] <= '9' ? buf[j] - '0' : buf[j] - 'a' + 10);
			if (a <= sp && sp < b) {
				*lo = a;
				*hi = b;
				syscall(SYS_close, fd);
				return;
			}
			line = i + 1;
		}
		memmove(buf, buf + line, have - line);
		have -= line;
		if (have == sizeof(buf))
			have = 0; /* a line longer than the buffer: its range was read already */
	}
	syscall(SYS_close, fd);
}

/* Wake the sampler thread for a round now. Async-signal-safe: atomics and one raw system
 * call, made by the first caller since the thread's last round began. */
static void sampler_wake(void)
{
	wakeword_wake(&sampler_wakeword);
}

/* At most once per SAMPLER_CHECK_NS across the threads, a handler looks at the thread count
 * (the link count of /proc/self/task, one fstat) and wakes the sampler thread when it moved:
 * a thread started by one that is sampled is found as soon as with 10 ms rounds, though the
 * sampler thread sleeps up to SAMPLER_BUSY_ROUND_NS while samples come. */
static void sig_check_threads(uint64_t now)
{
	uint64_t last = atomic_load_explicit(&S.check_ticks, memory_order_relaxed);
	uint64_t every = atomic_load_explicit(&S.check_every, memory_order_relaxed);
	if (!every || now - last < every ||
	    !atomic_compare_exchange_strong_explicit(&S.check_ticks, &last, now,
						     memory_order_relaxed, memory_order_relaxed))
		return;
	uint64_t links = atomic_load_explicit(&S.task_links, memory_order_relaxed);
	struct stat st;
	if (links &&
	    syscall(SYS_fstat, atomic_load_explicit(&S.task_fd, memory_order_relaxed), &st) == 0 &&
	    st.st_nlink != links)
		sampler_wake();
}

static void sampler_on_sigprof(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	struct sigring *r;
	if (si->si_code == SI_TIMER || si->si_code == SI_QUEUE)
		r = si->si_value.sival_ptr;
	else if (si->si_code == POLL_IN && fd_rings && si->si_fd >= 0 && si->si_fd < FD_RINGS)
		r = atomic_load_explicit(&fd_rings[si->si_fd], memory_order_acquire); /* perf */
	else
		return; /* not ours (kill, or a timer of the program's) */
	if (!r || atomic_load_explicit(&r->magic, memory_order_acquire) != SIGRING_MAGIC)
		return;
	int saved_errno = errno;
	uint64_t t_in = record_ticks();
	ucontext_t *uc = ucv;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	if (!r->stack_hi || sp < r->stack_lo || sp >= r->stack_hi) {
		uintptr_t lo, hi;
		sig_stack_bounds(sp, &lo, &hi);
		/* A thread's stack ends below its descriptor (glibc on x86-64): never walk past it
		 * into whatever anonymous memory the kernel merged with the stack's mapping. */
		uintptr_t tcb = (uintptr_t)pthread_self();
		if (tcb > sp && tcb < hi)
			hi = tcb;
		r->stack_lo = lo;
		r->stack_hi = hi;
	}
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (head - tail >= SIGRING_SLOTS) {
		atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
		errno = saved_errno;
		return;
	}
	struct sigslot *s = &r->slots[head % SIGRING_SLOTS];
	s->ticks = record_ticks();
	/* The live stack from the interrupted sp up is the window (the handler runs below it). */
	struct unwind_regs regs = { pc, sp, fp };
	struct unwind_window win = { sp, r->stack_hi, (const unsigned char *)sp };
	uint32_t uflags;
	uint64_t misses = atomic_load_explicit(&r->cache.misses, memory_order_relaxed);
	uint32_t n = sp < r->stack_hi ? unwind_walk(&regs, &win, &r->cache, s->pcs,
						    SAMPLER_MAX_FRAMES, &uflags)
				      : 0;
	if (n == 0) {
		s->pcs[n++] = pc;
		uflags = UNWIND_TRUNCATED;
	}
	s->flags = uflags & UNWIND_TRUNCATED ? RECORD_SAMPLE_TRUNCATED : 0;
	/* one writer: a load and a store, no locked instruction */
	uint64_t spent = record_ticks() - s->ticks;
	atomic_store_explicit(&r->walk_ticks,
			      atomic_load_explicit(&r->walk_ticks, memory_order_relaxed) + spent,
			      memory_order_relaxed);
	if (atomic_load_explicit(&r->cache.misses, memory_order_relaxed) == misses) {
		atomic_store_explicit(&r->hit_walks,
				      atomic_load_explicit(&r->hit_walks, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_store_explicit(
			&r->hit_walk_ticks,
			atomic_load_explicit(&r->hit_walk_ticks, memory_order_relaxed) + spent,
			memory_order_relaxed);
	}
	/* The thread's Python stack, now: it changes as soon as the thread runs on. The
	 * sampler thread merges it into the native one (pystack_merge). */
	s->npy = 0;
	s->pyflags = 0;
	if (atomic_load_explicit(&S.python, memory_order_relaxed))
		s->npy = pystack_walk(s->py, SAMPLER_MAX_PY, &s->pyflags);
	s->n = n;
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
	sig_check_threads(s->ticks);
	atomic_store_explicit(&r->handler_ticks,
			      atomic_load_explicit(&r->handler_ticks, memory_order_relaxed) +
				      (record_ticks() - t_in),
			      memory_order_relaxed);
	atomic_store_explicit(&r->handler_runs,
			      atomic_load_explicit(&r->handler_runs, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	errno = saved_errno;
}

/* ---------------------------------------------------------------------------------------- */
/* Mappings and build-ids. */

/* The GNU build-id of the ELF file at `path` in hex, "" when it has none. */
static void read_build_id(const char *path, char *hex, size_t hexsize)
{
	hex[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			goto out;
		if (ph.p_type != PT_NOTE || ph.p_filesz > 65536)
			continue;
		unsigned char notes[65536];
		if (pread(fd, notes, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			goto out;
		size_t off = 0;
		while (off + sizeof(Elf64_Nhdr) <= ph.p_filesz) {
			Elf64_Nhdr nh;
			memcpy(&nh, notes + off, sizeof(nh));
			size_t name_at = off + sizeof(nh);
			size_t desc_at = name_at + ((nh.n_namesz + 3u) & ~3u);
			size_t end = desc_at + ((nh.n_descsz + 3u) & ~3u);
			if (end > ph.p_filesz)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(notes + name_at, "GNU", 4) == 0 && nh.n_descsz * 2 < hexsize) {
				for (unsigned k = 0; k < nh.n_descsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", notes[desc_at + k]);
				goto out;
			}
			off = end;
		}
	}
out:
	close(fd);
}

static const char *build_id_of(const char *path)
{
	if (path[0] != '/')
		return NULL;
	for (size_t i = 0; i < S.nbids; i++)
		if (strcmp(S.bids[i].path, path) == 0)
			return S.bids[i].hex[0] ? S.bids[i].hex : NULL;
	if (!grow_array((void **)&S.bids, sizeof(*S.bids), &S.bids_cap, S.nbids + 1))
		return NULL;
	struct buildid *b = &S.bids[S.nbids];
	b->path = strdup(path);
	if (!b->path)
		return NULL;
	read_build_id(path, b->hex, sizeof(b->hex));
	S.nbids++;
	return b->hex[0] ? b->hex : NULL;
}

static void maps_clear(void)
{
	for (size_t i = 0; i < S.nmaps; i++)
		free(S.maps[i].path);
	S.nmaps = 0;
}

/* Read the executable mappings of /proc/self/maps (sorted by address, as the kernel lists
 * them). */
static void maps_refresh(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	maps_clear();
	S.maps_gen++;
	S.maps_changes++;
	S.maps_reads++;
	char line[PATH_MAX + 128];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off;
		char perms[8];
		int path_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &a, &b, perms, &off, &path_at) <
			    4 ||
		    perms[2] != 'x')
			continue;
		char *path = path_at ? line + path_at : line + strlen(line);
		path[strcspn(path, "\n")] = '\0';
		if (!grow_array((void **)&S.maps, sizeof(*S.maps), &S.maps_cap, S.nmaps + 1))
			break;
		struct mapping *m = &S.maps[S.nmaps];
		m->start = a;
		m->end = b;
		m->offset = off;
		m->path = strdup(path);
		m->id = RECORD_SAMPLE_NONE;
		if (!m->path)
			break;
		S.nmaps++;
	}
	fclose(f);
}

static struct mapping *maps_find(uint64_t addr)
{
	size_t lo = 0, hi = S.nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < S.maps[mid].start)
			hi = mid;
		else if (addr >= S.maps[mid].end)
			lo = mid + 1;
		else
			return &S.maps[mid];
	}
	return NULL;
}

static int dl_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1; /* the counts are the same in every entry: one is enough */
}

/* Whether /proc/self/maps is worth reading again for an address in none of the mappings:
 * when a library was loaded or unloaded since the last read (the loader's counts), or a
 * second has passed (new anonymous executable memory, a JIT's). Not on every miss: a
 * frame-pointer walk through code built without frame pointers yields garbage addresses all
 * the time, and reading the maps of a process with torch loaded (thousands of lines) each
 * round cost the sampler thread more than the sampling itself (bench_sampler_peers.sh). */
static int maps_stale(void)
{
	unsigned long long c[2] = { 0, 0 };
	dl_iterate_phdr(dl_counts, c);
	uint64_t now = clock_mono_ns();
	if (c[0] == S.dl_adds && c[1] == S.dl_subs && now - S.maps_read_ns < 1000000000u)
		return 0;
	S.dl_adds = c[0];
	S.dl_subs = c[1];
	S.maps_read_ns = now;
	return 1;
}

/* What loader_find_cb looks for (addr) and finds: the executable segment holding it. */
struct loader_find {
	uint64_t addr;		     /* the address looked for */
	uint64_t start, end, offset; /* its segment, page-aligned as the loader mapped it */
	const char *name;	     /* the object's name in the loader's list ("" the program) */
	int vdso;		     /* the object is the kernel's vDSO */
	int found;
};

static int loader_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct loader_find *f = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || f->addr < lo || f->addr >= hi)
			continue;
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		f->start = lo & ~(page - 1);
		f->end = (hi + page - 1) & ~(page - 1);
		f->offset = ph->p_offset & ~(page - 1);
		f->name = info->dlpi_name ? info->dlpi_name : "";
		f->vdso = info->dlpi_addr == getauxval(AT_SYSINFO_EHDR) && f->name[0] != '/';
		f->found = 1;
		return 1;
	}
	return 0;
}

/* The mapping of `addr` made from the loader's list (dl_iterate_phdr) instead of
 * /proc/self/maps: the executable PT_LOAD segment holding it, page-aligned as the loader
 * (or the kernel, for the program and the vDSO) mapped it, so start - offset is the kernel's;
 * the path is the object's real path (as /proc/self/maps shows it: symbolic links and ".."
 * resolved), the program's from /proc/self/exe, the vDSO's "[vdso]". Added to S.maps in
 * order. NULL when no loaded object holds it (JIT code, garbage) or it would overlap a
 * known mapping: /proc/self/maps is read then (frame_of). Reading /proc/self/maps of a
 * process that loads torch (thousands of lines, a path formatted by the kernel for each)
 * every time a sample met a newly loaded library cost 5-15 ms per run of
 * bench/sampler_workload.py, most of the sampler thread's CPU that run. */
static struct mapping *maps_add_from_loader(uint64_t addr)
{
	struct loader_find f = { .addr = addr };
	dl_iterate_phdr(loader_find_cb, &f);
	if (!f.found)
		return NULL;
	char path[PATH_MAX];
	if (f.vdso) {
		snprintf(path, sizeof(path), "[vdso]");
	} else if (f.name[0] == '\0') {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		if (n <= 0)
			return NULL;
		path[n] = '\0';
	} else if (f.name[0] != '/' || !realpath(f.name, path)) {
		return NULL;
	}
	size_t at = 0;
	while (at < S.nmaps && S.maps[at].start < f.start)
		at++;
	if ((at > 0 && S.maps[at - 1].end > f.start) || (at < S.nmaps && S.maps[at].start < f.end))
		return NULL;
	char *copy = strdup(path);
	if (!copy || !grow_array((void **)&S.maps, sizeof(*S.maps), &S.maps_cap, S.nmaps + 1)) {
		free(copy);
		return NULL;
	}
	memmove(&S.maps[at + 1], &S.maps[at], (S.nmaps - at) * sizeof(*S.maps));
	S.maps[at] = (struct mapping){ f.start, f.end, f.offset, copy, RECORD_SAMPLE_NONE };
	S.nmaps++;
	S.maps_changes++;
	S.maps_from_loader++;
	return &S.maps[at];
}

/* The sample store's frame of address `addr`. An address in none of the known mappings gets
 * its mapping from the loader's list (at most LOADER_TRIES times a round: garbage addresses
 * of a walk that went astray are in none), or else from reading /proc/self/maps again (at most
 * once a round, and only when the mappings may have changed: maps_stale). *keep is set to 0
 * when the frame has no mapping: a later round may find one, and give the address another
 * frame. */
static uint32_t frame_of(uint64_t addr, int *keep)
{
	struct mapping *m = maps_find(addr);
	if (!m && S.loader_tries < LOADER_TRIES) {
		S.loader_tries++;
		m = maps_add_from_loader(addr);
	}
	if (!m && !S.maps_refreshed) {
		S.maps_refreshed = 1;
		if (maps_stale()) {
			maps_refresh();
			m = maps_find(addr);
		}
	}
	if (m && m->id == RECORD_SAMPLE_NONE)
		m->id = record_sample_mapping(m->start, m->end, m->offset, m->path,
					      build_id_of(m->path));
	if (!m || m->id == RECORD_SAMPLE_NONE) {
		*keep = 0;
		return record_sample_frame_native(RECORD_SAMPLE_NONE, addr);
	}
	return record_sample_frame_native(m->id, addr);
}

/* The sample store's frame of Python code `code` at instruction `instr`, cached: the sampler
 * thread meets the same few (code, line) pairs over and over. */
static uint32_t python_frame_of(uint32_t code, int32_t instr)
{
	uint64_t key = (uint64_t)code << 32 | (uint32_t)instr;
	uint64_t *v = hmap_find(&S.py_frames, key);
	if (v)
		return (uint32_t)*v;
	const char *name = pystack_code_name(code), *file = pystack_code_file(code);
	uint32_t f = record_sample_frame_python(name ? name : "<unknown python code>",
						file ? file : "", pystack_line(code, instr));
	if (f != RECORD_SAMPLE_NONE)
		hmap_put(&S.py_frames, key, f);
	return f;
}

/* The key of a merged frame for the thread's stack cache (stackcache.h): a native pc as it
 * is (user addresses are below 2^63), a Python (code id, instruction) with the top bit set. */
static uint64_t frame_key(const struct pystack_merged *f)
{
	if (!f->is_python)
		return f->pc;
	return 1ull << 63 | (uint64_t)f->code << 32 | (uint32_t)f->instr;
}

static uint32_t merged_frame_of(void *ctx, size_t i, int *keep)
{
	const struct pystack_merged *f = (const struct pystack_merged *)ctx + i;
	return f->is_python ? python_frame_of(f->code, f->instr) : frame_of(f->pc, keep);
}

/* The map of stack entries holds native frames found under the mappings as they were: empty
 * it once they changed (read again, or one added from the loader's list). */
static void stack_map_sync(void)
{
	if (S.stack_map_changes != S.maps_changes) {
		stackcache_map_clear(&S.stack_map);
		S.stack_map_changes = S.maps_changes;
	}
}

/* The stack entry of the merged frames out[0..m) (innermost first), or RECORD_SAMPLE_NONE,
 * through the thread's stack cache and the sampler's map of stack entries: only the frames
 * below those it shares with the thread's last sample and that the map does not have are
 * looked up and interned. A native frame's id depends on the mappings, so the cache is
 * emptied when they are read again (and the stack redone when that happened during its own
 * lookups), and the map whenever they change (read again or a mapping added), before the
 * stack and again after it if they changed during its lookups. */
static uint32_t stack_of(struct sthread *t, const struct pystack_merged *out, size_t m)
{
	uint64_t keys[SAMPLER_MAX_FRAMES + SAMPLER_MAX_PY];
	for (size_t i = 0; i < m; i++)
		keys[i] = frame_key(&out[i]);
	if (!t->cache)
		t->cache = calloc(1, sizeof(*t->cache));
	struct stackcache none;
	struct stackcache *c = t->cache ? t->cache : &none;
	for (;;) {
		if (!t->cache || t->cache_maps_gen != S.maps_gen)
			c->n = 0;
		t->cache_maps_gen = S.maps_gen;
		stack_map_sync();
		size_t shared;
		uint32_t stack = stackcache_intern(c, &S.stack_map, keys, m, merged_frame_of,
						   (void *)out, &shared);
		stack_map_sync();
		if (!shared || t->cache_maps_gen == S.maps_gen)
			return stack;
	}
}

/* Queue one sample: pcs[0] where the thread was, pcs[1..] return addresses; py[0..npy) the
 * thread's Python frames at the same moment, merged in where the interpreter ran them. */
static void emit_sample(struct sthread *t, uint64_t ticks, const uint64_t *pcs, uint32_t n,
			uint32_t flags, const struct pystack_frame *py, uint32_t npy)
{
	struct pystack_merged out[SAMPLER_MAX_FRAMES + SAMPLER_MAX_PY];
	size_t m;
	if (npy) {
		uint64_t adj[SAMPLER_MAX_FRAMES];
		uint8_t kinds[SAMPLER_MAX_FRAMES];
		for (uint32_t i = 0; i < n; i++) {
			adj[i] = i == 0 ? pcs[i] : pcs[i] - 1;
			kinds[i] = (uint8_t)pystack_native_kind(adj[i]);
		}
		int cut = 0;
		m = pystack_merge(adj, kinds, n, py, npy, out, SAMPLER_MAX_FRAMES + SAMPLER_MAX_PY,
				  &cut);
		if (cut)
			flags |= RECORD_SAMPLE_TRUNCATED;
		S.py_samples++;
	} else {
		m = n < SAMPLER_MAX_FRAMES ? n : SAMPLER_MAX_FRAMES;
		for (uint32_t i = 0; i < m; i++)
			out[i] = (struct pystack_merged){ .pc = i == 0 ? pcs[i] : pcs[i] - 1 };
	}
	uint32_t stack = stack_of(t, out, m);
	if (t->track == RECORD_SAMPLE_NONE)
		t->track = record_sample_track(t->tid);
	if (t->track != RECORD_SAMPLE_NONE)
		record_sample(t->track, ticks, stack, 1, flags);
	S.samples++;
}

/* ---------------------------------------------------------------------------------------- */
/* perf_event. */

/* A task-clock event on thread `tid`; `signalled`: for MECH_PERF_SIGNAL, whose samples the
 * handler takes (the ring only carries small records that wake the fd once each). */
static long perf_open(pid_t tid, int signalled)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK; /* counts only while the thread runs: on-CPU */
	a.sample_period = S.period_ns;
	/* No PERF_SAMPLE_CALLCHAIN: the kernel's frame-pointer walk goes astray in code without
	 * frame pointers, and the unwinder does better from the registers and stack copy. */
	a.sample_type =
		PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user =
		1ull << PERF_REG_X86_BP | 1ull << PERF_REG_X86_SP | 1ull << PERF_REG_X86_IP;
	a.sample_stack_user = S.stack_bytes;
	if (signalled) {
		a.sample_type = PERF_SAMPLE_TID;
		a.sample_regs_user = 0;
		a.sample_stack_user = 0;
		a.wakeup_events = 1; /* every sample wakes the fd: one signal each */
		a.disabled = 1;	     /* enabled once the fd signals its thread */
	}
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	return syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static size_t perf_map_bytes(uint32_t pages)
{
	return (size_t)(pages + 1) * (size_t)sysconf(_SC_PAGESIZE);
}

/* Map event fd's ring: PERF_RING_PAGES data pages, or fewer (down to 8) where the
 * locked-memory limit refuses them (perf_event_mlock_kb per CPU, then RLIMIT_MEMLOCK, for an
 * unprivileged user). */
static void *perf_map(int fd, uint32_t *pages)
{
	for (*pages = S.mech == MECH_PERF_SIGNAL ? SIGNAL_RING_PAGES : PERF_RING_PAGES; *pages >= 8;
	     *pages /= 2) {
		void *m = mmap(NULL, perf_map_bytes(*pages), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			       0);
		if (m != MAP_FAILED)
			return m;
	}
	return NULL;
}

/* CLOCK_MONOTONIC ns -> record ticks, against a pair taken this round. */
static struct clock_pair round_pair;
static double round_ticks_per_ns;

static uint64_t mono_to_ticks(uint64_t mono)
{
	double d = (double)(int64_t)(mono - round_pair.mono_ns) * round_ticks_per_ns;
	return round_pair.ticks + (uint64_t)(int64_t)d;
}

/* One PERF_RECORD_SAMPLE's body: u32 pid, tid; u64 time; u64 abi; u64 regs[3] (bp, sp, ip:
 * the order of their bits) when abi != 0; u64 size; u8 stack[size]; u64 dyn_size when
 * size != 0. Unwound here, in the sampler thread, over the copy. */
static void perf_sample(struct sthread *t, const unsigned char *p, size_t len)
{
	uint64_t v[6];
	if (len < 32)
		return;
	memcpy(v, p, 32); /* pid|tid, time, abi, and (abi != 0) bp */
	uint64_t time = v[1], abi = v[2];
	size_t off = 24;
	struct unwind_regs regs = { 0, 0, 0 };
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		if (len < off + 24)
			return;
		memcpy(v, p + off, 24);
		regs.rbp = v[0];
		regs.rsp = v[1];
		regs.rip = v[2];
		off += 24;
	}
	uint64_t ssize = 0, dyn = 0;
	if (len >= off + 8)
		memcpy(&ssize, p + off, 8);
	off += 8;
	const unsigned char *stack = p + off;
	if (ssize && len >= off + ssize + 8)
		memcpy(&dyn, p + off + ssize, 8);
	if (dyn > ssize)
		dyn = 0;
	uint64_t pcs[SAMPLER_MAX_FRAMES];
	uint32_t n = 0, uflags = UNWIND_TRUNCATED;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		struct unwind_window win = { regs.rsp, regs.rsp + dyn, stack };
		uint64_t t0 = record_ticks();
		uint64_t misses = atomic_load_explicit(&S.perf_cache.misses, memory_order_relaxed);
		n = unwind_walk(&regs, &win, &S.perf_cache, pcs, SAMPLER_MAX_FRAMES, &uflags);
		uint64_t spent = record_ticks() - t0;
		S.perf_walk_ticks += spent;
		if (atomic_load_explicit(&S.perf_cache.misses, memory_order_relaxed) == misses) {
			S.perf_hit_walks++;
			S.perf_hit_walk_ticks += spent;
		}
	}
	/* No Python frames here: they cannot be read from a copy taken in the past, so a process
	 * running CPython samples through MECH_PERF_SIGNAL, whose handler reads them. */
	emit_sample(t, mono_to_ticks(time), pcs, n,
		    uflags & UNWIND_TRUNCATED ? RECORD_SAMPLE_TRUNCATED : 0, NULL, 0);
}

static void perf_drain(struct sthread *t)
{
	struct perf_event_mmap_page *pg = t->map;
	unsigned char *data = (unsigned char *)t->map + pg->data_offset;
	uint64_t size = pg->data_size;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	if (head - tail > size)
		tail = head - size;	/* cannot happen with a writable ring; be safe */
	static uint64_t rec[65536 / 8]; /* a record that wraps around the ring's end */
	while (tail < head) {
		struct perf_event_header h;
		size_t at = (size_t)(tail % size);
		if (size - at >= sizeof(h)) {
			memcpy(&h, data + at, sizeof(h));
		} else {
			memcpy(&h, data + at, size - at);
			memcpy((unsigned char *)&h + (size - at), data, sizeof(h) - (size - at));
		}
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		const unsigned char *p;
		if (size - at >= h.size) {
			p = data + at; /* contiguous: read it in place */
		} else {
			size_t first = size - at;
			memcpy(rec, data + at, first);
			memcpy((unsigned char *)rec + first, data, h.size - first);
			p = (const unsigned char *)rec;
		}
		tail += h.size;
		if (h.type == PERF_RECORD_LOST && h.size >= 24) {
			uint64_t lost;
			memcpy(&lost, p + 16, 8);
			S.lost += lost;
			continue;
		}
		if (h.type == PERF_RECORD_SAMPLE && !t->ring) /* signalled: the handler took it */
			perf_sample(t, p + sizeof(h), h.size - sizeof(h));
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------------------------------- */
/* The signal mechanism. */

static struct sigring *ring_get(void)
{
	struct sigring *r = rings_free;
	if (r) {
		rings_free = r->next_free;
	} else {
		r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			 0);
		if (r == MAP_FAILED)
			return NULL;
		r->next_all = atomic_load(&rings_all);
		atomic_store(&rings_all, r);
	}
	atomic_store(&r->head, 0);
	atomic_store(&r->tail, 0);
	r->stack_lo = r->stack_hi = 0;
	atomic_store_explicit(&r->magic, SIGRING_MAGIC, memory_order_release);
	return r;
}

/* Hand the samples of t's signal ring to the sample store; how many there were. */
static uint64_t sig_drain(struct sthread *t)
{
	struct sigring *r = t->ring;
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t n = head - tail;
	for (; tail < head; tail++) {
		struct sigslot *s = &r->slots[tail % SIGRING_SLOTS];
		uint32_t flags = s->flags;
		if (s->pyflags & PYSTACK_TRUNCATED)
			flags |= RECORD_SAMPLE_TRUNCATED;
		emit_sample(t, s->ticks, s->pcs, s->n, flags, s->py, s->npy);
		atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
	}
	return n;
}

/* A POSIX timer on thread `tid`'s CPU clock that signals that thread. */
static int cpu_timer_create(struct sthread *t)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_value.sival_ptr = t->ring;
	sev._sigev_un._tid = t->tid;
	/* the kernel's per-thread CPU clock id: CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED */
	clockid_t clk = (clockid_t)(((unsigned)~t->tid << 3) | 6u);
	int id;
	if (syscall(SYS_timer_create, clk, &sev, &id) != 0)
		return -1;
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(S.period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(S.period_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (syscall(SYS_timer_settime, id, 0, &its, NULL) != 0) {
		syscall(SYS_timer_delete, id);
		return -1;
	}
	t->timerid = id;
	return 0;
}

static void wall_tick(void)
{
	pid_t pid = getpid();
	for (size_t i = 0; i < S.nthreads; i++) {
		struct sthread *t = &S.threads[i];
		if (!t->ring)
			continue;
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		si.si_signo = SIGPROF;
		si.si_code = SI_QUEUE;
		si.si_pid = pid;
		si.si_uid = getuid();
		si.si_value.sival_ptr = t->ring;
		syscall(SYS_rt_tgsigqueueinfo, pid, t->tid, SIGPROF, &si);
	}
}

/* MECH_PERF_SIGNAL: make perf event `fd` signal SIGPROF to thread t at each sample, with
 * t's ring found by the fd, and enable it. 0, or -1 (the thread then goes unsampled). */
static int perf_signal_thread(struct sthread *t, int fd)
{
	if (fd >= FD_RINGS || !(t->ring = ring_get()))
		return -1;
	atomic_store_explicit(&fd_rings[fd], t->ring, memory_order_release);
	struct f_owner_ex owner = { F_OWNER_TID, t->tid };
	if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		atomic_store_explicit(&fd_rings[fd], NULL, memory_order_release);
		t->ring->next_free = rings_free;
		rings_free = t->ring;
		t->ring = NULL;
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Threads. */

static void thread_attach(struct sthread *t)
{
	t->fd = -1;
	t->map = NULL;
	t->timerid = -1;
	t->ring = NULL;
	t->track = RECORD_SAMPLE_NONE;
	t->cache = NULL;
	t->cache_maps_gen = S.maps_gen;
	if (S.mech == MECH_PERF || S.mech == MECH_PERF_SIGNAL) {
		int signalled = S.mech == MECH_PERF_SIGNAL;
		long fd = perf_open(t->tid, signalled);
		if (fd < 0)
			return;
		void *m = perf_map((int)fd, &t->map_pages);
		if (!m || (signalled && perf_signal_thread(t, (int)fd) != 0)) {
			if (m)
				munmap(m, perf_map_bytes(t->map_pages));
			close((int)fd);
			return;
		}
		t->fd = (int)fd;
		t->map = m;
		return;
	}
	t->ring = ring_get();
	if (t->ring && S.mode == OPSCOPE_SAMPLE_CPU)
		cpu_timer_create(t);
}

static void thread_detach(struct sthread *t)
{
	if (t->fd >= 0) {
		if (t->ring) { /* signalled: no signal may find the ring once it is reused */
			ioctl(t->fd, PERF_EVENT_IOC_DISABLE, 0);
			atomic_store_explicit(&fd_rings[t->fd], NULL, memory_order_release);
		}
		perf_drain(t);
		munmap(t->map, perf_map_bytes(t->map_pages));
		close(t->fd);
	}
	if (t->timerid >= 0)
		syscall(SYS_timer_delete, t->timerid);
	if (t->ring) {
		sig_drain(t);
		t->ring->next_free = rings_free;
		rings_free = t->ring;
	}
	t->fd = -1;
	t->timerid = -1;
	t->ring = NULL;
	free(t->cache);
	t->cache = NULL;
}

/* A directory entry of getdents64 (the kernel's struct linux_dirent64). */
struct task_dirent {
	uint64_t ino;	 /* inode number */
	int64_t off;	 /* offset of the next entry */
	uint16_t reclen; /* bytes of this entry */
	uint8_t type;	 /* DT_* */
	char name[];	 /* NUL-terminated */
};

/* Find the threads of the process: attach new ones, detach those that ended. The directory
 * stays open between rounds (S.task_fd) and is read again from its start with getdents64:
 * opendir/readdir/closedir each round (a path walk, a 32 KiB buffer) was a third of the
 * sampler thread's CPU between samples. It is listed only when the thread count changed
 * (procfs gives /proc/PID/task 2 + the count as its link count: one fstat, where the listing
 * took 20 us a round on this VM) or SCAN_MAX_NS passed (`force`: always). */
static void threads_scan(int force, uint64_t now_ns)
{
	if (S.task_fd < 0)
		S.task_fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (S.task_fd < 0)
		return;
	struct stat st;
	if (!force && now_ns - S.scan_ns < SCAN_MAX_NS && fstat(S.task_fd, &st) == 0 &&
	    st.st_nlink == TASK_LINKS(S.nthreads))
		return;
	S.scan_ns = now_ns;
	if (lseek(S.task_fd, 0, SEEK_SET) != 0)
		return;
	for (size_t i = 0; i < S.nthreads; i++)
		S.threads[i].seen = 0;
	_Alignas(8) char buf[4096];
	for (;;) {
		long got = syscall(SYS_getdents64, S.task_fd, buf, sizeof(buf));
		if (got <= 0)
			break;
		for (long at = 0; at < got;) {
			const struct task_dirent *e = (const void *)(buf + at);
			at += e->reclen;
			pid_t tid = (pid_t)atoi(e->name);
			if (tid <= 0 || tid == S.self_tid)
				continue;
			size_t i = 0;
			while (i < S.nthreads && S.threads[i].tid != tid)
				i++;
			if (i < S.nthreads) {
				S.threads[i].seen = 1;
				continue;
			}
			if (!grow_array((void **)&S.threads, sizeof(*S.threads), &S.threads_cap,
					S.nthreads + 1))
				break;
			struct sthread *t = &S.threads[S.nthreads++];
			t->tid = tid;
			t->seen = 1;
			thread_attach(t);
		}
	}
	for (size_t i = 0; i < S.nthreads;) {
		if (S.threads[i].seen) {
			i++;
			continue;
		}
		thread_detach(&S.threads[i]);
		S.threads[i] = S.threads[--S.nthreads];
	}
	atomic_store_explicit(&S.task_links, TASK_LINKS(S.nthreads), memory_order_relaxed);
}

/* Drain every thread's rings; how many samples the signal rings held. */
static uint64_t drain_all(void)
{
	/* before the rings are drained: the perf path unwinds modules loaded since */
	unwind_modules_refresh();
	clock_pair(&round_pair);
	round_ticks_per_ns = record_ticks_per_second() / 1e9;
	S.maps_refreshed = 0;
	S.loader_tries = 0;
	uint64_t n = 0;
	for (size_t i = 0; i < S.nthreads; i++) {
		if (S.threads[i].fd >= 0)
			perf_drain(&S.threads[i]);
		if (S.threads[i].ring)
			n += sig_drain(&S.threads[i]);
	}
	return n;
}

/* The sampler thread: a round (threads looked for, rings drained) every SAMPLER_ROUND_NS,
 * or a busy round's time after a round that drained signal samples (or sooner: a handler saw
 * the thread count move, or the session stops), and in wall mode a tick signalling every
 * thread every period. */
static void *sampler_main(void *arg)
{
	(void)arg;
	sem_post(&S.started); /* past the thread's start-up: sampler_start */
	S.self_tid = (pid_t)syscall(SYS_gettid);
	int wall = S.mode == OPSCOPE_SAMPLE_WALL;
	uint64_t now = clock_mono_ns(), tick = now + S.period_ns, round = now + SAMPLER_ROUND_NS;
	uint64_t busy_round = S.period_ns * (SIGRING_SLOTS / 2);
	if (busy_round > SAMPLER_BUSY_ROUND_NS)
		busy_round = SAMPLER_BUSY_ROUND_NS;
	if (busy_round < SAMPLER_ROUND_NS)
		busy_round = SAMPLER_ROUND_NS;
	pthread_mutex_lock(&S.lock);
	threads_scan(1, now);
	pthread_mutex_unlock(&S.lock);
	while (!atomic_load(&S.stop)) {
		uint32_t seq = wakeword_prepare(&sampler_wakeword);
		if (atomic_load(&S.stop))
			break;
		int woken =
			wakeword_sleep(&sampler_wakeword, seq, wall && tick < round ? tick : round);
		if (atomic_load(&S.stop))
			break; /* sampler_stop's wake: the last drain follows */
		now = clock_mono_ns();
		pthread_mutex_lock(&S.lock);
		if (wall && now >= tick) {
			wall_tick();
			tick += S.period_ns;
		}
		if (woken || now >= round) {
			S.wakeups++;
			S.woken += (uint64_t)woken;
			threads_scan(0, now);
			int busy = drain_all() > 0 && !wall;
			round = now + (busy ? busy_round : SAMPLER_ROUND_NS);
		}
		/* fell behind (stopped, swapped): no catching up */
		if (wall && now > tick + 1000000000u)
			tick = now + S.period_ns;
		pthread_mutex_unlock(&S.lock);
	}
	pthread_mutex_lock(&S.lock);
	drain_all();
	for (size_t i = 0; i < S.nthreads; i++)
		thread_detach(&S.threads[i]);
	S.nthreads = 0;
	if (S.task_fd >= 0)
		close(S.task_fd);
	S.task_fd = -1;
	S.thread_cpu_ns += clock_thread_cpu_ns();
	pthread_mutex_unlock(&S.lock);
	return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Start and stop. */

static int sampler_perf_usable(void)
{
	const char *m = getenv("OPSCOPE_SAMPLE_MECH");
	if (m && strcmp(m, "timer") == 0)
		return 0;
	long fd = perf_open(0, 0);
	if (fd < 0)
		return 0;
	uint32_t pages;
	void *map = perf_map((int)fd, &pages);
	int ok = map != NULL;
	if (ok)
		munmap(map, perf_map_bytes(pages));
	close((int)fd);
	return ok;
}

/* The fd -> ring table of MECH_PERF_SIGNAL, made once (512 KiB, never freed: a late
 * signal may read it). 1 when it exists. */
static int fd_rings_ready(void)
{
	if (!fd_rings) {
		void *m = mmap(NULL, FD_RINGS * sizeof(*fd_rings), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return 0;
		fd_rings = m;
	}
	return 1;
}

static int sampler_install_handler(void)
{
	if (S.handler_installed)
		return 0;
	struct sigaction old;
	if (sigaction(SIGPROF, NULL, &old) != 0)
		return -1;
	if ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))
		return -1; /* the program (or another profiler) handles SIGPROF itself */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sampler_on_sigprof;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (sigaction(SIGPROF, &sa, &S.old_sa) != 0)
		return -1;
	S.handler_installed = 1;
	return 0;
}

static void sampler_say(const char *what)
{
	/* One line per run, from the command's first process (every process's file records
	 * it in its metadata). */
	const char *root = getenv("OPSCOPE_ROOT_PID");
	if (root && atoi(root) != (int)getpid())
		return;
	if (getenv("OPSCOPE_QUIET"))
		return;
	fprintf(stderr, "opscope: sampling: %s\n", what);
}

int sampler_start(uint32_t hz, int mode)
{
	if (hz == 0) {
		S.last_hz = 0; /* a session without sampling: a failed exec does not resume one */
		return 0;
	}
	pthread_mutex_lock(&S.lock);
	if (S.running) {
		pthread_mutex_unlock(&S.lock);
		return 0;
	}
	if (hz > 100000)
		hz = 100000;
	S.hz = S.last_hz = hz;
	S.mode = S.last_mode =
		mode == OPSCOPE_SAMPLE_WALL ? OPSCOPE_SAMPLE_WALL : OPSCOPE_SAMPLE_CPU;
	S.period_ns = 1000000000ull / hz;
	S.stack_bytes = SAMPLER_STACK_BYTES;
	const char *sb = getenv("OPSCOPE_SAMPLE_STACK_BYTES"); /* docs/sampling.md */
	if (sb && atoi(sb) >= 1024 && atoi(sb) <= 60000)
		S.stack_bytes = (uint32_t)atoi(sb) & ~7u; /* the kernel wants a multiple of 8 */
	/* The module table exists before the first handler runs (it cannot build one). */
	unwind_modules_refresh();
	/* Python frames: CPython 3.11 in the process (pystack.c); another version is said. */
	const char *pywarn = NULL;
	int python = pystack_init(&pywarn) == PYSTACK_ENABLED;
	if (pywarn) {
		sampler_say(pywarn);
		record_metadata("python_frames", pywarn);
	}
	const char *with_py = python ? ", with Python frames (CPython 3.11)" : "";
	const char *mech = getenv("OPSCOPE_SAMPLE_MECH"); /* timer | perf (native only) */
	char what[240];
	const char *refused = "";
	if (S.mode == OPSCOPE_SAMPLE_CPU && sampler_perf_usable()) {
		S.mech = MECH_PERF;
		/* Python frames are read on the thread at the sample: perf signals it */
		if (python && !(mech && strcmp(mech, "perf") == 0) && fd_rings_ready() &&
		    sampler_install_handler() == 0)
			S.mech = MECH_PERF_SIGNAL;
		else
			python = 0, with_py = "";
		if (S.mech == MECH_PERF_SIGNAL)
			snprintf(what, sizeof(what),
				 "%u Hz on-CPU through perf_event (task-clock) signalling each "
				 "thread, unwound with .eh_frame in the handler%s",
				 hz, with_py);
		else
			snprintf(what, sizeof(what),
				 "%u Hz on-CPU through perf_event (task-clock), unwound with "
				 ".eh_frame from %u-byte stack copies",
				 hz, S.stack_bytes);
	} else {
		if (S.mode == OPSCOPE_SAMPLE_CPU && !getenv("OPSCOPE_SAMPLE_MECH"))
			refused = ", perf_event refused";
		if (sampler_install_handler() != 0) {
			pthread_mutex_unlock(&S.lock);
			sampler_say("not sampling: SIGPROF is handled by the program");
			record_metadata("sampler", "none: SIGPROF is handled by the program");
			return -1;
		}
		S.mech = MECH_SIGNAL;
		if (S.mode == OPSCOPE_SAMPLE_WALL)
			snprintf(what, sizeof(what),
				 "%u Hz wall-clock through SIGPROF from a sampler thread, unwound "
				 "with .eh_frame in the handler%s",
				 hz, with_py);
		else
			snprintf(what, sizeof(what),
				 "%u Hz on-CPU through SIGPROF CPU-time timers%s, unwound with "
				 ".eh_frame in the handler%s",
				 hz, refused, with_py);
	}
	atomic_store(&S.python, python);
	atomic_store(&S.stop, 0);
	/* Handlers look at the thread count in CPU mode (sig_check_threads); in wall mode the
	 * sampler thread ticks every period anyway. */
	atomic_store(&S.check_ticks, 0);
	atomic_store(&S.task_links, 0);
	atomic_store(&S.check_every, mode == OPSCOPE_SAMPLE_WALL || S.mech == MECH_PERF
					     ? 0
					     : (uint64_t)(record_ticks_per_second() *
							  (double)SAMPLER_CHECK_NS / 1e9));
	/* The sampler thread never takes SIGPROF (nor any signal meant for the program). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sem_init(&S.started, 0, 0);
	int rc = pthread_create(&S.thread, NULL, sampler_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		sem_destroy(&S.started);
		pthread_mutex_unlock(&S.lock);
		sampler_say("not sampling: cannot start the sampler thread");
		return -1;
	}
	/* Return only once the thread runs sampler_main, past a sanitizer's thread start-up,
	 * where a fork must not fall (session.c, session_fork_prepare). It posts before it takes
	 * S.lock, which this thread holds. */
	while (sem_wait(&S.started) != 0 && errno == EINTR)
		;
	sem_destroy(&S.started);
	S.running = 1;
	pthread_mutex_unlock(&S.lock);
	sampler_say(what);
	record_metadata("sampler", what);
	return 0;
}

/* The unwinder's figures since the process started, into the metadata (`unwind`): how many
 * walks, frames, truncated walks, frames whose CFI failed, frame-pointer steps, and the hit
 * rate of the unwind caches (every thread ring's and the sampler thread's), the mean time
 * of a walk (the handler's, or the sampler thread's on a perf_event copy). */
static void unwind_report(void)
{
	struct unwind_stats st;
	unwind_stats_get(&st);
	uint64_t ticks = S.perf_walk_ticks, hwalks = S.perf_hit_walks,
		 hticks = S.perf_hit_walk_ticks;
	uint64_t hits = atomic_load_explicit(&S.perf_cache.hits, memory_order_relaxed);
	uint64_t misses = atomic_load_explicit(&S.perf_cache.misses, memory_order_relaxed);
	uint64_t hruns = 0, hticks_all = 0, ring_full = 0;
	for (struct sigring *r = atomic_load(&rings_all); r; r = r->next_all) {
		hruns += atomic_load_explicit(&r->handler_runs, memory_order_relaxed);
		ring_full += atomic_load_explicit(&r->dropped, memory_order_relaxed);
		hticks_all += atomic_load_explicit(&r->handler_ticks, memory_order_relaxed);
		hits += atomic_load_explicit(&r->cache.hits, memory_order_relaxed);
		misses += atomic_load_explicit(&r->cache.misses, memory_order_relaxed);
		ticks += atomic_load_explicit(&r->walk_ticks, memory_order_relaxed);
		hwalks += atomic_load_explicit(&r->hit_walks, memory_order_relaxed);
		hticks += atomic_load_explicit(&r->hit_walk_ticks, memory_order_relaxed);
	}
	char line[400];
	snprintf(line, sizeof(line),
		 "%llu walks, %llu frames, %llu truncated, %llu frames with unusable CFI, %llu "
		 "frame-pointer steps, cache hits %.1f%% of %llu lookups, %.0f ns per walk (%llu "
		 "walks that only hit the cache: %.0f ns), %llu samples lost by perf_event",
		 (unsigned long long)st.walks, (unsigned long long)st.frames,
		 (unsigned long long)st.truncated, (unsigned long long)st.bad_cfi,
		 (unsigned long long)st.fp_steps,
		 hits + misses ? 100.0 * (double)hits / (double)(hits + misses) : 0.0,
		 (unsigned long long)(hits + misses),
		 st.walks ? (double)record_ticks_to_ns(ticks) / (double)st.walks : 0.0,
		 (unsigned long long)hwalks,
		 hwalks ? (double)record_ticks_to_ns(hticks) / (double)hwalks : 0.0,
		 (unsigned long long)S.lost);
	record_metadata("unwind", line);
	if (getenv("OPSCOPE_UNWIND_STATS"))
		fprintf(stderr, "opscope: unwind: %s\n", line);
	if (atomic_load(&S.python)) {
		snprintf(line, sizeof(line),
			 "%llu samples with Python frames, %llu frames of code objects the table "
			 "had no room for",
			 (unsigned long long)S.py_samples,
			 (unsigned long long)pystack_codes_dropped());
		record_metadata("python_frames", line);
	}
	snprintf(
		line, sizeof(line),
		"%llu samples; handler %.0f ns a sample (%llu runs); sampler thread %.0f ns of CPU "
		"a sample; %llu reads of /proc/self/maps, %llu mappings from the loader; %llu "
		"samples dropped for a full signal ring; %llu rounds, %llu of them woken early",
		(unsigned long long)S.samples,
		hruns ? (double)record_ticks_to_ns(hticks_all) / (double)hruns : 0.0,
		(unsigned long long)hruns,
		S.samples ? (double)S.thread_cpu_ns / (double)S.samples : 0.0,
		(unsigned long long)S.maps_reads, (unsigned long long)S.maps_from_loader,
		(unsigned long long)ring_full, (unsigned long long)S.wakeups,
		(unsigned long long)S.woken);
	record_metadata("sampler_cost", line);
	if (getenv("OPSCOPE_UNWIND_STATS"))
		fprintf(stderr, "opscope: sampler_cost: %s\n", line);
}

void sampler_stop(void)
{
	pthread_mutex_lock(&S.lock);
	if (!S.running) {
		pthread_mutex_unlock(&S.lock);
		return;
	}
	S.running = 0;
	atomic_store(&S.stop, 1);
	pthread_mutex_unlock(&S.lock);
	wakeword_wake_now(&sampler_wakeword);
	pthread_join(S.thread, NULL);
	S.hz = 0;
	unwind_report();
}

void sampler_resume(void)
{
	if (S.last_hz)
		sampler_start(S.last_hz, S.last_mode);
}

void sampler_fork_prepare(void)
{
	pthread_mutex_lock(&S.lock);
}

void sampler_fork_parent(void)
{
	pthread_mutex_unlock(&S.lock);
}

static int fork_restart;

void sampler_fork_child(void)
{
	pystack_after_fork();
	pthread_mutex_init(&S.lock, NULL);
	fork_restart = S.running;
	S.running = 0;
	/* The parent's events and rings: the fds are copies (close them), the ring mappings
	 * were not copied (VM_DONTCOPY), the timers were not inherited. */
	for (size_t i = 0; i < S.nthreads; i++) {
		if (S.threads[i].fd >= 0) {
			if (fd_rings && S.threads[i].fd < FD_RINGS) /* the child's fds are new */
				atomic_store(&fd_rings[S.threads[i].fd], NULL);
			close(S.threads[i].fd);
		}
		if (S.threads[i].ring) {
			S.threads[i].ring->next_free = rings_free;
			rings_free = S.threads[i].ring;
		}
		free(S.threads[i].cache);
	}
	S.nthreads = 0;
	if (S.task_fd >= 0) /* the parent's threads: the child opens its own */
		close(S.task_fd);
	S.task_fd = -1;
	S.lost = 0;
	S.py_samples = 0;
	S.samples = 0;
	S.thread_cpu_ns = 0;
	S.maps_reads = S.maps_from_loader = 0;
	/* the child's `unwind` line counts the child's walks only */
	unwind_stats_reset();
	atomic_store(&S.perf_cache.hits, 0);
	atomic_store(&S.perf_cache.misses, 0);
	S.perf_walk_ticks = S.perf_hit_walks = S.perf_hit_walk_ticks = 0;
	for (struct sigring *r = atomic_load(&rings_all); r; r = r->next_all) {
		atomic_store(&r->cache.hits, 0);
		atomic_store(&r->cache.misses, 0);
		atomic_store(&r->walk_ticks, 0);
		atomic_store(&r->hit_walks, 0);
		atomic_store(&r->hit_walk_ticks, 0);
		atomic_store(&r->handler_ticks, 0);
		atomic_store(&r->handler_runs, 0);
		atomic_store(&r->dropped, 0);
	}
}

void sampler_after_fork_child_session(void)
{
	if (fork_restart) {
		fork_restart = 0;
		sampler_start(S.last_hz, S.last_mode);
	}
}
