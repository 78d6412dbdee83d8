"""sample_py.py: a Python program of a known call structure for the sampler's Python frames
(tests/e2e/test_sampler_python.sh). The main thread runs main -> a -> b -> c, where c spins
on one line (HOT_C), then np_part, which multiplies numpy matrices on one line (HOT_NP: the
time goes to native BLAS code under that Python frame); a second thread, "pyworker", runs
worker -> d (HOT_D) the whole time. Fixed work, so every run is the same program.
Usage: python3 sample_py.py [SCALE]"""
import sys
import threading

try:
    import numpy as np
except ImportError:  # pure Python only: the test skips its numpy checks
    np = None


def c(n):
    s = 0
    for i in range(n): s += i * i  # HOT_C
    return s


def b(n):
    return c(n)


def a(n):
    return b(n)


def np_part(m):
    x = np.ones((160, 160)) / 160.0
    for _ in range(m): x = x @ x  # HOT_NP
    return x


def d(n):
    s = 0
    for i in range(n): s ^= i  # HOT_D
    return s


def worker(n):
    return d(n)


def main(scale):
    t = threading.Thread(target=worker, args=(3000000 * scale,), name="pyworker")
    t.start()
    a(3000000 * scale)
    if np is not None:
        np_part(400 * scale)
    t.join()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
