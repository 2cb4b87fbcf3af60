package nsys

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/projection/trace"
	"github.com/parquet-go/parquet-go"
)

func traceTables(t *testing.T, path string) (slices, tracks *formatstest.Table) {
	t.Helper()
	s, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		t.Fatal(err)
	}
	slices, tracks = s.Table("trace.slices"), s.Table("trace.tracks")
	if slices == nil || slices.Summary == nil || tracks == nil || tracks.Summary == nil {
		t.Fatal("no closed trace.slices or trace.tracks table")
	}
	return slices, tracks
}

// TestHostOperationsEqualPyArrow: per category and name, the CUDA runtime
// and driver calls, synchronization waits and NVTX ranges, and their total
// time, equal an independent count over the same Parquet files by Apache
// Arrow; each NVTX push/pop range's depth equals the number of ranges of
// its thread and domain that enclose it.
func TestHostOperationsEqualPyArrow(t *testing.T) {
	py := python(t)
	out, err := exec.Command(py, filepath.Join(testdata, "hostops.py"), filepath.Dir(nvfuser)).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Groups map[string][2]int64 `json:"groups"`
		Depth  map[string]int64    `json:"nvtx_depth"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	tb, _ := traceTables(t, nvfuser)
	got := map[string][2]int64{}
	depths := 0
	for _, r := range tb.Rows {
		if r["device"] != nil {
			if r["process"] == nil || r["thread"] != nil || r["stream"] == nil {
				t.Errorf("device row %v", r)
			}
			continue // the device population: TestCountsEqualPyArrow
		}
		if r["process"] == nil || (r["category"] != "cuda_sync" && r["thread"] == nil) {
			t.Errorf("host row without process or thread: %v", r)
		}
		k := fmt.Sprintf("%s\t%s", r["category"], r["name"])
		c := got[k]
		d, _ := evidence.AsInt(r["duration_ns"])
		c[0]++
		c[1] += d
		got[k] = c
		if w, ok := want.Depth[r["slice_id"].(string)]; ok {
			depths++
			if d, _ := evidence.AsInt(r["depth"]); d != w || r["depth"] == nil {
				t.Errorf("%s %q: depth %v, pyarrow %d", r["slice_id"], r["name"], r["depth"], w)
			}
		}
	}
	if len(got) != len(want.Groups) {
		t.Errorf("%d groups, pyarrow counts %d", len(got), len(want.Groups))
	}
	for k, w := range want.Groups {
		if got[k] != w {
			t.Errorf("%q: got %v, pyarrow %v", k, got[k], w)
		}
	}
	if len(want.Groups) < 50 || depths != 652 {
		t.Fatalf("the oracle found %d groups, %d NVTX ranges checked", len(want.Groups), depths)
	}
	m := tb.Summary.Metrics
	for k, v := range map[string]int64{"nvtx_slices": 652, "cuda_runtime_slices": 83, "cuda_driver_slices": 885, "cuda_sync_slices": 1,
		"kernel_slices": 19, "gpu_memcpy_slices": 1, "gpu_memset_slices": 1, "unplaced_slices": 0} {
		if n, _ := evidence.AsInt(m[k].Value); n != v {
			t.Errorf("metric %s = %v, want %d", k, m[k].Value, v)
		}
	}
	if !tb.Summary.Complete {
		t.Errorf("summary %+v", tb.Summary)
	}
}

// TestSelfTime: a range's self time is its duration minus the ranges it
// directly encloses, and parents name enclosing ranges of the same thread.
func TestSelfTime(t *testing.T) {
	tb, _ := traceTables(t, nvfuser)
	byID := map[string]evidence.Object{}
	for _, r := range tb.Rows {
		byID[r["slice_id"].(string)] = r
	}
	child := map[string]int64{}
	for _, r := range tb.Rows {
		if p, ok := r["parent_id"].(string); ok {
			pr := byID[p]
			if pr == nil || pr["thread"] != r["thread"] || pr["track"] != r["track"] {
				t.Fatalf("%v: parent %v", r["slice_id"], pr)
			}
			d, _ := evidence.AsInt(r["duration_ns"])
			child[p] += d
		}
	}
	for id, r := range byID {
		if r["self_ns"] == nil {
			continue
		}
		d, _ := evidence.AsInt(r["duration_ns"])
		s, _ := evidence.AsInt(r["self_ns"])
		if s != d-child[id] {
			t.Fatalf("%s: self %d, duration %d, children %d", id, s, d, child[id])
		}
	}
}

// TestTraceOperations: summarize_trace_operations over an export keeps the
// host calls and the device kernels apart and names threads.
func TestTraceOperations(t *testing.T) {
	var ins []*projectiontest.Input
	for _, in := range projectiontest.Decode(t, Spec, nvfuser, nil) {
		if trace.Operations.Consumes(in.Header.Name) {
			ins = append(ins, in)
		}
	}
	res, err := projectiontest.Run(trace.Operations, evidence.Object{"top": int64(1000)}, ins...)
	if err != nil {
		t.Fatal(err)
	}
	var host, device, named int
	for _, r := range res.Rows {
		if r["device"] != nil {
			device++
			if r["thread"] != nil {
				t.Errorf("device group with a thread: %v", r)
			}
		} else {
			host++
		}
		if r["thread_name"] == "test_matmul" && r["process_name"] == "./bin/test_matmul" {
			named++
		}
	}
	if host == 0 || device == 0 || named == 0 {
		t.Fatalf("host %d, device %d, named %d groups: %v", host, device, named, res.Rows)
	}
}

// TestNVTXDomainsAndRegisteredText: a domain registered by a
// NvtxDomainCreate event names its ranges; registered strings (textId)
// resolve through StringIds; marks are instants; start/end ranges async;
// a range without an end is stated, not a row.
func TestNVTXDomainsAndRegisteredText(t *testing.T) {
	dir := copyDir(t, "META_DATA_EXPORT", "ENUM_NSYS_EVENT_TYPE")
	type str struct {
		ID    int64  `parquet:"id"`
		Value string `parquet:"value"`
	}
	if err := parquet.WriteFile(filepath.Join(dir, "StringIds.parquet"), []str{{7, "registered"}}); err != nil {
		t.Fatal(err)
	}
	type ev struct {
		Start     int64   `parquet:"start"`
		End       *int64  `parquet:"end,optional"`
		EventType int32   `parquet:"eventType"`
		Text      *string `parquet:"text,optional"`
		TextID    *int64  `parquet:"textId,optional"`
		GlobalTid int64   `parquet:"globalTid"`
		DomainID  int64   `parquet:"domainId"`
		Category  *int32  `parquet:"category,optional"`
	}
	i64 := func(n int64) *int64 { return &n }
	s := func(v string) *string { return &v }
	tid := int64(1)<<48 | 42<<24 | 43
	rows := []ev{
		{Start: 100, End: i64(900), EventType: 59, Text: s("outer"), GlobalTid: tid, DomainID: 5},
		{Start: 200, End: i64(300), EventType: 59, TextID: i64(7), GlobalTid: tid, DomainID: 5},
		{Start: 250, EventType: 34, Text: s("mark"), GlobalTid: tid, DomainID: 0},
		{Start: 400, End: i64(2000), EventType: 60, Text: s("async"), GlobalTid: tid, DomainID: 0},
		{Start: 500, EventType: 60, Text: s("open"), GlobalTid: tid, DomainID: 0},
		{Start: 1, End: i64(1), EventType: 75, Text: s("mylib"), GlobalTid: tid, DomainID: 5},
	}
	if err := parquet.WriteFile(filepath.Join(dir, "NVTX_EVENTS.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	tb, tracks := traceTables(t, filepath.Join(dir, "META_DATA_EXPORT.parquet"))
	got := map[string]evidence.Object{}
	for _, r := range tb.Rows {
		got[r["name"].(string)] = r
	}
	if len(tb.Rows) != 4 {
		t.Fatalf("%d rows: %v", len(tb.Rows), tb.Rows)
	}
	o, reg := got["outer"], got["registered"]
	if o["track"] != "nvtx:5" || o["process"] != "42" || o["thread"] != "43" || o["depth"] != int64(0) || o["self_ns"] != int64(700) {
		t.Errorf("outer %v", o)
	}
	if reg["parent_id"] != o["slice_id"] || reg["depth"] != int64(1) || reg["args"].(evidence.Object)["domain"] != "mylib" {
		t.Errorf("registered %v", reg)
	}
	if got["mark"]["kind"] != "instant" || got["mark"]["duration_ns"] != int64(0) || got["async"]["kind"] != "async" || got["async"]["depth"] != nil {
		t.Errorf("mark %v async %v", got["mark"], got["async"])
	}
	if tb.Summary.Complete {
		t.Error("an NVTX range without an end leaves the slices incomplete")
	}
	var domain bool
	for _, r := range tracks.Rows {
		domain = domain || (r["track"] == "nvtx:5" && r["name"] == "mylib")
	}
	if !domain {
		t.Errorf("no domain track: %v", tracks.Rows)
	}
}

// TestHostOnlyExport: an export with NVTX and runtime calls but no device
// table gives its trace, and an empty, incomplete gpu.launches.
func TestHostOnlyExport(t *testing.T) {
	dir := copyDir(t, "META_DATA_EXPORT", "StringIds", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "ENUM_NSYS_EVENT_TYPE")
	path := filepath.Join(dir, "META_DATA_EXPORT.parquet")
	tb, _ := traceTables(t, path)
	if len(tb.Rows) != 968+652 {
		t.Fatalf("%d rows", len(tb.Rows))
	}
	l := launches(t, path)
	if l.Summary.Complete || len(l.Rows) != 0 {
		t.Fatalf("launches %+v", l.Summary)
	}
	if _, err := os.Stat(filepath.Join(dir, "CUPTI_ACTIVITY_KIND_KERNEL.parquet")); err == nil {
		t.Fatal("copyDir copied the kernels")
	}
}

// TestOutOfOrderIsUnplaced: a call that starts before the previous call of
// its thread is a row with unknown depth, counted in the summary.
func TestOutOfOrderIsUnplaced(t *testing.T) {
	dir := copyDir(t, "META_DATA_EXPORT", "StringIds")
	type call struct {
		Start     int64 `parquet:"start"`
		End       int64 `parquet:"end"`
		GlobalTid int64 `parquet:"globalTid"`
		NameID    int64 `parquet:"nameId"`
		Corr      int64 `parquet:"correlationId"`
	}
	id := int64(1) // any id StringIds defines
	rows := []call{{100, 200, 5, id, 1}, {50, 60, 5, id, 2}, {150, 300, 5, id, 3}}
	if err := parquet.WriteFile(filepath.Join(dir, "CUPTI_ACTIVITY_KIND_RUNTIME.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	tb, _ := traceTables(t, filepath.Join(dir, "META_DATA_EXPORT.parquet"))
	if n, _ := evidence.AsInt(tb.Summary.Metrics["unplaced_slices"].Value); n != 2 || len(tb.Rows) != 3 {
		t.Fatalf("unplaced %v, %d rows", tb.Summary.Metrics["unplaced_slices"], len(tb.Rows))
	}
	for _, r := range tb.Rows {
		if r["correlation"] != int64(1) && (r["depth"] != nil || r["self_ns"] != nil) {
			t.Errorf("an unplaced row has a depth: %v", r)
		}
	}
}
