#!/usr/bin/python3
"""gen_ranks.py: synthetic Kineto traces of a data-parallel job, one file per rank, with a known
straggler and known clock skews, for tests/e2e/test_ranks.sh and docs/ranks.md.

  gen_ranks.py OUTDIR [--ranks N] [--steps S] [--straggler R] [--slow PCT] [--skew-us U]
                      [--world W] [--no-steps-rank R]

Every step of every rank, on one true clock: a DataLoader range of DATA us, then one compute
kernel of COMPUTE us (the straggler's is PCT % longer), then an all-reduce NCCL kernel that starts
when the rank's compute ends (its arrival) and ends TRANSFER us after the last rank arrives (all
ranks leave together), then a stream synchronize; the next step starts GAP us later. Rank r
writes its times shifted by r * U us (a clock that is off by that much), so clock alignment must
find offsets of -r * U us. The all-reduce carries NCCL's args (In/Out msg nelems NELEMS, dtype
Float, Group size N). Ranks 2h and 2h+1 run on host "node-h" (top-level host_name).
"""
import argparse
import json
import os

DATA, COMPUTE, TRANSFER, GAP, NELEMS = 1000, 10000, 500, 10, 1 << 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--straggler", type=int, default=2)
    ap.add_argument("--slow", type=float, default=20.0)
    ap.add_argument("--skew-us", type=int, default=1000)
    ap.add_argument("--world", type=int, default=None)
    ap.add_argument("--no-steps-rank", type=int, default=-1)
    o = ap.parse_args()
    os.makedirs(o.out, exist_ok=True)
    n = o.ranks
    events = [[] for _ in range(n)]
    corr = [1] * n
    t0 = 1_000_000
    for k in range(o.steps):
        arrive = []
        for r in range(n):
            c = COMPUTE * (1 + o.slow / 100.0) if r == o.straggler else COMPUTE
            arrive.append(t0 + DATA + 10 + c)
        end_ar = max(arrive) + TRANSFER
        step_end = end_ar + 50
        for r in range(n):
            ev = events[r]
            sk = r * o.skew_us
            pid, tid = 1000 + r, 1000 + r

            def x(cat, name, ts, dur, p=pid, t=tid, args=None):
                e = {"ph": "X", "cat": cat, "name": name, "pid": p, "tid": t,
                     "ts": round(ts + sk, 3), "dur": round(dur, 3)}
                if args:
                    e["args"] = args
                ev.append(e)

            if r != o.no_steps_rank:
                x("user_annotation", "ProfilerStep#%d" % k, t0, step_end - t0)
            x("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
              t0, DATA)
            c = COMPUTE * (1 + o.slow / 100.0) if r == o.straggler else COMPUTE
            x("cpu_op", "aten::mm", t0 + DATA, 8)
            x("cuda_runtime", "cudaLaunchKernel", t0 + DATA + 1, 5,
              args={"correlation": corr[r]})
            x("kernel", "volta_sgemm_128x64_nn", t0 + DATA + 10, c, p=0, t=7,
              args={"correlation": corr[r], "device": 0, "stream": 7})
            corr[r] += 1
            x("cpu_op", "nccl:all_reduce", t0 + DATA + 12, 10)
            x("cuda_runtime", "cudaLaunchKernel", t0 + DATA + 13, 5,
              args={"correlation": corr[r]})
            x("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, "
              "ncclWork*)", arrive[r], end_ar - arrive[r], p=0, t=20,
              args={"correlation": corr[r], "device": 0, "stream": 20,
                    "Collective name": "allreduce", "In msg nelems": NELEMS,
                    "Out msg nelems": NELEMS, "Group size": n, "dtype": "Float"})
            corr[r] += 1
            x("cuda_runtime", "cudaStreamSynchronize", t0 + DATA + 20, end_ar + 40 - t0 - DATA - 20)
        t0 = step_end + GAP
    for r in range(n):
        doc = {"schemaVersion": 1, "host_name": "node-%d" % (r // 2),
               "distributedInfo": {"backend": "nccl", "rank": r, "world_size": o.world or n},
               "traceEvents": events[r]}
        with open(os.path.join(o.out, "rank%d.json" % r), "w") as f:
            json.dump(doc, f)


if __name__ == "__main__":
    main()
