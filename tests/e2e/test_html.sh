#!/usr/bin/env bash
# test_html.sh: the HTML report without a browser (issue 21): `report --format html` embeds
# the JSON report once, as `--format json` gives it, with '<', '>' and '&' as JSON escapes,
# on the real ResNet-50 trace and on the hostile-names trace (tests/tools/gen_hostile.py:
# no name closes the data element, two <script> in all); the page's size does not grow with
# the events of a trace, only with its distinct names; bad input; and `opscope view`: the URL
# it prints (127.0.0.1, a free port or --port), GET / (and /?query) gives the same bytes as
# the file, other paths 404, other methods 405, a request line that does not parse 400, HEAD
# no body, a port in use exits 1. The page in a real browser: test_html_browser.sh.
# Env: OPSCOPE (the CLI), SRC (repository root).
set -u
: "${OPSCOPE:?}" "${SRC:?}"
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
R0=$SRC/../shared/data/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
[ -f "$R0" ] || { echo "skip: no $R0 (../shared/data)"; exit 77; }

# embedded(PAGE JSON): the page's data holds no '<', '>' or '&' (they are JSON escapes
# there), and parsed it is the JSON report plus the page's own tables (the flame graphs, the
# operators by input shape); the data element is there once (the bytes of the escaping:
# test_report's render_html_escapes)
embedded() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
page = open(sys.argv[1], "rb").read()
want_text = open(sys.argv[2], "rb").read().rstrip(b"\n")
open_tag = b'<script type="application/json" id="opscope-data">'
assert page.count(open_tag) == 1, "data element not once"
data = page.split(open_tag, 1)[1].split(b"</script>", 1)[0]
assert not any(c in data for c in (b"<", b">", b"&")), "< > & in the data"
got, want = json.loads(data), json.loads(want_text)
page_only = ("Samples: Flame Graph", "Operator Summary by Input Shape", "Timeline",
             "Timeline: Steps")
got["tables"] = [t for t in got["tables"] if t["title"] not in page_only]
assert got == want, "data differs from the JSON report"
assert page.count(b"<script") == 2 and page.count(b"</script") == 2, "scripts"
print("ok")
PYEOF
}

"$OPSCOPE" report --format html -o "$T/r0.html" "$R0"
check "report --format html writes the page" '[ $? -eq 0 ] && head -c 15 "$T/r0.html" | grep -q "<!DOCTYPE html>"'
"$OPSCOPE" report --format json -o "$T/r0.json" "$R0"
check "the page embeds the JSON report once, as it is" 'embedded "$T/r0.html" "$T/r0.json" | grep -qx ok'
check "the page asks for nothing: no src= or href= to another place, a CSP of default-src 'none'" \
	'! grep -Eq "(src|href)=\"(https?:)?//" "$T/r0.html" && grep -q "default-src '"'"'none'"'"'" "$T/r0.html"'

"$PY" "$SRC/tests/tools/gen_hostile.py" "$T/hostile.json"
"$OPSCOPE" report --format html -o "$T/h.html" "$T/hostile.json"
check "hostile names: the page is written" '[ $? -eq 0 ]'
"$OPSCOPE" report --format json -o "$T/h.json" "$T/hostile.json"
check "hostile names: embedded as the JSON report, < > & escaped, nothing else" 'embedded "$T/h.html" "$T/h.json" | grep -qx ok'
check "hostile names: the 10,000-character kernel name is in the data whole" \
	'grep -q "k\\\\u003c$(printf "K%.0s" $(seq 10000))\\\\u003e" "$T/h.html"'

# --- the page grows with distinct names, not with events: the same trace repeated 1 and 8
# times in one file (8x the events, the same names) gives pages of nearly the same size
"$PY" - "$T" <<'PYEOF'
import json, sys
base = {"traceEvents": []}
def trace(reps):
    ev = []
    for k in range(reps * 50):
        t = 1000 + k * 1000
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (k % 50), "pid": 1, "tid": 1, "ts": t, "dur": 900})
        for i in range(5):
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::op%d" % i, "pid": 1, "tid": 1, "ts": t + 10 + i * 100, "dur": 50})
    return {"traceEvents": ev}
for reps in (1, 8):
    json.dump(trace(reps), open("%s/rep%d.json" % (sys.argv[1], reps), "w"))
PYEOF
"$OPSCOPE" report --format html --views operator,overview -o "$T/rep1.html" "$T/rep1.json"
"$OPSCOPE" report --format html --views operator,overview -o "$T/rep8.html" "$T/rep8.json"
s1=$(stat -c %s "$T/rep1.html"); s8=$(stat -c %s "$T/rep8.html"); e1=$(stat -c %s "$T/rep1.json"); e8=$(stat -c %s "$T/rep8.json")
echo "# trace $e1 -> $e8 bytes, page $s1 -> $s8 bytes"
check "page size: 8x the events, the same names: within 1% of the size" \
	'[ $((s8 * 100)) -le $((s1 * 101)) ] && [ $((s8 * 100)) -ge $((s1 * 99)) ]'

