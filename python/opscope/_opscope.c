/*
 * _opscope.c: the CPython extension module `opscope._opscope`, a thin binding of the C API
 * (sessions, ranges, steps, reader hooks, the scheduler and the profiler object) plus two
 * tool entry points (export a trace to another format, read a trace's ranges back) and the
 * function profiler of _pyfunc.c. The Python package (opscope/__init__.py, profiler.py)
 * builds paddle.profiler's API on top of it.
 *
 * The module links the static runtime, so one .so carries everything; its symbols are not
 * exported (--exclude-libs), so a libopscope.so preloaded by `opscope record` does not
 * interpose on half of them.
 *
 * Invariants:
 *   - every C call is made with the GIL held; the profiler's callbacks (a Python scheduler
 *     through state_fn, on_trace_ready) therefore run on the thread that drives the
 *     profiler with the GIL, and an exception they raise is kept and re-raised when the C
 *     call that invoked them (create/start/step/stop) returns;
 *   - a range begun from Python remembers the recording word it began under; ending it
 *     does nothing if that session is no longer the one recording, so a RecordEvent opened
 *     outside a window never closes a range that belongs to someone else.
 */
#include "_opscope.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <dlfcn.h>

#include "opscope/opscope.h"

#include "collect/torch/torch_api.h"
#include "formats/import.h"
#include "formats/opscope/opscope_load.h"
#include "formats/registry.h"
#include "model/model.h"
#include "report/table.h"
#include "report/views.h"
#include "util/strlist.h"

/* ---------------------------------------------------------------------------------------- */
/* The runtime that records. This module carries its own (hidden) copy of the runtime, but
 * under `opscope record` a libopscope.so is preloaded and already recording into the file
 * of the process: then the range, step and profiler functions below go to that one, found
 * with dlsym(RTLD_DEFAULT) (our copy's symbols are not exported, so a hit is the preloaded
 * one). */

#define PY_RUNTIME_OWN(name, ret, params) .name = opscope_##name,
struct py_runtime py_runtime = { .word = &opscope_recording_word,
				 PY_RUNTIME_FUNCS(PY_RUNTIME_OWN) };
#undef PY_RUNTIME_OWN

/* dlsym returns void *; converting it to a function pointer goes through memcpy to stay
 * within ISO C. */
static int py_sym(const char *name, void *fnptr, size_t size)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (!p)
		return 0;
	memcpy(fnptr, &p, size);
	return 1;
}

static void py_runtime_init(void)
{
	struct py_runtime r = { 0 };
	void *word = dlsym(RTLD_DEFAULT, "opscope_recording_word");
	if (!word || word == (void *)&opscope_recording_word)
		return;
	r.word = word;
#define PY_RUNTIME_SYM(name, ret, params) py_sym("opscope_" #name, &r.name, sizeof(r.name)) &&
	/* every function or none: a partial table would mix two runtimes */
	if (PY_RUNTIME_FUNCS(PY_RUNTIME_SYM) 1) {
#undef PY_RUNTIME_SYM
		r.preloaded = 1;
		py_runtime = r;
	}
}

int py_runtime_recording(void)
{
	return (int)(__atomic_load_n(py_runtime.word, __ATOMIC_RELAXED) & 1u);
}

/* The recording functions for the PyTorch observer (src/collect/torch/torch_api.h): the
 * address of a struct opscope_torch_api, as an int for ctypes. */
static struct opscope_torch_api torch_api;

/* recording_path() -> str or None: under `opscope record`, the file the preloaded runtime
 * records into, flushed so that a report of it sees everything recorded so far. */
static PyObject *py_recording_path(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	if (!py_runtime.preloaded)
		Py_RETURN_NONE;
	PyThreadState *ts = PyEval_SaveThread(); /* the flush waits for the writer */
	py_runtime.session_flush();
	const char *path = py_runtime.session_path();
	PyEval_RestoreThread(ts);
	if (!path)
		Py_RETURN_NONE;
	return PyUnicode_DecodeFSDefault(path);
}

static PyObject *py_torch_api(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	/* every field: the word and each function of OPSCOPE_TORCH_API_FUNCS */
	torch_api.word = py_runtime.word;
#define PY_TORCH_API_FROM_RUNTIME(name, ret, params) torch_api.name = py_runtime.name;
	OPSCOPE_TORCH_API_FUNCS(PY_TORCH_API_FROM_RUNTIME)
#undef PY_TORCH_API_FROM_RUNTIME
	return PyLong_FromVoidPtr(&torch_api);
}

