#!/usr/bin/python3
"""kineto_check.py: an independent oracle for `opscope report` on PyTorch/Kineto JSON traces.

It reads the trace on its own (Python's standard library only, gzip or plain), computes

  * the kernel table: for every Kineto event with "ph": "X" and "cat" "kernel" (2021 format:
    "Kernel"), launched or not, NCCL included, per kernel name: calls, total, max, min (ns);
  * gpu_busy_ns: the length of the union of [ts, ts + dur) over every GPU event (ph X, cat
    kernel/Kernel/gpu_memcpy/Memcpy/gpu_memset/Memset); touching intervals merge;

with exact decimal arithmetic (ts/dur are µs with up to 3 decimals: ns = value x 1000), then
runs `$OPSCOPE report --format json --views kernel,overview FILE` and compares: the same set of
kernel names, equal calls and total_ns for each (and max_ns/min_ns when the report has them),
equal gpu_busy_ns. Exits 1 with a diff on any mismatch, 2 on usage or input errors.

  kineto_check.py [--opscope PATH] TRACE...     # compare (PATH defaults to $OPSCOPE)
  kineto_check.py --print [--top N] TRACE...    # the checker's own numbers, no opscope
  kineto_check.py --expect-kernel NAME CALLS TOTAL_US [--tolerance-us U] TRACE
                                                # assert the checker's own row (oracle check)
  kineto_check.py --self-test                   # the checker's tests of itself
"""

import argparse
import decimal
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile

KERNEL_CATS = frozenset(("kernel", "Kernel", "mtia_ccp_events"))
GPU_CATS = frozenset(("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset",
                      "mtia_ccp_events"))


def is_kernel(cat, name):
    """MTIA's device events are kernels, except its DMA transfers (copies): the contract of
    docs/import-kineto.md."""
    return cat in KERNEL_CATS and not (cat == "mtia_ccp_events" and name == "dma_request")
REPORT_TIMEOUT_S = 900


class InputError(Exception):
    pass


def read_json_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def load_trace(path):
    data = read_json_bytes(path)
    try:
        return json.loads(data, parse_float=decimal.Decimal)
    except ValueError as e:
        raise InputError("%s: not JSON: %s" % (path, e))


def to_ns(value, what):
    """µs (int, Decimal or numeric string) -> int ns, exactly; refuses more than ns resolution."""
    if isinstance(value, bool):
        raise InputError("%s: boolean is not a time" % what)
    if isinstance(value, int):
        return value * 1000
    if isinstance(value, str):
        try:
            value = decimal.Decimal(value)
        except decimal.InvalidOperation:
            raise InputError("%s: %r is not a number" % (what, value))
    if isinstance(value, float):  # never produced by load_trace; kept for callers' dicts
        value = decimal.Decimal(repr(value))
    if not isinstance(value, decimal.Decimal) or not value.is_finite():
        raise InputError("%s: %r is not a time" % (what, value))
    ns = value * 1000
    if ns != ns.to_integral_value():
        raise InputError("%s: %s µs has more than 3 decimals" % (what, value))
    return int(ns)


class Stats:
    """The checker's own numbers for one trace."""

    def __init__(self):
        self.kernels = {}  # name -> [calls, total_ns, max_ns, min_ns]
        self.gpu_events = 0
        self.gpu_busy_ns = 0
        self.events = 0
        self.notes = []


def union_length(intervals):
    total = 0
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if e <= s:
            continue  # empty interval: adds nothing, splits nothing
        if cur_e is None or s > cur_e:  # a gap (touching intervals, s == cur_e, merge)
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def analyze(doc, where="trace"):
    st = Stats()
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        if events is None:
            raise InputError("%s: no traceEvents" % where)
    elif isinstance(doc, list):  # the Chrome array form
        events = doc
    else:
        raise InputError("%s: top level is neither an object nor an array" % where)
    if not isinstance(events, list):
        raise InputError("%s: traceEvents is not an array" % where)
    base_ns = 0
    if isinstance(doc, dict) and "baseTimeNanoseconds" in doc:
        b = doc["baseTimeNanoseconds"]
        if isinstance(b, int) and not isinstance(b, bool):
            base_ns = b
        else:
            st.notes.append("baseTimeNanoseconds is not an integer: ignored")
    intervals = []
    nodur = 0
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            continue
        st.events += 1
        if ev.get("ph") != "X":
            continue
        cat = ev.get("cat")
        if cat not in GPU_CATS:
            continue
        what = "%s: traceEvents[%d]" % (where, i)
        if "ts" not in ev:
            raise InputError("%s: GPU event without ts" % what)
        ts = base_ns + to_ns(ev["ts"], what + ".ts")
        if "dur" in ev:
            dur = to_ns(ev["dur"], what + ".dur")
        else:
            dur = 0
            nodur += 1
        st.gpu_events += 1
        intervals.append((ts, ts + dur))
        if is_kernel(cat, ev.get("name")):
            name = ev.get("name")
            if not isinstance(name, str):
                raise InputError("%s: kernel without a string name" % what)
            row = st.kernels.get(name)
            if row is None:
                st.kernels[name] = [1, dur, dur, dur]
            else:
                row[0] += 1
                row[1] += dur
                if dur > row[2]:
                    row[2] = dur
                if dur < row[3]:
                    row[3] = dur
    if nodur:
        st.notes.append("%d GPU events without dur (counted as 0)" % nodur)
    st.gpu_busy_ns = union_length(intervals)
    return st


