package bundle

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/wire"
)

// stream encodes blocks as a flameox JSONL stream.
func stream(t testing.TB, blocks ...evidence.Marshaler) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	for _, b := range blocks {
		must(t, w.Write(b))
	}
	must(t, w.Flush())
	return buf.Bytes()
}

// blocks returns e as the stream a capture and decode would print.
func (e *evidenceSet) blocks() []evidence.Marshaler {
	out := []evidence.Marshaler{e.capture, e.artifact, e.table}
	for _, r := range e.rows {
		out = append(out, &evidence.Row{TableID: e.table.ID, Values: r})
	}
	out = append(out, &evidence.Summary{TableID: e.table.ID, RowsObserved: int64(len(e.rows)), RowsEmitted: int64(len(e.rows)), Complete: true,
		Metrics: map[string]evidence.Metric{"total_weight": {Value: 2.5, Unit: "s"}}})
	return append(out, e.failure)
}

func TestPreserveStream(t *testing.T) {
	src := t.TempDir()
	e := sampleEvidence(t, src)
	// A bundle block from an earlier preserve passes through unpreserved.
	earlier := &evidence.Bundle{ID: "sha256:" + strings.Repeat("e", 64), Path: "/elsewhere", Members: []evidence.Member{}}
	in := stream(t, append(e.blocks(), earlier)...)

	var out bytes.Buffer
	w := wire.NewWriter(&out)
	store := t.TempDir()
	bl, _, err := Preserve(context.Background(), store, bytes.NewReader(in), w)
	must(t, err)
	must(t, w.Flush())

	want := string(in) + canon(t, bl) + "\n"
	if out.String() != want {
		t.Errorf("output is not the input followed by the bundle block:\n%s\nwant:\n%s", out.String(), want)
	}
	// Capture-time preservation through the Builder gives the same id.
	if lib := e.build(t, t.TempDir()); lib.ID != bl.ID {
		t.Errorf("stream preserve gave %s, the Builder %s for the same evidence", bl.ID, lib.ID)
	}
	r, err := Open(bl.Path)
	must(t, err)
	if len(r.Artifacts()) != 1 || len(r.Captures()) != 1 || len(r.Failures()) != 1 || len(r.Manifest.Tables) != 1 {
		t.Errorf("preserved %d artifacts, %d captures, %d failures, %d tables", len(r.Artifacts()), len(r.Captures()), len(r.Failures()), len(r.Manifest.Tables))
	}
	// The same stream again: same id, no second bundle.
	again, _, err := Preserve(context.Background(), store, bytes.NewReader(in), wire.NewWriter(&bytes.Buffer{}))
	must(t, err)
	if again.ID != bl.ID {
		t.Errorf("second preserve gave %s, want %s", again.ID, bl.ID)
	}
}

func TestPreserveStreamFailures(t *testing.T) {
	src := t.TempDir()
	e := sampleEvidence(t, src)
	row := func(id string) *evidence.Row { return &evidence.Row{TableID: id, Values: e.rows[0]} }
	sum := func(n int64) *evidence.Summary {
		return &evidence.Summary{TableID: e.table.ID, RowsEmitted: n, RowsObserved: n, Complete: true}
	}
	badDigest := *e.artifact
	badDigest.ID = "sha256:" + strings.Repeat("0", 64)
	badRow := evidence.Object{"function": 1, "self_weight": 1.0, "calls": 1, "attrs": nil, "inlined": false}

	tests := []struct {
		name  string
		in    []byte
		code  evidence.Code
		line  int    // input line the failure names (0: not checked)
		field string // location field, when the failure names one
	}{
		{"row before its header", stream(t, e.capture, row("nope")), evidence.CodeInvalidArgument, 2, ""},
		{"summary before its header", stream(t, e.artifact, sum(0)), evidence.CodeInvalidArgument, 2, ""},
		{"row after the summary", stream(t, e.table, row(e.table.ID), sum(1), row(e.table.ID)), evidence.CodeInvalidArgument, 4, ""},
		{"summary miscounts rows", stream(t, e.table, row(e.table.ID), sum(2)), evidence.CodeInvalidArgument, 3, ""},
		{"header twice", stream(t, e.table, e.table), evidence.CodeInvalidArgument, 2, ""},
		{"row value of the wrong type", stream(t, e.table, &evidence.Row{TableID: e.table.ID, Values: badRow}), evidence.CodeInvalidArgument, 2, "function"},
		{"unknown kind", append(stream(t, e.capture), `{"kind":"mystery","schema":"flameox/1"}`+"\n"...), evidence.CodeInvalidArgument, 2, ""},
		{"not JSON", append(stream(t, e.capture), "{oops\n"...), evidence.CodeInvalidArgument, 2, ""},
		{"artifact block without an id", []byte(`{"kind":"artifact","schema":"flameox/1","path":"/x","size":1}` + "\n"), evidence.CodeInvalidArgument, 1, ""},
		{"nothing to preserve", nil, evidence.CodeInvalidArgument, 0, ""},
		{"native bytes do not match", stream(t, e.capture, &badDigest), evidence.CodeIntegrity, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := t.TempDir()
			_, _, err := Preserve(context.Background(), store, bytes.NewReader(tt.in), wire.NewWriter(&bytes.Buffer{}))
			f := failureOf(t, err, tt.code)
			if tt.line > 0 && (f.Location.Line != tt.line || f.Location.Path != "<stdin>") {
				t.Errorf("located at %+v, want <stdin> line %d: %v", f.Location, tt.line, f)
			}
			if f.Location.Field != tt.field {
				t.Errorf("field %q, want %q", f.Location.Field, tt.field)
			}
			if entries, _ := os.ReadDir(filepath.Join(store, "bundles")); len(entries) != 0 {
				t.Errorf("a failed preserve published %v", entries)
			}
			if entries, _ := os.ReadDir(filepath.Join(store, "tmp")); len(entries) != 0 {
				t.Errorf("a failed preserve left %v", entries)
			}
		})
	}

	t.Run("artifact failure keeps its file location", func(t *testing.T) {
		_, _, err := Preserve(context.Background(), t.TempDir(), bytes.NewReader(stream(t, e.capture, &badDigest)), wire.NewWriter(&bytes.Buffer{}))
		f := failureOf(t, err, evidence.CodeIntegrity)
		if f.Location.Path != badDigest.Path || f.Location.ArtifactID != badDigest.ID || f.Details["input_line"] != 2 {
			t.Errorf("location %+v details %v", f.Location, f.Details)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err := Preserve(ctx, t.TempDir(), bytes.NewReader(stream(t, e.blocks()...)), wire.NewWriter(&bytes.Buffer{}))
		failureOf(t, err, evidence.CodeCancelled)
	})
}
