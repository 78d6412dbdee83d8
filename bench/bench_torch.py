"""bench_torch.py: the cost of recording a PyTorch training step (the example's CNN on
scikit-learn's digits, batch 64, CPU, one intra-op thread), side by side in one run:

  none          no profiler
  opscope       opscope's capture (operator observer with shapes and dtypes, the nn.Module,
                backward and DataLoader hooks) recording into a session
  opscope-nosh  the same without shapes and dtypes (torch_hooks.install(shapes=False)):
                the like of torchprof below
  torchprof     torch.profiler.profile(activities=[CPU])
  torchprof+sh  the same with record_shapes=True

Three measurements, all reported:

- continuous (the figures for bench/results.json): each mode in a fresh process records 7
  rounds of 60 steps after 20 warm-up steps; a process's step time is the median round; the
  modes' processes are interleaved, 5 each, and a mode's step time is the median of its
  processes. This is how a profiler is used on a training run: it records on and on, and what
  it keeps (opscope: a fixed buffer streamed to disk; torch: its growing event lists) costs
  page faults as it goes.
- windows: the modes take turns in one process, each round running every mode once in a
  shuffled order for 60 steps, the profiler set up before and torn down after; a mode's ratio
  is the median over 15 rounds of its step time over the unprofiled step of the same round.
  Short windows, like a schedule's active steps; memory freed by one window is reused by the
  next.
- scheduled: what a user of a schedule pays over a run: the modes take turns in one process,
  each driving its own profiler API (opscope.Profiler with make_scheduler(closed=8, ready=1,
  record=1); torch.profiler.profile with schedule(wait=8, warmup=1, active=1) and a no-op
  on_trace_ready) for 50 steps, window ends included; a mode's ratio is the median over 20
  rounds of its step time over the unprofiled one of the same round. opscope-nosh is
  Profiler(record_shapes=False) here: the Profiler installs the capture itself, without the
  DataLoader steps.

Both also report a median-step ratio: every step timed on its own, the median step over the
unprofiled one: the steady cost of a step, without the first steps after a set-up, a step
preempted on this VM, or the occasional step where a profiler grows its storage (the ratios
above, from whole rounds, include all of these and are the figures).
glibc's heap trimming adds noise of its own: depending on the heap's layout a process takes 0
or ~600 page faults per step (the activations cross malloc's mmap threshold) with or without
a profiler, so every process runs with the thresholds pinned (MALLOC_TRIM_THRESHOLD_ and
MALLOC_MMAP_THRESHOLD_ at 1 GiB), and the minor page faults per step of each mode are reported.
Post-processing = time from the end of the loop to a usable result (opscope: session stop, the
file complete; torch: leaving the profiler context plus key_averages()), per event.

  PYTHONPATH=build/python/python /usr/bin/python3 bench/bench_torch.py [--json out.json]
  ... bench/bench_torch.py --windows N     the windows measurement alone, N rounds
  ... bench/bench_torch.py --scheduled N   the scheduled measurement alone, N rounds
"""
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ("none", "opscope", "opscope-nosh", "torchprof", "torchprof+sh")
MALLOC_PINNED = {"MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_MMAP_THRESHOLD_": str(1 << 30)}
STEPS = 60


