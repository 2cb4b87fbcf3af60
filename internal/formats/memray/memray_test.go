package memray

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

const testdata = "../../../testdata/memray"

// captures are the fixtures regen.sh makes with memray: compressed and
// not, native traces and not, aggregated and not, and a header-12 capture
// made by memray 1.19.
var captures = []string{
	"lz4-pyalloc.bin", "raw-pyalloc.bin", "lz4-native.bin", "raw-native.bin",
	"lz4-aggregate.bin", "raw-aggregate-native.bin", "v12-raw-pyalloc.bin",
}

// reference is memray's own reading of a capture (reference.py).
type reference struct {
	Metadata      map[string]any `json:"metadata"`
	HighWatermark []refRecord    `json:"high_watermark"`
	Leaked        []refRecord    `json:"leaked"`
	Stats         map[string]any `json:"stats"`
}

type refRecord struct {
	TID   uint64  `json:"tid"`
	Stack [][]any `json:"stack"`
	Bytes int64   `json:"bytes"`
	Count int64   `json:"count"`
}

// python is the project venv's interpreter when it has memray 1.20 (the
// pinned reference), else "".
func python(t *testing.T) string {
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = "../../../.venv"
	}
	py, _ := filepath.Abs(filepath.Join(venv, "bin", "python"))
	out, err := exec.Command(py, "-m", "memray", "--version").Output()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "1.20") {
		return ""
	}
	return py
}

