package pprof

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// A benchmark with a hot function, an inlined call and a recursion, for
// go test to profile.
const benchSource = `package w

import "testing"

var sink int

func hot(n int) int {
	h := 0
	for i := 0; i < n; i++ {
		h = h*31 + i%7
	}
	return h
}

func small(x int) int { return x*x + 1 }

func fib(n int) int {
	if n < 2 {
		return small(n)
	}
	return fib(n-1) + fib(n-2)
}

func BenchmarkWork(b *testing.B) {
	for b.Loop() {
		sink += hot(200000) + fib(18)
		_ = make([]byte, 4096)
	}
}
`

// Profiles made by go test -cpuprofile -memprofile during the test: the
// CPU profile's per-function flat and cum, for each sample type, equal go
// tool pprof -top's; the memory profile is refused as CPU evidence.
func TestGoTestProfiles(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module w\n\ngo 1.21\n", "w_test.go": benchSource} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", ".", "-benchtime", "1s", "-cpuprofile", cpu, "-memprofile", mem)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	for _, index := range []string{"cpu", "samples"} {
		t.Run(index, func(t *testing.T) {
			want, total := pprofTop(t, cpu, index)
			s, err := formatstest.DecodeFile(t, Spec, cpu, nil, evidence.Object{OptionSampleIndex: index})
			if err != nil {
				t.Fatal(err)
			}
			frames := s.Table(table.CPUFrames.Name)
			got := map[string][2]int64{}
			for _, r := range frames.Rows {
				self, _ := evidence.AsInt(r["self_weight"])
				incl, _ := evidence.AsInt(r["inclusive_weight"])
				w := got[r["function"].(string)]
				got[r["function"].(string)] = [2]int64{w[0] + self, w[1] + incl}
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: flat/cum %v, pprof says %v", name, got[name], w)
				}
			}
			for name, w := range got {
				if _, ok := want[name]; !ok && w != [2]int64{} {
					t.Errorf("%s has weight %v that pprof does not show", name, w)
				}
			}
			if tw, _ := evidence.AsInt(frames.Summary.Metrics[table.MetricTotalWeight].Value); tw != total || total == 0 {
				t.Errorf("total_weight %d, pprof's total %d", tw, total)
			}
			if got["w.hot"][0] == 0 {
				t.Errorf("the hot function has no self weight: %v", got)
			}
		})
	}
	_, err := formatstest.DecodeFile(t, Spec, mem, nil, nil)
	if evidence.CodeOf(err) != evidence.CodeUnsupportedFormat || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("memory profile: %v", err)
	}
}
