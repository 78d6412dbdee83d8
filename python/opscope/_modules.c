/*
 * _modules.c: nn.Module calls as ranges, for the PyTorch capture (opscope.torch_hooks).
 * torch_hooks puts a ModuleCall object in place of torch.nn.Module.__call__: it begins a range,
 * calls the original __call__ and ends the range, in C. Global forward hooks, the other way in,
 * cost more than the ranges: any global hook sends every module call down the slow path of
 * Module._call_impl (Python loops over the hooks; ~1 % of the example's training step,
 * bench/bench_torch.py), and a module whose forward raises never reaches its post-hook.
 *
 * The outermost module call of a thread is its Forward phase ("forward: Net"); module calls
 * inside it are "nn.Module: Conv2d" ranges, so the module hierarchy nests like the calls.
 *
 * Invariants:
 *   - the wrapper runs with the GIL held; the depth is per thread, the table of names is
 *     touched only under the GIL;
 *   - a call ends its range in the same C frame that began it, exception or not, and only
 *     in the session that began it (the recording word is kept for the call);
 *   - a type's range names are interned once (ids name their string for the life of the
 *     process) and kept with a reference to the type, so its address is never another's.
 */
#include <stdlib.h>
#include <string.h>

#include "_opscope.h"
#include "util/hashmap.h"

/* Module calls open on this thread: the outermost one is the Forward phase. */
static __thread size_t mh_depth;

/* ---------------------------------------------------------------------------------------- */
/* Range names per module type: a map (util/hashmap.h) from the type's address to its two
 * interned names, under the GIL. Each type in it holds a strong reference, so that its
 * address is never reused by another type. */

struct mh_names {
	uint32_t forward; /* interned "forward: <class>" */
	uint32_t module;  /* interned "nn.Module: <class>" */
};

static struct hmap mh_table; /* (uintptr_t)type -> forward | (uint64_t)module << 32 */

/* The interned id of prefix + name; 0 when out of memory. */
static uint32_t mh_intern(const char *prefix, const char *name)
{
	size_t a = strlen(prefix), b = strlen(name);
	char *s = malloc(a + b + 1);
	if (!s)
		return 0;
	memcpy(s, prefix, a);
	memcpy(s + a, name, b + 1);
	uint32_t id = py_runtime.string_id(s, a + b);
	free(s);
	return id;
}

/* The names of `type`, made on first use; false when out of memory. */
static bool mh_names_of(PyTypeObject *type, struct mh_names *n)
{
	uint64_t key = (uint64_t)(uintptr_t)type;
	const uint64_t *v = hmap_find(&mh_table, key);
	if (!v) {
		/* the class name as type(m).__name__ gives it: the part after the last dot */
		const char *name = type->tp_name;
		const char *dot = strrchr(name, '.');
		if (dot)
			name = dot + 1;
		uint64_t names = mh_intern("forward: ", name) |
				 (uint64_t)mh_intern("nn.Module: ", name) << 32;
		if ((uint32_t)names == 0 || names >> 32 == 0 || !hmap_put(&mh_table, key, names))
			return false;
		Py_INCREF(type);
		v = hmap_find(&mh_table, key);
	}
	*n = (struct mh_names){ (uint32_t)*v, (uint32_t)(*v >> 32) };
	return true;
}

/* ---------------------------------------------------------------------------------------- */
/* The wrapper. */

typedef struct {
	PyObject_HEAD PyObject *orig; /* the __call__ it replaces (strong) */
	vectorcallfunc vectorcall;
} ModuleCall;

static uint64_t mh_word(void)
{
	uint64_t w = __atomic_load_n(py_runtime.word, __ATOMIC_RELAXED);
	return (w & 1u) ? w : 0;
}

/* ModuleCall(module, *args, **kwargs): module.__call__ with a range around it. As a method
 * descriptor the interpreter calls it with the module first and makes no bound method. */
static PyObject *mc_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
			       PyObject *kwnames)
{
	ModuleCall *mc = (ModuleCall *)callable;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	uint64_t w = nargs > 0 ? mh_word() : 0;
	if (w) {
		struct mh_names n;
		if (!mh_names_of(Py_TYPE(args[0]), &n))
			w = 0;
		else if (mh_depth == 0)
			py_runtime.range_begin_id(OPSCOPE_CAT_FORWARD, n.forward);
		else
			py_runtime.range_begin_id(OPSCOPE_CAT_USER_DEFINED, n.module);
	}
	mh_depth++;
	PyObject *res = PyObject_Vectorcall(mc->orig, args, nargsf, kwnames);
	mh_depth--;
	if (w && mh_word() == w)
		py_runtime.range_end();
	return res;
}

static PyObject *mc_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj) {
		Py_INCREF(self);
		return self;
	}
	return PyMethod_New(self, obj);
}

static PyObject *mc_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	PyObject *orig;
	if (kw && PyDict_GET_SIZE(kw)) {
		PyErr_SetString(PyExc_TypeError, "ModuleCall(orig) takes no keywords");
		return NULL;
	}
	if (!PyArg_ParseTuple(args, "O:ModuleCall", &orig))
		return NULL;
	if (!PyCallable_Check(orig)) {
		PyErr_SetString(PyExc_TypeError, "ModuleCall(orig): orig must be callable");
		return NULL;
	}
	ModuleCall *mc = (ModuleCall *)type->tp_alloc(type, 0);
	if (!mc)
		return NULL;
	Py_INCREF(orig);
	mc->orig = orig;
	mc->vectorcall = mc_vectorcall;
	return (PyObject *)mc;
}

static void mc_dealloc(PyObject *self)
{
	ModuleCall *mc = (ModuleCall *)self;
	PyObject_GC_UnTrack(self);
	Py_CLEAR(mc->orig);
	Py_TYPE(self)->tp_free(self);
}

static int mc_traverse(PyObject *self, visitproc visit, void *arg)
{
	Py_VISIT(((ModuleCall *)self)->orig);
	return 0;
}

static PyObject *mc_orig(PyObject *self, void *closure)
{
	(void)closure;
	PyObject *o = ((ModuleCall *)self)->orig;
	Py_INCREF(o);
	return o;
}

static PyGetSetDef mc_getset[] = {
	{ "orig", mc_orig, NULL, "the __call__ this one wraps", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject ModuleCallType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "opscope._opscope.ModuleCall",
	.tp_basicsize = sizeof(ModuleCall),
	.tp_dealloc = mc_dealloc,
	.tp_vectorcall_offset = offsetof(ModuleCall, vectorcall),
	.tp_call = PyVectorcall_Call,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
		    Py_TPFLAGS_METHOD_DESCRIPTOR,
	.tp_traverse = mc_traverse,
	.tp_descr_get = mc_descr_get,
	.tp_getset = mc_getset,
	.tp_new = mc_new,
	.tp_doc = "ModuleCall(orig): nn.Module.__call__ with a range around each call "
		  "(opscope.torch_hooks)",
};

/* The depth of this thread's module calls (for tests). */
static PyObject *mh_module_depth(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromSize_t(mh_depth);
}

PyMethodDef modules_methods[] = {
	{ "module_depth", mh_module_depth, METH_NOARGS, "open module calls of this thread" },
	{ NULL, NULL, 0, NULL },
};

int modules_init(PyObject *module)
{
	if (PyType_Ready(&ModuleCallType) < 0)
		return -1;
	Py_INCREF(&ModuleCallType);
	if (PyModule_AddObject(module, "ModuleCall", (PyObject *)&ModuleCallType) < 0) {
		Py_DECREF(&ModuleCallType);
		return -1;
	}
	return 0;
}
