/*
 * pystack.c: the Python stack of a sampled thread, read from inside its SIGPROF handler
 * (issue 17 point 2; docs/sampling.md, "Python frames").
 *
 * CPython is not linked: pystack_init looks it up in the process (dlsym(RTLD_DEFAULT): the
 * python3 executable exports its API, or libpython is loaded) and reads its version from
 * Py_Version. Only 3.11 is read: its frame layout is the table pystack_layout_311 below (CPython
 * does not promise any of it; test_pystack_offsets checks it against the installed headers),
 * and other versions moved these fields (3.12 shim frames, 3.13 no cframe).
 *
 * The handler (pystack_walk) runs on the thread it reads, so the stack it walks cannot change
 * under it: the thread is stopped at an arbitrary instruction, and what can be inconsistent is
 * only what that instruction was in the middle of (a frame being pushed or popped, a code
 * object being freed). Hence every pointer is checked (null, alignment, type), the walk is
 * bounded (depth, cycle detection), and memory that may not be mapped at all (the innermost
 * frame when it is not on the thread's frame stack; a code object seen for the first time)
 * is read with process_vm_readv on this very process, which fails with EFAULT instead of
 * faulting. That costs about 1 us (FINDINGS-collectors 4.2), so it is paid once per code
 * object and for samples whose innermost frame is a generator's, not per frame.
 *
 * Code objects are interned on first sight into a process-wide open-addressing table that
 * pystack_init maps once: a slot is claimed by CAS on its key (the code pointer), filled
 * (qualname and filename as UTF-8, the location table bytes copied into a bump arena), then
 * published by a release store of its state. A slot is matched by the pointer plus a
 * fingerprint (first line, qualname, filename and location-table pointers), so a code object
 * freed and another allocated at its address gets a slot of its own. Nothing is ever removed:
 * ids stay valid for the life of the process and the sampler thread reads them without
 * locks. A full table (or arena) makes frames unknown, counted in pystack_codes_dropped.
 */
#include "record/pystack.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* CPython 3.11 on LP64 (checked by tests/pystack/test_pystack_offsets.c). */
const struct pystack_layout pystack_layout_311 = {
	.runtime_tss = 592,
	.tss_initialized = 0,
	.tss_key = 4,
	.ob_type = 8,
	.ob_size = 16,
	.ts_cframe = 56,
	.ts_datastack_chunk = 296,
	.ts_datastack_top = 304,
	.chunk_previous = 0,
	.chunk_size = 8,
	.chunk_data = 24,
	.cframe_current = 8,
	.frame_code = 32,
	.frame_previous = 48,
	.frame_prev_instr = 56,
	.frame_is_entry = 68,
	.frame_owner = 69,
	.code_firstlineno = 72,
	.code_filename = 112,
	.code_qualname = 128,
	.code_linetable = 136,
	.code_firsttraceable = 168,
	.code_adaptive = 184,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_data = 48,
	.str_compact_data = 72,
	.bytes_data = 32,
	.owner_generator = 1,
	.state_kind_shift = 2,
	.state_compact_bit = 5,
	.state_ascii_bit = 6,
	.state_ready_bit = 7,
};
#define L pystack_layout_311

#define CODE_SLOTS	   8192u      /* code objects a process can intern (power of two) */
#define CODE_PROBES	   64u	      /* slots looked at before the table counts as full */
#define NAME_BYTES	   160u	      /* a copied qualname, UTF-8 with its NUL */
#define FILE_BYTES	   256u	      /* a copied file name */
#define LINETABLE_MAX	   65536u     /* location table bytes copied per code object */
#define LINETABLE_ARENA	   (8u << 20) /* all copied location tables */
#define CODE_HEADER_BYTES  192u	      /* what a first sight copies of a code object */
#define STATE_EMPTY	   0u
#define STATE_FILLING	   1u
#define STATE_READY	   2u
#define PYTHON_TEXT_RANGES 4
#define CODES_BYTES	   (CODE_SLOTS * (sizeof(struct code_slot) + sizeof(struct code_names)))

