"""Builds the perfetto.trace_builder fixtures and the crafted negatives.

Every trace is written by the perfetto PyPI package's own TraceProtoBuilder
(its perfetto_trace_pb2 messages serialized by protobuf); the negatives are
such traces cut or edited as their names say. Usage: build.py OUTDIR
"""
import subprocess
import sys
import zlib

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

out = sys.argv[1]
CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
BEGIN, END = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END
INSTANT, COUNTER = pb.TrackEvent.TYPE_INSTANT, pb.TrackEvent.TYPE_COUNTER
PROC, MAIN, WORKER, ASYNC, MEM, CPU_TIME = 10, 11, 12, 13, 14, 15


def descriptors(b, seq):
    p = b.add_packet()
    p.trusted_packet_sequence_id = seq
    p.sequence_flags = CLEARED
    p.timestamp = 1000
    cs = p.clock_snapshot
    cs.primary_trace_clock = pb.BUILTIN_CLOCK_BOOTTIME
    for cid, ts in ((6, 1000), (3, 500), (64, 2)):
        c = cs.clocks.add()
        c.clock_id, c.timestamp = cid, ts
        if cid == 64:
            c.is_incremental, c.unit_multiplier_ns = True, 1000
    for uuid, parent, fill in (
        (PROC, None, lambda d: (setattr(d.process, "pid", 100), setattr(d.process, "process_name", "builder-proc"))),
        (MAIN, PROC, lambda d: (setattr(d.thread, "pid", 100), setattr(d.thread, "tid", 101), setattr(d.thread, "thread_name", "main"))),
        (WORKER, PROC, lambda d: (setattr(d.thread, "pid", 100), setattr(d.thread, "tid", 102), setattr(d.thread, "thread_name", "worker"))),
        (ASYNC, PROC, lambda d: setattr(d, "name", "requests")),
        (MEM, PROC, lambda d: (setattr(d, "name", "heap_bytes"), setattr(d.counter, "unit", pb.CounterDescriptor.UNIT_SIZE_BYTES))),
        (CPU_TIME, MAIN, lambda d: (setattr(d.counter, "type", pb.CounterDescriptor.COUNTER_THREAD_TIME_NS),
                                    setattr(d.counter, "is_incremental", True), setattr(d.counter, "unit_multiplier", 1000))),
    ):
        q = b.add_packet()
        q.trusted_packet_sequence_id = seq
        q.sequence_flags = NEEDS
        d = q.track_descriptor
        d.uuid = uuid
        if parent:
            d.parent_uuid = parent
        fill(d)


def event(b, seq, ts, typ, track=None, name=None, name_iid=None, cats=(), clock=None, **kw):
    p = b.add_packet()
    p.trusted_packet_sequence_id = seq
    p.sequence_flags = NEEDS
    p.timestamp = ts
    if clock:
        p.timestamp_clock_id = clock
    e = p.track_event
    e.type = typ
    if track is not None:
        e.track_uuid = track
    if name is not None:
        e.name = name
    if name_iid is not None:
        e.name_iid = name_iid
    for c in cats:
        if isinstance(c, int):
            e.category_iids.append(c)
        else:
            e.categories.append(c)
    for k, v in kw.items():
        f = getattr(e, k)
        if isinstance(v, list):
            f.extend(v)
        else:
            setattr(e, k, v)
    return p


