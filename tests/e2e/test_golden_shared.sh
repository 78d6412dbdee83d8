#!/usr/bin/env bash
# test_golden_shared.sh: the CLI's outputs on every real trace under ../shared/data that opscope
# reads (Kineto and Chrome JSON, gzip'd or not; Nsight Systems SQLite exports), compared with committed SHA-256 digests
# (tests/golden/shared-data.sha256): the copies of those traces stay out of the repository, so
# their outputs do too. Where ../shared is missing the test is skipped (exit 77).
#
# A digest that differs names the trace and the output; to see the difference, run the same
# command with the build before the change and diff the two.
# OPSCOPE_GOLDEN_UPDATE=1 rewrites the digests (then review `git diff`).
# Env: OPSCOPE (the CLI), SRC (repository root).
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$(dirname "$0")/lib.sh"
D=$SRC/../shared/data
[ -d "$D" ] || { echo "skip: no $D"; exit 77; }
sums=$SRC/tests/golden/shared-data.sha256

digest() { # OUTPUT COMMAND...: a line "<sha256> <trace>:<output>", the exit status included
	local out=$1
	shift
	local h
	h=$( ("$@" 2>/dev/null; echo "exit $?") | sha256sum | cut -c1-64)
	echo "$h $rel:$out"
}

cd "$D" || exit 1
: >"$T/now"
while IFS= read -r rel; do
	{
		digest info "$OPSCOPE" info "$rel"
		digest dump "$OPSCOPE" dump "$rel"
		digest report.txt "$OPSCOPE" report "$rel"
		digest report.csv "$OPSCOPE" report --format csv "$rel"
		digest report.json "$OPSCOPE" report --format json "$rel"
		digest chrome.json "$OPSCOPE" export -q -f chrome --max-part-size 0 -o - "$rel"
	} >>"$T/now"
done < <(find kineto chrome nsys -type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.sqlite.gz' \) |
	LC_ALL=C sort)

if [ "${OPSCOPE_GOLDEN_UPDATE:-0}" = 1 ]; then
	cp "$T/now" "$sums"
	check "digests of $(wc -l <"$T/now") outputs written" true
else
	check "as many outputs as committed digests" '[ "$(wc -l <"$T/now")" = "$(wc -l <"$sums")" ]'
	while read -r h name; do
		want=$(awk -v n="$name" '$2 == n { print $1 }' "$sums")
		check "$name" '[ "$h" = "$want" ]'
	done <"$T/now"
fi
tap_done
