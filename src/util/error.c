/*
 * error.c: opscope_strerror/opscope_err_name from the one table in opscope.h, and the
 * per-thread detailed message. Each public call that can fail clears the message on entry,
 * so the message a caller reads belongs to the call that just failed (curl's first-message
 * rule within one call).
 */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>

#include "opscope/opscope.h"

static __thread char error_message[256]; /* small: the library's TLS is static TLS */
static __thread int error_is_set;

const char *opscope_strerror(int err)
{
	switch (err) {
#define OPSCOPE_ERR_TEXT_(name, value, text) \
	case value:                          \
		return text;
		OPSCOPE_ERRNO_MAP(OPSCOPE_ERR_TEXT_)
#undef OPSCOPE_ERR_TEXT_
	}
	return "unknown error";
}

const char *opscope_err_name(int err)
{
	switch (err) {
#define OPSCOPE_ERR_NAME_(name, value, text) \
	case value:                          \
		return #name;
		OPSCOPE_ERRNO_MAP(OPSCOPE_ERR_NAME_)
#undef OPSCOPE_ERR_NAME_
	}
	return "EUNKNOWN";
}

const char *opscope_last_error(void)
{
	return error_message;
}

void error_clear(void)
{
	error_is_set = 0;
	error_message[0] = '\0';
}

int error_set(int err, const char *fmt, ...)
{
	if (!error_is_set) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(error_message, sizeof(error_message), fmt, ap);
		va_end(ap);
		error_is_set = 1;
	}
	return err;
}
