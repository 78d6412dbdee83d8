/*
 * _modhooks.c: nn.Module calls as ranges, for the PyTorch capture (opscope.torch_hooks). The
 * two functions below are registered as torch's global forward pre- and post-hooks, so they
 * run around every module call of every model; written in C because a Python hook costs a
 * frame, attribute look-ups and a string concatenation per call (bench/bench_torch.py).
 *
 * The outermost module call of a thread is its Forward phase ("forward: Net"); module calls
 * inside it are "nn.Module: Conv2d" ranges, so the module hierarchy nests like the calls.
 *
 * Invariants:
 *   - both hooks run with the GIL held; the per-thread stack is touched only by its thread,
 *     the table of names only under the GIL;
 *   - each stack entry holds the module that opened it and the recording word at that time:
 *     a range is ended only in the session that began it, and a post-hook pops down to its own
 *     module's entry, so a module whose forward raised (no post-hook) does not shift the
 *     ranges of the modules around it;
 *   - a type's range names are interned once (ids name their string for the life of the
 *     process) and kept with a reference to the type, so its address is never another's.
 */
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "_opscope.h"

struct mh_frame {
	PyObject *module; /* borrowed: only compared, never dereferenced */
	uint64_t word;	  /* the recording word when the range began; 0: none began */
};

struct mh_stack {
	struct mh_frame *frames;
	size_t depth, cap;
};

/* Heap-allocated, so the module's static TLS stays a pointer (see record/intern.c). */
static __thread struct mh_stack *mh_tls;
static pthread_key_t mh_key;
static pthread_once_t mh_once = PTHREAD_ONCE_INIT;

static void mh_stack_free(void *p)
{
	struct mh_stack *s = p;
	free(s->frames);
	free(s);
}

static void mh_key_create(void)
{
	pthread_key_create(&mh_key, mh_stack_free);
}

static struct mh_stack *mh_stack_get(void)
{
	if (!mh_tls) {
		pthread_once(&mh_once, mh_key_create);
		mh_tls = calloc(1, sizeof *mh_tls);
		if (mh_tls)
			pthread_setspecific(mh_key, mh_tls);
	}
	return mh_tls;
}

/* ---------------------------------------------------------------------------------------- */
/* Range names per module type: an open-addressing table, under the GIL. */

struct mh_names {
	PyTypeObject *type; /* strong */
	uint32_t forward;   /* interned "forward: <class>" */
	uint32_t module;    /* interned "nn.Module: <class>" */
};

static struct mh_names *mh_table;
static size_t mh_table_cap, mh_table_n;

static size_t mh_slot(PyTypeObject *type, size_t cap)
{
	uintptr_t p = (uintptr_t)type;
	return (size_t)((p >> 4) ^ (p >> 12)) & (cap - 1);
}

/* The interned id of prefix + name; 0 when out of memory. */
static uint32_t mh_intern(const char *prefix, const char *name)
{
	size_t a = strlen(prefix), b = strlen(name);
	char *s = malloc(a + b + 1);
	if (!s)
		return 0;
	memcpy(s, prefix, a);
	memcpy(s + a, name, b + 1);
	uint32_t id = rt.string_id(s, a + b);
	free(s);
	return id;
}

static int mh_table_grow(void)
{
	size_t cap = mh_table_cap ? mh_table_cap * 2 : 64;
	struct mh_names *t = calloc(cap, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < mh_table_cap; i++) {
		if (!mh_table[i].type)
			continue;
		size_t j = mh_slot(mh_table[i].type, cap);
		while (t[j].type)
			j = (j + 1) & (cap - 1);
		t[j] = mh_table[i];
	}
	free(mh_table);
	mh_table = t;
	mh_table_cap = cap;
	return 0;
}

