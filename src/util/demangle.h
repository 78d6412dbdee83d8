/*
 * demangle.h: C++ (Itanium ABI) names made readable, through libstdc++'s __cxa_demangle looked
 * up at run time, so that nothing here needs a C++ runtime to build or run. Used for native
 * frames (formats/symbolize) and for the kernel names CUPTI records mangled
 * (formats/opscope/gpu_load.c), as Kineto and Nsight Systems show them.
 */
#ifndef OPSCOPE_UTIL_DEMANGLE_H
#define OPSCOPE_UTIL_DEMANGLE_H

#include <stdbool.h>

/* Whether libstdc++'s demangler could be loaded (loaded once, thread-safe). */
bool demangle_available(void);

/* The demangled form of `name` (malloc'd; the caller frees it), or NULL when `name` is not a
 * mangled C++ name ("_Z..."), cannot be demangled, or no demangler is available. */
char *demangle_cxx(const char *name);

#endif
