#!/usr/bin/python3
"""flops_check.py: an independent oracle for the GEMM and convolution FLOPs of `opscope report`.

It reads a PyTorch/Kineto trace on its own (Python's standard library only, gzip or plain) and,
with formulas written here and nowhere else, counts per (operator name, "Input Dims" text,
direction) the calls and the FLOPs of

  * GEMMs: aten::mm 2MNK; aten::addmm 2MNK + MN; aten::bmm B*2MNK; aten::baddbmm B*(2MNK + MN);
    aten::linear 2MNK (+ MN with a bias; M = product of x's leading dims); aten::matmul by
    torch's broadcasting rules;
  * convolutions forward, 2 * prod(w[1:]) * prod(out) (+ prod(out) with a bias), the output's
    shape from the "Concrete Inputs" (stride, padding, dilation), else from the grad_output of
    the conv backward call inside the backward range with the same "Sequence number" (same
    pid); transposed convolutions 2 * prod(w) * N * prod(input spatial) (+ prod(out));
  * convolutions backward: dgrad and wgrad, 2 * prod(w[1:]) * prod(grad_out) each, as the
    output_mask says (both when the trace has no Concrete Inputs), + prod(grad_out) for a bias
    grad the mask asks for; cudnn_convolution_backward_input / _weight: their one term. A
    cudnn_convolution_backward with such parts as child calls (torch < 1.11) is not counted
    itself: its parts are, since cuDNN runs only the ones asked for (no input gradient for a
    network's first layer).

A call counts iff it has a model and no GEMM/convolution call encloses it on its thread (same
pid and tid; enclosing = starts at or before and ends at or after it; the longer one outside).
Its direction is "bwd" iff a range named *Backward, *Backward<digits> or
"autograd::engine::evaluate_function: ..." encloses it on its thread, else "fwd". Then it runs
`$OPSCOPE report --format json --views flops FILE` and compares its GEMM and convolution rows
with the checker's: the same keys, equal calls and flops. Exits 1 with a diff on any mismatch,
2 on usage or input errors.

  flops_check.py [--opscope PATH] TRACE...   # compare (PATH defaults to $OPSCOPE)
  flops_check.py --print TRACE...            # the checker's own rows and totals, no opscope
  flops_check.py --self-test                 # the checker's tests of itself
"""

import argparse
import contextlib
import decimal
import gzip
import io
import json
import os
import re
import subprocess
import sys
import tempfile

REPORT_TIMEOUT_S = 900
OP_CATS = frozenset(("cpu_op", "Operator"))  # operator calls (2021 Kineto: "Operator")
RANGE_CATS = frozenset(("cpu_op", "Operator", "user_annotation"))  # for backward ranges

GEMM = frozenset(("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::linear",
                  "aten::matmul"))
CONV_FWD = frozenset(("aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution",
                      "aten::_convolution", "aten::cudnn_convolution", "aten::mkldnn_convolution",
                      "aten::conv_transpose1d", "aten::conv_transpose2d",
                      "aten::conv_transpose3d", "aten::cudnn_convolution_transpose"))
CONV_BWD = frozenset(("aten::cudnn_convolution_backward", "aten::convolution_backward"))
CONV_BWD_PART = frozenset(("aten::cudnn_convolution_backward_input",
                           "aten::cudnn_convolution_backward_weight"))
MODELLED = GEMM | CONV_FWD | CONV_BWD | CONV_BWD_PART
BACKWARD_RE = re.compile(r"Backward\d*$")


class InputError(Exception):
    pass


class NoModel(Exception):
    """The call has no model (its arguments do not say enough)."""


# ---------------------------------------------------------------- reading

