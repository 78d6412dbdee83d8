#!/usr/bin/python3
"""gputime_check.py: an independent oracle for the `gputime`, `launch` and `queue` views of
`opscope report` on PyTorch/Kineto JSON traces (Python's standard library only).

From the raw trace, in integer ns, it computes what docs/report.md defines for the three
views, its own way (lengths of unions, not the report's peeling and sweeps):

  * steps and window: gpu_check.py's (the Step table's rules), whose own test is
    tests/e2e/test_gpu_views.sh;
  * classes per device (the GPU events' pid): communication = kernels whose name contains
    nccl, xccl, rccl, hccl or cross_device_reduce (any case), compute = the other kernels,
    memcpy, memset; per span: compute = |C|, comm = |C u M| - |C|, memcpy = |C u M u P| -
    |C u M|, memset = |all work| - |C u M u P|; every idle gap (the span's complement of all
    work) is cut at every edge of the data, sync and queued intervals inside it, and each
    piece goes to data (inside a Dataloader range or [step start, end of its last Dataloader
    range)), else sync (inside a synchronizing runtime call or a Stream/Event/Context Sync
    event of the device), else other (inside [launching call end, op start) of an op of the
    device), else host; a gap counts once per cause it gave time to; and the parts must sum
    to the span;
  * launch: per op name, ops with a runtime call of the same correlation id: count, call
    durations (sum, max), delays max(0, op start - call end) (sum, max), ops under 10 µs,
    HTA's short ops (call <= 50 µs, op < call), calls > 50 µs, delays > 100 µs;
  * queue: per (device, stream: its thread_name, else a string tid, else "stream <tid>"),
    ops with a call; over the window and its buckets, per
    interval between consecutive edges, the count of calls begun minus ops started by its
    start (bisect): the largest, the integral (an integer, count x ns), and the time with
    1024 or more.

It then runs `$OPSCOPE report --format json --views gputime,launch,queue FILE` and compares
every number exactly. Exits 1 with the differences,
2 on usage or input errors.

  gputime_check.py [--opscope PATH] TRACE...   # compare (PATH defaults to $OPSCOPE)
  gputime_check.py --print TRACE...            # the checker's own numbers
  gputime_check.py --self-test
"""

import argparse
import bisect
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_check import (InputError, KERNEL, RUNTIME, WORK, bucket_ns, covered, load,  # noqa: E402
                       steps_of, to_ns)
from gpu_check import union as _union  # noqa: E402

COMM_NAMES = ("nccl", "xccl", "rccl", "hccl", "cross_device_reduce")
SYNC_EVENTS = frozenset(("Context Sync", "Stream Sync", "Event Sync"))
PARTS = ("compute", "communication", "memcpy", "memset",
         "idle_data", "idle_sync", "idle_host", "idle_other")
SHORT, RT_CUT, DELAY_CUT, FULL = 10000, 50000, 100000, 1024


def union(iv):
    """gpu_check's union, of intervals given as tuples or lists: [(s, e)] merged."""
    return [tuple(x) for x in _union([tuple(x) for x in iv])]


def is_sync_call(name):
    if not (name.startswith("cuda") or name.startswith("hip") or name.startswith("cu")):
        return False
    return "Synchronize" in name or ("Memcpy" in name and "Async" not in name)


def holds(merged, t):
    return any(a <= t < b for a, b in merged)


def gaps_of(work, s, e):
    cur = s
    for a, b in work:
        if b <= s or a >= e:
            continue
        if a > cur:
            yield cur, a
        cur = max(cur, b)
    if cur < e:
        yield cur, e

