/*
 * test_pystack_embed.c: the Python stack reader (record/pystack.h) on a real CPython 3.11,
 * embedded. A SIGPROF CPU-time timer's handler calls pystack_walk, as the sampler's handler
 * will, while a script of known structure runs:
 *   a -> b -> c, c a hot loop on one line;  sorted(key=key) inside d (an entry frame in the
 *   middle of the stack);  a generator driven by sum() (a generator's frame, off the frame
 *   stack);  functions named with 1-, 2- and 4-byte characters;  a second thread t1 -> t2.
 * Then every sample is checked against what Python itself says: the line numbers come from
 * the script (sys._getframe().f_lineno), and pystack_line is compared with PyCode_Addr2Line
 * on every instruction of every function, names with co_qualname, files with co_filename.
 * Counts are of samples taken on CPU time, so a loaded machine gives the same shares.
 */
#include <Python.h>

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "harness.h"
#include "record/pystack.h"

#define MAX_SAMPLES 8192
#define DEPTH	    32

struct sample {
	pid_t tid;
	uint32_t n, flags;
	uint64_t ns; /* the walk took (reported, never asserted) */
	struct pystack_frame f[DEPTH];
};
static struct sample samples[MAX_SAMPLES];
static _Atomic uint32_t nsamples;

static void on_sigprof(int sig)
{
	(void)sig;
	int saved = errno;
	uint32_t i = atomic_fetch_add(&nsamples, 1);
	if (i < MAX_SAMPLES) {
		struct timespec t0, t1;
		samples[i].tid = (pid_t)syscall(SYS_gettid);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		samples[i].n = pystack_walk(samples[i].f, DEPTH, &samples[i].flags);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		samples[i].ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000L +
					   (t1.tv_nsec - t0.tv_nsec));
	}
	errno = saved;
}

#define SCRIPT_FILE "/virtual/pystack_embed_script.py"

/* L[name] is the line Python reports for the marked statement (the one after here()). */
static const char script[] =
	"import sys, threading\n"
	"L = {}\n"
	"def here():\n"
	"    return sys._getframe(1).f_lineno\n"
	"def c(n):\n"
	"    s = 0\n"
	"    L['c'] = here() + 1\n"
	"    for i in range(n): s += i\n"
	"    return s\n"
	"def b(n):\n"
	"    L['b'] = here() + 1\n"
	"    return c(n)\n"
	"def a(n):\n"
	"    L['a'] = here() + 1\n"
	"    return a_inner(n)\n"
	"def a_inner(n):\n"
	"    return b(n)\n"
	"def key(x):\n"
	"    L['key'] = here() + 1\n"
	"    for i in range(1000): pass\n"
	"    return -x\n"
	"def d(n):\n"
	"    L['d'] = here() + 1\n"
	"    return sorted(range(n), key=key)\n"
	"def gen(n):\n"
	"    L['gen'] = here() + 1\n"
	"    for i in range(n): yield i\n"
	"def e(n):\n"
	"    L['e'] = here() + 1\n"
	"    return sum(gen(n))\n"
	"def café(n):\n"
	"    for i in range(n): pass\n"
	"def λόγος(n):\n"
	"    for i in range(n): pass\n"
	"def 𐒀𐒁x(n):\n"
	"    for i in range(n): pass\n"
	"def t2(n):\n"
	"    L['t2'] = here() + 1\n"
	"    for i in range(n): pass\n"
	"def t1(n):\n"
	"    L['tid'] = threading.get_native_id()\n"
	"    t2(n)\n"
	/* a function with lines far apart and backwards jumps: long location entries */
	"exec(compile('def far(n):\\n    x = 0\\n' + '\\n' * 200 + '    for i in range(n):\\n'\n"
	"    '        x += (i +\\n              1)\\n' + '\\n' * 100 + '    return x\\n',\n"
	"    '" SCRIPT_FILE "', 'exec'), globals())\n"
	"th = threading.Thread(target=t1, args=(8000000,))\n"
	"th.start()\n"
	"L['call_a'] = here() + 1\n"
	"a(3000000)\n"
	"th.join()\n"
	"L['call_d'] = here() + 1\n"
	"d(6000)\n"
	"L['call_e'] = here() + 1\n"
	"e(3000000)\n"
	"café(3000000)\n"
	"λόγος(3000000)\n"
	"𐒀𐒁x(3000000)\n"
	"far(10)\n";