def main_trace():
    b = TraceProtoBuilder()
    descriptors(b, 1)
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.sequence_flags = NEEDS
    for iid, n in ((1, "frame"), (2, "layout"), (3, "paint"), (4, "a-much-longer-interned-event-name-for-the-value-bound")):
        en = p.interned_data.event_names.add()
        en.iid, en.name = iid, n
    for iid, n in ((1, "render"), (2, "gfx")):
        ec = p.interned_data.event_categories.add()
        ec.iid, ec.name = iid, n
    an = p.interned_data.debug_annotation_names.add()
    an.iid, an.name = 1, "frame_id"
    sv = p.interned_data.debug_annotation_string_values.add()
    sv.iid, sv.str = 1, b"interned value"
    p.trace_packet_defaults.track_event_defaults.track_uuid = MAIN
    p.trace_packet_defaults.track_event_defaults.extra_counter_track_uuids.append(CPU_TIME)
    # Nested slices on the main thread (defaults give the track), thread
    # time as extra counter values.
    for i in range(3):
        t0 = 2000 + i * 1000
        q = event(b, 1, t0, BEGIN, name_iid=1, cats=[1], extra_counter_values=[5], flow_ids=[900 + i])
        a = q.track_event.debug_annotations.add()
        a.name_iid, a.int_value = 1, i
        a = q.track_event.debug_annotations.add()
        a.name, a.string_value_iid = "label", 1
        a = q.track_event.debug_annotations.add()
        a.name = "shape"
        for k, v in (("w", 640), ("h", 480)):
            e = a.dict_entries.add()
            e.name, e.int_value = k, v
        a = q.track_event.debug_annotations.add()
        a.name = "scales"
        for v in (0.5, 1.0):
            e = a.array_values.add()
            e.double_value = v
        event(b, 1, t0 + 100, BEGIN, name_iid=2, cats=[1, 2], extra_counter_values=[3])
        event(b, 1, t0 + 400, END, extra_counter_values=[2])
        event(b, 1, t0 + 450, INSTANT, name="vsync", cats=["gfx"])
        event(b, 1, t0 + 500, BEGIN, name_iid=3, cats=[2])
        event(b, 1, t0 + 700, END)
        event(b, 1, t0 + 800, END, extra_counter_values=[4])
    # Counters: an absolute one, a double one.
    for i, v in enumerate((4096, 8192, 6144)):
        event(b, 1, 2100 + i * 1000, COUNTER, track=MEM, counter_value=v)
    event(b, 1, 5500, COUNTER, track=MEM, double_counter_value=1.5)
    q = event(b, 1, 5600, INSTANT, name_iid=4, cats=["a-long-category-name-beyond-sixteen-bytes"])
    a = q.track_event.debug_annotations.add()
    a.name, a.string_value = "a-long-annotation-name", "a string value longer than sixteen bytes"
    # A second sequence: the worker thread, its own interning, flows that
    # continue and end the main thread's, and a packet on MONOTONIC.
    q = b.add_packet()
    q.trusted_packet_sequence_id = 2
    q.sequence_flags = CLEARED
    en = q.interned_data.event_names.add()
    en.iid, en.name = 1, "task"
    for i in range(3):
        t0 = 2600 + i * 1000
        event(b, 2, t0, BEGIN, track=WORKER, name_iid=1, flow_ids=[900 + i])
        event(b, 2, t0 + 200, END, track=WORKER, terminating_flow_ids=[900 + i] if i < 2 else [])
    # MONOTONIC 2500 is BOOTTIME 3000 by the snapshot (6:1000, 3:500).
    event(b, 2, 2500, INSTANT, track=WORKER, name="on-monotonic", clock=3)
    # Sequence 1's incremental clock 64 (µs deltas from 2 µs): 4 µs, 6 µs.
    event(b, 1, 2, BEGIN, track=ASYNC, name="request", clock=64)
    event(b, 1, 2, END, track=ASYNC, clock=64)
    return b


def write(name, data):
    with open(f"{out}/{name}", "wb") as f:
        f.write(data)


main = main_trace()
write("builder-tracks.pftrace", main.serialize())

# The same packets in compressed_packets bundles (zlib of a Trace), as
# traced writes them with compression on.
packets = list(main.trace.packet)
z = TraceProtoBuilder()
for i in range(0, len(packets), 16):
    t = pb.Trace()
    t.packet.extend(packets[i:i + 16])
    z.add_packet().compressed_packets = zlib.compress(t.SerializeToString())
write("builder-compressed.pftrace", z.serialize())

# And as zstd_compressed_packets (the zstd CLI's frames; protobuf's python
# package has no zstd).
zs = TraceProtoBuilder()
for i in range(0, len(packets), 16):
    t = pb.Trace()
    t.packet.extend(packets[i:i + 16])
    frame = subprocess.run(["zstd", "-q", "-c", "-19"], input=t.SerializeToString(), stdout=subprocess.PIPE, check=True).stdout
    zs.add_packet().zstd_compressed_packets = frame
