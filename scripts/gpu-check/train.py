"""train.py: the small training loop of scripts/gpu-check.sh, run on a real GPU under
`opscope record` and, with --profile OUT.json, under torch.profiler (Kineto's CUDA activity,
the whole loop inside the profiler, exported as Chrome JSON), so that the kernel counts and
times of both recordings can be compared. Fixed sizes and seed: the same kernels every run."""
import sys

import torch


def main():
    out = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--profile" else None
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
    for _ in range(20):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    if ctx:
        ctx.__exit__(None, None, None)
        ctx.export_chrome_trace(out)
    print("train: loss %.4f" % loss.item())


main()