/* ---------------------------------------------------------------------------------------- */
/* Sessions and ranges. */

static PyObject *py_raise(int rc)
{
	const char *detail = opscope_last_error();
	if (detail && *detail)
		PyErr_Format(PyExc_RuntimeError, "opscope: %s (%s)", detail, opscope_err_name(rc));
	else
		PyErr_Format(PyExc_RuntimeError, "opscope: %s (%s)", opscope_strerror(rc),
			     opscope_err_name(rc));
	return NULL;
}

/* "cpu" or "wall" -> enum opscope_sample_mode; 0, or -1 with ValueError set. */
static int py_sample_mode(const char *mode, int *out)
{
	if (strcmp(mode, "cpu") == 0)
		*out = OPSCOPE_SAMPLE_CPU;
	else if (strcmp(mode, "wall") == 0)
		*out = OPSCOPE_SAMPLE_WALL;
	else {
		PyErr_Format(PyExc_ValueError,
			     "opscope: sample_mode must be 'cpu' or 'wall', not '%s'", mode);
		return -1;
	}
	return 0;
}

static PyObject *py_session_start(PyObject *mod, PyObject *args, PyObject *kw)
{
	(void)mod;
	static char *names[] = { "output", "sample_hz", "sample_mode", NULL };
	const char *output = NULL, *mode = "cpu";
	unsigned int hz = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|zIs", names, &output, &hz, &mode))
		return NULL;
	struct opscope_options o = { .output = output, .sample_hz = hz };
	if (py_sample_mode(mode, &o.sample_mode) != 0)
		return NULL;
	int rc = opscope_session_start(&o);
	if (rc != 0)
		return py_raise(rc);
	return PyUnicode_FromString(opscope_session_path());
}

static PyObject *py_session_stop(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	int rc;
	Py_BEGIN_ALLOW_THREADS rc = opscope_session_stop();
	Py_END_ALLOW_THREADS if (rc != 0) return py_raise(rc);
	Py_RETURN_NONE;
}

/* The profiler's GPU target: "" when the GPU collector started, else why not. */
static PyObject *py_gpu_start(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	int rc;
	Py_BEGIN_ALLOW_THREADS rc = py_runtime.gpu_start();
	Py_END_ALLOW_THREADS if (rc == 0) return PyUnicode_FromString("");
	return PyUnicode_FromString(py_runtime.preloaded ? "CUPTI cannot be used here"
							 : opscope_last_error());
}

static PyObject *py_session_flush(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	int rc;
	Py_BEGIN_ALLOW_THREADS rc = opscope_session_flush();
	Py_END_ALLOW_THREADS if (rc != 0) return py_raise(rc);
	Py_RETURN_NONE;
}

static PyObject *py_session_active(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	return PyBool_FromLong(opscope_session_active());
}

static PyObject *py_session_path(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	const char *p = opscope_session_path();
	if (!p)
		Py_RETURN_NONE;
	return PyUnicode_FromString(p);
}

static uint64_t py_word(void)
{
	uint64_t w = __atomic_load_n(py_runtime.word, __ATOMIC_RELAXED);
	return (w & 1u) ? w : 0;
}

/* range_begin(category, name) -> token: the recording word, 0 when nothing records. */
static PyObject *py_range_begin(PyObject *mod, PyObject *args)
{
	(void)mod;
	int cat;
	const char *name;
	if (!PyArg_ParseTuple(args, "is", &cat, &name))
		return NULL;
	uint64_t w = py_word();
	if (w)
		py_runtime.range_begin(cat, name);
	return PyLong_FromUnsignedLongLong(w);
}

static PyObject *py_range_end(PyObject *mod, PyObject *arg)
{
	(void)mod;
	uint64_t w = PyLong_AsUnsignedLongLong(arg);
	if (PyErr_Occurred())
		return NULL;
	if (w && py_word() == w)
		py_runtime.range_end();
	Py_RETURN_NONE;
}

static PyObject *py_instant(PyObject *mod, PyObject *args)
{
	(void)mod;
	int cat;
	const char *name;
	if (!PyArg_ParseTuple(args, "is", &cat, &name))
		return NULL;
	if (py_runtime_recording())
		py_runtime.instant(cat, name);
	Py_RETURN_NONE;
}

