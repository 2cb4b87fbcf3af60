package projection_test

import (
	"slices"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

func records(id string, artifacts ...string) *evidence.Table {
	return &evidence.Table{ID: id, Name: table.ObservationRecords.Name, Format: "observations",
		Columns: table.ObservationRecords.EvidenceColumns(""), ArtifactIDs: artifacts,
		Decoder: evidence.Producer{Name: "observations", Version: "1"}}
}

func TestAdmission(t *testing.T) {
	in := projection.NewInputs[int](table.ObservationRecords.Schema)
	in.Bound(projection.ArtifactBound{Name: "max_files", Max: 2, Unit: "files"})
	a := records("a", "sha256:a")
	if _, err := in.Admit(a, formats.Caps{}, 1); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		t    *evidence.Table
		code evidence.Code
	}{
		"another table": {&evidence.Table{ID: "f", Name: table.CPUFrames.Name}, evidence.CodeUnsupportedFormat},
		"twice":         {records("a", "sha256:a"), evidence.CodeInvalidArgument},
		"lacking a column": {&evidence.Table{ID: "c", Name: table.ObservationRecords.Name,
			Columns: table.ObservationRecords.EvidenceColumns("")[1:], ArtifactIDs: []string{"sha256:a"}}, evidence.CodeInvalidArgument},
		"over the bound": {records("b", "sha256:b", "sha256:c"), evidence.CodeLimitExceeded},
	} {
		if _, err := in.Admit(c.t, formats.Caps{}, 0); evidence.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", name, err, c.code)
		}
	}
	if len(in.List()) != 1 || !slices.Equal(in.Artifacts(), []string{"sha256:a"}) {
		t.Fatalf("a refused table was recorded: %d tables, artifacts %v", len(in.List()), in.Artifacts())
	}
	_, err := in.Admit(records("b", "sha256:b", "sha256:c"), formats.Caps{}, 0)
	f, _ := err.(*evidence.Failure)
	if lim, _ := f.Details["limit"].(evidence.Object); lim["name"] != "max_files" || lim["value"] != int64(2) || lim["observed"] != int64(3) || lim["unit"] != "files" {
		t.Fatalf("receipt %v", f.Details)
	}
	x, err := in.Admit(records("b", "sha256:a"), formats.Caps{Statements: true}, 7)
	if err != nil || x.Index != 1 || x.Artifact != "sha256:a" || !x.Caps.Statements || x.State != 7 {
		t.Fatalf("%+v %v", x, err)
	}
	if err := in.Table(records("c", "sha256:b"), formats.Caps{}); err != nil || len(in.List()) != 3 || in.List()[2].State != 0 {
		t.Fatalf("Table admits with the zero state: %v", err)
	}
	var empty projection.Inputs[int]
	if err := empty.Ready(); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("ready without tables: %v", err)
	}
	if _, err := empty.Admit(a, formats.Caps{}, 0); err == nil {
		t.Fatal("the zero value admitted a table")
	}
}

