/*
 * test_unwind.c: the .eh_frame unwinder (src/record/unwind.c) against glibc's backtrace(),
 * which walks with libgcc's DWARF unwinder: an independent oracle. This file is built with
 * -O2 -fomit-frame-pointer (tests/CMakeLists.txt), so a frame-pointer walk cannot follow its
 * chain of noinline functions; the walk must agree with backtrace() frame for frame, through
 * a libc frame (qsort's callback, raise()'s signal), a PLT stub's CFA expression, and a
 * window too small for the stack must end truncated, never in garbage.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <ucontext.h>
#include <unistd.h>

#include "harness.h"
#include "record/unwind.h"

#define MAXF 64

static volatile int sink;

/* What one capture saw: our walk and backtrace()'s, from the same frame. */
struct capture {
	uint64_t pcs[MAXF];
	uint32_t n, flags;
	void *bt[MAXF];
	int nbt;
	uint64_t rsp;
};

static struct unwind_cache cache;
static uint64_t stack_hi;

static void find_stack_hi(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		pthread_attr_getstack(&a, &addr, &size);
		stack_hi = (uint64_t)(uintptr_t)addr + size;
		pthread_attr_destroy(&a);
	}
}

static void walk_ctx(const ucontext_t *uc, uint64_t hi, struct capture *cap)
{
	struct unwind_regs r = { (uint64_t)uc->uc_mcontext.gregs[REG_RIP],
				 (uint64_t)uc->uc_mcontext.gregs[REG_RSP],
				 (uint64_t)uc->uc_mcontext.gregs[REG_RBP] };
	struct unwind_window w = { r.rsp, hi, (const unsigned char *)(uintptr_t)r.rsp };
	cap->rsp = r.rsp;
	cap->n = unwind_walk(&r, &w, &cache, cap->pcs, MAXF, &cap->flags);
	/* Without a cache every frame goes through its full row: the cache's quick rows
	 * (struct unwind_quick) must give the same walk, frame for frame. */
	uint64_t pcs[MAXF];
	uint32_t flags, n = unwind_walk(&r, &w, NULL, pcs, MAXF, &flags);
	CHECK_EQ_U(n, cap->n);
	CHECK_EQ_U(flags & ~UNWIND_NO_MODULE, cap->flags & ~UNWIND_NO_MODULE);
	CHECK(memcmp(pcs, cap->pcs, (n < cap->n ? n : cap->n) * sizeof(pcs[0])) == 0);
}

/* Our pcs[1..] (the callers of the captured frame) against backtrace()'s bt[from..]. Under
 * ASan, backtrace() is an interceptor whose own frame comes first: one frame of bt before
 * pcs[1] is skipped. */
static void check_same_callers(const struct capture *cap, int from)
{
	if (cap->n > 1 && from + 1 < cap->nbt &&
	    (uint64_t)(uintptr_t)cap->bt[from] != cap->pcs[1] &&
	    (uint64_t)(uintptr_t)cap->bt[from + 1] == cap->pcs[1])
		from++;
	int have = cap->nbt - from;
	CHECK_EQ_U(cap->n - 1, have);
	for (int i = 0; i < have && i + 1 < (int)cap->n; i++)
		if (cap->pcs[i + 1] != (uint64_t)(uintptr_t)cap->bt[from + i])
			CHECK_FAIL_("frame %d: 0x%llx != backtrace's 0x%llx", i + 1,
				    (unsigned long long)cap->pcs[i + 1],
				    (unsigned long long)(uintptr_t)cap->bt[from + i]);
	CHECK_EQ_U(cap->flags & UNWIND_TRUNCATED, 0);
	CHECK_EQ_U(cap->flags & UNWIND_BAD_CFI, 0);
}

/* ---- A chain of noinline functions without frame pointers. ---- */

static struct capture chain_cap;
static int cut_windows;		  /* chain4 also walks with windows cut short */
static int span_walk;		  /* chain4 also walks from another pc of its row's span */
static struct capture span_cap;	  /* that walk */
static uint64_t span_lo, span_hi; /* the span pcs[0] was found in */
static uint64_t span_misses;	  /* the cache's misses before that walk */
static int cuts_tried, cuts_bad;  /* walks with a cut window; those that were not a truncated
				  * prefix of the full walk */