static PyObject *globals; /* the script's module dict */

static long line_of(const char *name)
{
	PyObject *l = PyDict_GetItemString(globals, "L");
	PyObject *v = l ? PyDict_GetItemString(l, name) : NULL;
	return v ? PyLong_AsLong(v) : -1;
}

static const char *name_of(const struct pystack_frame *f)
{
	const char *s = pystack_code_name(f->code);
	return s ? s : "(none)";
}

/* Does sample s's stack start (innermost first) with these names? */
static int starts_with(const struct sample *s, const char *const *names, uint32_t n)
{
	if (s->n < n)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(name_of(&s->f[i]), names[i]) != 0)
			return 0;
	return 1;
}

static int has(const struct sample *s, const char *name)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (strcmp(name_of(&s->f[i]), name) == 0)
			return 1;
	return 0;
}

static int ran;
static uint32_t total;

static void run_script(void)
{
	if (ran)
		return;
	ran = 1;
	Py_InitializeEx(0);
	const char *warning = "unset";
	if (pystack_init(&warning) != PYSTACK_ENABLED)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigprof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	PyObject *main = PyImport_AddModule("__main__");
	globals = PyModule_GetDict(main);
	PyObject *code = Py_CompileString(script, SCRIPT_FILE, Py_file_input);
	PyObject *r = code ? PyEval_EvalCode(code, globals, globals) : NULL;
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	if (!r)
		PyErr_Print();
	Py_XDECREF(r);
	Py_XDECREF(code);
	total = atomic_load(&nsamples);
	if (total > MAX_SAMPLES)
		total = MAX_SAMPLES;
	/* what a walk costs, for docs/sampling.md: the median over samples with frames */
	static uint64_t ns[MAX_SAMPLES];
	uint32_t k = 0, frames = 0;
	for (uint32_t i = 0; i < total; i++)
		if (samples[i].n) {
			ns[k++] = samples[i].ns;
			frames += samples[i].n;
		}
	for (uint32_t i = 1; i < k; i++) /* insertion sort: a few hundred */
		for (uint32_t j = i; j > 0 && ns[j - 1] > ns[j]; j--) {
			uint64_t t = ns[j];
			ns[j] = ns[j - 1];
			ns[j - 1] = t;
		}
	printf("# %u samples, %u with Python frames (%.1f frames each), walk median %llu ns, "
	       "max %llu ns\n",
	       total, k, k ? (double)frames / k : 0.0, k ? (unsigned long long)ns[k / 2] : 0ull,
	       k ? (unsigned long long)ns[k - 1] : 0ull);
}

TEST(init_finds_python)
{
	run_script();
	const char *warning = "unset";
	REQUIRE(pystack_init(&warning) == PYSTACK_ENABLED);
	CHECK(warning == NULL);
	CHECK_EQ_I(pystack_native_kind((uint64_t)(uintptr_t)&_PyEval_EvalFrameDefault + 16),
		   PYSTACK_NATIVE_EVAL);
	CHECK_EQ_I(pystack_native_kind((uint64_t)(uintptr_t)&Py_InitializeEx),
		   PYSTACK_NATIVE_PYTHON);
	CHECK_EQ_I(pystack_native_kind((uint64_t)(uintptr_t)&run_script), PYSTACK_NATIVE_OTHER);
	uintptr_t lo, hi;
	pystack_eval_range(&lo, &hi);
	CHECK(lo == (uintptr_t)&_PyEval_EvalFrameDefault && hi > lo + 1000);
}