static PyObject *py_counter(PyObject *mod, PyObject *args)
{
	(void)mod;
	const char *name;
	double v;
	if (!PyArg_ParseTuple(args, "sd", &name, &v))
		return NULL;
	if (py_runtime_recording())
		py_runtime.counter(name, v);
	Py_RETURN_NONE;
}

/* timer_add(name, ns): one sample of a scoped timer (opscope.Timer). */
static PyObject *py_timer_add(PyObject *mod, PyObject *args)
{
	(void)mod;
	const char *name;
	unsigned long long ns;
	if (!PyArg_ParseTuple(args, "sK", &name, &ns))
		return NULL;
	py_runtime.timer_add_ns(name, (uint64_t)ns);
	Py_RETURN_NONE;
}

/* timer_get(name) -> (count, total_ns, avg_ns, max_ns, min_ns), or None for a timer never
 * used. */
static PyObject *py_timer_get(PyObject *mod, PyObject *args)
{
	(void)mod;
	const char *name;
	if (!PyArg_ParseTuple(args, "s", &name))
		return NULL;
	struct opscope_timer_stats st;
	if (py_runtime.timer_get(name, &st) != 0)
		Py_RETURN_NONE;
	return Py_BuildValue("(KKdKK)", (unsigned long long)st.count,
			     (unsigned long long)st.total_ns, st.avg_ns,
			     (unsigned long long)st.max_ns, (unsigned long long)st.min_ns);
}

/* timers_table() -> str: every timer with samples, as opscope_timers_print prints them. */
static PyObject *py_timers_table(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return PyErr_NoMemory();
	py_runtime.timers_print(f);
	if (fclose(f) != 0) {
		free(text);
		return PyErr_NoMemory();
	}
	PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "replace");
	free(text);
	return s;
}

static PyObject *py_timers_reset(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	py_runtime.timers_reset();
	Py_RETURN_NONE;
}

static PyObject *py_recording(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	return PyBool_FromLong(py_runtime_recording());
}

static PyObject *py_step(PyObject *mod, PyObject *args)
{
	(void)mod;
	long long n = -1;
	if (!PyArg_ParseTuple(args, "|L", &n))
		return NULL;
	py_runtime.step((int64_t)n);
	Py_RETURN_NONE;
}

static PyObject *py_step_end(PyObject *mod, PyObject *args)
{
	(void)mod;
	long long n = -1;
	if (!PyArg_ParseTuple(args, "|L", &n))
		return NULL;
	py_runtime.step_end((int64_t)n);
	Py_RETURN_NONE;
}

static PyObject *py_reader_begin(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	py_runtime.reader_begin();
	Py_RETURN_NONE;
}

static PyObject *py_reader_end(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	py_runtime.reader_end();
	Py_RETURN_NONE;
}

static PyObject *py_thread_name(PyObject *mod, PyObject *arg)
{
	(void)mod;
	const char *name = PyUnicode_AsUTF8(arg);
	if (!name)
		return NULL;
	py_runtime.thread_name(name);
	Py_RETURN_NONE;
}

static PyObject *py_category_name(PyObject *mod, PyObject *arg)
{
	(void)mod;
	long c = PyLong_AsLong(arg);
	if (c == -1 && PyErr_Occurred())
		return NULL;
	return PyUnicode_FromString(opscope_category_name((int)c));
}

/* ---------------------------------------------------------------------------------------- */
/* Scheduler. */

static int py_parse_schedule(PyObject *t, struct opscope_schedule *s)
{
	unsigned long long v[5];
	if (!PyArg_ParseTuple(t, "KKKKK", &v[0], &v[1], &v[2], &v[3], &v[4]))
		return -1;
	for (int i = 0; i < 5; i++) {
		if (v[i] > UINT32_MAX) {
			PyErr_SetString(PyExc_ValueError, "schedule value out of range");
			return -1;
		}
	}
	s->closed = (uint32_t)v[0];
	s->ready = (uint32_t)v[1];
	s->record = (uint32_t)v[2];
	s->repeat = (uint32_t)v[3];
	s->skip_first = (uint32_t)v[4];
	if (opscope_schedule_check(s) != 0) {
		PyErr_SetString(PyExc_ValueError, "Invalid profiler scheduler arguments");
		return -1;
	}
	return 0;
}

