/*
 * _pyfunc.c: the deterministic Python function profiler of the extension (opscope.pyfunc):
 * a C profile function (Py_tracefunc) installed on every thread state of the interpreter,
 * and on threads started later through threading.setprofile(_thread_installer), that counts
 * every call and return of Python and C functions the way cProfile does, so the result is a
 * pstats dictionary that pstats, snakeviz and gprof2dot read.
 *
 * Two ways in, chosen at start (cProfile's `builtins` flag):
 *   - builtins=True (cProfile's default): the profile function above. It sees C functions,
 *     but CPython 3.11 charges every call for having one at all: each Python call gets a
 *     frame object and a line number, and every instruction takes the tracing dispatch
 *     (about 70 ns per call on fib, bench/bench_pyfunc.py, before this code does anything).
 *     The function only logs each event (function index, clock), and the thread's log is
 *     counted in one loop when it is full, before stats and at stop (unless ranges are
 *     emitted: those are made as the events happen);
 *   - builtins=False: a frame-evaluation function (PEP 523) for the interpreter, wrapped
 *     around the default one. It sees Python functions only (time in C functions stays with
 *     their Python caller, as in cProfile's builtins=False), costs a C-level call per
 *     Python call (3.11 inlines Python-to-Python calls otherwise) and nothing per
 *     instruction, and reaches every thread, started later or not, with no per-thread
 *     installation. CPython 3.11 only: it reads the interpreter's frame struct.
 *
 * Invariants:
 *   - every hook call runs with the GIL held, so a thread's tables are touched by that thread
 *     (events) or by a thread holding the GIL (stats, stop), never concurrently;
 *   - per thread (struct pf_thread, the profile function's `obj`): a call stack of (function,
 *     caller edge, start ticks, child ticks), tables of functions and of (caller, callee)
 *     edges, and the log of events not counted yet, which holds function indices (the
 *     table holds the code objects); recursion levels are per thread, so two threads in the
 *     same function do not count as recursion;
 *   - a function is keyed by its code object (held, so the address is not reused) or, for C
 *     functions, by its PyMethodDef (bound methods of every instance share one entry, like
 *     cProfile); its label is computed once when the entry is made;
 *   - counts follow cProfile: ncalls on every return; primitive calls and cumulative time only
 *     when the function's (or edge's) recursion level drops to 0, so cumulative time counts
 *     outermost activations once; own time = elapsed - time in callees, for every activation;
 *   - a return with an empty stack belongs to a frame entered before the profiler started
 *     and is ignored; frames still open at stop() are counted as returning then (cProfile
 *     does the same in disable()). In the frame-evaluation mode a frame's return is counted
 *     only if its call was, in the same run (pf_run, bumped at every start and stop).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opscope/opscope.h"

#include "_opscope.h" /* Python.h; its order is free: the build defines _GNU_SOURCE */
#include "record/clock.h"
#include "record/record.h"

/* A frame's code object, borrowed. On CPython 3.11 it is read from the frame through the
 * interpreter's internal header, without PyFrame_GetCode's call and reference count: this
 * module is built for one interpreter version, and the call was a tenth of what the hook adds
 * per Python call (bench/bench_pyfunc.py). Other versions take the public call. */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#define PF_FRAME_CODE(frame)	 ((PyObject *)(frame)->f_frame->f_code)
#define PF_FRAME_CODE_DONE(code) ((void)(code))
#define PF_EVAL_FRAME		 1 /* the frame-evaluation mode (builtins=False) is built */
#else
#define PF_FRAME_CODE(frame)	 ((PyObject *)PyFrame_GetCode(frame))
#define PF_FRAME_CODE_DONE(code) Py_DECREF(code)
#define PF_EVAL_FRAME		 0
#endif

#define PF_NONE	   UINT32_MAX
#define PF_RETURN  (UINT32_MAX - 1) /* in the log: a return */
#define PF_LOG_CAP 2048		    /* events logged per thread before they are counted */

enum { PF_ACTIVE_PROFILE = 1, PF_ACTIVE_EVAL = 2 }; /* builtins=True, builtins=False */

struct pf_func {
	const void *key;  /* code object or PyMethodDef */
	PyObject *code;	  /* the code object (strong), or NULL for C functions */
	PyObject *label;  /* C functions: "<built-in method builtins.len>" (strong) */
	uint64_t nc, cc;  /* calls, primitive calls */
	uint64_t tt, ct;  /* own and cumulative ticks */
	uint32_t rec;	  /* activations open on this thread */
	uint32_t name_id; /* interned range name, 0 until first emitted */
	/* The edge of the last call from `last_caller`: most calls repeat their caller's, so
	 * this saves the edge map's look-up (PF_NONE until the first call). */
	uint32_t last_caller, last_edge;
};

struct pf_edge {
	uint32_t caller, callee; /* indices in funcs */
	uint64_t nc, cc, tt, ct; /* as pf_func, for calls along this edge */
	uint32_t rec;		 /* open activations along this edge */
};

struct pf_frame {
	uint32_t func;	/* index in funcs */
	uint32_t edge;	/* index in edges, PF_NONE at the root */
	uint64_t t0;	/* ticks at the call */
	uint64_t child; /* ticks spent in callees */
	uint32_t begun; /* 1: a range was emitted and must be ended */
};

/* An open-addressing map from a non-zero 64-bit key to a 32-bit index. */
struct pf_map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n; /* cap is a power of two; n <= cap / 2 */
};

/* A direct-mapped cache in front of the function map: a hit is a shift, a load and a
 * compare. Keys are code objects held by their pf_func or static PyMethodDefs, so an address
 * in the cache never names another function later. */
#define PF_CACHE_SLOTS 256
struct pf_cache_slot {
	const void *key;
	uint32_t func;
};

/* An event of the log: a call of function `func` (PF_NONE if unknown), or a return. */
struct pf_logged {
	uint64_t ticks;
	uint32_t func;
};

