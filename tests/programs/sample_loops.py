# sample_loops.py: a CPU-bound Python workload for the sampler's tests (tests/e2e/test_sampler.sh)
# run by Debian's /usr/bin/python3, which has no frame pointers: a pure-Python loop, then a
# numpy loop when numpy imports. Prints "loops done" at the end.


def py_inner(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def py_outer():
    return py_inner(2_000_000)


for _ in range(4):
    py_outer()
try:
    import numpy as np

    a = np.random.rand(200, 200)
    for _ in range(150):
        a = (a @ a) / 200.0 + np.sin(a)
    print("numpy loop done")
except ImportError:
    print("no numpy")
print("loops done")
