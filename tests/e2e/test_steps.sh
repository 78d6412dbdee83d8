#!/usr/bin/env bash
# test_steps.sh: opscope_step() called at the start of each iteration and at its end give
# the same steps, one per iteration, each holding that iteration's ranges, and no empty step
# with an absurd rate (issue 16, point 10; formats/opscope/bare_steps.c).
# Environment (set by CTest): OPSCOPE (the CLI), PROGRAMS (directory of prog_* binaries).
set -euo pipefail
: "${OPSCOPE:?}" "${PROGRAMS:?}"
tmp=$(mktemp -d /tmp/opscope-e2e-steps.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
iters=5
# The steps of a recording, a line each: the number of load, forward and backward ranges
# whose start lies in the step (with the ProfileStep ranges and times of `dump`).
steps_of() { # FILE
	"$OPSCOPE" dump "$1" | awk '
		$3 == "range" { n++; start[n] = $1; dur[n] = substr($6, 5); name[n] = $5 }
		END {
			for (i = 1; i <= n; i++) {
				if (name[i] !~ /^ProfileStep#/) continue
				s = start[i]; e = s + dur[i]; c = ""
				for (j = 1; j <= n; j++)
					if (name[j] !~ /^ProfileStep#/ && start[j] >= s && start[j] < e)
						c = c " " name[j]
				print s, c
			}
		}' | sort -n | cut -d" " -f2-
}

for mode in start end end-closed; do
	"$OPSCOPE" record -q -o "$tmp/$mode.opscope" -- "$PROGRAMS/prog_api_steps" "$mode" "$iters"
done
"$OPSCOPE" dump "$tmp/start.opscope" | head -3 >/dev/null # readable

want=$(for i in $(seq "$iters"); do echo " load forward backward"; done)
for mode in start end end-closed; do
	got=$(steps_of "$tmp/$mode.opscope")
	[ "$got" = "$want" ] || fail "$mode: steps and what they hold:
$got
want:
$want"
	echo "ok - $mode: $iters steps, each one iteration, setup and save outside"
done

# the step table and Perf Summary agree between the patterns: as many steps, and no rate
# from a step of a few microseconds (each step is at least the 1.7 ms the iteration sleeps)
for mode in start end; do
	"$OPSCOPE" report --views step,perf --format json "$tmp/$mode.opscope" >"$tmp/$mode.json"
done
/usr/bin/python3 - "$tmp/start.json" "$tmp/end.json" "$iters" <<'PY' || fail "step/perf tables differ"
import json, sys
def tables(path):
    return {t["title"]: t for t in json.load(open(path))["tables"]}
iters = int(sys.argv[3])
for path in sys.argv[1:3]:
    t = tables(path)
    step = next(v for k, v in t.items() if k.startswith("Step"))
    rows = [r for r in step["rows"] if str(r.get("step", "")).startswith("ProfileStep")]
    assert len(rows) == iters, (path, len(rows), [r.get("step") for r in step["rows"]])
    perf = next(v for k, v in t.items() if k.startswith("Perf"))
    ips = [r for r in perf["rows"] if r["name"] == "ips"]
    assert len(ips) == 1, perf["rows"]
    # 8 samples a step of at least 1.7 ms: under 4,706 a second
    assert 0 < ips[0]["min"] <= ips[0]["max"] < 8 / 0.0017, (path, ips)
print("ok - step table: %d steps in both patterns; Perf Summary rates are bounded" % iters)
PY