/* a -> a_inner -> b -> c: nearly all of a's samples are in c's loop, with every line right. */
TEST(call_chain)
{
	run_script();
	REQUIRE(total > 0);
	static const char *const chain[] = { "c", "b", "a_inner", "a", "<module>" };
	uint32_t in_a = 0, exact = 0;
	for (uint32_t i = 0; i < total; i++) {
		const struct sample *s = &samples[i];
		if (!has(s, "a"))
			continue;
		in_a++;
		if (!starts_with(s, chain, 5) || s->n != 5 || s->flags != 0)
			continue;
		if (pystack_line(s->f[0].code, s->f[0].instr) != line_of("c") ||
		    pystack_line(s->f[1].code, s->f[1].instr) != line_of("b") ||
		    pystack_line(s->f[3].code, s->f[3].instr) != line_of("a") ||
		    pystack_line(s->f[4].code, s->f[4].instr) != line_of("call_a"))
			continue;
		/* only the module's frame began a C call of the eval loop */
		if (s->f[0].flags || s->f[1].flags || s->f[2].flags || s->f[3].flags ||
		    s->f[4].flags != PYSTACK_ENTRY)
			continue;
		if (strcmp(pystack_code_file(s->f[0].code), SCRIPT_FILE) != 0)
			continue;
		exact++;
	}
	printf("# %u samples in a, %u exactly c:%ld b a_inner a <module>\n", in_a, exact,
	       line_of("c"));
	CHECK(in_a >= 10);
	CHECK(exact * 10 >= in_a * 9);
}

/* sorted(key=key) in d: key's frame is an entry frame in the middle of the Python stack. */
TEST(entry_mid_stack)
{
	run_script();
	static const char *const chain[] = { "key", "d", "<module>" };
	uint32_t n = 0, exact = 0;
	for (uint32_t i = 0; i < total; i++) {
		const struct sample *s = &samples[i];
		if (!has(s, "key"))
			continue;
		n++;
		exact += starts_with(s, chain, 3) && s->n == 3 && s->f[0].flags == PYSTACK_ENTRY &&
			 s->f[1].flags == 0 && s->f[2].flags == PYSTACK_ENTRY &&
			 pystack_line(s->f[0].code, s->f[0].instr) == line_of("key") &&
			 pystack_line(s->f[1].code, s->f[1].instr) == line_of("d") &&
			 pystack_line(s->f[2].code, s->f[2].instr) == line_of("call_d");
	}
	printf("# %u samples in key, %u exactly\n", n, exact);
	CHECK(n >= 5);
	/* key is called 6000 times: a few samples fall in its call, its marker or its return */
	CHECK(exact * 10 >= n * 8);
}

/* A generator driven by the C builtin sum(): its frame lives in the generator object. */
TEST(generator)
{
	run_script();
	static const char *const chain[] = { "gen", "e", "<module>" };
	uint32_t n = 0, exact = 0;
	for (uint32_t i = 0; i < total; i++) {
		const struct sample *s = &samples[i];
		if (!has(s, "gen"))
			continue;
		n++;
		exact += starts_with(s, chain, 3) && s->n == 3 && s->f[0].flags == PYSTACK_ENTRY &&
			 s->f[1].flags == 0 &&
			 pystack_line(s->f[0].code, s->f[0].instr) == line_of("gen") &&
			 pystack_line(s->f[1].code, s->f[1].instr) == line_of("e");
	}
	printf("# %u samples in gen, %u exactly\n", n, exact);
	CHECK(n >= 5);
	CHECK(exact * 10 >= n * 9);
}

/* Names with 1-byte (é), 2-byte (λόγος) and 4-byte (U+10480) characters, as UTF-8. */
TEST(non_ascii_names)
{
	run_script();
	static const char *const names[] = { "caf\xc3\xa9",
					     "\xce\xbb\xcf\x8c\xce\xb3\xce\xbf\xcf\x82",
					     "\xf0\x90\x92\x80\xf0\x90\x92\x81x" };
	for (int k = 0; k < 3; k++) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < total; i++)
			n += samples[i].n == 2 &&
			     strcmp(name_of(&samples[i].f[0]), names[k]) == 0 &&
			     strcmp(name_of(&samples[i].f[1]), "<module>") == 0;
		printf("# %u samples in %s\n", n, names[k]);
		CHECK(n >= 3);
	}
}

