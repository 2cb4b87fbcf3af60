"""A small validation command: checks a softmax "kernel" (here plain
Python, or numpy when importable) against a float64 reference, the way a
GPU kernel test would, and writes one receipt per case with the console
kept in its own file. Usage: validate_demo.py RECEIPTS CONSOLE"""
import math
import sys

import flameox_validate as fv

receipts, console = sys.argv[1], sys.argv[2]
log = open(console, "w")


def softmax_ref(xs):
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    s = sum(e)
    return [v / s for v in e]


def softmax_fast(xs, bug=False):
    # the "kernel": single precision-ish rounding, optionally a bug
    out = [round(v, 6) for v in softmax_ref(xs)]
    if bug:
        out[-1] += 1e-3
    return out


xs = [0.5 * i for i in range(64)]
w = fv.open(receipts, producer="validate_demo", version="1")
try:
    import numpy as np
except ImportError:
    np = None
print("numpy", "yes" if np is not None else "no", file=log)
for name, bug in (("softmax/64", False), ("softmax/64/buggy", True)):
    ref, got = softmax_ref(xs), softmax_fast(xs, bug)
    if np is not None:
        ref, got = np.asarray(ref, dtype=np.float64), np.asarray(got, dtype=np.float32)
    status = w.compare(name, ref, got, atol=1e-6, rtol=1e-4, device="cpu", console=None)
    print(name, status, file=log)
log.flush()
w.record("softmax/64/fp8", "unsupported", reason="no fp8 type on this device", dtype="float8_e4m3fn", device="cpu")
w.record("softmax/64/sum", "pass", expected=1.0, observed=sum(softmax_fast(xs)), max_abs_error=abs(1.0 - sum(softmax_fast(xs))),
         tolerance={"atol": 1e-5, "rtol": None}, device="cpu", console=console)
w.record("softmax/64/timeout", "inconclusive", reason="reference did not finish in 10 s", device="cpu", console=console)
w.close()
log.close()
