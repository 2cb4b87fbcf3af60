package perfetto

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
	"google.golang.org/protobuf/encoding/protowire"
)

// CPU samples inside a trace: PerfSample packets (traced_perf, field 66)
// and StreamingProfilePacket packets (Chrome's sampling profiler, field
// 54). Both name interned callstacks of their sequence (InternedData
// callstacks → frames → function_names, mappings → mapping_paths and
// build_ids, protos/perfetto/trace/profiling/profile_common.proto), which
// are resolved at the sample, as Trace Processor's
// StackProfileSequenceState does: a callstack, frame, mapping or string id
// the sequence never interned leaves the sample unplaced (in its series'
// total, in no frame) and is counted. They become cpu.frames, cpu.edges and
// cpu.stacks through collapsed.Profile, one series per process and thread,
// weighed in samples. Memory grows with the interned profiling data and
// the distinct stacks, never with the samples.

// TracePacket fields of samples.
const (
	fPerfSample      = 66
	fStreamingSample = 54
)

// traceTablesWithCPU are the tables of a Perfetto trace: the trace tables,
// and the CPU tables when it carries samples.
var traceTablesWithCPU = append(slices.Clone(table.TraceTables), table.CPUFrames.Schema, table.CPUEdges.Schema, table.CPUStacks.Schema)

// Kinds of interned ids a sample's stack needs.
const (
	missCallstack = iota
	missFrame
	missFunction
	missMapping
	missPath
	missBuildID
	nMiss
)

var missNames = [nMiss]string{"callstack", "frame", "function_name", "mapping", "mapping_path", "build_id"}

type internedFrame struct {
	function, mapping, relPC uint64
}

type internedMapping struct {
	buildID uint64
	paths   []uint64
}

// seqProfile is a sequence's interned profiling data; nil until the
// sequence interns some, so the many sequences that only write track
// events hold nothing for it.
type seqProfile struct {
	functions, paths, buildIDs map[uint64]string
	mappings                   map[uint64]internedMapping
	frames                     map[uint64]internedFrame
	callstacks                 map[uint64][]uint64
	// stacks caches resolved callstacks (profile frame ids, leaf first).
	// Only successes are kept (an id missing now may be interned later),
	// and the cache is dropped when an interned id is redefined.
	stacks map[uint64][]uint32
}

func newSeqProfile() *seqProfile {
	return &seqProfile{functions: map[uint64]string{}, paths: map[uint64]string{}, buildIDs: map[uint64]string{},
		mappings: map[uint64]internedMapping{}, frames: map[uint64]internedFrame{}, callstacks: map[uint64][]uint64{},
		stacks: map[uint64][]uint32{}}
}

// cpuSamples is what the samples of a trace add up to.
type cpuSamples struct {
	prof *collapsed.Profile

	perfSamples, streamingSamples int64 // samples read (with a callstack or not)
	placed, unplaced              int64
	noCallstack                   int64 // perf samples without callstack_iid
	missing                       [nMiss]int64
	kernelLost                    int64 // PerfSample.kernel_records_lost, summed
	lostRecords                   int64 // packets that carry it
	skipped                       map[int64]int64
	unwindErrors                  map[int64]int64
	producerEvents                int64
	noThread                      int64 // streaming samples on a sequence without a thread_descriptor
	deltaMismatch                 int64 // callstack iids without a timestamp delta
	extraDeltas                   int64
	timeFailed                    int64
	sourceLines                   int64 // interned frames with a source path or line, not kept
	redefined                     int64
	first, last                   int64
	timed                         bool
}

// skipNames are PerfSample.SampleSkipReason's values.
var skipNames = map[int64]string{0: "PROFILER_SKIP_UNKNOWN", 1: "PROFILER_SKIP_READ_STAGE", 2: "PROFILER_SKIP_UNWIND_STAGE",
	3: "PROFILER_SKIP_UNWIND_ENQUEUE", 4: "PROFILER_SKIP_NOT_IN_SCOPE"}

const skipNotInScope = 4

func (c *cpuSamples) any() bool {
	return c.perfSamples+c.streamingSamples+c.lostRecords+c.producerEvents+sumMap(c.skipped) > 0
}

func (c *cpuSamples) profile() *collapsed.Profile {
	if c.prof == nil {
		c.prof = collapsed.NewProfile()
		c.prof.KeepStacks = true
	}
	return c.prof
}

func (c *cpuSamples) at(ts int64) {
	if !c.timed || ts < c.first {
		c.first = ts
	}
	if !c.timed || ts > c.last {
		c.last = ts
	}
	c.timed = true
}