struct pf_thread {
	PyObject_HEAD struct pf_func *funcs;
	size_t nfuncs, funcs_cap;
	struct pf_edge *edges;
	size_t nedges, edges_cap;
	struct pf_frame *stack;
	size_t depth, stack_cap;
	struct pf_map fmap, emap;
	unsigned long thread_id; /* PyThread_get_thread_ident of the owner */
	uintptr_t stack_floor;	 /* below this C stack address, calls fail (ditto) */
	struct pf_cache_slot cache[PF_CACHE_SLOTS];
	struct pf_logged *log; /* events not counted yet (profile function, no ranges) */
	size_t nlog, log_cap;
	size_t lost; /* open calls that could not be pushed (no memory), above the stack */
};

static PyTypeObject pf_thread_type;

static PyObject *pf_threads;	  /* list of every pf_thread of this run */
static int pf_active;		  /* between start and stop: how it records (PF_ACTIVE_*) */
static int pf_emit;		  /* emit PythonFunction ranges into a recording session */
static double pf_ticks_per_s;	  /* for the conversion to seconds */
static uint64_t pf_run;		  /* bumped at every start and stop */
static uint64_t pf_test_drain_ns; /* tests: time each drain of a log takes at least */
static PyObject *pf_test_refused; /* tests: a code object whose entry "cannot be made" */

/* ---------------------------------------------------------------------------------------- */
/* Maps u64 -> u32 (keys never 0). Not util/hashmap.h's struct hmap yet: pf_map_find hands
 * back the empty slot a miss would take, so the insert after it probes no second time (the
 * profile hook's path); hmap has no such call, and the change was not measured. */

