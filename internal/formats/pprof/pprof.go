// Package pprof decodes pprof profiles (profile.proto, gzip-compressed as
// runtime/pprof, `go test -cpuprofile` and the pprof tool write them, or
// not) with google/pprof's own profile parser: Go's CPU, heap (allocs),
// goroutine, mutex and block profiles, and pprof files of other
// producers.
//
// A profile holds several sample types (cpu/nanoseconds and
// samples/count; alloc_space/bytes, inuse_objects/count…). One decode
// weighs the rows by one of them, never a sum of several: the profile's
// default sample type, else its last, as pprof does, or the one named by
// the sample_index option. Every type's total is in the summary.
//
//   - A type of time or count (CPU, wall, goroutine, contentions, delay)
//     makes cpu.frames, cpu.edges and cpu.stacks rows in its own unit; the
//     summary says what the weights measure (a mutex delay is not CPU
//     time).
//   - A type of bytes, or the object count paired with one
//     (inuse_objects with inuse_space), makes memory.frames rows with
//     both the bytes and the count of their population: inuse or
//     allocated for Go heap profiles.
//
// Frames are functions, pprof's default granularity. A CPU-family decode
// also writes cpu.lines, the source lines samples were on (pprof -lines):
// one row per (function, file, line) from each Location's Line entries.
// A location with several lines is an inline chain: each inlined
// function (and its line) is a frame of its own, innermost first as
// profile.proto orders them. An unsymbolized location is a frame named by
// its address. Self weight is the innermost frame of the leaf location;
// inclusive weight counts a frame (or line) once per sample, as pprof's
// cum does.
//
// Sample labels (pprof.Do, heap profiles' bytes) are listed in the
// summary per key; rows pool every label value of a frame, as pprof -top
// does, unless the label_series option makes the values of named keys
// series of their own (the thread column).
//
// The profile is read whole (profile.proto is not streamable), so the file
// and its decompressed size are bounded by declared limits before any
// parsing.
//
// It imports formats, table, unit and evidence, and github.com/google/pprof.
package pprof

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"

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
	LimitSeries       = "max_label_series"
	OptionSampleIndex = "sample_index"
	OptionLabelSeries = "label_series"
)

// Spec is the pprof format.
var Spec = func() *formats.Spec {
	s := formats.WithLines(formats.CPUStackProfile(formats.Spec{
		Name:     "pprof",
		Title:    "pprof profile",
		Suffixes: []string{".pb.gz", ".pprof", ".pprof.gz"},
		Sniff:    sniff,
		Limits: []formats.Limit{
			{Name: formats.LimitBytes, Default: 1 << 30, Unit: "bytes", Doc: "bytes of the profile file"},
			{Name: LimitDecompressed, Default: 4 << 30, Unit: "bytes", Doc: "bytes of the decompressed profile.proto"},
			{Name: LimitSamples, Default: 50_000_000, Unit: "count", Doc: "sample records"},
			{Name: LimitLocations, Default: 10_000_000, Unit: "count", Doc: "locations"},
			{Name: LimitSeries, Default: 10_000, Unit: "count", Doc: "distinct label_series values"},
		},
		Options: []param.Param{
			{Name: OptionSampleIndex, Type: param.String,
				Doc: "sample type to weigh rows by, by name (cpu, samples, inuse_space, alloc_objects, delay…) or 0-based index; default: the profile's default sample type, else its last (as pprof -sample_index)"},
			{Name: OptionLabelSeries, Type: param.String,
				Doc: "comma-separated label keys whose values make series of their own (the thread column, as key=value); default: every label value pooled"},
			formats.ValueBytesParam},
		ByContent: true, // a CPU or a heap profile: the sample types tell
		Producer:  "Go runtime/pprof, go test -cpuprofile/-memprofile/-blockprofile/-mutexprofile, pprof",
		Version:   "2",
		Decoder:   formats.DecoderFunc(decode),
	}))
	s.Tables = append(s.Tables, table.MemoryFrames.Schema, table.MemoryStacks.Schema)
	return s
}()

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
			if num == 1 && !valueType(b[:l]) {
				// A Perfetto trace is field 1 repeated too (its packets):
				// a sample_type is a ValueType, two varints.
				return formats.No
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

// valueType says whether b is a whole profile.proto ValueType: only its
// type and unit string indices (fields 1 and 2, varints).
func valueType(b []byte) bool {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 || (tag != 1<<3 && tag != 2<<3) {
			return false
		}
		_, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return false
		}
		b = b[n+m:]
	}
	return true
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	p, err := read(in)
	if err != nil {
		return err
	}
	invalid := validUTF8(p)
	if n := int64(len(p.Sample)); n > in.Limit(LimitSamples) {
		return in.Exceeded(LimitSamples, n)
	}
	if n := int64(len(p.Location)); n > in.Limit(LimitLocations) {
		return in.Exceeded(LimitLocations, n)
	}
	w, err := chooseWeights(p, in)
	if err != nil {
		return err
	}
	if err := wanted(p, w, out); err != nil {
		return err
	}
	keys, err := labelKeys(in)
	if err != nil {
		return err
	}
	opt := aggOptions{
		lines:  w.memory == nil && out.Wants(table.CPULines.Schema),
		edges:  w.memory == nil && out.Wants(table.CPUEdges.Schema),
		stacks: w.memory == nil && out.Wants(table.CPUStacks.Schema),
		series: keys, maxSeries: in.Limit(LimitSeries),
	}
	g, err := aggregate(ctx, p, w, opt, in)
	if err != nil {
		return err
	}
	g.invalidUTF8 = invalid
	return g.emit(in, p, w, opt, out)
}