/* schedule_state((closed, ready, record, repeat, skip_first), step) -> state */
static PyObject *py_schedule_state(PyObject *mod, PyObject *args)
{
	(void)mod;
	PyObject *t;
	unsigned long long step;
	if (!PyArg_ParseTuple(args, "O!K", &PyTuple_Type, &t, &step))
		return NULL;
	struct opscope_schedule s;
	if (py_parse_schedule(t, &s) != 0)
		return NULL;
	return PyLong_FromLong(opscope_schedule_state(&s, step));
}

/* schedule_from_range(start, end) -> (closed, ready, record, repeat, skip_first) */
static PyObject *py_schedule_from_range(PyObject *mod, PyObject *args)
{
	(void)mod;
	long long start, end;
	if (!PyArg_ParseTuple(args, "LL", &start, &end))
		return NULL;
	struct opscope_schedule s;
	if (opscope_schedule_from_range(start, end, &s) != 0) {
		PyErr_SetString(PyExc_ValueError, "scheduler (start, end) needs end > start");
		return NULL;
	}
	return Py_BuildValue("(IIIII)", s.closed, s.ready, s.record, s.repeat, s.skip_first);
}

/* ---------------------------------------------------------------------------------------- */
/* The profiler object. */

typedef struct {
	PyObject_HEAD struct opscope_profiler *prof;
	PyObject *state_fn;			 /* a callable(step) -> state, or NULL */
	PyObject *on_ready;			 /* a callable(path), or NULL */
	PyObject *err_type, *err_value, *err_tb; /* first exception of a callback */
} ProfilerObject;

static void prof_keep_error(ProfilerObject *self)
{
	if (self->err_type) {
		PyErr_Clear();
		return;
	}
	PyErr_Fetch(&self->err_type, &self->err_value, &self->err_tb);
}

/* After a C call that may have run callbacks: re-raise what they raised. */
static int prof_reraise(ProfilerObject *self)
{
	if (!self->err_type)
		return 0;
	PyErr_Restore(self->err_type, self->err_value, self->err_tb);
	self->err_type = self->err_value = self->err_tb = NULL;
	return -1;
}

static int prof_state_cb(uint64_t step, void *user)
{
	ProfilerObject *self = user;
	if (self->err_type)
		return OPSCOPE_STATE_CLOSED;
	PyObject *r = PyObject_CallFunction(self->state_fn, "K", (unsigned long long)step);
	if (!r) {
		prof_keep_error(self);
		return OPSCOPE_STATE_CLOSED;
	}
	long v = PyLong_AsLong(r);
	Py_DECREF(r);
	if (v == -1 && PyErr_Occurred()) {
		prof_keep_error(self);
		return OPSCOPE_STATE_CLOSED;
	}
	return (int)v;
}

static void prof_ready_cb(struct opscope_profiler *prof, const char *path, void *user)
{
	(void)prof;
	ProfilerObject *self = user;
	if (!self->on_ready)
		return;
	PyObject *r = PyObject_CallFunction(self->on_ready, "s", path);
	if (!r)
		prof_keep_error(self);
	Py_XDECREF(r);
}

static int prof_init(PyObject *o, PyObject *args, PyObject *kw)
{
	ProfilerObject *self = (ProfilerObject *)o;
	static char *names[] = { "output",     "schedule",  "state_fn",	   "on_ready", "timer_only",
				 "skip_steps", "sample_hz", "sample_mode", NULL };
	const char *output = NULL, *mode = "cpu";
	PyObject *sched = Py_None, *state_fn = Py_None, *on_ready = Py_None;
	int timer_only = 0, skip = 0;
	unsigned int hz = 0;
	if (self->prof) {
		PyErr_SetString(PyExc_RuntimeError, "Profiler already initialized");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|zOOOpiIs", names, &output, &sched, &state_fn,
					 &on_ready, &timer_only, &skip, &hz, &mode))
		return -1;
	/* CPU stack sampling in every window (the CPU_SAMPLING target): a session option. */
	struct opscope_options session = { .sample_hz = hz };
	if (py_sample_mode(mode, &session.sample_mode) != 0)
		return -1;
	struct opscope_schedule s;
	struct opscope_profiler_options opts = { .output = output,
						 .timer_only = timer_only,
						 .skip_steps = skip,
						 .user = self,
						 .on_trace_ready = prof_ready_cb,
						 .session = &session };
	if (sched != Py_None) {
		if (!PyTuple_Check(sched) || py_parse_schedule(sched, &s) != 0) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError, "schedule must be a 5-tuple");
			return -1;
		}
		opts.schedule = &s;
	}
	if (state_fn != Py_None) {
		if (!PyCallable_Check(state_fn)) {
			PyErr_SetString(PyExc_TypeError, "state_fn must be callable");
			return -1;
		}
		Py_INCREF(state_fn);
		self->state_fn = state_fn;
		opts.state_fn = prof_state_cb;
	}
	if (on_ready != Py_None) {
		Py_INCREF(on_ready);
		self->on_ready = on_ready;
	}
	self->prof = py_runtime.profiler_create(&opts);
	if (prof_reraise(self) != 0) {
		if (self->prof)
			py_runtime.profiler_destroy(self->prof);
		self->prof = NULL;
		return -1;
	}
	if (!self->prof) {
		py_raise(OPSCOPE_EINVAL);
		return -1;
	}
	return 0;
}