// internedProfile reads one profiling entry of InternedData (field num)
// into the sequence's tables.
func (d *decoder) internedProfile(s *seqState, num protowire.Number, body []byte) error {
	r := s.rareOf()
	if r.prof == nil {
		r.prof = newSeqProfile()
	}
	sp := r.prof
	var iid, a, b, c uint64
	var str []byte
	var list []uint64
	lines := false
	err := fields(body, func(n protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch {
		case n == 1:
			iid = v
		case num == 7 && n == 2 || num == 19 && n == 7: // frame_ids, path_string_ids
			list = appendUints(list, typ, v, body)
		case num == 5 || num == 16 || num == 17: // InternedString
			if n == 2 {
				str = body
			}
		case num == 6: // Frame
			switch n {
			case 2:
				a = v
			case 3:
				b = v
			case 4:
				c = v
			case 5, 6:
				lines = true
			}
		case num == 19 && n == 2: // Mapping.build_id
			a = v
		}
		return nil
	}, nil)
	if err != nil {
		return err
	}
	redefined := false
	switch num {
	case 5, 16, 17:
		m := map[protowire.Number]map[uint64]string{5: sp.functions, 16: sp.buildIDs, 17: sp.paths}[num]
		if old, ok := m[iid]; !ok || old != string(str) {
			redefined = ok
			m[iid] = string(str)
		}
	case 6:
		f := internedFrame{function: a, mapping: b, relPC: c}
		old, ok := sp.frames[iid]
		redefined = ok && old != f
		sp.frames[iid] = f
		if lines {
			d.cpu.sourceLines++
		}
	case 7:
		old, ok := sp.callstacks[iid]
		redefined = ok && !slices.Equal(old, list)
		sp.callstacks[iid] = list
	case 19:
		mp := internedMapping{buildID: a, paths: list}
		old, ok := sp.mappings[iid]
		redefined = ok && (old.buildID != mp.buildID || !slices.Equal(old.paths, mp.paths))
		sp.mappings[iid] = mp
	}
	if redefined {
		d.cpu.redefined++
		clear(sp.stacks)
	}
	return nil
}

// stack resolves a callstack iid of sequence s into profile frame ids,
// leaf first; miss is the kind of interned id that is missing, or -1.
func (d *decoder) stack(s *seqState, iid uint64) (ids []uint32, miss int) {
	if s.rare == nil || s.rare.prof == nil {
		return nil, missCallstack
	}
	sp := s.rare.prof
	if ids, ok := sp.stacks[iid]; ok {
		return ids, -1
	}
	frames, ok := sp.callstacks[iid]
	if !ok {
		return nil, missCallstack
	}
	p := d.cpu.profile()
	ids = make([]uint32, len(frames))
	// frame_ids are bottom (outermost) frame first; the profile wants
	// the leaf first.
	for i, fid := range frames {
		f, miss := d.frame(sp, fid)
		if miss >= 0 {
			return nil, miss
		}
		ids[len(frames)-1-i] = p.Frame(f)
	}
	sp.stacks[iid] = ids
	return ids, -1
}

// frame is the identity of an interned frame: its function and module
// (the mapping's path). A frame without a function name is an unresolved
// frame named by its address in the mapping (rel_pc), as the producer
// wrote it; one without a mapping either is "[unknown]".
func (d *decoder) frame(sp *seqProfile, iid uint64) (collapsed.Frame, int) {
	fr, ok := sp.frames[iid]
	if !ok {
		return collapsed.Frame{}, missFrame
	}
	var f collapsed.Frame
	if fr.mapping != 0 {
		m, ok := sp.mappings[fr.mapping]
		if !ok {
			return f, missMapping
		}
		var sb strings.Builder
		for _, pid := range m.paths {
			p, ok := sp.paths[pid]
			if !ok {
				return f, missPath
			}
			sb.WriteByte('/')
			sb.WriteString(p)
		}
		// Components are joined as Trace Processor joins them: each after
		// a "/"; a producer that writes the whole path as one component
		// (Chrome) would get "//…", so one slash is dropped.
		f.Module = sb.String()
		if strings.HasPrefix(f.Module, "//") {
			f.Module = f.Module[1:]
		}
		if m.buildID != 0 {
			id, ok := sp.buildIDs[m.buildID]
			if !ok {
				return f, missBuildID
			}
			if f.Module == "" && id != "" {
				// A mapping without a path is known by its build id
				// (raw bytes in the trace, hex here).
				f.Module = "build_id:" + hex.EncodeToString([]byte(id))
			}
		}
		f.Module = d.text(f.Module)
	}
	if fr.function != 0 {
		name, ok := sp.functions[fr.function]
		if !ok {
			return f, missFunction
		}
		f.Function = d.text(name)
	}
	if f.Function == "" {
		f.Unresolved = true
		f.Function = "[unknown]"
		if fr.mapping != 0 {
			f.Function = "0x" + strconv.FormatUint(fr.relPC, 16)
		}
	}
	return f, -1
}