def analyze(doc):
    events = [ev for ev in doc.get("traceEvents", []) if isinstance(ev, dict)]
    calls = {}  # correlation -> (s, e)
    sync_calls, dl = [], []
    for ev in events:
        if ev.get("ph") != "X":
            continue
        s = to_ns(ev["ts"])
        e = s + to_ns(ev.get("dur", 0))
        cat, name = ev.get("cat"), str(ev.get("name", ""))
        if cat in RUNTIME:
            c = (ev.get("args") or {}).get("correlation")
            if isinstance(c, int) and c:
                calls[c] = (s, e)
            if e > s and is_sync_call(name):
                sync_calls.append((s, e))
        elif cat not in WORK and cat not in ("gpu_user_annotation", "cuda_sync",
                                             "cuda_profiler_range") and \
                (name.startswith("enumerate(DataLoader)") or cat == "Dataloader"):
            dl.append((s, e))
    # a stream's label: its thread_name, else a string tid, else "stream <tid>"
    tname = {(ev.get("pid"), ev.get("tid")): (ev.get("args") or {}).get("name")
             for ev in events if ev.get("ph") == "M" and ev.get("name") == "thread_name"}
    gpu = []  # (s, e, corr, device, cat) for steps_of
    ops = []  # (s, e, device, stream, class, name, call)
    dev_sync = {}
    for ev in events:
        if ev.get("ph") != "X":
            continue
        cat = ev.get("cat")
        s = to_ns(ev["ts"])
        e = s + to_ns(ev.get("dur", 0))
        if cat == "cuda_sync" and ev.get("name") in SYNC_EVENTS and e > s:
            dev_sync.setdefault(ev.get("pid"), []).append((s, e))
        if cat not in WORK:
            continue
        a = ev.get("args") or {}
        corr = a.get("correlation") if isinstance(a.get("correlation"), int) else 0
        gpu.append((s, e, corr, ev.get("pid"), cat))
        name = str(ev.get("name", ""))
        if cat in KERNEL:
            k = 1 if any(x in name.lower() for x in COMM_NAMES) else 0
        else:
            k = 2 if cat in ("gpu_memcpy", "Memcpy") else 3
        tid = ev.get("tid")
        stream = tname.get((ev.get("pid"), tid)) or \
            (tid if isinstance(tid, str) else "stream %s" % tid)
        ops.append((s, e, ev.get("pid"), stream, k, name,
                    calls.get(corr) if corr else None))
    steps = steps_of(events, gpu)
    if steps is None:
        raise InputError("no ProfilerStep ranges: the checker covers traces with steps")
    host = sorted(((to_ns(ev["ts"]), to_ns(ev["ts"]) + to_ns(ev.get("dur", 0)))
                   for ev in events if ev.get("ph") == "X" and
                   str(ev.get("name", "")).startswith("ProfilerStep#")))
    DL = union(dl)
    waits = []
    for k, (_, s, e) in enumerate(steps):
        hs, he = host[k]
        fp = s
        for a, b in DL:  # the last Dataloader range starting in the host step
            if hs <= a < he:
                fp = min(b, he)
        fp = max(fp, s)
        if fp > s:
            waits.append((s, fp))
    data = union(DL + waits)
    ws, we = steps[0][1], steps[-1][2]
    out = {"gputime": {}, "launch": {}, "queue": {}}
    for dev in sorted(set(o[2] for o in ops), key=str):
        mine = [o for o in ops if o[2] == dev]
        cls = [union([(s, e) for s, e, _, _, k, _, _ in mine if k == j]) for j in range(4)]
        u1 = union(cls[0] + cls[1])
        u2 = union(u1 + cls[2])
        work = union(u2 + cls[3])
        sync = union(sync_calls + dev_sync.get(dev, []))
        queued = union([(c[1], s) for s, _, _, _, _, _, c in mine if c and c[1] < s])

        def span(name, s, e):
            p = dict.fromkeys(PARTS, 0)
            g = dict.fromkeys(PARTS[4:], 0)
            p["compute"] = covered(cls[0], s, e)
            p["communication"] = covered(u1, s, e) - covered(cls[0], s, e)
            p["memcpy"] = covered(u2, s, e) - covered(u1, s, e)
            p["memset"] = covered(work, s, e) - covered(u2, s, e)
            for a, b in gaps_of(work, s, e):
                cuts = sorted(set([a, b] + [x for iv in (data, sync, queued) for s2, e2 in iv
                                            for x in (s2, e2) if a < x < b]))
                gave = set()
                for x, y in zip(cuts, cuts[1:]):
                    if holds(data, x):
                        c = "idle_data"
                    elif holds(sync, x):
                        c = "idle_sync"
                    elif holds(queued, x):
                        c = "idle_other"
                    else:
                        c = "idle_host"
                    p[c] += y - x
                    gave.add(c)
                for c in gave:
                    g[c] += 1
            if sum(p.values()) != e - s:
                raise AssertionError("parts %r do not sum to %d" % (p, e - s))
            return {"step": name, "start_ns": s - ws, "duration_ns": e - s, "parts": p,
                    "gaps": g}
        rows = [span(n, s, e) for n, s, e in steps]
        rows.append(span("Window", ws, we))
        out["gputime"]["GPU%s" % dev] = rows
        # queue, per stream
        b = bucket_ns(we - ws)
        for stream in sorted(set(o[3] for o in mine), key=str):
            q = [(c[0], s) for s, _, _, t, _, _, c in mine if t == stream and c]
            n_ops = len(q)
            q = [(a, s) for a, s in q if a < s]
            starts = sorted(a for a, _ in q)
            ends = sorted(s for _, s in q)
            edges = sorted(set([ws, we] + starts + ends))
            # queued at x: calls begun by x minus ops started by x, per elementary interval
            count = [bisect.bisect_right(starts, x) - bisect.bisect_right(ends, x)
                     for x in edges]

            def qspan(s, e):
                mx, integral, full = 0, 0, 0
                i = max(0, bisect.bisect_right(edges, s) - 1)
                while i + 1 < len(edges) and edges[i] < e:
                    x, y = max(edges[i], s), min(edges[i + 1], e)
                    n = count[i]
                    i += 1
                    if y <= x:
                        continue
                    mx = max(mx, n)
                    integral += n * (y - x)
                    full += (y - x) if n >= FULL else 0
                return {"duration_ns": e - s, "start_ns": s - ws, "max": mx,
                        "queued_ns": integral, "full_ns": full}
            buckets, t = [], ws
            while b and t < we:
                buckets.append(qspan(t, min(t + b, we)))
                t += b
            out["queue"][("GPU%s" % dev, stream)] = {"ops": n_ops, "window": qspan(ws, we),
                                                      "buckets": buckets}
    for s, e, _, _, _, name, c in ops:
        if not c:
            continue
        r = out["launch"].setdefault(name, dict.fromkeys(
            ("count", "launch_total_ns", "launch_max_ns", "delay_total_ns", "delay_max_ns",
             "op_total_ns", "short", "shorter_than_launch", "launch_outliers",
             "delay_outliers"), 0))
        cpu, delay, dur = c[1] - c[0], max(0, s - c[1]), e - s
        r["count"] += 1
        r["launch_total_ns"] += cpu
        r["launch_max_ns"] = max(r["launch_max_ns"], cpu)
        r["delay_total_ns"] += delay
        r["delay_max_ns"] = max(r["delay_max_ns"], delay)
        r["op_total_ns"] += dur
        r["short"] += dur < SHORT
        r["shorter_than_launch"] += cpu <= RT_CUT and dur < cpu
        r["launch_outliers"] += cpu > RT_CUT
        r["delay_outliers"] += delay > DELAY_CUT
    return out

