package observations

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	obsformat "github.com/flameox/flameox/internal/formats/observations"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

const fixtures = "../../../testdata/observations"

func newProjector(t *testing.T, args evidence.Object) projection.Projector {
	t.Helper()
	return projectiontest.MustStart(t, Spec, args)
}

func decode(t *testing.T, name string) []*projectiontest.Input {
	t.Helper()
	return projectiontest.Decode(t, obsformat.Spec, filepath.Join(fixtures, name), nil)
}

func project(t *testing.T, args evidence.Object, files ...string) *projectiontest.Result {
	t.Helper()
	var inputs []*projectiontest.Input
	for _, name := range files {
		inputs = append(inputs, decode(t, name)...)
	}
	r, err := projectiontest.Run(Spec, args, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func key(r evidence.Object) string {
	return fmt.Sprintf("%v|%v|%v", r["name"], r["phase"], r["unit"])
}

func near(a any, b float64) bool {
	f, ok := a.(float64)
	return ok && math.Abs(f-b) < 1e-12
}

func TestAggregate(t *testing.T) {
	r := project(t, nil, "python.observations.jsonl")
	var keys []string
	by := map[string]evidence.Object{}
	for _, row := range r.Rows {
		keys = append(keys, key(row))
		by[key(row)] = row
	}
	want := []string{"child_rows|<nil>|<nil>", "config|setup|<nil>", "dataset_rows|setup|<nil>", "loss|epoch|<nil>",
		"note|<nil>|<nil>", "status|<nil>|<nil>", "step_time|epoch|s", "step_time|train|s"}
	if !slices.Equal(keys, want) {
		t.Fatalf("series %q, want %q", keys, want)
	}
	st := by["step_time|epoch|s"] // recorded in ms, normalized to s
	if st["count"] != int64(3) || !near(st["sum"], 0.039) || !near(st["min"], 0.012) || !near(st["max"], 0.014) || !near(st["mean"], 0.013) {
		t.Fatalf("step_time %v", st)
	}
	if v, _ := st["last_value"].(json.Number); v != "14.0" {
		t.Fatalf("last_value keeps the recorded value and unit: %v", st["last_value"])
	}
	if l := by["loss|epoch|<nil>"]; !near(l["mean"], (1+0.5+1.0/3)/3) {
		t.Fatalf("loss %v", l)
	}
	if c := by["config|setup|<nil>"]; c["numeric_count"] != int64(0) || c["sum"] != nil {
		t.Fatalf("config %v", c)
	}
	if d := by["dataset_rows|setup|<nil>"]; !near(d["sum"], math.Pow(2, 70)) {
		t.Fatalf("dataset_rows %v", d)
	}
	if by["child_rows|<nil>|<nil>"]["pid"] == by["status|<nil>|<nil>"]["pid"] {
		t.Fatal("the forked child's series has the parent's pid")
	}
	s := r.Summary
	if !s.Complete || s.RowsObserved != 8 || s.Metrics["observations"].Value != int64(12) || s.Metrics["unclosed_phases"].Value != int64(1) {
		t.Fatalf("summary %+v", s)
	}
	if !slices.ContainsFunc(s.Limitations, func(l string) bool { return strings.Contains(l, "never ended") }) {
		t.Fatalf("limitations %q", s.Limitations)
	}
	if r.Header.Name != table.ObservationSeries.Name || r.Header.Evidence != evidence.Derived {
		t.Fatalf("table %s, %s evidence", r.Header.Name, r.Header.Evidence)
	}
}

func TestModesAndFilters(t *testing.T) {
	cases := []struct {
		name     string
		args     evidence.Object
		files    []string
		want     []string // a column per row
		col      string
		observed int64
		omitted  int64
	}{
		{"raw, glob before the bound", evidence.Object{"mode": "raw", "name_glob": "step_*", "top": 2}, []string{"python.observations.jsonl"},
			[]string{"12.0", "13.0"}, "value", 4, 2},
		{"raw, phase filter", evidence.Object{"mode": "raw", "phase": "train"}, []string{"python.observations.jsonl"},
			[]string{"0.011"}, "value", 1, 0},
		{"aggregate, phase filter", evidence.Object{"phase": "load"}, []string{"go.observations.jsonl"},
			[]string{"batch_latency", "rows"}, "name", 2, 0},
		{"aggregate, top 1 of a glob", evidence.Object{"name_glob": "s*", "top": 1}, []string{"python.observations.jsonl"},
			[]string{"status"}, "name", 3, 2},
		{"phases, unclosed first", evidence.Object{"mode": "phases", "top": 2}, []string{"python.observations.jsonl"},
			[]string{"shutdown", "train"}, "phase", 6, 4},
		{"phases of one name", evidence.Object{"mode": "phases", "phase": "epoch"}, []string{"python.observations.jsonl"},
			[]string{"epoch", "epoch", "epoch"}, "phase", 3, 0},
		{"two artifacts never blend", evidence.Object{"name_glob": "status"}, []string{"python.observations.jsonl", "go.observations.jsonl"},
			[]string{"status", "status"}, "name", 2, 0},
		{"the same table twice is refused", evidence.Object{}, []string{"go.observations.jsonl"}, nil, "", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.col == "" {
				// The same file twice is one artifact id: a typed refusal.
				p := newProjector(t, c.args)
				in := decode(t, c.files[0])
				if err := projectiontest.Feed(p, in...); err != nil {
					t.Fatal(err)
				}
				if err := projectiontest.Feed(p, decode(t, c.files[0])...); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
					t.Fatalf("feeding one table twice: %v", err)
				}
				return
			}
			r := project(t, c.args, c.files...)
			var got []string
			for _, row := range r.Rows {
				got = append(got, fmt.Sprint(row[c.col]))
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("%s = %q, want %q", c.col, got, c.want)
			}
			if r.Summary.RowsObserved != c.observed {
				t.Fatalf("rows_observed %d, want %d", r.Summary.RowsObserved, c.observed)
			}
			omitted := int64(0)
			if r.Summary.Truncation != nil {
				omitted = r.Summary.Truncation.Omitted
			}
			if omitted != c.omitted || (omitted > 0) == r.Summary.Complete {
				t.Fatalf("truncation %+v complete %v, want %d omitted", r.Summary.Truncation, r.Summary.Complete, c.omitted)
			}
		})
	}
}

