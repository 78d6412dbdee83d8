#!/usr/bin/python3
"""gpu_check.py: an independent oracle for the `gpu` and `gpumem` views of `opscope report`
on PyTorch/Kineto JSON traces (Python's standard library only, gzip or plain).

From the raw trace, with integer ns (ts/dur are µs with up to 3 decimals), it computes what
docs/report.md defines for the two views:

  * steps: ProfilerStep# ranges by start; a runtime call (cuda_runtime, cuda_driver, Runtime)
    lying wholly inside a step's host span launched the GPU events (kernel, memcpy, memset)
    with its correlation id; step k runs from max(its host start, the previous step's end)
    to max(its host end, the end of the last GPU event it launched); GPU work not launched
    inside a step that ended before the first step's first GPU event moves the first start
    to its end; trailing steps that launched nothing are dropped, and the last one too when
    it launched under 80 % of the one before. The window: first step start to last step end.
  * per device (the GPU events' pid): the union of kernels and of all GPU work over each
    step, the window, and buckets of the window (the smallest power of 10 µs giving at most
    100); kernels starting in each span; SM use: per kernel min(1, blocks / SMs) (grid from
    args.grid, SMs from deviceProperties numSms; else args["blocks per SM"]), overlapping
    kernels summed and capped at 1, integrated over the span.
  * memory: "[memory]" instants with Device Type 1, per Device Id, in time order: allocations
    (Bytes > 0) and frees, the allocated bytes after each (Total Allocated where every record
    has it, else the running sum from 0), start, end, peak and when, frees matched to the
    live allocation at their Addr, never freed, the 10 largest allocations with their lifetime
    and the innermost host range around them on their thread (neither a runtime call nor a
    step), and the series over [first record, last record] in the same buckets.

It then runs `$OPSCOPE report --format json --views gpu,gpumem FILE` and compares: every
duration, busy time and count exactly, the SM integral to 1 ns, every memory number exactly.
Exits 1 with the differences, 2 on usage or input errors.

  gpu_check.py [--opscope PATH] TRACE...     # compare (PATH defaults to $OPSCOPE)
  gpu_check.py --print TRACE...              # the checker's own numbers
  gpu_check.py --tb-expected INPUT EXPECTED  # the checker against the TensorBoard plugin's
                                             # own test (tb_plugin/test/gpu_metrics_*.json)
  gpu_check.py --self-test
"""

import argparse
import bisect
import decimal
import gzip
import json
import os
import subprocess
import sys

KERNEL = frozenset(("kernel", "Kernel"))
WORK = frozenset(("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"))
RUNTIME = frozenset(("cuda_runtime", "cuda_driver", "Runtime"))
TOP = 10


class InputError(Exception):
    pass


def to_ns(v):
    if isinstance(v, bool) or v is None:
        raise InputError("not a time: %r" % (v,))
    d = decimal.Decimal(v) if not isinstance(v, decimal.Decimal) else v
    ns = d * 1000
    if ns != ns.to_integral_value():
        raise InputError("%s µs has more than 3 decimals" % v)
    return int(ns)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        doc = json.loads(data, parse_float=decimal.Decimal)
    except ValueError as e:
        raise InputError("%s: not JSON: %s" % (path, e))
    if isinstance(doc, list):
        doc = {"traceEvents": doc}
    return doc


def union(iv):
    """Merged list of [s, e) intervals (touching ones merge)."""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def covered(merged, s, e):
    return sum(max(0, min(b, e) - max(a, s)) for a, b in merged if a < e and b > s)