static void prof_dealloc(PyObject *o)
{
	ProfilerObject *self = (ProfilerObject *)o;
	if (self->prof)
		py_runtime.profiler_destroy(self->prof);
	Py_XDECREF(self->state_fn);
	Py_XDECREF(self->on_ready);
	Py_XDECREF(self->err_type);
	Py_XDECREF(self->err_value);
	Py_XDECREF(self->err_tb);
	Py_TYPE(o)->tp_free(o);
}

static int prof_check(ProfilerObject *self)
{
	if (!self->prof) {
		PyErr_SetString(PyExc_RuntimeError, "Profiler not initialized");
		return -1;
	}
	return 0;
}

/* Run a C profiler call and turn its result and callback errors into Python. */
static PyObject *prof_done(ProfilerObject *self, int rc)
{
	fflush(stdout); /* the Perf Summary is printed with C stdio */
	if (prof_reraise(self) != 0)
		return NULL;
	if (rc != 0)
		return py_raise(rc);
	Py_RETURN_NONE;
}

static PyObject *prof_start(PyObject *o, PyObject *unused)
{
	(void)unused;
	ProfilerObject *self = (ProfilerObject *)o;
	if (prof_check(self))
		return NULL;
	return prof_done(self, py_runtime.profiler_start(self->prof));
}

static PyObject *prof_step(PyObject *o, PyObject *args)
{
	ProfilerObject *self = (ProfilerObject *)o;
	long long n = -1;
	if (prof_check(self) || !PyArg_ParseTuple(args, "|L", &n))
		return NULL;
	return prof_done(self, py_runtime.profiler_step(self->prof, (int64_t)n));
}

static PyObject *prof_stop(PyObject *o, PyObject *unused)
{
	(void)unused;
	ProfilerObject *self = (ProfilerObject *)o;
	if (prof_check(self))
		return NULL;
	fflush(stdout);
	PyObject *r = PyObject_CallMethod(PySys_GetObject("stdout"), "flush", NULL);
	if (!r)
		PyErr_Clear();
	Py_XDECREF(r);
	return prof_done(self, py_runtime.profiler_stop(self->prof));
}

static PyObject *prof_state(PyObject *o, PyObject *unused)
{
	(void)unused;
	ProfilerObject *self = (ProfilerObject *)o;
	if (prof_check(self))
		return NULL;
	return PyLong_FromLong(py_runtime.profiler_state(self->prof));
}

static PyObject *prof_step_num(PyObject *o, PyObject *unused)
{
	(void)unused;
	ProfilerObject *self = (ProfilerObject *)o;
	if (prof_check(self))
		return NULL;
	return PyLong_FromUnsignedLongLong(py_runtime.profiler_step_num(self->prof));
}

static PyObject *prof_step_info(PyObject *o, PyObject *args)
{
	ProfilerObject *self = (ProfilerObject *)o;
	const char *unit = NULL;
	if (prof_check(self) || !PyArg_ParseTuple(args, "|z", &unit))
		return NULL;
	char buf[512];
	int n = py_runtime.profiler_step_info(self->prof, unit, buf, sizeof buf);
	if (n < 0)
		return py_raise(n);
	return PyUnicode_FromString(buf);
}