/* The second thread's samples show its own stack, and never the main thread's. */
TEST(threads)
{
	run_script();
	long tid = line_of("tid");
	REQUIRE(tid > 0);
	static const char *const chain[] = { "t2", "t1", "Thread.run" };
	uint32_t mine = 0, exact = 0, crossed = 0;
	for (uint32_t i = 0; i < total; i++) {
		const struct sample *s = &samples[i];
		if (s->tid == tid) {
			mine++;
			exact += starts_with(s, chain, 3) &&
				 pystack_line(s->f[0].code, s->f[0].instr) == line_of("t2");
			crossed += has(s, "a") || has(s, "c") || has(s, "<module>");
		} else {
			crossed += has(s, "t1") || has(s, "t2");
		}
	}
	printf("# %u samples on the thread, %u in t2 <- t1 <- Thread.run\n", mine, exact);
	CHECK(exact >= 10);
	CHECK(exact * 10 >= mine * 8);
	CHECK_EQ_U(crossed, 0);
}

/* pystack_line against PyCode_Addr2Line on every instruction of every function of the
 * script, and the copied names and files against co_qualname and co_filename. */
TEST(lines_and_names_match_cpython)
{
	run_script();
	static const char *const funcs[] = { "c",   "b", "a",  "a_inner", "key", "d",
					     "gen", "e", "t1", "t2",	  "far", "caf\xc3\xa9" };
	uint32_t checked = 0;
	for (size_t k = 0; k < sizeof(funcs) / sizeof(funcs[0]); k++) {
		PyObject *fn = PyDict_GetItemString(globals, funcs[k]);
		REQUIRE(fn != NULL);
		PyCodeObject *co = (PyCodeObject *)PyFunction_GetCode(fn);
		uint32_t id = pystack_intern_code(co);
		REQUIRE(id != PYSTACK_CODE_UNKNOWN);
		CHECK_EQ_U(pystack_intern_code(co), id); /* the same id again */
		CHECK_STR(pystack_code_name(id), PyUnicode_AsUTF8(co->co_qualname));
		CHECK_STR(pystack_code_file(id), SCRIPT_FILE);
		CHECK_EQ_I(pystack_line(id, -1), co->co_firstlineno);
		for (Py_ssize_t i = 0; i < Py_SIZE(co); i++) {
			int want = PyCode_Addr2Line(co, (int)i * 2);
			if (want < 0) /* no line: pystack says the first line */
				want = co->co_firstlineno;
			int got = pystack_line(id, (int32_t)i);
			if (got != want)
				printf("#   %s instr %zd: line %d, CPython %d\n", funcs[k], i, got,
				       want);
			CHECK_EQ_I(got, want);
			checked++;
		}
	}
	printf("# %u instructions checked\n", checked);
	/* far's lines go 200 down and back: the long forms of the table were needed */
	PyCodeObject *far =
		(PyCodeObject *)PyFunction_GetCode(PyDict_GetItemString(globals, "far"));
	CHECK(pystack_line(pystack_intern_code(far), (int32_t)Py_SIZE(far) - 1) >
	      far->co_firstlineno + 300);
	/* not a code object: unknown, nothing interned */
	CHECK_EQ_U(pystack_intern_code(globals), PYSTACK_CODE_UNKNOWN);
	CHECK_EQ_U(pystack_intern_code((char *)globals + 3), PYSTACK_CODE_UNKNOWN);
	CHECK_EQ_U(pystack_codes_dropped(), 0);
}

/* A thread with no Python state (this one's own helper) walks nothing. */
static void *no_python_thread(void *arg)
{
	struct pystack_frame f[4];
	uint32_t flags = 7;
	*(uint32_t *)arg = pystack_walk(f, 4, &flags) + flags;
	return NULL;
}

TEST(thread_without_python)
{
	run_script();
	uint32_t got = 99;
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, no_python_thread, &got) == 0);
	pthread_join(t, NULL);
	CHECK_EQ_U(got, 0);
}

/* ---- Damaged stacks: a thread without Python gets a made-up PyThreadState through the
 * interpreter's TSS key, pointing at frames built here, and pystack_walk must stop (never
 * fault) at each kind of damage. ---- */