__attribute__((noinline)) static void chain4(int k)
{
	ucontext_t uc;
	getcontext(&uc);
	chain_cap.nbt = backtrace(chain_cap.bt, MAXF);
	walk_ctx(&uc, stack_hi, &chain_cap);
	if (span_walk) {
		span_lo = span_hi = 0;
		for (int i = 0; i < UNWIND_SPAN_SETS; i++)
			for (int w = 0; w < UNWIND_CACHE_WAYS; w++)
				if (cache.spans[i].way[w].lo <= chain_cap.pcs[0] &&
				    chain_cap.pcs[0] < cache.spans[i].way[w].hi) {
					span_lo = cache.spans[i].way[w].lo;
					span_hi = cache.spans[i].way[w].hi;
				}
		span_misses = cache.misses;
		ucontext_t other = uc;
		other.uc_mcontext.gregs[REG_RIP] =
			(greg_t)(chain_cap.pcs[0] != span_lo ? span_lo : span_hi - 1);
		walk_ctx(&other, stack_hi, &span_cap);
	}
	for (uint64_t hi = chain_cap.rsp; cut_windows && hi < stack_hi; hi += 24) {
		struct capture cut;
		walk_ctx(&uc, hi, &cut);
		cuts_tried++;
		int prefix = cut.n <= chain_cap.n &&
			     memcmp(cut.pcs, chain_cap.pcs, cut.n * sizeof(cut.pcs[0])) == 0;
		int whole = cut.n == chain_cap.n && !(cut.flags & UNWIND_TRUNCATED);
		if (!prefix || (!whole && !(cut.flags & UNWIND_TRUNCATED)))
			cuts_bad++;
	}
	sink = k;
}

__attribute__((noinline)) static void chain3(int k)
{
	char pad[100];
	memset(pad, k, sizeof(pad));
	chain4(k + pad[k & 63]);
	sink = k;
}

__attribute__((noinline)) static void chain2(int k)
{
	chain3(k * 3);
	sink = k;
}

__attribute__((noinline)) static void chain1(int k)
{
	chain2(k + 1);
	sink = k;
}

TEST(chain_matches_backtrace)
{
	chain1(1);
	/* bt[0] is chain4 itself (after the backtrace call), ours pcs[0] chain4 after getcontext */
	REQUIRE(chain_cap.nbt > 5);
	check_same_callers(&chain_cap, 1);
	printf("#   %u frames, flags %u\n", chain_cap.n, chain_cap.flags);
}

TEST(cache_hits_on_a_second_walk)
{
	memset(&cache, 0, sizeof(cache));
	uint64_t m[2], h[2];
	for (volatile int i = 0; i < 2; i++) { /* one call site (not unrolled): the same pcs */
		chain1(1);
		m[i] = cache.misses;
		h[i] = cache.hits;
	}
	CHECK_EQ_U(m[0], chain_cap.n); /* an empty cache: every frame resolved */
	CHECK_EQ_U(h[0], 0);
	CHECK_EQ_U(m[1], m[0]); /* then every frame found */
	CHECK_EQ_U(h[1], chain_cap.n);
	check_same_callers(&chain_cap, 1);
	/* gcc's frames (CFA on rsp) and the outermost have quick rows, each in its set's line;
	 * the interrupted pc is in none of the sets (in the spans only) */
	uint32_t quick = 0;
	for (uint32_t i = 0; i < chain_cap.n; i++) {
		uint64_t look = i == 0 ? chain_cap.pcs[i] : chain_cap.pcs[i] - 1;
		for (int s = 0; s < UNWIND_CACHE_SETS; s++)
			for (int k = 0; k < UNWIND_CACHE_WAYS; k++)
				quick += cache.sets[s].pcs[k] == look &&
					 cache.sets[s].quick[k].form != 0;
	}
	CHECK_EQ_U(quick, chain_cap.n - 1);
}

/* Another pc where the interrupted frame's CFI row holds (the first or last address of the
 * row's span) is found in the spans: the same callers, nothing resolved. */
