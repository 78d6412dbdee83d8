/*
 * unwind.h: an async-signal-safe x86-64 stack unwinder over the loaded modules' .eh_frame
 * (unwind.c, issue 17). The sampler (sampler.c) walks a thread's native stack with it from a
 * SIGPROF handler's ucontext over the live stack, or in the sampler thread over the copy of
 * the user stack that perf_event took; either way the stack is a window of bytes and every
 * read outside it ends the walk as truncated. Debian's python3.11, libc and libtorch have no
 * frame pointers, so a frame-pointer walk stops (or goes astray) in their first frame; the
 * call frame information that every binary carries for C++ exceptions describes every frame.
 *
 * Thread-safety: unwind_modules_refresh() is called from ordinary code (it takes the loader's
 * lock and mallocs), never from a handler; unwind_walk() may run in any thread or signal
 * handler at any time, concurrently with a refresh; each struct unwind_cache has one user at
 * a time (one thread's handler, or the sampler thread).
 */
#ifndef OPSCOPE_RECORD_UNWIND_H
#define OPSCOPE_RECORD_UNWIND_H

#include <stdatomic.h>
#include <stdint.h>

/* The registers a walk starts from: where the thread was (rip) and its stack and frame
 * pointers. The other callee-saved registers are not tracked: GCC and LLVM base the CFA on
 * rsp or rbp (or an expression over them) everywhere but in a few prologue instructions of
 * stack-realigning functions (CFA on r10), and a frame needing one fails (counted). */
struct unwind_regs {
	uint64_t rip, rsp, rbp;
};

/* The stack memory a walk may read: addresses [lo, hi), whose bytes are at `bytes` (the
 * live stack: bytes == (const void *)lo; perf_event's copy: its buffer, lo = the sampled sp). */
struct unwind_window {
	uint64_t lo, hi;
	const unsigned char *bytes;
};

/* One register's rule in a resolved CFI row (unwind.c). */
struct unwind_rule {
	uint8_t kind;	     /* enum in unwind.c: unset, undefined, same, offset, val_offset, ... */
	uint8_t reg;	     /* DWARF register of a register rule or of a CFA based on one */
	uint16_t len;	     /* length of expr */
	int32_t off;	     /* offset from the CFA (or from reg for the CFA) */
	const uint8_t *expr; /* a DWARF expression in the module's .eh_frame, or NULL */
};

/* A resolved CFI row for one pc: how to find the CFA and the caller's rip, rsp, rbp. */
struct unwind_row {
	uint32_t what; /* UNWIND_ROW_*: no FDE, signal frame */
	struct unwind_rule cfa, rip, rsp, rbp;
};

/* 256 sets of four rows (unwind.c hashes the pc to 8 bits). Two-way sets of 128 thrashed on
 * Python stacks in some address layouts: the steady loop of bench/sampler_workload.py, about
 * 60 distinct pcs, hit 86% of its lookups in one run of three (a set holding three of one
 * walk's pcs misses on all of them every walk) against 98.7-99.0% in the others. */
#define UNWIND_CACHE_WAYS  4
#define UNWIND_CACHE_SETS  256
#define UNWIND_CACHE_SLOTS (UNWIND_CACHE_SETS * UNWIND_CACHE_WAYS)
#define UNWIND_SPAN_SETS   128

/* A resolved row in 8 bytes, for the frames nearly every walk meets (the CFA is rsp or rbp
 * plus an offset, the caller's rip saved at an offset from it, rbp saved there too or left
 * as it is, rsp = CFA) and for the outermost frame; `form` 0: the full row is needed. */
struct unwind_quick {
	int16_t cfa_off, rip_off, rbp_off;
	uint8_t form; /* enum in unwind.c: full row, CFA on rsp, CFA on rbp, outermost */
	uint8_t bits; /* rbp saved at CFA + rbp_off; the caller's pc is exact (signal frame) */
};