def load_trace(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError("%s: %s" % (path, e))
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise InputError("%s: bad gzip: %s" % (path, e))
    try:
        doc = json.loads(data, parse_float=decimal.Decimal)
    except ValueError as e:
        raise InputError("%s: not JSON: %s" % (path, e))
    if isinstance(doc, dict):
        doc = doc.get("traceEvents")
    if not isinstance(doc, list):
        raise InputError("%s: no traceEvents array" % path)
    return doc


def to_ns(v):
    """µs (int or Decimal) -> int ns; None when not a number."""
    if isinstance(v, bool) or not isinstance(v, (int, decimal.Decimal)):
        return None
    return int(decimal.Decimal(v) * 1000)


def is_backward_range(name):
    return bool(BACKWARD_RE.search(name)) or name.startswith("autograd::engine::evaluate_function:")


def dims_key(dims):
    """The "Input Dims" text as the report writes it: compact JSON."""
    return json.dumps(dims, separators=(",", ":"))


def prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


def shape(dims, i):
    """Input i as a list of non-negative ints, or NoModel."""
    if not isinstance(dims, list) or i >= len(dims) or not isinstance(dims[i], list):
        raise NoModel("input %d missing" % i)
    d = dims[i]
    if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in d):
        raise NoModel("input %d is not a shape" % i)
    return d


def concrete(args, i):
    """Concrete input i parsed as JSON ("[1, 1]" -> [1, 1], "True" -> True), or None."""
    ci = args.get("Concrete Inputs")
    if not isinstance(ci, list) or i >= len(ci) or not isinstance(ci[i], str) or ci[i] == "":
        return None
    s = ci[i]
    if s in ("True", "False"):
        return s == "True"
    try:  # Python-style lists of booleans: "[False, True, True]"
        return json.loads(s.replace("True", "true").replace("False", "false"))
    except ValueError:
        return s  # e.g. "same" / "valid" padding


# ---------------------------------------------------------------- GEMM formulas

def gemm_flops(name, dims):
    if name == "aten::mm":
        a, b = shape(dims, 0), shape(dims, 1)
        if len(a) != 2 or len(b) != 2 or a[1] != b[0]:
            raise NoModel("mm shapes")
        return 2 * a[0] * b[1] * a[1]
    if name == "aten::addmm":
        a, b = shape(dims, 1), shape(dims, 2)
        if len(a) != 2 or len(b) != 2 or a[1] != b[0]:
            raise NoModel("addmm shapes")
        m, n, k = a[0], b[1], a[1]
        return 2 * m * n * k + m * n
    if name in ("aten::bmm", "aten::baddbmm"):
        off = 1 if name == "aten::baddbmm" else 0
        a, b = shape(dims, off), shape(dims, off + 1)
        if len(a) != 3 or len(b) != 3 or a[0] != b[0] or a[2] != b[1]:
            raise NoModel("bmm shapes")
        bb, m, k, n = a[0], a[1], a[2], b[2]
        return bb * (2 * m * n * k + (m * n if off else 0))
    if name == "aten::linear":
        x, w = shape(dims, 0), shape(dims, 1)
        if len(x) < 1 or len(w) != 2 or x[-1] != w[1]:
            raise NoModel("linear shapes")
        m, k, n = prod(x[:-1]), x[-1], w[0]
        bias = len(dims) > 2 and isinstance(dims[2], list) and len(dims[2]) > 0
        return 2 * m * n * k + (m * n if bias else 0)
    if name == "aten::matmul":
        return matmul_flops(shape(dims, 0), shape(dims, 1))
    raise NoModel("not a GEMM")


def matmul_flops(a, b):
    """torch.matmul: 1-D x 1-D is a dot product (2K); a 1-D operand gets a dimension prepended
    (left) or appended (right), which is removed from the result; batch dimensions broadcast."""
    if not a or not b:
        raise NoModel("matmul of a 0-d tensor")
    if len(a) == 1 and len(b) == 1:
        if a[0] != b[0]:
            raise NoModel("matmul shapes")
        return 2 * a[0]
    a2 = [1] + a if len(a) == 1 else a
    b2 = b + [1] if len(b) == 1 else b
    m, k = a2[-2], a2[-1]
    k2, n = b2[-2], b2[-1]
    if k != k2:
        raise NoModel("matmul shapes")
    ba, bb = a2[:-2], b2[:-2]
    nb = max(len(ba), len(bb))
    ba = [1] * (nb - len(ba)) + ba
    bb = [1] * (nb - len(bb)) + bb
    batch = []
    for x, y in zip(ba, bb):
        if x != y and x != 1 and y != 1:
            raise NoModel("matmul batch dims do not broadcast")
        batch.append(max(x, y) if x != 0 and y != 0 else 0)
    return prod(batch) * 2 * m * n * k