def training_step():
    """The benchmark's step: the example's model on one batch of 64 digits, one thread."""
    import torch
    from sklearn.datasets import load_digits

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    from pytorch_train import DigitsNet

    torch.set_num_threads(1)
    torch.manual_seed(0)
    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1)[:64] / 16.0
    y = torch.tensor(d.target, dtype=torch.long)[:64]
    model = DigitsNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def one_round(step, mode, outdir, rounds=1):
    """`rounds` rounds of STEPS steps under `mode`, the profiler set up before and torn down
    after: (median over the rounds of a round's seconds per step, post-processing seconds,
    events, minor page faults per step, the median single step's seconds)."""
    import opscope
    from opscope import torch_hooks

    ctx = None
    if mode.startswith("opscope"):
        opscope._opscope.session_start(output=os.path.join(outdir, "b.opscope"))
        torch_hooks.install(shapes=mode == "opscope", phases=True)
        ops0 = torch_hooks.ops_seen()
    elif mode.startswith("torchprof"):
        import torch.profiler as tp

        ctx = tp.profile(activities=[tp.ProfilerActivity.CPU], record_shapes=mode.endswith("sh"))
        ctx.__enter__()
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    times, steps = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(STEPS):
            s0 = time.perf_counter()
            step()
            steps.append(time.perf_counter() - s0)
        t1 = time.perf_counter()
        times.append((t1 - t0) / STEPS)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / (STEPS * rounds)
    events, post = 0, 0.0
    if mode.startswith("opscope"):
        events = torch_hooks.ops_seen() - ops0
        opscope._opscope.session_stop()
        post = time.perf_counter() - t1
        torch_hooks.uninstall()
    elif ctx is not None:
        ctx.__exit__(None, None, None)
        ctx.key_averages()
        post = time.perf_counter() - t1
        events = len(ctx.events())
    return statistics.median(times), post, events, faults, statistics.median(steps)


def worker(mode):
    step = training_step()
    for _ in range(20):
        step()
    r = one_round(step, mode, tempfile.mkdtemp(), rounds=7)
    print(json.dumps({"step_s": r[0], "post_s": r[1], "events": r[2], "faults": r[3],
                      "median_step_s": r[4]}))


def continuous(processes):
    runs = {m: [] for m in MODES}
    for _ in range(processes):
        for mode in MODES:
            r = subprocess.run([sys.executable, __file__, "--worker", mode],
                               capture_output=True, text=True, check=True)
            runs[mode].append(json.loads(r.stdout.strip().splitlines()[-1]))
    res = {}
    base = statistics.median(r["step_s"] for r in runs["none"])
    for mode in MODES:
        step_s = statistics.median(r["step_s"] for r in runs[mode])
        res[mode] = {
            "step_s": step_s,
            "ratio": step_s / base,
            "spread": [round(min(r["step_s"] for r in runs[mode]) / base, 3),
                       round(max(r["step_s"] for r in runs[mode]) / base, 3)],
            "post_us_per_event": statistics.median(
                r["post_s"] * 1e6 / r["events"] for r in runs[mode]) if runs[mode][0]["events"] else 0.0,
            "events": runs[mode][0]["events"],
            "faults_per_step": statistics.median(r["faults"] for r in runs[mode]),
            "median_step_ratio": statistics.median(r["median_step_s"] for r in runs[mode]) /
            statistics.median(r["median_step_s"] for r in runs["none"]),
        }
    return res


def take_turns(run_one, rounds, seed):
    """The modes take turns in one process, in a shuffled order each round: run_one(step,
    mode, outdir) for every mode, `rounds` times. Returns {mode: [results]}."""
    step = training_step()
    for _ in range(20):
        step()
    outdir = tempfile.mkdtemp()
    rng = random.Random(seed)
    runs = {m: [] for m in MODES}
    for _ in range(rounds):
        order = list(MODES)
        rng.shuffle(order)
        for mode in order:
            runs[mode].append(run_one(step, mode, outdir))
    return runs


def windows(rounds):
    runs = take_turns(one_round, rounds, 0)
    res = {}
    for mode in MODES:
        ratios = [r[0] / n[0] for r, n in zip(runs[mode], runs["none"])]
        res[mode] = {
            "step_s": statistics.median(r[0] for r in runs[mode]),
            "ratio": statistics.median(ratios),
            "spread": [round(q, 3) for q in statistics.quantiles(ratios, n=4)[::2]],
            "post_us_per_event": statistics.median(
                r[1] * 1e6 / r[2] for r in runs[mode]) if runs[mode][0][2] else 0.0,
            "events": runs[mode][0][2],
            "faults_per_step": statistics.median(r[3] for r in runs[mode]),
            "median_step_ratio": statistics.median(
                r[4] / n[4] for r, n in zip(runs[mode], runs["none"])),
        }
    return res


SCHED = (8, 1, 1)  # closed (wait), ready (warmup), record (active): one step in ten recorded
SCHED_STEPS = 50


