"""flameox kernel validation receipts for Python validation commands.

A validation command checks a kernel's output against a reference and
records one receipt per case into a JSONL file that flameox decodes
(format ``kernel-validation``, docs/validation.md)::

    import flameox_validate as fv

    w = fv.open("out.kernel-validation.jsonl", producer="gemm-check", version="1.0")
    w.compare("gemm/fp32/256", expected, observed, atol=1e-5, rtol=1e-4, device="cuda:0",
              console="console.txt")
    w.record("gemm/fp8/256", "unsupported", reason="no fp8 on sm_80")

``compare`` uses numpy when the arrays are numpy arrays (or numpy is
importable and they are sequences), else plain Python floats; it decides
pass or fail as numpy.allclose does (|o-e| <= atol + rtol*|e|, NaN never
close) and records both arrays as SHA-256 digests, never inline.

Every receipt is validated against the grammar flameox's decoder applies:
labels (case, producer, dtype, device) have 1-200 characters, a reason,
string value or console path at most 4096; text is valid Unicode; numbers
are finite; a line is at most 16 KiB. A violation raises ValidationError
(a ValueError) and writes nothing. ``open(None)`` (or the environment
variable FLAMEOX_KERNEL_VALIDATION unset with no path) validates and writes
nothing. Each receipt is one write(2) on an O_APPEND file.

The console (the command's own stdout/stderr) is kept whole in its own
file as oracle input: a receipt refers to it by path, SHA-256 and size.
"""

import builtins
import hashlib
import json
import math
import os
import struct
import threading
import time

__all__ = ["ValidationError", "Writer", "open", "digest", "console_ref", "STATUSES"]

SCHEMA = "flameox.kernel-validation"
VERSION = 1
ENV = "FLAMEOX_KERNEL_VALIDATION"
MAX_LINE = 16 * 1024
MAX_LABEL = 200
MAX_TEXT = 4096
MAX_SHAPE = 256
STATUSES = ("pass", "fail", "inconclusive", "unsupported")
_MAX_INT = 2**63 - 1


class ValidationError(ValueError):
    """A receipt outside the grammar; nothing was written."""


def _text(s, what, lo, hi):
    if not isinstance(s, str):
        raise ValidationError("%s must be a string, not %s" % (what, type(s).__name__))
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError("%s is not valid Unicode (it holds a lone surrogate)" % what) from None
    if not lo <= len(s) <= hi:
        raise ValidationError("%s has %d characters; it must have %d to %d" % (what, len(s), lo, hi))
    return s


def _opt_label(s, what):
    return None if s is None else _text(s, what, 1, MAX_LABEL)


def _int(v, what):
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValidationError("%s must be an integer, not %s" % (what, type(v).__name__))
    if not 0 <= v <= _MAX_INT:
        raise ValidationError("%s %d is outside 0..2**63-1" % (what, v))
    return v


def _num(v, what, non_negative=True):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        # numpy scalars convert; anything else is refused
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise ValidationError("%s must be a number, not %s" % (what, type(v).__name__)) from None
    if isinstance(v, float) and not math.isfinite(v):
        raise ValidationError("%s %r is not a finite number" % (what, v))
    if isinstance(v, int) and abs(v) > 1.7e308:
        raise ValidationError("%s is not finite as a double" % what)
    if non_negative and v < 0:
        raise ValidationError("%s %r is negative" % (what, v))
    return v


def _hex(s, n, what):
    if not isinstance(s, str) or len(s) != n or any(c not in "0123456789abcdef" for c in s):
        raise ValidationError("%s must be %d lowercase hex digits" % (what, n))
    return s


def _value(v, what):
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return _num(v, what, non_negative=False)
    if isinstance(v, str):
        return _text(v, what, 0, MAX_TEXT)
    if isinstance(v, dict):
        if set(v) - {"digest", "bytes"} or "digest" not in v:
            raise ValidationError("%s must be a scalar or a digest object {digest, bytes}" % what)
        d = v["digest"]
        if not isinstance(d, str) or not d.startswith("sha256:"):
            raise ValidationError('%s digest must be "sha256:" and 64 lowercase hex digits' % what)
        _hex(d[7:], 64, what + " digest")
        out = {"digest": d, "bytes": None}
        if v.get("bytes") is not None:
            out["bytes"] = _int(v["bytes"], what + " bytes")
        return out
    if hasattr(v, "item") and getattr(v, "shape", None) == ():
        return _value(v.item(), what)  # a numpy scalar
    raise ValidationError("%s must be None, a bool, a number, a string or digest(...); digest arrays" % what)


