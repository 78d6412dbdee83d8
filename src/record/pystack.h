/*
 * pystack.h: Python frames for the CPU stack sampler (issue 17 point 2; docs/sampling.md,
 * "Python frames").
 *
 * The sampler's SIGPROF handler reads the interrupted thread's Python stack straight out of
 * CPython 3.11's structures (pystack_walk), interns each code object it meets on first sight
 * into a preallocated lock-free table, and the sampler thread later turns (code id, instruction
 * offset) into function, file and line (pystack_code_name/file, pystack_line) and merges the
 * Python frames into the native stack at the interpreter's evaluation frames (pystack_merge),
 * as py-spy --native does. Nothing here links libpython: pystack_init finds a CPython in the
 * process at run time, and everything else does nothing until it has.
 *
 * Thread-safety: pystack_init once, on the sampler thread, before any handler may call
 * pystack_walk (it publishes with release; the handler reads with acquire). pystack_walk and
 * pystack_intern_code are async-signal-safe and may run on any thread concurrently. The
 * readers (pystack_code_*, pystack_line, pystack_native_kind) may run concurrently with them;
 * pystack_merge is a pure function.
 */
#ifndef OPSCOPE_RECORD_PYSTACK_H
#define OPSCOPE_RECORD_PYSTACK_H

#include <stddef.h>
#include <stdint.h>

#define PYSTACK_MAX_FRAMES 256	      /* the depth bound of a walk */
#define PYSTACK_CODE_NONE  UINT32_MAX /* no code: an incomplete frame (see PYSTACK_INCOMPLETE) */
#define PYSTACK_CODE_UNKNOWN \
	(UINT32_MAX - 1) /* a code object seen when the table was full, or unreadable: shown as \
			    an unknown Python frame */

/* pystack_frame.flags */
#define PYSTACK_ENTRY	   (1u << 0) /* where a C call of the eval loop began (is_entry) */
#define PYSTACK_INCOMPLETE (1u << 1) /* a frame not yet started: code is PYSTACK_CODE_NONE */

/* One Python frame as the handler saw it. */
struct pystack_frame {
	uint32_t code;	/* code id (pystack_code_name...), or PYSTACK_CODE_NONE / _UNKNOWN */
	int32_t instr;	/* instruction offset in code units (CPython's lasti) */
	uint32_t flags; /* PYSTACK_ENTRY, PYSTACK_INCOMPLETE */
};

/* pystack_walk's *flags */
#define PYSTACK_TRUNCATED (1u << 0) /* the walk stopped early: depth, a bad pointer, a loop */

/* pystack_init's result */
enum pystack_state {
	PYSTACK_NO_PYTHON = 0, /* no CPython in the process: disabled, say nothing */
	PYSTACK_ENABLED,       /* CPython 3.11: Python frames are read */
	PYSTACK_UNSUPPORTED,   /* another CPython: disabled, *warning says which */
};

/* Find a CPython in the process (dlsym(RTLD_DEFAULT)) and, for 3.11, set up the frame reader
 * and its code table (one mmap). Not async-signal-safe; call once from the sampler thread
 * before SIGPROF can arrive (calls after the first return the first result). *warning (may be
 * NULL) gets a static one-line text for PYSTACK_UNSUPPORTED ("Python 3.12: native frames
 * only"), else NULL. */
enum pystack_state pystack_init(const char **warning);

/* The interpreter's eval loop, [start, end) in this process (for pystack_native_kind), or
 * 0, 0 when not enabled. */
void pystack_eval_range(uintptr_t *start, uintptr_t *end);

/* The calling thread's Python stack, innermost first, at most `max` frames into `out`
 * (incomplete frames included as PYSTACK_INCOMPLETE entries so that the merge still sees
 * their entry flag). Async-signal-safe: no locks, no allocation; the only system call is
 * process_vm_readv on this process, for memory that may not be mapped; every pointer checked
 * before it is followed. Returns the count (0: no Python on this thread, or
 * not enabled); *flags (may be NULL) gets PYSTACK_TRUNCATED when the walk stopped early. */
uint32_t pystack_walk(struct pystack_frame *out, uint32_t max, uint32_t *flags);
/* In a forked child, before any handler may walk: the pid that reads of unmapped memory
 * (process_vm_readv) name. pystack_init registers it with pthread_atfork too; the sampler
 * calls it first thing in its own fork handler, before it starts sampling the child. */
void pystack_after_fork(void);

/* The id of CPython code object `code` (interning it: its names and location table copied
 * into the table), or PYSTACK_CODE_UNKNOWN when it is not a readable code object or the
 * table is full. Async-signal-safe; pystack_walk uses it, tests call it directly. */
uint32_t pystack_intern_code(const void *code);

/* The code's qualified name and file name (UTF-8, NUL-terminated, valid for the life of the
 * process), or NULL for an id that is not (yet) complete. PYSTACK_CODE_UNKNOWN has name
 * "<unknown python code>". */
const char *pystack_code_name(uint32_t id);
const char *pystack_code_file(uint32_t id);
/* The source line of instruction `instr` (code units) of code `id`, decoded from its copied
 * location table as CPython's PyCode_Addr2Line does; the code's first line when instr < 0 or
 * the table has no line for it; 0 for an unknown id. */
