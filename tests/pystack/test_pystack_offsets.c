/*
 * test_pystack_offsets.c: src/record/pystack.c reads CPython 3.11's structures through a table
 * of byte offsets (pystack_layout_311), because it must not link libpython. This test compiles
 * against the installed CPython headers, internal ones included (Py_BUILD_CORE), and checks
 * each entry of the table with offsetof()/sizeof(), and the bit positions of the str state
 * bit-fields by setting each field and looking at the byte. Built only where the 3.11 headers
 * with internal/ exist (tests/CMakeLists.txt).
 */
#define Py_BUILD_CORE 1
#include <Python.h>

#include <stddef.h>
#include <string.h>

#include <internal/pycore_frame.h>
#include <internal/pycore_runtime.h>

#include "harness.h"
#include "record/pystack.h"

#define L pystack_layout_311

TEST(version_is_311)
{
	CHECK_EQ_U(PY_MAJOR_VERSION, 3);
	CHECK_EQ_U(PY_MINOR_VERSION, 11);
}

TEST(runtime_and_thread_state)
{
	CHECK_EQ_U(L.runtime_tss, offsetof(_PyRuntimeState, gilstate.autoTSSkey));
	CHECK_EQ_U(L.tss_initialized, offsetof(Py_tss_t, _is_initialized));
	CHECK_EQ_U(L.tss_key, offsetof(Py_tss_t, _key));
	CHECK_EQ_U(sizeof(((Py_tss_t *)0)->_key), sizeof(pthread_key_t));
	CHECK_EQ_U(L.ts_cframe, offsetof(PyThreadState, cframe));
	CHECK_EQ_U(L.ts_datastack_chunk, offsetof(PyThreadState, datastack_chunk));
	CHECK_EQ_U(L.ts_datastack_top, offsetof(PyThreadState, datastack_top));
	CHECK_EQ_U(L.chunk_previous, offsetof(_PyStackChunk, previous));
	CHECK_EQ_U(L.chunk_size, offsetof(_PyStackChunk, size));
	CHECK_EQ_U(L.chunk_data, offsetof(_PyStackChunk, data));
	CHECK_EQ_U(L.cframe_current, offsetof(_PyCFrame, current_frame));
}

TEST(interpreter_frame)
{
	CHECK_EQ_U(L.frame_code, offsetof(_PyInterpreterFrame, f_code));
	CHECK_EQ_U(L.frame_previous, offsetof(_PyInterpreterFrame, previous));
	CHECK_EQ_U(L.frame_prev_instr, offsetof(_PyInterpreterFrame, prev_instr));
	CHECK_EQ_U(L.frame_is_entry, offsetof(_PyInterpreterFrame, is_entry));
	CHECK_EQ_U(sizeof(((_PyInterpreterFrame *)0)->is_entry), 1);
	CHECK_EQ_U(L.frame_owner, offsetof(_PyInterpreterFrame, owner));
	CHECK_EQ_U(L.owner_generator, FRAME_OWNED_BY_GENERATOR);
	CHECK_EQ_U(sizeof(_Py_CODEUNIT), 2); /* pystack.c divides by 2 */
	/* the walk reads a frame's fields up to owner from a 72-byte copy */
	CHECK(offsetof(_PyInterpreterFrame, owner) < 72);
}

TEST(code_object)
{
	CHECK_EQ_U(L.ob_type, offsetof(PyObject, ob_type));
	CHECK_EQ_U(L.ob_size, offsetof(PyVarObject, ob_size));
	CHECK_EQ_U(sizeof(Py_ssize_t), 8);
	CHECK_EQ_U(L.code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	CHECK_EQ_U(L.code_filename, offsetof(PyCodeObject, co_filename));
	CHECK_EQ_U(L.code_qualname, offsetof(PyCodeObject, co_qualname));
	CHECK_EQ_U(L.code_linetable, offsetof(PyCodeObject, co_linetable));
	CHECK_EQ_U(L.code_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
	CHECK_EQ_U(L.code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
	/* a first sight copies 192 bytes of the code object: every field read is inside */
	CHECK(offsetof(PyCodeObject, co_code_adaptive) <= 192);
	CHECK_EQ_U(L.bytes_data, offsetof(PyBytesObject, ob_sval));
}

TEST(str_layout)
{
	CHECK_EQ_U(L.str_length, offsetof(PyASCIIObject, length));
	CHECK_EQ_U(L.str_state, offsetof(PyASCIIObject, state));
	CHECK_EQ_U(L.str_ascii_data, sizeof(PyASCIIObject));
	CHECK_EQ_U(L.str_compact_data, sizeof(PyCompactUnicodeObject));
	CHECK(sizeof(PyCompactUnicodeObject) <= 80); /* pystack.c's copy of a str header */
	/* The state bit-fields: set each alone and see which bits of the first byte move. */
	PyASCIIObject o;
	unsigned char b;
	memset(&o, 0, sizeof(o));
	o.state.kind = 7;
	memcpy(&b, (unsigned char *)&o + L.str_state, 1);
	CHECK_EQ_U(b, 7u << L.state_kind_shift);
	memset(&o, 0, sizeof(o));
	o.state.compact = 1;
	memcpy(&b, (unsigned char *)&o + L.str_state, 1);
	CHECK_EQ_U(b, 1u << L.state_compact_bit);
	memset(&o, 0, sizeof(o));
	o.state.ascii = 1;
	memcpy(&b, (unsigned char *)&o + L.str_state, 1);
	CHECK_EQ_U(b, 1u << L.state_ascii_bit);
	memset(&o, 0, sizeof(o));
	o.state.ready = 1;
	memcpy(&b, (unsigned char *)&o + L.str_state, 1);
	CHECK_EQ_U(b, 1u << L.state_ready_bit);
	CHECK_EQ_U(PyUnicode_1BYTE_KIND, 1);
	CHECK_EQ_U(PyUnicode_2BYTE_KIND, 2);
	CHECK_EQ_U(PyUnicode_4BYTE_KIND, 4);
}

TEST_MAIN(version_is_311, runtime_and_thread_state, interpreter_frame, code_object, str_layout)