# --- bad input
"$OPSCOPE" report --format html -o "$T/x.html" "$T/missing.json" 2>"$T/err"
check "a missing trace: exit 1, one line, no page" '[ $? -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e "$T/x.html" ]'
"$OPSCOPE" report --format htm "$R0" 2>"$T/err"
check "--format htm: usage error naming html and partial" '[ $? -eq 2 ] && grep -q "text, csv, json, html or partial" "$T/err"'
"$OPSCOPE" diff --format html "$R0" "$R0" 2>"$T/err" >/dev/null
check "diff has no html format" '[ $? -eq 2 ]'
"$OPSCOPE" view --port 70000 "$R0" 2>"$T/err"
check "view --port 70000: usage error" '[ $? -eq 2 ] && grep -q "port" "$T/err"'
"$OPSCOPE" view "$T/missing.json" 2>"$T/err"
check "view of a missing trace: exit 1, one line" '[ $? -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ]'

# --- opscope view: serve, fetch, compare
# serve ARGS...: start view in the background answering 6 requests; sets URL and VPID
serve() {
	"$OPSCOPE" view --max-requests 6 "$@" >"$T/view.out" 2>"$T/view.err" &
	VPID=$!
	URL=""
	for _ in $(seq 1 300); do
		URL=$(sed -n 's|^opscope: serving the report at \(http://[^ ]*\) .*|\1|p' "$T/view.out")
		[ -n "$URL" ] && return 0
		kill -0 $VPID 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
fetch() { # METHOD URL OUT: prints the status, the body to OUT
	"$PY" - "$1" "$2" "$3" <<'PYEOF'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[2], method=sys.argv[1])
try:
    with urllib.request.urlopen(req, timeout=20) as r:
        body, status, ctype = r.read(), r.status, r.headers.get("Content-Type")
except urllib.error.HTTPError as e:
    body, status, ctype = e.read(), e.code, e.headers.get("Content-Type")
open(sys.argv[3], "wb").write(body)
print(status, ctype)
PYEOF
}
serve "$R0"
check "view prints a URL on 127.0.0.1 with a port of its own" '[ $? -eq 0 ] && echo "$URL" | grep -Eq "^http://127\.0\.0\.1:[1-9][0-9]*/$"'
check "GET /: 200, text/html, the same bytes as --format html" \
	'[ "$(fetch GET "$URL" "$T/got.html")" = "200 text/html; charset=utf-8" ] && cmp -s "$T/got.html" "$T/r0.html"'
check "GET /other: 404" '[ "$(fetch GET "${URL}other" "$T/b")" = "404 text/plain; charset=utf-8" ]'
check "a request line that does not parse: 400" '[ "$("$PY" -c "
import socket, sys
from urllib.parse import urlsplit
u = urlsplit(sys.argv[1])
s = socket.create_connection((u.hostname, u.port), timeout=20)
s.sendall(b\"garbage\r\n\r\n\")
print(s.recv(100).split(b\"\r\n\")[0].decode())
" "$URL")" = "HTTP/1.1 400 Bad Request" ]'
check "GET /?q=1: the page" '[ "$(fetch GET "${URL}?q=1" "$T/b")" = "200 text/html; charset=utf-8" ] && cmp -s "$T/b" "$T/r0.html"'
check "POST /: 405" '[ "$(fetch POST "$URL" "$T/b")" = "405 text/plain; charset=utf-8" ]'
check "HEAD /: 200, no body" '[ "$(fetch HEAD "$URL" "$T/b")" = "200 text/html; charset=utf-8" ] && [ ! -s "$T/b" ]'
wait $VPID
check "view stops after --max-requests 6, exit 0" '[ $? -eq 0 ]'

# a port free a moment ago (another program may take it meanwhile: three tries)
for _ in 1 2 3; do
	PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	serve --port "$PORT" "$T/hostile.json" && break
	cat "$T/view.err"
done
check "view --port N listens there" '[ -n "$URL" ] && [ "$URL" = "http://127.0.0.1:$PORT/" ]'
check "view of the hostile trace: the page of --format html" '[ "$(fetch GET "$URL" "$T/got.html")" = "200 text/html; charset=utf-8" ] && cmp -s "$T/got.html" "$T/h.html"'
kill $VPID 2>/dev/null
wait $VPID 2>/dev/null
# a port that is taken: one line, exit 1 (a Python listener holds it while view tries)
"$PY" - "$OPSCOPE" "$T/hostile.json" >"$T/busy" 2>&1 <<'PYEOF'
import socket, subprocess, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
r = subprocess.run([sys.argv[1], "view", "--port", str(s.getsockname()[1]), sys.argv[2]],
                   capture_output=True, text=True, timeout=120)
print(r.returncode, len(r.stderr.splitlines()), "Address already in use" in r.stderr)
PYEOF
check "view on a port in use: exit 1, one line saying so" '[ "$(cat "$T/busy")" = "1 1 True" ]'
tap_done
