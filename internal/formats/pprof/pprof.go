// Package pprof decodes pprof profiles (profile.proto, gzip-compressed as
// runtime/pprof, `go test -cpuprofile` and the pprof tool write them)
// into cpu.frames and cpu.edges, with google/pprof's own profile parser.
//
// Frames are functions, pprof's default granularity: an inlined call is a
// frame of its own, an unsymbolized location a frame named by its address.
// Weights are the values of one sample type (pprof's -sample_index; by
// default the profile's default sample type, else its last), in that
// type's unit; inclusive weight counts a frame once per sample, as pprof's
// cum does. Only time and count sample types are CPU evidence: a memory
// profile is refused, not ranked as time.
//
// The profile is read whole (profile.proto is not streamable), so the file
// and its decompressed size are bounded by declared limits before any
// parsing.
//
// It imports formats, table, unit and evidence, and github.com/google/pprof.
package pprof

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Limit and option names.
const (
	LimitDecompressed = formats.LimitDecompressed
	LimitSamples      = "max_samples"
	LimitLocations    = "max_locations"
	OptionSampleIndex = "sample_index"
)

// Spec is the pprof format.
var Spec = formats.CPUStackProfile(formats.Spec{
	Name:     "pprof",
	Title:    "pprof profile",
	Suffixes: []string{".pb.gz", ".pprof", ".pprof.gz"},
	Sniff:    sniff,
	Limits: []formats.Limit{
		{Name: formats.LimitBytes, Default: 1 << 30, Unit: "bytes", Doc: "bytes of the profile file"},
		{Name: LimitDecompressed, Default: 4 << 30, Unit: "bytes", Doc: "bytes of the decompressed profile.proto"},
		{Name: LimitSamples, Default: 50_000_000, Unit: "count", Doc: "sample records"},
		{Name: LimitLocations, Default: 10_000_000, Unit: "count", Doc: "locations"},
	},
	Options: []param.Param{{Name: OptionSampleIndex, Type: param.String,
		Doc: "sample type to weigh frames by, by name (cpu, samples…) or 0-based index; default: the profile's default sample type, else its last (as pprof -sample_index)"},
		formats.ValueBytesParam},
	Producer: "Go runtime/pprof, go test -cpuprofile, pprof",
	Version:  "1",
	Decoder:  formats.DecoderFunc(decode),
})

var gzipMagic = []byte{0x1f, 0x8b}

// sniff recognizes a gzip stream whose content reads as profile.proto:
// top-level fields of its numbers (1–14) with its wire types (varint or
// length-delimited), among them sample types or strings. Uncompressed
// profile.proto has no magic; it is found by suffix only.
func sniff(prefix []byte) formats.Verdict {
	if len(prefix) < 2 {
		return formats.NeedMore
	}
	if !bytes.HasPrefix(prefix, gzipMagic) {
		return formats.No
	}
	zr, err := gzip.NewReader(bytes.NewReader(prefix))
	if err != nil {
		return formats.No
	}
	head := make([]byte, 4096)
	n, _ := io.ReadFull(zr, head)
	return sniffProto(head[:n])
}

// sniffProto walks top-level protobuf fields of a profile.proto prefix.
func sniffProto(b []byte) formats.Verdict {
	fields, named := 0, false
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			break // cut by the prefix
		}
		b = b[n:]
		num, wire := tag>>3, tag&7
		if num < 1 || num > 14 {
			return formats.No
		}
		switch wire {
		case 0:
			if _, n = binary.Uvarint(b); n <= 0 {
				b = nil
				continue
			}
			b = b[n:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 {
				b = nil
				continue
			}
			b = b[n:]
			if l > uint64(len(b)) {
				b = nil // the field runs past the prefix
				fields++
				continue
			}
			b = b[l:]
		default:
			return formats.No
		}
		fields++
		named = named || num == 1 || num == 6
	}
	switch {
	case fields >= 3 && named:
		return formats.Yes
	case fields < 3 && len(b) == 0:
		return formats.NeedMore
	}
	return formats.No
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	p, err := read(in)
	if err != nil {
		return err
	}
	if n := int64(len(p.Sample)); n > in.Limit(LimitSamples) {
		return in.Exceeded(LimitSamples, n)
	}
	if n := int64(len(p.Location)); n > in.Limit(LimitLocations) {
		return in.Exceeded(LimitLocations, n)
	}
	idx, u, err := sampleIndex(p, in)
	if err != nil {
		return err
	}
	g, err := aggregate(ctx, p, idx, out.Wants(table.CPUEdges.Schema), out.Wants(table.CPUStacks.Schema))
	if err != nil {
		return err
	}
	return g.emit(in, p, idx, u, out)
}

