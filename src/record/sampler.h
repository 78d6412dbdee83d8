/*
 * sampler.h: the CPU stack sampler of the recording runtime (sampler.c, issue 17). It samples
 * every thread of this process while a session records and hands the stacks to the sample
 * store (samples.h); docs/sampling.md says how.
 */
#ifndef OPSCOPE_RECORD_SAMPLER_H
#define OPSCOPE_RECORD_SAMPLER_H

#include <stdint.h>

/* Start sampling at `hz` (0: do nothing) in `mode` (enum opscope_sample_mode). Called by
 * opscope_session_start once the session records, without the session lock. 0 when a
 * sampler runs (or none was asked for), -1 when none could start (a warning was printed). */
int sampler_start(uint32_t hz, int mode);
/* Stop sampling: the last samples are queued before it returns. Safe when none runs. */
void sampler_stop(void);
/* Start again with the last settings, if the sampler ran before the last sampler_stop (after a
 * failed exec). */
void sampler_resume(void);
/* Fork handlers (session.c's, in its lock order: before the session's own locks). */
void sampler_fork_prepare(void);
void sampler_fork_parent(void);
/* In the child: forget the parent's events and timers; start sampling the child if the
 * parent sampled (after the child's session started). */
void sampler_fork_child(void);
void sampler_after_fork_child_session(void);

#endif
