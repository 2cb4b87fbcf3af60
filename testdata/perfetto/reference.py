"""An independent reading of a Perfetto trace with the perfetto package's
perfetto_trace_pb2 (protobuf's own parser), for the Go decoder's tests.

Usage: reference.py TRACE  (gzip'd or not). Prints JSON: packets, every
TracePacket field by name (inner packets of compressed_packets included),
track events by type, slices per (kind, name) with count and exact total
ns, counter samples, flow points, unmatched ends and unclosed begins.

It follows Perfetto's documented semantics (docs/reference/synthetic-track-
event.md, trace_packet.proto): interned data per trusted_packet_sequence_id,
cleared by SEQ_INCREMENTAL_STATE_CLEARED, invalid after
previous_packet_dropped, packets with SEQ_NEEDS_INCREMENTAL_STATE skipped
while invalid; trace_packet_defaults; timestamps on the primary clock
(BOOTTIME unless the trace config or a clock snapshot names another first),
other clocks converted by the latest snapshot at or before the time;
slices on a track applied in time order (a stable sort), END closing the
innermost open slice; incremental counters summed per sequence.

CPU samples (perf_sample, streaming_profile_packet) follow profile_common.proto
and Trace Processor's StackProfileSequenceState: a callstack's frame_ids bottom
frame first, a frame is (function name, mapping path: each path component
after a "/", "//" made "/"), a frame without a function name is named by its
rel_pc ("0x…", "[unknown]" without a mapping); any interned id missing leaves
the sample in its series' total and in no frame. Streaming samples' times are
µs deltas from the sequence's thread_descriptor reference, which its legacy
track events advance too. Per (process, thread, function, module): self
samples (the leaf) and inclusive samples (once per stack).
"""
import bisect
import collections
import gzip
import json
import subprocess
import sys
import zlib

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

data = open(sys.argv[1], "rb").read()
if data[:2] == b"\x1f\x8b":
    data = gzip.decompress(data)
trace = pb.Trace()
trace.ParseFromString(data)


def packets():
    for p in trace.packet:
        yield p
        if p.HasField("compressed_packets"):
            inner = pb.Trace()
            inner.ParseFromString(zlib.decompress(p.compressed_packets))
            yield from inner.packet
        if p.HasField("zstd_compressed_packets"):
            inner = pb.Trace()
            inner.ParseFromString(subprocess.run(["zstd", "-q", "-d", "-c"], input=p.zstd_compressed_packets,
                                                 stdout=subprocess.PIPE, check=True).stdout)
            yield from inner.packet


fields = collections.Counter()
by_type = collections.Counter()
seqs = {}
tracks = {}  # uuid -> descriptor
track_events = collections.defaultdict(list)  # uuid -> [(ts, order, type, name, kind)]
counters = 0
counter_sum = collections.Counter()
flow_points = 0
primary = 6
converted = 0
snapshots = []  # [{key: ns}]
pairs = collections.defaultdict(list)  # key -> sorted [(c, p)]
skipped = 0
failed = 0
order = 0


class Seq:
    def __init__(self):
        self.valid = False
        self.reset()

    def reset(self):
        self.names, self.cats, self.defaults = {}, {}, None
        self.functions, self.paths, self.build_ids = {}, {}, {}
        self.mappings, self.frames, self.callstacks = {}, {}, {}
        self.thread, self.ref_us = None, 0
        self.counters = collections.Counter()
        self.clocks = {}


def add_pairs(snap):
    prim = snap.get(primary)
    if prim is None:
        for k, v in snap.items():
            r = convert(k, v)
            if r is not None:
                prim = r
                break
    if prim is None:
        return
    for k, v in snap.items():
        if k != primary:
            bisect.insort(pairs[k], (v, prim), key=lambda x: x[0])


def convert(key, ns):
    ps = pairs.get(key)
    if not ps:
        return None
    i = bisect.bisect_right([c for c, _ in ps], ns) - 1
    c, p = ps[max(i, 0)]
    return p + (ns - c)


def set_primary(cid):
    global primary, pairs
    if cid and cid != primary and converted == 0:
        primary = cid
        pairs = collections.defaultdict(list)
        for s in snapshots:
            add_pairs(s)


def time_of(p, st):
    global converted
    if not p.HasField("timestamp"):
        return None
    cid = p.timestamp_clock_id
    if cid == 0 and st.defaults is not None:
        cid = st.defaults.timestamp_clock_id
    if 64 <= cid < 128:
        sc = st.clocks.get(cid)
        if sc is None:
            return None
        raw = p.timestamp
        if sc["incremental"]:
            raw += sc["last"]
            sc["last"] = raw
        r = convert((p.trusted_packet_sequence_id, cid), raw * sc["mult"])
        if r is not None:
            converted += 1
        return r
    if cid == 0 or cid == primary:
        return p.timestamp
    r = convert(cid, p.timestamp)
    if r is not None:
        converted += 1
    return r


def track_of(uuid):
    return tracks.get(uuid)


