/*
 * sampler.c: CPU stack sampling of every thread of this process (issue 17; docs/sampling.md).
 *
 * One sampler thread per process, started with the session (opscope_options.sample_hz, or
 * OPSCOPE_SAMPLE_HZ under `opscope record`), finds the process's threads by scanning
 * /proc/self/task every round (10 ms; so a new thread is sampled from at most one round after
 * it starts) and samples each with one of two mechanisms:
 *
 *  - perf_event (preferred): a software TASK_CLOCK event per thread (pid=tid, cpu=-1) with a
 *    fixed period of 1/HZ of CPU time, user-space callchains (the kernel's frame-pointer
 *    walk), times on CLOCK_MONOTONIC, into a small mmap'd ring that the sampler thread
 *    drains. The program gets no signal at all.
 *  - a SIGPROF timer (fallback, where perf_event_open is refused, or OPSCOPE_SAMPLE_MECH=timer):
 *    per thread a POSIX timer on that thread's CPU clock (SIGEV_THREAD_ID, so the signal goes
 *    to that thread). The handler walks frame pointers, every load checked against the
 *    thread's stack bounds, into a per-thread single-producer ring that the sampler thread
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
 * one (inside the call). DWARF unwinding is not done: a stack is as good as its frame
 * pointers; a walk that ends on a frame pointer outside the stack, or at the depth limit, is
 * marked truncated.
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

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "opscope/opscope.h"

#include "record/clock.h"
#include "record/record.h"
#include "record/samples.h"
#include "util/grow.h"

#define SAMPLER_ROUND_NS   10000000ull /* how often threads are looked for and rings drained */
#define SAMPLER_MAX_FRAMES 128	       /* frames kept per sample, innermost first */
#define SIGRING_SLOTS	   16	       /* signal samples a thread can hold between two drains */
#define SIGRING_MAGIC	   0x6f70736373616d70ull
#define PERF_RING_PAGES	   16 /* data pages of a perf ring: 64 KiB, ~100 ms at 1 kHz */

/* ---- The signal path's per-thread ring (written only by the handler on its thread). ---- */

struct sigslot {
	uint64_t ticks;
	uint32_t n;
	uint32_t flags;
	uint64_t
		pcs[SAMPLER_MAX_FRAMES]; /* pcs[0] the interrupted address, then return addresses */
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
};

/* ---- The sampled threads. ---- */

struct sthread {
	pid_t tid;
	int seen; /* found by the current scan */
	uint32_t track;
	int fd;	     /* perf event, or -1 */
	void *map;   /* its ring */
	int timerid; /* kernel timer id (timer mechanism, CPU mode), or -1 */
	struct sigring *ring;
};

enum { MECH_NONE, MECH_PERF, MECH_SIGNAL };

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
	uint64_t maps_read_ns; /* CLOCK_MONOTONIC of the last read of /proc/self/maps */
	unsigned long long dl_adds, dl_subs; /* the loader's counts at that read */
	struct buildid *bids;
	size_t nbids;
	uint64_t bids_cap;
	uint64_t period_ns;
	uint32_t max_stack; /* the kernel's perf callchain limit */
	uint64_t lost;
	struct sigaction old_sa;
	int handler_installed;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

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

static void sampler_on_sigprof(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	if (si->si_code != SI_TIMER && si->si_code != SI_QUEUE)
		return; /* not ours (kill, or a timer of the program's) */
	struct sigring *r = si->si_value.sival_ptr;
	if (!r || atomic_load_explicit(&r->magic, memory_order_acquire) != SIGRING_MAGIC)
		return;
	int saved_errno = errno;
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
	s->flags = 0;
	uint32_t n = 0;
	s->pcs[n++] = pc;
	uintptr_t lo = sp, hi = r->stack_hi;
	while (1) {
		if (fp == 0)
			break; /* the outermost frame: the thread's start zeroes %rbp */
		if (fp < lo || fp + 16 > hi || (fp & 7)) {
			s->flags |= RECORD_SAMPLE_TRUNCATED; /* a frame without frame pointer */
			break;
		}
		if (n == SAMPLER_MAX_FRAMES) {
			s->flags |= RECORD_SAMPLE_TRUNCATED;
			break;
		}
		uintptr_t next = ((const uintptr_t *)fp)[0];
		uintptr_t ret = ((const uintptr_t *)fp)[1];
		if (ret == 0)
			break;
		s->pcs[n++] = ret;
		if (next != 0 && next <= fp) {
			s->flags |= RECORD_SAMPLE_TRUNCATED;
			break;
		}
		lo = fp + 16;
		fp = next;
	}
	s->n = n;
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
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
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (c[0] == S.dl_adds && c[1] == S.dl_subs && now - S.maps_read_ns < 1000000000u)
		return 0;
	S.dl_adds = c[0];
	S.dl_subs = c[1];
	S.maps_read_ns = now;
	return 1;
}

/* The sample store's frame of address `addr`; reads the mappings again (at most once a round,
 * and only when they may have changed: maps_stale) when it is in none of them. */