// wanted refuses a profile whose kind of rows the consumer does not read:
// a memory profile ranked by a CPU operation, or the reverse, names the
// operation that reads it instead of yielding nothing.
func wanted(p *profile.Profile, w *weights, out formats.Sink) error {
	cpu := out.Wants(table.CPUFrames.Schema) || out.Wants(table.CPULines.Schema) || out.Wants(table.CPUEdges.Schema) || out.Wants(table.CPUStacks.Schema)
	mem := out.Wants(table.MemoryFrames.Schema) || out.Wants(table.MemoryStacks.Schema)
	switch {
	case w.memory != nil && !mem && cpu:
		return evidence.Failf(evidence.CodeUnsupportedFormat,
			"sample type %s measures memory, not CPU time or samples: rank this pprof profile with --operation summarize_memory_hotspots (its sample types: %s)",
			w.name, sampleTypes(p))
	case w.memory == nil && mem && !cpu:
		return evidence.Failf(evidence.CodeUnsupportedFormat,
			"sample type %s is not a memory measure: this pprof profile is ranked by the CPU operations (its sample types: %s; a heap profile's are alloc_space, inuse_space…)",
			w.name, sampleTypes(p))
	}
	return nil
}

// read loads the profile within the byte limits; the gzip layer, when
// there is one, is read through the bounded Input.Decompressed.
func read(in *formats.Input) (*profile.Profile, error) {
	if err := in.CheckSize(); err != nil {
		return nil, err
	}
	br := bufio.NewReader(formats.FileReader(in.R))
	var r io.Reader = br
	var over *formats.Decompressed
	if magic, _ := br.Peek(2); bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, in.Typed(err, nil)
		}
		over = in.Decompressed(zr)
		r = over
	}
	data, err := io.ReadAll(r)
	if err != nil {
		var limit error
		if over != nil {
			limit = over.Over
		}
		return nil, in.Typed(err, limit)
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

// weights is what the rows are weighed by: one sample type, and for a
// memory profile the bytes and count pair it belongs to.
type weights struct {
	index int       // the chosen sample type
	name  string    // its type/unit, as the summary states it
	unit  unit.Unit // its unit (CPU rows)
	// memory is set for a sample type of bytes or the count paired with
	// one.
	memory *memoryPair
}

type memoryPair struct {
	bytes, count int     // sample type indexes; count -1 when unpaired
	factor       int64   // converts the bytes type's values to bytes
	population   string  // inuse, allocated, or the bytes type's name
	counted      *string // the count type's name, when paired
}

// sampleIndex finds the sample type requested, by index or name, or
// pprof's default: google/pprof's own rule (the one go tool pprof
// applies, legacy inuse_ prefixes included).
func sampleIndex(p *profile.Profile, in *formats.Input) (int, error) {
	idx, err := p.SampleIndexByName(in.String(OptionSampleIndex))
	if err != nil {
		return 0, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("option %s: %v (the profile's sample types: %s)", OptionSampleIndex, err, sampleTypes(p)),
			Location: evidence.Location{Field: "options." + OptionSampleIndex}}
	}
	return idx, nil
}

