/*
 * timers.h: internals of the scoped timers (timers.c) used by the session writer.
 */
#ifndef OPSCOPE_RECORD_TIMERS_H
#define OPSCOPE_RECORD_TIMERS_H

#include <stddef.h>

#include "opscope/opscope.h"

/* A malloc'd copy of every timer's merged statistics (names owned by the library).
 * Returns 0 or a negative error. */
int timers_snapshot(struct opscope_timer_stats **out, size_t *count);

/* Taken by the session's fork handler (session.c), released in parent and child. */
void timers_lock_for_fork(void);
void timers_unlock_for_fork(void);

#endif
