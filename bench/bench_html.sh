#!/usr/bin/env bash
# bench/bench_html.sh: the HTML report against the text report (issue 21's targets, on the 1 GiB
# synthetic trace: the page in at most 1.5x the time of the text report, a size bounded by the
# distinct names, drawn by headless chromium in under 2 s). One trace from bench/gen_kineto
# (or TRACE), then, alternating, REPEAT runs each of
#   text: opscope report TRACE > /dev/null
#   html: opscope report --format html -o PAGE TRACE
# wall time of the whole process (load, analyse, write), best of each kept, and the ratio; the
# page's size, and of it the data (the JSON report) and the code; then the page in headless
# chromium (bench/html_render.js: navigation to load event, and to the end of drawing).
#
#   bench/bench_html.sh                        # SIZE=1G, REPEAT=3
#   SIZE=200M REPEAT=2 bench/bench_html.sh
#   TRACE=/path/synth.json bench/bench_html.sh  # an existing trace
#
# Env: SIZE, REPEAT, TRACE, BUILD (default build/bench), OPSCOPE (a CLI to use instead).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-$PWD/build/bench}
size=${SIZE:-1G}
repeat=${REPEAT:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/opscope-html.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_TESTS=OFF \
	-DOPSCOPE_BENCH=ON >"$work/build.log" 2>&1
cmake --build "$build" -j "$(nproc)" --target opscope_cli gen_kineto >>"$work/build.log" 2>&1
opscope=${OPSCOPE:-$build/opscope}
trace=${TRACE:-}
if [ -z "$trace" ]; then
	trace=$work/synthetic.json
	"$build/bench/gen_kineto" "$size" "$trace"
fi
bytes=$(stat -c %s "$trace")

run() { # NAME ARGS...: one timed run; appends "wall rss" to $work/NAME
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$work/t" "$opscope" report "$@" "$trace" >/dev/null
	cat "$work/t" >>"$work/$name"
}
for ((i = 0; i < repeat; i++)); do
	run text
	run html --format html -o "$work/page.html"
done
best() { sort -n "$work/$1" | head -1; }
read -r text_s text_kb < <(best text)
read -r html_s html_kb < <(best html)
ratio=$(awk -v a="$html_s" -v b="$text_s" 'BEGIN { printf "%.3f", a / b }')
page=$(stat -c %s "$work/page.html")
"$opscope" report --format json -o "$work/report.json" "$trace"
names=$(/usr/bin/python3 - "$work/page.html" <<'PYEOF'
import json, sys
html = open(sys.argv[1], encoding="utf-8").read()
tag = '<script type="application/json" id="opscope-data">'
data = html.split(tag, 1)[1].split("</script>", 1)[0]
d = json.loads(data)
names = set()
for t in d["tables"]:
    for r in t["rows"]:
        for k in ("name", "display_name"):
            if isinstance(r.get(k), str):
                names.add(r[k])
print(len(data), len(html) - len(data), len(names), sum(len(t["rows"]) for t in d["tables"]))
PYEOF
)
read -r data_b code_b nnames nrows <<<"$names"
echo "trace: $size synthetic ($bytes bytes), $repeat alternating runs each, best wall time"
printf '%-40s %8s s  %8s MB RSS\n' "report (text)" "$text_s" "$((text_kb / 1024))"
printf '%-40s %8s s  %8s MB RSS\n' "report --format html" "$html_s" "$((html_kb / 1024))"
echo "html / text: ${ratio}x (target: at most 1.5x)"
echo "page: $page bytes: data $data_b (the JSON report and the page's own tables: $nrows rows, $nnames distinct names), code and markup $code_b"
if command -v node >/dev/null && command -v chromium >/dev/null; then
	node bench/html_render.js "$work/page.html" "$repeat"
else
	echo "render: skipped (no node or chromium)"
fi