write("builder-zstd.pftrace", zs.serialize())

# Negatives.
data = main.serialize()
write("neg-truncated.pftrace", data[: len(data) - 7])


def neg(name, fill):
    b = TraceProtoBuilder()
    fill(b)
    write(name, b.serialize())


def needs_state(b):
    # Sequence 5 never clears its state: its NEEDS packets are counted.
    event(b, 5, 100, BEGIN, name_iid=1, track=1)
    event(b, 5, 200, END, track=1)
    p = b.add_packet()
    p.trusted_packet_sequence_id = 6
    p.sequence_flags = CLEARED
    event(b, 6, 300, INSTANT, name="kept", track=2)
    # A loss on sequence 6: its state is invalid until cleared again.
    p = event(b, 6, 400, INSTANT, name="after-loss", track=2)
    p.previous_packet_dropped = 1


def missing_iid(b):
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.sequence_flags = CLEARED
    en = p.interned_data.event_names.add()
    en.iid, en.name = 1, "known"
    event(b, 1, 100, BEGIN, name_iid=1, track=1)
    event(b, 1, 150, BEGIN, name_iid=7, track=1)
    event(b, 1, 160, END, track=1)
    event(b, 1, 200, END, track=1)


def bad_clock(b):
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.sequence_flags = CLEARED
    event(b, 1, 100, INSTANT, name="no-snapshot", track=1, clock=3)
    event(b, 1, 100, INSTANT, name="boottime", track=1)


def unmatched(b):
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.sequence_flags = CLEARED
    event(b, 1, 100, END, track=1)
    event(b, 1, 200, BEGIN, name="never-ends", track=1)
    event(b, 1, 300, BEGIN, name="closed", track=1)
    event(b, 1, 400, END, track=1)


def legacy(b):
    # The pre-2020 SDK/Chrome layout: a thread_descriptor gives the
    # sequence its thread and a reference time; events carry no track and
    # no packet timestamp, only timestamp_delta_us / timestamp_absolute_us.
    p = b.add_packet()
    p.trusted_packet_sequence_id = 3
    p.incremental_state_cleared = True
    p.thread_descriptor.pid, p.thread_descriptor.tid = 7, 8
    p.thread_descriptor.thread_name = "legacy-main"
    p.thread_descriptor.reference_timestamp_us = 1000
    q = b.add_packet()
    q.trusted_packet_sequence_id = 4
    q.process_descriptor.pid = 7
    q.process_descriptor.cmdline.append("/usr/bin/legacy-app")
    for typ, name, delta in ((BEGIN, "outer", 10), (BEGIN, "inner", 5), (END, None, 20), (END, None, 5)):
        r = b.add_packet()
        r.trusted_packet_sequence_id = 3
        r.sequence_flags = NEEDS
        r.track_event.type = typ
        if name:
            r.track_event.name = name
        r.track_event.timestamp_delta_us = delta
    r = b.add_packet()
    r.trusted_packet_sequence_id = 3
    r.track_event.type = INSTANT
    r.track_event.name = "absolute"
    r.track_event.timestamp_absolute_us = 2000


neg("builder-legacy.pftrace", legacy)


def intern_strings(field, items):
    for iid, v in items:
        e = field.add()
        e.iid, e.str = iid, v


def intern_profile(p, functions=(), paths=(), build_ids=(), mappings=(), frames=(), callstacks=()):
    """Interns profiling data into packet p: mappings (iid, build_id iid,
    [path iids]), frames (iid, function iid, mapping iid, rel_pc),
    callstacks (iid, [frame iids], bottom frame first)."""
    d = p.interned_data
    intern_strings(d.function_names, functions)
    intern_strings(d.mapping_paths, paths)
    intern_strings(d.build_ids, build_ids)
    for iid, bid, comps in mappings:
        m = d.mappings.add()
        m.iid, m.start, m.end = iid, 0x1000 * iid, 0x1000 * iid + 0xfff
        if bid:
            m.build_id = bid
        m.path_string_ids.extend(comps)
    for iid, fn, mp, pc in frames:
        f = d.frames.add()
        f.iid = iid
        if fn:
            f.function_name_id = fn
        if mp:
            f.mapping_id, f.rel_pc = mp, pc
    for iid, ids in callstacks:
        c = d.callstacks.add()
        c.iid = iid
        c.frame_ids.extend(ids)


