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

/* The runtime that records: this module's own copy, or, under `opscope record`, the
 * preloaded libopscope.so (see py_runtime_init in _opscope.c). */
struct py_runtime {
	uint64_t *word;					/* opscope_recording_word */
	void (*range_begin)(int, const char *);		/* opscope_range_begin */
	void (*range_end)(void);			/* opscope_range_end */
	void (*instant)(int, const char *);		/* opscope_instant */
	void (*counter)(const char *, double);		/* opscope_counter */
	void (*step)(int64_t);				/* opscope_step */
	void (*step_end)(int64_t);			/* opscope_step_end */
	void (*thread_name)(const char *);		/* opscope_thread_name */
	void (*arg_string)(const char *, const char *); /* opscope_arg_string */
	void (*arg_int)(const char *, int64_t);		/* opscope_arg_int */
	uint32_t (*string_id)(const char *, size_t);	/* opscope_string_id */
	void (*range_begin_id)(int, uint32_t);		/* opscope_range_begin_id */
	void (*arg_int_id)(uint32_t, int64_t);		/* opscope_arg_int_id */
	void (*arg_string_id)(uint32_t, uint32_t);	/* opscope_arg_string_id */
	/* The step profiler and the session it records into: under `opscope record` the
	 * preloaded runtime's, so that Profiler's steps and ranges land in the one recording. */
	struct opscope_profiler *(*profiler_create)(const struct opscope_profiler_options *);
	void (*profiler_destroy)(struct opscope_profiler *);
	int (*profiler_start)(struct opscope_profiler *);
	int (*profiler_step)(struct opscope_profiler *, int64_t);
	int (*profiler_stop)(struct opscope_profiler *);
	int (*profiler_state)(const struct opscope_profiler *);
	uint64_t (*profiler_step_num)(const struct opscope_profiler *);
	int (*profiler_step_info)(struct opscope_profiler *, const char *, char *, size_t);
	int (*profiler_bench_summary)(const struct opscope_profiler *,
				      struct opscope_bench_summary *);
	void (*reader_begin)(void);
	void (*reader_end)(void);
	int (*session_flush)(void);
	const char *(*session_path)(void);
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
