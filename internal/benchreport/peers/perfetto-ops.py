#!/usr/bin/env python3
"""Peer of `flameox-rank --operation summarize_trace_operations` on a
Perfetto trace: read the Trace one packet at a time (its field-1 framing
by hand, so memory stays flat), parse each with the perfetto package's
TracePacket, resolve event names through each sequence's interned data,
and print the 20 slice names with the most SLICE_BEGIN events (durations
would need the clock conversion; a count is the least a user's script
would do)."""
import collections
import sys

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket


def varint(f):
    shift = value = 0
    while True:
        b = f.read(1)
        if not b:
            return None
        value |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return value
        shift += 7


names = collections.defaultdict(dict)
count = collections.Counter()
with open(sys.argv[1], "rb", buffering=1 << 20) as f:
    while True:
        tag = varint(f)
        if tag is None:
            break
        size = varint(f)
        p = TracePacket.FromString(f.read(size))
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & 1:
            names[seq] = {}
        for e in p.interned_data.event_names:
            names[seq][e.iid] = e.name
        if p.HasField("track_event") and p.track_event.type == 1:
            e = p.track_event
            count[e.name if e.HasField("name") else names[seq].get(e.name_iid, "?")] += 1
for name, n in count.most_common(20):
    print(f"{n:>10} {name}")
