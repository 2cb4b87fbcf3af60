package pprof

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// The reference profiles, made once per test binary by go test on the
// benchmark package testdata/pprof/bench: CPU, heap (allocs), block and
// mutex profiles, and a goroutine profile its TestGoroutineProfile writes
// with runtime/pprof.
var (
	refOnce sync.Once
	refDir  string
	refErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if refDir != "" {
		os.RemoveAll(refDir)
	}
	os.Exit(code)
}

func goTestProfiles(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	refOnce.Do(func() {
		dir, err := os.MkdirTemp("", "flameox-pprof-ref")
		if err != nil {
			refErr = err
			return
		}
		refDir = dir
		out := func(name string) string { return filepath.Join(dir, name) }
		cmd := exec.Command("go", "test", "-run", "TestGoroutineProfile", "-bench", ".", "-benchtime", "1s",
			"-memprofilerate", "1", "-cpuprofile", out("cpu.pprof"), "-memprofile", out("mem.pprof"),
			"-blockprofile", out("block.pprof"), "-mutexprofile", out("mutex.pprof"), "-o", out("bench.test"))
		cmd.Dir = filepath.Join(testdata, "bench")
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "PPROFBENCH_GOROUTINES="+out("goroutine.pprof"))
		if b, err := cmd.CombinedOutput(); err != nil {
			refErr = fmt.Errorf("go test: %v\n%s", err, b)
		}
	})
	if refErr != nil {
		t.Fatal(refErr)
	}
	return refDir
}

// topRow is one row of go tool pprof -top: flat, cum (integers in the
// unit asked for) and the node's name.
var topRow = regexp.MustCompile(`^\s*(\d+)[A-Za-z]*\s+[\d.e+-]+%\s+[\d.e+-]+%\s+(\d+)[A-Za-z]*\s+[\d.e+-]+%\s+(.+)$`)

// pprofUnit is the -unit that makes pprof print a sample type's values as
// exact integers.
func pprofUnit(typ string) string {
	switch typ {
	case "cpu", "delay", "wall":
		return "-unit=ns"
	case "alloc_space", "inuse_space":
		return "-unit=B"
	}
	return "-unit=minimum"
}

// pprofRun runs go tool pprof with args on path.
func pprofRun(t *testing.T, path string, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", append(append([]string{"tool", "pprof"}, args...), path)...).Output()
	if err != nil {
		t.Fatalf("go tool pprof %v: %v", args, err)
	}
	return string(out)
}