// addSample adds one sample of callstack iid to series ser.
func (d *decoder) addSample(s *seqState, ser collapsed.Series, iid uint64) {
	p := d.cpu.profile()
	id := p.SeriesID(ser)
	ids, miss := d.stack(s, iid)
	if miss >= 0 {
		d.cpu.missing[miss]++
		d.cpu.unplaced++
		p.Add(id, nil, 1, 1)
		return
	}
	d.cpu.placed++
	p.Add(id, ids, 1, 1)
}

// perfSample reads a PerfSample at packet time ts (ok false when it has
// none on the trace's clock).
func (d *decoder) perfSample(s *seqState, b []byte, ts int64, timed bool, at int64) error {
	var pid, tid, iid, lost, skip, unwind uint64
	var hasIID, hasLost, hasSkip, hasUnwind, producer bool
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch num {
		case 2:
			pid = v
		case 3:
			tid = v
		case 4:
			iid, hasIID = v, true
		case 16:
			unwind, hasUnwind = v, true
		case 17:
			lost, hasLost = v, true
		case 18:
			skip, hasSkip = v, true
		case 19:
			producer = true
		}
		return nil
	}, d.fieldErr(at, "perf_sample"))
	if err != nil {
		return err
	}
	c := &d.cpu
	switch {
	case producer:
		c.producerEvents++ // a data source event (stop reason), not a sample
		return nil
	case hasLost:
		c.lostRecords++
		c.kernelLost += int64(min(lost, 1<<62))
		return nil
	case hasSkip:
		if c.skipped == nil {
			c.skipped = map[int64]int64{}
		}
		c.skipped[int64(min(skip, 1<<62))]++
		return nil
	}
	c.perfSamples++
	if timed {
		c.at(ts)
	} else {
		c.timeFailed++
	}
	if hasUnwind && unwind != 0 {
		if c.unwindErrors == nil {
			c.unwindErrors = map[int64]int64{}
		}
		c.unwindErrors[int64(min(unwind, 1<<62))]++
	}
	ser := collapsed.Series{Process: strconv.FormatUint(uint64(uint32(pid)), 10), Thread: strconv.FormatUint(uint64(uint32(tid)), 10)}
	if !hasIID || iid == 0 {
		c.noCallstack++
		c.unplaced++
		p := c.profile()
		p.Add(p.SeriesID(ser), nil, 1, 1)
		return nil
	}
	d.addSample(s, ser, iid)
	return nil
}

// streamingSamples reads a StreamingProfilePacket: callstack_iid[i] was
// sampled timestamp_delta_us[i] µs after the sequence's previous time, the
// time its thread_descriptor's reference_timestamp_us starts and its
// legacy track events advance too (Chrome writes it so).
func (d *decoder) streamingSamples(s *seqState, b []byte, at int64) error {
	var iids, deltas []uint64
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch num {
		case 1:
			iids = appendUints(iids, typ, v, body)
		case 2:
			deltas = appendUints(deltas, typ, v, body)
		}
		return nil
	}, d.fieldErr(at, "streaming_profile_packet"))
	if err != nil {
		return err
	}
	c := &d.cpu
	c.streamingSamples += int64(len(iids))
	if s.legacy == nil {
		c.noThread += int64(len(iids))
		return nil
	}
	ser := collapsed.Series{Process: strconv.FormatInt(s.legacy.pid, 10), Thread: strconv.FormatInt(s.legacy.tid, 10)}
	for i, iid := range iids {
		if i >= len(deltas) {
			c.deltaMismatch += int64(len(iids) - i)
			break
		}
		s.legacyUS += int64(deltas[i])
		c.at(s.legacyUS * 1000)
		d.addSample(s, ser, iid)
	}
	if len(deltas) > len(iids) {
		c.extraDeltas += int64(len(deltas) - len(iids))
	}
	return nil
}

