"""train.py: the small training loop of scripts/gpu-check.sh, run on a real GPU under
`opscope record` and, with --profile OUT.json, under torch.profiler (Kineto's CUDA activity,
the whole loop inside the profiler, exported as Chrome JSON), so that the kernel counts and
times of both recordings can be compared. Fixed sizes and seed: the same kernels every run.
--steps N runs N steps instead of 20 and --warmup W runs W more before them, untimed; the
timed loop's wall time is printed, to compare the cost of recording it with opscope and with
torch.profiler."""
import sys
import time

import torch

T_IMPORTED = time.perf_counter()

def main():
    args = sys.argv[1:]
    out = None
    steps = 20
    warmup = 0
    while args:
        if args[0] == "--profile" and len(args) > 1:
            out = args[1]
        elif args[0] == "--steps" and len(args) > 1:
            steps = int(args[1])
        elif args[0] == "--warmup" and len(args) > 1:
            warmup = int(args[1])
        else:
            sys.exit("usage: train.py [--profile OUT.json] [--steps N] [--warmup W]")
        args = args[2:]
    torch.manual_seed(0)
    dev = torch.device("cuda")
    ctx = None
    if out:
        from torch.profiler import ProfilerActivity, profile
        ctx = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        ctx.__enter__()
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 512, device=dev)
    y = torch.randint(0, 10, (256,), device=dev)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    torch.cuda.synchronize()
    loop = time.perf_counter() - t0
    if ctx:
        ctx.__exit__(None, None, None)
        ctx.export_chrome_trace(out)
    print("train: setup %.1f ms; loss %.4f, %d steps in %.1f ms" % (
        (t0 - T_IMPORTED) * 1e3, loss.item(), steps, loop * 1e3))


main()
