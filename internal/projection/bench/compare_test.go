package bench_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/pyperf"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/projection/bench"
	"github.com/flameox/flameox/internal/projection/projectiontest"
)

// makeSuites writes two pyperf suites with pyperf's own writer: "same"
// (0.1% apart, within the noise), "slow" (+30%), "fast" (-30%), "tiny"
// (+0.5%, significant to a t-test but under a 2% threshold), "gone"
// (baseline only) and "added" (new only).
const makeSuites = `
import math, sys, pyperf
def runs(base, shift, n=40, nruns=4):
    return [[base * shift * (1 + 0.01 * math.sin(r * 7 + i * 1.3)) for i in range(n // nruns)] for r in range(nruns)]
def write(path, spec):
    benches = []
    for name, (base, shift) in spec.items():
        rs = [pyperf.Run(v, warmups=[(1, v[0])], metadata={"name": name, "loops": 16}, collect_metadata=False) for v in runs(base, shift)]
        benches.append(pyperf.Benchmark(rs))
    pyperf.BenchmarkSuite(benches).dump(path, replace=True)
write(sys.argv[1], {"same": (1e-3, 1.0), "slow": (2e-3, 1.0), "fast": (5e-4, 1.0), "tiny": (1e-3, 1.0), "gone": (1e-3, 1.0)})
write(sys.argv[2], {"same": (1e-3, 1.001), "slow": (2e-3, 1.3), "fast": (5e-4, 0.7), "tiny": (1e-3, 1.005), "added": (1e-3, 1.0)})
`

// compareTo runs `pyperf compare_to -v` and returns, per benchmark, its
// direction ("slower"/"faster") and whether pyperf calls it significant.
func compareTo(t *testing.T, py, base, new string) map[string][2]string {
	t.Helper()
	out, err := exec.Command(py, "-m", "pyperf", "compare_to", "-v", base, new).Output()
	if err != nil {
		t.Fatalf("pyperf compare_to: %v", err)
	}
	res := map[string][2]string{}
	var name, prev string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Geometric mean"):
		case strings.HasPrefix(line, "===="):
			name = prev
		case strings.Contains(line, "x slower"), strings.Contains(line, "x faster"):
			dir := "faster"
			if strings.HasSuffix(line, "slower") {
				dir = "slower"
			}
			if name == "" { // two single-benchmark files: no header
				name = "(single)"
			}
			res[name] = [2]string{dir, res[name][1]}
		case strings.HasPrefix(line, "Significant"), strings.HasPrefix(line, "Not significant"):
			if name == "" {
				name = "(single)"
			}
			sig := "significant"
			if strings.HasPrefix(line, "Not") {
				sig = "not significant"
			}
			res[name] = [2]string{res[name][0], sig}
		}
		prev = line
	}
	return res
}

// runCompare runs the comparison as flameox-rank --baseline does: each
// table is told its side before it is admitted.
func runCompare(args evidence.Object, base, new []*projectiontest.Input) (*projectiontest.Result, error) {
	p, err := projectiontest.Start(bench.Compare, args)
	if err != nil {
		return nil, err
	}
	c := p.(projection.Comparer)
	for _, side := range []struct {
		s  projection.Side
		in []*projectiontest.Input
	}{{projection.SideBase, base}, {projection.SideNew, new}} {
		for _, x := range side.in {
			h := *x.Header
			h.ID = side.s.String() + "." + h.ID
			c.Side(h.ID, h.ArtifactIDs, side.s)
			if err := projectiontest.Feed(p, &projectiontest.Input{Header: &h, Caps: x.Caps, Rows: x.Rows, Summary: x.Summary}); err != nil {
				return nil, err
			}
		}
	}
	return projectiontest.Finish(p)
}

