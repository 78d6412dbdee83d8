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
int session_is_active(void);

#endif