TEST(interrupted_pc_found_in_its_span)
{
	memset(&cache, 0, sizeof(cache));
	span_walk = 1;
	chain1(1);
	span_walk = 0;
	printf("#   pcs[0] 0x%llx in the span [0x%llx, 0x%llx)\n",
	       (unsigned long long)chain_cap.pcs[0], (unsigned long long)span_lo,
	       (unsigned long long)span_hi);
	REQUIRE(span_hi > span_lo + 1); /* getcontext's return: inside a function's body */
	CHECK_EQ_U(cache.misses, span_misses);
	CHECK_EQ_U(span_cap.n, chain_cap.n);
	CHECK(span_cap.pcs[0] != chain_cap.pcs[0]);
	CHECK(memcmp(span_cap.pcs + 1, chain_cap.pcs + 1,
		     (chain_cap.n - 1) * sizeof(chain_cap.pcs[0])) == 0);
	CHECK_EQ_U(span_cap.flags, chain_cap.flags);
}

/* ---- Through libc: a qsort callback. ---- */

static struct capture qsort_cap;
static int captured;

__attribute__((noinline)) static int cmp_int(const void *a, const void *b)
{
	if (!captured) {
		captured = 1;
		ucontext_t uc;
		getcontext(&uc);
		qsort_cap.nbt = backtrace(qsort_cap.bt, MAXF);
		walk_ctx(&uc, stack_hi, &qsort_cap);
	}
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void sort_some(void)
{
	int v[32];
	for (int i = 0; i < 32; i++)
		v[i] = (i * 7919) % 32;
	qsort(v, 32, sizeof(v[0]), cmp_int);
	sink = v[0];
}

TEST(through_qsort)
{
	captured = 0;
	sort_some();
	REQUIRE(qsort_cap.nbt > 5);
	check_same_callers(&qsort_cap, 1);
}

/* ---- From a signal's ucontext, interrupted inside libc (raise). ---- */

static struct capture sig_cap;
static uint64_t sig_pc;

static void on_sig(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	const ucontext_t *uc = ucv;
	sig_pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	walk_ctx(uc, stack_hi, &sig_cap);
	sig_cap.nbt = backtrace(sig_cap.bt, MAXF);
}

__attribute__((noinline)) static void raise_here(void)
{
	raise(SIGUSR1);
	sink = 2;
}

TEST(signal_in_libc)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sig;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	raise_here();
	sigaction(SIGUSR1, &old, NULL);
	/* backtrace(): the handler, the signal trampoline, then the interrupted pc exactly */
	int at = -1;
	for (int i = 0; i < sig_cap.nbt; i++)
		if ((uint64_t)(uintptr_t)sig_cap.bt[i] == sig_pc) {
			at = i;
			break;
		}
	REQUIRE(at >= 0);
	check_same_callers(&sig_cap, at + 1);
	CHECK(sig_cap.n > 4);
}

/* ---- A window smaller than the stack: truncated, and what is there is right. ---- */

TEST(small_window_truncated)
{
	cut_windows = 1;
	chain1(1);
	cut_windows = 0;
	REQUIRE(chain_cap.n > 4);
	CHECK(cuts_tried > 10);
	CHECK_EQ_I(cuts_bad, 0);
}

/* ---- A PLT stub: the CFA expression rsp + 8 + ((rip & 15) >= 11) * 8. ---- */

static uint64_t plt_start(void)
{
	/* .plt of this executable, from its section headers */
	int fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		return 0;
	Elf64_Ehdr eh;
	uint64_t at = 0;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) && eh.e_shentsize == sizeof(Elf64_Shdr)) {
		Elf64_Shdr sh[256], str;
		unsigned n = eh.e_shnum < 256 ? eh.e_shnum : 256;
		if (pread(fd, sh, n * sizeof(sh[0]), (off_t)eh.e_shoff) ==
			    (ssize_t)(n * sizeof(sh[0])) &&
		    eh.e_shstrndx < n) {
			str = sh[eh.e_shstrndx];
			for (unsigned i = 0; i < n; i++) {
				char name[16] = "";
				pread(fd, name, sizeof(name) - 1,
				      (off_t)(str.sh_offset + sh[i].sh_name));
				if (strcmp(name, ".plt") == 0)
					at = sh[i].sh_addr;
			}
		}
	}
	close(fd);
	return at ? at + (uint64_t)_r_debug.r_map->l_addr : 0;
}