def digest(data):
    """The digest object of bytes (an array's raw buffer)."""
    return {"digest": "sha256:" + hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def console_ref(path):
    """A reference to a console file: its path, SHA-256 and size."""
    h = hashlib.sha256()
    n = 0
    with builtins.open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
            n += len(chunk)
    return {"path": _text(os.fspath(path), "console path", 1, MAX_TEXT), "sha256": h.hexdigest(), "bytes": n}


class Writer:
    """Appends receipts of one producer to a receipt file (or, without a
    path, validates them and writes nothing)."""

    def __init__(self, path, producer, version=None):
        self._producer = {"name": _text(producer, "producer name", 1, MAX_LABEL),
                          "version": _opt_label(version, "producer version")}
        self._path = os.fspath(path) if path is not None else None
        self._fd = None
        self._lock = threading.Lock()

    def record(self, case, status, *, reason=None, expected=None, observed=None, max_abs_error=None,
               max_rel_error=None, tolerance=None, dtype=None, shape=None, device=None, console=None, ts=None):
        """Validate and append one receipt. console is a path (referenced by
        digest) or a console_ref(...) dict."""
        if status not in STATUSES:
            raise ValidationError("status must be one of %s" % ", ".join(STATUSES))
        r = {"schema": SCHEMA, "v": VERSION, "producer": self._producer,
             "case": _text(case, "case", 1, MAX_LABEL), "status": status}
        r["reason"] = None if reason is None else _text(reason, "reason", 1, MAX_TEXT)
        if r["reason"] is None and status in ("inconclusive", "unsupported"):
            raise ValidationError("an %s receipt needs a reason" % status)
        r["expected"] = _value(expected, "expected")
        r["observed"] = _value(observed, "observed")
        r["max_abs_error"] = _num(max_abs_error, "max_abs_error")
        r["max_rel_error"] = _num(max_rel_error, "max_rel_error")
        if tolerance is None:
            r["tolerance"] = None
        else:
            if not isinstance(tolerance, dict) or set(tolerance) - {"atol", "rtol"}:
                raise ValidationError("tolerance must be a dict of atol and rtol")
            r["tolerance"] = {"atol": _num(tolerance.get("atol"), "tolerance atol"),
                              "rtol": _num(tolerance.get("rtol"), "tolerance rtol")}
        r["dtype"] = _opt_label(None if dtype is None else str(dtype), "dtype")
        if shape is None:
            r["shape"] = None
        else:
            shape = [int(d) if not isinstance(d, bool) and hasattr(d, "__index__") else d for d in shape]
            if len(shape) > MAX_SHAPE:
                raise ValidationError("shape has %d dimensions; at most %d" % (len(shape), MAX_SHAPE))
            r["shape"] = [_int(d, "shape dimension") for d in shape]
        r["device"] = _opt_label(None if device is None else str(device), "device")
        if console is None:
            r["console"] = None
        elif isinstance(console, dict):
            if set(console) != {"path", "sha256", "bytes"}:
                raise ValidationError("console must be a path or console_ref(path)")
            r["console"] = {"path": _text(console["path"], "console path", 1, MAX_TEXT),
                            "sha256": _hex(console["sha256"], 64, "console sha256"),
                            "bytes": _int(console["bytes"], "console bytes")}
        else:
            r["console"] = console_ref(console)
        r["ts"] = time.time_ns() if ts is None else _int(ts, "ts")
        r["pid"] = os.getpid()
        data = (json.dumps(r, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")
        if len(data) > MAX_LINE:
            raise ValidationError("receipt is %d bytes; a line holds at most %d" % (len(data), MAX_LINE))
        if self._path is None:
            return status
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.write(self._fd, data)
        return status

    def compare(self, case, expected, observed, *, atol=1e-8, rtol=1e-5, device=None, console=None, reason=None):
        """Compare observed with expected as numpy.allclose does and record
        the receipt; returns its status."""
        np = _numpy()
        if np is not None and (hasattr(expected, "dtype") or hasattr(observed, "dtype")):
            e = np.ascontiguousarray(expected)
            o = np.ascontiguousarray(observed)
            dtype, shape = str(o.dtype), list(o.shape)
            exp_d, obs_d = digest(e.tobytes()), digest(o.tobytes())
            if e.shape != o.shape:
                return self.record(case, "fail", reason="observed shape %s, expected %s" % (list(o.shape), list(e.shape)),
                                   expected=exp_d, observed=obs_d, tolerance={"atol": atol, "rtol": rtol},
                                   dtype=dtype, shape=shape, device=device, console=console)
            ef, of = e.astype(np.float64).ravel(), o.astype(np.float64).ravel()
            pairs = zip(ef.tolist(), of.tolist())
        else:
            ef, of = [float(x) for x in expected], [float(x) for x in observed]
            dtype, shape = "float64", [len(of)]
            exp_d, obs_d = digest(struct.pack("<%dd" % len(ef), *ef)), digest(struct.pack("<%dd" % len(of), *of))
            if len(ef) != len(of):
                return self.record(case, "fail", reason="observed has %d elements, expected %d" % (len(of), len(ef)),
                                   expected=exp_d, observed=obs_d, tolerance={"atol": atol, "rtol": rtol},
                                   dtype=dtype, shape=shape, device=device, console=console)
            pairs = zip(ef, of)
        max_abs = max_rel = 0.0
        bad = nan = n = 0
        for x, y in pairs:
            n += 1
            if math.isnan(x) or math.isnan(y):
                bad += 1
                nan += 1
                continue
            d = abs(y - x)
            if math.isinf(d):
                bad += 1
                continue
            max_abs = max(max_abs, d)
            if x != 0:
                max_rel = max(max_rel, d / abs(x))
            if d > atol + rtol * abs(x):
                bad += 1
        status = "fail" if bad else "pass"
        if bad and reason is None:
            reason = "%d of %d elements outside the tolerance" % (bad, n) + (" (%d NaN)" % nan if nan else "")
        return self.record(case, status, reason=reason, expected=exp_d, observed=obs_d, max_abs_error=max_abs,
                           max_rel_error=max_rel, tolerance={"atol": atol, "rtol": rtol}, dtype=dtype, shape=shape,
                           device=device, console=console)

    def close(self):
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def open(path=None, *, producer, version=None):  # noqa: A001 - the module's entry point
    """A Writer for path, else for $FLAMEOX_KERNEL_VALIDATION; with
    neither, a Writer that validates and writes nothing."""
    if path is None:
        path = os.environ.get(ENV) or None
    return Writer(path, producer, version)