def analyze_file(path):
    return analyze(load_trace(path), path)


# ---------------------------------------------------------------- the report side

def run_report(opscope, path):
    cmd = [opscope, "report", "--format", "json", "--views", "kernel,overview", path]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=REPORT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise InputError("%s: timed out after %d s" % (" ".join(cmd), REPORT_TIMEOUT_S))
    except OSError as e:
        raise InputError("%s: %s" % (" ".join(cmd), e))
    if p.returncode != 0:
        raise InputError("%s: exit %d\n%s" % (" ".join(cmd), p.returncode,
                                               p.stderr.decode("utf-8", "replace")[-4000:]))
    try:
        return json.loads(p.stdout, parse_float=decimal.Decimal)
    except ValueError as e:
        head = p.stdout[:300].decode("utf-8", "replace")
        raise InputError("%s: output is not JSON (%s); starts with %r" % (" ".join(cmd), e, head))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def compare(st, report, label="trace", max_lines=40):
    """Returns a list of mismatch lines (empty: equal)."""
    errs = []
    if not isinstance(report, dict):
        return ["report: top level is not an object"]
    if report.get("opscope_report") != 1:
        errs.append("report: opscope_report is %r, expected 1" % report.get("opscope_report"))
    if report.get("time_unit") != "ns":
        errs.append("report: time_unit is %r, expected \"ns\"" % report.get("time_unit"))
    tables = report.get("tables")
    if not isinstance(tables, list):
        return errs + ["report: no tables array"]
    by_view = {}
    for t in tables:
        if isinstance(t, dict) and isinstance(t.get("view"), str):
            if t["view"] in by_view:
                errs.append("report: view %r appears twice" % t["view"])
            by_view[t["view"]] = t

    # kernel table
    kt = by_view.get("kernel")
    if kt is None:
        errs.append("report: no table with view \"kernel\"")
    elif not isinstance(kt.get("rows"), list):
        errs.append("report: kernel table has no rows array")
    else:
        rows = {}
        for j, r in enumerate(kt["rows"]):
            if not isinstance(r, dict) or not isinstance(r.get("name"), str):
                errs.append("kernel row %d: no string name" % j)
                continue
            if r["name"] in rows:
                errs.append("kernel row %d: name appears twice: %s" % (j, r["name"]))
            rows[r["name"]] = r
        mine, theirs = set(st.kernels), set(rows)
        missing = sorted(mine - theirs, key=lambda n: -st.kernels[n][1])
        extra = sorted(theirs - mine)
        if missing:
            errs.append("kernel: %d names missing from the report (%d in the trace), e.g.:"
                        % (len(missing), len(mine)))
            errs += ["  - %s  (calls %d, total_ns %d)" % (n, st.kernels[n][0], st.kernels[n][1])
                     for n in missing[:10]]
        if extra:
            errs.append("kernel: %d names in the report but not in the trace, e.g.:" % len(extra))
            errs += ["  + %s" % n for n in extra[:10]]
        diffs = []
        for n in sorted(mine & theirs, key=lambda n: -st.kernels[n][1]):
            calls, total, mx, mn = st.kernels[n]
            r = rows[n]
            for key, want, required in (("calls", calls, True), ("total_ns", total, True),
                                        ("max_ns", mx, False), ("min_ns", mn, False)):
                if key not in r:
                    if required:
                        diffs.append("  %s: %s missing, expected %d" % (n, key, want))
                    continue
                got = r[key]
                if not is_int(got) or got != want:
                    diffs.append("  %s: %s = %r, expected %d (diff %s)"
                                 % (n, key, got, want,
                                    (got - want) if is_int(got) else "n/a"))
        if diffs:
            errs.append("kernel: %d value mismatches (of %d names):" % (len(diffs), len(mine & theirs)))
            errs += diffs[:max_lines]
            if len(diffs) > max_lines:
                errs.append("  ... %d more" % (len(diffs) - max_lines))

    # overview
    ov = by_view.get("overview")
    if ov is None:
        errs.append("report: no table with view \"overview\"")
    else:
        tot = ov.get("totals")
        got = tot.get("gpu_busy_ns") if isinstance(tot, dict) else None
        if not is_int(got):
            errs.append("overview: totals.gpu_busy_ns is %r, expected integer %d"
                        % (got, st.gpu_busy_ns))
        elif got != st.gpu_busy_ns:
            errs.append("overview: gpu_busy_ns = %d, expected %d (diff %+d ns)"
                        % (got, st.gpu_busy_ns, got - st.gpu_busy_ns))
    return ["%s: %s" % (label, e) if not e.startswith("  ") else e for e in errs]