func TestPhases(t *testing.T) {
	r := project(t, evidence.Object{"mode": "phases"}, "python.observations.jsonl")
	if r.Header.Name != table.ObservationPhases.Name || len(r.Rows) != 6 {
		t.Fatalf("%s with %d rows", r.Header.Name, len(r.Rows))
	}
	first := r.Rows[0]
	if first["phase"] != "shutdown" || first["closed"] != false || first["end_ts"] != nil || first["duration"] != nil {
		t.Fatalf("unclosed phase row %v", first)
	}
	for _, row := range r.Rows[1:] {
		if row["closed"] != true || row["duration"].(float64) < 0 {
			t.Fatalf("closed phase row %v", row)
		}
		if row["phase"] == "epoch" && row["depth"] != int64(1) {
			t.Fatalf("epoch inside train has depth %v", row["depth"])
		}
	}
}

// Raw mode passes the records through as observed evidence, each with its
// artifact.
func TestRaw(t *testing.T) {
	in := decode(t, "go.observations.jsonl")
	r := project(t, evidence.Object{"mode": "raw", "top": 3}, "go.observations.jsonl")
	if r.Header.Name != table.ObservationRawRecords.Name || r.Header.Evidence != evidence.Observed || r.Header.Decoder != in[0].Header.Decoder {
		t.Fatalf("header %+v", r.Header)
	}
	var observations []evidence.Object
	for _, o := range in[0].Values() {
		if o["kind"] == "observation" {
			observations = append(observations, o)
		}
	}
	for i, row := range r.Rows {
		if !slices.Equal(r.Header.ArtifactIDs, []string{row["artifact_id"].(string)}) {
			t.Fatalf("row %v", row)
		}
		// In file order: the first observations, unchanged.
		a, _ := evidence.Canonical(row)
		b, _ := evidence.Canonical(observations[i])
		if string(a) != string(b) {
			t.Fatalf("row %d\n%s\nis not the record\n%s", i, a, b)
		}
	}
}

// feedRows feeds synthetic observation rows as one closed table.
func feedRows(t *testing.T, p projection.Projector, rows ...evidence.Object) {
	t.Helper()
	in := &projectiontest.Input{Header: &evidence.Table{ID: "t.observations.records", Name: table.ObservationRecords.Name,
		Columns: table.ObservationRecords.EvidenceColumns(""), ArtifactIDs: []string{"a"}}, Summary: &evidence.Summary{Complete: true}}
	for i, r := range rows {
		base := evidence.Object{"artifact_id": "a", "line": int64(i + 1), "kind": "observation", "name": nil, "phase": nil,
			"unit": nil, "value": nil, "ts": int64(i), "pid": int64(1)}
		for k, v := range r {
			base[k] = v
		}
		in.Rows = append(in.Rows, base)
	}
	if err := projectiontest.Feed(p, in); err != nil {
		t.Fatal(err)
	}
}