static uint64_t pf_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static int pf_map_grow(struct pf_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = calloc(cap, sizeof *keys);
	uint32_t *vals = calloc(cap, sizeof *vals);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = pf_hash(m->keys[i]) & (cap - 1);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

/* The slot of `key` in *slot: its value there, or PF_NONE and the empty slot it would take. */
static uint32_t pf_map_find(const struct pf_map *m, uint64_t key, size_t *slot)
{
	if (m->cap == 0)
		return PF_NONE;
	size_t j = pf_hash(key) & (m->cap - 1);
	while (m->keys[j]) {
		if (m->keys[j] == key) {
			*slot = j;
			return m->vals[j];
		}
		j = (j + 1) & (m->cap - 1);
	}
	*slot = j;
	return PF_NONE;
}

static void pf_map_free(struct pf_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------------------------------- */
/* Labels of C functions, in cProfile's words: "<built-in method builtins.len>" for module
 * functions, "<method 'append' of 'list' objects>" for methods found on the type. */

static PyObject *pf_c_label(PyObject *callable)
{
	if (!PyCFunction_Check(callable))
		return PyObject_Repr(callable);
	PyCFunctionObject *fn = (PyCFunctionObject *)callable;
	const char *name = fn->m_ml->ml_name;
	PyObject *self = fn->m_self;
	if (self && !PyModule_Check(self)) {
		PyObject *attr = PyObject_GetAttrString((PyObject *)Py_TYPE(self), name);
		if (attr) {
			PyObject *r = PyObject_Repr(attr);
			Py_DECREF(attr);
			if (r)
				return r;
		}
		PyErr_Clear();
	}
	PyObject *mod = fn->m_module;
	if (mod && PyUnicode_Check(mod))
		return PyUnicode_FromFormat("<built-in method %U.%s>", mod, name);
	if (self && PyModule_Check(self)) {
		const char *mname = PyModule_GetName(self);
		if (mname)
			return PyUnicode_FromFormat("<built-in method %s.%s>", mname, name);
		PyErr_Clear();
	}
	return PyUnicode_FromFormat("<built-in method %s>", name);
}

/* ---------------------------------------------------------------------------------------- */
/* The hot path. */

/* The slow paths of the hot path below: a function or an edge seen for the first time on
 * this thread, or not in the cache. */
__attribute__((noinline)) static uint32_t pf_func_get(struct pf_thread *t, const void *key,
						      PyObject *code, PyObject *callable)
{
	if (__builtin_expect(code && code == pf_test_refused, 0))
		return PF_NONE; /* as if its entry could not be made */
	size_t slot = 0;
	uint32_t i = pf_map_find(&t->fmap, (uint64_t)(uintptr_t)key, &slot);
	if (i != PF_NONE)
		return i;
	if (t->nfuncs == t->funcs_cap) {
		size_t cap = t->funcs_cap ? t->funcs_cap * 2 : 64;
		struct pf_func *f = realloc(t->funcs, cap * sizeof *f);
		if (!f)
			return PF_NONE;
		t->funcs = f;
		t->funcs_cap = cap;
	}
	if ((t->fmap.n + 1) * 2 > t->fmap.cap) {
		if (pf_map_grow(&t->fmap) != 0)
			return PF_NONE;
		pf_map_find(&t->fmap, (uint64_t)(uintptr_t)key, &slot);
	}
	struct pf_func *f = &t->funcs[t->nfuncs];
	memset(f, 0, sizeof *f);
	f->key = key;
	f->last_caller = f->last_edge = PF_NONE;
	if (code) {
		Py_INCREF(code);
		f->code = code;
	} else {
		/* The label is made now, while the callable is at hand; an exception in its repr
		 * must not leak into the profiled program. */
		PyObject *et, *ev, *tb;
		PyErr_Fetch(&et, &ev, &tb);
		f->label = pf_c_label(callable);
		if (!f->label)
			PyErr_Clear();
		PyErr_Restore(et, ev, tb);
	}
	t->fmap.keys[slot] = (uint64_t)(uintptr_t)key;
	t->fmap.vals[slot] = (uint32_t)t->nfuncs;
	t->fmap.n++;
	return (uint32_t)t->nfuncs++;
}

__attribute__((noinline)) static uint32_t pf_edge_get(struct pf_thread *t, uint32_t caller,
						      uint32_t callee)
{
	uint64_t key = ((uint64_t)(caller + 1u) << 32) | (uint64_t)(callee + 1u);
	size_t slot = 0;
	uint32_t i = pf_map_find(&t->emap, key, &slot);
	if (i != PF_NONE)
		return i;
	if (t->nedges == t->edges_cap) {
		size_t cap = t->edges_cap ? t->edges_cap * 2 : 64;
		struct pf_edge *e = realloc(t->edges, cap * sizeof *e);
		if (!e)
			return PF_NONE;
		t->edges = e;
		t->edges_cap = cap;
	}
	if ((t->emap.n + 1) * 2 > t->emap.cap) {
		if (pf_map_grow(&t->emap) != 0)
			return PF_NONE;
		pf_map_find(&t->emap, key, &slot);
	}
	struct pf_edge *e = &t->edges[t->nedges];
	memset(e, 0, sizeof *e);
	e->caller = caller;
	e->callee = callee;
	t->emap.keys[slot] = key;
	t->emap.vals[slot] = (uint32_t)t->nedges;
	t->emap.n++;
	return (uint32_t)t->nedges++;
}

/* The range name of a function, interned on first use: "qualname (file:line)" or the label. */
static uint32_t pf_name_id(struct pf_func *f)
{
	if (f->name_id)
		return f->name_id;
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	PyObject *s = NULL;
	if (f->code) {
		PyCodeObject *co = (PyCodeObject *)f->code;
		s = PyUnicode_FromFormat("%U (%U:%d)", co->co_qualname, co->co_filename,
					 co->co_firstlineno);
	} else if (f->label) {
		Py_INCREF(f->label);
		s = f->label;
	}
	if (s) {
		Py_ssize_t len = 0;
		const char *u = PyUnicode_AsUTF8AndSize(s, &len);
		if (u)
			f->name_id = record_intern(u, (size_t)len);
		Py_DECREF(s);
	}
	PyErr_Clear();
	PyErr_Restore(et, ev, tb);
	return f->name_id;
}

/* The cache slot where `key` would be. */
static inline struct pf_cache_slot *pf_cache_slot(struct pf_thread *t, const void *key)
{
	return &t->cache[((uintptr_t)key >> 4) & (PF_CACHE_SLOTS - 1)];
}

/* The function index of `key` on this thread, through the cache; PF_NONE if it could not be
 * made (no memory). */
__attribute__((always_inline)) static inline uint32_t
pf_lookup(struct pf_thread *t, const void *key, PyObject *code, PyObject *callable)
{
	struct pf_cache_slot *slot = pf_cache_slot(t, key);
	if (__builtin_expect(slot->key == key, 1))
		return slot->func;
	uint32_t fi = pf_func_get(t, key, code, callable);
	if (fi != PF_NONE) {
		slot->key = key;
		slot->func = fi;
	}
	return fi;
}

/* Push a call of function `fi` (PF_NONE: unknown) started at `t0`; 0 if it is lost instead
 * (no memory, or under a lost call), to be matched by its return all the same. */
__attribute__((always_inline)) static inline int pf_push(struct pf_thread *t, uint32_t fi,
							 uint64_t t0)
{
	if (__builtin_expect(t->lost != 0 || fi == PF_NONE, 0))
		goto lost;
	if (__builtin_expect(t->depth == t->stack_cap, 0)) {
		size_t cap = t->stack_cap ? t->stack_cap * 2 : 128;
		struct pf_frame *s = realloc(t->stack, cap * sizeof *s);
		if (!s)
			goto lost;
		t->stack = s;
		t->stack_cap = cap;
	}
	struct pf_func *f = &t->funcs[fi];
	uint32_t ei = PF_NONE;
	if (t->depth > 0) {
		uint32_t caller = t->stack[t->depth - 1].func;
		if (__builtin_expect(f->last_caller == caller, 1)) {
			ei = f->last_edge;
		} else {
			ei = pf_edge_get(t, caller, fi);
			if (ei != PF_NONE) {
				f->last_caller = caller;
				f->last_edge = ei;
			}
		}
		if (ei != PF_NONE)
			t->edges[ei].rec++;
	}
	f->rec++;
	struct pf_frame *fr = &t->stack[t->depth++];
	fr->func = fi;
	fr->edge = ei;
	fr->t0 = t0;
	fr->child = 0;
	fr->begun = 0;
	return 1;
lost:
	/* Everything above a lost call is lost too, so returns match calls by count alone. */
	t->lost++;
	return 0;
}

/* Pop the top call, returned at `now`, and count it. */
__attribute__((always_inline)) static inline void pf_pop(struct pf_thread *t, uint64_t now)
{
	if (__builtin_expect(t->lost != 0, 0)) {
		t->lost--;
		return;
	}
	if (t->depth == 0)
		return; /* a frame entered before start */
	struct pf_frame *fr = &t->stack[--t->depth];
	uint64_t elapsed = now > fr->t0 ? now - fr->t0 : 0;
	uint64_t own = elapsed > fr->child ? elapsed - fr->child : 0;
	if (t->depth > 0)
		t->stack[t->depth - 1].child += elapsed;
	struct pf_func *f = &t->funcs[fr->func];
	f->nc++;
	f->tt += own;
	if (--f->rec == 0) {
		f->cc++;
		f->ct += elapsed;
	}
	if (fr->edge != PF_NONE) {
		struct pf_edge *e = &t->edges[fr->edge];
		e->nc++;
		e->tt += own;
		if (--e->rec == 0) {
			e->cc++;
			e->ct += elapsed;
		}
	}
	if (fr->begun) {
		if (py_runtime.preloaded)
			py_runtime.range_end();
		else
			record_emit_end(f->name_id);
	}
}

/* A call counted as it happens: pushed, its range begun when ranges are emitted, its clock
 * read last so that the bookkeeping is not charged to it. 0 if it was lost. */
__attribute__((always_inline)) static inline int pf_enter(struct pf_thread *t, uint32_t fi)
{
	if (!pf_push(t, fi, 0))
		return 0;
	struct pf_frame *fr = &t->stack[t->depth - 1];
	if (__builtin_expect(pf_emit, 0) && py_runtime_recording()) {
		uint32_t id = pf_name_id(&t->funcs[fi]);
		if (id && !py_runtime.preloaded) {
			record_emit_begin(OPSCOPE_CAT_PYTHON_FUNCTION, id);
			fr->begun = 1;
		} else if (id) {
			/* the interned copy's address is stable: the preloaded runtime's pointer
			 * cache makes this a hash and a compare */
			py_runtime.range_begin(OPSCOPE_CAT_PYTHON_FUNCTION,
					       record_string(id, NULL));
			fr->begun = 1;
		}
	}
	fr->t0 = clock_ticks();
	return 1;
}

/* Log event `fi` (a function index, or PF_RETURN) now; the log has room. */
static inline void pf_log(struct pf_thread *t, uint32_t fi)
{
	struct pf_logged *l = &t->log[t->nlog++];
	l->func = fi;
	l->ticks = clock_ticks();
}

/* Count the logged events of a thread, in order. */
static void pf_drain(struct pf_thread *t)
{
	const struct pf_logged *l = t->log, *end = t->log + t->nlog;
	t->nlog = 0;
	for (; l < end; l++) {
		if (l->func == PF_RETURN)
			pf_pop(t, l->ticks);
		else
			pf_push(t, l->func, l->ticks);
	}
}

/* Before stats and at stop: every thread's log counted. The time that takes is that of the
 * call asking for it (pyfunc_stats, pyfunc_stop), as cProfile's would be. */
static void pf_drain_all(void)
{
	Py_ssize_t n = PyList_GET_SIZE(pf_threads);
	for (Py_ssize_t i = 0; i < n; i++)
		pf_drain((struct pf_thread *)PyList_GET_ITEM(pf_threads, i));
}

/* Room in the log of the calling thread for one more event: the log counted, or made at the
 * first event. 0 if there is no log (no memory); the event is then counted at once.
 * Counting a full log happens inside whichever call the program is in, and is not the
 * program's time: the calls still open get it added to their start, so none of it is
 * charged to them. */
__attribute__((noinline)) static int pf_log_room(struct pf_thread *t)
{
	if (!t->log) {
		t->log = malloc(PF_LOG_CAP * sizeof *t->log);
		if (!t->log)
			return 0;
		t->log_cap = PF_LOG_CAP;
		return 1;
	}
	uint64_t begin = clock_ticks();
	pf_drain(t);
	if (__builtin_expect(pf_test_drain_ns != 0, 0)) { /* a slow count, for the tests */
		uint64_t until = clock_mono_ns() + pf_test_drain_ns;
		while (clock_mono_ns() < until)
			;
	}
	uint64_t spent = clock_ticks() - begin;
	for (size_t d = 0; d < t->depth; d++)
		t->stack[d].t0 += spent;
	return 1;
}

/* An event the profile function's fast path does not log: counted at once while ranges are
 * emitted, or when the log is full (drained first) or cannot be made. */
__attribute__((noinline)) static int pf_hook_event(struct pf_thread *t, uint32_t fi)
{
	if (!pf_emit && (t->nlog < t->log_cap || pf_log_room(t)))
		pf_log(t, fi);
	else if (fi == PF_RETURN)
		pf_pop(t, clock_ticks());
	else
		pf_enter(t, fi);
	return 0;
}

/* A call of `key` that is not in the cache, or of a callable that is no plain PyCFunction. */
__attribute__((noinline)) static int pf_hook_call(struct pf_thread *t, const void *key,
						  PyObject *code, PyObject *callable)
{
	if (callable && PyCFunction_Check(callable))
		key = ((PyCFunctionObject *)callable)->m_ml;
	return pf_hook_event(t, pf_lookup(t, key, code, callable));
}

/* The profile function. Without ranges to emit, each event is only logged, a function index
 * and a clock reading, and counted later by pf_drain, once per PF_LOG_CAP events: counting
 * the log in one loop costs less than counting each event inside the hook, between the
 * interpreter's own work (bench/bench_pyfunc.py). The fast path below keeps every slow case
 * in a tail call, so that it needs no registers saved. */
static int pf_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	struct pf_thread *t = (struct pf_thread *)obj;
	uint32_t fi;
	const void *key;
	switch (what) {
	case PyTrace_CALL: {
		PyObject *code = PF_FRAME_CODE(frame);
		PF_FRAME_CODE_DONE(code); /* the frame holds it while this runs */
		key = code;
		struct pf_cache_slot *slot = pf_cache_slot(t, key);
		if (__builtin_expect(slot->key != key, 0))
			return pf_hook_call(t, key, code, NULL);
		fi = slot->func;
		break;
	}
	case PyTrace_C_CALL: {
		if (__builtin_expect(!Py_IS_TYPE(arg, &PyCFunction_Type), 0))
			return pf_hook_call(t, arg, NULL, arg);
		key = ((PyCFunctionObject *)arg)->m_ml;
		struct pf_cache_slot *slot = pf_cache_slot(t, key);
		if (__builtin_expect(slot->key != key, 0))
			return pf_hook_call(t, key, NULL, arg);
		fi = slot->func;
		break;
	}
	case PyTrace_RETURN:
	case PyTrace_C_RETURN:
	case PyTrace_C_EXCEPTION:
		fi = PF_RETURN;
		break;
	default:
		return 0;
	}
	if (__builtin_expect(pf_emit || t->nlog >= t->log_cap, 0))
		return pf_hook_event(t, fi);
	pf_log(t, fi);
	return 0;
}

/* The floor of the benchmark: a profile function that does nothing. */
static int pf_noop_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	(void)obj;
	(void)frame;
	(void)what;
	(void)arg;
	return 0;
}

