#!/usr/bin/python3
"""gen_hostile.py: a Kineto trace whose names try to break the HTML report (issue 21), for
tests/e2e/test_html.sh and tests/browser/check_report.js.

  gen_hostile.py OUT.json

Two steps, each an operator launching a kernel, and a user range. The names: one that closes
the data element and runs a script ("</script><script>window.__pwned=1</script>"), an <img> with
an onerror handler, quotes and an ampersand, control characters (ESC, BEL, a NUL-like \\u0001),
raw bytes that are not UTF-8 (\\xff\\xfe, a lone continuation byte), a U+2028 line separator,
and a kernel name of 10,000 characters (10,000 'K' between "k<" and ">"). Any of them that ran
as markup would set window.__pwned, which the browser test requires to stay undefined.
"""
import json
import sys

SCRIPT = "</script><script>window.__pwned=1</script>"
IMG = "<img src=x onerror=\"window.__pwned=2\">"
QUOTES = "op \"double\" 'single' & amp; <!-- -->"
CONTROL = "ctl\u0001\u001b[31mred\u0007bell"
LONG = "k<" + "K" * 10000 + ">"
LSEP = "line\u2028sep"
INVALID = "@INVALID@"  # replaced by raw bytes after json.dumps


def main():
    ev = []
    corr = 1
    t = 1000.0
    ops = [SCRIPT, IMG, QUOTES, CONTROL, LSEP, INVALID]
    for step in range(2):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                   "pid": 1, "tid": 1, "ts": t, "dur": 900.0})
        for i, name in enumerate(ops):
            s = t + 10 + i * 100
            ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": s,
                       "dur": 50.0, "args": {"Input Dims": [[2, 3]], "Input type": ["float"]}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": s + 5, "dur": 10.0, "args": {"correlation": corr}})
            kname = LONG if i == 0 else SCRIPT if i == 1 else name
            ev.append({"ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": 7,
                       "ts": s + 20, "dur": 40.0 + i,
                       "args": {"correlation": corr, "device": 0, "stream": 7}})
            corr += 1
        ev.append({"ph": "X", "cat": "user_annotation", "name": SCRIPT, "pid": 1, "tid": 1,
                   "ts": t + 700, "dur": 100.0})
        t += 1000.0
    text = json.dumps({"schemaVersion": 1, "traceEvents": ev}, ensure_ascii=True)
    data = text.encode("ascii").replace(INVALID.encode(), b"bad\xff\xfe\x80utf8")
    with open(sys.argv[1], "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
