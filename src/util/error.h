/*
 * error.h: the per-thread "first detailed message" behind opscope_last_error(), and a
 * printf-style setter for library code. The public error table lives in opscope.h.
 */
#ifndef OPSCOPE_UTIL_ERROR_H
#define OPSCOPE_UTIL_ERROR_H

/* Record a detailed message for the calling thread and return `err` (for `return set_error(...)`).
 * The message of an earlier failure is replaced only after error_clear(). */
int error_set(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void error_clear(void);

#endif
