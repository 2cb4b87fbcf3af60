package pprofout_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/pprofout"
	"github.com/flameox/flameox/internal/projection/stacks"
	"github.com/flameox/flameox/internal/rank"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

func fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...)
}

func request(output string) rank.Request {
	return rank.Request{Decode: decode.Options{Specs: registry.Formats()}, Output: output}
}

// write runs flameox-rank --format pprof in process.
func write(t *testing.T, path string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := rank.Paths(context.Background(), request(pprofout.Format), []string{path}, &pprofout.Writer{W: &buf}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hotspots is flameox's own table (summarize_cpu_hotspots, every row):
// self weight per frame label, in the unit pprof's values are in, and the
// total.
func hotspots(t *testing.T, path string) (map[string]int64, int64) {
	t.Helper()
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	req := request("")
	req.Args = evidence.Object{"top": int64(100000)}
	if err := rank.Paths(context.Background(), req, []string{path}, &rank.JSONL{W: w}); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	in := wire.NewReader(&buf)
	self := map[string]int64{}
	var total int64
	scale := 1.0
	for {
		raw, err := in.Next()
		if err != nil {
			break
		}
		o := raw.Obj
		switch o["kind"] {
		case "table":
			for _, c := range o["columns"].([]any) {
				if c := c.(evidence.Object); c["name"] == "self_weight" {
					_, scale = pprofout.SampleType(c["unit"].(string))
				}
			}
		case "row":
			v := o["values"].(evidence.Object)
			w, _ := evidence.AsFloat(v["self_weight"])
			self[stacks.Label(v["function"].(string))] += int64(math.Round(w * scale))
		case "summary":
			m := o["metrics"].(evidence.Object)[table.MetricTotalWeight].(evidence.Object)
			v, _ := evidence.AsFloat(m["value"])
			total = int64(math.Round(v * scale))
		}
	}
	return self, total
}

var topLine = regexp.MustCompile(`^\s*(\d+)(?:ns)?\s+[\d.]+%\s+[\d.]+%\s+(\d+)(?:ns)?\s+[\d.]+%\s+(.+)$`)

// pprofTop is go tool pprof -top on a file: flat per function, and the
// total.
func pprofTop(t *testing.T, path string) (map[string]int64, int64) {
	t.Helper()
	out, err := exec.Command("go", "tool", "pprof", "-top", "-unit=ns", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0", path).Output()
	if err != nil {
		t.Fatalf("go tool pprof: %v", err)
	}
	flat := map[string]int64{}
	var total int64
	for _, l := range strings.Split(string(out), "\n") {
		if m := regexp.MustCompile(`of (\d+)(?:ns)? total`).FindStringSubmatch(l); m != nil {
			total, _ = strconv.ParseInt(m[1], 10, 64)
		}
		if m := topLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			flat[m[3]] += n
		}
	}
	if len(flat) == 0 {
		t.Fatalf("no rows in pprof's output:\n%s", out)
	}
	return flat, total
}

// A profile written with --format pprof reads back in go tool pprof with
// every function's flat weight and the total equal to flameox's hotspot
// table of the same input: V8, perf script and pprof itself.
func TestReadBackByPprof(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	for _, fx := range [][]string{{"diff", "slow.cpuprofile"}, {"v8", "fib.cpuprofile"}, {"perf", "hot.perf.txt"}, {"pprof", "cpu.pb.gz"}} {
		t.Run(fx[1], func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.pb.gz")
			if err := os.WriteFile(out, write(t, fixture(fx...)), 0o644); err != nil {
				t.Fatal(err)
			}
			got, gotTotal := pprofTop(t, out)
			want, wantTotal := hotspots(t, fixture(fx...))
			if gotTotal != wantTotal {
				t.Errorf("pprof total %d, flameox %d", gotTotal, wantTotal)
			}
			for name, w := range want {
				if w != 0 && got[name] != w {
					t.Errorf("%s: pprof flat %d, flameox self %d", name, got[name], w)
				}
			}
			for name, w := range got {
				if want[name] != w {
					t.Errorf("%s: pprof flat %d that flameox does not rank (%d)", name, w, want[name])
				}
			}
		})
	}
}

// The sample type follows the evidence's unit; the output is the same
// bytes for the same input, and it parses with google/pprof's reader.
func TestSampleTypeAndDeterminism(t *testing.T) {
	a := write(t, fixture("pprof", "cpu.pb.gz"))
	if b := write(t, fixture("pprof", "cpu.pb.gz")); !bytes.Equal(a, b) {
		t.Fatal("two runs differ")
	}
	p, err := profile.ParseData(a)
	if err != nil {
		t.Fatal(err)
	}
	if st := p.SampleType[0]; st.Type != "cpu" || st.Unit != "nanoseconds" {
		t.Fatalf("sample type %+v", st)
	}
	p, err = profile.ParseData(write(t, fixture("perf", "hot.perf.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if st := p.SampleType[0]; st.Type != "samples" || st.Unit != "count" {
		t.Fatalf("sample type %+v", st)
	}
}

// A comparison is not one profile: --format pprof refuses it with the way
// to compare in pprof.
func TestComparisonRefused(t *testing.T) {
	req := request(pprofout.Format)
	req.Baseline = []string{fixture("diff", "base.cpuprofile")}
	var buf bytes.Buffer
	err := rank.Paths(context.Background(), req, []string{fixture("diff", "slow.cpuprofile")}, &pprofout.Writer{W: &buf})
	f, ok := err.(*evidence.Failure)
	if !ok || f.Code != evidence.CodeInvalidArgument || !strings.Contains(f.Message, "-diff_base") {
		t.Fatalf("got %v", err)
	}
}