def one_scheduled(step, mode, outdir):
    """SCHED_STEPS steps under `mode`'s own profiler API with the schedule SCHED, as a user
    would write it: seconds per step, window ends (export, post-processing) included."""
    import opscope

    closed, ready, record = SCHED
    prof = None
    if mode.startswith("opscope"):
        prof = opscope.Profiler(
            scheduler=opscope.make_scheduler(closed=closed, ready=ready, record=record),
            record_shapes=mode == "opscope", on_trace_ready=opscope.export_opscope(outdir))
    elif mode.startswith("torchprof"):
        import torch.profiler as tp

        prof = tp.profile(activities=[tp.ProfilerActivity.CPU],
                          schedule=tp.schedule(wait=closed, warmup=ready, active=record),
                          record_shapes=mode.endswith("sh"), on_trace_ready=lambda p: None)
    t0 = time.perf_counter()
    if prof is not None:
        prof.start()
    for _ in range(SCHED_STEPS):
        step()
        if prof is not None:
            prof.step()
    if prof is not None:
        # our stop() prints the Perf Summary: not into the benchmark's table
        sys.stdout.flush()
        saved = os.dup(1)
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                prof.stop()
            finally:
                os.dup2(saved, 1)
                os.close(saved)
    return (time.perf_counter() - t0) / SCHED_STEPS


def scheduled(rounds):
    """The modes take turns in one process, each profiler driven by its own schedule API."""
    runs = take_turns(one_scheduled, rounds, 1)
    res = {}
    for mode in MODES:
        ratios = [r / n for r, n in zip(runs[mode], runs["none"])]
        res[mode] = {"step_s": statistics.median(runs[mode]),
                     "ratio": statistics.median(ratios),
                     "spread": [round(q, 3) for q in statistics.quantiles(ratios, n=4)[::2]]}
    return res


def show_scheduled(res, rounds):
    print("a schedule of %d closed, %d ready, %d recorded steps, %d steps per run, each "
          "profiler's own API (median of %d rounds; [1st, 3rd] quartile):"
          % (SCHED + (SCHED_STEPS, rounds)))
    for mode in MODES:
        r = res[mode]
        print("  %-13s step %.3f ms  ratio %.3f %s" % (mode, r["step_s"] * 1e3, r["ratio"],
                                                       r["spread"]))


def self_times(rows):
    """Self time per name (ns) from read_ranges rows (name, cat, tid, start, dur, depth),
    given per track in (start, depth) order: duration minus the direct children's."""
    self_ns, last = {}, {}
    for name, cat, tid, start, dur, depth in rows:
        key = (tid, depth)
        last[key] = name
        self_ns[name] = self_ns.get(name, 0) + dur
        if depth > 0 and (tid, depth - 1) in last:
            parent = last[(tid, depth - 1)]
            self_ns[parent] = self_ns.get(parent, 0) - dur
    return self_ns


