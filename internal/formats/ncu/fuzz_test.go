package ncu

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

func consume(tb testing.TB, data []byte, sink formats.Sink) (*decoder, error) {
	in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/virtual/x.ncu-rep"}, bytes.NewReader(nil), nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	d := &decoder{in: in, values: in.Values(), units: map[string]int64{},
		kernels: formats.NewLazyTable(sink, table.GPUKernels.Header("")),
		metrics: formats.NewLazyTable(sink, table.GPUKernelMetrics.Header("")), wantMet: sink.Wants(table.GPUKernelMetrics.Schema)}
	err = d.consume(bytes.NewReader(data))
	return d, err
}

// FuzzConsume feeds the worker's transcript, patched, to the decoder's
// reader: a typed failure or rows that fit their schema, never a panic.
func FuzzConsume(f *testing.F) {
	for _, n := range []string{"mojo-ncu-2022.4.0-profile.reader.jsonl", "speedy_scan-ncu-2020.3.1-profile.reader.jsonl"} {
		f.Add(formatstest.Read(f, filepath.Join("ncu", n)))
	}
	f.Add([]byte(`{"type":"action","range":0,"action":0,"name":"k","metrics":[["m","double",true,{"nonfinite":"NaN"},"ns",0]],"rules":[]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sink := &formatstest.Sink{}
		d, err := consume(t, data, sink)
		if err != nil {
			if evidence.CodeOf(err) == "" {
				t.Fatalf("untyped failure: %v", err)
			}
			return
		}
		_ = d
	})
}

// BenchmarkConsume measures the Go side of a decode: 2,000 launches of
// 500 metrics each as the worker writes them.
func BenchmarkConsume(b *testing.B) {
	var buf strings.Builder
	buf.WriteString(`{"type":"reader","module":"ncu_report","version":"2026.3.1","ranges":1}` + "\n")
	for a := 0; a < 2000; a++ {
		fmt.Fprintf(&buf, `{"type":"action","range":0,"action":%d,"name":"void gemm_kernel<%d>(float*, float const*)","function":"gemm_kernel","mangled":"_Z4gemm","workload_type":0,"metrics":[`, a, a%17)
		for m := 0; m < 500; m++ {
			if m > 0 {
				buf.WriteByte(',')
			}
			switch m % 3 {
			case 0:
				fmt.Fprintf(&buf, `["sm__metric_%d.avg.pct_of_peak_sustained_elapsed","double",true,%d.25,"%%",0]`, m, m)
			case 1:
				fmt.Fprintf(&buf, `["launch__metric_%d","uint64",true,%d,"byte",0]`, m, m*1000)
			default:
				fmt.Fprintf(&buf, `["gpu__time_%d.sum","double",true,1600.5,"ns",0]`, m)
			}
		}
		buf.WriteString(`],"rules":[{"id":"SOLBottleneck","name":"Bottleneck","section":"SpeedOfLight","message":{"title":"","message":"low throughput","type":3},"speedup":null}]}` + "\n")
	}
	buf.WriteString(`{"type":"end"}` + "\n")
	data := []byte(buf.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var rows int64
		d, err := consume(b, data, formatstest.Discard{Rows: &rows})
		if err != nil || d.metricRows != 1_000_000 {
			b.Fatal(err, d.metricRows)
		}
	}
	b.ReportMetric(1_000_000*float64(b.N)/b.Elapsed().Seconds(), "metric_rows/s")
}