# ---------------------------------------------------------------- modes

def cmd_print(paths, top):
    for p in paths:
        st = analyze_file(p)
        calls = sum(v[0] for v in st.kernels.values())
        total = sum(v[1] for v in st.kernels.values())
        print("== %s" % p)
        print("events %d  gpu_events %d  kernel_names %d  kernel_calls %d  kernel_total_ns %d  "
              "gpu_busy_ns %d" % (st.events, st.gpu_events, len(st.kernels), calls, total,
                                  st.gpu_busy_ns))
        for note in st.notes:
            print("note: %s" % note)
        rows = sorted(st.kernels.items(), key=lambda kv: (-kv[1][1], kv[0]))
        print("%8s %14s %12s %12s  %s" % ("calls", "total_ns", "max_ns", "min_ns", "name"))
        for n, (c, t, mx, mn) in rows[:top]:
            print("%8d %14d %12d %12d  %s" % (c, t, mx, mn, n if len(n) <= 100 else n[:97] + "..."))
    return 0


def cmd_expect(path, name, calls, total_us, tol_us):
    st = analyze_file(path)
    row = st.kernels.get(name)
    if row is None:
        print("FAIL %s: no kernel named %s" % (path, name))
        return 1
    got_us = decimal.Decimal(row[1]) / 1000
    ok = row[0] == calls and abs(got_us - decimal.Decimal(total_us)) <= decimal.Decimal(tol_us)
    print("%s %s: %s calls %d (expected %d), total %s us (expected %s +- %s)"
          % ("ok" if ok else "FAIL", path, name, row[0], calls, got_us, total_us, tol_us))
    return 0 if ok else 1


def cmd_compare(opscope, paths):
    bad = 0
    for p in paths:
        try:
            st = analyze_file(p)
            rep = run_report(opscope, p)
        except InputError as e:
            print("FAIL %s\n%s" % (p, e))
            bad += 1
            continue
        errs = compare(st, rep, os.path.basename(p))
        if errs:
            bad += 1
            print("FAIL %s" % p)
            print("\n".join(errs))
        else:
            print("ok %s: %d kernel names, %d calls, gpu_busy_ns %d"
                  % (p, len(st.kernels), sum(v[0] for v in st.kernels.values()), st.gpu_busy_ns))
    return 1 if bad else 0


# ---------------------------------------------------------------- self-test