/* The floor plus the clock: a profile function that reads the clock at every event and keeps
 * nothing else, so the benchmark can show how much of the profiler's added time is the two
 * reads any timing profiler makes per call, and how much is its bookkeeping. */
static volatile uint64_t pf_clock_sink;
static int pf_clock_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	(void)obj;
	(void)frame;
	(void)what;
	(void)arg;
	pf_clock_sink = clock_ticks();
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The frame-evaluation mode (builtins=False). Its state, like everything here, is guarded by
 * the GIL, which the evaluation function always runs with. */

#if PF_EVAL_FRAME
#include <pthread.h>

#define PF_STACK_MARGIN (256u << 10)

static struct pf_thread *pf_thread_new(unsigned long ident);

static _PyFrameEvalFunction pf_prev_eval; /* what runs the frames: the default, or the one
					     installed before ours */
static int pf_eval_on;			  /* 1 while the mode records */
static int pf_eval_beneath;		  /* 1: left in place under another evaluator, which
					     passes frames on to ours; a new run reuses it */
static struct pf_map pf_tstates;	  /* thread state address -> index in pf_threads */
static PyThreadState *pf_last_tstate;	  /* the thread of the last call, and its tables */
static struct pf_thread *pf_last_thread;

/* The lowest C stack address this thread's Python calls may start at in this mode: 3.11
 * evaluates a Python-to-Python call in the caller's C frame only while no evaluator is
 * installed, so here each call takes C stack (about 0.5 KiB), and a recursion that a raised
 * sys.setrecursionlimit allows could overflow the thread's stack. The margin leaves room for
 * the C code between two Python frames. 0 (no floor) if the stack is unknown. */
