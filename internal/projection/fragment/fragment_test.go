package fragment

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/text"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// fragment decodes data as text with decodeOpts and projects a window,
// feeding the rows both as values (a block stream) and typed (in
// process); the two results must be the same.
func fragment(t testing.TB, data []byte, decodeOpts, args evidence.Object) *formatstest.Table {
	t.Helper()
	sink, err := formatstest.Decode(text.Spec, "t.txt", data, decodeOpts, nil)
	if err != nil {
		t.Fatal(err)
	}
	eff, given, err := param.Validate(Spec.Params, args)
	if err != nil {
		t.Fatal(err)
	}
	var got []*formatstest.Table
	for _, typed := range []bool{false, true} {
		p, err := Spec.New(eff, given)
		if err != nil {
			t.Fatal(err)
		}
		out := formatstest.Project(t, p, text.Spec, "sha256:test", sink, typed)
		if len(out.Tables) != 1 || out.Tables[0].Header.Name != table.TextFragmentLines.Name || out.Tables[0].Header.Operation != "" {
			t.Fatalf("result tables %+v", out.Tables)
		}
		got = append(got, out.Tables[0])
	}
	if a, b := formatstest.Canonical(t, got[0].Rows)+formatstest.Canonical(t, got[0].Summary), formatstest.Canonical(t, got[1].Rows)+formatstest.Canonical(t, got[1].Summary); a != b {
		t.Fatalf("values and typed rows give different fragments:\n%s\n%s", a, b)
	}
	return got[0]
}

// reassemble rebuilds the native bytes a fragment shows: each row's bytes
// and its terminator.
func reassemble(t testing.TB, tb *formatstest.Table) []byte {
	var b []byte
	for _, v := range tb.Rows {
		r, err := table.TextFragmentLines.Scan(v)
		if err != nil {
			t.Fatal(err)
		}
		shown, err := text.Shown(r)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, shown...)
		switch r.Terminator.V {
		case table.LF:
			b = append(b, '\n')
		case table.CRLF:
			b = append(b, '\r', '\n')
		}
	}
	return b
}

func TestLineWindow(t *testing.T) {
	data := formatstest.Read(t, "preview/text/python-importtime.txt")
	tb := fragment(t, data, nil, evidence.Object{"start_line": 3, "lines": 4})
	lines := bytes.SplitAfter(data, []byte("\n"))
	if got, want := reassemble(t, tb), bytes.Join(lines[2:6], nil); !bytes.Equal(got, want) {
		t.Errorf("fragment %q\nwant %q", got, want)
	}
	if !tb.Summary.Complete || formatstest.Canonical(t, tb.Summary.Coverage["window"]) != `{"kind":"lines","lines":4,"start_line":3}` {
		t.Errorf("%+v", tb.Summary)
	}
}

// TestByteWindow: the rows of a byte window reassemble to exactly the
// window's native bytes, even when it starts and ends mid-line.
func TestByteWindow(t *testing.T) {
	data := formatstest.Read(t, "preview/text/python-importtime.txt")
	for _, w := range [][2]int64{{60, 50}, {0, 1}, {54, 1}, {100, 700}, {1290, 10}} {
		tb := fragment(t, data, nil, evidence.Object{"offset": w[0], "length": w[1]})
		if got, want := reassemble(t, tb), data[w[0]:w[0]+w[1]]; !bytes.Equal(got, want) {
			t.Errorf("window %v: %q\nwant %q", w, got, want)
		}
		if !tb.Summary.Complete {
			t.Errorf("window %v: %+v", w, tb.Summary)
		}
	}
	tb := fragment(t, data, nil, evidence.Object{"offset": 60, "length": 50})
	if tb.Rows[0]["offset"] != int64(60) || tb.Rows[0]["column"] != int64(5) {
		t.Errorf("first row %v", tb.Rows[0])
	}
}

// TestByteWindowSplitsCharacter: a window edge inside a UTF-8 character
// keeps the exact bytes, escaped, rather than widening the window.
func TestByteWindowSplitsCharacter(t *testing.T) {
	data := []byte("price: 5€ each\n")
	tb := fragment(t, data, nil, evidence.Object{"offset": 8, "length": 2}) // "5" and the first byte of €
	if tb.Rows[0]["escaped"] != true || tb.Rows[0]["text"] != `\xe2\x82` {
		t.Errorf("%v", tb.Rows[0])
	}
	if got := reassemble(t, tb); !bytes.Equal(got, data[8:10]) {
		t.Errorf("%q", got)
	}
}

// TestByteWindowSplitsCRLF: a window edge between '\r' and '\n' keeps
// the half of the terminator inside the window, as the text decoder does.
func TestByteWindowSplitsCRLF(t *testing.T) {
	data := []byte("one\r\ntwo\r\n")
	for _, w := range [][2]int64{{0, 4}, {4, 3}, {4, 1}, {3, 1}, {3, 2}, {2, 8}} {
		tb := fragment(t, data, nil, evidence.Object{"offset": w[0], "length": w[1]})
		if got, want := reassemble(t, tb), data[w[0]:w[0]+w[1]]; !bytes.Equal(got, want) {
			t.Errorf("window %v: %q, want %q", w, got, want)
		}
	}
	tb := fragment(t, data, nil, evidence.Object{"offset": 4, "length": 1})
	if r := tb.Rows[0]; r["terminator"] != table.LF || r["bytes"] != int64(0) || r["offset"] != int64(4) {
		t.Errorf("the lone \\n of a CRLF: %v", r)
	}
}