def perf_sample(b, seq, ts, pid, tid, iid=None, flags=NEEDS, **kw):
    p = b.add_packet()
    p.trusted_packet_sequence_id = seq
    p.sequence_flags = flags
    p.timestamp = ts
    s = p.perf_sample
    s.cpu, s.pid, s.tid = 1, pid, tid
    s.cpu_mode = pb.Profiling.MODE_USER
    s.timebase_count = 1000
    if iid is not None:
        s.callstack_iid = iid
    for k, v in kw.items():
        setattr(s, k, v)
    return p


def perf(b):
    # traced_perf's layout: a clock snapshot, then one sequence per data
    # source whose first packet clears the state; samples carry
    # SEQ_NEEDS_INCREMENTAL_STATE and intern what they first use.
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.timestamp = 1000
    cs = p.clock_snapshot
    cs.primary_trace_clock = pb.BUILTIN_CLOCK_BOOTTIME
    for cid, ts in ((6, 1000), (3, 500)):
        c = cs.clocks.add()
        c.clock_id, c.timestamp = cid, ts
    p = b.add_packet()
    p.trusted_packet_sequence_id = 7
    p.sequence_flags = CLEARED
    p.timestamp = 2000
    intern_profile(p,
                   functions=((1, b"main"), (2, b"work"), (3, b"leaf"), (4, b"recurse")),
                   paths=((1, b"usr"), (2, b"bin"), (3, b"app"), (4, b"lib"), (5, b"libc.so.6")),
                   build_ids=((1, bytes.fromhex("0badc0de00112233")),),
                   mappings=((1, 0, [1, 2, 3]), (2, 0, [4, 5]), (3, 1, [])),
                   frames=((1, 1, 1, 0x100), (2, 2, 1, 0x200), (3, 3, 1, 0x300), (4, 0, 2, 0x1234), (5, 4, 1, 0x400),
                           (6, 0, 3, 0x99), (7, 2, 1, 0x208), (8, 0, 0, 0)),
                   callstacks=((1, [1, 2, 3]), (2, [1, 2, 4]), (3, [1, 5, 5, 5, 3]), (4, [1, 7, 3]), (5, [1, 6]),
                               (6, [8]), (7, [1, 2])))
    ts = 3000
    for pid, tid, stacks in ((100, 101, [1, 1, 1, 2, 3, 4, 7]), (100, 102, [2, 2, 5, 6, 3]), (200, 201, [1, 7, 7])):
        for iid in stacks:
            perf_sample(b, 7, ts, pid, tid, iid)
            ts += 1000
    # A sample whose unwinding stopped early, its stack as unwound.
    perf_sample(b, 7, ts, 100, 101, 7, unwind_error=pb.Profiling.UNWIND_ERROR_MAX_FRAMES_EXCEEDED)
    # Interning on the way: a new frame and callstack in a sample's packet.
    p = perf_sample(b, 7, ts + 1000, 200, 201, 8)
    intern_profile(p, functions=((5, b"late"),), frames=((9, 5, 1, 0x500),), callstacks=((8, [1, 9]),))
    # Data loss: kernel records lost, samples the profiler skipped.
    p = perf_sample(b, 7, ts + 2000, 0, 0, kernel_records_lost=3)
    p.perf_sample.ClearField("pid")
    p.perf_sample.ClearField("tid")
    perf_sample(b, 7, ts + 3000, 100, 101, sample_skipped_reason=pb.PerfSample.PROFILER_SKIP_READ_STAGE)
    perf_sample(b, 7, ts + 4000, 300, 301, sample_skipped_reason=pb.PerfSample.PROFILER_SKIP_NOT_IN_SCOPE)
    p = perf_sample(b, 7, ts + 5000, 0, 0)
    p.perf_sample.producer_event.source_stop_reason = pb.PerfSample.ProducerEvent.PROFILER_STOP_GUARDRAIL