class Missing(Exception):
    pass


def lookup(table, iid, kind):
    v = table.get(iid)
    if v is None:
        raise Missing(kind)
    return v


def frame_key(st, fid):
    f = lookup(st.frames, fid, "frame")
    module = ""
    if f.mapping_id:
        m = lookup(st.mappings, f.mapping_id, "mapping")
        module = "".join("/" + lookup(st.paths, i, "mapping_path").decode("utf-8", "replace") for i in m.path_string_ids)
        if module.startswith("//"):
            module = module[1:]
        if m.build_id:
            bid = lookup(st.build_ids, m.build_id, "build_id")
            if not module and bid:
                module = "build_id:" + bid.hex()
    name = ""
    if f.function_name_id:
        name = lookup(st.functions, f.function_name_id, "function_name").decode("utf-8", "replace")
    if not name:
        name = "0x%x" % f.rel_pc if f.mapping_id else "[unknown]"
    return name, module


cpu = {"frames": collections.defaultdict(lambda: [0, 0]), "placed": 0, "unplaced": 0, "missing": collections.Counter(),
       "kernel_records_lost": 0, "skipped": 0, "perf_samples": 0, "streaming_samples": 0, "without_thread": 0,
       "times": []}


def sample(st, series, iid, ts):
    if ts is not None:
        cpu["times"].append(ts)
    try:
        cs = lookup(st.callstacks, iid, "callstack")
        keys = [frame_key(st, f) for f in cs.frame_ids]
    except Missing as e:
        cpu["missing"][e.args[0]] += 1
        cpu["unplaced"] += 1
        return
    cpu["placed"] += 1
    if not keys:
        return
    fr = cpu["frames"]
    fr[series + keys[-1]][0] += 1
    for k in set(keys):
        fr[series + k][1] += 1


for p in packets():
    for f, _ in p.ListFields():
        fields[f.name] += 1
    if p.HasField("compressed_packets") or p.HasField("zstd_compressed_packets"):
        continue
    sid = p.trusted_packet_sequence_id
    first = sid not in seqs
    st = seqs.setdefault(sid, Seq())
    if p.incremental_state_cleared or p.sequence_flags & 1:
        st.reset()
        st.valid = True
    elif p.previous_packet_dropped:
        st.valid = False
    if p.sequence_flags & 2 and not st.valid:
        skipped += 1
        continue
    if p.HasField("trace_packet_defaults"):
        st.defaults = p.trace_packet_defaults
    if p.HasField("interned_data"):
        for e in p.interned_data.event_names:
            st.names[e.iid] = e.name
        for e in p.interned_data.event_categories:
            st.cats[e.iid] = e.name
        d = p.interned_data
        for table, entries in ((st.functions, d.function_names), (st.paths, d.mapping_paths), (st.build_ids, d.build_ids)):
            for e in entries:
                table[e.iid] = e.str
        for table, entries in ((st.mappings, d.mappings), (st.frames, d.frames), (st.callstacks, d.callstacks)):
            for e in entries:
                table[e.iid] = e
    if p.HasField("perf_sample"):
        ps = p.perf_sample
        if ps.HasField("producer_event"):
            continue
        if ps.HasField("kernel_records_lost"):
            cpu["kernel_records_lost"] += ps.kernel_records_lost
            continue
        if ps.HasField("sample_skipped_reason"):
            cpu["skipped"] += 1
            continue
        cpu["perf_samples"] += 1
        series = (str(ps.pid), str(ps.tid))
        if not ps.callstack_iid:
            cpu["unplaced"] += 1
            continue
        sample(st, series, ps.callstack_iid, time_of(p, st))
        continue
    if p.HasField("streaming_profile_packet"):
        sp = p.streaming_profile_packet
        cpu["streaming_samples"] += len(sp.callstack_iid)
        if st.thread is None:
            cpu["without_thread"] += len(sp.callstack_iid)
            continue
        for iid, dt in zip(sp.callstack_iid, sp.timestamp_delta_us):
            st.ref_us += dt
            sample(st, (str(st.thread[0]), str(st.thread[1])), iid, st.ref_us * 1000)
        continue
    if p.HasField("trace_config"):
        set_primary(p.trace_config.builtin_data_sources.primary_trace_clock)
        continue
    if p.HasField("clock_snapshot"):
        cs = p.clock_snapshot
        if cs.primary_trace_clock:
            set_primary(cs.primary_trace_clock)
        snap = {}
        for c in cs.clocks:
            mult = c.unit_multiplier_ns or 1
            key = c.clock_id
            if 64 <= c.clock_id < 128:
                key = (sid, c.clock_id)
                st.clocks[c.clock_id] = {"mult": mult, "incremental": c.is_incremental, "last": c.timestamp}
            snap[key] = c.timestamp * mult
        snapshots.append(snap)
        add_pairs(snap)
        continue
    if p.HasField("track_descriptor"):
        tracks[p.track_descriptor.uuid] = p.track_descriptor
        continue
    if p.HasField("thread_descriptor"):
        st.thread = (p.thread_descriptor.pid, p.thread_descriptor.tid)
        st.ref_us = p.thread_descriptor.reference_timestamp_us
        continue
    if not p.HasField("track_event"):
        continue
    if not p.HasField("timestamp") and st.thread is not None:
        # Legacy thread sequences: µs, absolute or deltas from the
        # descriptor's reference.
        if p.track_event.HasField("timestamp_absolute_us"):
            st.ref_us = p.track_event.timestamp_absolute_us
        elif p.track_event.HasField("timestamp_delta_us"):
            st.ref_us += p.track_event.timestamp_delta_us
        p.timestamp = st.ref_us * 1000
    ts = time_of(p, st)
    if ts is None:
        failed += 1
        continue
    e = p.track_event
    defs = st.defaults.track_event_defaults if st.defaults is not None else None
    if e.HasField("track_uuid"):
        uuid = e.track_uuid
    elif defs is not None and defs.HasField("track_uuid"):
        uuid = defs.track_uuid
    elif st.thread is not None:
        uuid = ("thread",) + st.thread
    else:
        uuid = 0
    for vals, tr_field, dbl in ((e.extra_counter_values, "extra_counter_track_uuids", False),
                                (e.extra_double_counter_values, "extra_double_counter_track_uuids", True)):
        ids = list(getattr(e, tr_field)) or (list(getattr(defs, tr_field)) if defs is not None else [])
        for i, v in enumerate(vals):
            if i < len(ids):
                counters += 1
                d = tracks.get(ids[i])
                if d is not None and d.counter.is_incremental:
                    st.counters[ids[i]] += v
                    v = st.counters[ids[i]]
                if d is not None and d.counter.unit_multiplier > 1:
                    v *= d.counter.unit_multiplier
                counter_sum[ids[i]] += v
    flow_points += len(e.flow_ids) + len(e.flow_ids_old) + len(e.terminating_flow_ids) + len(e.terminating_flow_ids_old)
    by_type[e.type] += 1
    if e.type == pb.TrackEvent.TYPE_COUNTER:
        if e.HasField("counter_value") or e.HasField("double_counter_value"):
            v = e.counter_value if e.HasField("counter_value") else e.double_counter_value
            d = tracks.get(uuid)
            if d is not None and d.counter.is_incremental:
                st.counters[uuid] += v
                v = st.counters[uuid]
            if d is not None and d.counter.unit_multiplier > 1:
                v *= d.counter.unit_multiplier
            counters += 1
            counter_sum[uuid] += v
        continue
    if e.type not in (1, 2, 3):
        continue
    name = None
    if e.type != 2:
        if e.HasField("name"):
            name = e.name
        elif e.HasField("name_iid"):
            name = st.names.get(e.name_iid)
            if name is None:
                name = False  # missing: never a row
        else:
            name = ""
    d = tracks.get(uuid)
    kind = "slice" if (d is not None and d.HasField("thread") and d.thread.HasField("tid")) or isinstance(uuid, tuple) else "async"
    if e.type == 3:
        kind = "instant"
    order += 1
    track_events[uuid].append((ts, order, e.type, name, kind))