static uint32_t frame_of(uint64_t addr)
{
	struct mapping *m = maps_find(addr);
	if (!m && !S.maps_refreshed) {
		S.maps_refreshed = 1;
		if (maps_stale()) {
			maps_refresh();
			m = maps_find(addr);
		}
	}
	if (!m)
		return record_sample_frame_native(RECORD_SAMPLE_NONE, addr);
	if (m->id == RECORD_SAMPLE_NONE)
		m->id = record_sample_mapping(m->start, m->end, m->offset, m->path,
					      build_id_of(m->path));
	return record_sample_frame_native(m->id, addr);
}

/* Queue one sample: pcs[0] where the thread was, pcs[1..] return addresses. */
static void emit_sample(struct sthread *t, uint64_t ticks, const uint64_t *pcs, uint32_t n,
			uint32_t flags)
{
	uint32_t frames[SAMPLER_MAX_FRAMES];
	uint32_t k = 0;
	for (uint32_t i = 0; i < n && k < SAMPLER_MAX_FRAMES; i++) {
		uint32_t f = frame_of(i == 0 ? pcs[i] : pcs[i] - 1);
		if (f != RECORD_SAMPLE_NONE)
			frames[k++] = f;
	}
	uint32_t stack = k ? record_sample_stack(frames, k) : RECORD_SAMPLE_NONE;
	if (t->track == RECORD_SAMPLE_NONE)
		t->track = record_sample_track(t->tid);
	if (t->track != RECORD_SAMPLE_NONE)
		record_sample(t->track, ticks, stack, 1, flags);
}

/* ---------------------------------------------------------------------------------------- */
/* perf_event. */

