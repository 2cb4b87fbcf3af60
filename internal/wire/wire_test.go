package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
)

func TestReaderWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	blocks := []evidence.Marshaler{
		&evidence.Artifact{ID: "sha256:" + strings.Repeat("ab", 32), Path: "/x/a.cpuprofile", Size: 3, Name: "a.cpuprofile", Role: "explicit", Format: "v8-cpuprofile"},
		&evidence.Table{ID: "t", Name: "cpu.frames", Operation: "decode", Columns: []evidence.Column{{Name: "n", Type: evidence.TypeInt}}, Evidence: evidence.Observed},
		&evidence.Row{TableID: "t", Values: evidence.Object{"n": int64(1) << 60}},
		&evidence.Summary{TableID: "t", RowsObserved: 1, RowsEmitted: 1, Complete: true},
		&evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "bad", Location: evidence.Location{Path: "/x", Line: 3}, Retry: &evidence.Retry{Action: "rerun", Argv: []string{"a"}}},
	}
	for _, b := range blocks {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r := NewReader(iotest.HalfReader(&buf))
	var got []*evidence.Raw
	for {
		raw, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, raw)
	}
	if len(got) != len(blocks) {
		t.Fatalf("read %d blocks, wrote %d", len(got), len(blocks))
	}
	a, err := evidence.ArtifactFrom(got[0].Obj)
	if err != nil || a.Path != "/x/a.cpuprofile" || a.Size != 3 {
		t.Fatalf("artifact: %+v %v", a, err)
	}
	row, _ := evidence.RowFrom(got[2].Obj)
	if n, ok := evidence.AsInt(row.Values["n"]); !ok || n != 1<<60 {
		t.Fatalf("big integer lost: %v", row.Values["n"])
	}
	if row.Values["n"] != "1152921504606846976" {
		t.Fatalf("big integer must travel as a string, got %#v", row.Values["n"])
	}
	f, _ := evidence.FailureFrom(got[4].Obj)
	if f.Code != evidence.CodeDecodeFailure || f.Location.Line != 3 || f.Retry.Argv[0] != "a" {
		t.Fatalf("failure: %+v", f)
	}
}

func TestReaderErrors(t *testing.T) {
	cases := []struct {
		in   string
		code evidence.Code
		line int
	}{
		{`{"schema":"flameox/1","kind":"row"}` + "\n" + `not json`, evidence.CodeInvalidArgument, 2},
		{`{"schema":"other/9","kind":"row"}`, evidence.CodeInvalidArgument, 1},
		{`{"schema":"flameox/1"}`, evidence.CodeInvalidArgument, 1},
		{`[1,2]`, evidence.CodeInvalidArgument, 1},
		{"\n\n" + `{"schema":"flameox/1","kind":"x","a":1,"a":2}`, evidence.CodeInvalidArgument, 3},
	}
	for _, c := range cases {
		r := NewReader(strings.NewReader(c.in))
		var err error
		for err == nil {
			_, err = r.Next()
		}
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != c.code || f.Location.Line != c.line {
			t.Errorf("%q: want %s at line %d, got %v", c.in, c.code, c.line, err)
		}
	}
	r := NewReaderSize(strings.NewReader(`{"schema":"flameox/1","kind":"row","v":"`+strings.Repeat("x", 100)+`"}`), 50)
	_, err := r.Next()
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded {
		t.Fatalf("long line: %v", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"schema":"flameox/1","kind":"row","table_id":"t","values":{"a":1}}` + "\n\n" + `{"schema":"flameox/1","kind":"summary"}`))
	f.Add([]byte(`{"schema":"flameox/1","kind":"failure","code":"X","message":"m","location":{"line":2}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReaderSize(bytes.NewReader(b), 1<<16)
		for {
			raw, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var f *evidence.Failure
				if !errors.As(err, &f) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			c, err := evidence.Canonical(raw.Obj)
			if err != nil {
				t.Fatalf("accepted block does not encode: %v", err)
			}
			if _, err := evidence.ParseValue(c, 64); err != nil {
				t.Fatalf("canonical block does not parse: %v", err)
			}
			// Typed readers must fail cleanly, never panic.
			switch raw.Kind() {
			case evidence.KindArtifact:
				evidence.ArtifactFrom(raw.Obj)
			case evidence.KindTable:
				evidence.TableFrom(raw.Obj)
			case evidence.KindRow:
				evidence.RowFrom(raw.Obj)
			case evidence.KindSummary:
				evidence.SummaryFrom(raw.Obj)
			case evidence.KindFailure:
				evidence.FailureFrom(raw.Obj)
			}
		}
	})
}