static uintptr_t pf_stack_floor(void)
{
	pthread_attr_t attr;
	void *low = NULL;
	size_t size = 0;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return 0;
	int rc = pthread_attr_getstack(&attr, &low, &size);
	pthread_attr_destroy(&attr);
	if (rc != 0 || !low)
		return 0;
	size_t margin = size / 4 < PF_STACK_MARGIN ? size / 4 : PF_STACK_MARGIN;
	return (uintptr_t)low + margin;
}

/* A call with too little C stack left fails as it would at the recursion limit: with the
 * remaining depth at 0, the interpreter raises RecursionError on entering the frame, before
 * running it, and unwinds it as its own check would. Not counted: cProfile sees no call
 * there either. */
__attribute__((noinline, cold)) static PyObject *
pf_eval_without_stack(PyThreadState *ts, struct _PyInterpreterFrame *frame, int throwflag)
{
	int remaining = ts->recursion_remaining;
	ts->recursion_remaining = 0;
	PyObject *result = pf_prev_eval(ts, frame, throwflag);
	ts->recursion_remaining = remaining;
	return result;
}

/* The tables of the thread owning `ts`, made at its first call. A thread state freed by a
 * thread that ended may come back at the same address for a new thread: the identity check
 * gives the new thread its own tables. May run while an exception is pending (a generator's
 * throw()), so it keeps that exception and raises none. */
__attribute__((noinline)) static struct pf_thread *pf_thread_lookup(PyThreadState *ts)
{
	unsigned long ident = (unsigned long)ts->thread_id;
	size_t slot = 0;
	uint32_t i = pf_map_find(&pf_tstates, (uint64_t)(uintptr_t)ts, &slot);
	struct pf_thread *t = NULL;
	if (i != PF_NONE) {
		t = (struct pf_thread *)PyList_GET_ITEM(pf_threads, i);
		if (t->thread_id == ident)
			goto found;
	} else if ((pf_tstates.n + 1) * 2 > pf_tstates.cap) {
		if (pf_map_grow(&pf_tstates) != 0)
			return NULL;
		pf_map_find(&pf_tstates, (uint64_t)(uintptr_t)ts, &slot);
	}
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	t = pf_thread_new(ident);
	PyErr_Clear();
	PyErr_Restore(et, ev, tb);
	if (!t)
		return NULL;
	Py_DECREF(t); /* pf_threads holds it */
	t->stack_floor = pf_stack_floor();
	if (i == PF_NONE) {
		pf_tstates.keys[slot] = (uint64_t)(uintptr_t)ts;
		pf_tstates.n++;
	}
	pf_tstates.vals[slot] = (uint32_t)(PyList_GET_SIZE(pf_threads) - 1);
found:
	pf_last_tstate = ts;
	pf_last_thread = t;
	return t;
}

/* Generators and coroutines: the frame that only makes the generator object (its first
 * instruction is RETURN_GENERATOR) is no call to cProfile; each resumption is. */
#define PF_GENERATOR_FLAGS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)

static PyObject *pf_eval(PyThreadState *ts, struct _PyInterpreterFrame *frame, int throwflag)
{
	PyCodeObject *co = frame->f_code;
	if (__builtin_expect(!pf_eval_on, 0) ||
	    ((co->co_flags & PF_GENERATOR_FLAGS) && frame->owner != FRAME_OWNED_BY_GENERATOR))
		return pf_prev_eval(ts, frame, throwflag);
	struct pf_thread *t = ts == pf_last_tstate && ts->thread_id == pf_last_thread->thread_id
				      ? pf_last_thread
				      : pf_thread_lookup(ts);
	if (__builtin_expect(!t, 0))
		return pf_prev_eval(ts, frame, throwflag);
	if (__builtin_expect((uintptr_t)__builtin_frame_address(0) < t->stack_floor, 0))
		return pf_eval_without_stack(ts, frame, throwflag);
	pf_enter(t, pf_lookup(t, co, (PyObject *)co, NULL));
	uint64_t run = pf_run;
	PyObject *result = pf_prev_eval(ts, frame, throwflag);
	uint64_t now = clock_ticks();
	/* The same run: `t` is still in pf_threads (clearing needs a stop, which bumps pf_run),
	 * and the frames above this one have returned through here, so this call is on top
	 * (or was lost, and is matched all the same). */
	if (__builtin_expect(run == pf_run, 1))
		pf_pop(t, now);
	return result;
}

