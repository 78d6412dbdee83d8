/*
 * test_pystack.c: the parts of the Python stack reader (record/pystack.h) that need no
 * Python: pystack_merge on synthetic stacks (the py-spy --native rules and their edge cases:
 * an entry frame mid-stack, a native walk that stops short, a Python walk that stops short,
 * incomplete frames, no eval frame at all, no Python frame, a full output), and pystack_init
 * in a process without CPython (disabled, silently; the walk finds nothing). The reading of a
 * real interpreter is tests/pystack/test_pystack_embed.c.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "record/pystack.h"

enum { O = PYSTACK_NATIVE_OTHER, E = PYSTACK_NATIVE_EVAL, P = PYSTACK_NATIVE_PYTHON };

#define PY(code)             \
	{                    \
		(code), 7, 0 \
	}
#define PYE(code)                        \
	{                                \
		(code), 7, PYSTACK_ENTRY \
	}
#define PY_INCOMPLETE_E                                                   \
	{                                                                 \
		PYSTACK_CODE_NONE, -1, PYSTACK_INCOMPLETE | PYSTACK_ENTRY \
	}

/* The merged stack as text: "n<pc>" for native frames, "p<code>" for Python ones. */
static const char *merged(const uint64_t *pcs, const uint8_t *kinds, size_t npcs,
			  const struct pystack_frame *py, size_t npy, size_t max, int *truncated)
{
	static char text[512];
	struct pystack_merged out[64];
	size_t n = pystack_merge(pcs, kinds, npcs, py, npy, out, max, truncated);
	size_t at = 0;
	text[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (out[i].is_python)
			CHECK_EQ_I(out[i].instr, out[i].code == PYSTACK_CODE_UNKNOWN ? -1 : 7);
		at += (size_t)snprintf(text + at, sizeof(text) - at, "%s%c%llu", i ? " " : "",
				       out[i].is_python ? 'p' : 'n',
				       out[i].is_python ? (unsigned long long)out[i].code
							: (unsigned long long)out[i].pc);
	}
	return text;
}

#define MERGE(pcs, kinds, py, max, tr) \
	merged(pcs, kinds, sizeof(pcs) / sizeof(pcs[0]), py, sizeof(py) / sizeof(py[0]), max, tr)

/* a -> b -> c all in one eval loop called from the interpreter's main. */
TEST(merge_one_eval_loop)
{
	uint64_t pcs[] = { 1, 2, 3, 4 };
	uint8_t kinds[] = { O, E, P, O };
	struct pystack_frame py[] = { PY(10), PY(11), PY(12), PYE(13) };
	int tr = -1;
	CHECK_STR(MERGE(pcs, kinds, py, 64, &tr), "n1 p10 p11 p12 p13 n3 n4");
	CHECK_EQ_I(tr, 0);
}

/* sorted(key=key) inside d: key runs in an eval loop of its own under the builtin. */
TEST(merge_entry_mid_stack)
{
	uint64_t pcs[] = { 2, 5, 6, 7, 8 };
	uint8_t kinds[] = { E, P, E, P, O };
	struct pystack_frame py[] = { PYE(20), PY(21), PYE(22) };
	CHECK_STR(MERGE(pcs, kinds, py, 64, NULL), "p20 n5 p21 p22 n7 n8");
}

/* The native walk stopped inside the first eval loop: the rest of Python goes outside. */
TEST(merge_native_walk_short)
{
	uint64_t pcs[] = { 1, 2 };
	uint8_t kinds[] = { O, E };
	struct pystack_frame py[] = { PYE(30), PY(31), PYE(32) };
	int tr = -1;
	CHECK_STR(MERGE(pcs, kinds, py, 64, &tr), "n1 p30 p31 p32");
	CHECK_EQ_I(tr, 0);
}

/* The Python walk stopped short: eval loops without frames left stay native. */
TEST(merge_python_walk_short)
{
	uint64_t pcs[] = { 2, 3, 4 };
	uint8_t kinds[] = { E, E, O };
	struct pystack_frame py[] = { PYE(40) };
	CHECK_STR(MERGE(pcs, kinds, py, 64, NULL), "p40 n3 n4");
}

/* An eval loop that just began (its entry frame not started yet) shows as itself; the
 * incomplete frame is never output and does not take the next loop's frames. */
TEST(merge_incomplete_entry)
{
	uint64_t pcs[] = { 2, 5, 3, 9 };
	uint8_t kinds[] = { E, P, E, O };
	struct pystack_frame py[] = { PY_INCOMPLETE_E, PY(41), PYE(42) };
	CHECK_STR(MERGE(pcs, kinds, py, 64, NULL), "n2 n5 p41 p42 n9");
}