def bucket_ns(span):
    if span <= 0:
        return 0
    b = 1000
    while -(-span // b) > 100:
        b *= 10
    return b


def sm_segments(kernels):
    """[(s, e, value)] of the capped sum of the kernels' SM values."""
    edges = []
    for s, e, v in kernels:
        if e > s and v > 0:
            edges.append((s, v, 1))
            edges.append((e, -v, -1))
    edges.sort(key=lambda x: x[0])
    segs, total, active = [], 0.0, 0
    for i, (t, v, d) in enumerate(edges):
        if i and t > edges[i - 1][0] and active > 0 and total > 0:
            segs.append((edges[i - 1][0], t, min(total, 1.0)))
        total += v
        active += d
        if active == 0:
            total = 0.0
    return segs


def sm_within(segs, s, e):
    return sum((min(b, e) - max(a, s)) * v for a, b, v in segs if a < e and b > s)


def steps_of(events, gpu):
    """The steps as docs/report.md (Step table) defines them: [(name, s, e)]."""
    host = sorted(((to_ns(ev["ts"]), to_ns(ev["ts"]) + to_ns(ev.get("dur", 0)), ev["name"])
                   for ev in events if ev.get("ph") == "X" and
                   str(ev.get("name", "")).startswith("ProfilerStep#")),
                  key=lambda x: (x[0], x[1]))
    if not host:
        return None
    calls = {}
    for ev in events:
        if ev.get("ph") == "X" and ev.get("cat") in RUNTIME:
            c = (ev.get("args") or {}).get("correlation")
            if isinstance(c, int) and c:
                s = to_ns(ev["ts"])
                calls[c] = (s, s + to_ns(ev.get("dur", 0)))
    n = len(host)
    dmin, dmax, count = [None] * n, [None] * n, [0] * n
    launched = set()
    for i, (s, e, corr, _, _) in enumerate(gpu):
        call = calls.get(corr)
        if not call:
            continue
        for k, (hs, he, _) in enumerate(host):
            if hs <= call[0] and call[1] <= he:
                dmin[k] = s if dmin[k] is None else min(dmin[k], s)
                dmax[k] = e if dmax[k] is None else max(dmax[k], e)
                count[k] += 1
                launched.add(i)
                break
    if not launched:
        return [(name, s, e) for s, e, name in host]
    prev = host[0][0]
    if dmin[0] is not None:
        for i, (s, e, _, _, _) in enumerate(gpu):
            if i not in launched and prev < e < dmin[0]:
                prev = e
    out = []
    for k, (hs, he, name) in enumerate(host):
        start = max(prev, hs)
        end = max(he, start) if dmax[k] is None else max(he, dmax[k])
        end = max(end, start)
        out.append((name, start, end))
        prev = end
    keep = n
    if n > 1:
        last = n - 1
        while last >= 0 and count[last] == 0:
            last -= 1
        if last >= 0:
            keep = last + 1
            if last > 0 and count[last - 1] * 0.8 > count[last]:
                keep = last
    return out[:keep]


def analyze_gpu(doc):
    events = [ev for ev in doc.get("traceEvents", []) if isinstance(ev, dict)]
    sms = {}
    for p in doc.get("deviceProperties") or []:
        if isinstance(p.get("numSms"), int):
            sms[p.get("id")] = p["numSms"]
    gpu = []  # (s, e, corr, device, cat)
    kern = {}  # device -> [(s, e, sm value)]
    nsm = {}
    for ev in events:
        if ev.get("ph") != "X" or ev.get("cat") not in WORK:
            continue
        s = to_ns(ev["ts"])
        e = s + to_ns(ev.get("dur", 0))
        a = ev.get("args") or {}
        dev = ev.get("pid")
        corr = a.get("correlation") if isinstance(a.get("correlation"), int) else 0
        gpu.append((s, e, corr, dev, ev["cat"]))
        if ev["cat"] in KERNEL:
            v = None
            g = a.get("grid")
            if isinstance(g, list) and len(g) == 3 and sms.get(dev) and \
                    all(isinstance(x, int) for x in g) and g[0] * g[1] * g[2] > 0:
                v = min(1.0, g[0] * g[1] * g[2] / sms[dev])
            elif isinstance(a.get("blocks per SM"), (int, decimal.Decimal)):
                v = min(1.0, float(a["blocks per SM"]))
            kern.setdefault(dev, []).append((s, e, v or 0.0))
            nsm[dev] = nsm.get(dev, 0) + (v is not None)
    steps = steps_of(events, gpu)
    if steps is None:
        raise InputError("no ProfilerStep ranges: the checker covers traces with steps")
    ws, we = steps[0][1], steps[-1][2]
    out = {}
    for dev in sorted(set(x[3] for x in gpu), key=str):
        K = union([(s, e) for s, e, _, d, c in gpu if d == dev and c in KERNEL])
        W = union([(s, e) for s, e, _, d, _ in gpu if d == dev])
        starts = sorted(s for s, _, _, d, c in gpu if d == dev and c in KERNEL)
        segs = sm_segments(kern.get(dev, []))
        known = nsm.get(dev, 0) > 0

        def span(name, s, e):
            return {"name": name, "start_ns": s - ws, "duration_ns": e - s,
                    "kernel_busy_ns": covered(K, s, e), "device_busy_ns": covered(W, s, e),
                    "sm_busy": sm_within(segs, s, e) if known else None,
                    "kernels": bisect.bisect_left(starts, e) - bisect.bisect_left(starts, s)}
        rows = [span(n, s, e) for n, s, e in steps]
        rows.append(span("Window", ws, we))
        b = bucket_ns(we - ws)
        buckets = []
        t = ws
        while b and t < we:
            buckets.append(span("", t, min(t + b, we)))
            t += b
        out["GPU%s" % dev] = {"rows": rows, "buckets": buckets}
    return out


def innermost(host, tid, t):
    """Name of the innermost host range of thread tid around time t that is neither a runtime
    call nor a step (host: tid -> [(s, e, name, cat)] sorted by start, longer first)."""
    chain = [r for r in host.get(tid, ()) if r[0] <= t and (t < r[1] or r[0] == t)]
    chain.sort(key=lambda r: (r[0], -r[1]))  # outermost first
    for s, e, name, cat in reversed(chain):
        if cat not in RUNTIME and not str(name).startswith("ProfilerStep#"):
            return name
    return None


def analyze_memory(doc):
    events = [ev for ev in doc.get("traceEvents", []) if isinstance(ev, dict)]
    host = {}
    for ev in events:
        if ev.get("ph") == "X" and ev.get("cat") not in WORK and \
                ev.get("cat") != "gpu_user_annotation":
            s = to_ns(ev["ts"])
            host.setdefault((str(ev.get("pid")), str(ev.get("tid"))), []).append(
                (s, s + to_ns(ev.get("dur", 0)), ev.get("name"), ev.get("cat")))
    for v in host.values():
        v.sort(key=lambda r: (r[0], -r[1]))
    recs = {}
    for i, ev in enumerate(events):
        if ev.get("ph") != "i" or ev.get("name") != "[memory]":
            continue
        a = ev.get("args") or {}
        if a.get("Device Type") != 1 or not isinstance(a.get("Device Id"), int) or \
                not isinstance(a.get("Bytes"), int) or a["Bytes"] == 0 or a["Device Id"] < 0:
            continue
        recs.setdefault(a["Device Id"], []).append(
            {"ts": to_ns(ev["ts"]), "seq": i, "bytes": a["Bytes"],
             "total": a.get("Total Allocated"), "addr": a.get("Addr"),
             "thread": (str(ev.get("pid")), str(ev.get("tid"))), "freed": None})
    out = {}
    for dev, rs in sorted(recs.items()):
        rs.sort(key=lambda r: (r["ts"], r["seq"]))
        totals = all(isinstance(r["total"], int) for r in rs)
        addrs = all(isinstance(r["addr"], int) for r in rs)
        cur = rs[0]["total"] - rs[0]["bytes"] if totals else 0
        d = {"allocations": 0, "frees": 0, "allocated_bytes": 0, "freed_bytes": 0,
             "start_bytes": cur, "peak_bytes": None, "basis":
             "Total Allocated" if totals else "sum from 0"}
        live, after = {}, []
        first = rs[0]["ts"]
        for r in rs:
            cur = r["total"] if totals else cur + r["bytes"]
            after.append(cur)
            if d["peak_bytes"] is None or cur > d["peak_bytes"]:
                d["peak_bytes"], d["peak_at_ns"] = cur, r["ts"] - first
            if r["bytes"] > 0:
                d["allocations"] += 1
                d["allocated_bytes"] += r["bytes"]
                if addrs:
                    live[r["addr"]] = r
            else:
                d["frees"] += 1
                d["freed_bytes"] -= r["bytes"]
                a = live.pop(r["addr"], None) if addrs else None
                if a is not None:
                    a["freed"] = r["ts"]
        d["end_bytes"] = cur
        allocs = sorted((r for r in rs if r["bytes"] > 0),
                        key=lambda r: (-r["bytes"], r["ts"], r["seq"]))

        def row(r):
            return {"bytes": r["bytes"], "at_ns": r["ts"] - first,
                    "lifetime_ns": None if r["freed"] is None else r["freed"] - r["ts"],
                    "launched_by": innermost(host, r["thread"], r["ts"]) or ""}
        d["largest"] = [row(r) for r in allocs[:TOP]]
        never = [r for r in allocs if addrs and r["freed"] is None]
        d["never_freed"] = len(never) if addrs else None
        d["never_freed_bytes"] = sum(r["bytes"] for r in never) if addrs else None
        d["leaks"] = [row(r) for r in never[:TOP]]
        last = rs[-1]["ts"]
        b = bucket_ns(last - first + 1)
        series, i, cur = [], 0, d["start_bytes"]
        t = first
        while t < last + 1:
            e = min(t + b, last + 1)
            mx = cur
            while i < len(rs) and rs[i]["ts"] < e:
                cur = after[i]
                mx = max(mx, cur)
                i += 1
            series.append({"start_ns": t - first, "duration_ns": e - t, "end_bytes": cur,
                           "max_bytes": mx})
            t += b
        d["series"] = series
        out["GPU%d" % dev] = d
    return out


def run_report(opscope, path):
    cmd = [opscope, "report", "--format", "json", "--views", "gpu,gpumem", path]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)
    if p.returncode != 0:
        raise InputError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                              p.stderr.decode("utf-8", "replace")[-2000:]))
    return json.loads(p.stdout, parse_float=decimal.Decimal)


