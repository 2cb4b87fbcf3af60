package cpu

import (
	"errors"
	"fmt"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

type memEmitter struct {
	t    *evidence.Table
	rows []evidence.Object
	s    *evidence.Summary
}

func (m *memEmitter) Begin(t *evidence.Table) error { m.t = t; return nil }
func (m *memEmitter) Row(v evidence.Object) error   { m.rows = append(m.rows, v); return nil }
func (m *memEmitter) End(s *evidence.Summary) error { m.s = s; return nil }

func frames(id, format, unit string) *evidence.Table {
	return &evidence.Table{ID: id, Name: table.CPUFrames.Name, Format: format, Columns: table.CPUFrames.EvidenceColumns(unit), ArtifactIDs: []string{"sha256:" + id}}
}

func mkRow(artifact, fn string, self, incl float64) evidence.Object {
	return evidence.Object{"artifact_id": "sha256:" + artifact, "frame_id": fn, "function": fn, "file": nil, "line": int64(-1),
		"column": int64(-1), "module": nil, "symbolization": table.Symbolized, "thread": nil, "process": nil,
		"self_weight": self, "inclusive_weight": incl, "calls": nil, "primitive_calls": nil}
}

func newHot(t *testing.T, args evidence.Object) *hotspots {
	t.Helper()
	eff, given, err := param.Validate(Hotspots.Params, args)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Hotspots.New(eff, given)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*hotspots)
}

func TestSelectionBeforeBound(t *testing.T) {
	h := newHot(t, evidence.Object{"top": int64(2), "function_pattern": "^app"})
	tab := frames("a", "v8-cpuprofile", "samples")
	if err := h.Table(tab, formats.Caps{}); err != nil {
		t.Fatal(err)
	}
	// Unrelated hot frames come first in the input; they must not consume
	// the bound or the observed count.
	for i, r := range []evidence.Object{
		mkRow("a", "lib1", 100, 100), mkRow("a", "lib2", 90, 90),
		mkRow("a", "appC", 5, 5), mkRow("a", "appA", 7, 9), mkRow("a", "appB", 7, 8),
	} {
		if err := h.Row(tab, r); err != nil {
			t.Fatal(i, err)
		}
	}
	h.Summary(tab, &evidence.Summary{Complete: true})
	var m memEmitter
	if err := h.Finish(&m); err != nil {
		t.Fatal(err)
	}
	if len(m.rows) != 2 || m.rows[0]["function"] != "appA" || m.rows[1]["function"] != "appB" {
		t.Fatalf("rows = %v", m.rows)
	}
	if m.s.RowsObserved != 3 || m.s.Complete || m.s.Truncation.Omitted != 1 {
		t.Fatalf("summary = %+v", m.s)
	}
	// Shares are of the whole profile, not of the selection.
	if got := m.rows[0]["self_share"].(float64); got != 7.0/209 {
		t.Fatalf("self_share %v", got)
	}
}

func TestAdmission(t *testing.T) {
	h := newHot(t, nil)
	if err := h.Table(frames("a", "v8-cpuprofile", "samples"), formats.Caps{}); err != nil {
		t.Fatal(err)
	}
	var f *evidence.Failure
	if err := h.Table(frames("b", "pstats", "s"), formats.Caps{}); !errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument {
		t.Fatalf("mixed dimensions accepted: %v", err)
	}
	h = newHot(t, nil)
	h.Table(frames("a", "v8-cpuprofile", "samples"), formats.Caps{})
	if err := h.Table(frames("b", "perf-data", "samples"), formats.Caps{}); err == nil {
		t.Fatal("mixed formats accepted")
	}
	h = newHot(t, nil)
	for i := range MaxProfiles + 1 {
		err := h.Table(frames(fmt.Sprint(i), "v8-cpuprofile", "samples"), formats.Caps{})
		if i < MaxProfiles && err != nil {
			t.Fatal(err)
		}
		if i == MaxProfiles && (!errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded) {
			t.Fatalf("33rd profile: %v", err)
		}
	}
}

func TestConvertibleUnitsPool(t *testing.T) {
	h := newHot(t, nil)
	a, b := frames("a", "speedscope", "s"), frames("b", "speedscope", "ms")
	h.Table(a, formats.Caps{})
	if err := h.Table(b, formats.Caps{}); err != nil {
		t.Fatal(err)
	}
	h.Row(a, mkRow("a", "f", 1, 1))
	h.Row(b, mkRow("b", "g", 500, 500))
	h.Summary(a, &evidence.Summary{Complete: true})
	h.Summary(b, &evidence.Summary{Complete: true})
	var m memEmitter
	h.Finish(&m)
	if m.rows[1]["self_weight"] != 0.5 || m.t.Columns[11].Unit != "s" || m.s.Metrics["total_weight"].Value != 1.5 {
		t.Fatalf("rows %v unit %v total %v", m.rows, m.t.Columns[11].Unit, m.s.Metrics["total_weight"])
	}
}