TEST(plt_stub_expression)
{
	uint64_t plt = plt_start();
	if (!plt) {
		SKIP("no .plt in this executable");
		return;
	}
	/* a fake stack: [rsp] = a "return address" for a pc before the stub's push, [rsp+8]
	 * one for a pc after it; both point nowhere, so the walk stops after them */
	uint64_t stack[4] = { 0x1111, 0x2222, 0, 0 };
	struct unwind_window w = { 0x10000, 0x10000 + sizeof(stack), (const unsigned char *)stack };
	uint64_t pcs[8];
	uint32_t flags;
	struct unwind_regs before = { plt + 16 + 0, 0x10000, 0 }; /* entry 1, its jmp */
	uint32_t n = unwind_walk(&before, &w, NULL, pcs, 8, &flags);
	REQUIRE(n >= 2);
	CHECK_EQ_U(pcs[1], 0x1111);
	CHECK_EQ_U(flags & UNWIND_BAD_CFI, 0);
	struct unwind_regs after = { plt + 16 + 11, 0x10000, 0 }; /* after its push */
	n = unwind_walk(&after, &w, NULL, pcs, 8, &flags);
	REQUIRE(n >= 2);
	CHECK_EQ_U(pcs[1], 0x2222);
	CHECK_EQ_U(flags & UNWIND_BAD_CFI, 0);
	/* 0x2222 is in no module, rbp 0: no frame-pointer step either, so truncated */
	CHECK(flags & UNWIND_TRUNCATED);
	CHECK(flags & UNWIND_NO_MODULE);
}

/* ---- A module loaded after the table was built: found through the loader's list. ---- */

TEST(module_loaded_later)
{
	/* a library not loaded yet (whichever this build links already is skipped) */
	static const char *const libs[][2] = { { "libexpat.so.1", "XML_ExpatVersion" },
					       { "libffi.so.8", "ffi_call" },
					       { "libbz2.so.1.0", "BZ2_bzlibVersion" },
					       { "liblzma.so.5", "lzma_version_number" },
					       { "libz.so.1", "zlibVersion" } };
	void *z = NULL, *fn = NULL;
	unwind_modules_refresh();
	for (unsigned i = 0; i < sizeof(libs) / sizeof(libs[0]) && !z; i++) {
		void *loaded = dlopen(libs[i][0], RTLD_NOW | RTLD_NOLOAD);
		if (loaded) {
			dlclose(loaded);
			continue;
		}
		z = dlopen(libs[i][0], RTLD_NOW | RTLD_LOCAL);
		if (z)
			fn = dlsym(z, libs[i][1]);
	}
	if (!z) {
		SKIP("no library left to load");
		return;
	}
	REQUIRE(fn != NULL);
	/* at the function's first instruction (never called): CFA = rsp + 8, the return
	 * address at [rsp] */
	uint64_t ret = (uint64_t)(uintptr_t)&chain1 + 1;
	uint64_t stack[2] = { ret, 0 };
	struct unwind_window w = { 0x10000, 0x10000 + sizeof(stack), (const unsigned char *)stack };
	struct unwind_regs r = { (uint64_t)(uintptr_t)fn, 0x10000, 0 };
	uint64_t pcs[8];
	uint32_t flags;
	uint32_t n = unwind_walk(&r, &w, NULL, pcs, 8, &flags);
	CHECK(flags & UNWIND_NO_MODULE); /* not in the table: the handler could not rebuild it */
	REQUIRE(n >= 2);		 /* yet its CFI was used */
	CHECK_EQ_U(pcs[1], ret);
	dlclose(z);
}

/* before the tests: libgcc_s loaded (backtrace's first call dlopens it), the module table */
__attribute__((constructor)) static void setup(void)
{
	void *warm[4];
	backtrace(warm, 4);
	find_stack_hi();
	unwind_modules_refresh();
}

TEST_MAIN(chain_matches_backtrace, cache_hits_on_a_second_walk, interrupted_pc_found_in_its_span,
	  through_qsort, signal_in_libc, small_window_truncated, plt_stub_expression,
	  module_loaded_later)