static PyObject *prof_bench_summary(PyObject *o, PyObject *unused)
{
	(void)unused;
	ProfilerObject *self = (ProfilerObject *)o;
	if (prof_check(self))
		return NULL;
	struct opscope_bench_summary s;
	int rc = py_runtime.profiler_bench_summary(self->prof, &s);
	if (rc != 0)
		return py_raise(rc);
	return Py_BuildValue("{s:K,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:O,s:d}", "steps",
			     (unsigned long long)s.steps, "reader_avg_s", s.reader_avg_s,
			     "reader_max_s", s.reader_max_s, "reader_min_s", s.reader_min_s,
			     "batch_avg_s", s.batch_avg_s, "batch_max_s", s.batch_max_s,
			     "batch_min_s", s.batch_min_s, "ips_avg", s.ips_avg, "ips_max",
			     s.ips_max, "ips_min", s.ips_min, "samples_mode",
			     s.samples_mode ? Py_True : Py_False, "reader_ratio", s.reader_ratio);
}

static PyMethodDef prof_methods[] = {
	{ "start", prof_start, METH_NOARGS, "begin step 0" },
	{ "step", prof_step, METH_VARARGS, "step(num_samples=-1): end this step, begin the next" },
	{ "stop", prof_stop, METH_NOARGS, "end the last step; deliver a window still recording" },
	{ "state", prof_state, METH_NOARGS, "the state of the current step" },
	{ "step_num", prof_step_num, METH_NOARGS, "the current step number" },
	{ "step_info", prof_step_info, METH_VARARGS, "step_info(unit=None): averages since last" },
	{ "bench_summary", prof_bench_summary, METH_NOARGS, "the Perf Summary figures as a dict" },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject ProfilerType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "opscope._opscope.Profiler",
	.tp_basicsize = sizeof(ProfilerObject),
	.tp_dealloc = prof_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Profiler(output=None, schedule=None, state_fn=None, on_ready=None, "
		  "timer_only=False, skip_steps=0): the C profiler object",
	.tp_methods = prof_methods,
	.tp_init = prof_init,
	.tp_new = PyType_GenericNew,
};

/* ---------------------------------------------------------------------------------------- */
/* Tools: export and read back. */

static struct model *py_load(const char *path)
{
	struct model *m = model_new();
	if (!m) {
		PyErr_NoMemory();
		return NULL;
	}
	char err[512] = "";
	int rc;
	Py_BEGIN_ALLOW_THREADS rc = opscope_load_file(m, path, err, sizeof err);
	Py_END_ALLOW_THREADS if (rc != 0)
	{
		model_free(m);
		PyErr_Format(PyExc_OSError, "%s", err[0] ? err : opscope_strerror(rc));
		return NULL;
	}
	return m;
}

/* export(trace, out, format="chrome") */
/* report(path, views=None, sort="CPUTotal", op_detail=True, thread_sep=False,
 * time_unit="ms", format="text") -> str: what `opscope report` prints, by the same code. */
static PyObject *py_report(PyObject *mod, PyObject *args, PyObject *kw)
{
	(void)mod;
	static char *names[] = { "path",       "views",	    "sort",   "op_detail",
				 "thread_sep", "time_unit", "format", NULL };
	const char *path, *views = NULL, *sort = "CPUTotal", *unit = "ms", *format = "text";
	int op_detail = 1, thread_sep = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "s|zsppss", names, &path, &views, &sort,
					 &op_detail, &thread_sep, &unit, &format))
		return NULL;
	struct report_opts ro = { .sort = SORT_CPU_TOTAL,
				  .op_detail = op_detail != 0,
				  .thread_sep = thread_sep != 0,
				  .views_explicit = views != NULL,
				  .group_by = REPORT_GROUP_NAME };
	struct rformat_opts fo = { RFORMAT_TEXT, rformat_unit(unit), 0, NULL, 0 };
	int key = report_sort_from_name(sort);
	if (key < 0 || fo.unit < 0)
		return PyErr_Format(PyExc_ValueError, "opscope: bad %s",
				    key < 0 ? "sort key" : "time unit");
	ro.sort = (enum report_sort)key;
	int fmt = rformat_from_name(format);
	if (fmt < 0)
		return PyErr_Format(PyExc_ValueError,
				    "opscope: format must be text, csv, json or html");
	fo.format = (enum rformat)fmt;
	ro.html = fmt == RFORMAT_HTML; /* the page's own tables too */
	struct model *m = model_new();
	if (!m)
		return PyErr_NoMemory();
	ro.want_flops = report_views_want_flops(views);
	m->keep_arg_keys = report_arg_keys_for(&ro); /* what the views read, as opscope report */
	char err[512];
	PyThreadState *ts = PyEval_SaveThread(); /* loading may take a while: let others run */
	int rc = import_load_path(m, path, err, sizeof(err));
	PyEval_RestoreThread(ts);
	if (rc != 0) {
		model_free(m);
		return PyErr_Format(PyExc_RuntimeError, "opscope: %s", err);
	}
	struct report_ctx ctx;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = NULL;
	rc = report_ctx_init(&ctx, m, &ro);
	if (rc == 0)
		rc = report_run_views(&ctx, report_view_listed, (void *)views);
	if (rc == 0 && (out = open_memstream(&buf, &len)) != NULL) {
		const char *inputs[] = { path };
		rc = report_render(out, ctx.tables, ctx.ntables, &fo, inputs, 1);
		fclose(out);
	}
	report_ctx_free(&ctx);
	model_free(m);
	if (rc != 0 || !out) {
		free(buf);
		return PyErr_NoMemory();
	}
	PyObject *res = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
	free(buf);
	return res;
}