static void pf_eval_install(void)
{
	PyInterpreterState *interp = PyThreadState_Get()->interp;
	if (!pf_eval_beneath) {
		pf_prev_eval = _PyInterpreterState_GetEvalFrameFunc(interp);
		_PyInterpreterState_SetEvalFrameFunc(interp, pf_eval);
	}
	pf_map_free(&pf_tstates);
	pf_last_tstate = NULL;
	pf_last_thread = NULL;
	pf_eval_on = 1;
}

/* Give the interpreter back what it had, unless another evaluator was installed over ours
 * (and may chain to it): then ours stays beneath, passing frames on while off. */
static void pf_eval_uninstall(void)
{
	PyInterpreterState *interp = PyThreadState_Get()->interp;
	pf_eval_on = 0;
	pf_eval_beneath = _PyInterpreterState_GetEvalFrameFunc(interp) != pf_eval;
	if (!pf_eval_beneath)
		_PyInterpreterState_SetEvalFrameFunc(interp, pf_prev_eval);
	pf_last_tstate = NULL;
	pf_last_thread = NULL;
}
#endif

/* ---------------------------------------------------------------------------------------- */
/* Thread objects. */

static void pf_thread_dealloc(PyObject *self)
{
	struct pf_thread *t = (struct pf_thread *)self;
	for (size_t i = 0; i < t->nfuncs; i++) {
		Py_XDECREF(t->funcs[i].code);
		Py_XDECREF(t->funcs[i].label);
	}
	free(t->funcs);
	free(t->edges);
	free(t->stack);
	free(t->log);
	pf_map_free(&t->fmap);
	pf_map_free(&t->emap);
	Py_TYPE(self)->tp_free(self);
}

static PyTypeObject pf_thread_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "opscope._opscope.PyFuncThread",
	.tp_basicsize = sizeof(struct pf_thread),
	.tp_dealloc = pf_thread_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "per-thread tables of the function profiler (internal)",
};

static struct pf_thread *pf_thread_new(unsigned long ident)
{
	struct pf_thread *t = PyObject_New(struct pf_thread, &pf_thread_type);
	if (!t)
		return NULL;
	memset((char *)t + sizeof(PyObject), 0, sizeof *t - sizeof(PyObject));
	t->thread_id = ident;
	if (PyList_Append(pf_threads, (PyObject *)t) != 0) {
		Py_DECREF(t);
		return NULL;
	}
	return t;
}

/* Install `fn` (with a fresh pf_thread each when `fn` is pf_hook) on every thread state. */
static int pf_install_all(Py_tracefunc fn)
{
	PyInterpreterState *interp = PyThreadState_Get()->interp;
	for (PyThreadState *ts = PyInterpreterState_ThreadHead(interp); ts;
	     ts = PyThreadState_Next(ts)) {
		PyObject *obj = NULL;
		if (fn == pf_hook) {
			struct pf_thread *t = pf_thread_new((unsigned long)ts->thread_id);
			if (!t)
				return -1;
			obj = (PyObject *)t;
		}
		int rc = _PyEval_SetProfile(ts, fn, obj);
		Py_XDECREF(obj); /* the thread state holds it now, and pf_threads */
		if (rc < 0)
			return -1;
	}
	return 0;
}

