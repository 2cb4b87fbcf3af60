"""memray's own reading of the native traces of a --native capture, as one
JSON document on stdout: the reference for the Go decoder's native rows.

  python native_reference.py CAPTURE.bin

- "high_watermark" and "leaked": FileReader's
  get_high_watermark_allocation_records / get_leaked_allocation_records
  with merge_threads=False, one entry per record: thread id,
  native_stack_id, native_segment_generation, bytes, allocation count.
- "resolved_prefix": per native_stack_id, how many symbolized frames
  memray's native_stack_trace(max_stacks=k) gives for k = 0, 1, 2, ...
  up to K (memray walks k return addresses; an address it cannot
  symbolize adds nothing, one with inlined calls adds several). memray
  gives no raw addresses, so this is what the Go reader's return
  addresses and modules are checked against.
"""
import json
import sys

import memray

K = 160


def main(path):
    reader = memray.FileReader(path)
    doc = {}
    prefixes = {}
    for name, it in (
        ("high_watermark", reader.get_high_watermark_allocation_records(merge_threads=False)),
        ("leaked", reader.get_leaked_allocation_records(merge_threads=False)),
    ):
        out = []
        for r in it:
            out.append(
                {
                    "tid": r.tid,
                    "native_stack_id": r.native_stack_id,
                    "generation": r.native_segment_generation,
                    "bytes": r.size,
                    "count": r.n_allocations,
                }
            )
            key = "%d/%d" % (r.native_stack_id, r.native_segment_generation)
            if key not in prefixes:
                counts = [len(r.native_stack_trace(max_stacks=k)) if k else 0 for k in range(K + 1)]
                while len(counts) > 2 and counts[-1] == counts[-2]:
                    counts.pop()
                prefixes[key] = counts
        doc[name] = out
    doc["resolved_prefix"] = prefixes
    json.dump(doc, sys.stdout, separators=(",", ":"), sort_keys=True)
    sys.stdout.write("\n")


main(sys.argv[1])
