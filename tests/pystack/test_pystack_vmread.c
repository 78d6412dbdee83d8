/*
 * test_pystack_vmread.c: pystack reads memory that may not be mapped with process_vm_readv,
 * and a seccomp filter (containers) may refuse that call: pystack_init must then stay off
 * with one line of warning rather than show every frame as unknown. This program pretends to
 * be a CPython 3.11 (it exports the symbols pystack_init looks for, ENABLE_EXPORTS) and runs
 * pystack_init twice, each in a child: once as it is (enabled), once under a seccomp filter
 * that makes process_vm_readv fail with EPERM (disabled, with the line).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "record/pystack.h"

/* A CPython 3.11.2 final, as far as pystack_init looks; its TSS key says "not initialized",
 * so a walk finds nothing. */
const unsigned long Py_Version = 0x030B02F0;
char _PyRuntime[4096];
char PyCode_Type[512];
char PyUnicode_Type[512];
char PyBytes_Type[512];

/* Refuse process_vm_readv with EPERM, allow everything else. */
static int refuse_vm_readv(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* pystack_init in a child (under the filter if `refuse`): its state, and its warning line
 * into `line`. -1 when the child could not run. */
static int init_in_child(int refuse, char *line, size_t cap)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (refuse && refuse_vm_readv() != 0)
			_exit(100);
		const char *w = NULL;
		enum pystack_state st = pystack_init(&w);
		if (w && write(fds[1], w, strlen(w)) < 0)
			_exit(101);
		struct pystack_frame f[4];
		uint32_t flags = 9;
		if (pystack_walk(f, 4, &flags) != 0 || flags != 0)
			_exit(102);
		_exit((int)st);
	}
	close(fds[1]);
	ssize_t n = pid > 0 ? read(fds[0], line, cap - 1) : -1;
	line[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(enabled_when_allowed)
{
	char line[128];
	CHECK_EQ_I(init_in_child(0, line, sizeof(line)), PYSTACK_ENABLED);
	CHECK_STR(line, "");
}

TEST(disabled_when_refused)
{
	char line[128];
	int st = init_in_child(1, line, sizeof(line));
	if (st == 100) {
		SKIP("no seccomp filters here");
		return;
	}
	CHECK_EQ_I(st, PYSTACK_UNSUPPORTED);
	CHECK_STR(line, "Python 3.11: process_vm_readv refused, native frames only");
}

/* In a forked child, a code object at an address the parent never mapped is read (and
 * interned) from the child's own memory: pystack's reads name the child's pid after the fork
 * (pystack_after_fork through pthread_atfork), not the pid kept at init, which would read the
 * parent's and fail there. The fake code object: a zeroed page whose ob_type (offset 8 in a
 * release build's object header) is &PyCode_Type. */
TEST(child_reads_its_own_memory)
{
	const char *w = NULL;
	REQUIRE(pystack_init(&w) == PYSTACK_ENABLED);
	pid_t pid = fork();
	if (pid == 0) {
		unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (page == MAP_FAILED)
			_exit(100);
		void *type = PyCode_Type;
		memcpy(page + 8, &type, sizeof(type));
		_exit(pystack_intern_code(page) != PYSTACK_CODE_UNKNOWN ? 0 : 1);
	}
	int status;
	REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	CHECK_EQ_I(WEXITSTATUS(status), 0);
}

TEST_MAIN(enabled_when_allowed, disabled_when_refused, child_reads_its_own_memory)