# ---------------------------------------------------------------- convolution formulas

# per forward op: index of (bias, stride, padding, dilation, transposed-flag, output_padding);
# None where the op has no such argument. Signatures of native_functions.yaml.
CONV_ARGS = {
    "aten::conv1d": (2, 3, 4, 5, None, None),
    "aten::conv2d": (2, 3, 4, 5, None, None),
    "aten::conv3d": (2, 3, 4, 5, None, None),
    "aten::convolution": (2, 3, 4, 5, 6, 7),
    "aten::_convolution": (2, 3, 4, 5, 6, 7),
    "aten::cudnn_convolution": (None, 3, 2, 4, None, None),
    "aten::mkldnn_convolution": (2, 4, 3, 5, None, None),
    "aten::conv_transpose1d": (2, 3, 4, 7, "T", 5),
    "aten::conv_transpose2d": (2, 3, 4, 7, "T", 5),
    "aten::conv_transpose3d": (2, 3, 4, 7, "T", 5),
    "aten::cudnn_convolution_transpose": (None, 4, 2, 5, "T", 3),
}


def per_dim(v, nd, what):
    if isinstance(v, int) and not isinstance(v, bool):
        return [v] * nd
    if isinstance(v, list) and all(isinstance(x, int) for x in v):
        if len(v) == 1:
            return v * nd
        if len(v) == nd:
            return v
    raise NoModel("%s %r" % (what, v))