def chrome_sampler(b):
    # Chrome's sampling profiler (TracingSamplerProfiler): a sequence per
    # sampled thread whose first packet clears its state and names the
    # thread with a thread_descriptor and its reference time; samples in
    # StreamingProfilePacket, times in µs deltas from that reference.
    # Native frames are unsymbolized (module + rel_pc, the module's whole
    # path as one component), JS frames are named.
    p = b.add_packet()
    p.trusted_packet_sequence_id = 9
    p.sequence_flags = CLEARED
    td = p.thread_descriptor
    td.pid, td.tid, td.reference_timestamp_us = 300, 301, 5000
    td.thread_name = "CrRendererMain"
    p = b.add_packet()
    p.trusted_packet_sequence_id = 9
    p.sequence_flags = NEEDS
    intern_profile(p,
                   functions=((1, b"onload"), (2, b"compute")),
                   paths=((1, b"/opt/chromium/chrome"),),
                   build_ids=((1, b"5a6b7c8d"),),
                   mappings=((1, 1, [1]),),
                   frames=((1, 0, 1, 0xabc000), (2, 0, 1, 0xabc100), (3, 1, 0, 0), (4, 2, 0, 0)),
                   callstacks=((1, [1, 2, 3]), (2, [1, 2, 3, 4]), (3, [1, 2])))
    s = p.streaming_profile_packet
    s.callstack_iid.extend([1, 2, 1, 3])
    s.timestamp_delta_us.extend([10, 20, 30, 40])
    s.process_priority = 1
    p = b.add_packet()
    p.trusted_packet_sequence_id = 9
    p.sequence_flags = NEEDS
    s = p.streaming_profile_packet
    s.callstack_iid.extend([2, 2, 4])
    s.timestamp_delta_us.extend([5, 5, -1])
    intern_profile(p, callstacks=((4, [1, 2, 3, 4, 4]),))
    # A legacy track event on the same sequence: its delta counts from the
    # samples' last time (5109 µs), as Trace Processor reads it.
    r = b.add_packet()
    r.trusted_packet_sequence_id = 9
    r.sequence_flags = NEEDS
    r.track_event.type = INSTANT
    r.track_event.name = "after-samples"
    r.track_event.timestamp_delta_us = 100


def neg_samples(b):
    # Missing interned ids: a callstack naming a frame never interned, a
    # callstack iid never interned, and one interned before the sequence's
    # state was cleared.
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.sequence_flags = CLEARED
    intern_profile(p, functions=((1, b"kept"),), frames=((1, 1, 0, 0),), callstacks=((1, [1]), (2, [1, 2])))
    perf_sample(b, 1, 100, 10, 11, 1)
    perf_sample(b, 1, 200, 10, 11, 2)
    perf_sample(b, 1, 300, 10, 11, 9)
    p = b.add_packet()
    p.trusted_packet_sequence_id = 1
    p.sequence_flags = CLEARED
    perf_sample(b, 1, 500, 10, 11, 1)
    # A loss on the sequence: samples needing its state are not read.
    p = perf_sample(b, 1, 600, 10, 11, 1)
    p.previous_packet_dropped = 1
    # Streaming samples on a sequence no thread_descriptor named.
    p = b.add_packet()
    p.trusted_packet_sequence_id = 2
    p.sequence_flags = CLEARED
    intern_profile(p, functions=((1, b"orphan"),), frames=((1, 1, 0, 0),), callstacks=((1, [1]),))
    p.streaming_profile_packet.callstack_iid.extend([1, 1])
    p.streaming_profile_packet.timestamp_delta_us.extend([1, 1])


neg("builder-perf.pftrace", perf)
neg("builder-chrome-sampler.pftrace", chrome_sampler)
neg("neg-samples.pftrace", neg_samples)
neg("neg-needs-state.pftrace", needs_state)
neg("neg-missing-iid.pftrace", missing_iid)
neg("neg-clock.pftrace", bad_clock)
neg("neg-unmatched.pftrace", unmatched)
# A packet whose body is not protobuf: a field of wire type 7.
bad = bytearray(main.serialize()[:200])
write("neg-corrupt.pftrace", bytes([0x0A, 0x04, 0x50, 0x01, 0x0F, 0x00]) + bytes(bad))
