/*
 * intern.h: internals of the string table (intern.c) used by the session writer and fork
 * handling. Interning itself is declared in record.h.
 */
#ifndef OPSCOPE_RECORD_INTERN_H
#define OPSCOPE_RECORD_INTERN_H

#include <stdint.h>

/* One past the highest complete id (ids 1..intern_count()-1 are readable). */
uint32_t intern_count(void);
void intern_lock_for_fork(void);
void intern_unlock_for_fork(void);
void intern_after_fork_child(void);

#endif
