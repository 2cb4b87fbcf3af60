package pprof

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

const testdata = "../../../testdata/pprof"

func fixture(name string) string { return filepath.Join(testdata, name) }

func decodeFile(t *testing.T, name string, opts evidence.Object) *formatstest.Sink {
	t.Helper()
	s, err := formatstest.DecodeFile(t, Spec, fixture(name), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// topLine is one row of `go tool pprof -top -unit=ns`: flat, cum, name.
var topLine = regexp.MustCompile(`^\s*(\d+)(?:ns)?\s+[\d.]+%\s+[\d.]+%\s+(\d+)(?:ns)?\s+[\d.]+%\s+(.+)$`)

// pprofTop runs the native reader, pprof itself, and returns flat and cum
// per function name (pprof lists an inlined instance apart; frames here
// are functions, so instances of one name are summed) and the total.
func pprofTop(t *testing.T, path, sampleIndex string) (map[string][2]int64, int64) {
	t.Helper()
	out, err := exec.Command("go", "tool", "pprof", "-top", "-unit=ns", "-nodecount=1000000", "-sample_index="+sampleIndex, path).Output()
	if err != nil {
		t.Fatalf("go tool pprof: %v", err)
	}
	got := map[string][2]int64{}
	var total int64
	for _, l := range strings.Split(string(out), "\n") {
		if m := regexp.MustCompile(`of (\d+)(?:ns)? total`).FindStringSubmatch(l); m != nil {
			total, _ = strconv.ParseInt(m[1], 10, 64)
		}
		m := topLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		flat, _ := strconv.ParseInt(m[1], 10, 64)
		cum, _ := strconv.ParseInt(m[2], 10, 64)
		name := strings.TrimSuffix(m[3], " (inline)")
		w := got[name]
		got[name] = [2]int64{w[0] + flat, w[1] + cum}
	}
	if len(got) == 0 {
		t.Fatalf("no rows in pprof's output:\n%s", out)
	}
	return got, total
}

// Per-function self and inclusive weights, and the total, equal what pprof
// reports for the same profile, for each sample type.
func TestMatchesPprofTop(t *testing.T) {
	for _, c := range []struct{ index, unit string }{{"cpu", "ns"}, {"samples", "samples"}} {
		t.Run(c.index, func(t *testing.T) {
			want, total := pprofTop(t, fixture("cpu.pb.gz"), c.index)
			s := decodeFile(t, "cpu.pb.gz", evidence.Object{OptionSampleIndex: c.index})
			frames := s.Table(table.CPUFrames.Name)
			if u, _ := frames.Header.Column("self_weight"); u.Unit != c.unit {
				t.Errorf("weight unit %q, want %q", u.Unit, c.unit)
			}
			got := map[string][2]int64{}
			for _, r := range frames.Rows {
				name := r["function"].(string)
				self, _ := evidence.AsInt(r["self_weight"])
				incl, _ := evidence.AsInt(r["inclusive_weight"])
				w := got[name]
				got[name] = [2]int64{w[0] + self, w[1] + incl}
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: flat/cum %v, pprof says %v", name, got[name], w)
				}
			}
			for name, w := range got {
				if _, ok := want[name]; !ok && (w[0] != 0 || w[1] != 0) {
					t.Errorf("%s has weight %v that pprof does not show", name, w)
				}
			}
			if tw, _ := evidence.AsInt(frames.Summary.Metrics[table.MetricTotalWeight].Value); tw != total {
				t.Errorf("total_weight %d, pprof's total %d", tw, total)
			}
			if !frames.Summary.Complete {
				t.Error("a whole profile decoded as incomplete")
			}
		})
	}
}

// Caller edges are consistent with the frames: the callee's self weight
// under all its callers, plus the samples where it is the root, is its
// self weight.
func TestEdgesAgreeWithFrames(t *testing.T) {
	s := decodeFile(t, "cpu.pb.gz", nil)
	selfOf := map[string]int64{}
	for _, r := range s.Table(table.CPUFrames.Name).Rows {
		n, _ := evidence.AsInt(r["self_weight"])
		selfOf[r["frame_id"].(string)] = n
	}
	under := map[string]int64{}
	for _, r := range s.Table(table.CPUEdges.Name).Rows {
		n, _ := evidence.AsInt(r["self_weight"])
		under[r["callee_id"].(string)] += n
		if w, _ := evidence.AsInt(r["weight"]); w < n {
			t.Errorf("edge %v→%v: inclusive %d below self %d", r["caller_function"], r["callee_function"], w, n)
		}
	}
	for id, n := range under {
		if n > selfOf[id] {
			t.Errorf("frame %s: %d self weight under callers, %d in all", id, n, selfOf[id])
		}
	}
}

func TestDetection(t *testing.T) {
	b, err := os.ReadFile(fixture("cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if v := sniff(b[:min(len(b), formats.SniffBytes)]); v != formats.Yes {
		t.Fatalf("sniff(cpu profile) = %d", v)
	}
	var other bytes.Buffer
	zw := gzip.NewWriter(&other)
	zw.Write([]byte(`{"a": [1, 2, 3]}`))
	zw.Close()
	if v := sniff(other.Bytes()); v != formats.No {
		t.Errorf("sniff(gzipped JSON) = %d", v)
	}
	if v := sniff([]byte("\x0a\x04\x08\x01\x10\x02")); v != formats.No {
		t.Errorf("sniff(raw protobuf) = %d; raw profile.proto is found by suffix only", v)
	}
	// A gzip'd Perfetto trace is field 1 repeated too: its packets are
	// not sample types, so pprof does not claim it (every pprof fixture
	// still is claimed: TestFixturesDetected).
	for _, name := range []string{"chromium-startup.pftrace.gz", "android13-system.perfetto-trace.gz"} {
		b, err := os.ReadFile(filepath.Join(testdata, "..", "perfetto", name))
		if err != nil {
			t.Fatal(err)
		}
		if v := sniff(b[:min(len(b), formats.SniffBytes)]); v != formats.No {
			t.Errorf("sniff(%s) = %d, want No", name, v)
		}
	}
}

// TestFixturesDetected: every gzip'd profile under testdata/pprof is
// claimed by content.
func TestFixturesDetected(t *testing.T) {
	paths, err := filepath.Glob(fixture("*.pb.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if v := sniff(b[:min(len(b), formats.SniffBytes)]); v != formats.Yes {
			t.Errorf("sniff(%s) = %d, want Yes", filepath.Base(p), v)
		}
	}
}

// A heap profile measures bytes: it makes memory rows, and a consumer
// that reads only CPU rows is told which operation reads it.
func TestMemoryProfile(t *testing.T) {
	s := decodeFile(t, "allocs.pb.gz", nil)
	if len(s.Tables) != 2 || s.Tables[0].Header.Name != table.MemoryFrames.Name || s.Tables[1].Header.Name != table.MemoryStacks.Name {
		t.Fatalf("tables %v", s.Tables)
	}
	art, err := formats.ArtifactFromPath(fixture("allocs.pb.gz"), "explicit")
	if err != nil {
		t.Fatal(err)
	}
	err = formats.Run(context.Background(), Spec, art, nil, nil, &formatstest.Sink{Only: []string{table.CPUFrames.Name, table.CPUEdges.Name}})
	if evidence.CodeOf(err) != evidence.CodeUnsupportedFormat || !strings.Contains(err.Error(), "summarize_memory_hotspots") {
		t.Fatalf("allocs profile ranked as CPU: %v", err)
	}
	art, _ = formats.ArtifactFromPath(fixture("cpu.pb.gz"), "explicit")
	err = formats.Run(context.Background(), Spec, art, nil, nil, &formatstest.Sink{Only: []string{table.MemoryFrames.Name}})
	if evidence.CodeOf(err) != evidence.CodeUnsupportedFormat {
		t.Fatalf("CPU profile ranked as memory: %v", err)
	}
}

func TestUnknownSampleIndex(t *testing.T) {
	_, err := formatstest.DecodeFile(t, Spec, fixture("cpu.pb.gz"), nil, evidence.Object{OptionSampleIndex: "wall"})
	if evidence.CodeOf(err) != evidence.CodeInvalidArgument || !strings.Contains(err.Error(), "cpu/nanoseconds") {
		t.Fatalf("sample_index wall: %v", err)
	}
}

func TestLimits(t *testing.T) {
	for _, lim := range []string{formats.LimitBytes, LimitDecompressed, LimitSamples, LimitLocations} {
		_, err := formatstest.DecodeFile(t, Spec, fixture("cpu.pb.gz"), map[string]int64{lim: 10}, nil)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded {
			t.Fatalf("%s=10: %v", lim, err)
		}
		r, _ := f.Details["limit"].(evidence.Object)
		if r["name"] != lim || r["value"] != int64(10) {
			t.Errorf("%s: receipt %v", lim, f.Details)
		}
	}
}

func TestMalformed(t *testing.T) {
	b, err := os.ReadFile(fixture("cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	raw := gunzip(t, b)
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"truncated-gzip.pb.gz": b[:len(b)/2],
		"truncated.pprof":      raw[:len(raw)/2],
		"text.pprof":           []byte("not a profile at all\n"),
		"empty.pprof":          {},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := formatstest.DecodeFile(t, Spec, p, nil, nil); evidence.CodeOf(err) != evidence.CodeDecodeFailure {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// A consumer that declines caller edges gets no edge table.
func TestDeclinedEdges(t *testing.T) {
	art, err := formats.ArtifactFromPath(fixture("cpu.pb.gz"), "explicit")
	if err != nil {
		t.Fatal(err)
	}
	s := &formatstest.Sink{Only: []string{table.CPUFrames.Name}}
	if err := formats.Run(context.Background(), Spec, art, nil, nil, s); err != nil {
		t.Fatal(err)
	}
	if len(s.Tables) != 1 || s.Tables[0].Header.Name != table.CPUFrames.Name {
		t.Fatalf("tables %d", len(s.Tables))
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"cpu.pb.gz", "allocs.pb.gz", "cpu-labels.pb.gz", "heap-allocs.pb.gz", "block.pb.gz", "mutex.pb.gz", "goroutine.pb.gz"} {
		b, err := os.ReadFile(fixture(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(gunzip(f, b))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/virtual/fuzz.pprof", Size: int64(len(data))},
			bytes.NewReader(data), map[string]int64{LimitDecompressed: 1 << 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = Spec.Decoder.Decode(context.Background(), in, &formatstest.Sink{})
		var fl *evidence.Failure
		if err != nil && (!errors.As(err, &fl) || fl.Code == evidence.CodeInternal) {
			t.Fatalf("untyped or internal failure: %v", err)
		}
		// The label-series path too.
		in, err = formatstest.Input(Spec, &evidence.Artifact{Path: "/virtual/fuzz.pprof", Size: int64(len(data))},
			bytes.NewReader(data), map[string]int64{LimitDecompressed: 1 << 20, LimitSeries: 64},
			evidence.Object{OptionLabelSeries: "phase,role,bytes"})
		if err != nil {
			t.Fatal(err)
		}
		err = Spec.Decoder.Decode(context.Background(), in, &formatstest.Sink{})
		if err != nil && (!errors.As(err, &fl) || fl.Code == evidence.CodeInternal) {
			t.Fatalf("label_series: untyped or internal failure: %v", err)
		}
	})
}

// grown is a fixture with its samples repeated n times, uncompressed: a
// large profile of a real shape (pprof -top does not merge samples, nor
// does the decoder).
func grown(b testing.TB, name string, n int) []byte {
	b.Helper()
	raw, err := os.ReadFile(fixture(name))
	if err != nil {
		b.Fatal(err)
	}
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	orig := p.Sample
	for i := 1; i < n; i++ {
		for _, s := range orig {
			c := *s
			c.Value = slices.Clone(s.Value)
			p.Sample = append(p.Sample, &c)
		}
	}
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// discardOnly is Discard for a consumer that reads only some tables.
type discardOnly struct {
	formatstest.Discard
	only []*table.Schema
}

func (d discardOnly) Wants(s *table.Schema) bool { return slices.Contains(d.only, s) }

func benchDecode(b *testing.B, data []byte, opts evidence.Object) {
	benchDecodeInto(b, data, opts, formatstest.Discard{})
}

// benchDecodeOnly decodes for a consumer of the given tables only.
func benchDecodeOnly(b *testing.B, data []byte, only ...*table.Schema) {
	benchDecodeInto(b, data, nil, discardOnly{only: only})
}

func benchDecodeInto(b *testing.B, data []byte, opts evidence.Object, sink formats.Sink) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/virtual/bench.pprof", Size: int64(len(data))}, bytes.NewReader(data), nil, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := Spec.Decoder.Decode(context.Background(), in, sink); err != nil {
			b.Fatal(err)
		}
	}
}

// The gzip'd CPU profile as runtime/pprof wrote it.
func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile(fixture("cpu.pb.gz"))
	if err != nil {
		b.Fatal(err)
	}
	benchDecode(b, data, nil)
}

// A labelled CPU profile grown to ~100k samples: every table (functions
// and source lines), functions only, and label series.
func BenchmarkDecodeLarge(b *testing.B) {
	data := grown(b, "cpu-labels.pb.gz", 1000)
	b.Run("frames and lines", func(b *testing.B) { benchDecode(b, data, nil) })
	b.Run("functions only", func(b *testing.B) { benchDecodeOnly(b, data, table.CPUFrames.Schema) })
	b.Run("label_series", func(b *testing.B) { benchDecode(b, data, evidence.Object{OptionLabelSeries: "phase,worker"}) })
}

// A heap profile grown to ~100k samples, as memory.frames.
func BenchmarkDecodeHeap(b *testing.B) {
	benchDecode(b, grown(b, "heap-allocs.pb.gz", 300), nil)
}

// max_value_bytes bounds every string of a row (the shared formats.Values
// bound): file paths and runtime names are cut at 16 bytes, marked,
// and the tables say they are incomplete.
func TestValueBound(t *testing.T) {
	s := decodeFile(t, "cpu.pb.gz", evidence.Object{formats.OptionValueBytes: param.FlagText("16")})
	for _, tab := range s.Tables {
		if tab.Header.Name == table.CPUStacks.Name {
			continue // frame ids only: nothing to cut
		}
		if n, _ := evidence.AsInt(tab.Summary.Metrics["cut_values"].Value); n == 0 || tab.Summary.Complete {
			t.Fatalf("%s: summary %+v", tab.Header.Name, tab.Summary)
		}
		for _, r := range tab.Rows {
			for _, col := range []string{"function", "file", "module", "caller_function", "callee_function", "caller_file", "callee_file"} {
				if v, _ := r[col].(string); len(v) > 16+len("…[] bytes cut]")+10 {
					t.Fatalf("%s.%s: %d bytes", tab.Header.Name, col, len(v))
				}
			}
		}
	}
}

// label_series makes series of the named keys' values, bounded by
// max_label_series; an empty key is refused.
func TestLabelSeriesOption(t *testing.T) {
	s := decodeFile(t, "goroutine.pb.gz", evidence.Object{OptionLabelSeries: "role"})
	threads := map[string]int64{}
	for _, r := range s.Table(table.CPUFrames.Name).Rows {
		if th, ok := r["thread"].(string); ok && r["function"] == "runtime.gopark" {
			threads[th], _ = evidence.AsInt(r["inclusive_weight"])
		}
	}
	if threads["role=reader"] != 3 || threads["role=writer"] != 1 {
		t.Errorf("goroutines per role: %v", threads)
	}
	for _, st := range s.Named(table.CPUStacks.Name) {
		for _, r := range st.Rows {
			if r["thread"] == nil {
				continue
			}
			if th := r["thread"].(string); !strings.HasPrefix(th, "role=") {
				t.Errorf("stack series %q", th)
			}
		}
	}
	_, err := formatstest.DecodeFile(t, Spec, fixture("cpu-labels.pb.gz"), map[string]int64{LimitSeries: 1}, evidence.Object{OptionLabelSeries: "phase"})
	if evidence.CodeOf(err) != evidence.CodeLimitExceeded {
		t.Errorf("max_label_series=1: %v", err)
	}
	_, err = formatstest.DecodeFile(t, Spec, fixture("cpu-labels.pb.gz"), nil, evidence.Object{OptionLabelSeries: "phase,,worker"})
	if evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Errorf("an empty key: %v", err)
	}
}

// The summary keeps the profile's own metadata: every sample type with
// its total, the period, the duration and the default sample type.
func TestSummaryMetadata(t *testing.T) {
	s := decodeFile(t, "heap-allocs.pb.gz", nil)
	sum := s.Table(table.MemoryFrames.Name).Summary
	if sum.Coverage["default_sample_type"] != "alloc_space" || sum.Coverage["population"] != table.PopulationAllocated {
		t.Errorf("coverage %v", sum.Coverage)
	}
	if _, ok := sum.Metrics[table.MetricPopulationCount]; !ok {
		t.Errorf("metrics %v", sum.Metrics)
	}
	if types, _ := sum.Coverage["sample_types"].([]any); len(types) != 4 {
		t.Errorf("sample types %v", sum.Coverage["sample_types"])
	}
	labels, _ := sum.Coverage["labels"].([]any)
	if len(labels) != 1 || labels[0].(evidence.Object)["kind"] != "numeric" || labels[0].(evidence.Object)["key"] != "bytes" {
		t.Errorf("heap labels %v", labels)
	}
	c := decodeFile(t, "cpu.pb.gz", nil).Table(table.CPUFrames.Name).Summary
	if c.Coverage["period_type"] != "cpu/nanoseconds" || c.Metrics["period"].Value == nil || c.Metrics["profile_duration"].Value == nil {
		t.Errorf("cpu summary %v %v", c.Coverage, c.Metrics)
	}
}
