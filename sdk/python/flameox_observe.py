"""flameox observations SDK for Python workloads (standard library only).

Record named values and phases into the file that flameox's capture
provider ``observations`` names in the environment variable
FLAMEOX_OBSERVATIONS::

    import flameox_observe as fo

    with fo.phase("train"):
        fo.observe("loss", 0.25)                 # recorded in phase "train"
        fo.observe("step_time", 12.5, unit="ms")

Every call is validated against the record bounds that flameox's decoder
applies (docs/observations.md): names, phases and units have 1-200
characters; values are None, booleans, integers, finite floats, strings,
lists/tuples and string-keyed dicts nested at most 8 levels with at most
256 entries each; text must be valid Unicode (no lone surrogates);
timestamps are integer nanoseconds (booleans refused); a record line is at
most 16 KiB. A violation raises ObservationError and writes nothing.

Outside a capture (the variable unset) calls validate and write nothing.
Each record is a single write(2) to a file opened with O_APPEND, so forked
processes and threads can share it.
"""

import contextlib
import contextvars
import json
import math
import os
import threading
import time

__all__ = ["ObservationError", "enabled", "observe", "phase", "start_phase", "end_phase"]

ENV = "FLAMEOX_OBSERVATIONS"
VERSION = 1
MAX_LINE = 16 * 1024
MAX_LABEL = 200
MAX_DEPTH = 8
MAX_ENTRIES = 256
_MAX_TS = 2**63 - 1


class ObservationError(ValueError):
    """A record outside the observation bounds; nothing was written."""


_current_phase = contextvars.ContextVar("flameox_observe_phase", default=None)
_lock = threading.Lock()
_fd = None
_UNSET = object()


def enabled():
    """True when records are written (FLAMEOX_OBSERVATIONS is set)."""
    return bool(os.environ.get(ENV))


def _text(s, what):
    if not isinstance(s, str):
        raise ObservationError("%s must be a string, not %s" % (what, type(s).__name__))
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise ObservationError("%s is not valid Unicode (it holds a lone surrogate)" % what) from None
    return s


def _label(s, what):
    _text(s, what)
    if not 1 <= len(s) <= MAX_LABEL:
        raise ObservationError("%s has %d characters; it must have 1 to %d" % (what, len(s), MAX_LABEL))
    return s


def _check_value(v, depth):
    if v is None or isinstance(v, (bool, int)):
        return
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ObservationError("value %r is not a finite number" % (v,))
        return
    if isinstance(v, str):
        _text(v, "string value")
        return
    if isinstance(v, (list, tuple, dict)):
        if depth >= MAX_DEPTH:
            raise ObservationError("value nests deeper than %d levels" % MAX_DEPTH)
        if len(v) > MAX_ENTRIES:
            raise ObservationError("a collection has %d entries; at most %d" % (len(v), MAX_ENTRIES))
        if isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    # json would silently turn 1 into "1"; refuse instead.
                    raise ObservationError("object keys must be strings, not %s" % type(k).__name__)
                _text(k, "object key")
                _check_value(x, depth + 1)
        else:
            for x in v:
                _check_value(x, depth + 1)
        return
    raise ObservationError("unsupported value type %s" % type(v).__name__)


def _timestamp(ts):
    if ts is None:
        return time.time_ns()
    if isinstance(ts, bool) or not isinstance(ts, int):
        raise ObservationError("ts must be integer nanoseconds since the epoch, not %s" % type(ts).__name__)
    if not 0 <= ts <= _MAX_TS:
        raise ObservationError("ts %d is outside 0..2**63-1" % ts)
    return ts


def _write(record):
    global _fd
    data = (json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")
    if len(data) > MAX_LINE:
        raise ObservationError("record is %d bytes; a line holds at most %d" % (len(data), MAX_LINE))
    path = os.environ.get(ENV)
    if not path:
        return
    with _lock:
        if _fd is None:
            _fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(_fd, data)


def observe(name, value, *, phase=_UNSET, unit=None, ts=None):
    """Record a named value. phase defaults to the innermost active phase()."""
    if phase is _UNSET:
        phase = _current_phase.get()
    record = {"v": VERSION, "kind": "observation", "name": _label(name, "name")}
    _check_value(value, 0)
    record["value"] = value
    if phase is not None:
        record["phase"] = _label(phase, "phase")
    if unit is not None:
        record["unit"] = _label(unit, "unit")
    record["ts"] = _timestamp(ts)
    record["pid"] = os.getpid()
    _write(record)


def _phase_record(kind, name, ts):
    _write({"v": VERSION, "kind": kind, "phase": _label(name, "phase"), "ts": _timestamp(ts), "pid": os.getpid()})


def start_phase(name, *, ts=None):
    """Record the start of a phase (does not change the current phase)."""
    _phase_record("phase_start", name, ts)


def end_phase(name, *, ts=None):
    """Record the end of a phase."""
    _phase_record("phase_end", name, ts)


@contextlib.contextmanager
def phase(name):
    """Record a phase around a block; observations inside default to it."""
    start_phase(name)
    token = _current_phase.set(name)
    try:
        yield
    finally:
        _current_phase.reset(token)
        end_phase(name)