// read loads the profile within the byte limits.
func read(in *formats.Input) (*profile.Profile, error) {
	if err := in.CheckSize(); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(in.R, in.Limit(formats.LimitBytes)+1))
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read the profile")
	}
	if bytes.HasPrefix(data, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeDecodeFailure, err, "pprof: gzip")
		}
		max := in.Limit(LimitDecompressed)
		data, err = io.ReadAll(io.LimitReader(zr, max+1))
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeDecodeFailure, err, "pprof: gzip")
		}
		if int64(len(data)) > max {
			return nil, in.Exceeded(LimitDecompressed, nil)
		}
	}
	p, err := profile.ParseUncompressed(data)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeDecodeFailure, err, "not a valid profile.proto")
	}
	if len(p.SampleType) == 0 {
		return nil, evidence.Failf(evidence.CodeDecodeFailure, "not a pprof profile: it declares no sample types")
	}
	if err := p.CheckValid(); err != nil {
		return nil, evidence.Wrap(evidence.CodeDecodeFailure, err, "inconsistent profile")
	}
	return p, nil
}

// sampleIndex picks the sample type frames are weighed by and its unit.
func sampleIndex(p *profile.Profile, in *formats.Input) (int, unit.Unit, error) {
	idx := len(p.SampleType) - 1
	want := in.String(OptionSampleIndex)
	if !in.Given(OptionSampleIndex) && p.DefaultSampleType != "" {
		want = p.DefaultSampleType
	}
	if want != "" {
		idx = -1
		for i, st := range p.SampleType {
			if st.Type == want {
				idx = i
			}
		}
		if n, err := strconv.Atoi(want); idx < 0 && err == nil && n >= 0 && n < len(p.SampleType) {
			idx = n
		}
		if idx < 0 {
			return 0, unit.Unit{}, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  fmt.Sprintf("the profile has no sample type %q (it has: %s)", want, sampleTypes(p)),
				Location: evidence.Location{Field: "options." + OptionSampleIndex}}
		}
	}
	st := p.SampleType[idx]
	u, err := unit.Lookup(st.Unit)
	if err != nil || (u.Dimension != unit.Time && u.Output != unit.Samples) {
		return 0, unit.Unit{}, evidence.Failf(evidence.CodeUnsupportedFormat,
			"sample type %s is measured in %q, not time or samples: this pprof profile is not CPU evidence (its sample types: %s)",
			st.Type, st.Unit, sampleTypes(p))
	}
	return idx, u, nil
}

func sampleTypes(p *profile.Profile) string {
	var b bytes.Buffer
	for i, st := range p.SampleType {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s/%s", st.Type, st.Unit)
	}
	return b.String()
}

// frameKey is a frame's identity: a function of a binary.
type frameKey struct {
	name, file string
	start      int64
	module     string
	address    uint64 // unsymbolized locations only
}

type frame struct {
	key        frameKey
	self, incl int64
	unresolved bool
	lastSample int
}

type edgeKey struct{ caller, callee int32 }

type edge struct {
	weight, self int64
	lastSample   int
}

type graph struct {
	frames    []frame
	index     map[frameKey]int32
	edges     map[edgeKey]*edge
	order     []edgeKey // first-seen order, so output is deterministic
	total     int64
	noStack   int64
	locFrames map[uint64][]int32 // location id → its frames, leaf first
	// Distinct stacks (frame indexes, leaf first, as a string key) and
	// their weights, in first-seen order; only when cpu.stacks is wanted.
	stacks     map[string]int
	stackOrder []stackWeight
}

type stackWeight struct {
	frames []int32 // leaf first
	weight int64
}

