# lib.sh: what the e2e test scripts share (sourced, not run): a TAP counter and check(), and a
# temporary directory $T removed at exit. Finish a script with `tap_done`.
n=0
failed=0
check() { # NAME CONDITION; $? in CONDITION is the status of the command before the check
	local last=$?
	n=$((n + 1))
	if (exit $last); eval "$2"; then echo "ok $n - $1"; else
		echo "not ok $n - $1"
		failed=$((failed + 1))
	fi
}
tap_done() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