static PyObject *py_export(PyObject *mod, PyObject *args, PyObject *kw)
{
	(void)mod;
	static char *names[] = { "trace", "out", "format", NULL };
	const char *trace, *out, *format = "chrome";
	if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|s", names, &trace, &out, &format))
		return NULL;
	const struct format *ops = export_find(format);
	if (!ops) {
		PyErr_Format(PyExc_ValueError, "unknown export format '%s'", format);
		return NULL;
	}
	struct model *m = py_load(trace);
	if (!m)
		return NULL;
	FILE *f = fopen(out, "w");
	if (!f) {
		model_free(m);
		return PyErr_SetFromErrnoWithFilename(PyExc_OSError, out);
	}
	char err[512] = "";
	int rc;
	Py_BEGIN_ALLOW_THREADS rc = ops->export(m, f, err, sizeof err);
	if (fclose(f) != 0 && rc == 0)
		rc = OPSCOPE_EIO;
	Py_END_ALLOW_THREADS model_free(m);
	if (rc != 0) {
		PyErr_Format(PyExc_OSError, "%s", err[0] ? err : opscope_strerror(rc));
		return NULL;
	}
	Py_RETURN_NONE;
}

/* read_ranges(trace) -> [(name, category_name, tid, start_ns, dur_ns, depth)] */
static PyObject *py_read_ranges(PyObject *mod, PyObject *arg)
{
	(void)mod;
	const char *path = PyUnicode_AsUTF8(arg);
	if (!path)
		return NULL;
	struct model *m = py_load(path);
	if (!m)
		return NULL;
	PyObject *list = PyList_New(0);
	for (uint32_t t = 0; list && t < m->ntracks; t++) {
		const struct model_track *tr = &m->tracks[t];
		for (uint64_t i = 0; i < tr->nranges; i++) {
			PyObject *row = Py_BuildValue(
				"(ssKLLI)", model_str(m, tr->ranges.name[i]),
				opscope_category_name(tr->ranges.category[i]),
				(unsigned long long)tr->tid, (long long)tr->ranges.start_ns[i],
				(long long)tr->ranges.dur_ns[i], tr->ranges.depth[i]);
			if (!row || PyList_Append(list, row) != 0) {
				Py_XDECREF(row);
				Py_CLEAR(list);
				break;
			}
			Py_DECREF(row);
		}
	}
	model_free(m);
	return list;
}

static PyObject *py_export_formats(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	PyObject *l = PyList_New(0);
	for (const struct format *e = export_next(NULL); l && e; e = export_next(e)) {
		PyObject *s = PyUnicode_FromString(e->name);
		if (!s || PyList_Append(l, s) != 0)
			Py_CLEAR(l);
		Py_XDECREF(s);
	}
	return l;
}