func (g *graph) intern(k frameKey, unresolved bool) int32 {
	if i, ok := g.index[k]; ok {
		return i
	}
	i := int32(len(g.frames))
	g.frames = append(g.frames, frame{key: k, unresolved: unresolved, lastSample: -1})
	g.index[k] = i
	return i
}

// framesOf expands a location into its frames, the innermost inlined
// function first, as profile.proto orders Location.Line.
func (g *graph) framesOf(loc *profile.Location) []int32 {
	if fs, ok := g.locFrames[loc.ID]; ok {
		return fs
	}
	module := ""
	if loc.Mapping != nil {
		module = loc.Mapping.File
	}
	var fs []int32
	for _, l := range loc.Line {
		fn := l.Function
		fs = append(fs, g.intern(frameKey{name: fn.Name, file: fn.Filename, start: fn.StartLine, module: module}, false))
	}
	if len(fs) == 0 {
		fs = append(fs, g.intern(frameKey{name: fmt.Sprintf("0x%x", loc.Address), module: module, address: loc.Address}, true))
	}
	g.locFrames[loc.ID] = fs
	return fs
}

func aggregate(ctx context.Context, p *profile.Profile, idx int, edges, stacks bool) (*graph, error) {
	g := &graph{index: map[frameKey]int32{}, edges: map[edgeKey]*edge{}, locFrames: map[uint64][]int32{}}
	if stacks {
		g.stacks = map[string]int{}
	}
	var stack []int32
	var key []byte
	for si, s := range p.Sample {
		if si&0xFFFF == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		v := s.Value[idx]
		g.total += v
		stack = stack[:0]
		for _, loc := range s.Location {
			stack = append(stack, g.framesOf(loc)...)
		}
		if len(stack) == 0 {
			g.noStack += v
			continue
		}
		g.frames[stack[0]].self += v
		if stacks {
			key = key[:0]
			for _, fi := range stack {
				key = binary.LittleEndian.AppendUint32(key, uint32(fi))
			}
			if j, ok := g.stacks[string(key)]; ok {
				g.stackOrder[j].weight += v
			} else {
				g.stacks[string(key)] = len(g.stackOrder)
				g.stackOrder = append(g.stackOrder, stackWeight{frames: slices.Clone(stack), weight: v})
			}
		}
		for i, fi := range stack {
			f := &g.frames[fi]
			if f.lastSample != si { // once per sample, however deep the recursion
				f.lastSample = si
				f.incl += v
			}
			if !edges || i+1 == len(stack) {
				continue
			}
			k := edgeKey{caller: stack[i+1], callee: fi}
			e := g.edges[k]
			if e == nil {
				e = &edge{lastSample: -1}
				g.edges[k] = e
				g.order = append(g.order, k)
			}
			if e.lastSample != si {
				e.lastSample = si
				e.weight += v
			}
			if i == 0 {
				e.self += v
			}
		}
	}
	return g, nil
}

func frameID(k frameKey) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s\x00%x", k.name, k.file, k.start, k.module, k.address)
	return "pprof:" + hex.EncodeToString(h.Sum(nil)[:8])
}

func line(n int64) int64 {
	if n <= 0 {
		return -1 // profile.proto writes 0 for an unknown line
	}
	return n
}

func (g *graph) emit(in *formats.Input, p *profile.Profile, idx int, u unit.Unit, out formats.Sink) error {
	ids := make([]string, len(g.frames))
	tw, err := out.Begin(table.CPUFrames.HeaderBased(u.Name, 1))
	if err != nil {
		return err
	}
	var row table.Frame
	vals := in.Values()
	for i := range g.frames {
		f := &g.frames[i]
		ids[i] = frameID(f.key)
		sym := table.Symbolized
		switch {
		case f.unresolved:
			sym = table.Unresolved
		case f.key.name == "":
			sym = table.Anonymous
		}
		row = table.Frame{
			FrameSite: table.FrameSite{
				FrameID:       ids[i],
				Function:      vals.Bound(f.key.name),
				File:          table.NonEmpty(vals.Bound(f.key.file)),
				Line:          line(f.key.start),
				Column:        -1,
				Module:        table.NonEmpty(vals.Bound(f.key.module)),
				Symbolization: sym,
			},
			SelfWeight:      float64(f.self),
			InclusiveWeight: float64(f.incl),
		}
		if err := tw.Row(&row); err != nil {
			return err
		}
	}
	fs := g.summary(p, idx, u, int64(len(g.frames)))
	vals.Summarize(fs)
	if err := tw.End(fs); err != nil {
		return err
	}
	if out.Wants(table.CPUEdges.Schema) {
		if err := g.emitEdges(in, p, idx, u, out, ids); err != nil {
			return err
		}
	}
	return g.emitStacks(p, idx, u, out, ids)
}

