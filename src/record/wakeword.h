/*
 * wakeword.h: one thread sleeps to a deadline, and any thread or signal handler may wake it
 * sooner: a futex word. The sampler thread (sampler.c) and the session writer (session.c)
 * sleep on one each.
 *
 * Not a semaphore: a semaphore posted after sem_destroy is undefined, and a late waker (a
 * handler, a thread retiring a chunk as the session stops) cannot know; the word lives as
 * long as the process. Waking costs a load (an exchange for the first waker since the sleeper
 * last looked for work, wakeword_prepare, and a system call for it), or, for a stop or a
 * flush, always the system call (wakeword_wake_now).
 */
#ifndef OPSCOPE_RECORD_WAKEWORD_H
#define OPSCOPE_RECORD_WAKEWORD_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

struct wakeword {
	_Atomic uint32_t seq; /* bumped by each waker that makes the system call */
	_Atomic int asked;    /* a waker came since wakeword_prepare */
};

/* Before the sleeper looks for work: the value to sleep on. A wake from here on ends the
 * next wakeword_sleep at once, so work published before a wake is never slept through. The
 * value is read before `asked` is cleared: a waker in between bumps it after the read (the
 * sleep returns at once) instead of into it (its bump would be in the value slept on, and
 * wakers after it, seeing `asked`, would not call). The clear is a sequentially consistent
 * exchange, not a store: a full barrier that keeps it ahead of the sleeper's loads of its
 * work (a fence would do, but GCC's ThreadSanitizer does not support fences). */
static inline uint32_t wakeword_prepare(struct wakeword *w)
{
	uint32_t seq = atomic_load_explicit(&w->seq, memory_order_acquire);
	atomic_exchange_explicit(&w->asked, 0, memory_order_seq_cst);
	return seq;
}

/* Sleep until CLOCK_MONOTONIC reaches `deadline_ns` or a wake since `seq` (from
 * wakeword_prepare). 1 when woken. */
static inline int wakeword_sleep(struct wakeword *w, uint32_t seq, uint64_t deadline_ns)
{
	struct timespec ts = { (time_t)(deadline_ns / 1000000000u),
			       (long)(deadline_ns % 1000000000u) };
	long rc = syscall(SYS_futex, &w->seq, FUTEX_WAIT_BITSET_PRIVATE, seq, &ts, NULL,
			  FUTEX_BITSET_MATCH_ANY);
	return rc == 0 || (rc < 0 && errno == EAGAIN);
}

/* Wake the sleeper whatever other wakers did: a bump and a raw system call. For a stop or a
 * flush, which must not rely on a waker that another got to first: that one may be stopped
 * between the two, by the very signal handler that waits for the stop. Async-signal-safe
 * (errno kept). */
static inline void wakeword_wake_now(struct wakeword *w)
{
	atomic_fetch_add_explicit(&w->seq, 1, memory_order_seq_cst);
	int saved = errno;
	syscall(SYS_futex, &w->seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}

/* Wake the sleeper, where a late wake costs only a delay: the first waker since the
 * sleeper's wakeword_prepare makes the call, the others return. A load before the exchange:
 * threads that find the chunk pool empty call this for every event they drop, and a locked
 * exchange each on one shared line would slow them all. Async-signal-safe. */
static inline void wakeword_wake(struct wakeword *w)
{
	if (atomic_load_explicit(&w->asked, memory_order_seq_cst) ||
	    atomic_exchange_explicit(&w->asked, 1, memory_order_seq_cst))
		return;
	wakeword_wake_now(w);
}

#endif