func TestUnits(t *testing.T) {
	p := newProjector(t, nil)
	feedRows(t, p,
		evidence.Object{"name": "lat", "value": json.Number("500"), "unit": "ms"},
		evidence.Object{"name": "lat", "value": json.Number("1.5"), "unit": "s"},
		evidence.Object{"name": "lat", "value": json.Number("2000000"), "unit": "us"},
		evidence.Object{"name": "mem", "value": json.Number("2"), "unit": "KiB"},
		evidence.Object{"name": "n", "value": json.Number("3"), "unit": "count"},
		evidence.Object{"name": "n", "value": json.Number("4"), "unit": "widgets"},
		evidence.Object{"name": "huge", "value": json.Number(strings.Repeat("9", 400))},
	)
	r, err := projectiontest.Finish(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range r.Rows {
		got = append(got, fmt.Sprintf("%s %v %v %v", key(row), row["count"], row["numeric_count"], row["sum"]))
	}
	want := []string{"huge|<nil>|<nil> 1 0 <nil>", "lat|<nil>|s 3 3 4", "mem|<nil>|bytes 1 1 2048", "n|<nil>|count 1 1 3", "n|<nil>|widgets 1 1 4"}
	if !slices.Equal(got, want) {
		t.Fatalf("series\n got %q\nwant %q", got, want)
	}
}

func TestUnmatchedAndIncomplete(t *testing.T) {
	p := newProjector(t, evidence.Object{"mode": "phases"})
	feedRows(t, p,
		evidence.Object{"kind": "phase_end", "phase": "ghost"},
		evidence.Object{"kind": "phase_start", "phase": "a", "pid": int64(1)},
		evidence.Object{"kind": "phase_end", "phase": "a", "pid": int64(2)}, // another process: no match
	)
	r, err := projectiontest.Finish(p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Metrics["unmatched_phase_ends"].Value != int64(2) || r.Summary.Metrics["unclosed_phases"].Value != int64(1) || len(r.Rows) != 1 {
		t.Fatalf("summary %+v rows %v", r.Summary, r.Rows)
	}
	p = newProjector(t, nil)
	tb := &evidence.Table{ID: "x", Name: table.ObservationRecords.Name, Columns: table.ObservationRecords.EvidenceColumns("")}
	if err := p.Table(tb, formats.Caps{}); err != nil {
		t.Fatal(err)
	}
	if r, err = projectiontest.Finish(p); err != nil {
		t.Fatal(err)
	}
	if r.Summary.Complete {
		t.Fatal("a table without summary projected as complete")
	}
}

func TestArguments(t *testing.T) {
	cases := []struct {
		name string
		args evidence.Object
	}{
		{"name_glob in phases mode", evidence.Object{"mode": "phases", "name_glob": "x"}},
		{"unknown mode", evidence.Object{"mode": "histogram"}},
		{"top zero", evidence.Object{"top": 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := projectiontest.Start(Spec, c.args); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
				t.Fatalf("want INVALID_ARGUMENT, got %v", err)
			}
		})
	}
	p := newProjector(t, nil)
	if err := p.Table(&evidence.Table{ID: "x", Name: table.PytestOutcomes.Name}, formats.Caps{}); evidence.CodeOf(err) != evidence.CodeUnsupportedFormat {
		t.Fatalf("other table: %v", err)
	}
}

func BenchmarkObservations(b *testing.B) {
	inputs := append(projectiontest.Decode(b, obsformat.Spec, filepath.Join(fixtures, "python.observations.jsonl"), nil),
		projectiontest.Decode(b, obsformat.Spec, filepath.Join(fixtures, "go.observations.jsonl"), nil)...)
	for _, mode := range []string{ModeAggregate, ModeRaw, ModePhases} {
		b.Run(mode, func(b *testing.B) { projectiontest.Bench(b, Spec, evidence.Object{"mode": mode}, inputs...) })
	}
}

func FuzzObservations(f *testing.F) {
	in := projectiontest.Decode(f, obsformat.Spec, filepath.Join(fixtures, "python.observations.jsonl"), nil)[0]
	projectiontest.FuzzRows(f, Spec, in, nil, evidence.Object{"mode": ModeRaw, "top": int64(2)},
		evidence.Object{"mode": ModePhases, "phase": "epoch"}, evidence.Object{"name_glob": "s*", "phase": "train"})
}
