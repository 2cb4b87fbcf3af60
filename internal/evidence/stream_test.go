package evidence

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReaderWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	blocks := []Marshaler{
		&Artifact{ID: "sha256:" + strings.Repeat("ab", 32), Path: "/x/a.cpuprofile", Size: 3, Name: "a.cpuprofile", Role: "explicit", Format: "v8-cpuprofile"},
		&Table{ID: "t", Name: "cpu.frames", Operation: "decode", Columns: []Column{{Name: "n", Type: TypeInt}}, Evidence: Observed},
		&Row{TableID: "t", Values: Object{"n": int64(1) << 60}},
		&Summary{TableID: "t", RowsObserved: 1, RowsEmitted: 1, Complete: true},
		&Failure{Code: CodeDecodeFailure, Message: "bad", Location: Location{Path: "/x", Line: 3}, Retry: &Retry{Action: "rerun", Argv: []string{"a"}}},
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
	var got []*Raw
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
	a, err := ArtifactFrom(got[0].Obj)
	if err != nil || a.Path != "/x/a.cpuprofile" || a.Size != 3 {
		t.Fatalf("artifact: %+v %v", a, err)
	}
	row, _ := RowFrom(got[2].Obj)
	if n, ok := AsInt(row.Values["n"]); !ok || n != 1<<60 {
		t.Fatalf("big integer lost: %v", row.Values["n"])
	}
	if row.Values["n"] != "1152921504606846976" {
		t.Fatalf("big integer must travel as a string, got %#v", row.Values["n"])
	}
	f, _ := FailureFrom(got[4].Obj)
	if f.Code != CodeDecodeFailure || f.Location.Line != 3 || f.Retry.Argv[0] != "a" {
		t.Fatalf("failure: %+v", f)
	}
}

func TestReaderErrors(t *testing.T) {
	cases := []struct {
		in   string
		code Code
		line int
	}{
		{`{"schema":"flameox/1","kind":"row"}` + "\n" + `not json`, CodeInvalidArgument, 2},
		{`{"schema":"other/9","kind":"row"}`, CodeInvalidArgument, 1},
		{`{"schema":"flameox/1"}`, CodeInvalidArgument, 1},
		{`[1,2]`, CodeInvalidArgument, 1},
		{"\n\n" + `{"schema":"flameox/1","kind":"x","a":1,"a":2}`, CodeInvalidArgument, 3},
	}
	for _, c := range cases {
		r := NewReader(strings.NewReader(c.in))
		var err error
		for err == nil {
			_, err = r.Next()
		}
		var f *Failure
		if !errors.As(err, &f) || f.Code != c.code || f.Location.Line != c.line {
			t.Errorf("%q: want %s at line %d, got %v", c.in, c.code, c.line, err)
		}
	}
	r := NewReader(strings.NewReader(`{"schema":"flameox/1","kind":"row","v":"` + strings.Repeat("x", 100) + `"}`))
	r.MaxLine = 50
	_, err := r.Next()
	var f *Failure
	if !errors.As(err, &f) || f.Code != CodeLimitExceeded {
		t.Fatalf("long line: %v", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"schema":"flameox/1","kind":"row","table_id":"t","values":{"a":1}}` + "\n\n" + `{"schema":"flameox/1","kind":"summary"}`))
	f.Add([]byte(`{"schema":"flameox/1","kind":"failure","code":"X","message":"m","location":{"line":2}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b))
		r.MaxLine = 1 << 16
		for {
			raw, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var f *Failure
				if !errors.As(err, &f) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			c, err := Canonical(raw.Obj)
			if err != nil {
				t.Fatalf("accepted block does not encode: %v", err)
			}
			if _, err := ParseValue(c, 64); err != nil {
				t.Fatalf("canonical block does not parse: %v", err)
			}
			// Typed readers must fail cleanly, never panic.
			switch raw.Kind() {
			case KindArtifact:
				ArtifactFrom(raw.Obj)
			case KindTable:
				TableFrom(raw.Obj)
			case KindRow:
				RowFrom(raw.Obj)
			case KindSummary:
				SummaryFrom(raw.Obj)
			case KindFailure:
				FailureFrom(raw.Obj)
			}
		}
	})
}