// loadReference reads memray's reading of name: live, from memray in the
// venv, when it is there and the capture is one it reads (header 13);
// otherwise the reading regen.sh recorded.
func loadReference(t *testing.T, name string) reference {
	t.Helper()
	path := filepath.Join(testdata, name)
	var data []byte
	if py := python(t); py != "" && !strings.HasPrefix(name, "v12") {
		out, err := exec.Command(py, filepath.Join(testdata, "reference.py"), path).Output()
		if err != nil {
			t.Fatalf("reference.py %s: %v", name, err)
		}
		data = out
	} else {
		t.Logf("%s: memray's recorded reading (regen.sh)", name)
		data = formatstest.Read(t, "memray/"+strings.TrimSuffix(name, ".bin")+".reference.json")
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

type frameKey struct {
	tid            uint64
	function, file string
	line           int64
}

type counts struct{ selfB, selfN, inclB, inclN int64 }

// expected derives per-frame self and inclusive bytes and counts from
// memray's records: the leaf frame's self, every distinct frame's
// inclusive, an empty stack as memray's "<unknown>".
func expected(recs []refRecord) (map[frameKey]counts, int64, int64) {
	out := map[frameKey]counts{}
	var tb, tn int64
	for _, r := range recs {
		tb += r.Bytes
		tn += r.Count
		stack := r.Stack
		if len(stack) == 0 {
			stack = [][]any{{"<unknown>", "", float64(0)}}
		}
		seen := map[frameKey]bool{}
		for i, f := range stack {
			k := frameKey{r.TID, f[0].(string), f[1].(string), int64(f[2].(float64))}
			c := out[k]
			if i == 0 {
				c.selfB += r.Bytes
				c.selfN += r.Count
			}
			if !seen[k] {
				seen[k] = true
				c.inclB += r.Bytes
				c.inclN += r.Count
			}
			out[k] = c
		}
	}
	return out, tb, tn
}

func decoded(t *testing.T, rows []evidence.Object) map[frameKey]counts {
	t.Helper()
	out := map[frameKey]counts{}
	for _, r := range rows {
		var tid uint64
		if _, err := fmt.Sscanf(r["thread"].(string), "thread %d", &tid); err != nil {
			t.Fatalf("thread %v: %v", r["thread"], err)
		}
		file, _ := r["file"].(string)
		line, _ := evidence.AsInt(r["line"])
		if line == -1 {
			line = 0
		}
		k := frameKey{tid, r["function"].(string), file, line}
		if _, dup := out[k]; dup {
			t.Fatalf("two rows for %+v", k)
		}
		n := func(c string) int64 { v, _ := evidence.AsInt(r[c]); return v }
		out[k] = counts{n("self_bytes"), n("self_count"), n("inclusive_bytes"), n("inclusive_count")}
	}
	return out
}

func metric(t *testing.T, s *evidence.Summary, name string) int64 {
	t.Helper()
	m, ok := s.Metrics[name]
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	v, ok := evidence.AsInt(m.Value)
	if !ok {
		t.Fatalf("metric %s = %v", name, m.Value)
	}
	return v
}

func diff(t *testing.T, what string, got, want map[frameKey]counts) {
	t.Helper()
	var bad []string
	for k, w := range want {
		if g := got[k]; g != w {
			bad = append(bad, fmt.Sprintf("%+v: got %+v, memray %+v", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			bad = append(bad, fmt.Sprintf("%+v: got %+v, memray has no such frame", k, g))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%s: %d frames differ from memray's FileReader:\n%s", what, len(bad), strings.Join(bad[:min(len(bad), 20)], "\n"))
	}
}

// TestEqualsMemray: every capture's totals and per-frame bytes and counts
// of both populations equal memray's own reader on the same file.
func TestEqualsMemray(t *testing.T) {
	for _, name := range captures {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // memray's reading runs in a Python process of its own
			ref := loadReference(t, name)
			for _, pop := range []string{table.PopulationHighWatermark, table.PopulationLeaked} {
				s, err := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, name), nil, evidence.Object{OptionPopulation: pop})
				formatstest.CheckInvariants(t, s, err)
				if err != nil {
					t.Fatal(err)
				}
				tab := s.Table(table.MemoryFrames.Name)
				sum := tab.Summary
				if !sum.Complete {
					t.Errorf("%s: incomplete: %v", pop, sum.Limitations)
				}
				recs := ref.HighWatermark
				if pop == table.PopulationLeaked {
					recs = ref.Leaked
				}
				want, wb, wn := expected(recs)
				if len(want) < 10 || wb == 0 {
					t.Fatalf("%s: memray's reading holds %d frames, %d bytes: not a real comparison", pop, len(want), wb)
				}
				diff(t, pop, decoded(t, tab.Rows), want)
				if got := metric(t, sum, table.MetricPopulationBytes); got != wb {
					t.Errorf("%s bytes = %d, memray %d", pop, got, wb)
				}
				if got := metric(t, sum, table.MetricPopulationCount); got != wn {
					t.Errorf("%s allocations = %d, memray %d", pop, got, wn)
				}
				checkTotals(t, sum, ref)
			}
		})
	}
}

// checkTotals compares the summary's totals with memray stats --json and
// FileReader's metadata.
func checkTotals(t *testing.T, s *evidence.Summary, ref reference) {
	t.Helper()
	num := func(v any) int64 { f, _ := v.(float64); return int64(f) }
	if got, want := metric(t, s, "peak_memory"), num(ref.Metadata["peak_memory"]); got != want {
		t.Errorf("peak_memory = %d, memray %d", got, want)
	}
	records := "allocation_records"
	if ref.Stats == nil {
		records = "aggregated_records"
	}
	if got, want := metric(t, s, records), num(ref.Metadata["total_allocations"]); got != want {
		t.Errorf("%s = %d, memray's total_allocations %d", records, got, want)
	}
	if ref.Stats == nil {
		return // memray stats refuses aggregated captures
	}
	if got, want := metric(t, s, "allocations"), num(ref.Stats["total_num_allocations"]); got != want {
		t.Errorf("allocations = %d, memray stats %d", got, want)
	}
	if got, want := metric(t, s, "allocated_bytes"), num(ref.Stats["total_bytes_allocated"]); got != want {
		t.Errorf("allocated_bytes = %d, memray stats %d", got, want)
	}
	byAlloc, _ := s.Coverage["allocations_by_allocator"].(evidence.Object)
	want, _ := ref.Stats["allocator_type_distribution"].(map[string]any)
	if len(byAlloc) != len(want) {
		t.Errorf("allocators %v, memray stats %v", byAlloc, want)
	}
	for k, v := range want {
		if got, _ := evidence.AsInt(byAlloc[k]); got != num(v) {
			t.Errorf("allocator %s: %d, memray stats %v", k, got, v)
		}
	}
}

// TestSummaryTotalsIndependentOfPopulation: the totals do not depend on
// which population the rows describe.
func TestSummaryTotalsIndependentOfPopulation(t *testing.T) {
	path := filepath.Join(testdata, "lz4-pyalloc.bin")
	a, err := formatstest.DecodeFile(t, Spec, path, nil, evidence.Object{OptionPopulation: table.PopulationHighWatermark})
	if err != nil {
		t.Fatal(err)
	}
	b, err := formatstest.DecodeFile(t, Spec, path, nil, evidence.Object{OptionPopulation: table.PopulationLeaked})
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := a.Table(table.MemoryFrames.Name).Summary, b.Table(table.MemoryFrames.Name).Summary
	for _, m := range []string{"allocations", "allocated_bytes", "peak_memory", "high_watermark_bytes", "leaked_bytes", "allocation_records"} {
		if metric(t, sa, m) != metric(t, sb, m) {
			t.Errorf("%s differs between populations: %v vs %v", m, sa.Metrics[m], sb.Metrics[m])
		}
	}
	if metric(t, sa, "high_watermark_bytes") <= metric(t, sa, "leaked_bytes") {
		t.Errorf("the workload frees its peak: high watermark %d should exceed the leaks %d", metric(t, sa, "high_watermark_bytes"), metric(t, sa, "leaked_bytes"))
	}
}

// TestCompressedEqualsRaw: LZ4 and raw captures decode through the same
// record reader; iotest readers change nothing.
func TestReaders(t *testing.T) {
	data := formatstest.Read(t, "memray/raw-pyalloc.bin")
	want, err := formatstest.Decode(Spec, "raw.bin", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, wrap := range map[string]func(r io.Reader) io.Reader{"one-byte": iotest.OneByteReader, "half": iotest.HalfReader} {
		got, err := formatstest.Decode(Spec, "raw.bin", data, nil, wrap)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if formatstest.Canonical(t, got.Tables[0].Rows) != formatstest.Canonical(t, want.Tables[0].Rows) {
			t.Errorf("%s reader: rows differ", name)
		}
	}
}

func TestSniff(t *testing.T) {
	for _, name := range captures {
		data := formatstest.Read(t, "memray/"+name)
		if v := Spec.Sniff(data[:min(len(data), formats.SniffBytes)]); v != formats.Yes {
			t.Errorf("%s: sniff %v", name, v)
		}
	}
	for _, p := range [][]byte{[]byte("memra"), []byte("{\"a\":1}"), {0x04, 0x22, 0x4D, 0x18, 0, 0}} {
		if v := Spec.Sniff(p); v == formats.Yes {
			t.Errorf("%q: sniff yes", p)
		}
	}
}

// TestOtherHeaderVersions: a header version this decoder does not read is
// a typed refusal that names it.
func TestOtherHeaderVersions(t *testing.T) {
	data := bytes.Clone(formatstest.Read(t, "memray/raw-pyalloc.bin"))
	for _, v := range []byte{11, 14} {
		data[7] = v
		_, err := formatstest.Decode(Spec, "x.bin", data, nil, nil)
		if evidence.CodeOf(err) != evidence.CodeUnsupportedFormat || !strings.Contains(err.Error(), fmt.Sprintf("version %d", v)) {
			t.Errorf("version %d: %v", v, err)
		}
	}
}

// TestTruncated: a capture cut inside its stream is read up to the cut,
// as memray reads it, and says it is incomplete; a corrupt LZ4 frame fails.
func TestTruncated(t *testing.T) {
	data := formatstest.Read(t, "memray/raw-pyalloc.bin")
	end := bytes.LastIndexByte(bytes.TrimRight(data, "\x00"), recTrailer)
	for _, n := range []int{end, end - 3, end / 2} {
		s, err := formatstest.Decode(Spec, "x.bin", data[:n], nil, nil)
		formatstest.CheckInvariants(t, s, err)
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if sum := s.Table(table.MemoryFrames.Name).Summary; sum.Complete {
			t.Errorf("cut at %d: complete", n)
		}
	}
	lz := bytes.Clone(formatstest.Read(t, "memray/lz4-pyalloc.bin"))
	lz[len(lz)/2] ^= 0xff
	if _, err := formatstest.Decode(Spec, "x.bin", lz, nil, nil); evidence.CodeOf(err) != evidence.CodeDecodeFailure {
		t.Errorf("corrupt LZ4: %v", err)
	}
}

func TestLimits(t *testing.T) {
	for _, lim := range []string{LimitFrames, LimitLocations, LimitRecords, LimitString, LimitDecompressed} {
		_, err := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, "lz4-pyalloc.bin"), map[string]int64{lim: 10}, nil)
		if evidence.CodeOf(err) != evidence.CodeLimitExceeded {
			t.Errorf("%s=10: %v", lim, err)
		}
	}
}