// chooseWeights picks the sample type rows are weighed by and decides
// whether they are CPU or memory rows.
func chooseWeights(p *profile.Profile, in *formats.Input) (*weights, error) {
	idx, err := sampleIndex(p, in)
	if err != nil {
		return nil, err
	}
	st := p.SampleType[idx]
	w := &weights{index: idx, name: st.Type + "/" + st.Unit}
	u, uerr := unit.Lookup(st.Unit)
	if m := pairOf(p, idx); m != nil {
		w.memory = m
		return w, nil
	}
	if uerr != nil || (u.Dimension != unit.Time && u.Output != unit.Samples) {
		return nil, evidence.Failf(evidence.CodeUnsupportedFormat,
			"sample type %s is measured in %q, which is neither time, a count nor bytes: flameox does not rank it (its sample types: %s)",
			st.Type, st.Unit, sampleTypes(p))
	}
	w.unit = u
	return w, nil
}

// pairOf is the memory pair of sample type idx: a type of bytes with the
// count of the same population (Go's X_space and X_objects, pprof's space
// and objects), or such a count with its bytes; nil when idx is neither.
func pairOf(p *profile.Profile, idx int) *memoryPair {
	bytesOf := func(i int) (int64, bool) {
		u, err := unit.Lookup(p.SampleType[i].Unit)
		return int64(u.Factor), err == nil && u.Dimension == unit.Memory && u.Factor >= 1
	}
	find := func(name string, bytes bool) int {
		for i, st := range p.SampleType {
			if _, b := bytesOf(i); st.Type == name && b == bytes {
				if !bytes {
					if u, err := unit.Lookup(st.Unit); err != nil || u.Output != unit.Samples {
						continue
					}
				}
				return i
			}
		}
		return -1
	}
	name := p.SampleType[idx].Type
	prefix, kind := name, ""
	if i := strings.LastIndexByte(name, '_'); i >= 0 {
		prefix, kind = name[:i], name[i+1:]
	} else {
		prefix, kind = "", name
	}
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "_" + k
	}
	m := &memoryPair{bytes: -1, count: -1}
	if f, ok := bytesOf(idx); ok {
		m.bytes, m.factor = idx, f
		if kind == "space" {
			m.count = find(join("objects"), false)
		}
	} else if kind == "objects" {
		if m.bytes = find(join("space"), true); m.bytes < 0 {
			return nil
		}
		m.factor, _ = bytesOf(m.bytes)
		m.count = idx
	} else {
		return nil
	}
	switch strings.ToLower(prefix) {
	case "inuse":
		m.population = table.PopulationInuse
	case "alloc":
		m.population = table.PopulationAllocated
	default:
		m.population = p.SampleType[m.bytes].Type
	}
	if m.count >= 0 {
		c := p.SampleType[m.count].Type
		m.counted = &c
	}
	return m
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

// labelKeys reads the label_series option: distinct, non-empty keys.
func labelKeys(in *formats.Input) ([]string, error) {
	s := in.String(OptionLabelSeries)
	if s == "" {
		return nil, nil
	}
	var keys []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  fmt.Sprintf("option %s: an empty label key in %q; give keys separated by commas (phase,worker)", OptionLabelSeries, s),
				Location: evidence.Location{Field: "options." + OptionLabelSeries}}
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}
