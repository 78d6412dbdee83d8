/*
 * torch_api.h: the C ABI of the PyTorch operator observer (observer.cpp), the one piece of
 * opscope in C++: PyTorch's RecordFunction callbacks have no C interface. The Python package
 * loads libopscope_torch.so after torch is imported and hands it the recording functions of the
 * runtime that records (the preloaded libopscope under `opscope record`, else the extension's
 * own copy), so the observer links nothing of ours.
 */
#ifndef OPSCOPE_COLLECT_TORCH_API_H
#define OPSCOPE_COLLECT_TORCH_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The recording functions the observer is given, as X(name, return type, parameters): the
 * field `name` holds the runtime's opscope_<name>. This list is the one place they are
 * written: the Python extension's runtime table (struct py_runtime, python/opscope/_opscope.h)
 * is this list plus the functions only Python calls, and its initializers, dlsym lookups and
 * the copy handed to the observer are all generated from it. One line adds a function.
 */
#define OPSCOPE_TORCH_API_FUNCS(X)                                                                 \
	X(range_begin, void, (int category, const char *name))                                     \
	X(range_end, void, (void))                                                                 \
	X(arg_string, void, (const char *key, const char *value))                                  \
	X(arg_int, void, (const char *key, int64_t value))                                         \
	/* by interned id (opscope_string_id, ...): the observer looks names and values up once */ \
	X(string_id, uint32_t, (const char *s, size_t len))                                        \
	X(range_begin_id, void, (int category, uint32_t name_id))                                  \
	X(arg_int_id, void, (uint32_t key_id, int64_t value))                                      \
	X(arg_string_id, void, (uint32_t key_id, uint32_t value_id))

/* A field of a runtime table: X of OPSCOPE_TORCH_API_FUNCS and of PY_RUNTIME_FUNCS. */
#define OPSCOPE_RUNTIME_FIELD(name, ret, params) ret(*name) params;

struct opscope_torch_api {
	uint64_t *word; /* opscope_recording_word: odd = on */
	OPSCOPE_TORCH_API_FUNCS(OPSCOPE_RUNTIME_FIELD)
};

/* Observe every aten operator, backward function and record_function label: a range each,
 * with "Sequence number" (forward/backward link) and, when shapes is nonzero, "Input Dims",
 * "Input type" and (for calls with scalar or integer-list inputs) "Concrete Inputs" as Kineto
 * writes them. 0, or -1 when already enabled or api is NULL. */
int opscope_torch_enable(const struct opscope_torch_api *api, int shapes);
/* Stop observing (the library stays loaded: callbacks in flight may still run). */
void opscope_torch_disable(void);
/* Switch the enabled callback off (0) or on again (1) in torch: off, operators run without
 * RecordFunction's cost. Enable leaves it on; nothing happens when not enabled. */
void opscope_torch_set_active(int on);
/* Operators seen while recording, since the library was loaded. */
uint64_t opscope_torch_ops(void);
/* Callbacks that ran while nothing recorded (operators that paid for the callback in vain). */
uint64_t opscope_torch_idle_calls(void);
/* Names interned and input lists formatted so far (misses of the per-thread caches). */
uint64_t opscope_torch_cache_misses(void);

#ifdef __cplusplus
}
#endif

#endif