/* ---------------------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
	{ "session_start", (PyCFunction)(void (*)(void))py_session_start,
	  METH_VARARGS | METH_KEYWORDS,
	  "session_start(output=None, sample_hz=0, sample_mode='cpu') -> path" },
	{ "session_stop", py_session_stop, METH_NOARGS, "stop the session, close its file" },
	{ "session_flush", py_session_flush, METH_NOARGS, "write what is buffered" },
	{ "gpu_start", py_gpu_start, METH_NOARGS, "start the GPU collector: '' or why not" },
	{ "session_active", py_session_active, METH_NOARGS, "True while a session records" },
	{ "session_path", py_session_path, METH_NOARGS, "file of the active or last session" },
	{ "range_begin", py_range_begin, METH_VARARGS, "range_begin(category, name) -> token" },
	{ "range_end", py_range_end, METH_O, "range_end(token)" },
	{ "instant", py_instant, METH_VARARGS, "instant(category, name)" },
	{ "counter", py_counter, METH_VARARGS, "counter(name, value)" },
	{ "timer_add", py_timer_add, METH_VARARGS, "timer_add(name, ns): one timer sample" },
	{ "timer_get", py_timer_get, METH_VARARGS,
	  "timer_get(name) -> (count, total_ns, avg_ns, max_ns, min_ns) or None" },
	{ "timers_table", py_timers_table, METH_NOARGS, "timers_table() -> str" },
	{ "timers_reset", py_timers_reset, METH_NOARGS, "timers_reset(): zero every timer" },
	{ "recording", py_recording, METH_NOARGS, "True while a session records" },
	{ "step", py_step, METH_VARARGS, "step(num_samples=-1): opscope_step" },
	{ "step_end", py_step_end, METH_VARARGS,
	  "step_end(num_samples=-1): end the step, begin none" },
	{ "reader_begin", py_reader_begin, METH_NOARGS, "the data loader starts a batch" },
	{ "reader_end", py_reader_end, METH_NOARGS, "the batch is there" },
	{ "thread_name", py_thread_name, METH_O, "name the calling thread in traces" },
	{ "torch_api", py_torch_api, METH_NOARGS, "address of the recording functions (ctypes)" },
	{ "recording_path", py_recording_path, METH_NOARGS,
	  "under `opscope record`: the file recorded into (flushed), else None" },
	{ "report", (PyCFunction)(void (*)(void))py_report, METH_VARARGS | METH_KEYWORDS,
	  "report(path, views, sort, op_detail, thread_sep, time_unit, format) -> str" },
	{ "category_name", py_category_name, METH_O, "category_name(int) -> str" },
	{ "schedule_state", py_schedule_state, METH_VARARGS,
	  "schedule_state((closed, ready, record, repeat, skip_first), step) -> state" },
	{ "schedule_from_range", py_schedule_from_range, METH_VARARGS,
	  "schedule_from_range(start, end) -> 5-tuple" },
	{ "export", (PyCFunction)(void (*)(void))py_export, METH_VARARGS | METH_KEYWORDS,
	  "export(trace, out, format='chrome')" },
	{ "export_formats", py_export_formats, METH_NOARGS, "names of the exporters" },
	{ "read_ranges", py_read_ranges, METH_O,
	  "read_ranges(trace) -> [(name, category, tid, start_ns, dur_ns, depth)]" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	"opscope._opscope",
	"C core of opscope: sessions, ranges, the profiler and the function profiler",
	-1,
	NULL,
	NULL,
	NULL,
	NULL,
	NULL,
};

PyMODINIT_FUNC PyInit__opscope(void);

PyMODINIT_FUNC PyInit__opscope(void)
{
	if (PyType_Ready(&ProfilerType) < 0)
		return NULL;
	py_runtime_init();
	PyObject *m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (PyModule_AddFunctions(m, module_methods) != 0 ||
	    PyModule_AddFunctions(m, pyfunc_methods) != 0 ||
	    PyModule_AddFunctions(m, modules_methods) != 0 || pyfunc_init(m) != 0 ||
	    modules_init(m) != 0)
		goto fail;
	Py_INCREF(&ProfilerType);
	if (PyModule_AddObject(m, "Profiler", (PyObject *)&ProfilerType) != 0) {
		Py_DECREF(&ProfilerType);
		goto fail;
	}
	if (PyModule_AddStringConstant(m, "__version__", "0.1.0") != 0 ||
	    PyModule_AddIntConstant(m, "CATEGORY_COUNT", OPSCOPE_CAT_COUNT_) != 0 ||
	    PyModule_AddIntConstant(m, "PRELOADED_RUNTIME", py_runtime.preloaded) != 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
