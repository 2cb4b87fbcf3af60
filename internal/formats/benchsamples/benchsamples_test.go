package benchsamples_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/benchsamples"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
	bs "github.com/flameox/flameox/pkg/benchsamples"
)

const repoRoot = "../../.."

func write(t testing.TB, series ...*bs.Series) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := bs.NewWriter(&b, bs.Producer{Name: "gotest", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range series {
		if err := w.Series(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decode(t *testing.T, data []byte, opts evidence.Object) (*formatstest.Sink, error) {
	t.Helper()
	sink, err := formatstest.Decode(benchsamples.Spec, "x.bench.jsonl", data, opts, nil)
	formatstest.CheckInvariants(t, sink, err)
	return sink, err
}

func rows[T any](t *testing.T, sink *formatstest.Sink, of table.Of[T]) []*T {
	t.Helper()
	var out []*T
	for _, r := range sink.Table(of.Name).Rows {
		x, err := of.Scan(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

// TestGoWriter: what the Go SDK writes decodes to exactly its values.
func TestGoWriter(t *testing.T) {
	a := &bs.Series{ID: "a", Name: "matmul", Unit: "ns", Clock: "cuda_event", Synchronization: "device", LoopCount: 10,
		Device: &bs.Device{Type: "cuda", Index: 1, Stream: -1}, Dimensions: map[string]string{"dtype": "fp16", "n": "4096"},
		Worker: "w0", Warmups: []float64{1510.5}, Samples: []float64{1402.25, 0.1, 1e300, 3}}
	b := &bs.Series{ID: "b", Name: "matmul", Unit: "ns", Clock: "cuda_event", Synchronization: "device", LoopCount: 10,
		Device: &bs.Device{Type: "cuda", Index: 1, Stream: -1}, Dimensions: map[string]string{"dtype": "fp32", "n": "4096"},
		Worker: "w0", Samples: []float64{2}}
	sink, err := decode(t, write(t, a, b), nil)
	if err != nil {
		t.Fatal(err)
	}
	ser := rows(t, sink, table.BenchSeries)
	if len(ser) != 2 || ser[0].Dimensions["dtype"] != "fp16" || ser[0].Dimensions["worker"] != "w0" ||
		ser[0].DeviceIndex != table.Some(int64(1)) || ser[0].DeviceStream.Valid || ser[0].LoopCount != table.Some(int64(10)) {
		t.Fatalf("series: %+v", ser[0])
	}
	var got []float64
	for _, r := range rows(t, sink, table.BenchSamples) {
		if r.SeriesID == "a" && r.Kind == table.BenchSampleKind {
			got = append(got, r.Value)
		}
	}
	if len(got) != 4 || got[0] != 1402.25 || got[1] != 0.1 || got[2] != 1e300 || got[3] != 3 {
		t.Fatalf("samples %v", got)
	}
	if lim := sink.Table(table.BenchSeries.Name).Summary.Limitations; len(lim) != 0 {
		t.Errorf("limitations %v", lim)
	}
}

// TestPythonSDK: the Python SDK's file decodes to the values Python
// wrote, and the SDK refuses what the grammar refuses.
func TestPythonSDK(t *testing.T) {
	py := os.Getenv("FLAMEOX_VENV")
	if py == "" {
		py = filepath.Join(repoRoot, ".venv")
	}
	py = filepath.Join(py, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			t.Skip("needs python3")
		}
	}
	sdk, _ := filepath.Abs(filepath.Join(repoRoot, "sdk", "python"))
	out := filepath.Join(t.TempDir(), "py.bench.jsonl")
	script := `
import json, sys, flameox_bench as fb
vals = [0.1, 1/3, 2.5e-7 * 1e9, 12345678.9]
with fb.Writer(sys.argv[1], producer="pytest", producer_version="1") as w:
    w.series("s1", name="sort", unit="ns", samples=vals, warmups=[9.0], clock="wall", loop_count=100,
             dimensions={"size": "200"}, worker="p1")
    w.series("s2", name="sort", unit="ns", samples=vals, clock="cuda_event", device={"type": "cuda", "index": 0})
errors = []
for bad in [dict(unit="s"), dict(samples=[float("nan")]), dict(dimensions={"worker": "x"}), dict(name="")]:
    kw = dict(name="x", unit="ns", samples=[1.0]); kw.update(bad)
    try:
        fb.Writer(sys.stdout if False else open("/dev/null", "w"), producer="p").series("z", **kw)
    except fb.BenchSamplesError:
        errors.append(True)
print(json.dumps({"values": vals, "refused": len(errors)}))
`
	cmd := exec.Command(py, "-c", script, out)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+sdk)
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var want struct {
		Values  []float64 `json:"values"`
		Refused int       `json:"refused"`
	}
	if err := json.Unmarshal(res, &want); err != nil {
		t.Fatal(err)
	}
	if want.Refused != 4 {
		t.Errorf("the Python SDK refused %d of 4 bad series", want.Refused)
	}
	data, _ := os.ReadFile(out)
	sink, err := decode(t, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, r := range rows(t, sink, table.BenchSamples) {
		if r.SeriesID == "s1" && r.Kind == table.BenchSampleKind {
			got = append(got, r.Value)
		}
	}
	if len(got) != len(want.Values) {
		t.Fatalf("%v, want %v", got, want.Values)
	}
	for i := range got {
		if got[i] != want.Values[i] {
			t.Errorf("value %d = %v, Python wrote %v", i, got[i], want.Values[i])
		}
	}
	// s2 times CUDA events with no synchronization stated.
	lim := strings.Join(sink.Table(table.BenchSeries.Name).Summary.Limitations, "; ")
	if !strings.Contains(lim, "1 series time device events without a stated synchronization") {
		t.Errorf("limitations: %s", lim)
	}
}

func TestMalformed(t *testing.T) {
	head := `{"schema":"flameox-bench-samples","version":1,"producer":{"name":"p"}}` + "\n"
	ok := `{"id":"a","name":"x","unit":"ns","samples":[1]}` + "\n"
	for name, doc := range map[string]string{
		"no header":       ok,
		"wrong version":   strings.Replace(head, `"version":1`, `"version":2`, 1) + ok,
		"unknown field":   head + `{"id":"a","name":"x","unit":"ns","samples":[1],"extra":1}` + "\n",
		"bad unit":        head + `{"id":"a","name":"x","unit":"s","samples":[1]}` + "\n",
		"no samples":      head + `{"id":"a","name":"x","unit":"ns"}` + "\n",
		"duplicate id":    head + ok + `{"id":"a","name":"y","unit":"ns","samples":[1]}` + "\n",
		"same identity":   head + ok + `{"id":"b","name":"x","unit":"ns","samples":[2]}` + "\n",
		"duplicate key":   head + `{"id":"a","id":"b","name":"x","unit":"ns","samples":[1]}` + "\n",
		"reserved dim":    head + `{"id":"a","name":"x","unit":"ns","dimensions":{"worker":"1"},"samples":[1]}` + "\n",
		"string value":    head + `{"id":"a","name":"x","unit":"ns","samples":["1"]}` + "\n",
		"negative device": head + `{"id":"a","name":"x","unit":"ns","device":{"type":"cuda","index":-1},"samples":[1]}` + "\n",
		"too many dims":   head + `{"id":"a","name":"x","unit":"ns","dimensions":{` + manyDims(33) + `},"samples":[1]}` + "\n",
		"empty":           "",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decode(t, []byte(doc), nil)
			if f := evidence.AsFailure(err, ""); f == nil || f.Code != evidence.CodeDecodeFailure {
				t.Fatalf("want DECODE_FAILURE, got %v", err)
			}
		})
	}
	// A writer cut off mid-line: the complete lines stay, incomplete.
	sink, err := decode(t, []byte(head+ok+`{"id":"b","na`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := sink.Table(table.BenchSeries.Name).Summary; s.Complete || s.RowsObserved != 1 {
		t.Errorf("cut file: %+v", s)
	}
}

func manyDims(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, `"d`+string(rune('a'+i%26))+string(rune('a'+i/26))+`":"1"`)
	}
	return strings.Join(parts, ",")
}

func TestReaders(t *testing.T) {
	data := write(t, &bs.Series{ID: "a", Name: "x", Unit: "bytes", Samples: []float64{1, 2, 3}})
	for _, wrap := range []func(r io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader} {
		sink, err := formatstest.Decode(benchsamples.Spec, "x.bench.jsonl", data, nil, wrap)
		if err != nil || len(sink.Table(table.BenchSamples.Name).Rows) != 3 {
			t.Fatalf("%v", err)
		}
	}
}

func TestSniff(t *testing.T) {
	if v := benchsamples.Spec.Sniff(write(t)); v != formats.Yes {
		t.Errorf("header: %v", v)
	}
	if v := benchsamples.Spec.Sniff([]byte(`{"v":1}`)); v == formats.Yes {
		t.Errorf("other JSONL: %v", v)
	}
}

func TestValueBound(t *testing.T) {
	data := write(t, &bs.Series{ID: "a", Name: strings.Repeat("n", 150), Unit: "ns", Samples: []float64{1}})
	full, err := decode(t, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := decode(t, data, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}

func FuzzDecode(f *testing.F) {
	f.Add(write(f, &bs.Series{ID: "a", Name: "x", Unit: "ns", Clock: "cuda_event", Device: &bs.Device{Type: "cuda", Index: 0, Stream: 2},
		Dimensions: map[string]string{"k": "v"}, Warmups: []float64{1}, Samples: []float64{1, 2}}))
	f.Add([]byte(`{"schema":"flameox-bench-samples","version":1,"producer":{"name":"p"}}` + "\n" + `{"id":"a","name":"x","unit":"ns","samples":[1e-300,0]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sink, err := formatstest.Decode(benchsamples.Spec, "f.bench.jsonl", data, nil, nil)
		formatstest.CheckInvariants(t, sink, err)
	})
}

func BenchmarkDecode(b *testing.B) {
	var series []*bs.Series
	for i := range 200 {
		s := &bs.Series{ID: "s" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Name: "bench", Unit: "ns",
			Dimensions: map[string]string{"i": string(rune('a'+i%26)) + string(rune('a'+i/26))}}
		for j := range 1000 {
			s.Samples = append(s.Samples, float64(1000+j)+0.125)
		}
		series = append(series, s)
	}
	data := write(b, series...)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := formatstest.DecodeInto(benchsamples.Spec, "f.bench.jsonl", data, nil, nil, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
