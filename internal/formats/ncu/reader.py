# flameox's Nsight Compute reader: runs in an isolated worker with NVIDIA's
# ncu_report module and writes one JSON line per profiled action (kernel
# launch): its names, every metric with its native name, kind, value, unit
# and instance count, and the rule results. The first line names the
# reader. Reads the report from the path given as its only argument.
import json
import math
import sys

try:
    import ncu_report
except Exception as e:  # noqa: BLE001 - any import failure means no reader
    sys.stdout.write(json.dumps({"type": "unavailable", "error": "%s: %s" % (type(e).__name__, e)}) + "\n")
    sys.exit(3)

M = ncu_report.IMetric
KINDS = {}
for k in dir(M):
    if k.startswith("ValueKind_"):
        KINDS[getattr(M, k)] = k[len("ValueKind_"):].lower()


def num(v):
    if isinstance(v, float) and not math.isfinite(v):
        return {"nonfinite": "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")}
    return v


def text(v):
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def metric(m):
    kind = KINDS.get(m.kind(), "unknown")
    has = m.has_value()
    val = None
    if has:
        if kind == "string":
            val = text(m.as_string())
        elif kind in ("uint32", "uint64"):
            val = int(m.as_uint64())
        elif kind in ("double", "float"):
            val = num(float(m.as_double()))
        else:
            v = m.value()
            val = num(v) if isinstance(v, (int, float)) else text(v)
    return [m.name(), kind, has, val, text(m.unit()), int(m.num_instances())]


def plain(v):
    """A rule's message or speedup estimate as JSON values."""
    if isinstance(v, dict):
        return {text(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, int):
        return v
    if isinstance(v, float):
        return num(v)
    return text(v)


def rules(a):
    out = []
    for r in a.rule_results():
        out.append({"id": text(r.rule_identifier()), "name": text(r.name()), "section": text(r.section_identifier()),
                    "message": plain(r.rule_message()) if r.has_rule_message() else None,
                    "speedup": plain(r.speedup_estimation()) if r.has_speedup_estimation() else None})
    return out


def main():
    ctx = ncu_report.load_report(sys.argv[1])
    try:
        from importlib.metadata import version as dist_version
        version = dist_version("ncu-report")
    except Exception:  # noqa: BLE001 - NVIDIA's extras/python copy has no distribution
        version = getattr(ncu_report, "__version__", None)
    sys.stdout.write(json.dumps({"type": "reader", "module": "ncu_report", "version": text(version),
                                 "ranges": ctx.num_ranges()}) + "\n")
    for ri in range(ctx.num_ranges()):
        rg = ctx.range_by_idx(ri)
        for ai in range(rg.num_actions()):
            a = rg.action_by_idx(ai)
            rec = {"type": "action", "range": ri, "action": ai,
                   "name": text(a.name(ncu_report.IAction.NameBase_DEMANGLED)),
                   "function": text(a.name(ncu_report.IAction.NameBase_FUNCTION)),
                   "mangled": text(a.name(ncu_report.IAction.NameBase_MANGLED)),
                   "workload_type": int(a.workload_type()),
                   "metrics": [metric(a.metric_by_name(n)) for n in sorted(a.metric_names())],
                   "rules": rules(a)}
            sys.stdout.write(json.dumps(rec, allow_nan=False, ensure_ascii=False) + "\n")
    sys.stdout.write(json.dumps({"type": "end"}) + "\n")


main()
