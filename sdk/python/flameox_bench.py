"""flameox benchmark-samples SDK for Python harnesses (standard library only).

Write measured values in flameox's benchmark-samples schema
(docs/benchmarks.md), which ``flameox-rank`` summarizes
(summarize_benchmarks) and compares (compare_benchmarks)::

    import flameox_bench as fb

    with fb.Writer("results.bench.jsonl", producer="mybench", producer_version="1.0") as w:
        w.series("matmul-fp16", name="matmul", unit="ns", samples=[1402.2, 1398.0],
                 warmups=[1510.5], clock="cuda_event", synchronization="device",
                 device={"type": "cuda", "index": 0}, dimensions={"dtype": "fp16", "n": "4096"})

With no path, the Writer writes to the file that flameox's capture
provider ``benchmark-samples`` names in FLAMEOX_BENCH_SAMPLES; outside a
capture (the variable unset) it validates and writes nothing.

PyTorch's ``torch.utils.benchmark`` results (the Measurements that
``Timer.blocked_autorange``, ``Timer.adaptive_autorange`` and ``Timer.timeit``
return, and that ``Compare`` takes) are written with their task spec::

    m = Timer("x + y", globals={"x": x, "y": y}, label="add", sub_label="1024",
              description="float32", num_threads=4).blocked_autorange()
    with fb.Writer("torch.bench.jsonl", producer="torch.utils.benchmark") as w:
        w.torch_measurement("add-1024", m)     # or w.torch_measurements([m1, m2, ...])

Values are in the declared unit (ns, bytes, count or ratio): convert
seconds with ``fb.seconds_to_ns``. Every series is checked against the
bounds the decoder applies (ids, names and attributes 1-200 bytes of
UTF-8; at most 32 dimensions, text to text, "worker" and "trial" reserved
for their fields; at most 2**20 values, all finite; a line at most 16 MiB);
a violation raises BenchSamplesError and writes nothing.

"""

import json
import math
import os

__all__ = ["BenchSamplesError", "Writer", "seconds_to_ns"]

ENV = "FLAMEOX_BENCH_SAMPLES"
SCHEMA = "flameox-bench-samples"
VERSION = 1
UNITS = ("ns", "bytes", "count", "ratio")
MAX_LINE = 16 << 20
MAX_LABEL = 200
MAX_DIMENSIONS = 32
MAX_VALUES = 1 << 20
_ATTRS = ("clock", "synchronization", "scope", "phase", "worker", "trial", "variant")


class BenchSamplesError(ValueError):
    """A series outside the schema's bounds; nothing was written."""


def seconds_to_ns(values):
    """Seconds to nanoseconds, value by value."""
    return [v * 1e9 for v in values]


def _label(s, what):
    if not isinstance(s, str):
        raise BenchSamplesError("%s must be a string, not %s" % (what, type(s).__name__))
    try:
        b = s.encode("utf-8")
    except UnicodeEncodeError:
        raise BenchSamplesError("%s is not valid Unicode" % what) from None
    if not b:
        raise BenchSamplesError("%s is empty" % what)
    if len(b) > MAX_LABEL:
        raise BenchSamplesError("%s is longer than %d bytes" % (what, MAX_LABEL))
    return s


def _int(n, what, low):
    if isinstance(n, bool) or not isinstance(n, int):
        raise BenchSamplesError("%s must be an integer" % what)
    if n < low or n >= 2**63:
        raise BenchSamplesError("%s %d is out of range" % (what, n))
    return n


def _values(vs, what):
    out = []
    for v in vs:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise BenchSamplesError("%s must be numbers, found %r" % (what, v))
        f = float(v)
        if not math.isfinite(f):
            raise BenchSamplesError("%s must be finite, found %r" % (what, v))
        out.append(f)
    return out


