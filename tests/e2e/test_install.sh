#!/usr/bin/env bash
# test_install.sh: `cmake --install` of this build into a temporary prefix, used as a user would:
#   layout: the CLI, libopscope shared (SONAME links) and static, the header, opscope.pc, the
#           CMake package, the Python package when the build has the extension;
#   (a) a C program built with `pkg-config --cflags --libs opscope` records a file that the
#       installed CLI reads;
#   (b) a CMake project with find_package(opscope) links opscope::opscope and
#       opscope::opscope_static; the installed `opscope record` runs the first with the
#       installed library preloaded (found from <prefix>/bin, OPSCOPE_LIB unset);
#   (c) from another directory, /usr/bin/python3 imports the installed package (PYTHONPATH set
#       to its directory, then none: a .pth in a user site directory stands in for
#       dist-packages), `python3 -m opscope -s cumulative` profiles a script, and, with no
#       PYTHONPATH at all, `<prefix>/bin/opscope record --python-functions -- python3 script`
#       records its RecordEvent and function ranges through the installed opscope_boot.
# A part whose prerequisites are missing is skipped with a message (no pkg-config, no Python
# extension in this build; (c)'s record in an ASan build, as tests/python skips its `record`
# tests there); the test is skipped (77) only when nothing could run.
# Environment (set by CTest): OPSCOPE (the CLI), BUILD (the build directory), CC and CC_ID (its
# C compiler and CMake's id of it), OPSCOPE_SANITIZE (its sanitizers, empty for none).
set -euo pipefail
: "${OPSCOPE:?}" "${BUILD:?}"
CC=${CC:-cc}
PY=/usr/bin/python3
unset PYTHONPATH PYTHONUSERBASE OPSCOPE_LIB OPSCOPE_OUTPUT OPSCOPE_AUTOSTART
tmp=$(mktemp -d /tmp/opscope-e2e-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
skip() {
	echo "# skip: $*"
}
parts=0

san=()
[ -z "${OPSCOPE_SANITIZE:-}" ] || san=("-fsanitize=$OPSCOPE_SANITIZE")

echo "# cmake --install into a temporary prefix"
prefix=$tmp/prefix
cmake --install "$BUILD" --prefix "$prefix" >"$tmp/install.log" || {
	cat "$tmp/install.log"
	fail "cmake --install"
}
(cd "$prefix" && find . -type f -o -type l | sort)
bin=$prefix/bin
[ -x "$bin/opscope" ] || fail "no bin/opscope"
[ -f "$prefix/include/opscope/opscope.h" ] || fail "no include/opscope/opscope.h"
so=$(find "$prefix" -name libopscope.so.0 | head -1)
[ -n "$so" ] || fail "no libopscope.so.0"
lib=$(dirname "$so")
[ -L "$lib/libopscope.so" ] && [ -L "$lib/libopscope.so.0" ] || fail "SONAME links"
[ -f "$(readlink -f "$lib/libopscope.so")" ] || fail "dangling libopscope.so"
[ -f "$lib/libopscope.a" ] || fail "no libopscope.a"
# (no `| grep -q` in this script: grep's early exit fails the pipeline under pipefail)
[[ "$(readelf -d "$so")" == *"SONAME"*"[libopscope.so.0]"* ]] || fail "SONAME is not libopscope.so.0"
[ -f "$lib/pkgconfig/opscope.pc" ] || fail "no opscope.pc"
[ -f "$lib/cmake/opscope/opscopeConfig.cmake" ] &&
	[ -f "$lib/cmake/opscope/opscopeConfigVersion.cmake" ] || fail "no CMake package"

cat >"$tmp/api.c" <<'EOF'
/* A user of the installed library: with a file argument it records into it by itself;
 * without, it only makes ranges (recorded when run under `opscope record`). */
#include <stdio.h>
#include <stdlib.h>

#include <opscope/opscope.h>

int main(int argc, char **argv)
{
	struct opscope_options opts = { 0 };
	if (argc > 1) {
		opts.output = argv[1];
		if (opscope_session_start(&opts) != 0) {
			fprintf(stderr, "session_start: %s\n", opscope_last_error());
			return 1;
		}
	}
	const char *preload = getenv("LD_PRELOAD");
	fprintf(stderr, "preload=%s\n", preload ? preload : "");
	for (int i = 0; i < 10; i++) {
		opscope_range_begin(OPSCOPE_CAT_OPERATOR, "installed_op");
		opscope_range_end();
	}
	return argc > 1 && opscope_session_stop() != 0;
}
EOF
check_trace() { # FILE [N]: a complete trace with N (10) installed_op ranges, read by the installed CLI
	"$bin/opscope" info "$1" >"$tmp/info" || fail "opscope info $1"
	grep -q "^status: *complete" "$tmp/info" || fail "$1: $(cat "$tmp/info")"
	"$bin/opscope" dump "$1" >"$tmp/dump" || fail "opscope dump $1"
	local n
	n=$(grep -c " range [A-Za-z]* installed_op " "$tmp/dump" || true)
	[ "$n" -eq "${2:-10}" ] || fail "$1: $n installed_op ranges, not ${2:-10}"
}

echo "# (a) pkg-config"
if command -v pkg-config >/dev/null; then
	parts=$((parts + 1))
	export PKG_CONFIG_PATH=$lib/pkgconfig
	pkg-config --modversion opscope
	# shellcheck disable=SC2046
	"$CC" "${san[@]}" -o "$tmp/api_pc" "$tmp/api.c" $(pkg-config --cflags --libs opscope)
	[[ " $(pkg-config --static --libs opscope) " == *" -lpthread "* ]] || fail "Libs.private"
	LD_LIBRARY_PATH=$lib "$tmp/api_pc" "$tmp/pc.opscope"
	check_trace "$tmp/pc.opscope"
	unset PKG_CONFIG_PATH
else
	skip "(a) no pkg-config"
fi

echo "# (b) find_package(opscope) in a CMake project"
parts=$((parts + 1))
mkdir "$tmp/consumer"
cp "$tmp/api.c" "$tmp/consumer/"
cat >"$tmp/consumer/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(consumer LANGUAGES C)
find_package(opscope 0.1 REQUIRED)
add_executable(api_shared api.c)
target_link_libraries(api_shared PRIVATE opscope::opscope)
add_executable(api_static api.c)
target_link_libraries(api_static PRIVATE opscope::opscope_static)
EOF
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="${san[*]}" >"$tmp/consumer.log" || {
	cat "$tmp/consumer.log"
	fail "consumer configure"
}
cmake --build "$tmp/consumer/build" >>"$tmp/consumer.log" || {
	cat "$tmp/consumer.log"
	fail "consumer build"
}
ldd "$tmp/consumer/build/api_shared" >"$tmp/ldd"
grep -q "=> $lib/libopscope.so.0 " "$tmp/ldd" || fail "not linked to $lib: $(cat "$tmp/ldd")"
"$tmp/consumer/build/api_shared" "$tmp/shared.opscope"
check_trace "$tmp/shared.opscope"
"$tmp/consumer/build/api_static" "$tmp/static.opscope"
check_trace "$tmp/static.opscope"
echo "# the installed opscope record finds the installed library"
"$bin/opscope" record -q -o "$tmp/rec.opscope" -- "$tmp/consumer/build/api_shared" 2>"$tmp/err"
grep -q "^preload=$lib/libopscope.so" "$tmp/err" || fail "preloaded: $(cat "$tmp/err")"
check_trace "$tmp/rec.opscope"

echo "# (c) the Python package"
ext=$(find "$prefix" -path '*/opscope/_opscope*.so' | head -1)
pyrun=()
if [ -z "$ext" ]; then
	skip "(c) no Python extension in this build"
elif [ ! -x "$PY" ]; then
	skip "(c) no $PY"
elif [ -n "${OPSCOPE_SANITIZE:-}" ]; then
	if [[ "$OPSCOPE_SANITIZE" == *address* && "${CC_ID:-}" == GNU ]]; then
		# as tests/python in an ASan build: GCC's shared ASan runtime preloaded
		pyrun=(env "LD_PRELOAD=$("$CC" -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0)
	else
		skip "(c) the extension of a $OPSCOPE_SANITIZE build by $CC cannot be imported"
		ext=""
	fi
fi
if [ -n "$ext" ]; then
	parts=$((parts + 1))
	pydir=$(dirname "$(dirname "$ext")")
	[ -f "$pydir/opscope/__init__.py" ] && [ -f "$pydir/opscope/__main__.py" ] || fail "no .py files"
	[ -f "$pydir/opscope_boot/sitecustomize.py" ] || fail "no opscope_boot/sitecustomize.py"
	mkdir "$tmp/elsewhere"
	cd "$tmp/elsewhere"
	cat >script.py <<'EOF'
import os
import sys

import opscope

print("opscope from", os.path.dirname(opscope.__file__), file=sys.stderr)


def leaf(i):
    return i * 2


for i in range(3):
    with opscope.RecordEvent("installed_work"):
        leaf(i)
EOF
	where='import opscope, os; print(os.path.dirname(opscope.__file__))'
	got=$(PYTHONPATH=$pydir "${pyrun[@]}" "$PY" -c "$where")
	[ "$got" = "$pydir/opscope" ] || fail "PYTHONPATH=$pydir: opscope from $got"

	echo "# a directory the interpreter searches (a .pth in a user site stands in for dist-packages)"
	export PYTHONUSERBASE=$tmp/user
	site=$("$PY" -c 'import site; print(site.getusersitepackages())')
	mkdir -p "$site"
	echo "$pydir" >"$site/opscope-test.pth"
	got=$("${pyrun[@]}" "$PY" -c "$where")
	[ "$got" = "$pydir/opscope" ] || fail "no PYTHONPATH: opscope from $got"
	"${pyrun[@]}" "$PY" -m opscope -s cumulative script.py >"$tmp/prof.txt" 2>"$tmp/err" || {
		cat "$tmp/err"
		fail "python3 -m opscope"
	}
	grep -q "Ordered by: cumulative time" "$tmp/prof.txt" || fail "no pstats table"
	grep -q "script.py:9(leaf)" "$tmp/prof.txt" || fail "leaf not profiled: $(cat "$tmp/prof.txt")"
	grep -q "opscope from $pydir/opscope" "$tmp/err" || fail "$(cat "$tmp/err")"
	unset PYTHONUSERBASE

	if [ ${#pyrun[@]} -gt 0 ]; then
		skip "(c) opscope record of python3 in a sanitized build (libopscope would come before the ASan runtime in LD_PRELOAD)"
	else
		echo "# opscope record -- python3: PYTHONPATH and the user site unset"
		PYTHONNOUSERSITE=1 "$bin/opscope" record -q --python-functions -o x.opscope -- \
			"$PY" script.py 2>"$tmp/err" || {
			cat "$tmp/err"
			fail "record"
		}
		grep -q "opscope from $pydir/opscope" "$tmp/err" || fail "$(cat "$tmp/err")"
		check_trace x.opscope 0
		"$bin/opscope" dump x.opscope >"$tmp/dump"
		n=$(grep -c " range [A-Za-z]* installed_work " "$tmp/dump" || true)
		[ "$n" -eq 3 ] || fail "$n RecordEvent ranges, not 3"
		n=$(grep -c " range PythonFunction leaf " "$tmp/dump" || true)
		[ "$n" -eq 3 ] || fail "$n leaf function ranges, not 3"
		ls x.*.pstats >/dev/null || fail "no pstats next to the trace"
	fi
	cd "$tmp"
fi

[ "$parts" -gt 0 ] || {
	echo "skip: nothing to test"
	exit 77
}
echo "# install test passed"