func TestCoverage(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789\n"), 1000) // 11000 bytes
	for _, c := range []struct {
		name       string
		decode     evidence.Object
		args       evidence.Object
		complete   bool
		limitation string
	}{
		{"byte window beyond the decoded bytes", evidence.Object{"max_bytes": 100}, evidence.Object{"offset": 500, "length": 20}, false, "--option offset=500 --option max_bytes=20"},
		{"byte window decoded with offset", evidence.Object{"offset": 500, "max_bytes": 20}, evidence.Object{"offset": 500, "length": 20}, true, ""},
		{"byte window before the decoded start", evidence.Object{"offset": 600}, evidence.Object{"offset": 500, "length": 20}, false, "starts at byte 600"},
		{"line window beyond max_lines", evidence.Object{"max_lines": 10}, evidence.Object{"start_line": 20, "lines": 5}, false, "--option start_line=20 --option max_lines=5"},
		{"line window decoded with start_line", evidence.Object{"start_line": 20, "max_lines": 5}, evidence.Object{"start_line": 20, "lines": 5}, true, ""},
		{"window past the end of the artifact", nil, evidence.Object{"start_line": 998, "lines": 10}, true, "ends at line 1000"},
		{"byte window past the end", evidence.Object{"max_bytes": 1 << 20}, evidence.Object{"offset": 10990, "length": 100}, true, "ends at byte 11000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := fragment(t, data, c.decode, c.args)
			lim := strings.Join(tb.Summary.Limitations, " | ")
			if tb.Summary.Complete != c.complete || !strings.Contains(lim, c.limitation) {
				t.Errorf("complete %v, limitations %q", tb.Summary.Complete, lim)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	data := formatstest.Read(t, "preview/text/python-importtime.txt")
	tb := fragment(t, data, nil, evidence.Object{"start_line": 1, "lines": 10, "bytes": 100})
	s := tb.Summary
	if s.RowsObserved != 10 || s.RowsEmitted != 2 || s.Truncation.Reason != "byte_limit" || s.Truncation.Omitted != 8 || s.Complete {
		t.Errorf("%+v %+v", s, s.Truncation)
	}
}

func TestCutLines(t *testing.T) {
	data := []byte(strings.Repeat("x", 100) + "\nshort\n")
	tb := fragment(t, data, evidence.Object{"max_line_bytes": 10}, evidence.Object{"offset": 0, "length": 50})
	if tb.Summary.Complete || !strings.Contains(strings.Join(tb.Summary.Limitations, " "), "max_line_bytes") {
		t.Errorf("%+v", tb.Summary)
	}
}

func TestWindowArguments(t *testing.T) {
	_, err := WindowFrom(evidence.Object{"offset": int64(1), "lines": int64(2)}, map[string]bool{"offset": true, "lines": true})
	if evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Errorf("%v", err)
	}
	w, _ := WindowFrom(evidence.Object{}, map[string]bool{})
	if w.Bytes || w.Line != 1 || w.EndLine != 1+DefaultLines {
		t.Errorf("default window %+v", w)
	}
	w, _ = WindowFrom(evidence.Object{"length": int64(10)}, map[string]bool{"length": true})
	if !w.Bytes || w.Offset != 0 || w.End != 10 {
		t.Errorf("byte window %+v", w)
	}
}

func TestAdmission(t *testing.T) {
	p, _ := New(evidence.Object{"bytes": int64(10)}, map[string]bool{})
	if err := p.Table(&evidence.Table{ID: "x", Name: table.PreviewRecords.Name}, formats.Caps{}); evidence.CodeOf(err) != evidence.CodeUnsupportedFormat {
		t.Errorf("%v", err)
	}
}

// FuzzFragment: a byte window of any text, decoded whole, reassembles to
// exactly the window's bytes (clipped to the end of the text).
func FuzzFragment(f *testing.F) {
	for _, s := range formatstest.Seeds(f, "preview/text", 0) {
		f.Add(s, uint16(60), uint16(50))
	}
	f.Add([]byte("a\r\nb\xff\nc€d"), uint16(2), uint16(5))
	f.Fuzz(func(t *testing.T, data []byte, offset, length uint16) {
		off, n := int64(offset), int64(length)+1
		tb := fragment(t, data, evidence.Object{"max_bytes": 1 << 20}, evidence.Object{"offset": off, "length": n})
		end := min(off+n, int64(len(data)))
		want := []byte{}
		if off < end {
			want = data[off:end]
		}
		if got := reassemble(t, tb); !bytes.Equal(got, want) {
			t.Fatalf("window %d+%d: %q, want %q", off, n, got, want)
		}
	})
}

func BenchmarkFragment(b *testing.B) {
	data := bytes.Repeat(formatstest.Read(b, "preview/text/python-importtime.txt"), 100)
	sink, err := formatstest.Decode(text.Spec, "t.txt", data, evidence.Object{"max_lines": 100000}, nil)
	if err != nil {
		b.Fatal(err)
	}
	eff, given, err := param.Validate(Spec.Params, evidence.Object{"offset": 1000, "length": 64 << 10})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p, _ := Spec.New(eff, given)
		formatstest.Project(b, p, text.Spec, "sha256:bench", sink, true)
	}
}