static void pf_uninstall_all(Py_tracefunc fn)
{
	PyInterpreterState *interp = PyThreadState_Get()->interp;
	for (PyThreadState *ts = PyInterpreterState_ThreadHead(interp); ts;
	     ts = PyThreadState_Next(ts)) {
		if (ts->c_profilefunc == fn) {
			if (_PyEval_SetProfile(ts, NULL, NULL) < 0)
				PyErr_Clear();
		}
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Module methods. */

static PyObject *pf_start(PyObject *mod, PyObject *args, PyObject *kw)
{
	(void)mod;
	static char *names[] = { "emit_ranges", "builtins", NULL };
	int emit = 0, builtins = 1;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|pp", names, &emit, &builtins))
		return NULL;
	if (pf_active) {
		PyErr_SetString(PyExc_RuntimeError, "the function profiler is already running");
		return NULL;
	}
#if !PF_EVAL_FRAME
	if (!builtins) {
		PyErr_SetString(PyExc_NotImplementedError,
				"builtins=False (frame evaluation) is built for CPython 3.11 only");
		return NULL;
	}
#endif
	pf_ticks_per_s = record_ticks_per_second(); /* calibrates the clock once */
	pf_emit = emit;
	pf_run++;
#if PF_EVAL_FRAME
	if (!builtins) {
		pf_eval_install();
		pf_active = PF_ACTIVE_EVAL;
		Py_RETURN_NONE;
	}
#endif
	if (pf_install_all(pf_hook) != 0) {
		pf_uninstall_all(pf_hook);
		return NULL;
	}
	pf_active = PF_ACTIVE_PROFILE;
	Py_RETURN_NONE;
}

/* Count the frames still open on every thread as returning now, then clear the stacks. */
static void pf_flush_open(void)
{
	pf_drain_all();
	uint64_t now = clock_ticks();
	Py_ssize_t n = PyList_GET_SIZE(pf_threads);
	for (Py_ssize_t i = 0; i < n; i++) {
		struct pf_thread *t = (struct pf_thread *)PyList_GET_ITEM(pf_threads, i);
		t->lost = 0;
		while (t->depth > 0)
			pf_pop(t, now);
	}
}

static PyObject *pf_stop(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	if (!pf_active)
		Py_RETURN_NONE;
#if PF_EVAL_FRAME
	if (pf_active == PF_ACTIVE_EVAL)
		pf_eval_uninstall();
#endif
	if (pf_active == PF_ACTIVE_PROFILE)
		pf_uninstall_all(pf_hook);
	pf_flush_open();
	pf_run++;
	pf_active = 0;
	Py_RETURN_NONE;
}

static PyObject *pf_clear(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	if (pf_active) {
		PyErr_SetString(PyExc_RuntimeError, "stop the function profiler first");
		return NULL;
	}
	if (PyList_SetSlice(pf_threads, 0, PyList_GET_SIZE(pf_threads), NULL) != 0)
		return NULL;
#if PF_EVAL_FRAME
	pf_map_free(&pf_tstates); /* its indices were into the list just emptied */
#endif
	Py_RETURN_NONE;
}

static PyObject *pf_is_active(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	return PyBool_FromLong(pf_active != 0);
}

/* For the tests: "eval" while the interpreter evaluates frames through this module (the top
 * evaluator is ours), else None. */
static PyObject *pf_evaluator(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
#if PF_EVAL_FRAME
	if (_PyInterpreterState_GetEvalFrameFunc(PyThreadState_Get()->interp) == pf_eval)
		return PyUnicode_FromString("eval");
#endif
	Py_RETURN_NONE;
}

/* threading.setprofile(_thread_installer): the first event of a new thread lands here, in
 * Python's profile trampoline; swap in the C hook for the rest of the thread's life. */
static PyObject *pf_thread_installer(PyObject *mod, PyObject *args)
{
	(void)mod;
	(void)args;
	PyThreadState *ts = PyThreadState_Get();
	if (pf_active != PF_ACTIVE_PROFILE) { /* stopped, or frame evaluation sees threads */
		if (_PyEval_SetProfile(ts, NULL, NULL) < 0)
			return NULL;
		Py_RETURN_NONE;
	}
	struct pf_thread *t = pf_thread_new((unsigned long)ts->thread_id);
	if (!t)
		return NULL;
	int rc = _PyEval_SetProfile(ts, pf_hook, (PyObject *)t);
	Py_DECREF(t);
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* For the tests: make every drain of a log take at least `ns` (0: as fast as it can). */
static PyObject *pf_set_test_drain_ns(PyObject *mod, PyObject *arg)
{
	(void)mod;
	unsigned long long ns = PyLong_AsUnsignedLongLong(arg);
	if (ns == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	pf_test_drain_ns = ns;
	Py_RETURN_NONE;
}

/* For the tests: calls of this code object (None: of none) fail as if memory ran out when
 * their function's entry is made, so they are lost, with every call above them. */
static PyObject *pf_set_test_refused(PyObject *mod, PyObject *code)
{
	(void)mod;
	if (code != Py_None && !PyCode_Check(code)) {
		PyErr_SetString(PyExc_TypeError, "a code object or None");
		return NULL;
	}
	Py_XDECREF(pf_test_refused);
	pf_test_refused = NULL;
	if (code != Py_None) {
		Py_INCREF(code);
		pf_test_refused = code;
	}
	Py_RETURN_NONE;
}

static PyObject *pf_noop_start(PyObject *mod, PyObject *args, PyObject *kw)
{
	(void)mod;
	static char *names[] = { "read_clock", NULL };
	int read_clock = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|p", names, &read_clock))
		return NULL;
	if (pf_install_all(read_clock ? pf_clock_hook : pf_noop_hook) != 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *pf_noop_stop(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	pf_uninstall_all(pf_noop_hook);
	pf_uninstall_all(pf_clock_hook);
	Py_RETURN_NONE;
}

/* The pstats key of a function: (file, line, name) or ('~', 0, label). */
static PyObject *pf_key(const struct pf_func *f)
{
	if (f->code) {
		const PyCodeObject *co = (const PyCodeObject *)f->code;
		return Py_BuildValue("(OiO)", co->co_filename, co->co_firstlineno, co->co_name);
	}
	if (f->label)
		return Py_BuildValue("(siO)", "~", 0, f->label);
	return Py_BuildValue("(sis)", "~", 0, "<unknown>");
}

/* Add (cc, nc, tt, ct) to the list [cc, nc, tt, ct, ...] at dict[key] (made if absent). */
static PyObject *pf_accumulate(PyObject *dict, PyObject *key, uint64_t cc, uint64_t nc, uint64_t tt,
			       uint64_t ct, int with_callers)
{
	PyObject *v = PyDict_GetItemWithError(dict, key);
	if (!v) {
		if (PyErr_Occurred())
			return NULL;
		v = with_callers ? Py_BuildValue("[KKddN]", 0ull, 0ull, 0.0, 0.0, PyDict_New())
				 : Py_BuildValue("[KKdd]", 0ull, 0ull, 0.0, 0.0);
		if (!v || PyDict_SetItem(dict, key, v) != 0) {
			Py_XDECREF(v);
			return NULL;
		}
		Py_DECREF(v);
	}
	uint64_t old_cc = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(v, 0));
	uint64_t old_nc = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(v, 1));
	double old_tt = PyFloat_AsDouble(PyList_GET_ITEM(v, 2));
	double old_ct = PyFloat_AsDouble(PyList_GET_ITEM(v, 3));
	if (PyErr_Occurred())
		return NULL;
	PyObject *items[4] = {
		PyLong_FromUnsignedLongLong(old_cc + cc),
		PyLong_FromUnsignedLongLong(old_nc + nc),
		PyFloat_FromDouble(old_tt + (double)tt / pf_ticks_per_s),
		PyFloat_FromDouble(old_ct + (double)ct / pf_ticks_per_s),
	};
	for (int i = 0; i < 4; i++) {
		if (!items[i] || PyList_SetItem(v, i, items[i]) != 0) {
			for (int j = i + 1; j < 4; j++)
				Py_XDECREF(items[j]);
			return NULL;
		}
	}
	return v;
}

/* The merged statistics of every thread as cProfile's `stats` dict:
 * {(file, line, func): (cc, nc, tt, ct, {caller: (nc, cc, tt, ct)})}, times in seconds. */
static PyObject *pf_stats(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	if (pf_ticks_per_s <= 0)
		pf_ticks_per_s = record_ticks_per_second();
	pf_drain_all();
	PyObject *acc = PyDict_New();
	if (!acc)
		return NULL;
	Py_ssize_t n = PyList_GET_SIZE(pf_threads);
	for (Py_ssize_t i = 0; i < n; i++) {
		struct pf_thread *t = (struct pf_thread *)PyList_GET_ITEM(pf_threads, i);
		PyObject **keys = calloc(t->nfuncs ? t->nfuncs : 1, sizeof *keys);
		if (!keys)
			goto fail_nomem;
		int ok = 1;
		/* Functions never returned from (open, or lost above a lost call) are left out,
		 * as cProfile leaves out entries without calls; their keys may still name a
		 * caller. */
		for (size_t f = 0; f < t->nfuncs && ok; f++) {
			keys[f] = pf_key(&t->funcs[f]);
			const struct pf_func *pf = &t->funcs[f];
			ok = keys[f] && (pf->nc == 0 || pf_accumulate(acc, keys[f], pf->cc, pf->nc,
								      pf->tt, pf->ct, 1));
		}
		for (size_t e = 0; e < t->nedges && ok; e++) {
			const struct pf_edge *pe = &t->edges[e];
			PyObject *v = PyDict_GetItemWithError(acc, keys[pe->callee]);
			if (!v) {
				ok = !PyErr_Occurred(); /* absent: a callee left out above */
				continue;
			}
			/* stored [cc, nc, ...]; the tuple below is (nc, cc, tt, ct) */
			ok = pf_accumulate(PyList_GET_ITEM(v, 4), keys[pe->caller], pe->cc, pe->nc,
					   pe->tt, pe->ct, 0) != NULL;
		}
		for (size_t f = 0; f < t->nfuncs; f++)
			Py_XDECREF(keys[f]);
		free(keys);
		if (!ok)
			goto fail;
	}
	/* Freeze into tuples: values (cc, nc, tt, ct, callers), callers (nc, cc, tt, ct). */
	PyObject *out = PyDict_New();
	if (!out)
		goto fail;
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	while (PyDict_Next(acc, &pos, &k, &v)) {
		PyObject *callers = PyDict_New();
		if (!callers)
			goto fail_out;
		PyObject *ck, *cv;
		Py_ssize_t cpos = 0;
		while (PyDict_Next(PyList_GET_ITEM(v, 4), &cpos, &ck, &cv)) {
			PyObject *tup =
				PyTuple_Pack(4, PyList_GET_ITEM(cv, 1), PyList_GET_ITEM(cv, 0),
					     PyList_GET_ITEM(cv, 2), PyList_GET_ITEM(cv, 3));
			if (!tup || PyDict_SetItem(callers, ck, tup) != 0) {
				Py_XDECREF(tup);
				Py_DECREF(callers);
				goto fail_out;
			}
			Py_DECREF(tup);
		}
		PyObject *tup =
			Py_BuildValue("(OOOON)", PyList_GET_ITEM(v, 0), PyList_GET_ITEM(v, 1),
				      PyList_GET_ITEM(v, 2), PyList_GET_ITEM(v, 3), callers);
		if (!tup || PyDict_SetItem(out, k, tup) != 0) {
			Py_XDECREF(tup);
			goto fail_out;
		}
		Py_DECREF(tup);
	}
	Py_DECREF(acc);
	return out;
fail_out:
	Py_DECREF(out);
	goto fail;
fail_nomem:
	PyErr_NoMemory();
fail:
	Py_DECREF(acc);
	return NULL;
}

PyMethodDef pyfunc_methods[] = {
	{ "pyfunc_start", (PyCFunction)(void (*)(void))pf_start, METH_VARARGS | METH_KEYWORDS,
	  "pyfunc_start(emit_ranges=False, builtins=True): install the C profile function on "
	  "every thread, or with builtins=False the frame evaluator (Python functions only)" },
	{ "pyfunc_stop", pf_stop, METH_NOARGS, "remove it; open frames count as returning now" },
	{ "pyfunc_clear", pf_clear, METH_NOARGS, "forget every count (when stopped)" },
	{ "pyfunc_active", pf_is_active, METH_NOARGS, "True while the function profiler runs" },
	{ "pyfunc_stats", pf_stats, METH_NOARGS, "the counts as a pstats dictionary" },
	{ "_pyfunc_evaluator", pf_evaluator, METH_NOARGS,
	  "'eval' while this module's frame evaluator is the interpreter's, else None" },
	{ "_pyfunc_test_refuse", pf_set_test_refused, METH_O,
	  "tests: calls of this code object (or None) are lost as if memory ran out" },
	{ "_pyfunc_test_drain_ns", pf_set_test_drain_ns, METH_O,
	  "tests: every drain of a thread's event log takes at least this many ns" },
	{ "_thread_installer", pf_thread_installer, METH_VARARGS,
	  "for threading.setprofile: installs the C hook in a new thread" },
	{ "noop_hook_start", (PyCFunction)(void (*)(void))pf_noop_start,
	  METH_VARARGS | METH_KEYWORDS,
	  "noop_hook_start(read_clock=False): install a profile function that does nothing, or "
	  "only reads the clock (benchmark floors)" },
	{ "noop_hook_stop", pf_noop_stop, METH_NOARGS, "remove the no-op profile function" },
	{ NULL, NULL, 0, NULL },
};

int pyfunc_init(PyObject *module)
{
	(void)module;
	if (PyType_Ready(&pf_thread_type) < 0)
		return -1;
	pf_threads = PyList_New(0);
	return pf_threads ? 0 : -1;
}