slices = collections.defaultdict(lambda: [0, 0])
unmatched = unclosed = 0
for uuid, evs in track_events.items():
    evs.sort(key=lambda x: (x[0], x[1]))
    stack = []
    for ts, _, typ, name, kind in evs:
        if typ == 1:
            stack.append((ts, name, kind))
        elif typ == 3:
            if name is not False:
                s = slices[kind + "\t" + name]
                s[0] += 1
        elif not stack:
            unmatched += 1
        else:
            t0, n, k = stack.pop()
            if n is not False:
                s = slices[k + "\t" + n]
                s[0] += 1
                s[1] += ts - t0
    unclosed += sum(1 for _, n, _ in stack if n is not False)

json.dump({
    "packets": sum(1 for _ in packets()),
    "fields": fields,
    "by_type": {str(k): v for k, v in by_type.items()},
    "skipped_needing_state": skipped,
    "clock_failed": failed,
    "slices": {k: {"count": v[0], "total_ns": v[1]} for k, v in slices.items()},
    "unmatched_end": unmatched,
    "unclosed_begin": unclosed,
    "counters": counters,
    "flow_points": flow_points,
    "cpu": {
        "frames": {"\t".join(k): {"self": v[0], "inclusive": v[1]} for k, v in cpu["frames"].items()},
        "placed": cpu["placed"], "unplaced": cpu["unplaced"], "missing": cpu["missing"],
        "kernel_records_lost": cpu["kernel_records_lost"], "skipped": cpu["skipped"],
        "perf_samples": cpu["perf_samples"], "streaming_samples": cpu["streaming_samples"],
        "without_thread": cpu["without_thread"],
        "first_ns": min(cpu["times"], default=None), "last_ns": max(cpu["times"], default=None),
    },
}, sys.stdout, sort_keys=True)
