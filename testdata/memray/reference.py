"""memray's own readings of a capture, as one JSON document on stdout: the
reference the Go decoder's tests compare with.

  python reference.py CAPTURE.bin

- "stats": what `memray stats --json` writes (absent for aggregated
  captures, which memray stats refuses);
- "metadata": FileReader(...).metadata;
- "high_watermark" and "leaked": FileReader's
  get_high_watermark_allocation_records / get_leaked_allocation_records
  with merge_threads=False: one entry per record with its thread id, its
  Python stack (leaf first, as stack_trace() gives it), its bytes and its
  allocation count.
"""
import json
import os
import subprocess
import sys
import tempfile

import memray


def records(it):
    out = []
    for r in it:
        out.append(
            {
                "tid": r.tid,
                "stack": [list(f) for f in r.stack_trace()],
                "bytes": r.size,
                "count": r.n_allocations,
            }
        )
    return out


def main(path):
    doc = {}
    reader = memray.FileReader(path)
    md = reader.metadata
    doc["metadata"] = {
        "total_allocations": md.total_allocations,
        "total_frames": md.total_frames,
        "peak_memory": md.peak_memory,
        "pid": md.pid,
        "main_thread_id": md.main_thread_id,
        "python_allocator": md.python_allocator,
        "has_native_traces": md.has_native_traces,
        "trace_python_allocators": md.trace_python_allocators,
        "file_format": int(md.file_format),
        "command_line": md.command_line,
    }
    doc["high_watermark"] = records(
        reader.get_high_watermark_allocation_records(merge_threads=False)
    )
    doc["leaked"] = records(reader.get_leaked_allocation_records(merge_threads=False))
    if md.file_format == memray.FileFormat.ALL_ALLOCATIONS:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "stats.json")
            subprocess.run(
                [sys.executable, "-m", "memray", "stats", "--json", "-f", "-o", out, path],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            with open(out) as f:
                doc["stats"] = json.load(f)
    json.dump(doc, sys.stdout, separators=(",", ":"), sort_keys=True)
    sys.stdout.write("\n")


main(sys.argv[1])