def conv_out_from_concrete(name, args, x, w):
    bi, si, pi, di, ti, opi = CONV_ARGS[name]
    nd = len(x) - 2
    s, p, d = concrete(args, si), concrete(args, pi), concrete(args, di)
    if s is None or p is None or d is None:
        return None
    transposed = ti == "T" or (ti is not None and concrete(args, ti) is True)
    stride, dil = per_dim(s, nd, "stride"), per_dim(d, nd, "dilation")
    k = w[2:]
    if p == "valid":
        pad = [0] * nd
    elif p == "same":
        return [x[0], w[0]] + list(x[2:])  # stride 1 by definition of "same"
    else:
        pad = per_dim(p, nd, "padding")
    if transposed:
        op = per_dim(concrete(args, opi) or 0, nd, "output_padding")
        g = concrete(args, {"aten::convolution": 8, "aten::_convolution": 8}.get(name, 6))
        g = g if isinstance(g, int) and g > 0 else 1
        groups_out = w[1] * g
        sp = [(x[2 + i] - 1) * stride[i] - 2 * pad[i] + dil[i] * (k[i] - 1) + op[i] + 1
              for i in range(nd)]
        return [x[0], groups_out] + sp
    sp = [(x[2 + i] + 2 * pad[i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    return [x[0], w[0]] + sp


def conv_fwd_flops(name, args, out_link):
    dims = args.get("Input Dims")
    x, w = shape(dims, 0), shape(dims, 1)
    if len(x) < 3 or len(w) != len(x):
        raise NoModel("conv shapes")
    bi, _, _, _, ti, _ = CONV_ARGS[name]
    transposed = ti == "T" or (ti is not None and concrete(args, ti) is True)
    out = conv_out_from_concrete(name, args, x, w)
    if out is None:
        out = out_link
    if out is None:
        raise NoModel("no output shape (no Concrete Inputs, no linked backward)")
    bias = bi is not None and isinstance(dims, list) and bi < len(dims) and \
        isinstance(dims[bi], list) and len(dims[bi]) > 0
    if transposed:
        # w = [C_in, C_out/g, k...]: every input element (N * prod(input spatial) positions,
        # C_in channels) is multiplied into C_out/g * prod(k) outputs: 2 * prod(w) * N * prod(sp)
        f = 2 * prod(w) * x[0] * prod(x[2:])
    else:
        # w = [K, C/g, k...]: every output element takes C/g * prod(k) multiply-adds
        f = 2 * prod(w[1:]) * prod(out)
    return f + (prod(out) if bias else 0)


def conv_bwd_flops(name, args):
    dims = args.get("Input Dims")
    if name == "aten::convolution_backward":
        go, w = shape(dims, 0), shape(dims, 2)
    else:  # aten::cudnn_convolution_backward(self, grad_output, weight, ...)
        go, w = shape(dims, 1), shape(dims, 2)
    if len(w) < 3 or len(go) != len(w):
        raise NoModel("conv backward shapes")
    mask = concrete(args, len(dims) - 1) if isinstance(dims, list) and dims else None
    if not (isinstance(mask, list) and all(isinstance(b, bool) for b in mask)):
        mask = [True, True]
    term = 2 * prod(w[1:]) * prod(go)
    f = (term if mask[0] else 0) + (term if len(mask) > 1 and mask[1] else 0)
    if len(mask) > 2 and mask[2]:
        f += prod(go)
    return f


def conv_bwd_part_flops(name, args, parent):
    dims = args.get("Input Dims")
    go = shape(dims, 1)
    if name == "aten::cudnn_convolution_backward_input":
        w = shape(dims, 2)  # (self_size, grad_output, weight, ...)
    else:  # (weight_size, grad_output, self, ...): the weight's shape is a concrete list,
        # else the enclosing cudnn_convolution_backward's weight (its input 2)
        w = concrete(args, 0)
        if not (isinstance(w, list) and all(isinstance(v, int) for v in w)):
            if parent is None or parent.name != "aten::cudnn_convolution_backward":
                raise NoModel("weight size not in Concrete Inputs")
            w = shape(parent.args.get("Input Dims"), 2)
    if len(w) < 3 or len(go) != len(w):
        raise NoModel("conv backward shapes")
    return 2 * prod(w[1:]) * prod(go)


# ---------------------------------------------------------------- the analysis

class Call:
    __slots__ = ("name", "args", "pid", "tid", "s", "e", "parent", "idx")

    def __init__(self, ev, s, e, idx):
        self.name, self.args = ev["name"], ev.get("args") or {}
        self.pid, self.tid, self.s, self.e, self.idx = ev.get("pid"), ev.get("tid"), s, e, idx
        self.parent = None


def nest(calls):
    """Sets each call's parent: the innermost call of the same thread that encloses it."""
    by_thread = {}
    for c in calls:
        by_thread.setdefault((repr(c.pid), repr(c.tid)), []).append(c)
    for lst in by_thread.values():
        lst.sort(key=lambda c: (c.s, -c.e, c.idx))  # the longer one outside; ties: file order
        stack = []
        for c in lst:
            while stack and not (stack[-1].s <= c.s and c.e <= stack[-1].e):
                stack.pop()
            c.parent = stack[-1] if stack else None
            stack.append(c)


def analyze(events):
    """-> (rows, nomodel): rows {(name, dims, dir): [calls, flops, category]}, nomodel count."""
    calls = []
    for i, ev in enumerate(events):
        if not isinstance(ev, dict) or ev.get("ph") != "X" or ev.get("cat") not in RANGE_CATS:
            continue
        if not isinstance(ev.get("name"), str):
            continue
        s, d = to_ns(ev.get("ts")), to_ns(ev.get("dur"))
        if s is None or d is None or d < 0:
            continue
        calls.append(Call(ev, s, s + d, i))
    nest(calls)

    # conv output shapes by (pid, sequence number), from the backward ranges' conv backward calls
    link = {}
    for c in calls:
        if c.name not in CONV_BWD:
            continue
        p = c.parent
        while p is not None:
            seq = p.args.get("Sequence number")
            if is_backward_range(p.name) and isinstance(seq, int):
                try:
                    go = shape(c.args.get("Input Dims"), 0 if c.name == "aten::convolution_backward" else 1)
                    link.setdefault((repr(c.pid), seq), go)
                except NoModel:
                    pass
            p = p.parent

    # torch < 1.11's cudnn_convolution_backward runs its parts as child calls (_input, _weight)
    # and only those cuDNN was asked for (no input gradient for a network's first layer): the
    # parts are counted, the whole is not (docs/flops.md)
    split = set()
    for c in calls:
        if c.name in CONV_BWD_PART and c.parent is not None and \
                c.parent.name == "aten::cudnn_convolution_backward":
            split.add(c.parent.idx)

    def modelled(c):
        return c.name in MODELLED and c.idx not in split

    rows, nomodel = {}, 0
    for c in calls:
        if not modelled(c):
            continue
        if c.args is None or events[c.idx].get("cat") not in OP_CATS:
            continue
        p, enclosed, bwd = c.parent, False, False
        while p is not None:
            if modelled(p) and events[p.idx].get("cat") in OP_CATS:
                enclosed = True
            if is_backward_range(p.name):
                bwd = True
            p = p.parent
        if enclosed:
            continue
        dims = c.args.get("Input Dims")
        try:
            if c.name in GEMM:
                cat, f = "GEMM", gemm_flops(c.name, dims)
            elif c.name in CONV_FWD:
                seq = c.args.get("Sequence number")
                out = link.get((repr(c.pid), seq)) if isinstance(seq, int) else None
                cat, f = "convolution", conv_fwd_flops(c.name, c.args, out)
            elif c.name in CONV_BWD:
                cat, f = "convolution", conv_bwd_flops(c.name, c.args)
            else:
                cat, f = "convolution", conv_bwd_part_flops(c.name, c.args, c.parent)
        except NoModel:
            nomodel += 1
            continue
        key = (c.name, dims_key(dims), "bwd" if bwd else "fwd")
        r = rows.setdefault(key, [0, 0, cat])
        r[0] += 1
        r[1] += f
    return rows, nomodel


def totals(rows):
    t = {"GEMM": [0, 0], "convolution": [0, 0]}
    for calls, flops, cat in rows.values():
        t[cat][0] += calls
        t[cat][1] += flops
    return t


# ---------------------------------------------------------------- opscope and commands

def run_report(opscope, path):
    cmd = [opscope, "report", "--format", "json", "--views", "flops", path]
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
        raise InputError("%s: output is not JSON (%s)" % (" ".join(cmd), e))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def compare(rows, report, max_lines=40):
    """Returns a list of mismatch lines (empty: equal)."""
    if not isinstance(report, dict) or not isinstance(report.get("tables"), list):
        return ["report: no tables array"]
    # the view's first table is per operator (the others: by category, gaps, ceilings)
    ft = [t for t in report["tables"] if isinstance(t, dict) and t.get("view") == "flops"
          and t.get("title") == "FLOPs per Operator"]
    if len(ft) != 1:
        return ["report: %d tables \"FLOPs per Operator\", expected 1" % len(ft)]
    if not isinstance(ft[0].get("rows"), list):
        return ["report: flops table has no rows array"]
    errs, theirs = [], {}
    for j, r in enumerate(ft[0]["rows"]):
        if not isinstance(r, dict) or r.get("category") not in ("GEMM", "convolution"):
            continue
        key = (r.get("name"), r.get("input_shapes"), r.get("direction"))
        if not all(isinstance(k, str) for k in key):
            errs.append("report row %d: name/input_shapes/direction missing" % j)
            continue
        try:  # the report keeps the trace's text ("[[2, 3]]"); compare the values
            key = (key[0], dims_key(json.loads(key[1])), key[2])
        except ValueError:
            errs.append("report row %d: input_shapes is not JSON: %r" % (j, key[1]))
            continue
        if not is_int(r.get("calls")) or not is_int(r.get("flops")):
            errs.append("report row %d %s: calls/flops not integers" % (j, key))
            continue
        # the report also keys rows by the input dtypes: calls of one shape with two dtypes
        # are two rows there, one here
        c0, f0, _ = theirs.get(key, (0, 0, None))
        theirs[key] = (c0 + r["calls"], f0 + r["flops"], r["category"])
    for k in sorted(set(rows) | set(theirs)):
        if k not in theirs:
            errs.append("only checker: %s calls %d flops %d" % (k, rows[k][0], rows[k][1]))
        elif k not in rows:
            errs.append("only opscope: %s calls %d flops %d" % (k, theirs[k][0], theirs[k][1]))
        elif tuple(rows[k][:2]) != theirs[k][:2]:
            errs.append("differ: %s checker calls %d flops %d, opscope calls %d flops %d"
                        % (k, rows[k][0], rows[k][1], theirs[k][0], theirs[k][1]))
    if len(errs) > max_lines:
        errs = errs[:max_lines] + ["... %d more" % (len(errs) - max_lines)]
    return errs


def cmd_print(paths):
    for p in paths:
        rows, nomodel = analyze(load_trace(p))
        print("== %s" % p)
        for k in sorted(rows, key=lambda k: (-rows[k][1], k)):
            calls, flops, cat = rows[k]
            print("%-11s %-4s %6d %22d  %s %s" % (cat, k[2], calls, flops, k[0], k[1]))
        t = totals(rows)
        print("total GEMM: %d calls, %d flops; convolution: %d calls, %d flops; no model: %d"
              % (t["GEMM"][0], t["GEMM"][1], t["convolution"][0], t["convolution"][1], nomodel))
    return 0


def cmd_compare(opscope, paths):
    bad = 0
    for p in paths:
        try:
            rows, _ = analyze(load_trace(p))
            rep = run_report(opscope, p)
        except InputError as e:
            print("FAIL %s\n%s" % (p, e))
            bad += 1
            continue
        errs = compare(rows, rep)
        if errs:
            bad += 1
            print("FAIL %s" % p)
            print("\n".join(errs))
        else:
            t = totals(rows)
            print("ok %s: GEMM %d calls %d flops, convolution %d calls %d flops"
                  % (p, t["GEMM"][0], t["GEMM"][1], t["convolution"][0], t["convolution"][1]))
    return 1 if bad else 0


# ---------------------------------------------------------------- self-test

def self_test():
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    def op(name, ts, dur, dims, tid=1, **extra):
        a = {"Input Dims": dims}
        a.update(extra)
        return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 7, "tid": tid, "ts": ts,
                "dur": dur, "args": a}

    def rows_of(evs):
        return analyze(json.loads(json.dumps(evs), parse_float=decimal.Decimal))[0]

    # matmul broadcasting, by hand: [2,1,3,4]x[5,4,6] -> batch [2,5], 2*3*6*4 = 144 each: 1440
    check(matmul_flops([2, 1, 3, 4], [5, 4, 6]) == 1440, "matmul broadcast")
    check(matmul_flops([7], [7]) == 14, "matmul dot")
    check(matmul_flops([4], [3, 4, 5]) == 3 * 2 * 1 * 5 * 4, "matmul 1-D left")  # 120
    check(matmul_flops([3, 2, 4], [4]) == 3 * 2 * 2 * 1 * 4, "matmul 1-D right")  # 48
    check(matmul_flops([8, 16], [16, 4]) == 2 * 8 * 4 * 16, "matmul 2-D")
    try:
        matmul_flops([2, 3, 4], [5, 4, 6])
        check(False, "matmul bad broadcast must be no model")
    except NoModel:
        pass
    # addmm with its bias: [32,2048]x[2048,1000]: 2*32*1000*2048 + 32*1000 = 131104000
    r = rows_of([op("aten::addmm", 0, 10, [[1000], [32, 2048], [2048, 1000], [], []])])
    check(r.get(("aten::addmm", "[[1000],[32,2048],[2048,1000],[],[]]", "fwd"), [0, 0])[:2]
          == [1, 131104000], "addmm bias %r" % r)
    # linear without bias over a 3-D x: M = 4*5, K 8, N 3: 2*20*3*8 = 960; with bias + 60
    check(gemm_flops("aten::linear", [[4, 5, 8], [3, 8], []]) == 960, "linear no bias")
    check(gemm_flops("aten::linear", [[4, 5, 8], [3, 8], [3]]) == 1020, "linear bias")
    check(gemm_flops("aten::baddbmm", [[2, 3, 5], [2, 3, 4], [2, 4, 5], [], []])
          == 2 * (2 * 3 * 5 * 4 + 15), "baddbmm")
    # enclosure: linear [0,10) encloses addmm [1,9): only linear counts; an mm inside a
    # backward range on another thread counts as bwd
    r = rows_of([op("aten::linear", 0, 10, [[2, 8], [3, 8], [3]]),
                 op("aten::addmm", 1, 8, [[3], [2, 8], [8, 3], [], []]),
                 op("AddmmBackward0", 20, 10, [[2, 3]], tid=2),
                 op("aten::mm", 21, 2, [[2, 3], [3, 8]], tid=2)])
    check(set(k[0] for k in r) == {"aten::linear", "aten::mm"}, "enclosure %r" % r)
    check(r.get(("aten::linear", "[[2,8],[3,8],[3]]", "fwd"), [0, 0])[:2] == [1, 2 * 2 * 3 * 8 + 6],
          "linear row")
    check(("aten::mm", "[[2,3],[3,8]]", "bwd") in r, "mm bwd")
    # conv with Concrete Inputs: x [1,3,8,8], w [4,3,3,3], stride 2, pad 1, dil 1 -> out
    # [1,4,4,4] = 64; 2*27*64 = 3456, + bias 64 = 3520
    r = rows_of([op("aten::conv2d", 0, 5, [[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []],
                    **{"Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"]})])
    check(list(r.values())[0][:2] == [1, 3520] if r else False, "conv concrete %r" % r)
    # conv out from the backward link: no Concrete Inputs; CudnnConvolutionBackward (seq 9)
    # holds cudnn_convolution_backward with grad_output [2,4,5,5]: 2*(3*3*3)*200 = 10800 fwd;
    # its one part, _input, is what counts backward: dgrad 10800 (the whole, both terms,
    # would be 21600). The forward chain conv2d > cudnn_convolution counts once.
    evs = [op("aten::conv2d", 0, 10, [[2, 3, 7, 7], [4, 3, 3, 3], [], [], [], [], []],
              **{"Sequence number": 9}),
           op("aten::cudnn_convolution", 1, 8, [[2, 3, 7, 7], [4, 3, 3, 3], [], [], [], [], [],
                                                 [], []], **{"Sequence number": 9}),
           op("CudnnConvolutionBackward", 50, 10, [[2, 4, 5, 5]], tid=3,
              **{"Sequence number": 9}),
           op("aten::cudnn_convolution_backward", 51, 8,
              [[2, 3, 7, 7], [2, 4, 5, 5], [4, 3, 3, 3], [], [], [], [], [], [], [], []], tid=3),
           op("aten::cudnn_convolution_backward_input", 52, 2,
              [[], [2, 4, 5, 5], [4, 3, 3, 3], [], [], [], [], [], [], []], tid=3)]
    r = rows_of(evs)
    fwd = [v for k, v in r.items() if k[2] == "fwd"]
    bwd = [v for k, v in r.items() if k[2] == "bwd"]
    check(len(r) == 2 and fwd and fwd[0][:2] == [1, 10800] and bwd and bwd[0][:2] == [1, 10800]
          and ("aten::cudnn_convolution_backward_input", "[[],[2,4,5,5],[4,3,3,3],[],[],[],[],[],[],[]]",
               "bwd") in r, "conv link %r" % r)
    # no link (sequence number 10 has no backward): the conv has no model
    evs[0]["args"]["Sequence number"] = 10
    r, nm = analyze(json.loads(json.dumps(evs), parse_float=decimal.Decimal))
    check(nm == 1 and all(k[2] == "bwd" for k in r), "conv without link")
    # output_mask [False, True, True] on convolution_backward: wgrad + bias grad only
    check(conv_bwd_flops("aten::convolution_backward",
                         {"Input Dims": [[2, 4, 5, 5], [2, 3, 7, 7], [4, 3, 3, 3], [], [], [], [],
                                         [], [], [], []],
                          "Concrete Inputs": ["", "", "", "", "", "", "", "", "", "",
                                              "[False, True, True]"]}) == 10800 + 200,
          "conv bwd mask")
    # transposed conv: x [1,4,3,3], w [4,2,2,2], stride 2 -> out [1,2,6,6]:
    # 2 * (4*2*2*2) * 1 * 9 = 576
    check(conv_fwd_flops("aten::conv_transpose2d",
                         {"Input Dims": [[1, 4, 3, 3], [4, 2, 2, 2], [], [], [], [], [], []],
                          "Concrete Inputs": ["", "", "", "2", "0", "0", "1", "1"]}, None) == 576,
          "transposed")

    # the comparison: an equal report passes, each kind of difference fails
    rows = {("aten::mm", "[[2,3],[3,8]]", "fwd"): [2, 192, "GEMM"]}

    def rep(calls=2, flops=192, extra=None):
        rr = [{"name": "aten::mm", "input_shapes": "[[2,3],[3,8]]", "direction": "fwd",
               "category": "GEMM", "calls": calls, "flops": flops},
              {"name": "aten::add", "input_shapes": "[]", "direction": "fwd",
               "category": "elementwise", "calls": 1, "flops": 5}]
        if extra:
            rr.append(extra)
        return {"tables": [{"view": "flops", "title": "FLOPs per Operator", "rows": rr}]}
    check(compare(rows, rep()) == [], "equal report")
    check(compare(rows, rep(calls=3)) != [], "calls differ")
    check(compare(rows, rep(flops=191)) != [], "flops differ")
    check(compare(rows, rep(extra={"name": "aten::bmm", "input_shapes": "[]", "direction": "fwd",
                                   "category": "GEMM", "calls": 1, "flops": 1})) != [],
          "extra row")
    check(compare({}, rep()) != [], "missing row")

    # end to end against a fake opscope that prints an equal report, then a different one
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "t.json")
        with open(trace, "w") as f:
            json.dump({"traceEvents": [op("aten::mm", 0, 1, [[2, 3], [3, 8]]),
                                       op("aten::mm", 5, 1, [[2, 3], [3, 8]])]}, f)
        for flops, want in ((192, 0), (190, 1)):
            fake = os.path.join(d, "opscope%d" % flops)
            with open(fake, "w") as f:
                f.write("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n" % json.dumps(rep(flops=flops)))
            os.chmod(fake, 0o755)
            with contextlib.redirect_stdout(io.StringIO()):
                got = cmd_compare(fake, [trace])
            check(got == want, "fake opscope flops %d: exit %d" % (flops, got))
    for f in fails:
        print("FAIL %s" % f)
    print("self-test: %s" % ("ok" if not fails else "%d failed" % len(fails)))
    return 1 if fails else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*")
    ap.add_argument("--opscope", default=os.environ.get("OPSCOPE"))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--print", action="store_true", dest="print_")
    a = ap.parse_args(argv)
    try:
        if a.self_test:
            return self_test()
        if not a.traces:
            ap.error("no trace given")
        if a.print_:
            return cmd_print(a.traces)
        if not a.opscope:
            ap.error("no opscope: pass --opscope or set $OPSCOPE")
        return cmd_compare(a.opscope, a.traces)
    except InputError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