def tables(report, title):
    return [r for t in report["tables"] if t["title"] == title for r in t.get("rows", [])]


def compare(path, report, diffs):
    want = analyze_gpu(load(path))
    doc = load(path)
    wmem = analyze_memory(doc)
    util = tables(report, "GPU Utilization")
    series = tables(report, "GPU Utilization over time")

    def same_span(label, got, w):
        for k in ("start_ns", "duration_ns", "kernel_busy_ns", "device_busy_ns", "kernels"):
            if got.get(k) != w[k]:
                diffs.append("%s %s: report %r, checker %r" % (label, k, got.get(k), w[k]))
        g = got.get("sm_busy_ns")
        if (w["sm_busy"] is None) != (g is None) or \
                (g is not None and abs(float(g) - w["sm_busy"]) > 1.0):
            diffs.append("%s sm_busy_ns: report %r, checker %r" % (label, g, w["sm_busy"]))
    for dev, w in want.items():
        rows = [r for r in util if r["device"] == dev]
        if len(rows) != len(w["rows"]):
            diffs.append("%s: %d utilization rows, checker %d" % (dev, len(rows), len(w["rows"])))
            continue
        for got, wr in zip(rows, w["rows"]):
            if got["step"] != wr["name"]:
                diffs.append("%s: step %r, checker %r" % (dev, got["step"], wr["name"]))
            same_span("%s %s" % (dev, wr["name"]), got, wr)
        brows = [r for r in series if r["device"] == dev]
        if len(brows) != len(w["buckets"]):
            diffs.append("%s: %d buckets, checker %d" % (dev, len(brows), len(w["buckets"])))
            continue
        for i, (got, wr) in enumerate(zip(brows, w["buckets"])):
            same_span("%s bucket %d" % (dev, i), got, wr)
    mem = tables(report, "GPU Memory")
    largest = tables(report, "GPU Memory: Largest Allocations")
    leaks = tables(report, "GPU Memory: Never Freed")
    mseries = tables(report, "GPU Memory over time")
    if sorted(r["device"] for r in mem) != sorted(wmem):
        diffs.append("memory devices: report %r, checker %r" %
                     (sorted(r["device"] for r in mem), sorted(wmem)))
    for dev, w in wmem.items():
        got = [r for r in mem if r["device"] == dev]
        if not got:
            continue
        for k in ("allocations", "frees", "allocated_bytes", "freed_bytes", "start_bytes",
                  "end_bytes", "peak_bytes", "peak_at_ns", "never_freed", "never_freed_bytes",
                  "basis"):
            if got[0].get(k) != w[k]:
                diffs.append("%s memory %s: report %r, checker %r" % (dev, k, got[0].get(k), w[k]))
        for name, rows, wl in (("largest", largest, w["largest"]), ("never freed", leaks, w["leaks"])):
            g = [r for r in rows if r["device"] == dev]
            if len(g) != len(wl):
                diffs.append("%s %s: %d rows, checker %d" % (dev, name, len(g), len(wl)))
                continue
            for i, (a, b) in enumerate(zip(g, wl)):
                for k in b:
                    if k in a and a[k] != b[k]:
                        diffs.append("%s %s #%d %s: report %r, checker %r" % (dev, name, i, k, a[k], b[k]))
        g = [r for r in mseries if r["device"] == dev]
        if g != [dict(device=dev, **x) for x in w["series"]]:
            diffs.append("%s memory series differ (%d rows, checker %d)" % (dev, len(g), len(w["series"])))
    return want, wmem