#define LY pystack_layout_311

struct fake {
	_Alignas(16) unsigned char ts[512], cframe[64], frames[300][128];
};
static struct fake fk;
static unsigned char *unmapped; /* a page with no access */

static void fake_frame(int i, const void *code, const void *prev)
{
	unsigned char *f = fk.frames[i];
	memset(f, 0, sizeof(fk.frames[i]));
	uintptr_t c = (uintptr_t)code, p = (uintptr_t)prev;
	uintptr_t instr = c + LY.code_adaptive + 2; /* instruction 1 */
	memcpy(f + LY.frame_code, &c, sizeof(c));
	memcpy(f + LY.frame_previous, &p, sizeof(p));
	memcpy(f + LY.frame_prev_instr, &instr, sizeof(instr));
	f[LY.frame_owner] = LY.owner_generator;
}

struct walk_result {
	const void *innermost;
	uint32_t max, n, flags;
};

static void *walk_fake(void *arg)
{
	struct walk_result *w = arg;
	uintptr_t runtime = (uintptr_t)dlsym(RTLD_DEFAULT, "_PyRuntime");
	pthread_key_t key;
	memcpy(&key, (const void *)(runtime + LY.runtime_tss + LY.tss_key), sizeof(key));
	memset(fk.ts, 0, sizeof(fk.ts));
	uintptr_t cf = (uintptr_t)fk.cframe, in = (uintptr_t)w->innermost;
	memcpy(fk.ts + LY.ts_cframe, &cf, sizeof(cf));
	memcpy(fk.cframe + LY.cframe_current, &in, sizeof(in));
	pthread_setspecific(key, fk.ts);
	struct pystack_frame out[PYSTACK_MAX_FRAMES];
	w->n = pystack_walk(out, w->max, &w->flags);
	pthread_setspecific(key, NULL);
	return NULL;
}

static struct walk_result walk_from(const void *innermost, uint32_t max)
{
	struct walk_result w = { innermost, max, 99, 99 };
	pthread_t t;
	if (pthread_create(&t, NULL, walk_fake, &w) == 0)
		pthread_join(t, NULL);
	return w;
}

TEST(damaged_stacks)
{
	run_script();
	REQUIRE(globals != NULL);
	if (!unmapped) {
		unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		REQUIRE(unmapped != MAP_FAILED);
	}
	PyObject *code = PyFunction_GetCode(PyDict_GetItemString(globals, "c"));
	struct walk_result w;
	/* well made: three frames, then previous = NULL */
	fake_frame(0, code, fk.frames[1]);
	fake_frame(1, code, fk.frames[2]);
	fake_frame(2, code, NULL);
	w = walk_from(fk.frames[0], 32);
	CHECK_EQ_U(w.n, 3);
	CHECK_EQ_U(w.flags, 0);
	/* the innermost frame in memory that is not mapped */
	w = walk_from(unmapped, 32);
	CHECK_EQ_U(w.n, 0);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
	/* a link to a frame that is not mapped */
	fake_frame(1, code, unmapped + 64);
	w = walk_from(fk.frames[0], 32);
	CHECK_EQ_U(w.n, 2);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
	/* a misaligned link */
	fake_frame(1, code, (unsigned char *)fk.frames[2] + 3);
	w = walk_from(fk.frames[0], 32);
	CHECK_EQ_U(w.n, 2);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
	/* f_code not a code object (a dict), then f_code not mapped */
	fake_frame(1, globals, fk.frames[2]);
	w = walk_from(fk.frames[0], 32);
	CHECK_EQ_U(w.n, 1);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
	fake_frame(1, unmapped, fk.frames[2]);
	w = walk_from(fk.frames[0], 32);
	CHECK_EQ_U(w.n, 1);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
	/* a loop of two frames, and a loop of one */
	fake_frame(1, code, fk.frames[0]);
	w = walk_from(fk.frames[0], 32);
	CHECK(w.n >= 2 && w.n <= 4);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
	fake_frame(0, code, fk.frames[0]);
	w = walk_from(fk.frames[0], 32);
	CHECK_EQ_U(w.n, 1);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
	/* a loop of 40 frames, longer than the caller's room: cut at the room */
	for (int i = 0; i < 40; i++)
		fake_frame(i, code, fk.frames[(i + 1) % 40]);
	w = walk_from(fk.frames[0], 32);
	CHECK_EQ_U(w.n, 32);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
	/* ... and with room for all: the loop is found */
	w = walk_from(fk.frames[0], PYSTACK_MAX_FRAMES);
	CHECK(w.n >= 40 && w.n < 120);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
	/* a chain of 300 frames: cut at the depth bound */
	for (int i = 0; i < 300; i++)
		fake_frame(i, code, i + 1 < 300 ? fk.frames[i + 1] : NULL);
	w = walk_from(fk.frames[0], PYSTACK_MAX_FRAMES);
	CHECK_EQ_U(w.n, PYSTACK_MAX_FRAMES);
	CHECK_EQ_U(w.flags, PYSTACK_TRUNCATED);
}