/* No eval frame in the native stack: natives above the interpreter, then Python, and the
 * interpreter's own frames (3, 4) and what is outside them (5) dropped. */
TEST(merge_no_eval_frame)
{
	uint64_t pcs[] = { 1, 2, 3, 4, 5 };
	uint8_t kinds[] = { O, O, P, P, O };
	struct pystack_frame py[] = { PY(50), PY_INCOMPLETE_E, PYE(51) };
	CHECK_STR(MERGE(pcs, kinds, py, 64, NULL), "n1 n2 p50 p51");
	/* and no interpreter frame at all: Python at the outer end */
	uint64_t pcs2[] = { 1, 2 };
	uint8_t kinds2[] = { O, O };
	CHECK_STR(MERGE(pcs2, kinds2, py, 64, NULL), "n1 n2 p50 p51");
	/* no native frame either */
	CHECK_STR(merged(NULL, NULL, 0, py, 3, 64, NULL), "p50 p51");
}

/* No Python frame (a thread without Python, or Python not enabled): natives unchanged. */
TEST(merge_no_python)
{
	uint64_t pcs[] = { 1, 2, 3 };
	uint8_t kinds[] = { O, E, P };
	CHECK_STR(merged(pcs, kinds, 3, NULL, 0, 64, NULL), "n1 n2 n3");
}

/* Unknown code objects pass through as frames of their own. */
TEST(merge_unknown_code)
{
	uint64_t pcs[] = { 2 };
	uint8_t kinds[] = { E };
	struct pystack_frame py[] = { { PYSTACK_CODE_UNKNOWN, -1, 0 }, PYE(60) };
	CHECK_STR(MERGE(pcs, kinds, py, 64, NULL), "p4294967294 p60");
}

/* A full output is cut at `max` and says so, in each of the three paths. */
TEST(merge_max)
{
	uint64_t pcs[] = { 1, 2, 3, 4 };
	uint8_t kinds[] = { O, E, P, O };
	struct pystack_frame py[] = { PY(10), PY(11), PY(12), PYE(13) };
	int tr = 0;
	CHECK_STR(MERGE(pcs, kinds, py, 3, &tr), "n1 p10 p11");
	CHECK_EQ_I(tr, 1);
	uint8_t none[] = { O, O, O, O };
	tr = 0;
	CHECK_STR(MERGE(pcs, none, py, 5, &tr), "n1 n2 n3 n4 p10");
	CHECK_EQ_I(tr, 1);
	uint8_t short_walk[] = { O, E, O, O };
	tr = 0;
	CHECK_STR(MERGE(pcs, short_walk, py, 4, &tr), "n1 p10 p11 p12");
	CHECK_EQ_I(tr, 1);
	tr = 0;
	CHECK_STR(MERGE(pcs, kinds, py, 7, &tr), "n1 p10 p11 p12 p13 n3 n4");
	CHECK_EQ_I(tr, 0);
}

/* This test program has no CPython: disabled without a warning, nothing walked or known. */
TEST(init_without_python)
{
	const char *warning = "unset";
	CHECK_EQ_I(pystack_init(&warning), PYSTACK_NO_PYTHON);
	CHECK(warning == NULL);
	CHECK_EQ_I(pystack_init(NULL), PYSTACK_NO_PYTHON); /* once only */
	struct pystack_frame out[4];
	uint32_t flags = 99;
	CHECK_EQ_U(pystack_walk(out, 4, &flags), 0);
	CHECK_EQ_U(flags, 0);
	CHECK_EQ_U(pystack_intern_code(out), PYSTACK_CODE_UNKNOWN);
	CHECK(pystack_code_name(0) == NULL);
	CHECK_EQ_I(pystack_line(0, 0), 0);
	CHECK_EQ_I(pystack_native_kind((uint64_t)(uintptr_t)&pystack_merge), PYSTACK_NATIVE_OTHER);
	uintptr_t lo = 1, hi = 1;
	pystack_eval_range(&lo, &hi);
	CHECK(lo == 0 && hi == 0);
}

TEST_MAIN(merge_one_eval_loop, merge_entry_mid_stack, merge_native_walk_short,
	  merge_python_walk_short, merge_incomplete_entry, merge_no_eval_frame, merge_no_python,
	  merge_unknown_code, merge_max, init_without_python)