def _record(id, name, unit, samples, warmups, loop_count, device, dimensions, attrs):
    rec = {"id": _label(id, "id"), "name": _label(name, "name")}
    if unit not in UNITS:
        raise BenchSamplesError("unit %r is not one of %s" % (unit, ", ".join(UNITS)))
    rec["unit"] = unit
    for k in _ATTRS:
        v = attrs.pop(k, None)
        if v is not None:
            rec[k] = _label(v, k)
    if attrs:
        raise BenchSamplesError("unknown series field(s): %s" % ", ".join(sorted(attrs)))
    if loop_count is not None:
        rec["loop_count"] = _int(loop_count, "loop_count", 1)
    if device is not None:
        d = dict(device)
        dev = {"type": _label(d.pop("type", None), "device type")}
        for k in ("index", "stream"):
            if d.get(k) is not None:
                dev[k] = _int(d.pop(k), "device " + k, 0)
            d.pop(k, None)
        if d:
            raise BenchSamplesError("unknown device field(s): %s" % ", ".join(sorted(d)))
        rec["device"] = dev
    if dimensions:
        if len(dimensions) > MAX_DIMENSIONS:
            raise BenchSamplesError("%d dimensions, more than %d" % (len(dimensions), MAX_DIMENSIONS))
        dims = {}
        for k, v in dimensions.items():
            _label(k, "dimension name")
            if k in ("worker", "trial"):
                raise BenchSamplesError("dimension %r is reserved: use the %s field" % (k, k))
            dims[k] = _label(v, "dimension " + k)
        rec["dimensions"] = dims
    w = _values(warmups or (), "warmups")
    s = _values(samples, "samples")
    if len(w) + len(s) > MAX_VALUES:
        raise BenchSamplesError("%d values, more than %d" % (len(w) + len(s), MAX_VALUES))
    rec["warmups"] = w
    rec["samples"] = s
    line = json.dumps(rec, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
    if len(line.encode("utf-8")) > MAX_LINE:
        raise BenchSamplesError("the series' line is longer than %d bytes" % MAX_LINE)
    return line


class Writer:
    """Writes a benchmark-samples file: the header, then one line per series."""

    def __init__(self, path_or_file=None, producer="flameox_bench", producer_version=None):
        header = {"schema": SCHEMA, "version": VERSION, "producer": {"name": _label(producer, "producer")}}
        if producer_version is not None:
            header["producer"]["version"] = _label(producer_version, "producer_version")
        if path_or_file is None:
            path_or_file = os.environ.get(ENV) or os.devnull
        if hasattr(path_or_file, "write"):
            self._f, self._own = path_or_file, False
        else:
            self._f, self._own = open(path_or_file, "w", encoding="utf-8"), True
        self._ids = set()
        self._f.write(json.dumps(header, ensure_ascii=False, separators=(",", ":")) + "\n")

    def series(self, id, *, name, unit, samples, warmups=None, loop_count=None, device=None,
               dimensions=None, **attrs):
        """Validates and writes one series; clock, synchronization, scope,
        phase, worker, trial and variant are optional text attributes."""
        if id in self._ids:
            raise BenchSamplesError("series id %r written twice" % (id,))
        line = _record(id, name, unit, samples, warmups, loop_count, device, dimensions, dict(attrs))
        self._ids.add(id)
        self._f.write(line)

    def torch_measurement(self, id, measurement, *, name=None, **attrs):
        """Writes one torch.utils.benchmark Measurement as a series.

        Each sample is one of its runs: ``raw_times[i] / number_per_run``
        seconds (torch's ``Measurement.times``) in ns, and ``loop_count`` is
        ``number_per_run``. The name is the task spec's label, else its stmt
        (or ``name=``); ``sub_label``, ``description``, ``env`` (when set) and
        ``num_threads`` become dimensions, the identity ``Compare`` groups
        by. The clock is ``wall`` (the Timer's ``timeit.default_timer``)
        unless ``clock=`` says otherwise; torch is not imported."""
        spec = getattr(measurement, "task_spec", None)
        number = getattr(measurement, "number_per_run", None)
        raw = getattr(measurement, "raw_times", None)
        if spec is None or number is None or raw is None:
            raise BenchSamplesError("not a torch.utils.benchmark Measurement: %r" % (measurement,))
        number = _int(number, "number_per_run", 1)
        if name is None:
            name = spec.label if spec.label is not None else spec.stmt
        dims = {}
        for k in ("sub_label", "description", "env"):
            v = getattr(spec, k, None)
            if v is not None:
                dims[k] = v
        dims["num_threads"] = str(_int(spec.num_threads, "num_threads", 0))
        attrs.setdefault("clock", "wall")
        self.series(id, name=name, unit="ns", samples=seconds_to_ns([t / number for t in raw]),
                    loop_count=number, dimensions=dims, **attrs)

    def torch_measurements(self, measurements, *, id_prefix="torch", **attrs):
        """Writes each Measurement of a list (what Compare takes) as
        torch_measurement does, with ids ``<id_prefix>-1``, ``-2``, ...;
        returns the ids."""
        ids = []
        for i, m in enumerate(measurements, 1):
            ids.append("%s-%d" % (id_prefix, i))
            self.torch_measurement(ids[-1], m, **attrs)
        return ids

    def close(self):
        self._f.flush()
        if self._own:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