def tb_expected(inp, expected):
    """The checker's union-per-bucket against the TensorBoard plugin's own expected "GPU 0
    Utilization" counters for its test input. The plugin's series has its own conventions,
    reproduced here only for this check: its window is the profiler's "Trace" range, it
    makes floor(span / bucket) buckets and stretches the last to the window's end, and it
    writes percentages; two markers (1 and 0) lead the counters and a 0 ends them."""
    doc = load(inp)
    events = [ev for ev in doc["traceEvents"] if isinstance(ev, dict)]
    tr = [ev for ev in events if ev.get("ph") == "X" and ev.get("cat") == "Trace"][0]
    ws = to_ns(tr["ts"])
    we = ws + to_ns(tr["dur"])
    K = union([(to_ns(ev["ts"]), to_ns(ev["ts"]) + to_ns(ev.get("dur", 0))) for ev in events
               if ev.get("ph") == "X" and ev.get("cat") in KERNEL and ev.get("pid") == 0])
    b = bucket_ns(we - ws)
    n = (we - ws) // b
    buckets = [(ws + i * b, we if i == n - 1 else ws + (i + 1) * b) for i in range(n)]
    exp = [ev for ev in load(expected)["traceEvents"]
           if ev.get("ph") == "C" and ev.get("name") == "GPU 0 Utilization"][2:-1]
    bad = []
    if len(exp) != len(buckets):
        bad.append("buckets: plugin %d, checker %d" % (len(exp), len(buckets)))
    for p, (s, e) in zip(exp, buckets):
        u = 100.0 * covered(K, s, e) / (e - s)
        if to_ns(p["ts"]) != s or abs(float(p["args"]["GPU Utilization"]) - u) > 1e-9:
            bad.append("bucket at %s: plugin %s, checker %r" % (p["ts"], p["args"]["GPU Utilization"], u))
    return bad


