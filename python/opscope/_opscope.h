/*
 * _opscope.h: what the C files of the extension module share: the function profiler
 * (_pyfunc.c) and the nn.Module call ranges (_modules.c) expose their module methods to the module
 * table in _opscope.c.
 */
#ifndef OPSCOPE_PYTHON_OPSCOPE_H
#define OPSCOPE_PYTHON_OPSCOPE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include <frameobject.h>

#include "opscope/opscope.h"

#include "collect/torch/torch_api.h"

/* The functions of the runtime that records, as X(name, return type, parameters): the
 * observer's (OPSCOPE_TORCH_API_FUNCS, collect/torch/torch_api.h) and those only Python calls.
 * Each is opscope_<name>; struct py_runtime has a field of that name, filled from this module's
 * own runtime or, under `opscope record`, from the preloaded one (py_runtime_init). */
#define PY_RUNTIME_FUNCS(X)                                                                       \
	OPSCOPE_TORCH_API_FUNCS(X)                                                                \
	X(instant, void, (int category, const char *name))                                        \
	X(counter, void, (const char *name, double value))                                        \
	X(step, void, (int64_t num_samples))                                                      \
	X(step_end, void, (int64_t num_samples))                                                  \
	X(thread_name, void, (const char *name))                                                  \
	/* The step profiler and the session it records into: under `opscope record` the        \
	 * preloaded runtime's, so that Profiler's steps and ranges land in the one recording. */ \
	X(profiler_create, struct opscope_profiler *, (const struct opscope_profiler_options *))  \
	X(profiler_destroy, void, (struct opscope_profiler *))                                    \
	X(profiler_start, int, (struct opscope_profiler *))                                       \
	X(profiler_step, int, (struct opscope_profiler *, int64_t))                               \
	X(profiler_stop, int, (struct opscope_profiler *))                                        \
	X(profiler_state, int, (const struct opscope_profiler *))                                 \
	X(profiler_step_num, uint64_t, (const struct opscope_profiler *))                         \
	X(profiler_step_info, int, (struct opscope_profiler *, const char *, char *, size_t))     \
	X(profiler_bench_summary, int,                                                            \
	  (const struct opscope_profiler *, struct opscope_bench_summary *))                      \
	X(reader_begin, void, (void))                                                             \
	X(reader_end, void, (void))                                                               \
	X(session_flush, int, (void))                                                             \
	X(gpu_start, int, (void))                                                                 \
	X(session_path, const char *, (void))                                                     \
	/* Scoped timers (opscope.Timer): one timer per name with the C ones */                   \
	X(timer_add_ns, void, (const char *name, uint64_t ns))                                    \
	X(timer_get, int, (const char *name, struct opscope_timer_stats *out))                    \
	X(timers_print, int, (FILE * out))                                                        \
	X(timers_reset, void, (void))

/* The runtime that records: this module's own copy, or, under `opscope record`, the
 * preloaded libopscope.so (see py_runtime_init in _opscope.c). */
struct py_runtime {
	uint64_t *word; /* opscope_recording_word */
	PY_RUNTIME_FUNCS(OPSCOPE_RUNTIME_FIELD)
	int preloaded; /* 1: the functions are the preloaded library's */
};
extern struct py_runtime py_runtime;
/* 1 while the runtime in `py_runtime` records. */
int py_runtime_recording(void);

/* Module methods of the function profiler, ending with a NULL entry. */
extern PyMethodDef pyfunc_methods[];
/* Module methods of the nn.Module call ranges (_modules.c), ending with a NULL entry, and
 * the setup of its ModuleCall type; 0 or -1 with an exception set. */
extern PyMethodDef modules_methods[];
int modules_init(PyObject *module);
/* Ready the function profiler's types; 0 or -1 with an exception set. */
int pyfunc_init(PyObject *module);

#endif
