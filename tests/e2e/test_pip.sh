#!/usr/bin/env bash
# test_pip.sh: `pip install --no-build-isolation --no-index` of a copy of the source tree into a
# temporary directory, offline with Debian's pip and setuptools (pyproject.toml, setup.py: CMake
# builds the extension), then, from another directory with PYTHONPATH set to that directory
# only, `import opscope` and `python3 -m opscope -s cumulative script.py`.
# Skipped (77) without python3-pip / python3-setuptools / python3-dev, and in sanitized builds:
# what pip builds does not depend on the build running the test, and one run is enough.
# Environment (set by CTest): SRC (the source tree), OPSCOPE_SANITIZE.
set -euo pipefail
: "${SRC:?}"
PY=/usr/bin/python3
unset PYTHONPATH PYTHONUSERBASE
[ -z "${OPSCOPE_SANITIZE:-}" ] || {
	echo "skip: sanitized build (the pip build is unsanitized; it runs in the other builds)"
	exit 77
}
[ -x "$PY" ] && "$PY" -m pip --version >/dev/null 2>&1 || {
	echo "skip: no pip for $PY (python3-pip)"
	exit 77
}
"$PY" -c 'import setuptools, sysconfig, os, sys
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' || {
	echo "skip: no setuptools or Python headers (python3-setuptools, python3-dev)"
	exit 77
}
tmp=$(mktemp -d /tmp/opscope-e2e-pip.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

echo "# a copy of the sources (pip builds in the tree it is given)"
mkdir "$tmp/src"
tar -C "$SRC" --exclude=./build --exclude='./build*' --exclude=./.git --exclude='*.egg-info' \
	--exclude=__pycache__ -cf - . | tar -C "$tmp/src" -xf -

echo "# pip install --no-build-isolation --no-index --target"
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$PY" -m pip install -q \
	--no-build-isolation --no-index --no-cache-dir --target "$tmp/site" "$tmp/src" \
	>"$tmp/pip.log" 2>&1 || {
	tail -50 "$tmp/pip.log"
	fail "pip install"
}
(cd "$tmp/site" && find . -path './opscope-*.dist-info' -prune -o -type f -print | sort)
[ -f "$tmp/site/opscope_boot/sitecustomize.py" ] || fail "no opscope_boot/sitecustomize.py"
ls "$tmp/site"/opscope/_opscope*.so >/dev/null || fail "no extension"

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
cat >script.py <<'EOF'
def leaf(i):
    return i * 2


for i in range(3):
    leaf(i)
EOF
got=$(PYTHONPATH=$tmp/site "$PY" -c 'import opscope, os; print(os.path.dirname(opscope.__file__))')
[ "$got" = "$tmp/site/opscope" ] || fail "opscope from $got"
PYTHONPATH=$tmp/site "$PY" -m opscope -s cumulative script.py >"$tmp/prof.txt"
grep -q "script.py:1(leaf)" "$tmp/prof.txt" || fail "leaf not profiled: $(cat "$tmp/prof.txt")"
echo "# pip install test passed"
