/*
 * record.h: the record stage's internal interface, for collectors (NVTX, Python, ...) and the
 * profiler/scheduler. The public C API in opscope.h is a thin layer over these.
 *
 * Names are interned into small ids once (record_intern) so that events carry 4-byte ids.
 * Every record_emit_* function is safe from any thread, takes no lock and makes no system call
 * unless the calling thread must fetch a fresh buffer chunk (one lock-free pop); when no chunk
 * is free the event is dropped and counted.
 */
#ifndef OPSCOPE_RECORD_RECORD_H
#define OPSCOPE_RECORD_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "opscope/opscope.h"

/* Intern a string (copied); returns its id (> 0), or 0 when out of memory. Takes a lock:
 * call once per distinct name, or use record_intern_cached. Ids stay valid for the life of
 * the process and across sessions. */
uint32_t record_intern(const char *s, size_t len);
/* Intern a NUL-terminated string through a small per-thread cache keyed by pointer and
 * verified by content, so repeated dynamic names (NVTX messages) cost a hash and a compare. */
uint32_t record_intern_cached(const char *s);
/* The string of an interned id (valid for the life of the process), or NULL. */
const char *record_string(uint32_t id, uint32_t *len);

/* Event emitters; all do nothing unless a session is recording. */
void record_emit_begin(uint32_t category, uint32_t name_id);
void record_emit_end(uint32_t name_id);
void record_emit_instant(uint32_t category, uint32_t name_id);
void record_emit_counter(uint32_t name_id, double value);
void record_emit_arg_i64(uint32_t key_id, int64_t value);
void record_emit_arg_u64(uint32_t key_id, uint64_t value);
void record_emit_arg_f64(uint32_t key_id, double value);
void record_emit_arg_str(uint32_t key_id, uint32_t value_id);
void record_emit_flow(int out, uint64_t flow_id);
void record_emit_async_begin(uint32_t category, uint32_t name_id, uint64_t async_id);
void record_emit_async_end(uint64_t async_id);

/* The tick clock of events: TSC cycles where it is invariant, else CLOCK_MONOTONIC ns. */
uint64_t record_ticks(void);
/* Ticks per second (calibrated once per process). */
double record_ticks_per_second(void);
/* Nanoseconds of a tick difference. */
uint64_t record_ticks_to_ns(uint64_t ticks);

/* Set the name of the calling thread for traces (see opscope_thread_name). */
void record_thread_name(const char *name);

/* Hooks of the profiler (profiler.c) into the session, so opscope_step() reaches it. */
struct opscope_profiler;
void record_set_active_profiler(struct opscope_profiler *prof);
struct opscope_profiler *record_active_profiler(void);

/* 0 when NVTX capture was switched off (opscope_options.nvtx = -1 or OPSCOPE_NVTX=0). */
int record_nvtx_wanted(void);

/* End the calling thread's open "ProfileStep#N" of opscope_step() without a profiler, so a
 * session stopped after the last step() does not leave it open. */
void record_close_bare_step(void);

/* Add process metadata (key/value) to the active session's file; copied. */
void record_metadata(const char *key, const char *value);

/* Install the recorder's fork handlers (once; session.c): called by the first session and
 * the first scoped timer, whichever comes first. */
void record_fork_handlers_install(void);

#endif