// emitStacks writes the cpu.stacks table, when it is wanted.
func (g *graph) emitStacks(p *profile.Profile, idx int, u unit.Unit, out formats.Sink, ids []string) error {
	if g.stacks != nil {
		sw, err := out.Begin(table.CPUStacks.Header(u.Name))
		if err != nil {
			return err
		}
		for _, st := range g.stackOrder {
			frames := make([]string, len(st.frames))
			for i, fi := range st.frames {
				frames[len(frames)-1-i] = ids[fi]
			}
			if err := sw.Row(&table.Stack{Frames: frames, Weight: float64(st.weight)}); err != nil {
				return err
			}
		}
		return sw.End(g.summary(p, idx, u, int64(len(g.stackOrder))))
	}
	return nil
}

// emitEdges writes the cpu.edges table.
func (g *graph) emitEdges(in *formats.Input, p *profile.Profile, idx int, u unit.Unit, out formats.Sink, ids []string) error {
	ew, err := out.Begin(table.CPUEdges.HeaderBased(u.Name, 1))
	if err != nil {
		return err
	}
	var er table.Edge
	vals := in.Values()
	for _, k := range g.order {
		e := g.edges[k]
		caller, callee := &g.frames[k.caller].key, &g.frames[k.callee].key
		er = table.Edge{CallerID: ids[k.caller], CallerFunction: vals.Bound(caller.name), CallerFile: table.NonEmpty(vals.Bound(caller.file)), CallerLine: line(caller.start),
			CalleeID: ids[k.callee], CalleeFunction: vals.Bound(callee.name), CalleeFile: table.NonEmpty(vals.Bound(callee.file)), CalleeLine: line(callee.start),
			Weight: table.Some(float64(e.weight)), SelfWeight: table.Some(float64(e.self))}
		if err := ew.Row(&er); err != nil {
			return err
		}
	}
	s := g.summary(p, idx, u, int64(len(g.order)))
	s.Limit("sampled caller edges are weights, not invocation counts")
	vals.Summarize(s)
	return ew.End(s)
}

func (g *graph) summary(p *profile.Profile, idx int, u unit.Unit, rows int64) *evidence.Summary {
	st := p.SampleType[idx]
	s := &evidence.Summary{RowsObserved: rows, Complete: true,
		Metrics: map[string]evidence.Metric{
			table.MetricTotalWeight: {Value: g.total, Unit: u.Name},
			table.MetricSamples:     {Value: int64(len(p.Sample)), Unit: unit.Samples},
			"samples_without_stack": {Value: g.noStack, Unit: u.Name},
			"sample_type":           {Value: st.Type + "/" + st.Unit},
			"functions":             {Value: int64(len(p.Function)), Unit: "count"},
			"locations":             {Value: int64(len(p.Location)), Unit: "count"},
		},
		Limitations: []string{
			"frames are functions (pprof's default granularity); line-level attribution is not kept",
			"inclusive weight counts a frame once per sample, as pprof's cum does",
			"sample labels are not series dimensions: all samples form one series",
		}}
	if p.DurationNanos > 0 {
		s.Metrics["profile_duration"] = evidence.Metric{Value: float64(p.DurationNanos) * 1e-9, Unit: unit.Seconds}
	}
	if p.PeriodType != nil && p.Period > 0 {
		s.Metrics["period"] = evidence.Metric{Value: p.Period, Unit: p.PeriodType.Unit}
	}
	if g.noStack > 0 {
		s.Limit("some samples have no stack: their weight counts in total_weight but in no frame")
	}
	return s
}