/* What the handler looks at on every sample: one cache line per code object, 512 KiB in
 * all, with the names (3.4 MiB, read only by the sampler thread) kept apart, since by the
 * next sample the table is out of the cache. */
struct code_slot {
	_Alignas(64) _Atomic uintptr_t key; /* the code object's address; 0: free */
	_Atomic uint32_t state;
	/* the fingerprint, set before the state is published */
	int32_t firstlineno;
	uintptr_t qualname, filename, linetable;
	/* for the walk, so that a known code object is not read for them */
	int32_t firsttraceable;	 /* code units before the first traceable instruction */
	int32_t ncodeunits;	 /* Py_SIZE(code) */
	uint32_t lt_off, lt_len; /* its location table in the arena */
};
_Static_assert(sizeof(struct code_slot) == 64, "a code slot is one cache line");

/* What only the sampler thread reads, at the same index. */
struct code_names {
	char name[NAME_BYTES];
	char file[FILE_BYTES];
};

static struct {
	_Atomic int state; /* enum pystack_state; ENABLED published last (release) */
	int inited;
	const char *warning;
	uintptr_t runtime;			   /* &_PyRuntime */
	uintptr_t code_type, str_type, bytes_type; /* &PyCode_Type, &PyUnicode_Type, ... */
	uintptr_t eval_start, eval_end;		   /* _PyEval_EvalFrameDefault */
	uintptr_t text_lo[PYTHON_TEXT_RANGES], text_hi[PYTHON_TEXT_RANGES];
	int ntext;
	struct code_slot *codes;  /* CODE_SLOTS, mmap'd */
	struct code_names *names; /* CODE_SLOTS, right after them in the same mapping */
	unsigned char *arena;	  /* LINETABLE_ARENA, mmap'd */
	_Atomic uint32_t arena_used;
	_Atomic uint64_t dropped;
	_Atomic pid_t pid; /* this process, for safe_read; 0 before pystack_init */
} P;

/* ---------------------------------------------------------------------------------------- */
/* Start. */

static int safe_read(void *dst, uintptr_t addr, size_t len);

static uintptr_t sym(const char *name)
{
	return (uintptr_t)dlsym(RTLD_DEFAULT, name);
}

/* dl_iterate_phdr callback: the executable segments of the object loaded at P's eval loop. */
static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	int mine = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && P.eval_start >= lo && P.eval_start < hi)
			mine = 1;
	}
	if (!mine)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && P.ntext < PYTHON_TEXT_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		P.text_lo[P.ntext] = info->dlpi_addr + ph->p_vaddr;
		P.text_hi[P.ntext] = P.text_lo[P.ntext] + ph->p_memsz;
		P.ntext++;
	}
	return 1;
}

