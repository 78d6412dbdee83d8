#!/usr/bin/env bash
# test_html_browser.sh: the HTML report in a real browser (issue 21): Debian's chromium,
# headless, driven by tests/browser/check_report.js over the DevTools protocol (no npm
# package), on the pages of the real ResNet-50 Kineto trace, the H200 recording, a recorded
# trace with CPU stack samples (the flame graph), two ranks of a real distributed trace (HTA's
# trace_filter), the H200 recording cut short (a torn tail) and the hostile-names trace. Each
# page loads from file:// with no console error and no request but itself, and its numbers
# equal the JSON report's (check_report.js says what else). Screenshots in $SHOTS (default:
# <build>/html-shots). Skips (77) with a line saying what is missing where node or chromium is
# not installed (scripts/install-deps.sh installs both). Env: OPSCOPE, PROGRAMS, SRC.
set -u
: "${OPSCOPE:?}" "${SRC:?}" "${PROGRAMS:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
command -v node >/dev/null || { echo "skip: no node (apt-get install nodejs)"; exit 77; }
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || { echo "skip: no chromium (apt-get install chromium; or set CHROMIUM)"; exit 77; }
export CHROMIUM
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
SHOTS=${SHOTS:-$(dirname "$PROGRAMS")/html-shots}
mkdir -p "$SHOTS"
DATA=$SRC/../shared/data/kineto
R0=$DATA/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz

# page NAME [--hostile] -- TRACE...: write the page and the JSON report, run the browser check
page() {
	local name=$1 flag=""
	shift
	[ "$1" = --hostile ] && { flag=--hostile; shift; }
	"$OPSCOPE" report --format html -o "$T/$name.html" "$@" &&
		"$OPSCOPE" report --format json -o "$T/$name.json" "$@" &&
		"$OPSCOPE" report -o "$T/$name.txt" "$@" || return 1
	node "$SRC/tests/browser/check_report.js" --page "$T/$name.html" --json "$T/$name.json" \
		--text "$T/$name.txt" --shots "$SHOTS" --name "$name" $flag >"$T/$name.tap" 2>&1
	local rc=$?
	sed "s/^/# $name: /" "$T/$name.tap"
	[ $rc -eq 77 ] && { echo "skip: $(grep -m1 '^skip' "$T/$name.tap")"; exit 77; }
	return $rc
}

if [ -f "$R0" ]; then
	page resnet50 "$R0"
	check "ResNet-50 (Kineto, V100): the page checks out in chromium" '[ $? -eq 0 ]'
fi
page h200 "$SRC/tests/data/h200/train.opscope"
check "H200 recording: the page checks out in chromium" '[ $? -eq 0 ]'
"$PROGRAMS/prog_rec_samples" "$T/samples.opscope" >/dev/null 2>&1
page samples "$T/samples.opscope"
check "CPU stack samples (flame graph): the page checks out in chromium" '[ $? -eq 0 ]'
if [ -d "$DATA/hta/trace_filter" ]; then
	page ranks "$DATA/hta/trace_filter"
	check "two ranks (HTA trace_filter): the page checks out in chromium" '[ $? -eq 0 ]'
fi
# the H200 recording cut at two thirds: a torn tail, the file incomplete (the warning box)
sz=$(wc -c <"$SRC/tests/data/h200/train.opscope")
head -c $((sz * 2 / 3)) "$SRC/tests/data/h200/train.opscope" >"$T/torn.opscope"
page torn "$T/torn.opscope"
check "a torn recording: the page warns of it, and checks out in chromium" '[ $? -eq 0 ]'
"$PY" "$SRC/tests/tools/gen_hostile.py" "$T/hostile-trace.json" # not hostile.json: page() writes that
page hostile --hostile "$T/hostile-trace.json"
check "hostile names: shown as text, nothing of theirs runs" '[ $? -eq 0 ]'
check "screenshots saved" '[ -s "$SHOTS/hostile-light.png" ] && [ -s "$SHOTS/hostile-dark.png" ]'
tap_done