int32_t pystack_line(uint32_t id, int32_t instr);
/* Frames shown as PYSTACK_CODE_UNKNOWN because the code table was full (counted per frame
 * of each sample, since a code object that did not fit is looked for again every time). */
uint64_t pystack_codes_dropped(void);

/* What a native pc is, for the merge. */
enum pystack_native_kind {
	PYSTACK_NATIVE_OTHER = 0, /* not the interpreter's */
	PYSTACK_NATIVE_EVAL,	  /* inside _PyEval_EvalFrameDefault */
	PYSTACK_NATIVE_PYTHON,	  /* elsewhere in the interpreter's binary (python3, libpython) */
};
/* The kind of native instruction address `pc` (pass return addresses minus one). */
enum pystack_native_kind pystack_native_kind(uint64_t pc);

/* One frame of a merged stack. */
struct pystack_merged {
	uint32_t is_python; /* 1: a Python frame (code, instr); 0: a native pc */
	uint32_t code;	    /* Python: code id (may be PYSTACK_CODE_UNKNOWN) */
	int32_t instr;	    /* Python: instruction offset in code units */
	uint64_t pc;	    /* native: the pc as given */
};

/* Merge a native stack (pcs[0..npcs), innermost first, kinds[i] an enum pystack_native_kind)
 * with a Python stack (py[0..npy), innermost first, from pystack_walk) into one stack,
 * innermost first, at most `max` frames; *truncated (may be NULL) set to 1 when `max` cut it.
 * Rules (docs/sampling.md, "Python frames"):
 *  - each EVAL native frame is replaced by the Python frames it runs: from the innermost
 *    Python frame not yet used up to and including the next PYSTACK_ENTRY frame; an EVAL
 *    frame with no Python frame left (or only incomplete ones) stays as it is;
 *  - Python frames left when the native frames run out go at the outer end;
 *  - no EVAL frame at all (the native walk did not get through the interpreter): the native
 *    frames up to the first PYTHON-kind frame are kept, all Python frames follow, and the
 *    interpreter's own native frames from there outward are dropped;
 *  - incomplete Python frames are never output. Pure function. */
size_t pystack_merge(const uint64_t *pcs, const uint8_t *kinds, size_t npcs,
		     const struct pystack_frame *py, size_t npy, struct pystack_merged *out,
		     size_t max, int *truncated);

/* ---- CPython 3.11's layout (x86-64 and other LP64 targets), byte offsets; the test
 * test_pystack_offsets checks each against CPython's own headers. ---- */
struct pystack_layout {
	uint32_t runtime_tss;	      /* _PyRuntime.gilstate.autoTSSkey (a Py_tss_t) */
	uint32_t tss_initialized;     /* Py_tss_t._is_initialized (int) */
	uint32_t tss_key;	      /* Py_tss_t._key (pthread_key_t) */
	uint32_t ob_type;	      /* PyObject.ob_type */
	uint32_t ob_size;	      /* PyVarObject.ob_size */
	uint32_t ts_cframe;	      /* PyThreadState.cframe */
	uint32_t ts_datastack_chunk;  /* PyThreadState.datastack_chunk */
	uint32_t ts_datastack_top;    /* PyThreadState.datastack_top */
	uint32_t chunk_previous;      /* _PyStackChunk.previous */
	uint32_t chunk_size;	      /* _PyStackChunk.size (bytes, the chunk's header included) */
	uint32_t chunk_data;	      /* _PyStackChunk.data */
	uint32_t cframe_current;      /* _PyCFrame.current_frame */
	uint32_t frame_code;	      /* _PyInterpreterFrame.f_code */
	uint32_t frame_previous;      /* _PyInterpreterFrame.previous */
	uint32_t frame_prev_instr;    /* _PyInterpreterFrame.prev_instr */
	uint32_t frame_is_entry;      /* _PyInterpreterFrame.is_entry (bool) */
	uint32_t frame_owner;	      /* _PyInterpreterFrame.owner (char) */
	uint32_t code_firstlineno;    /* PyCodeObject.co_firstlineno (int) */
	uint32_t code_filename;	      /* PyCodeObject.co_filename */
	uint32_t code_qualname;	      /* PyCodeObject.co_qualname */
	uint32_t code_linetable;      /* PyCodeObject.co_linetable (bytes) */
	uint32_t code_firsttraceable; /* PyCodeObject._co_firsttraceable (int) */
	uint32_t code_adaptive;	      /* PyCodeObject.co_code_adaptive (the code units) */
	uint32_t str_length;	      /* PyASCIIObject.length */
	uint32_t str_state;	      /* PyASCIIObject.state (a byte of bit-fields) */
	uint32_t str_ascii_data;      /* sizeof(PyASCIIObject): compact ASCII data */
	uint32_t str_compact_data;    /* sizeof(PyCompactUnicodeObject): other compact data */
	uint32_t bytes_data;	      /* PyBytesObject.ob_sval */
	uint8_t owner_generator;      /* FRAME_OWNED_BY_GENERATOR */
	uint8_t state_kind_shift;     /* PyASCIIObject.state.kind: bits [shift, shift+3) */
	uint8_t state_compact_bit;    /* .compact */
	uint8_t state_ascii_bit;      /* .ascii */
	uint8_t state_ready_bit;      /* .ready */
};
extern const struct pystack_layout pystack_layout_311;

#endif