def self_test():
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    D = decimal.Decimal
    # exact µs -> ns
    check(to_ns(1623142623460111, "t") == 1623142623460111000, "int us")
    check(to_ns(D("0.001"), "t") == 1, "ns decimal")
    check(to_ns(D("12.345"), "t") == 12345, "3 decimals")
    check(to_ns(D("68.0"), "t") == 68000, "decimal .0")
    check(to_ns(D("1.1E+3"), "t") == 1100000, "exponent")
    check(to_ns("5.5", "t") == 5500, "string number")
    # a binary float would give 0.1+0.2 != 0.3; decimals must not
    check(to_ns(D("0.1"), "t") + to_ns(D("0.2"), "t") == to_ns(D("0.3"), "t"), "exact sum")
    for bad in (D("0.0001"), True, None, "x", D("NaN")):
        try:
            to_ns(bad, "t")
            check(False, "to_ns refuses %r" % (bad,))
        except InputError:
            pass
    # union
    check(union_length([]) == 0, "union empty")
    check(union_length([(0, 10), (10, 20)]) == 20, "touching merge")
    check(union_length([(0, 10), (5, 7), (12, 15)]) == 13, "nested + gap")
    check(union_length([(5, 5), (0, 3), (3, 3), (1, 2)]) == 3, "zero-length")
    check(union_length([(0, 100), (10, 20), (50, 150), (200, 201)]) == 151, "chain")

    # a small trace, 2021 and current categories, decimals, strings, base time
    trace = {
        "schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
        "traceEvents": [
            {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
            {"ph": "X", "cat": "kernel", "name": "k<a, \"b\">", "pid": 0, "tid": 7,
             "ts": D("100.500"), "dur": D("10.250"), "args": {"correlation": 1}},
            {"ph": "X", "cat": "kernel", "name": "k<a, \"b\">", "pid": 0, "tid": 8,
             "ts": D("105.000"), "dur": D("0.001")},
            {"ph": "X", "cat": "Kernel", "name": "ncclKernel_AllReduce", "pid": 1,
             "tid": "stream 7", "ts": 200, "dur": 30},
            {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7,
             "ts": D("110.750"), "dur": 5},  # touches the first kernel's end
            {"ph": "X", "cat": "Memset", "name": "Memset", "pid": 0, "tid": 7,
             "ts": 300, "dur": 0},
            {"ph": "X", "cat": "kernel", "name": "zero", "pid": 0, "tid": 7, "ts": 400, "dur": 0},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
             "dur": 1000},
            {"ph": "X", "cat": "KERNEL", "name": "not a kernel category", "ts": 0, "dur": 9},
            {"ph": "i", "cat": "kernel", "name": "instant kernel?", "ts": 0},
            {"ph": "s", "cat": "ac2g", "id": 1, "ts": 100, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "gpu_user_annotation", "name": "ann", "ts": 0, "dur": 999},
        ]}
    st = analyze(trace)
    check(st.kernels == {"k<a, \"b\">": [2, 10251, 10250, 1],
                         "ncclKernel_AllReduce": [1, 30000, 30000, 30000],
                         "zero": [1, 0, 0, 0]}, "kernel table %r" % st.kernels)
    # [100500,110750) + [110750,115750) merge -> 15250 ; [105000,105001) inside; nccl 30000
    check(st.gpu_busy_ns == 15250 + 30000, "gpu busy %d" % st.gpu_busy_ns)
    check(st.gpu_events == 6, "gpu events %d" % st.gpu_events)

    # round trip through JSON text, gzip and plain, parsed exactly
    text = json.dumps(trace, default=str)
    text = text.replace('"100.500"', "100.500").replace('"10.250"', "10.250") \
        .replace('"105.000"', "105.000").replace('"0.001"', "0.001").replace('"110.750"', "110.750")
    with tempfile.TemporaryDirectory() as d:
        plain = os.path.join(d, "t.json")
        gz = os.path.join(d, "t.json.gz")
        with open(plain, "w") as f:
            f.write(text)
        with gzip.open(gz, "wt") as f:
            f.write(text)
        for p in (plain, gz):
            s2 = analyze_file(p)
            check(s2.kernels == st.kernels and s2.gpu_busy_ns == st.gpu_busy_ns, "file " + p)
        # a float that binary arithmetic gets wrong: 0.1 + 0.2 µs busy
        fl = os.path.join(d, "f.json")
        with open(fl, "w") as f:
            f.write('{"traceEvents":[{"ph":"X","cat":"kernel","name":"a","ts":1.1,"dur":0.1},'
                    '{"ph":"X","cat":"kernel","name":"a","ts":1.2,"dur":0.2}]}')
        s3 = analyze_file(fl)
        check(s3.kernels["a"][:2] == [2, 300] and s3.gpu_busy_ns == 300, "float exactness")
        # Chrome array form, no kernels: both sides empty
        arr = os.path.join(d, "a.json")
        with open(arr, "w") as f:
            f.write('[{"ph":"X","cat":"cpu_op","name":"x","ts":1,"dur":2}]')
        s4 = analyze_file(arr)
        check(s4.kernels == {} and s4.gpu_busy_ns == 0, "array form")

        # compare(): a correct report passes, each kind of error is caught
        def report_for(s):
            return {"opscope_report": 1, "time_unit": "ns", "inputs": ["t"],
                    "tables": [
                        {"view": "overview", "title": "o", "rows": [],
                         "totals": {"total_ns": 1, "gpu_busy_ns": s.gpu_busy_ns}},
                        {"view": "kernel", "title": "k", "totals": {},
                         "rows": [{"name": n, "calls": v[0], "total_ns": v[1],
                                   "avg_ns": v[1] // v[0], "max_ns": v[2], "min_ns": v[3]}
                                  for n, v in s.kernels.items()]}]}
        good = report_for(st)
        check(compare(st, good) == [], "good report: %r" % compare(st, good))
        empty = report_for(s4)
        check(compare(s4, empty) == [], "empty report")
        mutations = [
            ("calls", lambda r: r["tables"][1]["rows"][0].update(calls=3)),
            ("total", lambda r: r["tables"][1]["rows"][0].update(total_ns=10250)),
            ("float total", lambda r: r["tables"][1]["rows"][0].update(total_ns=D("10251.0"))),
            ("max", lambda r: r["tables"][1]["rows"][0].update(max_ns=1)),
            ("missing name", lambda r: r["tables"][1]["rows"].pop()),
            ("extra name", lambda r: r["tables"][1]["rows"].append(
                {"name": "ghost", "calls": 1, "total_ns": 1})),
            ("dup name", lambda r: r["tables"][1]["rows"].append(dict(r["tables"][1]["rows"][0]))),
            ("busy", lambda r: r["tables"][0]["totals"].update(gpu_busy_ns=st.gpu_busy_ns + 1)),
            ("no overview", lambda r: r["tables"].pop(0)),
            ("no kernel", lambda r: r["tables"].pop(1)),
            ("unit", lambda r: r.update(time_unit="us")),
            ("version", lambda r: r.update(opscope_report=2)),
            ("no calls", lambda r: r["tables"][1]["rows"][0].pop("calls")),
        ]
        for what, mut in mutations:
            r = json.loads(json.dumps(good, default=int), parse_float=D)
            mut(r)
            check(compare(st, r) != [], "mutation not caught: " + what)

        # the whole path through a fake $OPSCOPE: exit codes, argv, output parsing
        fake = os.path.join(d, "fake_opscope")
        out = os.path.join(d, "out.json")
        with open(out, "w") as f:
            json.dump(good, f, default=int)
        with open(fake, "w") as f:
            f.write("#!/bin/sh\n"
                    "[ \"$1 $2 $3 $4 $5\" = \"report --format json --views kernel,overview\" ]"
                    " || { echo bad argv \"$@\" >&2; exit 2; }\n"
                    "cat '%s'\n" % out)
        os.chmod(fake, 0o755)
        devnull = io.StringIO()
        saved = sys.stdout
        try:
            sys.stdout = devnull
            rc_ok = cmd_compare(fake, [plain, gz])
            with open(out, "w") as f:
                bad = json.loads(json.dumps(good, default=int))
                bad["tables"][0]["totals"]["gpu_busy_ns"] += 1000
                json.dump(bad, f)
            rc_bad = cmd_compare(fake, [plain])
            with open(out, "w") as f:
                f.write("not json")
            rc_junk = cmd_compare(fake, [plain])
            rc_missing = cmd_compare(os.path.join(d, "nonexistent"), [plain])
        finally:
            sys.stdout = saved
        check(rc_ok == 0, "fake opscope, good output: rc %d\n%s" % (rc_ok, devnull.getvalue()))
        check(rc_bad == 1 and "gpu_busy_ns = " in devnull.getvalue(), "fake opscope, bad busy")
        check(rc_junk == 1 and "not JSON" in devnull.getvalue(), "fake opscope, junk output")
        check(rc_missing == 1, "missing opscope")

    for f in fails:
        print("self-test FAIL: %s" % f)
    print("self-test: %s (%d failures)" % ("ok" if not fails else "FAILED", len(fails)))
    return 1 if fails else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*")
    ap.add_argument("--opscope", default=os.environ.get("OPSCOPE"))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--print", action="store_true", dest="print_")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--expect-kernel", nargs=3, metavar=("NAME", "CALLS", "TOTAL_US"))
    ap.add_argument("--tolerance-us", default="0")
    a = ap.parse_args(argv)
    try:
        if a.self_test:
            return self_test()
        if not a.traces:
            ap.error("no trace given")
        if a.print_:
            return cmd_print(a.traces, a.top)
        if a.expect_kernel:
            n, c, t = a.expect_kernel
            return cmd_expect(a.traces[0], n, int(c), t, a.tolerance_us)
        if not a.opscope:
            ap.error("no opscope: pass --opscope or set $OPSCOPE")
        return cmd_compare(a.opscope, a.traces)
    except InputError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