/* A code object freed and another allocated at its address gets an id of its own. */
TEST(reused_address)
{
	run_script();
	for (int attempt = 0; attempt < 100; attempt++) {
		PyObject *one = Py_CompileString("x = 1\n", "/virtual/one.py", Py_file_input);
		REQUIRE(one != NULL);
		uint32_t id1 = pystack_intern_code(one);
		REQUIRE(id1 != PYSTACK_CODE_UNKNOWN);
		uintptr_t at = (uintptr_t)one;
		Py_DECREF(one);
		PyObject *two = Py_CompileString("\ny = 2\n", "/virtual/two.py", Py_file_input);
		REQUIRE(two != NULL);
		if ((uintptr_t)two != at) {
			Py_DECREF(two);
			continue;
		}
		uint32_t id2 = pystack_intern_code(two);
		CHECK(id2 != id1 && id2 != PYSTACK_CODE_UNKNOWN);
		CHECK_STR(pystack_code_file(id1), "/virtual/one.py");
		CHECK_STR(pystack_code_file(id2), "/virtual/two.py");
		CHECK_EQ_I(pystack_line(id2, 1), 2);
		Py_DECREF(two);
		printf("# address reused after %d attempts\n", attempt + 1);
		return;
	}
	SKIP("the allocator did not reuse the address");
}

/* More code objects than the table holds: the rest are unknown, counted, never wrong. Last:
 * it fills the table for good. */
TEST(table_full)
{
	run_script();
	PyObject *r = PyRun_String("codes = [compile('def f%d(): pass' % i, '/virtual/many.py', "
				   "'exec').co_consts[0] for i in range(9000)]\n",
				   Py_file_input, globals, globals);
	REQUIRE(r != NULL);
	Py_DECREF(r);
	PyObject *codes = PyDict_GetItemString(globals, "codes");
	REQUIRE(codes && PyList_Size(codes) == 9000);
	uint32_t known = 0, unknown = 0;
	uint64_t dropped = pystack_codes_dropped();
	for (Py_ssize_t i = 0; i < 9000; i++) {
		PyCodeObject *co = (PyCodeObject *)PyList_GetItem(codes, i);
		uint32_t id = pystack_intern_code(co);
		if (id == PYSTACK_CODE_UNKNOWN) {
			unknown++;
			continue;
		}
		known++;
		char want[16];
		snprintf(want, sizeof(want), "f%zd", i);
		if (strcmp(pystack_code_name(id), want) != 0)
			CHECK_STR(pystack_code_name(id), want);
	}
	printf("# %u interned, %u unknown\n", known, unknown);
	CHECK(unknown >= 9000 - 8192);
	CHECK(known >= 6000);
	CHECK_EQ_U(pystack_codes_dropped() - dropped, unknown);
	CHECK_STR(pystack_code_name(PYSTACK_CODE_UNKNOWN), "<unknown python code>");
}

TEST_MAIN(init_finds_python, call_chain, entry_mid_stack, generator, non_ascii_names, threads,
	  lines_and_names_match_cpython, thread_without_python, damaged_stacks, reused_address,
	  table_full)
