package perfscript

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The per-symbol self sample counts of our decode must equal perf report's
// Samples column (`--no-children`, sorted by symbol) on the same input.

func compareSelf(t *testing.T, got, want map[string]map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("decoded %d events, perf report %d", len(got), len(want))
	}
	for ev, w := range want {
		g := got[ev]
		for sym, n := range w {
			if g[sym] != n {
				t.Errorf("%s %s: decoded self samples %d, perf report %d", ev, sym, g[sym], n)
			}
		}
		for sym, n := range g {
			if _, ok := w[sym]; !ok && n != 0 {
				t.Errorf("%s %s: decoded %d self samples, absent from perf report", ev, sym, n)
			}
		}
	}
}

var nativeFixtures = []string{"hot", "tmpl", "two"}

// TestScriptMatchesRecordedReport compares the committed perf script text
// with the perf report output that regen.sh stored from the same perf.data;
// it needs no perf at test time.
func TestScriptMatchesRecordedReport(t *testing.T) {
	for _, name := range nativeFixtures {
		t.Run(name, func(t *testing.T) {
			sink, err := decodeFile(t, ScriptSpec, testdata("perf/"+name+".perf.txt"), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := os.ReadFile(testdata("perf/" + name + ".report.txt"))
			if err != nil {
				t.Fatal(err)
			}
			compareSelf(t, selfByEvent(t, sink), parseReport(t, string(rep)))
		})
	}
}

// TestDataMatchesPerfReport decodes the committed perf.data through the
// perf script worker and runs perf report on the same file now, so both
// symbolize against the same host.
func TestDataMatchesPerfReport(t *testing.T) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not on PATH; install linux-perf to run the perf.data comparison")
	}
	for _, name := range nativeFixtures {
		t.Run(name, func(t *testing.T) {
			path := testdata("perf/" + name + ".perf.data")
			sink, err := decodeFile(t, DataSpec, path, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(perf, "report", "-i", path, "--stdio", "--no-children", "-g", "none", "-F", "overhead,sample,sym")
			cmd.Env = append(os.Environ(), "PERF_CONFIG=/dev/null")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("perf report: %v", err)
			}
			want := parseReport(t, string(out))
			compareSelf(t, selfByEvent(t, sink), want)
			for _, tb := range sink.Named("cpu.frames") {
				ev, _ := tb.Summary.Coverage["event"].(string)
				var total int64
				for _, n := range want[ev] {
					total += n
				}
				if n := intOf(t, tb.Summary.Metrics["samples"].Value); n != total {
					t.Errorf("%s: samples metric %d, perf report total %d", ev, n, total)
				}
				if v, _ := tb.Summary.Coverage["converter_version"].(string); !strings.HasPrefix(v, "perf version ") {
					t.Errorf("coverage converter_version = %q", v)
				}
			}
		})
	}
}