// pprofNodes runs the native reader, pprof itself: flat and cum per node
// name (function, or with -lines "function file:line"; pprof lists an
// inlined instance apart, which is summed with its function here), the
// total, and the sample type it reports.
func pprofNodes(t *testing.T, path, sampleIndex string, lines bool) (nodes map[string][2]int64, total int64, typ string) {
	t.Helper()
	args := []string{"-top", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"}
	if sampleIndex != "" {
		args = append(args, "-sample_index="+sampleIndex, pprofUnit(sampleIndex))
	}
	if lines {
		args = append(args, "-lines")
	}
	out := pprofRun(t, path, args...)
	nodes = map[string][2]int64{}
	totalRe := regexp.MustCompile(`of (\d+)[A-Za-z]* total`)
	for _, l := range strings.Split(out, "\n") {
		if m := totalRe.FindStringSubmatch(l); m != nil {
			total, _ = strconv.ParseInt(m[1], 10, 64)
		}
		if v, ok := strings.CutPrefix(l, "Type: "); ok {
			typ = v
		}
		m := topRow.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		flat, _ := strconv.ParseInt(m[1], 10, 64)
		cum, _ := strconv.ParseInt(m[2], 10, 64)
		name := strings.TrimSuffix(strings.TrimSuffix(m[3], " (inline)"), " (partial-inline)")
		w := nodes[name]
		nodes[name] = [2]int64{w[0] + flat, w[1] + cum}
	}
	if len(nodes) == 0 && total != 0 {
		t.Fatalf("no rows in pprof's output:\n%s", out)
	}
	return nodes, total, typ
}

// rowName is pprof's node name for a row: the function, and with -lines
// its file:line.
func rowName(r evidence.Object, lines bool) string {
	name := r["function"].(string)
	if lines {
		ln, _ := evidence.AsInt(r["line"])
		name += fmt.Sprintf(" %s:%d", r["file"], ln)
	}
	return name
}

// sumRows sums the self and inclusive columns of rows per node name.
func sumRows(rows []evidence.Object, self, incl string, lines bool) map[string][2]int64 {
	got := map[string][2]int64{}
	for _, r := range rows {
		s, _ := evidence.AsInt(r[self])
		i, _ := evidence.AsInt(r[incl])
		n := rowName(r, lines)
		w := got[n]
		got[n] = [2]int64{w[0] + s, w[1] + i}
	}
	return got
}

func sameNodes(t *testing.T, got, want map[string][2]int64) {
	t.Helper()
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
}

// For every sample type of every profile go test and runtime/pprof wrote
// during the test, per-function flat and cum (cpu.frames) equal go tool
// pprof -top's, and per-line flat and cum (cpu.lines) equal pprof -top
// -lines', exactly, and so does the total; memory sample types come out
// as memory.frames, the others as cpu.frames and cpu.lines in their own
// unit.
func TestGoTestProfilesMatchPprof(t *testing.T) {
	dir := goTestProfiles(t)
	cases := []struct {
		file, index string
		memory      bool
		unit        string
		lines       bool
	}{
		{"cpu.pprof", "cpu", false, "ns", false},
		{"cpu.pprof", "samples", false, "samples", false},
		{"cpu.pprof", "cpu", false, "ns", true},
		{"mem.pprof", "alloc_space", true, "", false},
		{"mem.pprof", "alloc_objects", true, "", false},
		{"mem.pprof", "inuse_space", true, "", false},
		{"mem.pprof", "inuse_objects", true, "", false},
		{"block.pprof", "contentions", false, "samples", false},
		{"block.pprof", "delay", false, "ns", false},
		{"mutex.pprof", "contentions", false, "samples", false},
		{"mutex.pprof", "delay", false, "ns", false},
		{"mutex.pprof", "delay", false, "ns", true},
		{"goroutine.pprof", "goroutine", false, "samples", false},
	}
	for _, c := range cases {
		name := c.file + "/" + c.index
		if c.lines {
			name += "/lines"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			want, total, _ := pprofNodes(t, path, c.index, c.lines)
			opts := evidence.Object{OptionSampleIndex: c.index}
			s, err := formatstest.DecodeFile(t, Spec, path, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !c.memory {
				frames := s.Table(table.CPUFrames.Name)
				if table.SampledLines(frames.Header) {
					t.Error("cpu.frames says its frames are sampled lines")
				}
				if c.lines {
					frames = s.Table(table.CPULines.Name)
					if !table.SampledLines(frames.Header) {
						t.Error("cpu.lines does not say its lines are the ones samples were on")
					}
				}
				if u, _ := frames.Header.Column("self_weight"); u.Unit != c.unit {
					t.Errorf("weight unit %q, want %q", u.Unit, c.unit)
				}
				sameNodes(t, sumRows(frames.Rows, "self_weight", "inclusive_weight", c.lines), want)
				if tw, _ := evidence.AsInt(frames.Summary.Metrics[table.MetricTotalWeight].Value); tw != total {
					t.Errorf("total_weight %d, pprof's total %d", tw, total)
				}
				if st := frames.Summary.Metrics["sample_type"].Value.(string); !strings.HasPrefix(st, c.index+"/") {
					t.Errorf("sample_type %s", st)
				}
				if c.index == "delay" || c.index == "contentions" || c.index == "goroutine" {
					if !strings.Contains(strings.Join(frames.Summary.Limitations, "\n"), "not CPU") {
						t.Errorf("a %s series is not said to be other than CPU time: %v", c.index, frames.Summary.Limitations)
					}
				}
				if len(s.Named(table.MemoryFrames.Name)) > 0 {
					t.Error("a CPU-family profile made memory rows")
				}
				return
			}
			frames := s.Table(table.MemoryFrames.Name)
			self, incl := "self_bytes", "inclusive_bytes"
			pop, _ := evidence.AsInt(frames.Summary.Metrics[table.MetricPopulationBytes].Value)
			if strings.HasSuffix(c.index, "_objects") {
				self, incl = "self_count", "inclusive_count"
				pop, _ = evidence.AsInt(frames.Summary.Metrics[table.MetricPopulationCount].Value)
			}
			sameNodes(t, sumRows(frames.Rows, self, incl, c.lines), want)
			if pop != total || total == 0 {
				t.Errorf("population %d, pprof's total %d", pop, total)
			}
			wantPop := table.PopulationAllocated
			if strings.HasPrefix(c.index, "inuse") {
				wantPop = table.PopulationInuse
			}
			for _, r := range frames.Rows {
				if r["population"] != wantPop {
					t.Fatalf("population %v, want %s", r["population"], wantPop)
				}
			}
			if len(s.Named(table.CPUFrames.Name))+len(s.Named(table.CPULines.Name)) > 0 {
				t.Error("a memory profile made CPU rows")
			}
		})
	}
}

// With no sample_index the decoder weighs by the sample type pprof picks
// (the profile's default, else its last), and every type's total is in
// the summary.
func TestDefaultSampleTypeIsPprofs(t *testing.T) {
	dir := goTestProfiles(t)
	for _, file := range []string{"cpu.pprof", "mem.pprof", "block.pprof", "mutex.pprof", "goroutine.pprof"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(dir, file)
			_, _, typ := pprofNodes(t, path, "", false)
			s, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			tab := s.Tables[0]
			if got := tab.Summary.Coverage["sample_type"]; got != typ || typ == "" {
				t.Errorf("default sample type %v, pprof's %q", got, typ)
			}
			types, _ := tab.Summary.Coverage["sample_types"].([]any)
			for _, x := range types {
				o := x.(evidence.Object)
				_, total, _ := pprofNodes(t, path, o["type"].(string), false)
				if n, _ := evidence.AsInt(o["total"]); n != total {
					t.Errorf("%s total %d, pprof's %d", o["type"], n, total)
				}
			}
			if len(types) < 1 || (file == "mem.pprof" && len(types) != 4) {
				t.Errorf("sample types %v", types)
			}
		})
	}
}

