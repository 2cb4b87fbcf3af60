#!/usr/bin/env python3
"""Peer of `flameox-rank --operation summarize_trace_operations` on OTLP
protobuf: parse the TracesData whole with the opentelemetry-proto classes
(as a script over an exported body does) and print the 20 span names with
the most total duration."""
import collections, sys

from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

with open(sys.argv[1], "rb") as f:
    td = TracesData.FromString(f.read())
total = collections.Counter()
count = collections.Counter()
for rs in td.resource_spans:
    for ss in rs.scope_spans:
        for sp in ss.spans:
            total[sp.name] += sp.end_time_unix_nano - sp.start_time_unix_nano
            count[sp.name] += 1
for name, dur in total.most_common(20):
    print(f"{dur:>20} ns {count[name]:>8} {name}")
