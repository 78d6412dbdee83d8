/*
 * test_pystack_version.c: pystack_init in a process whose CPython is not 3.11. This program
 * pretends to be one: it exports the symbols pystack_init looks for (built with
 * ENABLE_EXPORTS, so dlsym(RTLD_DEFAULT) finds them in the executable, as it finds them in
 * Debian's python3), with Py_Version saying 3.12. The reader must stay off and say so in one
 * line, and the handler's walk must do nothing.
 */
#include <string.h>

#include "harness.h"
#include "record/pystack.h"

/* What a CPython 3.12.1 final exports, as far as pystack_init looks. */
const unsigned long Py_Version = 0x030C01F0;
char _PyRuntime[4096];
char PyCode_Type[512];
char PyUnicode_Type[512];
char PyBytes_Type[512];
void _PyEval_EvalFrameDefault(void);
void _PyEval_EvalFrameDefault(void)
{
}

TEST(other_version_disabled_with_warning)
{
	const char *warning = NULL;
	CHECK_EQ_I(pystack_init(&warning), PYSTACK_UNSUPPORTED);
	CHECK_STR(warning, "Python 3.12: native frames only");
	struct pystack_frame f[4];
	uint32_t flags = 5;
	CHECK_EQ_U(pystack_walk(f, 4, &flags), 0);
	CHECK_EQ_U(flags, 0);
	CHECK_EQ_I(pystack_native_kind((uint64_t)(uintptr_t)&_PyEval_EvalFrameDefault),
		   PYSTACK_NATIVE_OTHER);
	CHECK_EQ_U(pystack_intern_code(PyCode_Type), PYSTACK_CODE_UNKNOWN);
}

/* Asked again (a second session): the same answer and the same line. */
TEST(init_again)
{
	const char *first = NULL, *again = NULL;
	CHECK_EQ_I(pystack_init(&first), PYSTACK_UNSUPPORTED);
	CHECK_EQ_I(pystack_init(&again), PYSTACK_UNSUPPORTED);
	CHECK(first != NULL && again == first);
}

TEST_MAIN(other_version_disabled_with_warning, init_again)