func TestValueBound(t *testing.T) {
	path := filepath.Join(testdata, "raw-pyalloc.bin")
	full, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.DecodeFile(t, Spec, path, nil, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"raw-pyalloc.bin", "lz4-native.bin", "lz4-aggregate.bin"} {
		data := formatstest.Read(f, "memray/"+name)
		f.Add(bytes.TrimRight(data, "\x00")[:min(len(data), 4096)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []evidence.Object{nil, {OptionNative: true}} {
			in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/virtual/fuzz.bin", Size: int64(len(data))},
				bytes.NewReader(data), map[string]int64{LimitString: 1 << 16, LimitFrames: 1 << 16, LimitLocations: 1 << 16}, opts)
			if err != nil {
				t.Fatal(err)
			}
			s := &formatstest.Sink{}
			err = Spec.Decoder.Decode(context.Background(), in, s)
			formatstest.CheckInvariants(t, s, err)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"raw-pyalloc.bin", "lz4-pyalloc.bin", "raw-native.bin"} {
		data := formatstest.Read(b, "memray/"+name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/virtual/" + name, Size: int64(len(data))}, bytes.NewReader(data), nil,
					evidence.Object{OptionNative: strings.Contains(name, "native")})
				if err != nil {
					b.Fatal(err)
				}
				if err := Spec.Decoder.Decode(context.Background(), in, formatstest.Discard{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeCapture decodes the capture FLAMEOX_MEMRAY_BENCH names
// (a large real one, as make bench's): the fixtures are too small to time
// the record loop rather than the setup and the rows. Its bytes are the
// file's without memray's zero padding, as the bench counts them.
func BenchmarkDecodeCapture(b *testing.B) {
	path := os.Getenv("FLAMEOX_MEMRAY_BENCH")
	if path == "" {
		b.Skip("FLAMEOX_MEMRAY_BENCH names no capture")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	n := int64(len(bytes.TrimRight(data, "\x00")))
	b.SetBytes(n)
	// The machine is shared: MB per CPU second of the process (GC
	// included) says more than the wall-clock MB/s.
	cpu0 := cpuSeconds(b)
	for b.Loop() {
		in, err := formatstest.Input(Spec, &evidence.Artifact{Path: path, Size: int64(len(data))}, bytes.NewReader(data), nil,
			evidence.Object{OptionNative: os.Getenv("FLAMEOX_MEMRAY_BENCH_NATIVE") != ""})
		if err != nil {
			b.Fatal(err)
		}
		if err := Spec.Decoder.Decode(context.Background(), in, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/1e6/(cpuSeconds(b)-cpu0), "MB/cpu-s")
}

func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