def self_test():
    bad = []
    if union([(0, 10), (10, 20), (30, 40), (35, 36)]) != [[0, 20], [30, 40]]:
        bad.append("union")
    if bucket_ns(100000) != 1000 or bucket_ns(100001) != 10000 or bucket_ns(0) != 0:
        bad.append("bucket_ns")
    # two kernels of 0.75 overlapping on [5, 10): 0.75*5 + min(1, 1.5)*5 + 0.75*5 = 12.5
    segs = sm_segments([(0, 10, 0.75), (5, 15, 0.75)])
    if abs(sm_within(segs, 0, 15) - 12.5) > 1e-12 or abs(sm_within(segs, 5, 10) - 5) > 1e-12:
        bad.append("sm sweep: %r" % segs)
    host = {1: [(0, 100, "outer", "cpu_op"), (10, 50, "aten::empty", "cpu_op"),
                (20, 30, "cudaMalloc", "cuda_runtime")]}
    if innermost(host, 1, 25) != "aten::empty" or innermost(host, 1, 60) != "outer" or \
            innermost(host, 1, 100) is not None:
        bad.append("innermost")
    for b in bad:
        print("self-test failed:", b)
    return not bad


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--opscope", default=os.environ.get("OPSCOPE"))
    ap.add_argument("--print", action="store_true")
    ap.add_argument("--tb-expected", nargs=2, metavar=("INPUT", "EXPECTED"))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("traces", nargs="*")
    o = ap.parse_args(argv)
    try:
        if o.self_test:
            return 0 if self_test() else 1
        if o.tb_expected:
            bad = o.tb_expected and tb_expected(*o.tb_expected)
            for b in bad:
                print(b)
            return 1 if bad else 0
        if o.print:
            for p in o.traces:
                doc = load(p)
                print(json.dumps({"gpu": analyze_gpu(doc), "memory": analyze_memory(doc)},
                                 indent=1, default=str))
            return 0
        if not o.opscope or not o.traces:
            ap.error("need --opscope (or $OPSCOPE) and a trace")
        rc = 0
        for p in o.traces:
            diffs = []
            want, wmem = compare(p, run_report(o.opscope, p), diffs)
            for d in diffs[:40]:
                print("%s: %s" % (p, d))
            nb = sum(len(w["buckets"]) for w in want.values())
            print("%s: %s (%d devices, %d buckets, %d memory devices)" %
                  (p, "differs" if diffs else "same", len(want), nb, len(wmem)))
            rc = rc or (1 if diffs else 0)
        return rc
    except InputError as e:
        print("gpu_check:", e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