/* A set of the cache in one cache line: its four pcs and their quick rows. */
struct unwind_set {
	uint64_t pcs[UNWIND_CACHE_WAYS]; /* each row's pc, 0 when empty */
	struct unwind_quick quick[UNWIND_CACHE_WAYS];
};

/* A small four-way set-associative cache of pc -> resolved row, in memory the caller owns (one
 * per thread for the signal path, one for the sampler thread). Zero-initialized is empty. The
 * counters are written by the cache's one user and may be read by another thread. A lookup
 * reads one cache line, its set's, and a frame with a quick row needs nothing else: a walk
 * that runs after the program has had the caches to itself (a sample every millisecond) pays
 * a memory access per line it touches, and with rows apart from the pcs a frame touched
 * three (pcs, a 72-byte row, the stack) instead of two. A miss replaces the set's rows in
 * turn (`next`), and a hit moves nothing. */
struct unwind_cache {
	_Atomic uint64_t hits, misses;
	_Atomic uint64_t modules_gen; /* generation of the module table the rows came from */
	_Alignas(64) struct unwind_set sets[UNWIND_CACHE_SETS];
	uint8_t next[UNWIND_CACHE_SETS]; /* per set, the row a miss takes */
	struct unwind_row rows[UNWIND_CACHE_SLOTS];
	/* The rows of interrupted pcs (a walk's first), each with the addresses [lo, hi) it
	 * holds for (hi 0: empty), by the page of the pc that resolved it: UNWIND_SPAN_SETS
	 * sets of UNWIND_CACHE_WAYS, replaced in turn (span_next). An interrupted pc is looked
	 * for here only, and a return address the sets do not have here next. */
	_Alignas(128) struct unwind_span_set {
		struct {
			uint64_t lo, hi;
		} way[UNWIND_CACHE_WAYS];
		struct unwind_quick quick[UNWIND_CACHE_WAYS]; /* in the line after (a pair) */
	} spans[UNWIND_SPAN_SETS];
	uint8_t span_next[UNWIND_SPAN_SETS];
	struct unwind_row span_rows[UNWIND_SPAN_SETS * UNWIND_CACHE_WAYS];
};

/* Bits of unwind_walk()'s *flags. */
#define UNWIND_TRUNCATED 1u /* the outermost frames are missing */
#define UNWIND_BAD_CFI	 2u /* a frame's CFI could not be used (unsupported op, bad data) */
#define UNWIND_NO_MODULE 4u /* a pc was in no known module: refresh the module table */
#define UNWIND_FP_STEP	 8u /* a frame without CFI was left through its frame pointer */

/* Walk the stack from `regs` over `win`: pcs[0] = regs->rip, then the return addresses, at
 * most `max`. Returns how many; *flags gets UNWIND_* bits. A walk is complete (no
 * UNWIND_TRUNCATED) only when it reaches a frame whose return address is explicitly
 * undefined (glibc's _start and clone3/clone). Async-signal-safe: no locks, no allocation. */
uint32_t unwind_walk(const struct unwind_regs *regs, const struct unwind_window *win,
		     struct unwind_cache *cache, uint64_t *pcs, uint32_t max, uint32_t *flags);

/* Build the module table (dl_iterate_phdr: executable PT_LOAD ranges and PT_GNU_EH_FRAME) if
 * no table exists or the loader's count of loaded and unloaded objects changed since the last
 * one. Tables replaced are never freed (a handler may still read one): one leaked table per
 * dlopen/dlclose seen, a few KiB each. Not async-signal-safe. 0, or -1 without memory. */
int unwind_modules_refresh(void);

/* Counters of all walks so far (relaxed): frames found, frames whose CFI failed, frames left
 * through a frame pointer for lack of CFI. */
struct unwind_stats {
	uint64_t walks, frames, bad_cfi, fp_steps, truncated;
};
void unwind_stats_get(struct unwind_stats *s);
/* Zero them (a forked child counts its own walks). */
void unwind_stats_reset(void);

#endif
