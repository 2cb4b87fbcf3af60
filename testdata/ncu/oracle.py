"""Independent count of an Nsight Compute report with NVIDIA's ncu_report:
per demangled kernel name, the launches and the sum of gpu__time_duration.sum
(in the report's unit, ns), and the metrics of all launches. Prints JSON."""
import json
import sys

import ncu_report

ctx = ncu_report.load_report(sys.argv[1])
kernels, metrics = {}, 0
for ri in range(ctx.num_ranges()):
    rg = ctx.range_by_idx(ri)
    for ai in range(rg.num_actions()):
        a = rg.action_by_idx(ai)
        name = a.name(ncu_report.IAction.NameBase_DEMANGLED)
        m = a.metric_by_name("gpu__time_duration.sum")
        assert m.unit() == "ns", m.unit()
        k = kernels.setdefault(name, [0, 0.0])
        k[0] += 1
        k[1] += m.as_double()
        metrics += len(a.metric_names())
print(json.dumps({"kernels": kernels, "metrics": metrics}))