def run_report(opscope, path):
    import json
    p = subprocess.run([opscope, "report", "--format", "json", "--views",
                        "gputime,launch,queue", path], capture_output=True)
    if p.returncode != 0:
        raise InputError("%s report failed: %s" % (opscope, p.stderr.decode(errors="replace")))
    return json.loads(p.stdout)

def tables(report, title):
    return [t for t in report["tables"] if t["title"] == title]

def compare(path, report, diffs):
    want = analyze(load(path))

    def diff(label, got, exp):
        if got != exp:
            diffs.append("%s: %s: report %r, checker %r" % (path, label, got, exp))
    # breakdown
    bd = tables(report, "GPU Time Breakdown")
    got_rows = bd[0]["rows"] if bd else []
    n = 0
    for dev, rows in want["gputime"].items():
        mine = [r for r in got_rows if r["device"] == dev]
        diff("%s rows" % dev, len(mine), len(rows))
        for g, w in zip(mine, rows):
            label = "%s %s" % (dev, w["step"])
            diff(label + " step", g["step"], w["step"])
            diff(label + " duration", g["duration_ns"], w["duration_ns"])
            diff(label + " start", g["start_ns"], w["start_ns"])
            for p in PARTS:
                diff(label + " " + p, g[p + "_ns"], w["parts"][p])
            for p in PARTS[4:]:
                diff(label + " " + p + " gaps", g[p + "_gaps"], w["gaps"][p])
            n += 1
    # launch
    ln = tables(report, "Kernel Launch Statistics")
    got = {r["name"]: r for r in (ln[0]["rows"] if ln else []) if r["name"] != "All"}
    diff("launch names", sorted(got), sorted(want["launch"]))
    for name, w in want["launch"].items():
        for k, v in w.items():
            diff("launch %s %s" % (name[:40], k), got.get(name, {}).get(k), v)
    # queue
    qt = tables(report, "Queue Length")
    qs = tables(report, "Queue Length over time")
    got_q = qt[0]["rows"] if qt else []
    got_s = qs[0]["rows"] if qs else []
    diff("queue streams", len(got_q), len(want["queue"]))
    for (dev, stream), w in want["queue"].items():
        g = [r for r in got_q if r["device"] == dev and r["stream"] == stream]
        if len(g) != 1:
            diffs.append("%s: queue %s stream %s: %d rows" % (path, dev, stream, len(g)))
            continue
        label = "queue %s/%s" % (dev, stream)
        diff(label + " ops", g[0]["ops"], w["ops"])
        for k in ("duration_ns", "max", "full_ns", "queued_ns"):
            diff(label + " " + k, g[0][k], w["window"][k])
        series = [r for r in got_s if r["device"] == dev and r["stream"] == stream]
        diff(label + " buckets", len(series), len(w["buckets"]))
        for i, (gb, wb) in enumerate(zip(series, w["buckets"])):
            for k in ("start_ns", "duration_ns", "max", "full_ns", "queued_ns"):
                diff("%s bucket %d %s" % (label, i, k), gb[k], wb[k])
    return n, len(want["launch"]), len(want["queue"])

