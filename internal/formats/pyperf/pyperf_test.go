package pyperf_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/pyperf"
	"github.com/flameox/flameox/internal/table"
)

func fixtures(t testing.TB) []string {
	paths, _ := filepath.Glob(filepath.Join(formatstest.Testdata(), "pyperf", "*.json*"))
	if len(paths) < 6 {
		t.Fatalf("fixtures: %v", paths)
	}
	return paths
}

// TestFixtures: every fixture decodes with consistent summaries, sniffs as
// pyperf, and decodes the same through one-byte and half reads.
func TestFixtures(t *testing.T) {
	for _, p := range fixtures(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, _ := os.ReadFile(p)
			if v := pyperf.Sniff(data[:min(len(data), formats.SniffBytes)]); v != formats.Yes {
				t.Errorf("sniff: %v", v)
			}
			want, err := formatstest.Decode(pyperf.Spec, filepath.Base(p), data, nil, nil)
			formatstest.CheckInvariants(t, want, err)
			if err != nil {
				t.Fatal(err)
			}
			for _, wrap := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader} {
				got, err := formatstest.Decode(pyperf.Spec, filepath.Base(p), data, nil, wrap)
				if err != nil || len(got.Table(table.BenchSamples.Name).Rows) != len(want.Table(table.BenchSamples.Name).Rows) {
					t.Fatalf("wrapped reads: %v", err)
				}
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	good := `{"benchmarks":[{"runs":[{"metadata":{"name":"b"},"values":[1.5,2.5],"warmups":[[1,3.0]]}]}],"version":"1.0"}`
	if _, err := formatstest.Decode(pyperf.Spec, "g.json", []byte(good), nil, nil); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		doc  string
		code evidence.Code
	}{
		"no version":    {strings.Replace(good, `,"version":"1.0"`, ``, 1), evidence.CodeDecodeFailure},
		"version 4":     {strings.Replace(good, `"1.0"`, `4`, 1), evidence.CodeUnsupportedFormat},
		"zero value":    {strings.Replace(good, `1.5`, `0`, 1), evidence.CodeDecodeFailure},
		"string value":  {strings.Replace(good, `1.5`, `"1.5"`, 1), evidence.CodeDecodeFailure},
		"no name":       {strings.Replace(good, `"name":"b"`, `"x":"b"`, 1), evidence.CodeDecodeFailure},
		"bad warmup":    {strings.Replace(good, `[1,3.0]`, `[0,3.0]`, 1), evidence.CodeDecodeFailure},
		"bad unit":      {strings.Replace(good, `"name":"b"`, `"name":"b","unit":"parsec"`, 1), evidence.CodeDecodeFailure},
		"duplicate key": {strings.Replace(good, `"name":"b"`, `"name":"b","name":"c"`, 1), evidence.CodeDecodeFailure},
		"empty run":     {strings.Replace(good, `"values":[1.5,2.5],"warmups":[[1,3.0]]`, `"values":[]`, 1), evidence.CodeDecodeFailure},
		"two names":     {`{"benchmarks":[{"runs":[{"metadata":{"name":"b"},"values":[1]}]},{"runs":[{"metadata":{"name":"b"},"values":[1]}]}],"version":"1.0"}`, evidence.CodeDecodeFailure},
		"truncated":     {good[:40], evidence.CodeDecodeFailure},
		"bad gzip":      {"\x1f\x8b\x08\x00garbage", evidence.CodeDecodeFailure},
	} {
		t.Run(name, func(t *testing.T) {
			sink, err := formatstest.Decode(pyperf.Spec, "m.json", []byte(c.doc), nil, nil)
			formatstest.CheckInvariants(t, sink, err)
			if f := evidence.AsFailure(err, ""); f == nil || f.Code != c.code {
				t.Fatalf("want %s, got %v", c.code, err)
			}
		})
	}
}

// TestFormat5 reads the oldest layout pyperf 2.10 loads (perf 0.8.3):
// common_metadata, samples, and raw warmups divided by loops × inner_loops.
func TestFormat5(t *testing.T) {
	doc := `{"benchmarks":[{"common_metadata":{"name":"old","inner_loops":2},"runs":[{"metadata":{"loops":4},"samples":[1.0,2.0],"warmups":[[4,16.0]]}]}],"version":5}`
	sink, err := formatstest.Decode(pyperf.Spec, "old.json", []byte(doc), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var warm, loops []float64
	for _, r := range sink.Table(table.BenchSamples.Name).Rows {
		s, _ := table.BenchSamples.Scan(r)
		if s.Kind == table.BenchWarmup {
			warm = append(warm, s.Value)
		} else {
			loops = append(loops, float64(s.Loops.V))
		}
	}
	// 16 s raw over 4 loops × 2 inner loops is 2 s per iteration = 2e9 ns.
	if len(warm) != 1 || warm[0] != 2e9 || loops[0] != 8 {
		t.Fatalf("warmups %v loops %v", warm, loops)
	}
}

func TestLimits(t *testing.T) {
	data := formatstest.Read(t, "pyperf/pyperf-telco.json")
	_, err := formatstest.Run(t, pyperf.Spec, "t.json", data, map[string]int64{pyperf.LimitValues: 10}, nil)
	if f := evidence.AsFailure(err, ""); f == nil || f.Code != evidence.CodeLimitExceeded {
		t.Fatalf("max_values: %v", err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	_, err = formatstest.Run(t, pyperf.Spec, "t.json.gz", gz.Bytes(), map[string]int64{pyperf.LimitJSON: 1000}, nil)
	if f := evidence.AsFailure(err, ""); f == nil || f.Code != evidence.CodeLimitExceeded {
		t.Fatalf("max_json_bytes: %v", err)
	}
}

func TestValueBound(t *testing.T) {
	doc := []byte(`{"benchmarks":[{"runs":[{"metadata":{"name":"` + strings.Repeat("é", 40) + `"},"values":[1.5]}]}],"version":"1.0"}`)
	full, err := formatstest.Decode(pyperf.Spec, "v.json", doc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.Decode(pyperf.Spec, "v.json", doc, evidence.Object{formats.OptionValueBytes: int64(16)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}

func FuzzDecode(f *testing.F) {
	for _, s := range formatstest.Seeds(f, "pyperf", 64<<10) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sink, err := formatstest.Decode(pyperf.Spec, "f.json", data, nil, nil)
		formatstest.CheckInvariants(t, sink, err)
	})
}

func BenchmarkDecode(b *testing.B) {
	data := formatstest.Read(b, "pyperf/pyperf-mult_list_py37.json")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := formatstest.DecodeInto(pyperf.Spec, "f.json", data, nil, nil, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