static long perf_open(pid_t tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK; /* counts only while the thread runs: on-CPU */
	a.sample_period = S.period_ns;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.exclude_callchain_kernel = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.wakeup_events = 0;
	return syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static size_t perf_map_bytes(void)
{
	return (size_t)(PERF_RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
}

/* CLOCK_MONOTONIC ns -> record ticks, against a pair taken this round. */
static struct clock_pair round_pair;
static double round_ticks_per_ns;

static uint64_t mono_to_ticks(uint64_t mono)
{
	double d = (double)(int64_t)(mono - round_pair.mono_ns) * round_ticks_per_ns;
	return round_pair.ticks + (uint64_t)(int64_t)d;
}

static void perf_drain(struct sthread *t)
{
	struct perf_event_mmap_page *pg = t->map;
	unsigned char *data = (unsigned char *)t->map + pg->data_offset;
	uint64_t size = pg->data_size;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	if (head - tail > size)
		tail = head - size; /* cannot happen with a writable ring; be safe */
	static uint64_t rec[(sizeof(uint64_t) * (SAMPLER_MAX_FRAMES + 512)) / 8];
	while (tail < head) {
		struct perf_event_header h;
		memcpy(&h, data + (tail % size), sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		size_t len = h.size < sizeof(rec) ? h.size : sizeof(rec);
		size_t at = (size_t)(tail % size), first = size - at < len ? size - at : len;
		memcpy(rec, data + at, first);
		memcpy((unsigned char *)rec + first, data, len - first);
		tail += h.size;
		if (h.type == PERF_RECORD_LOST && len >= 24) {
			S.lost += rec[2];
			continue;
		}
		if (h.type != PERF_RECORD_SAMPLE || len < 32)
			continue;
		/* u32 pid, tid; u64 time; u64 nr; u64 ips[nr] */
		uint64_t time = rec[2], nr = rec[3];
		if (32 + nr * 8 > len)
			nr = (len - 32) / 8;
		uint64_t pcs[SAMPLER_MAX_FRAMES];
		uint32_t n = 0, user = 0;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t ip = rec[4 + i];
			if (ip >= (uint64_t)PERF_CONTEXT_MAX)
				continue; /* a context marker */
			user++;
			if (n < SAMPLER_MAX_FRAMES)
				pcs[n++] = ip;
		}
		uint32_t flags = user >= S.max_stack || user > n ? RECORD_SAMPLE_TRUNCATED : 0;
		emit_sample(t, mono_to_ticks(time), pcs, n, flags);
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

static void sig_drain(struct sthread *t)
{
	struct sigring *r = t->ring;
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	for (; tail < head; tail++) {
		struct sigslot *s = &r->slots[tail % SIGRING_SLOTS];
		emit_sample(t, s->ticks, s->pcs, s->n, s->flags);
		atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
	}
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

/* ---------------------------------------------------------------------------------------- */
/* Threads. */

static void thread_attach(struct sthread *t)
{
	t->fd = -1;
	t->map = NULL;
	t->timerid = -1;
	t->ring = NULL;
	t->track = RECORD_SAMPLE_NONE;
	if (S.mech == MECH_PERF) {
		long fd = perf_open(t->tid);
		if (fd < 0)
			return;
		void *m = mmap(NULL, perf_map_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd,
			       0);
		if (m == MAP_FAILED) {
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
		perf_drain(t);
		munmap(t->map, perf_map_bytes());
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
}

/* Find the threads of the process: attach new ones, detach those that ended. */
static void threads_scan(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	for (size_t i = 0; i < S.nthreads; i++)
		S.threads[i].seen = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
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
	closedir(d);
	for (size_t i = 0; i < S.nthreads;) {
		if (S.threads[i].seen) {
			i++;
			continue;
		}
		thread_detach(&S.threads[i]);
		S.threads[i] = S.threads[--S.nthreads];
	}
}

static void drain_all(void)
{
	clock_pair(&round_pair);
	round_ticks_per_ns = record_ticks_per_second() / 1e9;
	S.maps_refreshed = 0;
	for (size_t i = 0; i < S.nthreads; i++) {
		if (S.threads[i].fd >= 0)
			perf_drain(&S.threads[i]);
		if (S.threads[i].ring)
			sig_drain(&S.threads[i]);
	}
}

static void ts_add(struct timespec *ts, uint64_t ns)
{
	ts->tv_nsec += (long)(ns % 1000000000u);
	ts->tv_sec += (time_t)(ns / 1000000000u) + ts->tv_nsec / 1000000000;
	ts->tv_nsec %= 1000000000;
}

static void *sampler_main(void *arg)
{
	(void)arg;
	S.self_tid = (pid_t)syscall(SYS_gettid);
	struct timespec next, round;
	clock_gettime(CLOCK_MONOTONIC, &next);
	round = next;
	uint64_t tick_ns = S.mode == OPSCOPE_SAMPLE_WALL ? S.period_ns : SAMPLER_ROUND_NS;
	pthread_mutex_lock(&S.lock);
	threads_scan();
	pthread_mutex_unlock(&S.lock);
	while (!atomic_load(&S.stop)) {
		ts_add(&next, tick_ns);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		pthread_mutex_lock(&S.lock);
		if (S.mode == OPSCOPE_SAMPLE_WALL)
			wall_tick();
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > round.tv_sec ||
		    (now.tv_sec == round.tv_sec && now.tv_nsec >= round.tv_nsec)) {
			threads_scan();
			drain_all();
			round = now;
			ts_add(&round, SAMPLER_ROUND_NS);
		}
		if (now.tv_sec > next.tv_sec + 1)
			next = now; /* fell behind (stopped, swapped): do not catch up */
		pthread_mutex_unlock(&S.lock);
	}
	pthread_mutex_lock(&S.lock);
	drain_all();
	for (size_t i = 0; i < S.nthreads; i++)
		thread_detach(&S.threads[i]);
	S.nthreads = 0;
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
	long fd = perf_open(0);
	if (fd < 0)
		return 0;
	void *map = mmap(NULL, perf_map_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	int ok = map != MAP_FAILED;
	if (ok)
		munmap(map, perf_map_bytes());
	close((int)fd);
	return ok;
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
	S.max_stack = 127;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");
	if (f) {
		unsigned v;
		if (fscanf(f, "%u", &v) == 1 && v > 0)
			S.max_stack = v;
		fclose(f);
	}
	char what[160];
	const char *refused = "";
	if (S.mode == OPSCOPE_SAMPLE_CPU && sampler_perf_usable()) {
		S.mech = MECH_PERF;
		snprintf(what, sizeof(what), "%u Hz on-CPU through perf_event (task-clock)", hz);
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
				 "%u Hz wall-clock through SIGPROF from a sampler thread", hz);
		else
			snprintf(what, sizeof(what),
				 "%u Hz on-CPU through SIGPROF CPU-time timers%s", hz, refused);
	}
	atomic_store(&S.stop, 0);
	/* The sampler thread never takes SIGPROF (nor any signal meant for the program). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&S.thread, NULL, sampler_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_unlock(&S.lock);
		sampler_say("not sampling: cannot start the sampler thread");
		return -1;
	}
	S.running = 1;
	pthread_mutex_unlock(&S.lock);
	sampler_say(what);
	record_metadata("sampler", what);
	return 0;
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
	pthread_join(S.thread, NULL);
	S.hz = 0;
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
	pthread_mutex_init(&S.lock, NULL);
	fork_restart = S.running;
	S.running = 0;
	/* The parent's events and rings: the fds are copies (close them), the ring mappings
	 * were not copied (VM_DONTCOPY), the timers were not inherited. */
	for (size_t i = 0; i < S.nthreads; i++) {
		if (S.threads[i].fd >= 0)
			close(S.threads[i].fd);
		if (S.threads[i].ring) {
			S.threads[i].ring->next_free = rings_free;
			rings_free = S.threads[i].ring;
		}
	}
	S.nthreads = 0;
	S.lost = 0;
}

void sampler_after_fork_child_session(void)
{
	if (fork_restart) {
		fork_restart = 0;
		sampler_start(S.last_hz, S.last_mode);
	}
}