def self_test():
    """The checker's own rules on a trace made up here, every number by hand."""
    ev = [
        {"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "ts": 0, "dur": 140},
        {"ph": "X", "name": "enumerate(DataLoader)#x", "cat": "cpu_op", "ts": 0, "dur": 10},
        {"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "ts": 11, "dur": 2,
         "args": {"correlation": 1}},
        {"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "ts": 14, "dur": 2,
         "args": {"correlation": 2}},
        {"ph": "X", "name": "cudaStreamSynchronize", "cat": "cuda_runtime", "ts": 50,
         "dur": 10},
        {"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "ts": 70, "dur": 60,
         "args": {"correlation": 3}},
        # K1 [20,30) launched at 11-13; ncclKernel [25,40) at 14-16; K3 [200,210) at 70-130
        {"ph": "X", "name": "K1", "cat": "kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 10,
         "args": {"correlation": 1}},
        {"ph": "X", "name": "ncclKernel_x", "cat": "kernel", "pid": 0, "tid": 7, "ts": 25,
         "dur": 15, "args": {"correlation": 2}},
        {"ph": "X", "name": "K3", "cat": "kernel", "pid": 0, "tid": 7, "ts": 200, "dur": 10,
         "args": {"correlation": 3}},
    ]
    # step: host [0, 140) holds the three calls, stretched to K3's end: [0, 210); data wait
    # [0, 10)
    # compute [20,30) + [200,210) = 20 us; comm [30,40) = 10 us
    # gap [0,20): data wait [0,10), nothing queued [10,13), K1 queued from its call's end
    # (13) to its start (20): other; gap [40,200): nothing queued [40,50), the sync [50,60),
    # nothing queued [60,130), K3 queued [130,200): other
    w = analyze({"traceEvents": ev})
    r = w["gputime"]["GPU0"][0]
    p = r["parts"]
    ok = (r["duration_ns"] == 210000 and p["compute"] == 20000 and
          p["communication"] == 10000 and p["idle_data"] == 10000 and
          p["idle_sync"] == 10000 and p["idle_host"] == 3000 + 10000 + 70000 and
          p["idle_other"] == 7000 + 70000 and r["gaps"]["idle_host"] == 2)
    # launch: K3 call 60 us (outlier), delay 200 - 130 = 70 us
    k3 = w["launch"]["K3"]
    ok = ok and k3["launch_outliers"] == 1 and k3["delay_total_ns"] == 70000
    # queue: K1 [11,20), nccl [14,25), K3 [70,200): max 2, integral 9+11+130 = 150 us
    q = w["queue"][("GPU0", "stream 7")]["window"]
    ok = ok and q["max"] == 2 and q["queued_ns"] == 150000
    # without the sync call, [40,130) is host-bound too
    w = analyze({"traceEvents": [e for e in ev if e["name"] != "cudaStreamSynchronize"]})
    ok = ok and w["gputime"]["GPU0"][0]["parts"]["idle_host"] == 3000 + 90000
    # K3 launched by 35 (call [30,35)): [40,200) had work queued: other, with [13,20)
    ev2 = [dict(e) for e in ev if e["name"] != "cudaStreamSynchronize"]
    for e in ev2:
        if e.get("args", {}).get("correlation") == 3 and e["cat"] == "cuda_runtime":
            e["ts"], e["dur"] = 30, 5
    w = analyze({"traceEvents": ev2})
    ok = ok and w["gputime"]["GPU0"][0]["parts"]["idle_other"] == 7000 + 160000
    print("self-test", "ok" if ok else "FAILED")
    return 0 if ok else 1

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--opscope", default=os.environ.get("OPSCOPE"))
    ap.add_argument("--print", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("traces", nargs="*")
    a = ap.parse_args(argv)
    if a.self_test:
        return self_test()
    if not a.traces:
        ap.error("no trace")
    try:
        if a.print:
            for t in a.traces:
                print(t, analyze(load(t)))
            return 0
        if not a.opscope:
            ap.error("no --opscope and no $OPSCOPE")
        diffs = []
        for t in a.traces:
            n = compare(t, run_report(a.opscope, t), diffs)
            print("%s: %d spans, %d names, %d streams" % (t, n[0], n[1], n[2]))
    except InputError as e:
        print("gputime_check: %s" % e, file=sys.stderr)
        return 2
    for d in diffs[:40]:
        print(d)
    if diffs:
        print("%d differences" % len(diffs))
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
