"""The CPU-bound Python + native workload of bench_sampler_peers.sh (issue 17's targets): a
training-like loop whose time is split between pure Python (py_loss), numpy (np_step) and, when
torch imports, torch operators (torch_step), called through a few Python frames as a model's
code would be. Fixed work (ITERS iterations), so every profiler runs the same program.
Usage: python3 sampler_workload.py [ITERS]"""
import sys

import numpy as np

try:
    import torch
except ImportError:  # numpy and Python only
    torch = None


def py_loss(values):
    s = 0.0
    for v in values:
        s += v * v
    return s


def np_step(a, b):
    return np.tanh(a @ b).sum()


def torch_step(x, w):
    return torch.relu(torch.mm(x, w)).sum().item()


def train(iters):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((96, 96)), rng.standard_normal((96, 96))
    values = list(range(3000))
    x = w = None
    if torch is not None:
        torch.manual_seed(0)
        torch.set_num_threads(1)
        x, w = torch.randn(128, 128), torch.randn(128, 128)
    total = 0.0
    for _ in range(iters):
        total += py_loss(values)
        total += np_step(a, b)
        if torch is not None:
            total += torch_step(x, w)
    return total


if __name__ == "__main__":
    train(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