// emitCPU writes the CPU tables of the trace's samples; a trace without
// samples has none.
func (d *decoder) emitCPU(out formats.Sink) error {
	c := &d.cpu
	if !c.any() {
		return nil
	}
	p := c.profile()
	var unresolved int64
	for _, f := range p.Frames {
		if f.Unresolved {
			unresolved++
		}
	}
	missing := evidence.Object{}
	var nMissing int64
	for k, n := range c.missing {
		missing[missNames[k]] = n
		nMissing += n
	}
	var lossSkipped int64
	skipped := evidence.Object{}
	for r, n := range c.skipped {
		name := skipNames[r]
		if name == "" {
			name = strconv.FormatInt(r, 10)
		}
		skipped[name] = n
		if r != skipNotInScope {
			lossSkipped += n
		}
	}
	unwind := evidence.Object{}
	for e, n := range c.unwindErrors {
		unwind[strconv.FormatInt(e, 10)] = n
	}
	cov := evidence.Object{"interned_missing": missing, "samples_skipped_by_reason": skipped, "unwind_errors_by_code": unwind,
		"time_unit": "ns", "primary_clock": clockName(d.clk.primary)}
	needs := d.st.needsStateBy[fPerfSample] + d.st.needsStateBy[fStreamingSample]
	o := collapsed.EmitOptions{In: d.in, Complete: true, Coverage: cov, Metrics: map[string]evidence.Metric{
		"perf_samples":                  metric(c.perfSamples, unit.Samples),
		"streaming_samples":             metric(c.streamingSamples, unit.Samples),
		"samples_resolved":              metric(c.placed, unit.Samples),
		"samples_unplaced":              metric(c.unplaced, unit.Samples),
		"samples_without_callstack":     metric(c.noCallstack, unit.Samples),
		"interned_id_missing":           metric(nMissing, unit.Samples),
		"unresolved_frames":             metric(unresolved, "frames"),
		"kernel_records_lost":           metric(c.kernelLost, "records"),
		"samples_skipped":               metric(sumMap(c.skipped), unit.Samples),
		"samples_with_unwind_error":     metric(sumMap(c.unwindErrors), unit.Samples),
		"samples_without_thread":        metric(c.noThread, unit.Samples),
		"sample_packets_needing_state":  metric(needs, "packets"),
		"callstacks_without_time_delta": metric(c.deltaMismatch, unit.Samples),
	}}
	if c.timed {
		o.Metrics["first_sample_time"] = metric(c.first, "ns")
		o.Metrics["last_sample_time"] = metric(c.last, "ns")
	}
	lim := &evidence.Summary{Complete: true}
	d.loss(lim)
	o.Complete = lim.Complete
	note := func(incomplete bool, format string, args ...any) {
		if incomplete {
			o.Complete = false
		}
		o.Limitations = append(o.Limitations, fmt.Sprintf(format, args...))
	}
	note(false, "CPU samples are the trace's perf_sample and streaming_profile_packet samples, one series per process and thread (native ids), each sample weighing one whatever its timebase; frames are (function, mapping path: its build id when it has no path); a named frame's rel_pc and source lines are not kept")
	if unresolved > 0 {
		note(false, "%d frames have no function name: each is named by its rel_pc in its mapping (0x…), or [unknown] without a mapping, and marked unresolved", unresolved)
	}
	if nMissing > 0 {
		var parts []string
		for k, n := range c.missing {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, missNames[k]))
			}
		}
		note(true, "%d samples name an interned id their sequence never defined (or cleared: %s; coverage.interned_missing): they count in their series' total but in no frame", nMissing, strings.Join(parts, ", "))
	}
	if c.noCallstack > 0 {
		note(true, "%d perf samples carry no callstack_iid: they count in their series' total but in no frame", c.noCallstack)
	}
	if c.kernelLost > 0 {
		note(true, "the kernel lost %d perf records (%d perf_sample packets state kernel_records_lost): those samples are not in the profile", c.kernelLost, c.lostRecords)
	}
	if n := sumMap(c.skipped); n > 0 {
		note(lossSkipped > 0, "%d perf samples were skipped by the profiler (sample_skipped_reason; coverage.samples_skipped_by_reason; PROFILER_SKIP_NOT_IN_SCOPE is outside the recorded scope, not a loss): not in the profile", n)
	}
	if n := sumMap(c.unwindErrors); n > 0 {
		note(false, "%d perf samples state an unwind error (coverage.unwind_errors_by_code): their stacks are what was unwound and may lack outer frames", n)
	}
	if c.noThread > 0 {
		note(true, "%d streaming_profile_packet samples are on a sequence no thread_descriptor named: their thread is unknown, not in the profile", c.noThread)
	}
	if c.deltaMismatch > 0 {
		note(true, "%d streaming_profile_packet callstacks have no timestamp_delta_us: not in the profile", c.deltaMismatch)
	}
	if c.extraDeltas > 0 {
		note(false, "%d streaming_profile_packet timestamp deltas have no callstack: ignored", c.extraDeltas)
	}
	if needs > 0 {
		note(true, "%d sample packets need their sequence's incremental state where it was lost or never set: not read", needs)
	}
	if c.timeFailed > 0 {
		note(false, "%d perf samples have no time on the trace's clock: they are in the profile, not in first/last_sample_time", c.timeFailed)
	}
	if c.sourceLines > 0 {
		note(false, "%d interned frames carry a source path or line: not used, frames are functions", c.sourceLines)
	}
	if c.redefined > 0 {
		note(false, "%d interned profiling ids were defined again with other content: later samples use the new definition", c.redefined)
	}
	if c.producerEvents > 0 {
		note(false, "%d perf_sample packets are producer events (data source stopped), not samples", c.producerEvents)
	}
	o.Limitations = append(o.Limitations, lim.Limitations...)
	return p.Emit(out, o)
}
