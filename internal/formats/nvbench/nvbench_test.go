package nvbench_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/nvbench"
	"github.com/flameox/flameox/internal/table"
)

const fixture = "nvbench/nvbench-axes-test_ref.json"

func fixturePath(t testing.TB) string {
	return filepath.Join(formatstest.Testdata(), fixture)
}

// native is an independent reading of the fixture with encoding/json:
// every timing mean of every state that ran, by benchmark, state label,
// scope and clock.
func native(t *testing.T) (map[string]float64, int) {
	var doc struct {
		Benchmarks []struct {
			Name   string `json:"name"`
			States []struct {
				Name      string `json:"name"`
				Skipped   bool   `json:"is_skipped"`
				Summaries []struct {
					Tag  string `json:"tag"`
					Data []struct {
						Name  string `json:"name"`
						Value string `json:"value"`
					} `json:"data"`
				} `json:"summaries"`
			} `json:"states"`
		} `json:"benchmarks"`
	}
	if err := json.Unmarshal(formatstest.Read(t, fixture), &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	states := 0
	for _, b := range doc.Benchmarks {
		for _, s := range b.States {
			if s.Skipped {
				continue
			}
			states++
			for _, sm := range s.Summaries {
				p := strings.Split(sm.Tag, "/")
				if len(p) == 5 && p[2] == "time" && p[4] == "mean" {
					v, _ := strconv.ParseFloat(sm.Data[0].Value, 64)
					out[fmt.Sprintf("%s|%s|%s|%s", b.Name, s.Name, p[1], p[3])] = v * 1e9
				}
			}
		}
	}
	return out, states
}

// TestFixture: every timing of every state that ran is one series, with
// NVBench's mean; all series are distinct; every label of this file
// decodes into its axes, so none keeps its raw label.
func TestFixture(t *testing.T) {
	sink, err := formatstest.DecodeFile(t, nvbench.Spec, fixturePath(t), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	want, states := native(t)
	rows := sink.Table(table.BenchSeries.Name).Rows
	if len(rows) != len(want) {
		t.Fatalf("%d series, the file has %d timings", len(rows), len(want))
	}
	identities := map[string]bool{}
	clock := map[string]string{"cuda_event": "gpu", "host": "cpu"}
	labels := map[string]bool{}
	for _, x := range rows {
		r, err := table.BenchSeries.Scan(x)
		if err != nil {
			t.Fatal(err)
		}
		if _, raw := r.Dimensions["state"]; raw {
			t.Errorf("%s %v: raw label kept", r.Benchmark, r.Dimensions)
		}
		key, _ := evidence.Canonical(evidence.Object{"b": r.Benchmark, "d": r.Dimensions, "s": r.Scope.V, "c": r.Clock.V, "i": r.DeviceIndex.V})
		if identities[string(key)] {
			t.Errorf("two series share identity %s", key)
		}
		identities[string(key)] = true
		// Rebuild NVBench's label from the decoded dimensions to find
		// the native mean.
		label := labelOf(r)
		labels[r.Benchmark+"|"+label] = true
		w, ok := want[fmt.Sprintf("%s|%s|%s|%s", r.Benchmark, label, r.Scope.V, clock[r.Clock.V])]
		if !ok || r.NativeMean.V != w {
			t.Errorf("%s %s %s/%s: mean %v, NVBench %v (found %v)", r.Benchmark, label, r.Scope.V, r.Clock.V, r.NativeMean.V, w, ok)
		}
		if r.Unit != table.BenchNs || r.DeviceType.V != "cuda" || !r.NativeCount.Valid {
			t.Errorf("%s: unit %s device %v count %v", r.Benchmark, r.Unit, r.DeviceType, r.NativeCount)
		}
	}
	if len(labels) != states {
		t.Errorf("%d distinct states, the file ran %d", len(labels), states)
	}
	sum := sink.Table(table.BenchSeries.Name).Summary
	if n, _ := evidence.AsInt(sum.Metrics["skipped_states"].Value); n != 38 {
		t.Errorf("skipped_states = %d", n)
	}
}

// labelOf rebuilds the fixture's state label from a row: the device, then
// the axes in the file's order, pow2 axes as 2^k, floats as written.
func labelOf(r *table.BenchSeriesRow) string {
	parts := []string{fmt.Sprintf("Device=%d", r.DeviceIndex.V)}
	order := map[string][]string{
		"single_float64_axis": {"Duration"}, "copy_sweep_grid_shape": {"BlockSize", "NumBlocks"},
		"copy_type_sweep": {"T"}, "copy_type_conversion_sweep": {"In", "Out"},
	}
	for _, k := range order[r.Benchmark] {
		v := r.Dimensions[k].(string)
		switch k {
		case "BlockSize", "NumBlocks":
			n, _ := strconv.ParseInt(v, 10, 64)
			e := 0
			for n > 1 {
				n >>= 1
				e++
			}
			v = fmt.Sprintf("2^%d", e)
		case "Duration":
			f, _ := strconv.ParseFloat(v, 64)
			v = strconv.FormatFloat(f, 'g', 1, 64)
			if f == 0.001 || v == "0.001" {
				v = "0.001"
			}
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

// crafted builds a one-benchmark NVBench document with the given states
// (label, axis value) on a float64 axis X and an int64 pow2 axis P.
func crafted(states ...[3]string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"meta":{"argv":["b"],"version":{"json":{"string":"1.0.0"},"nvbench":{"string":"0.1.0"}}},` +
		`"devices":[{"id":0,"name":"GPU"}],"benchmarks":[{"name":"k","axes":[` +
		`{"name":"X","type":"float64","flags":"","values":[]},{"name":"P","type":"int64","flags":"pow2","values":[]}],"states":[`)
	for i, s := range states {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":%q,"device":0,"type_config_index":0,"axis_values":[{"name":"X","type":"float64","value":%q},{"name":"P","type":"int64","value":%q}],`+
			`"summaries":[{"tag":"nv/cold/sample_size","data":[{"name":"value","type":"int64","value":"10"}]},`+
			`{"tag":"nv/cold/time/gpu/mean","data":[{"name":"value","type":"float64","value":"1e-6"}]}],"is_skipped":false}`, s[0], s[1], s[2])
	}
	b.WriteString(`]}]}`)
	return b.Bytes()
}

func TestLabels(t *testing.T) {
	for _, c := range []struct {
		name   string
		states [][3]string
		raw    []bool // per state: the raw label is kept
	}{
		{"decoded", [][3]string{{"Device=0 X=0.0003 P=2^4", "0.00030000000000000003", "16"}}, []bool{false}},
		{"unknown key", [][3]string{{"Device=0 X=1 P=2^4 Q=3", "1", "16"}}, []bool{true}},
		{"repeated key", [][3]string{{"Device=0 X=1 X=1 P=2^4", "1", "16"}}, []bool{true}},
		{"conflict", [][3]string{{"Device=0 X=2 P=2^4", "1", "16"}}, []bool{true}},
		{"pow2 conflict", [][3]string{{"Device=0 X=1 P=2^5", "1", "16"}}, []bool{true}},
		{"wrong device", [][3]string{{"Device=1 X=1 P=2^4", "1", "16"}}, []bool{true}},
		{"not key=value", [][3]string{{"Device=0 X=1 P=2^4 fast", "1", "16"}}, []bool{true}},
		// Same decoded numbers, different labels: both stay distinct.
		{"same numbers", [][3]string{{"Device=0 X=1 P=2^4", "1", "16"}, {"Device=0 X=1.0 P=16", "1", "16"}}, []bool{true, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink, err := formatstest.Decode(nvbench.Spec, "k.json", crafted(c.states...), nil, nil)
			formatstest.CheckInvariants(t, sink, err)
			if err != nil {
				t.Fatal(err)
			}
			rows := sink.Table(table.BenchSeries.Name).Rows
			if len(rows) != len(c.states) {
				t.Fatalf("%d rows", len(rows))
			}
			for i, x := range rows {
				r, err := table.BenchSeries.Scan(x)
				if err != nil {
					t.Fatal(err)
				}
				label, raw := r.Dimensions["state"]
				if raw != c.raw[i] || (raw && label != c.states[i][0]) {
					t.Errorf("state %q: dims %v, want raw=%v", c.states[i][0], r.Dimensions, c.raw[i])
				}
				if r.Dimensions["X"] != c.states[i][1] || r.Dimensions["P"] != c.states[i][2] {
					t.Errorf("state %q: dims %v", c.states[i][0], r.Dimensions)
				}
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	good := string(crafted([3]string{"Device=0 X=1 P=2^4", "1", "16"}))
	for name, doc := range map[string]string{
		"dangling device": strings.Replace(good, `"device":0`, `"device":3`, 1),
		"duplicate key":   strings.Replace(good, `"name":"k",`, `"name":"k","name":"k",`, 1),
		"bad mean":        strings.Replace(good, `"1e-6"`, `"fast"`, 1),
		"truncated":       good[:len(good)/2],
		"no benchmarks":   `{"meta":{"version":{"json":{"string":"1.0.0"},"nvbench":{"string":"0.1.0"}}},"devices":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			sink, err := formatstest.Decode(nvbench.Spec, "k.json", []byte(doc), nil, nil)
			formatstest.CheckInvariants(t, sink, err)
			if f := evidence.AsFailure(err, ""); f == nil || f.Code != evidence.CodeDecodeFailure {
				t.Fatalf("want DECODE_FAILURE, got %v", err)
			}
		})
	}
	v2 := strings.Replace(good, `"1.0.0"`, `"2.0.0"`, 1)
	if _, err := formatstest.Decode(nvbench.Spec, "k.json", []byte(v2), nil, nil); evidence.AsFailure(err, "").Code != evidence.CodeUnsupportedFormat {
		t.Errorf("json 2.0.0: %v", err)
	}
}

func TestReaders(t *testing.T) {
	data := formatstest.Read(t, fixture)
	want, err := formatstest.Decode(nvbench.Spec, "f.json", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := formatstest.Decode(nvbench.Spec, "f.json", data, nil, iotest.OneByteReader)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Table(table.BenchSeries.Name).Rows) != len(want.Table(table.BenchSeries.Name).Rows) {
		t.Fatal("one-byte reads change the rows")
	}
}

func TestSniff(t *testing.T) {
	data := formatstest.Read(t, fixture)
	if v := nvbench.Spec.Sniff(data[:formats.SniffBytes]); v != formats.Yes {
		t.Errorf("fixture: %v", v)
	}
	for _, other := range []string{`{"meta":{"version":"7.4"}}`, `{"benchmarks":[]}`, `[1]`} {
		if v := nvbench.Spec.Sniff([]byte(other)); v == formats.Yes {
			t.Errorf("%s: Yes", other)
		}
	}
}

func TestValueBound(t *testing.T) {
	data := crafted([3]string{"Device=0 X=1 P=2^4 " + strings.Repeat("z", 100), "1", "16"})
	full, err := formatstest.Decode(nvbench.Spec, "k.json", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.Decode(nvbench.Spec, "k.json", data, evidence.Object{formats.OptionValueBytes: int64(32)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 32)
}

func FuzzDecode(f *testing.F) {
	// The fixture's first 64 KiB (a cut document) keep executions fast;
	// the crafted documents are whole.
	for _, s := range formatstest.Seeds(f, "nvbench", 64<<10) {
		f.Add(s)
	}
	f.Add(crafted([3]string{"Device=0 X=1 P=2^4", "1", "16"}, [3]string{"Device=0 X=1.0 P=16", "1", "16"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		sink, err := formatstest.Decode(nvbench.Spec, "f.json", data, nil, nil)
		formatstest.CheckInvariants(t, sink, err)
	})
}

func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile(fixturePath(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := formatstest.DecodeInto(nvbench.Spec, "f.json", data, nil, nil, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
