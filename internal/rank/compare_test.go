package rank_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/rank"
	"github.com/flameox/flameox/internal/table"
)

func compare(args evidence.Object, base ...string) rank.Request {
	r := request("", args)
	r.Baseline = base
	return r
}

// diffRows reads the cpu.diff rows of a result by function name.
func diffRows(t *testing.T, r *result) map[string]*table.DiffFunction {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	out := map[string]*table.DiffFunction{}
	for _, b := range r.all("row") {
		d, err := table.CPUDiff.Scan(b["values"])
		if err != nil {
			t.Fatal(err)
		}
		if d.Function != "" {
			out[d.Function] = d
		}
	}
	return out
}

// v8SelfSamples counts, straight from a V8 profile's samples array, the
// samples whose leaf node is the named function: an oracle independent of
// the decoder.
func v8SelfSamples(t *testing.T, path, function string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Nodes []struct {
			ID        int `json:"id"`
			CallFrame struct {
				FunctionName string `json:"functionName"`
			} `json:"callFrame"`
		} `json:"nodes"`
		Samples []int `json:"samples"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	for _, n := range p.Nodes {
		names[n.ID] = n.CallFrame.FunctionName
	}
	n := 0
	for _, s := range p.Samples {
		if names[s] == function {
			n++
		}
	}
	return n
}

// The same workload with parse made 3x slower: parse ranks first, grew, by
// about 3x; render, unchanged, barely moves; the weights are the profiles'
// own sample counts.
func TestCompareSlowerFunction(t *testing.T) {
	base, slow := fixture("diff", "base.cpuprofile"), fixture("diff", "slow.cpuprofile")
	r := paths(t, compare(evidence.Object{"top": int64(1000)}, base), slow)
	rows := diffRows(t, r)
	p := rows["parse"]
	if p == nil || p.Rank != 1 || p.DeltaSelf <= 0 || p.Presence != table.PresenceBoth {
		t.Fatalf("parse: %+v", p)
	}
	if want := v8SelfSamples(t, base, "parse"); p.BaseSelf != float64(want) {
		t.Errorf("parse base self %v, the profile has %d samples", p.BaseSelf, want)
	}
	if want := v8SelfSamples(t, slow, "parse"); p.NewSelf != float64(want) {
		t.Errorf("parse new self %v, the profile has %d samples", p.NewSelf, want)
	}
	if g := p.NewSelf / p.BaseSelf; g < 2.4 || g > 3.6 {
		t.Errorf("parse grew %.2fx, want about 3x", g)
	}
	if rd := rows["render"]; rd == nil || math.Abs(rd.DeltaSelf) > 0.2*rd.BaseSelf {
		t.Errorf("render, unchanged, moved: %+v", rd)
	}
	roles := map[string]bool{}
	for _, a := range r.all("artifact") {
		roles[a["role"].(string)] = true
	}
	if !roles["baseline"] || !roles["new"] {
		t.Errorf("artifact roles %v, want baseline and new", roles)
	}
	sum := r.all("summary")[0]
	cov := sum["coverage"].(evidence.Object)
	if ba := cov["baseline_artifacts"].([]any); len(ba) != 1 || ba[0] != sha(t, base) {
		t.Errorf("baseline artifacts %v", ba)
	}
	if sum["complete"] != true {
		t.Errorf("summary %v", sum)
	}
}

// Identical inputs on both sides (the same bytes): every delta is zero
// and every function is on both sides.
func TestCompareIdentical(t *testing.T) {
	p := fixture("diff", "base.cpuprofile")
	rows := diffRows(t, paths(t, compare(evidence.Object{"top": int64(1000)}, p), p))
	if len(rows) < 2 {
		t.Fatalf("rows %v", rows)
	}
	for name, r := range rows {
		if r.DeltaSelf != 0 || r.DeltaInclusive != 0 || r.Presence != table.PresenceBoth || (r.DeltaShare.Valid && r.DeltaShare.V != 0) {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// normalize scales the baseline to the new total (pprof's -normalize).
func TestCompareNormalize(t *testing.T) {
	base, slow := fixture("diff", "base.cpuprofile"), fixture("diff", "slow.cpuprofile")
	plain := diffRows(t, paths(t, compare(evidence.Object{"top": int64(1000)}, base), slow))
	r := paths(t, compare(evidence.Object{"top": int64(1000), "normalize": true}, base), slow)
	norm := diffRows(t, r)
	m := r.all("summary")[0]["metrics"].(evidence.Object)
	total, _ := evidence.AsFloat(m["total_weight"].(evidence.Object)["value"])
	btotal, _ := evidence.AsFloat(m["base_total_weight"].(evidence.Object)["value"])
	scale, _ := evidence.AsFloat(m["normalize_scale"].(evidence.Object)["value"])
	if btotal == 0 || math.Abs(scale-total/btotal) > 1e-12 {
		t.Fatalf("scale %v, totals %v / %v", scale, total, btotal)
	}
	for name, n := range norm {
		if math.Abs(n.BaseSelf-plain[name].BaseSelf*scale) > 1e-9 || n.NewSelf != plain[name].NewSelf || n.BaseSelfShare != plain[name].BaseSelfShare {
			t.Errorf("%s: normalized %+v, plain %+v", name, n, plain[name])
		}
	}
	// Normalized, render's share fell: its delta is negative.
	if norm["render"].DeltaSelf >= 0 {
		t.Errorf("render normalized: %+v", norm["render"])
	}
}

func TestCompareRefusals(t *testing.T) {
	base := fixture("diff", "base.cpuprofile")
	// A comparison without a baseline, a baseline without a comparing
	// operation, a baseline without new paths, sides of two formats, and a
	// stream.
	r := paths(t, request("compare_cpu_profiles", nil), base)
	failureOf(t, r.err, evidence.CodeInvalidArgument)
	r = paths(t, rank.Request{Operation: "summarize_cpu_hotspots", Baseline: []string{base}, Decode: request("", nil).Decode}, base)
	failureOf(t, r.err, evidence.CodeInvalidArgument)
	r = paths(t, compare(nil, base))
	failureOf(t, r.err, evidence.CodeInvalidArgument)
	// The new side's table is refused as it is decoded: that failure is
	// the run's.
	r = paths(t, compare(nil, base), fixture("perf", "hot.perf.txt"))
	if f := rank.Upstream(r.err); f == nil || f.Code != evidence.CodeInvalidArgument {
		t.Errorf("two formats: %v", r.err)
	}
	r = streamOf(t, compare(nil, base), decoded(t, base))
	failureOf(t, r.err, evidence.CodeInvalidArgument)
}

// blocksFile writes what flameox-decode writes for a path to a file.
func blocksFile(t *testing.T, p string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), filepath.Base(p)+".jsonl")
	if err := os.WriteFile(f, []byte(decoded(t, p)), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// A side of decoded blocks is on the side of the argument it came on: a
// --baseline file of flameox-decode's blocks with the new side's blocks
// from stdin (-) or from a file ranks exactly as the native profiles do
// (every column of every row), the artifact blocks say baseline and new,
// and the same blocks on both sides give all-zero deltas.
func TestCompareBlocks(t *testing.T) {
	base, slow := fixture("diff", "base.cpuprofile"), fixture("diff", "slow.cpuprofile")
	args := evidence.Object{"top": int64(1000)}
	native := paths(t, compare(args, base), slow)
	want, _ := evidence.Canonical(native.all("row"))
	baseBlocks, slowBlocks := blocksFile(t, base), blocksFile(t, slow)

	req := compare(args, baseBlocks)
	req.Stdin = strings.NewReader(decoded(t, slow))
	for name, r := range map[string]*result{
		"stdin": paths(t, req, rank.StdinSide),
		"file":  paths(t, compare(args, baseBlocks), slowBlocks),
	} {
		if r.err != nil {
			t.Fatalf("%s: %v", name, r.err)
		}
		got, _ := evidence.Canonical(r.all("row"))
		if string(got) != string(want) {
			t.Errorf("%s: rows differ from the native comparison's", name)
		}
		if p := diffRows(t, r)["parse"]; p.Rank != 1 || p.DeltaSelf <= 0 {
			t.Errorf("%s: parse %+v", name, p)
		}
		var roles []string
		for _, a := range r.all("artifact") {
			roles = append(roles, a["role"].(string))
		}
		if strings.Join(roles, " ") != "baseline new" {
			t.Errorf("%s: artifact roles %v", name, roles)
		}
		cov := r.all("summary")[0]["coverage"].(evidence.Object)
		if ba := cov["baseline_artifacts"].([]any); len(ba) != 1 || ba[0] != sha(t, base) {
			t.Errorf("%s: baseline artifacts %v", name, ba)
		}
	}

	same := paths(t, compare(args, baseBlocks), baseBlocks)
	rows := diffRows(t, same)
	if len(rows) < 2 {
		t.Fatalf("identical: rows %v", rows)
	}
	for name, r := range rows {
		if r.DeltaSelf != 0 || r.DeltaInclusive != 0 || r.Presence != table.PresenceBoth {
			t.Errorf("identical: %s: %+v", name, r)
		}
	}
}

// Blocks on one side and a native artifact on the other are refused with
// the decode that fixes it; stdin is one side at most.
func TestCompareBlocksRefusals(t *testing.T) {
	base := fixture("diff", "base.cpuprofile")
	baseBlocks := blocksFile(t, base)
	r := paths(t, compare(nil, baseBlocks), base)
	if f := failureOf(t, r.err, evidence.CodeInvalidArgument); !strings.Contains(f.Message, "flameox-decode") {
		t.Errorf("mixed: %v", f)
	}
	req := compare(nil, rank.StdinSide)
	req.Stdin = strings.NewReader("")
	r = paths(t, req, rank.StdinSide)
	if f := failureOf(t, r.err, evidence.CodeInvalidArgument); !strings.Contains(f.Message, "not both") {
		t.Errorf("stdin twice: %v", f)
	}
}
