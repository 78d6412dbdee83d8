/*
 * samples.h: the record stage's store of CPU stack samples, for a sampler (not written yet:
 * issue 17) that runs on a thread of its own and samples the other threads of the process.
 *
 * It interns the three tables a sample's stack is made of, process-wide like the string
 * table (intern.c): mappings (a binary mapped into the process), frames (an address in a
 * mapping, or a Python function) and stack entries (a frame under its caller's entry, the
 * prefix tree of docs/trace-format.md 3.1), and queues samples that the session's writer
 * thread takes every round and writes as MAPPINGS, FRAMES, STACKS and SAMPLES records.
 *
 * Thread-safety: every function may be called from any thread, concurrently; they take one
 * mutex (like record_intern), so none of them is async-signal-safe: a SIGPROF fallback must
 * hand its stacks to a thread that calls these. Ids are dense, start at 0, stay valid for the
 * life of the process and in every later session (each session's file gets the entries again).
 * Interning is meant to be done once per distinct mapping / address / stack by a sampler that
 * caches the ids; a repeated one costs a hash and a compare under the lock.
 */
#ifndef OPSCOPE_RECORD_SAMPLES_H
#define OPSCOPE_RECORD_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#define RECORD_SAMPLE_NONE UINT32_MAX /* "no id": failure, or no mapping / no stack */

/* The mapping [start, end) of `path` (NULL or "" for anonymous memory) from `file_offset` on,
 * as /proc/<pid>/maps shows it; `build_id` the ELF build-id in lowercase hex, or NULL. Its id,
 * or RECORD_SAMPLE_NONE when end <= start or out of memory. */
uint32_t record_sample_mapping(uint64_t start, uint64_t end, uint64_t file_offset, const char *path,
			       const char *build_id);
/* A native frame: instruction `address` in mapping `mapping` (RECORD_SAMPLE_NONE: in no known
 * mapping). For return addresses, pass the address minus one (inside the call). Its id, or
 * RECORD_SAMPLE_NONE for an unknown mapping id or an address outside the mapping. */
uint32_t record_sample_frame_native(uint32_t mapping, uint64_t address);
/* A Python frame: function `name` in `file` at `line` (line of the code object's first line
 * or of the current instruction, as the sampler chooses: the frame is interned on all three).
 * Its id, or RECORD_SAMPLE_NONE when out of memory. */
uint32_t record_sample_frame_python(const char *name, const char *file, int32_t line);
/* The stack of `n` frame ids, INNERMOST FIRST (frames[0] is where the thread was, frames[n-1]
 * the outermost caller: the order unwinders produce). Its id (that of the innermost frame's
 * entry), or RECORD_SAMPLE_NONE when n is 0, a frame id is unknown, or out of memory. */
uint32_t record_sample_stack(const uint32_t *frames, size_t n);
/* The same, OUTERMOST FIRST and under the entry `parent` (RECORD_SAMPLE_NONE: at the root):
 * for a sampler that keeps the entries of its last stack and interns only the frames below
 * the part it shares with the new one. ids[i] (when ids is not NULL) gets the entry of
 * frames_outer[i]. The innermost entry's id (`parent` itself when n is 0), or
 * RECORD_SAMPLE_NONE when `parent` or a frame id is unknown, or out of memory; ids then holds
 * the entries made before the failure. */
uint32_t record_sample_stack_under(uint32_t parent, const uint32_t *frames_outer, size_t n,
				   uint32_t *ids);
/* The track of OS thread `tid` of this process, to pass to record_sample: the thread's own
 * track when it has recorded events (or will: it adopts this one), else a new one. Call once
 * per thread and keep it. RECORD_SAMPLE_NONE when out of memory. */
uint32_t record_sample_track(pid_t tid);

#define RECORD_SAMPLE_TRUNCATED (1u << 0) /* the stack was cut (outermost frames missing) */

/* Queue a sample of `track` taken at `ticks` (record_ticks()) with stack `stack` (or
 * RECORD_SAMPLE_NONE when no stack could be read), standing for `weight` (1, or ns of CPU
 * time), flags RECORD_SAMPLE_*. Does nothing unless a session records. 0, or -1 when the
 * stack id is unknown or the queue cannot grow (the sample is lost and counted). */
int record_sample(uint32_t track, uint64_t ticks, uint32_t stack, int64_t weight, uint32_t flags);
/* Samples lost because the queue could not grow, over the life of the process. */
uint64_t record_samples_lost(void);

/* ---- For the session's writer (session.c) and fork handling. ---- */

/* Published entries of each table (ids below are complete and never change). Read stacks
 * first, then frames, then mappings: an entry is published after what it refers to. */
uint32_t samples_count_mappings(void);
uint32_t samples_count_frames(void);
uint32_t samples_count_stacks(void);
/* Entry `id` of a table, in its on-disk layout (trace/format.h), below its count. */
const void *samples_mapping(uint32_t id);
const void *samples_frame(uint32_t id);
const void *samples_stack(uint32_t id);
/* Take the queued samples of session generation `gen` (on-disk entries, malloc'd; *n of
 * them) once there are at least `min`; queued samples of other generations are dropped.
 * NULL when there are none, or fewer than `min`. */
void *samples_take(uint64_t gen, size_t min, size_t *n);
void samples_lock_for_fork(void);
void samples_unlock_for_fork(void);
/* In a forked child: the tables stay (same address space), the queue is the parent's. */
void samples_after_fork_child(void);

#endif
