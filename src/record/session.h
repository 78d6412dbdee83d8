/*
 * session.h: process-event hooks of the session (session.c), called by autostart.c.
 */
#ifndef OPSCOPE_RECORD_SESSION_H
#define OPSCOPE_RECORD_SESSION_H

void session_fork_prepare(void);
void session_fork_parent(void);
void session_fork_child(void);
/* Final round and END from a fatal or terminating signal handler (bounded wait). */
void session_stop_from_signal(int sig);
/* 1 if a session is recording and belongs to this process (0 in a vfork child, which
 * shares its parent's memory and must not touch the parent's session). */
int session_owned_here(void);
/* Before exec: finish this process's file (as at exit) so the new image loses nothing and
 * writes a file of its own. `program` is what is exec'd (recorded as metadata "exec").
 * Returns 1 if it stopped a session: then, if the exec returns, session_exec_failed() starts
 * recording again into a new file. Does nothing in a vfork child. */
int session_exec_prepare(const char *program);
void session_exec_failed(void);

#endif