enum pystack_state pystack_init(const char **warning)
{
	if (P.inited) {
		if (warning)
			*warning = P.warning;
		return (enum pystack_state)atomic_load(&P.state);
	}
	P.inited = 1;
	if (warning)
		*warning = NULL;
	/* safe_read's pid, kept instead of a getpid() per read (a system call each: a code object
	 * seen for the first time costs two reads), and set again in a forked child, where a read
	 * of the parent would fail (or worse, read the parent's memory). */
	atomic_store(&P.pid, getpid());
	pthread_atfork(NULL, NULL, pystack_after_fork);
	uintptr_t runtime = sym("_PyRuntime"), code_type = sym("PyCode_Type");
	if (!runtime || !code_type)
		return PYSTACK_NO_PYTHON;
	/* Py_Version (3.11+) is PY_VERSION_HEX; older ones only have Py_GetVersion's text. */
	unsigned major = 0, minor = 0;
	const unsigned long *ver = (const unsigned long *)sym("Py_Version");
	if (ver) {
		major = (unsigned)(*ver >> 24) & 0xff;
		minor = (unsigned)(*ver >> 16) & 0xff;
	} else {
		/* dlsym returns a function as void *: POSIX's way to convert it back */
		const char *(*getver)(void);
		*(void **)&getver = dlsym(RTLD_DEFAULT, "Py_GetVersion");
		if (!getver || sscanf(getver(), "%u.%u", &major, &minor) != 2)
			return PYSTACK_NO_PYTHON;
	}
	static char warn[96];
	/* A debug build (Py_REF_DEBUG exports _Py_RefTotal) may have a longer object header. */
	int debug = sym("_Py_RefTotal") != 0;
	if (major != 3 || minor != 11 || debug || sizeof(void *) != 8) {
		snprintf(warn, sizeof(warn), "Python %u.%u%s: native frames only", major, minor,
			 debug ? " (debug build)" : "");
		P.warning = warn;
		if (warning)
			*warning = warn;
		atomic_store(&P.state, PYSTACK_UNSUPPORTED);
		return PYSTACK_UNSUPPORTED;
	}
	P.runtime = runtime;
	P.code_type = code_type;
	P.str_type = sym("PyUnicode_Type");
	P.bytes_type = sym("PyBytes_Type");
	/* The eval loop's extent, so the merge can tell its native frames. */
	void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	Dl_info info;
	const ElfW(Sym) *es = NULL;
	if (eval && dladdr1(eval, &info, (void **)&es, RTLD_DL_SYMENT) && es && es->st_size) {
		P.eval_start = (uintptr_t)eval;
		P.eval_end = P.eval_start + es->st_size;
		dl_iterate_phdr(find_text, NULL);
	}
	P.codes = mmap(NULL, CODES_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	P.arena = mmap(NULL, LINETABLE_ARENA, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (P.codes == MAP_FAILED || P.arena == MAP_FAILED || !P.str_type || !P.bytes_type) {
		if (P.codes != MAP_FAILED)
			munmap(P.codes, CODES_BYTES);
		if (P.arena != MAP_FAILED)
			munmap(P.arena, LINETABLE_ARENA);
		P.codes = NULL;
		P.arena = NULL;
		snprintf(warn, sizeof(warn), "Python 3.11: cannot set up, native frames only");
		P.warning = warn;
		if (warning)
			*warning = warn;
		atomic_store(&P.state, PYSTACK_UNSUPPORTED);
		return PYSTACK_UNSUPPORTED;
	}
	P.names = (struct code_names *)(P.codes + CODE_SLOTS);
	/* Without process_vm_readv (a seccomp filter may refuse it) no code object could be
	 * read safely: every frame would be unknown. Say so instead. */
	int probe = 1, copy = 0;
	if (safe_read(&copy, (uintptr_t)&probe, sizeof(probe)) != 0 || copy != 1) {
		snprintf(warn, sizeof(warn),
			 "Python 3.11: process_vm_readv refused, native frames only");
		P.warning = warn;
		if (warning)
			*warning = warn;
		atomic_store(&P.state, PYSTACK_UNSUPPORTED);
		return PYSTACK_UNSUPPORTED;
	}
	atomic_store_explicit(&P.state, PYSTACK_ENABLED, memory_order_release);
	return PYSTACK_ENABLED;
}

void pystack_eval_range(uintptr_t *start, uintptr_t *end)
{
	int on = atomic_load_explicit(&P.state, memory_order_acquire) == PYSTACK_ENABLED;
	*start = on ? P.eval_start : 0;
	*end = on ? P.eval_end : 0;
}

enum pystack_native_kind pystack_native_kind(uint64_t pc)
{
	if (atomic_load_explicit(&P.state, memory_order_acquire) != PYSTACK_ENABLED)
		return PYSTACK_NATIVE_OTHER;
	if (pc >= P.eval_start && pc < P.eval_end)
		return PYSTACK_NATIVE_EVAL;
	for (int i = 0; i < P.ntext; i++)
		if (pc >= P.text_lo[i] && pc < P.text_hi[i])
			return PYSTACK_NATIVE_PYTHON;
	return PYSTACK_NATIVE_OTHER;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading memory in the handler. */

/* Copy `len` bytes at `addr` of this process into `dst`, 0 on success, -1 when any of it is
 * not mapped: one process_vm_readv system call (async-signal-safe), which reports EFAULT
 * where a plain load would fault. */
void pystack_after_fork(void)
{
	atomic_store(&P.pid, (pid_t)syscall(SYS_getpid));
}

static int safe_read(void *dst, uintptr_t addr, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)addr, len };
	int saved = errno;
	pid_t pid = atomic_load_explicit(&P.pid, memory_order_relaxed);
	long n = syscall(SYS_process_vm_readv, (long)(pid ? pid : getpid()), &local, 1L, &remote,
			 1L, 0L);
	errno = saved;
	return n == (long)len ? 0 : -1;
}

static uintptr_t load_ptr(uintptr_t addr)
{
	uintptr_t v;
	memcpy(&v, (const void *)addr, sizeof(v));
	return v;
}

static int32_t load_i32(uintptr_t addr)
{
	int32_t v;
	memcpy(&v, (const void *)addr, sizeof(v));
	return v;
}

static int aligned(uintptr_t p)
{
	return p && (p & 7) == 0;
}

/* Append code point `c` as UTF-8 to dst[*at..cap-1) if it fits whole; 0 when it did not. */
static int put_utf8(char *dst, size_t cap, size_t *at, uint32_t c)
{
	unsigned char b[4];
	size_t n;
	if (c < 0x80) {
		b[0] = (unsigned char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (unsigned char)(0xc0 | (c >> 6));
		b[1] = (unsigned char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd; /* a lone surrogate has no UTF-8 */
		b[0] = (unsigned char)(0xe0 | (c >> 12));
		b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		if (c > 0x10ffff)
			c = 0xfffd;
		b[0] = (unsigned char)(0xf0 | (c >> 18));
		b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (*at + n >= cap)
		return 0;
	memcpy(dst + *at, b, n);
	*at += n;
	return 1;
}

/* The str object at `obj` as UTF-8 into dst (NUL-terminated, cut at a whole character when
 * longer than cap-1 bytes); "?" when it is not a compact, ready str. Reads with safe_read. */
static void copy_str(uintptr_t obj, char *dst, size_t cap)
{
	unsigned char head[80];
	memcpy(dst, "?", 2);
	if (!aligned(obj) || safe_read(head, obj, L.str_compact_data) != 0)
		return;
	uintptr_t type;
	int64_t length;
	memcpy(&type, head + L.ob_type, sizeof(type));
	memcpy(&length, head + L.str_length, sizeof(length));
	unsigned st = head[L.str_state];
	if (type != P.str_type || length < 0 || !(st >> L.state_compact_bit & 1) ||
	    !(st >> L.state_ready_bit & 1))
		return;
	unsigned kind = (st >> L.state_kind_shift) & 7;
	int ascii = st >> L.state_ascii_bit & 1;
	if (kind != 1 && kind != 2 && kind != 4)
		return;
	/* At most cap-1 characters can fit (each is at least one byte). */
	size_t nchars = (size_t)length < cap - 1 ? (size_t)length : cap - 1;
	unsigned char raw[4 * FILE_BYTES];
	if (nchars * kind > sizeof(raw))
		nchars = sizeof(raw) / kind;
	uintptr_t data = obj + (ascii ? L.str_ascii_data : L.str_compact_data);
	if (safe_read(raw, data, nchars * kind) != 0)
		return;
	size_t at = 0;
	for (size_t i = 0; i < nchars; i++) {
		uint32_t c;
		if (kind == 1) {
			c = raw[i];
		} else if (kind == 2) {
			uint16_t c2;
			memcpy(&c2, raw + 2 * i, 2);
			c = c2;
		} else {
			memcpy(&c, raw + 4 * i, 4);
		}
		if (!put_utf8(dst, cap, &at, c))
			break;
	}
	dst[at] = '\0';
}

/* ---------------------------------------------------------------------------------------- */
/* The code table. */

static uint32_t code_hash(uintptr_t code)
{
	uint64_t h = (uint64_t)code * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40);
}

/* Fill claimed slot `s` from code object `code`; its state is published by the caller. */
static uint32_t code_fill(struct code_slot *s, const unsigned char *hdr)
{
	int64_t size;
	memcpy(&size, hdr + L.ob_size, sizeof(size));
	s->ncodeunits = size > 0 && size < INT32_MAX ? (int32_t)size : 0;
	memcpy(&s->firsttraceable, hdr + L.code_firsttraceable, sizeof(int32_t));
	struct code_names *nm = &P.names[s - P.codes];
	copy_str(s->qualname, nm->name, sizeof(nm->name));
	copy_str(s->filename, nm->file, sizeof(nm->file));
	s->lt_off = s->lt_len = 0;
	unsigned char bh[40];
	if (!aligned(s->linetable) || safe_read(bh, s->linetable, L.bytes_data) != 0)
		return STATE_READY;
	uintptr_t type;
	int64_t n;
	memcpy(&type, bh + L.ob_type, sizeof(type));
	memcpy(&n, bh + L.ob_size, sizeof(n));
	if (type != P.bytes_type || n <= 0)
		return STATE_READY;
	uint32_t len = n > LINETABLE_MAX ? LINETABLE_MAX : (uint32_t)n;
	uint32_t off = atomic_fetch_add_explicit(&P.arena_used, len, memory_order_relaxed);
	if (off > LINETABLE_ARENA - len || off + len > LINETABLE_ARENA)
		return STATE_READY; /* the arena is full: lines fall back to the first line */
	if (safe_read(P.arena + off, s->linetable + L.bytes_data, len) != 0)
		return STATE_READY;
	s->lt_off = off;
	s->lt_len = len;
	return STATE_READY;
}

/* The slot of `code`, interning it on first sight; NULL when it is not a readable code
 * object (*bad set) or the table is full (*bad clear). */
static struct code_slot *code_slot_of(uintptr_t code, int *bad)
{
	*bad = 1;
	if (!aligned(code) || !P.codes)
		return NULL;
	uint32_t h = code_hash(code);
	for (uint32_t i = 0; i < CODE_PROBES; i++) {
		struct code_slot *s = &P.codes[(h + i) & (CODE_SLOTS - 1)];
		uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);
		if (k == code) {
			uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
			if (st == STATE_FILLING) {
				*bad = 0;
				return s; /* another thread is filling it: the same code, almost surely */
			}
			/* A slot for this address: the same object if the fingerprint matches. The
			 * object was a code object when the slot was filled, so reading its header
			 * in place is safe unless it was freed and its memory unmapped since: a
			 * risk docs/sampling.md names. */
			if (load_ptr(code + L.ob_type) != P.code_type)
				return NULL;
			if (s->firstlineno == load_i32(code + L.code_firstlineno) &&
			    s->qualname == load_ptr(code + L.code_qualname) &&
			    s->filename == load_ptr(code + L.code_filename) &&
			    s->linetable == load_ptr(code + L.code_linetable)) {
				*bad = 0;
				return s;
			}
			continue; /* another code object at a reused address */
		}
		if (k != 0)
			continue;
		/* A free slot: this code object is new. Read it safely before claiming. */
		unsigned char hdr[CODE_HEADER_BYTES];
		if (safe_read(hdr, code, sizeof(hdr)) != 0)
			return NULL;
		uintptr_t type;
		memcpy(&type, hdr + L.ob_type, sizeof(type));
		if (type != P.code_type)
			return NULL;
		uintptr_t expect = 0;
		if (!atomic_compare_exchange_strong_explicit(
			    &s->key, &expect, code, memory_order_acq_rel, memory_order_acquire)) {
			i--; /* lost the race for this slot: look at it again */
			continue;
		}
		memcpy(&s->firstlineno, hdr + L.code_firstlineno, sizeof(int32_t));
		memcpy(&s->qualname, hdr + L.code_qualname, sizeof(uintptr_t));
		memcpy(&s->filename, hdr + L.code_filename, sizeof(uintptr_t));
		memcpy(&s->linetable, hdr + L.code_linetable, sizeof(uintptr_t));
		uint32_t st = code_fill(s, hdr);
		atomic_store_explicit(&s->state, st, memory_order_release);
		*bad = 0;
		return s;
	}
	/* Full (no free slot in reach): still tell a code object from garbage. */
	uintptr_t type;
	if (safe_read(&type, code + L.ob_type, sizeof(type)) != 0 || type != P.code_type)
		return NULL;
	*bad = 0;
	atomic_fetch_add_explicit(&P.dropped, 1, memory_order_relaxed);
	return NULL;
}

uint32_t pystack_intern_code(const void *code)
{
	if (atomic_load_explicit(&P.state, memory_order_acquire) != PYSTACK_ENABLED)
		return PYSTACK_CODE_UNKNOWN;
	int bad;
	struct code_slot *s = code_slot_of((uintptr_t)code, &bad);
	return s ? (uint32_t)(s - P.codes) : PYSTACK_CODE_UNKNOWN;
}

uint64_t pystack_codes_dropped(void)
{
	return atomic_load_explicit(&P.dropped, memory_order_relaxed);
}

static const struct code_slot *code_ready(uint32_t id)
{
	if (!P.codes || id >= CODE_SLOTS)
		return NULL;
	const struct code_slot *s = &P.codes[id];
	return atomic_load_explicit(&s->state, memory_order_acquire) == STATE_READY ? s : NULL;
}

const char *pystack_code_name(uint32_t id)
{
	if (id == PYSTACK_CODE_UNKNOWN)
		return "<unknown python code>";
	const struct code_slot *s = code_ready(id);
	return s ? P.names[id].name : NULL;
}

const char *pystack_code_file(uint32_t id)
{
	if (id == PYSTACK_CODE_UNKNOWN)
		return "";
	const struct code_slot *s = code_ready(id);
	return s ? P.names[id].file : NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Lines: CPython 3.11's location table (Objects/locations.md, PEP 657). Each entry starts
 * with a byte 1CCCCLLL: code C, and L+1 code units covered. Codes: 15 no location, 14 long
 * form (svarint line delta, then 3 varints), 13 no columns (svarint line delta), 10-12 one
 * line (line delta C-10, then 2 column bytes), 0-9 short form (same line, 1 column byte).
 * varint: 6-bit groups, least significant first, bit 6 set on all but the last. */

static uint32_t lt_varint(const unsigned char *p, uint32_t n, uint32_t *at)
{
	uint32_t v = 0, shift = 0;
	while (*at < n) {
		unsigned b = p[(*at)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 30)
			break;
	}
	return v;
}

int32_t pystack_line(uint32_t id, int32_t instr)
{
	const struct code_slot *s = code_ready(id);
	if (!s)
		return 0;
	if (instr < 0 || !s->lt_len)
		return s->firstlineno;
	const unsigned char *p = P.arena + s->lt_off;
	uint32_t n = s->lt_len, at = 0;
	int64_t line = s->firstlineno, addr = 0; /* addr in code units */
	while (at < n) {
		unsigned first = p[at];
		if (!(first & 128))
			break; /* not at an entry: a damaged table */
		unsigned code = (first >> 3) & 15;
		int64_t len = (first & 7) + 1;
		at++;
		int64_t delta = 0;
		if (code == 13 || code == 14) {
			uint32_t v = lt_varint(p, n, &at);
			delta = (v & 1) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
		}
		line += delta;
		if (instr < addr + len)
			return code == 15 ? s->firstlineno : (int32_t)line;
		addr += len;
		while (at < n && !(p[at] & 128))
			at++; /* the entry's remaining bytes */
	}
	return s->firstlineno;
}

/* ---------------------------------------------------------------------------------------- */
/* The walk (in the SIGPROF handler). */

/* Whether [frame, frame+len) lies in the live part of the thread's frame stack: the current
 * chunk up to datastack_top, or an older chunk (chunks below the current one are live, and
 * only the current one is ever freed, after datastack_chunk moved off it). Frames pushed
 * there are in mapped memory; generators' frames and anything else are not known to be. */
static int in_datastack(uintptr_t chunk, uintptr_t top, uintptr_t frame, size_t len)
{
	for (int i = 0; i < 64 && aligned(chunk); i++) {
		uintptr_t end = i == 0 ? top : chunk + load_ptr(chunk + L.chunk_size);
		if (frame >= chunk + L.chunk_data && frame + len <= end && end > chunk)
			return 1;
		chunk = load_ptr(chunk + L.chunk_previous);
	}
	return 0;
}

uint32_t pystack_walk(struct pystack_frame *out, uint32_t max, uint32_t *flags)
{
	if (flags)
		*flags = 0;
	if (atomic_load_explicit(&P.state, memory_order_acquire) != PYSTACK_ENABLED)
		return 0;
	/* The thread's PyThreadState through the gilstate TSS key, as
	 * PyGILState_GetThisThreadState does: pthread_getspecific, which in glibc is an array
	 * read in the thread's descriptor (no lock, no allocation, no system call), so it is
	 * safe here. The key is created by Py_Initialize and deleted at finalization;
	 * _is_initialized says whether it is there. */
	uintptr_t tss = P.runtime + L.runtime_tss;
	if (!load_i32(tss + L.tss_initialized))
		return 0;
	pthread_key_t key;
	memcpy(&key, (const void *)(tss + L.tss_key), sizeof(key));
	uintptr_t ts = (uintptr_t)pthread_getspecific(key);
	if (!aligned(ts))
		return 0;
	uintptr_t cframe = load_ptr(ts + L.ts_cframe);
	if (!aligned(cframe))
		return 0;
	uintptr_t frame = load_ptr(cframe + L.cframe_current);
	/* A frame is trusted in place only inside the live frame stack. Elsewhere (a
	 * generator's frame, or the innermost frame while it is half made: the eval loop sets
	 * tstate->cframe before cframe.current_frame, and frees a chunk before current_frame
	 * moves off it) its fields are copied with safe_read, and an f_code that is not a code
	 * object ends the walk. */
	uintptr_t chunk = load_ptr(ts + L.ts_datastack_chunk);
	uintptr_t top = load_ptr(ts + L.ts_datastack_top);
	uint32_t n = 0, depth = 0, fl = 0;
	uintptr_t tortoise = frame; /* Brent's cycle detection */
	uint32_t power = 1, lam = 0;
	while (frame) {
		if (!aligned(frame) || n == max || depth == PYSTACK_MAX_FRAMES) {
			fl |= PYSTACK_TRUNCATED;
			break;
		}
		unsigned char fr[72];
		const unsigned char *f = (const unsigned char *)frame;
		if (!in_datastack(chunk, top, frame, sizeof(fr))) {
			if (safe_read(fr, frame, sizeof(fr)) != 0) {
				fl |= PYSTACK_TRUNCATED;
				break;
			}
			f = fr;
		}
		uintptr_t code, prev, prev_instr;
		memcpy(&code, f + L.frame_code, sizeof(code));
		memcpy(&prev, f + L.frame_previous, sizeof(prev));
		memcpy(&prev_instr, f + L.frame_prev_instr, sizeof(prev_instr));
		unsigned char is_entry = f[L.frame_is_entry], owner = f[L.frame_owner];
		depth++;
		int bad;
		struct code_slot *s = code_slot_of(code, &bad);
		if (bad) {
			fl |= PYSTACK_TRUNCATED; /* not a frame: nothing it links to is trusted */
			break;
		}
		struct pystack_frame *o = &out[n++];
		o->flags = is_entry ? PYSTACK_ENTRY : 0;
		if (!s) {
			o->code = PYSTACK_CODE_UNKNOWN; /* the table is full */
			o->instr = -1;
		} else {
			uintptr_t first = code + L.code_adaptive;
			int64_t lasti = ((int64_t)prev_instr - (int64_t)first) / 2;
			/* 3.11's _PyFrame_IsIncomplete: not yet at its first traceable instruction
			 * (cells and generators being set up); kept as a marker for the merge. */
			if (owner != L.owner_generator && lasti < s->firsttraceable) {
				o->code = PYSTACK_CODE_NONE;
				o->instr = -1;
				o->flags |= PYSTACK_INCOMPLETE;
			} else {
				o->code = (uint32_t)(s - P.codes);
				o->instr =
					lasti >= 0 && lasti < s->ncodeunits ? (int32_t)lasti : -1;
			}
		}
		if (prev == frame || prev == tortoise) {
			fl |= PYSTACK_TRUNCATED; /* a loop */
			break;
		}
		if (power == ++lam) {
			tortoise = prev;
			power *= 2;
			lam = 0;
		}
		frame = prev;
	}
	if (flags)
		*flags = fl;
	return n;
}

/* ---------------------------------------------------------------------------------------- */
/* The merge (in the sampler thread). */

/* Put Python frame `f` into out; returns 0 when out is full. */
static int merge_put_py(struct pystack_merged *out, size_t max, size_t *k,
			const struct pystack_frame *f)
{
	if (f->flags & PYSTACK_INCOMPLETE)
		return 1;
	if (*k == max)
		return 0;
	out[*k] = (struct pystack_merged){ .is_python = 1, .code = f->code, .instr = f->instr };
	(*k)++;
	return 1;
}

static int merge_put_native(struct pystack_merged *out, size_t max, size_t *k, uint64_t pc)
{
	if (*k == max)
		return 0;
	out[*k] = (struct pystack_merged){ .is_python = 0, .code = PYSTACK_CODE_NONE, .pc = pc };
	(*k)++;
	return 1;
}

size_t pystack_merge(const uint64_t *pcs, const uint8_t *kinds, size_t npcs,
		     const struct pystack_frame *py, size_t npy, struct pystack_merged *out,
		     size_t max, int *truncated)
{
	size_t k = 0, j = 0;
	int ok = 1, any_eval = 0;
	if (truncated)
		*truncated = 0;
	for (size_t i = 0; i < npcs; i++)
		any_eval |= kinds[i] == PYSTACK_NATIVE_EVAL;
	if (!any_eval && npy) {
		/* The native walk never reached the eval loop: keep what ran above the
		 * interpreter, then the Python stack in place of the interpreter's frames. */
		size_t i = 0;
		for (; i < npcs && ok && kinds[i] != PYSTACK_NATIVE_PYTHON; i++)
			ok = merge_put_native(out, max, &k, pcs[i]);
		for (; j < npy && ok; j++)
			ok = merge_put_py(out, max, &k, &py[j]);
		if (!ok && truncated)
			*truncated = 1;
		return k;
	}
	for (size_t i = 0; i < npcs && ok; i++) {
		if (kinds[i] != PYSTACK_NATIVE_EVAL) {
			ok = merge_put_native(out, max, &k, pcs[i]);
			continue;
		}
		/* The Python frames this eval loop runs: up to and including the next entry. */
		size_t before = k;
		int entry = 0;
		while (j < npy && !entry && ok) {
			entry = (py[j].flags & PYSTACK_ENTRY) != 0;
			ok = merge_put_py(out, max, &k, &py[j]);
			j++;
		}
		if (ok && k == before)
			ok = merge_put_native(out, max, &k, pcs[i]); /* none left, or incomplete */
	}
	for (; j < npy && ok; j++)
		ok = merge_put_py(out, max, &k, &py[j]); /* the native walk stopped short */
	if (!ok && truncated)
		*truncated = 1;
	return k;
}