func TestIncompleteInput(t *testing.T) {
	h := newHot(t, nil)
	tab := frames("a", "v8-cpuprofile", "samples")
	h.Table(tab, formats.Caps{})
	h.Row(tab, mkRow("a", "f", 1, 1))
	var m memEmitter
	h.Finish(&m) // no summary arrived: the input was cut
	if m.s.Complete || len(m.s.Limitations) == 0 {
		t.Fatalf("summary %+v", m.s)
	}
	if err := (&hotspots{}).Finish(&m); err == nil {
		t.Fatal("an empty input must not rank as 'nothing is hot'")
	}
}

func TestMetricCheck(t *testing.T) {
	given := map[string]bool{"metric": true}
	counted := &formats.Spec{Name: "counted", Caps: formats.Caps{CallCounts: true}}
	sampled := &formats.Spec{Name: "sampled"}
	if err := Check([]*formats.Spec{counted}, given, nil); err != nil {
		t.Fatal(err)
	}
	if err := Check([]*formats.Spec{counted, sampled}, given, nil); err == nil {
		t.Error("metric accepted for a format without call counts")
	}
	if err := Check([]*formats.Spec{sampled}, map[string]bool{}, nil); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkHotspots(b *testing.B) {
	rows := make([]evidence.Object, 100000)
	for i := range rows {
		rows[i] = mkRow("a", fmt.Sprint("f", i), float64(i%977), float64(i%1231))
	}
	tab := frames("a", "v8-cpuprofile", "samples")
	b.ReportAllocs()
	for b.Loop() {
		eff, given, _ := param.Validate(Hotspots.Params, evidence.Object{"top": int64(20)})
		p, _ := Hotspots.New(eff, given)
		p.Table(tab, formats.Caps{})
		for _, r := range rows {
			p.Row(tab, r)
		}
		p.Summary(tab, &evidence.Summary{Complete: true})
		p.Finish(&memEmitter{})
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func edgeRowOf(caller, callee string, w any, calls int64) evidence.Object {
	return evidence.Object{"artifact_id": "sha256:a", "caller_id": caller, "caller_function": caller, "caller_file": nil,
		"caller_line": int64(1), "callee_id": callee, "callee_function": callee, "callee_file": nil, "callee_line": int64(2),
		"thread": nil, "process": nil, "weight": w, "self_weight": w, "calls": calls, "primitive_calls": nil}
}

// The profile module's pstats record only call counts on edges: such edges
// rank after weighted ones, by calls, keep null weights, and say so.
func TestEdgesWithoutWeights(t *testing.T) {
	eff, given, _ := param.Validate(Edges.Params, nil)
	p, _ := Edges.New(eff, given)
	tab := &evidence.Table{ID: "e", Name: table.CPUEdges.Name, Format: "pstats", Columns: table.CPUEdges.EvidenceColumns("s"), ArtifactIDs: []string{"sha256:a"}}
	if err := p.Table(tab, formats.Caps{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []evidence.Object{edgeRowOf("a", "b", nil, 5), edgeRowOf("a", "c", 0.5, 1), edgeRowOf("a", "d", nil, 9)} {
		if err := p.Row(tab, r); err != nil {
			t.Fatal(err)
		}
	}
	p.Summary(tab, &evidence.Summary{Complete: true})
	var m memEmitter
	if err := p.Finish(&m); err != nil {
		t.Fatal(err)
	}
	order := []any{m.rows[0]["callee_function"], m.rows[1]["callee_function"], m.rows[2]["callee_function"]}
	if order[0] != "c" || order[1] != "d" || order[2] != "b" || m.rows[1]["weight"] != nil {
		t.Fatalf("order %v, rows %v", order, m.rows)
	}
	if m.s.Metrics["unweighted_edges"].Value != int64(2) || len(m.s.Limitations) == 0 {
		t.Fatalf("summary %+v", m.s)
	}
	if err := p.Row(tab, edgeRowOf("a", "e", "x", 1)); err == nil {
		t.Fatal("a string weight accepted")
	}
}
