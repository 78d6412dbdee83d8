/*
 * gpu.h: the record stage's store of GPU activity, for a GPU collector (src/collect/cupti)
 * whose records arrive in batches on a thread of the GPU library (CUPTI's completion
 * callback), with their own timestamps, long after the work ran: they cannot go through the
 * per-thread event buffers, whose times only go forward. The collector converts each record
 * into an on-disk struct ops_gpu_entry (trace/format.h) and queues it here; the session's
 * writer thread takes the queue every round and writes GPU records.
 *
 * Thread-safety: every function may be called from any thread; they take one mutex held for
 * a copy only, and never call out of the record stage (so the collector may call them from
 * inside CUPTI's callbacks without a lock-order cycle).
 */
#ifndef OPSCOPE_RECORD_GPU_H
#define OPSCOPE_RECORD_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format.h"

/* Queue n entries for the session recording now; does nothing unless a session records.
 * Returns how many were queued (the rest are counted as lost: no memory). */
size_t record_gpu_entries(const struct ops_gpu_entry *e, size_t n);

/* The thread of a RUNTIME or DRIVER entry, as a collector gives it, is CUPTI's threadId: the
 * low 32 bits of the calling thread's pthread_self() (seen on an H200 with CUPTI 13), not its
 * OS thread id. record_gpu_entries puts the OS id of every thread opscope knows in its place,
 * so the call lands on the host track of its thread; an unknown one is left as it came.
 * A collector registers the thread that starts it (the one calling cuInit), which may record
 * nothing itself, with record_gpu_register_thread. */
void record_gpu_register_thread(void);

/* Records the GPU library itself dropped (CUPTI's count), added to the session's total and
 * written as the file's GPU losses. */
void record_gpu_dropped(uint64_t n);

/* The collector's hooks, called by the session with none of its locks held: flush pushes the
 * GPU library's finished and pending buffers into the queue (at every stop, so the last
 * kernels reach the file); ranges: a host range opened (begin, with its id) or closed on the
 * calling thread, for external correlation. NULL to remove. */
struct record_gpu_hooks {
	void (*flush)(void);
	void (*range_begin)(uint64_t id);
	void (*range_end)(void);
};
void record_gpu_set_hooks(const struct record_gpu_hooks *hooks);
/* The collector's start function (0 or -1), registered by its constructor; what
 * opscope_gpu_start() calls. A build without the collector has none. */
void record_gpu_set_starter(int (*start)(void));
void record_gpu_flush(void);
/* A host range was just opened (its BEGIN emitted) / closed on the calling thread: with a GPU
 * collector on, the range gets a process-wide id, written as its argument "external_id" and
 * pushed to CUPTI as the external correlation id of the GPU work launched inside it. One
 * atomic load when no collector is on. */
void record_gpu_range_begin(void);
void record_gpu_range_end(void);

/* ---- For the session's writer (session.c) and fork handling. ---- */

/* Take the entries queued for session generation `gen` (malloc'd, *n of them, room for
 * *cap); NULL when there are none. Entries of other generations are dropped. Hand the array
 * to gpu_give_back when done: it becomes the queue again at a later take. */
struct ops_gpu_entry *gpu_take(uint64_t gen, size_t *n, size_t *cap);
void gpu_give_back(struct ops_gpu_entry *q, size_t cap);
uint64_t gpu_dropped_total(void);
void gpu_lock_for_fork(void);
void gpu_unlock_for_fork(void);
void gpu_after_fork_child(void);

#endif
