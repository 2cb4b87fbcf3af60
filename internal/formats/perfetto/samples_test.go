package perfetto

import (
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

var sampleFixtures = []string{
	"perfetto/builder-perf.pftrace",
	"perfetto/builder-chrome-sampler.pftrace",
	"perfetto/neg-samples.pftrace",
}

// TestSamplesMatchReference: per (process, thread, function, module)
// self and inclusive samples, samples placed and unplaced, missing
// interned ids by kind, kernel records lost, skipped samples and the
// samples' time range equal reference.py's reading of the same file with
// perfetto_trace_pb2.
func TestSamplesMatchReference(t *testing.T) {
	py := python(t)
	for _, f := range sampleFixtures {
		t.Run(f, func(t *testing.T) {
			ref := runReference(t, py, filepath.Join(formatstest.Testdata(), f)).CPU
			sink := decodeFixture(t, f)
			ft := sink.Table(table.CPUFrames.Name)
			if ft == nil {
				t.Fatal("no cpu.frames")
			}
			got := map[string][2]int64{}
			for _, r := range ft.Typed {
				fr := r.(*table.Frame)
				k := fr.Process.V + "\t" + fr.Thread.V + "\t" + fr.Function + "\t" + fr.Module.V
				if _, dup := got[k]; dup {
					t.Errorf("%q: two rows", k)
				}
				got[k] = [2]int64{int64(fr.SelfWeight), int64(fr.InclusiveWeight)}
				if (fr.Symbolization == table.Unresolved) != (fr.Function == "[unknown]" || fr.Function[:2] == "0x") {
					t.Errorf("%q: symbolization %s", k, fr.Symbolization)
				}
			}
			if len(got) != len(ref.Frames) || len(got) == 0 {
				t.Errorf("%d frames, reference %d", len(got), len(ref.Frames))
			}
			for k, w := range ref.Frames {
				if g := got[k]; g != [2]int64{w.Self, w.Inclusive} {
					t.Errorf("%q: self %d inclusive %d; reference %d, %d", k, g[0], g[1], w.Self, w.Inclusive)
				}
			}
			s := ft.Summary
			formatstest.CheckMetrics(t, "summary", s, map[string]int64{
				"samples_resolved": ref.Placed, "samples_unplaced": ref.Unplaced, "kernel_records_lost": ref.KernelRecordsLost,
				"samples_skipped": ref.Skipped, "perf_samples": ref.PerfSamples, "streaming_samples": ref.StreamingSamples,
				"samples_without_thread": ref.WithoutThread,
				table.MetricSamples:      ref.Placed + ref.Unplaced, table.MetricTotalWeight: ref.Placed + ref.Unplaced,
			})
			missing, _ := s.Coverage["interned_missing"].(evidence.Object)
			for _, k := range missNames {
				if n, _ := evidence.AsInt(missing[k]); n != ref.Missing[k] {
					t.Errorf("interned %s missing %d, reference %d", k, n, ref.Missing[k])
				}
			}
			if ref.FirstNS != nil {
				if a, b := formatstest.MetricInt(t, s, "first_sample_time"), formatstest.MetricInt(t, s, "last_sample_time"); a != *ref.FirstNS || b != *ref.LastNS {
					t.Errorf("sample times %d..%d, reference %d..%d", a, b, *ref.FirstNS, *ref.LastNS)
				}
			}
			// Stacks hold every placed sample once.
			var w float64
			for _, r := range sink.Table(table.CPUStacks.Name).Typed {
				w += r.(*table.Stack).Weight
			}
			if int64(w) != ref.Placed {
				t.Errorf("stacks weigh %v, reference %d placed", w, ref.Placed)
			}
		})
	}
}

// TestSamplesRows: the perf trace's series and data loss, the Chrome
// sampler's times shared with the legacy track events of its sequence,
// and each negative's count.
func TestSamplesRows(t *testing.T) {
	sink := decodeFixture(t, "perfetto/builder-perf.pftrace")
	s := sink.Table(table.CPUFrames.Name).Summary
	if s.Complete {
		t.Error("complete despite kernel_records_lost and a skipped sample")
	}
	series, ok := table.SeriesTotals(s.Coverage)
	if !ok || len(series) != 3 || series[0].Process.V != "100" || series[0].Thread.V != "101" || series[0].TotalWeight != 8 {
		t.Errorf("series %+v", series)
	}
	if n := formatstest.MetricInt(t, s, "samples_with_unwind_error"); n != 1 {
		t.Errorf("unwind errors %d", n)
	}

	sink = decodeFixture(t, "perfetto/builder-chrome-sampler.pftrace")
	if s := sink.Table(table.CPUFrames.Name).Summary; !s.Complete {
		t.Errorf("incomplete: %v", s.Limitations)
	}
	rows := sink.Table(table.TraceSlices.Name).Typed
	// 5000 µs reference, samples 10+20+30+40+5+5-1 µs, the event 100 µs more.
	if len(rows) != 1 || rows[0].(*table.TraceSlice).StartNS != 5_209_000 || rows[0].(*table.TraceSlice).Thread != table.Some("301") {
		t.Errorf("after-samples %+v", rows)
	}

	sink = decodeFixture(t, "perfetto/neg-samples.pftrace")
	s = sink.Table(table.CPUFrames.Name).Summary
	if s.Complete {
		t.Error("complete despite missing ids")
	}
	missing, _ := s.Coverage["interned_missing"].(evidence.Object)
	for k, want := range map[string]int64{"callstack": 2, "frame": 1} {
		if n, _ := evidence.AsInt(missing[k]); n != want {
			t.Errorf("%s missing %d, want %d", k, n, want)
		}
	}
	for m, want := range map[string]int64{"samples_without_thread": 2, "sample_packets_needing_state": 1, "samples_resolved": 1, "samples_unplaced": 3} {
		if n := formatstest.MetricInt(t, s, m); n != want {
			t.Errorf("%s %d, want %d", m, n, want)
		}
	}
}

// TestNoSamplesNoCPUTables: a trace without samples emits the trace
// tables only, as before samples were read.
func TestNoSamplesNoCPUTables(t *testing.T) {
	sink := decodeFixture(t, "perfetto/builder-tracks.pftrace")
	if len(sink.Tables) != len(table.TraceTables) {
		t.Errorf("%d tables", len(sink.Tables))
	}
}

// TestSamplesValueBound: max_value_bytes bounds the CPU tables' function
// and module names too (the Chrome sampler trace: a complete one).
func TestSamplesValueBound(t *testing.T) {
	checkValueBound(t, "perfetto/builder-chrome-sampler.pftrace", table.CPUFrames.Name, table.CPUEdges.Name)
}