func compareFiles(t *testing.T, base, new string, args evidence.Object) *projectiontest.Result {
	t.Helper()
	res, err := runCompare(args, projectiontest.Decode(t, pyperf.Spec, base, nil), projectiontest.Decode(t, pyperf.Spec, new, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func verdicts(res *projectiontest.Result) map[string]evidence.Object {
	m := map[string]evidence.Object{}
	for _, r := range res.Rows {
		m[r["benchmark"].(string)] = r
	}
	return m
}

// TestCompareAgreesWithPyperf: on the clear cases the verdict has pyperf
// compare_to's direction and significance on the same two files.
func TestCompareAgreesWithPyperf(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	base, new := filepath.Join(dir, "base.json"), filepath.Join(dir, "new.json")
	if out, err := exec.Command(py, "-c", makeSuites, base, new).CombinedOutput(); err != nil {
		t.Fatalf("make suites: %v: %s", err, out)
	}
	theirs := compareTo(t, py, base, new)
	res := compareFiles(t, base, new, nil)
	ours := verdicts(res)
	for name, want := range map[string]string{"slow": bench.VerdictSlower, "fast": bench.VerdictFaster, "same": bench.VerdictSame} {
		r := ours[name]
		if r["verdict"] != want {
			t.Errorf("%s: verdict %v, want %s (row %v)", name, r["verdict"], want, r)
		}
		sig := theirs[name][1] == "significant"
		if r["significant"] != sig {
			t.Errorf("%s: significant=%v, pyperf compare_to says %q", name, r["significant"], theirs[name][1])
		}
		if sig && theirs[name][0] != want {
			t.Errorf("%s: ours %s, pyperf %s", name, want, theirs[name][0])
		}
	}
	// pyperf's t-test of the means calls a 0.5% shift significant; under
	// the declared 2% threshold it is no difference here.
	if theirs["tiny"] != [2]string{"slower", "significant"} || ours["tiny"]["verdict"] != bench.VerdictSame {
		t.Errorf("tiny: pyperf %v, ours %v", theirs["tiny"], ours["tiny"])
	}
	if ours["gone"]["verdict"] != bench.VerdictBaselineOnly || ours["added"]["verdict"] != bench.VerdictNewOnly {
		t.Errorf("unmatched: gone %v, added %v", ours["gone"]["verdict"], ours["added"]["verdict"])
	}
	if n, _ := evidence.AsInt(res.Summary.Metrics[bench.MetricRegressions].Value); n != 1 {
		t.Errorf("%s = %d, want 1", bench.MetricRegressions, n)
	}
	if res.Rows[0]["benchmark"] != "slow" {
		t.Errorf("the largest slowdown ranks first: %v", res.Rows[0])
	}
	for _, k := range []string{"method", "resamples", "seed", "confidence", "threshold"} {
		if res.Summary.Coverage[k] == nil {
			t.Errorf("summary coverage lacks %s", k)
		}
	}
}

// TestCompareRealRuns compares two real pyperf timeit runs (regen.sh):
// sorting 800 items against 200 is slower, and pyperf agrees.
func TestCompareRealRuns(t *testing.T) {
	py := python(t)
	base, _ := filepath.Abs(filepath.Join(repoRoot, "testdata", "pyperf", "timeit-sorted.pyperf.json"))
	slow, _ := filepath.Abs(filepath.Join(repoRoot, "testdata", "pyperf", "timeit-sorted-slow.pyperf.json"))
	theirs := compareTo(t, py, base, slow)["(single)"]
	r := verdicts(compareFiles(t, base, slow, nil))["timeit"]
	if r["verdict"] != bench.VerdictSlower || theirs != [2]string{"slower", "significant"} {
		t.Errorf("ours %v, pyperf %v", r, theirs)
	}
	back := compareFiles(t, slow, base, nil)
	if v := verdicts(back)["timeit"]["verdict"]; v != bench.VerdictFaster {
		t.Errorf("reversed: %v", v)
	}
	if n, _ := evidence.AsInt(back.Summary.Metrics[bench.MetricRegressions].Value); n != 0 {
		t.Errorf("reversed: %d regressions", n)
	}
}

// TestCompareDeterministic: the same seed gives the same interval.
func TestCompareDeterministic(t *testing.T) {
	base, _ := filepath.Abs(filepath.Join(repoRoot, "testdata", "pyperf", "timeit-sorted.pyperf.json"))
	slow, _ := filepath.Abs(filepath.Join(repoRoot, "testdata", "pyperf", "timeit-sorted-slow.pyperf.json"))
	a := verdicts(compareFiles(t, base, slow, evidence.Object{"seed": int64(7)}))["timeit"]
	b := verdicts(compareFiles(t, base, slow, evidence.Object{"seed": int64(7)}))["timeit"]
	if a["ci_low"] != b["ci_low"] || a["ci_high"] != b["ci_high"] {
		t.Errorf("seed 7 twice: %v..%v, %v..%v", a["ci_low"], a["ci_high"], b["ci_low"], b["ci_high"])
	}
}

func TestCompareSides(t *testing.T) {
	path, _ := filepath.Abs(filepath.Join(repoRoot, "testdata", "pyperf", "pyperf-telco.json"))
	in := projectiontest.Decode(t, pyperf.Spec, path, nil)
	// A table no side was given for is refused.
	if _, err := projectiontest.Run(bench.Compare, nil, in...); evidence.AsFailure(err, "").Code != evidence.CodeInvalidArgument {
		t.Fatalf("no sides: %v", err)
	}
	// One side only.
	_, err := runCompare(nil, in, nil)
	if f := evidence.AsFailure(err, ""); f == nil || f.Code != evidence.CodeInvalidArgument || !strings.Contains(f.Message, "both sides") {
		t.Fatalf("one side: %v", err)
	}
	// The same file on both sides: every series is no_difference.
	res, err := runCompare(nil, in, in)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[0]; r["verdict"] != bench.VerdictSame || r["ratio"] != 1.0 {
		t.Fatalf("same file: %v", r)
	}
	// Two artifacts on the baseline side pool their samples.
	dir := filepath.Join(repoRoot, "testdata", "pyperf")
	slow, _ := filepath.Abs(filepath.Join(dir, "timeit-sorted-slow.pyperf.json"))
	base, _ := filepath.Abs(filepath.Join(dir, "timeit-sorted.pyperf.json"))
	gz, _ := filepath.Abs(filepath.Join(dir, "timeit-sorted.pyperf.json.gz"))
	b1, b2 := projectiontest.Decode(t, pyperf.Spec, base, nil), projectiontest.Decode(t, pyperf.Spec, gz, nil)
	res, err = runCompare(nil, append(b1, b2...), projectiontest.Decode(t, pyperf.Spec, slow, nil))
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(b1[1].Rows) + len(b2[1].Rows)) // all rows, warmups included
	if r := res.Rows[0]; r["verdict"] != bench.VerdictSlower || r["baseline_artifact_id"] != nil {
		t.Fatalf("pooled: %v", r)
	} else if got, _ := evidence.AsInt(r["baseline_n"]); got >= n || got < 40 {
		t.Fatalf("pooled baseline_n %d (rows %d)", got, n)
	}
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{1.05, 1.10, bench.VerdictSlower},
		{0.90, 0.95, bench.VerdictFaster},
		{0.99, 1.01, bench.VerdictSame},
		{1.00, 1.05, bench.VerdictInconclusive},
		{0.95, 1.00, bench.VerdictInconclusive},
	} {
		if got := bench.Verdict(c.lo, c.hi, 0.02); got != c.want {
			t.Errorf("Verdict(%v, %v) = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}
