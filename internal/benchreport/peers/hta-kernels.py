"""HTA's load of one Kineto trace and its GPU kernel breakdown: the peer of
`flameox-rank --operation summarize_trace_operations --category kernel`.

Usage: hta-kernels.py TRACE. The trace is its own rank file (rank 0), as
HTA's TraceAnalysis(trace_files=...) takes it; the breakdown's per-kernel
table is computed whole (no plots) and its size printed.
"""

import os
import sys

from hta.trace_analysis import TraceAnalysis


def main() -> None:
    path = os.path.abspath(sys.argv[1])
    # HTA joins trace_dir and each trace file's name.
    analyzer = TraceAnalysis(trace_files={0: os.path.basename(path)}, trace_dir=os.path.dirname(path))
    by_type, by_kernel = analyzer.get_gpu_kernel_breakdown(visualize=False, num_kernels=20)
    print(f"{len(by_type)} kernel types, {len(by_kernel)} kernel rows")


if __name__ == "__main__":
    main()