def agreement():
    """One run recorded by both opscope and torch.profiler: per-operator self CPU time."""
    import torch.profiler as tp

    import opscope
    from opscope import torch_hooks

    step = training_step()
    for _ in range(10):
        step()
    out = tempfile.mkdtemp() + "/a.opscope"
    opscope._opscope.session_start(output=out)
    torch_hooks.install(shapes=True, phases=False)
    with tp.profile(activities=[tp.ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        for _ in range(60):
            step()
        wall = time.perf_counter() - t0
    opscope._opscope.session_stop()
    ours = self_times(opscope._opscope.read_ranges(out))
    theirs = {e.key: e.self_cpu_time_total * 1e3 for e in prof.key_averages()}  # µs -> ns
    # above 1 % of the run by both measurements: a thin wrapper operator's "self time" is
    # mostly the recording callbacks' own cost, which each profiler charges differently
    big = [k for k, v in theirs.items()
           if k in ours and min(v, ours[k]) > 0.01 * wall * 1e9]
    diffs = {k: abs(ours[k] - theirs[k]) / theirs[k] for k in big}
    # operators apart from record_function labels (Optimizer.step#...): see RESULTS.md
    ops = {k: v for k, v in diffs.items() if "#" not in k}
    worst = max(ops, key=ops.get)
    if os.environ.get("AGREE_DEBUG"):
        for k in sorted(theirs, key=lambda k: -theirs[k])[:14]:
            print("%-45s ours %10.0f torch %10.0f" % (k, ours.get(k, 0), theirs[k]),
                  file=sys.stderr)
    labels = {k: round(v, 3) for k, v in diffs.items() if "#" in k}
    print(json.dumps({"ops_compared": len(ops), "max_rel_diff": ops[worst], "worst": worst,
                      "labels": labels}))


def show(title, res):
    print(title)
    for mode in MODES:
        r = res[mode]
        print("  %-13s step %.3f ms  ratio %.3f %s  median-step ratio %.3f  post %.3f us/event  "
              "events %d  page faults/step %.1f" % (
                  mode, r["step_s"] * 1e3, r["ratio"], r["spread"], r["median_step_ratio"],
                  r["post_us_per_event"], r["events"], r["faults_per_step"]))


def main():
    if any(os.environ.get(k) != v for k, v in MALLOC_PINNED.items()):
        # glibc reads these at start: run again with them
        os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **MALLOC_PINNED})
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--agreement":
        agreement()
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--windows":
        # the windows measurement alone, with more rounds: a tighter median
        n = int(sys.argv[2])
        show("windows of 60 steps in one process (median of %d rounds; [1st, 3rd] quartile):"
             % n, windows(n))
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--scheduled":
        n = int(sys.argv[2])
        show_scheduled(scheduled(n), n)
        return
    cont = continuous(5)
    show("continuous recording (median of 5 processes per mode; [min, max] of them):", cont)
    win = windows(15)
    show("windows of 60 steps in one process (median of 15 rounds; [1st, 3rd] quartile):", win)
    sched = scheduled(20)
    show_scheduled(sched, 20)
    keys = {
        "torch_step_ratio_opscope": round(cont["opscope"]["ratio"], 3),
        "torch_step_ratio_opscope_noshapes": round(cont["opscope-nosh"]["ratio"], 3),
        "torch_step_ratio_torchprof": round(cont["torchprof"]["ratio"], 3),
        "torch_step_ratio_torchprof_shapes": round(cont["torchprof+sh"]["ratio"], 3),
        "torch_window_ratio_opscope": round(win["opscope"]["ratio"], 3),
        "torch_window_ratio_opscope_noshapes": round(win["opscope-nosh"]["ratio"], 3),
        "torch_window_ratio_torchprof": round(win["torchprof"]["ratio"], 3),
        "torch_window_ratio_torchprof_shapes": round(win["torchprof+sh"]["ratio"], 3),
        "torch_median_step_ratio": {
            kind: {mode: round(res[mode]["median_step_ratio"], 3) for mode in MODES[1:]}
            for kind, res in (("continuous", cont), ("windows", win))},
        "torch_sched_ratio": {mode: round(sched[mode]["ratio"], 3) for mode in MODES[1:]},
        "torch_post_us_per_event_opscope": round(cont["opscope"]["post_us_per_event"], 3),
        "torch_post_us_per_event_torchprof": round(cont["torchprof+sh"]["post_us_per_event"], 3),
    }
    r = subprocess.run([sys.executable, __file__, "--agreement"], capture_output=True,
                       text=True, check=True)
    agree = json.loads(r.stdout.strip().splitlines()[-1])
    keys["torch_op_self_time_max_rel_diff"] = round(agree["max_rel_diff"], 4)
    keys["torch_op_self_time_ops_compared"] = agree["ops_compared"]
    print("agreement: %d operators above 1%% of the run; largest self-time difference %.1f%% (%s);"
          " record_function labels: %s" % (agree["ops_compared"], 100 * agree["max_rel_diff"],
                                            agree["worst"], agree["labels"]))
    for k, v in keys.items():
        print("%-40s %s" % (k, v))
    if "--json" in sys.argv:
        path = sys.argv[sys.argv.index("--json") + 1]
        data = json.load(open(path)) if os.path.exists(path) else {}
        data.update(keys)
        json.dump(data, open(path, "w"), indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