func TestRowsAndSummaries(t *testing.T) {
	in := projection.NewInputs[struct{}](table.ObservationRecords.Schema)
	one, several := records("one", "sha256:a"), records("several", "sha256:b", "sha256:c")
	in.Admit(one, formats.Caps{}, struct{}{})
	in.Admit(several, formats.Caps{}, struct{}{})
	row := func(artifact string) evidence.Object {
		o, _ := table.ObservationRecords.Values(&table.ObservationRecord{Kind: "observation"}, artifact)
		return o
	}
	cases := []struct {
		name     string
		t        *evidence.Table
		row      any
		artifact string
		code     evidence.Code
	}{
		{"typed", one, &table.ObservationRecord{}, "sha256:a", ""},
		{"object", one, row("sha256:a"), "sha256:a", ""},
		{"object, artifact left to the table", one, row(""), "sha256:a", ""},
		{"object of another artifact", one, row("sha256:x"), "", evidence.CodeInvalidArgument},
		{"table of several artifacts", several, row("sha256:c"), "sha256:c", ""},
		{"not admitted", records("other", "sha256:a"), row("sha256:a"), "", evidence.CodeInternal},
	}
	for _, c := range cases {
		_, _, a, err := projection.Read(&in, table.ObservationRecords, c.t, c.row)
		if evidence.CodeOf(err) != c.code || a != c.artifact {
			t.Errorf("%s: artifact %q, %v; want %q, %q", c.name, a, err, c.artifact, c.code)
		}
	}
	if in.List()[0].Rows != 3 {
		t.Fatalf("rows counted %d", in.List()[0].Rows)
	}
	if err := in.Summary(one, &evidence.Summary{Complete: true}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"second summary": in.Summary(one, &evidence.Summary{}),
		"row after it":   fourth(projection.Read(&in, table.ObservationRecords, one, row("sha256:a"))),
		"not admitted":   in.Summary(records("other"), &evidence.Summary{}),
	} {
		if err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func fourth[A, B, C any](_ A, _ B, _ C, err error) error { return err }

func TestSummary(t *testing.T) {
	for _, c := range []struct {
		name       string
		summaries  []*evidence.Summary // one per input; nil: never closed
		trunc      *evidence.Truncation
		complete   bool
		limits     []string
		incomplete []string
	}{
		{"nothing read", nil, nil, false, []string{"no observations.records table was read: an empty result is not evidence that there is nothing to find"}, []string{}},
		{"complete", []*evidence.Summary{{Complete: true}}, nil, true, nil, []string{}},
		{"bound cut", []*evidence.Summary{{Complete: true}}, &evidence.Truncation{Reason: "top", Limit: 1, Omitted: 1}, false, nil, []string{}},
		{"never closed", []*evidence.Summary{nil}, nil, false, []string{"input table t0 ended without its summary: the input was cut off"}, []string{}},
		{"incomplete, saying why", []*evidence.Summary{{Limitations: []string{"cut"}}}, nil, false, []string{"cut"}, []string{"t0"}},
		{"incomplete, silent", []*evidence.Summary{{}}, nil, false,
			[]string{"input table t0 is incomplete: the result covers only the rows it holds"}, []string{"t0"}},
		{"several say which", []*evidence.Summary{{Complete: true, Limitations: []string{"note", "shared"}}, {Limitations: []string{"shared", "cut"}},
			{Complete: true, Limitations: []string{"note", "shared"}}}, nil, false,
			[]string{"t0, t2: note", "shared", "t1: cut"}, []string{"t1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := projection.NewInputs[struct{}](table.ObservationRecords.Schema)
			for i, s := range c.summaries {
				tb := records("t"+string(rune('0'+i)), "sha256:a")
				in.Admit(tb, formats.Caps{}, struct{}{})
				if s != nil {
					in.Summary(tb, s)
				}
			}
			s := in.Summarize(3, c.trunc)
			if s.Complete != c.complete || !slices.Equal(s.Limitations, c.limits) || s.RowsObserved != 3 || s.Truncation != c.trunc {
				t.Fatalf("summary %+v", s)
			}
			if s.Coverage["input_tables"] != int64(len(c.summaries)) || !slices.Equal(s.Coverage["incomplete_input_tables"].([]string), c.incomplete) {
				t.Fatalf("coverage %v", s.Coverage)
			}
		})
	}
}

func TestHeaderAndResult(t *testing.T) {
	in := projection.NewInputs[struct{}](table.ObservationRecords.Schema)
	a, b := records("a", "sha256:a"), records("b", "sha256:b")
	in.Admit(a, formats.Caps{}, struct{}{})
	in.Admit(b, formats.Caps{}, struct{}{})
	args := evidence.Object{"top": int64(3)}
	h := in.Header(table.ObservationRawRecords.Schema, "", evidence.Observed, args)
	h.Arguments["extra"] = true
	if args["extra"] != nil || h.Format != "observations" || h.Decoder != a.Decoder || !slices.Equal(h.ArtifactIDs, []string{"sha256:a", "sha256:b"}) ||
		h.Operation != "" || h.Projection != "" || len(h.Columns) != len(table.ObservationRawRecords.Columns) {
		t.Fatalf("header %+v", h)
	}
	if d := in.Header(table.ObservationSeries.Schema, "", evidence.Derived, nil).Decoder; d != (evidence.Producer{}) {
		t.Fatalf("derived evidence keeps the decoder %v", d)
	}
	b.Format, b.Decoder = "other", evidence.Producer{Name: "other"}
	if h := in.Header(table.ObservationRawRecords.Schema, "", evidence.Observed, nil); h.Format != "" || h.Decoder != (evidence.Producer{}) {
		t.Fatalf("mixed inputs claim one format or decoder: %+v", h)
	}

	var r projectiontest.Result
	res, err := projection.Begin(&r, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Row(&table.ObservationRecord{Kind: "observation", Line: 2}, "sha256:b"); err != nil {
		t.Fatal(err)
	}
	if err := res.Row(&table.Frame{}, ""); evidence.CodeOf(err) != evidence.CodeInternal {
		t.Fatalf("a row of another schema: %v", err)
	}
	if err := res.End(in.Summarize(1, nil)); err != nil {
		t.Fatal(err)
	}
	if r.Rows[0]["artifact_id"] != "sha256:b" || r.Summary.RowsEmitted != 1 {
		t.Fatalf("rows %v summary %+v", r.Rows, r.Summary)
	}
	if _, err := projection.Begin(&projectiontest.Result{}, &evidence.Table{Name: "no.such_tables"}); evidence.CodeOf(err) != evidence.CodeInternal {
		t.Fatalf("an undeclared result table: %v", err)
	}
}
