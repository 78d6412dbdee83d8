/*
 * _opscope.h: what the two C files of the extension module share: the function profiler
 * (_pyfunc.c) exposes its module methods to the module table in _opscope.c.
 */
#ifndef OPSCOPE_PYTHON_OPSCOPE_H
#define OPSCOPE_PYTHON_OPSCOPE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <frameobject.h>

/* Module methods of the function profiler, ending with a NULL entry. */
extern PyMethodDef pyfunc_methods[];
/* Ready the function profiler's types; 0 or -1 with an exception set. */
int pyfunc_init(PyObject *module);

#endif