// tagLine and tagValue are go tool pprof -tags's lines: a key's total and
// one value's weight.
var (
	tagKey   = regexp.MustCompile(`^\s*(\S+): Total (\d+)[A-Za-z]* of`)
	tagValue = regexp.MustCompile(`^\s*(\d+)[A-Za-z]* \(\s*[\d.e+-]+%\): (.+)$`)
)

// pprofTags is pprof -tags: per key its total, and per key=value its
// weight.
func pprofTags(t *testing.T, path, sampleIndex string) map[string]int64 {
	out := pprofRun(t, path, "-tags", "-sample_index="+sampleIndex, pprofUnit(sampleIndex))
	got := map[string]int64{}
	key := ""
	for _, l := range strings.Split(out, "\n") {
		if m := tagKey.FindStringSubmatch(l); m != nil {
			key = m[1]
			got[key], _ = strconv.ParseInt(m[2], 10, 64)
		} else if m := tagValue.FindStringSubmatch(l); m != nil && key != "" {
			got[key+"="+m[2]], _ = strconv.ParseInt(m[1], 10, 64)
		}
	}
	return got
}

// Labels: the summary's totals per key and value equal go tool pprof
// -tags's; label_series makes each value a series whose rows and totals
// add up to the pooled ones.
func TestLabelsMatchPprofTags(t *testing.T) {
	dir := goTestProfiles(t)
	for _, c := range []struct{ file, index, key string }{{"cpu.pprof", "cpu", "phase"}, {"goroutine.pprof", "goroutine", "role"}} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			want := pprofTags(t, path, c.index)
			s, err := formatstest.DecodeFile(t, Spec, path, nil, evidence.Object{OptionSampleIndex: c.index})
			if err != nil {
				t.Fatal(err)
			}
			frames := s.Table(table.CPUFrames.Name)
			got := map[string]int64{}
			labels, _ := frames.Summary.Coverage["labels"].([]any)
			for _, x := range labels {
				o := x.(evidence.Object)
				k := o["key"].(string)
				got[k], _ = evidence.AsInt(o["weight"])
				for _, y := range o["values"].([]any) {
					v := y.(evidence.Object)
					got[k+"="+v["value"].(string)], _ = evidence.AsInt(v["weight"])
				}
			}
			if len(want) == 0 || want[c.key] == 0 {
				t.Fatalf("pprof -tags shows no %s label: %v", c.key, want)
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("label %s: %d, pprof -tags says %d", k, got[k], w)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("label %s is not in pprof -tags", k)
				}
			}
			if !strings.Contains(strings.Join(frames.Summary.Limitations, "\n"), "pool every label value") {
				t.Errorf("pooled labels not stated: %v", frames.Summary.Limitations)
			}

			split, err := formatstest.DecodeFile(t, Spec, path, nil, evidence.Object{OptionSampleIndex: c.index, OptionLabelSeries: c.key})
			if err != nil {
				t.Fatal(err)
			}
			sf := split.Table(table.CPUFrames.Name)
			series, ok := table.SeriesTotals(sf.Summary.Coverage)
			if !ok {
				t.Fatalf("no series totals: %v", sf.Summary.Coverage)
			}
			var sum float64
			for _, st := range series {
				sum += st.TotalWeight
				if st.Thread.Valid {
					v := strings.TrimPrefix(st.Thread.V, c.key+"=")
					if int64(st.TotalWeight) != want[c.key+"="+v] {
						t.Errorf("series %s total %v, pprof -tags %d", st.Thread.V, st.TotalWeight, want[c.key+"="+v])
					}
				}
			}
			if tw, _ := evidence.AsFloat(sf.Summary.Metrics[table.MetricTotalWeight].Value); sum != tw {
				t.Errorf("series totals %v, total %v", sum, tw)
			}
			pooled := sumRows(frames.Rows, "self_weight", "inclusive_weight", false)
			self := map[string]int64{}
			for _, r := range sf.Rows {
				n, _ := evidence.AsInt(r["self_weight"])
				self[r["function"].(string)] += n
			}
			for fn, w := range pooled {
				if self[fn] != w[0] {
					t.Errorf("%s: self %d over series, %d pooled", fn, self[fn], w[0])
				}
			}
			// cpu.lines splits by series the same way.
			pooledLines := sumRows(s.Table(table.CPULines.Name).Rows, "self_weight", "inclusive_weight", true)
			splitLines := split.Table(table.CPULines.Name)
			lineSelf := map[string]int64{}
			for _, r := range splitLines.Rows {
				n, _ := evidence.AsInt(r["self_weight"])
				lineSelf[rowName(r, true)] += n
			}
			if len(pooledLines) == 0 {
				t.Fatal("no cpu.lines rows")
			}
			for ln, w := range pooledLines {
				if lineSelf[ln] != w[0] {
					t.Errorf("%s: self %d over series, %d pooled", ln, lineSelf[ln], w[0])
				}
			}
			if _, ok := table.SeriesTotals(splitLines.Summary.Coverage); !ok {
				t.Errorf("cpu.lines has no series totals: %v", splitLines.Summary.Coverage)
			}
		})
	}
}