/* The names of `type`, made on first use; NULL when out of memory. */
static const struct mh_names *mh_names_of(PyTypeObject *type)
{
	if (mh_table_cap) {
		for (size_t j = mh_slot(type, mh_table_cap); mh_table[j].type;
		     j = (j + 1) & (mh_table_cap - 1))
			if (mh_table[j].type == type)
				return &mh_table[j];
	}
	if ((mh_table_n + 1) * 2 > mh_table_cap && mh_table_grow() != 0)
		return NULL;
	/* the class name as type(m).__name__ gives it: the part after the last dot */
	const char *name = type->tp_name;
	const char *dot = strrchr(name, '.');
	if (dot)
		name = dot + 1;
	struct mh_names n = { type, mh_intern("forward: ", name), mh_intern("nn.Module: ", name) };
	if (!n.forward || !n.module)
		return NULL;
	Py_INCREF(type);
	size_t j = mh_slot(type, mh_table_cap);
	while (mh_table[j].type)
		j = (j + 1) & (mh_table_cap - 1);
	mh_table[j] = n;
	mh_table_n++;
	return &mh_table[j];
}

/* ---------------------------------------------------------------------------------------- */
/* The hooks. */

static uint64_t mh_word(void)
{
	uint64_t w = __atomic_load_n(rt.word, __ATOMIC_RELAXED);
	return (w & 1u) ? w : 0;
}

/* module_pre_hook(module, inputs): torch's global forward pre-hook. */
static PyObject *mh_pre(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs < 1) {
		PyErr_SetString(PyExc_TypeError, "module_pre_hook(module, inputs)");
		return NULL;
	}
	struct mh_stack *s = mh_stack_get();
	if (!s)
		return PyErr_NoMemory();
	if (s->depth == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct mh_frame *f = realloc(s->frames, cap * sizeof *f);
		if (!f)
			return PyErr_NoMemory();
		s->frames = f;
		s->cap = cap;
	}
	uint64_t w = mh_word();
	if (w) {
		const struct mh_names *n = mh_names_of(Py_TYPE(args[0]));
		if (n && s->depth == 0)
			rt.range_begin_id(OPSCOPE_CAT_FORWARD, n->forward);
		else if (n)
			rt.range_begin_id(OPSCOPE_CAT_USER_DEFINED, n->module);
		else
			w = 0;
	}
	s->frames[s->depth++] = (struct mh_frame){ args[0], w };
	Py_RETURN_NONE;
}

/* module_post_hook(module, inputs, output): torch's global forward hook. */
static PyObject *mh_post(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	if (nargs < 1) {
		PyErr_SetString(PyExc_TypeError, "module_post_hook(module, inputs, output)");
		return NULL;
	}
	struct mh_stack *s = mh_tls;
	if (!s)
		Py_RETURN_NONE;
	/* only when this module has an entry: else its pre-hook ran before the hooks were in */
	size_t at = s->depth;
	while (at > 0 && s->frames[at - 1].module != args[0])
		at--;
	if (at == 0)
		Py_RETURN_NONE;
	uint64_t now = mh_word();
	while (s->depth >= at) { /* this module's entry, at - 1, and any left open above it */
		struct mh_frame *f = &s->frames[--s->depth];
		if (f->word && f->word == now)
			rt.range_end();
	}
	Py_RETURN_NONE;
}

/* The depth of this thread's module stack (for tests). */
static PyObject *mh_depth(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromSize_t(mh_tls ? mh_tls->depth : 0);
}

PyMethodDef modhooks_methods[] = {
	{ "module_pre_hook", (PyCFunction)(void (*)(void))mh_pre, METH_FASTCALL,
	  "module_pre_hook(module, inputs): begin the module's range (torch's global pre-hook)" },
	{ "module_post_hook", (PyCFunction)(void (*)(void))mh_post, METH_FASTCALL,
	  "module_post_hook(module, inputs, output): end it (torch's global forward hook)" },
	{ "module_depth", mh_depth, METH_NOARGS, "open module calls of this thread" },
	{ NULL, NULL, 0, NULL },
};
