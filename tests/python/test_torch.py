"""PyTorch training recorded with no code change: `opscope record -- python3
examples/pytorch_train.py` (a small CNN on scikit-learn's digits) must give the four phases,
every operator with its input shapes and dtypes, one ProfileStep per batch with its batch size,
and a file per DataLoader worker process that `opscope report DIR` merges."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sklearn")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "pytorch_train.py")


def record(run_record, out, *args):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the program must not need our package on its path
    r = run_record(["-o", str(out), "--", sys.executable, EXAMPLE, *args], capture_output=True,
                   text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r


def report(cli, path, views):
    r = subprocess.run([cli, "report", "--format", "json", "--views", views, str(path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return {t["view"]: t for t in json.loads(r.stdout)["tables"]}


@pytest.mark.record
def test_phases_ops_shapes_steps(tmp_path, cli, run_record):
    out = tmp_path / "digits.opscope"
    record(run_record, out, "--epochs", "1", "--batch", "64")
    t = report(cli, out, "model,operator,perf")
    model = {r["name"]: r for r in t["model"]["rows"]}
    for phase in ("ProfileStep", "Dataloader", "Forward", "Backward", "Optimization"):
        assert phase in model and model[phase]["calls"] > 0, (phase, model.keys())
    # 1797 digits in batches of 64: 29 batches, one step each
    assert model["ProfileStep"]["calls"] == 29
    assert model["Backward"]["calls"] == 29
    assert model["Optimization"]["calls"] == 2 * 29  # zero_grad and step
    ops = {r["name"]: r for r in t["operator"]["rows"] if r.get("level", 0) == 0}
    for op in ("aten::conv2d", "aten::linear", "aten::max_pool2d", "aten::relu",
               "aten::cross_entropy_loss", "ConvolutionBackward0"):
        assert op in ops, (op, sorted(ops)[:20])
    assert ops["aten::conv2d"]["calls"] == 2 * 29
    perf = {r["name"]: r for r in t["perf"]["rows"]}
    assert perf["ips"]["avg"] > 0
    # shapes and dtypes of a known layer: conv1 on a full batch of 64 8x8 images
    d = subprocess.run([cli, "dump", "--category", "Operator", "--name", "aten::conv2d", str(out)],
                       capture_output=True, text=True, timeout=120).stdout
    assert ('Input Dims="[[64, 1, 8, 8], [16, 1, 3, 3], [16], [], [], [], []]" '
            'Input type="["float", "float", "float", "", "", "", "Scalar"]"') in d
    assert 'Input Dims="[[64, 16, 8, 8], [32, 16, 3, 3], [32], [], [], [], []]"' in d
    # the last batch holds 1797 - 28 * 64 = 5 samples
    assert 'Input Dims="[[5, 1, 8, 8], [16, 1, 3, 3], [16]' in d
    # module hierarchy: the outermost module call of each step is its Forward, the modules
    # inside it nest one level deeper, named after their class
    fwd = subprocess.run([cli, "dump", "--category", "Forward", str(out)],
                         capture_output=True, text=True, timeout=120).stdout
    assert fwd.count(" forward: DigitsNet ") == 29
    assert fwd.count(" forward: CrossEntropyLoss ") == 29
    mods = subprocess.run([cli, "dump", "--category", "UserDefined", str(out)],
                          capture_output=True, text=True, timeout=120).stdout.splitlines()
    names = [l.split(" UserDefined ")[1].split(" dur=")[0] for l in mods if " UserDefined " in l]
    assert names.count("nn.Module: Conv2d") == 2 * 29
    assert names.count("nn.Module: MaxPool2d") == 29 and names.count("nn.Module: Linear") == 29
    assert all(l.split("depth=")[1].split()[0] == "2" for l in mods if " UserDefined " in l)


@pytest.mark.record
def test_flops_of_a_cpu_recording(tmp_path, cli, run_record):
    """Issue 19 on a recording of our own: the observer writes a convolution's stride, padding,
    dilation and groups as "Concrete Inputs", so the flops view models conv1 from them (3x3,
    padding 1: the output is the input's 8x8), and on a trace without device work its time is
    CPU time and no device peak applies."""
    out = tmp_path / "digits.opscope"
    record(run_record, out, "--epochs", "1", "--batch", "64")
    d = subprocess.run([cli, "dump", "--category", "Operator", "--name", "aten::conv2d", str(out)],
                       capture_output=True, text=True, timeout=120).stdout
    assert 'Concrete Inputs="["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]"' in d
    r = subprocess.run([cli, "report", "--format", "json", "--views", "flops", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    tables = {t["title"]: t for t in json.loads(r.stdout)["tables"]}
    rows = tables["FLOPs per Operator"]["rows"]
    conv1 = [x for x in rows if x["name"] == "aten::conv2d" and x["direction"] == "fwd"
             and x["input_shapes"] == "[[64, 1, 8, 8], [16, 1, 3, 3], [16], [], [], [], []]"]
    assert len(conv1) == 1, [x["input_shapes"] for x in rows if x["name"] == "aten::conv2d"]
    # out [64, 16, 8, 8] = 65536 elements; 2 * (1*3*3) * 65536 + 65536 (bias) per call
    assert conv1[0]["calls"] == 28
    assert conv1[0]["flops"] == 28 * (2 * 9 * 65536 + 65536)
    assert conv1[0]["category"] == "convolution" and conv1[0]["time_ns"] > 0
    assert conv1[0]["peak_flops_ratio"] is None and conv1[0]["tflops_per_s"] > 0
    # the backward convolutions are modelled too, each naming its forward operator
    bwd = [x for x in rows if x["name"] == "aten::convolution_backward"]
    assert bwd and all(x["direction"] == "bwd" for x in bwd)
    assert {x["forward_op"] for x in bwd} == {"aten::conv2d"}
    cats = {x["category"]: x for x in tables["FLOPs by Category"]["rows"]}
    assert cats["convolution"]["calls"] >= 2 * 29 and "GEMM" in cats


@pytest.mark.record
def test_module_and_input_shape_tables(tmp_path, cli, run_record):
    """The module hierarchy has its table (module paths, calls, self time), module calls are
    not user-defined ranges, and the operators group by input shapes on request (issue 16,
    points 12 and 13)."""
    out = tmp_path / "digits.opscope"
    record(run_record, out, "--epochs", "1", "--batch", "64")
    t = report(cli, out, "module,userdefined")
    rows = t["module"]["rows"]
    top = {r["name"]: r for r in rows if r.get("level", 0) == 0}
    assert top["DigitsNet"]["calls"] == 29 and top["CrossEntropyLoss"]["calls"] == 29
    # DigitsNet's children follow it, one level deeper: its two Conv2d calls a step are one row
    i = rows.index(top["DigitsNet"])
    kids = {}
    for r in rows[i + 1:]:
        if r.get("level", 0) == 0:
            break
        kids[r["name"]] = r
    assert kids["Conv2d"]["calls"] == 2 * 29 and kids["Conv2d"]["level"] == 1
    assert kids["Linear"]["calls"] == 29
    net = top["DigitsNet"]
    assert 0 <= net["self_cpu_ns"] <= net["cpu_total_ns"]
    assert net["self_cpu_ns"] == net["cpu_total_ns"] - sum(
        r["cpu_total_ns"] for r in kids.values() if r["level"] == 1)
    ud = t.get("userdefined", {"rows": []})["rows"]
    assert not any("nn.Module" in r["name"] for r in ud)
    r = subprocess.run([cli, "report", "--format", "json", "--views", "operator",
                        "--group-by", "input-shape", "--no-op-detail", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ops = [x for x in json.loads(r.stdout)["tables"] if x["view"] == "operator"][0]["rows"]
    conv = {x["input_shapes"]: x["calls"] for x in ops if x["name"] == "aten::conv2d"}
    # conv1 on 28 full batches of 64 and a last one of 5; conv2 likewise
    assert conv["[[64, 1, 8, 8], [16, 1, 3, 3], [16], [], [], [], []]"] == 28
    assert conv["[[5, 1, 8, 8], [16, 1, 3, 3], [16], [], [], [], []]"] == 1
    assert conv["[[64, 16, 8, 8], [32, 16, 3, 3], [32], [], [], [], []]"] == 28
    assert sum(conv.values()) == 2 * 29


@pytest.mark.record
def test_forward_backward_link(tmp_path, cli, run_record):
    """Backward functions carry the sequence number of the forward op that created them."""
    out = tmp_path / "d.opscope"
    record(run_record, out, "--epochs", "1")
    d = subprocess.run([cli, "dump", "--category", "Operator", str(out)],
                       capture_output=True, text=True, timeout=120).stdout
    fwd = {l.split("Sequence number=")[1].split()[0].rstrip("}") for l in d.splitlines()
           if " aten::conv2d " in l and "Sequence number=" in l}
    bwd = {l.split("Sequence number=")[1].split()[0].rstrip("}") for l in d.splitlines()
           if " ConvolutionBackward0 " in l and "Sequence number=" in l}
    assert fwd and bwd and bwd <= fwd


@pytest.mark.record
def test_dataloader_workers(tmp_path, cli, run_record):
    """Worker processes write their own files; the report of the directory merges them."""
    outdir = tmp_path / "run"
    outdir.mkdir()
    record(run_record, str(outdir) + "/", "--epochs", "1", "--workers", "2")
    files = sorted(p.name for p in outdir.iterdir())
    assert len(files) == 3, files  # the trainer and its two workers
    t = report(cli, outdir, "operator")
    ops = {r["name"]: r for r in t["operator"]["rows"] if r.get("level", 0) == 0}
    # the workers collate batches: aten::stack runs there
    assert "aten::stack" in ops and ops["aten::stack"]["calls"] >= 29 * 2


def test_module_ranges_end_when_a_module_raises(tmp_path):
    """A module whose forward raises still ends its range (the C wrapper of Module.__call__
    ends it in the frame that began it): the ranges of the modules around it keep their
    nesting, and the thread's module depth comes back to 0."""
    from opscope import _opscope, torch_hooks

    class Boom(torch.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.boom, self.lin = Boom(), torch.nn.Linear(4, 4)

        def forward(self, x):
            try:
                self.boom(x)
            except ValueError:
                pass
            return self.lin(x)

    out = tmp_path / "m.opscope"
    _opscope.session_start(output=str(out))
    try:
        torch_hooks.install(shapes=False, phases=True)
        model = Outer()
        for _ in range(3):
            model(torch.ones(2, 4))
            assert _opscope.module_depth() == 0
        with pytest.raises(ValueError):
            Boom()(torch.ones(1))
        assert _opscope.module_depth() == 0
    finally:
        _opscope.session_stop()
        torch_hooks.uninstall()
    assert not isinstance(torch.nn.Module.__dict__["__call__"], _opscope.ModuleCall)
    rows = _opscope.read_ranges(str(out))
    outer = [r for r in rows if r[0] == "forward: Outer"]
    boom = [r for r in rows if r[0] == "nn.Module: Boom"]
    lin = [r for r in rows if r[0] == "nn.Module: Linear"]
    assert len(outer) == 3 and len(boom) == 3 and len(lin) == 3
    assert len([r for r in rows if r[0] == "forward: Boom"]) == 1  # the bare call, outermost
    for o, b, l in zip(outer, boom, lin):  # (name, cat, tid, start, dur, depth)
        assert o[3] <= b[3] and b[3] + b[4] <= l[3] and l[3] + l[4] <= o[3] + o[4]
        assert b[5] == l[5] == o[5] + 1


def _small_model_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 6 * 6, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 1, 8, 8), torch.randint(0, 10, (8,))

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def test_operator_caches_hold_a_training_steps_names_and_shapes(tmp_path):
    """After its first step, a training loop (the example's model, with backward and the
    optimizer) interns no operator name and formats no input list again: every name and
    shape of a step stays in the observer's per-thread caches. The direct-mapped caches before
    them lost about 19 names and shapes of this loop to collisions in every step."""
    import importlib.util

    from sklearn.datasets import load_digits

    from opscope import _opscope, torch_hooks

    spec = importlib.util.spec_from_file_location("pytorch_train", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    torch.manual_seed(0)
    d = load_digits()
    x = torch.tensor(d.images[:64], dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(d.target[:64], dtype=torch.long)
    model = example.DigitsNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    _opscope.session_start(output=str(tmp_path / "t.opscope"))
    try:
        assert torch_hooks.install(shapes=True, phases=True)
        step()
        step()  # momentum buffers exist from the second step on
        misses, ops = torch_hooks.cache_misses(), torch_hooks.ops_seen()
        for _ in range(5):
            step()
        assert torch_hooks.ops_seen() - ops > 5 * 100
        assert torch_hooks.cache_misses() == misses
    finally:
        torch_hooks.uninstall()
        _opscope.session_stop()


def test_profiler_records_torch_in_its_windows_only(tmp_path, cli):
    """opscope.Profiler in a torch program, without `opscope record`: its windows hold the
    operators (with shapes: record_shapes=True) and the Forward and Backward phases; in the
    other steps torch runs without our operator callback (not one call of it is spent there),
    and stop() takes the capture out again."""
    import opscope
    from opscope import torch_hooks

    assert not torch_hooks.installed()
    orig_call = torch.nn.Module.__call__
    step = _small_model_step()
    windows = tmp_path / "w"
    prof = opscope.Profiler(scheduler=opscope.make_scheduler(closed=2, ready=1, record=2,
                                                             repeat=2),
                            record_shapes=True, on_trace_ready=opscope.export_opscope(str(windows)))
    per_step = []
    prof.start()
    for _ in range(11):
        state = prof.current_state
        ops0, idle0 = torch_hooks.ops_seen(), torch_hooks.idle_calls()
        step()
        per_step.append((state, torch_hooks.ops_seen() - ops0, torch_hooks.idle_calls() - idle0))
        prof.step()
    prof.stop()
    recorded = [ops for state, ops, _ in per_step if state >= opscope.ProfilerState.RECORD]
    assert len(recorded) == 4 and min(recorded) > 10 and len(set(recorded)) == 1, per_step
    assert all(ops == 0 for state, ops, _ in per_step if state < opscope.ProfilerState.RECORD)
    assert all(idle == 0 for _, _, idle in per_step), per_step
    assert not torch_hooks.installed() and torch.nn.Module.__call__ is orig_call

    files = sorted(windows.iterdir())
    assert len(files) == 2, files
    for f in files:
        t = report(cli, f, "model")
        model = {r["name"]: r for r in t["model"]["rows"]}
        assert model["ProfileStep"]["calls"] == 2
        assert model["Forward"]["calls"] == 2 and model["Backward"]["calls"] == 2
        d = subprocess.run([cli, "dump", "--name", "aten::conv2d", str(f)],
                           capture_output=True, text=True, timeout=120).stdout
        assert d.count('Input Dims="[[8, 1, 8, 8], [4, 1, 3, 3], [4]') == 2, d

    # the counter the assertions above rely on: with the capture installed by hand and
    # nothing recording, every operator runs the callback in vain
    torch_hooks.install(shapes=True, phases=False)
    try:
        idle0 = torch_hooks.idle_calls()
        step()
        assert torch_hooks.idle_calls() - idle0 == recorded[0]
    finally:
        torch_hooks.uninstall()


def test_profiler_steps_with_dataloader_hooks(tmp_path, cli):
    """The capture installed with its DataLoader steps (as `opscope record` does) and an
    opscope.Profiler in the loop: the profiler's step() makes the steps, not the DataLoader
    as well (which made 11 steps of these 5 batches: two per batch, and the last one)."""
    import opscope
    from opscope import torch_hooks
    from torch.utils.data import DataLoader, TensorDataset

    step = _small_model_step()
    loader = DataLoader(TensorDataset(torch.randn(40, 1, 8, 8)), batch_size=8)
    out = tmp_path / "p.opscope"
    torch_hooks.install(shapes=False, phases=True)
    try:
        prof = opscope.Profiler(output=str(out))
        prof.start()
        for (batch,) in loader:
            step()
            prof.step(num_samples=len(batch))
        prof.stop()
    finally:
        torch_hooks.uninstall()
    t = report(cli, prof.last_trace, "model")
    # a step per batch, and the one from the last step() to stop()
    assert {r["name"]: r for r in t["model"]["rows"]}["ProfileStep"]["calls"] == 6
