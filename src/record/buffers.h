/*
 * buffers.h: the chunk arena, the per-thread recording state and the queue of full chunks,
 * shared by the hot path (buffers.c) and the session writer (session.c).
 *
 * Ownership: a chunk is either free (in the pool's lock-free stack), owned by one thread
 * (its current chunk, written only by that thread), or queued full (owned by the writer).
 * The writer may also *read* the committed prefix of a thread's current chunk (a periodic
 * flush); `committed` is stored with release by the owner and loaded with acquire by the
 * writer, which touches only `written`.
 *
 * Sessions: the word `opscope_recording_word` is 2*gen+1 while session `gen` records and even
 * otherwise. A thread caches the word it attached with; a mismatch sends it to the slow path,
 * which retires chunks of an older generation (they go to the full queue tagged with their
 * gen, and the writer recycles them unwritten).
 */
#ifndef OPSCOPE_RECORD_BUFFERS_H
#define OPSCOPE_RECORD_BUFFERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "record/wakeword.h"
#include "trace/encode.h"

struct chunk {
	_Atomic uint32_t committed; /* slots completely written by the owner */
	uint32_t written;	    /* slots already encoded to the file (writer only) */
	uint32_t track;		    /* owner's track */
	uint32_t seq;		    /* owner's chunk sequence number in this generation */
	uint64_t gen;		    /* session generation the events belong to */
	struct chunk *_Atomic next; /* link in the full queue */
	_Atomic uint32_t next_free; /* link in the free stack: index + 1, 0 = end */
	uint32_t index;		    /* position in the arena */
	uint64_t reserved[3];	    /* pads the header to 64 bytes */
	struct ops_slot slots[];    /* capacity: pool.slots_per_chunk */
};
_Static_assert(sizeof(struct chunk) == 64, "chunk header is one cache line");

struct pool {
	uint8_t *arena;		     /* nchunks * chunk_bytes, mmap'd */
	size_t chunk_bytes;	     /* bytes per chunk including the header */
	uint32_t nchunks;	     /* chunks in the arena */
	uint32_t slots_per_chunk;    /* slot capacity of one chunk */
	_Atomic uint64_t free_head;  /* ABA tag << 32 | (index + 1) */
	_Atomic uint32_t free_count; /* chunks in the free stack (approximate while racing) */
	struct chunk *_Atomic full;  /* LIFO of full chunks, drained by the writer */
};

extern struct pool buffers_pool;

/* The session writer sleeps on this between rounds (up to a flush interval while it has
 * nothing to write); a thread that takes one of the last quarter of the pool's chunks, or
 * finds none, wakes it. */
extern struct wakeword buffers_writer_wake;

/* A thread that has recorded. Never freed: the registry only grows, so the writer can walk
 * it without a lock. */
struct rthread {
	uint32_t track;		       /* dense index, also the file's track number */
	pid_t tid;		       /* OS thread id */
	pid_t pid;		       /* process id (changes in a forked child) */
	int is_main;		       /* tid == pid */
	struct chunk *_Atomic current; /* the chunk being filled, for flush snapshots */
	_Atomic uint64_t dropped;      /* events lost, cumulative over the process */
	_Atomic uint32_t name_id;      /* thread name set through the API, 0 = ask the OS */
	_Atomic int exited;	       /* the thread has exited */
	int foreign;		       /* made for another thread (a sampler's), not yet adopted
					  by it (under the registry lock) */
	_Atomic uint32_t pthread_low;  /* the low 32 bits of its pthread_self(): how CUPTI names
					  the thread of an API call; 0 until the thread runs */
	struct rthread *_Atomic next;  /* registry link */
};

/* Registry head (oldest first) and count. */
extern struct rthread *_Atomic buffers_threads;
extern _Atomic uint32_t buffers_thread_count;

/* Create the arena (once; later sessions reuse it). Returns 0 or a negative error. */
int buffers_pool_init(size_t buffer_bytes, size_t chunk_bytes);
/* Return a chunk to the free stack (writer side). */
void buffers_pool_put(struct chunk *c);
/* Take every queued full chunk, oldest first (writer side). */
struct chunk *buffers_take_full(void);

/* Fork support: called in the child with only the forking thread alive. */
void buffers_after_fork_child(void);
void buffers_lock_for_fork(void);
void buffers_unlock_for_fork(void);

/* The track of thread `tid` of this process for a sampler running on another thread: the
 * thread's registry entry, or a new one that the thread adopts when it records its first
 * event. UINT32_MAX when out of memory. */
uint32_t buffers_track_for_tid(pid_t tid);

/* Register the calling thread (a track, and the pthread id buffers_tid_of_pthread looks up)
 * before it records anything: the GPU collector does so for the thread that calls cuInit. */
void buffers_register_current(void);

/* The OS thread id of the thread of this process whose pthread_self() has low 32 bits `low`
 * (CUPTI's threadId of an API record), preferring a live thread; 0 if none is known. Reads the
 * registry without its lock (entries are only appended). */
pid_t buffers_tid_of_pthread(uint32_t low);

/* Hand the calling thread's chunk to the writer now (thread exit, flush of this thread). */
void buffers_release_current(void);

#endif
