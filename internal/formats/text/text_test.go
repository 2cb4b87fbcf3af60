package text

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

func decodeOK(t testing.TB, data []byte, opts evidence.Object) *formatstest.Table {
	t.Helper()
	sink, err := formatstest.Decode(Spec, "t.txt", data, opts, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return sink.Table(table.TextLines.Name)
}

// row is a recorded text.lines row with the native bytes it shows.
type row struct {
	*table.TextLine
	Shown []byte
}

// rows reads a table's rows back as a stream reader would.
func rows(t testing.TB, tb *formatstest.Table) []row {
	t.Helper()
	var out []row
	for _, v := range tb.Rows {
		r, err := table.TextLines.Scan(v)
		if err != nil {
			t.Fatal(err)
		}
		shown, err := Shown(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, row{r, shown})
	}
	return out
}

// TestFixtures compares line counts with Python's bytes.split (regen.sh)
// and checks that every row's offset, bytes and shown text reproduce the
// native bytes exactly, escaped lines included.
func TestFixtures(t *testing.T) {
	for _, name := range []string{"python-importtime.txt", "iconv-latin1.txt"} {
		t.Run(name, func(t *testing.T) {
			data := formatstest.Read(t, filepath.Join("preview/text", name))
			want := formatstest.ReadJSON(t, "preview/expected/"+name+".json")
			tb := decodeOK(t, data, nil)
			if n, _ := evidence.AsInt(want["lines"]); tb.Summary.RowsObserved != n || !tb.Summary.Complete {
				t.Errorf("lines %d (complete %v), python %d", tb.Summary.RowsObserved, tb.Summary.Complete, n)
			}
			for _, r := range rows(t, tb) {
				if !bytes.Equal(r.Shown, data[r.Offset:r.Offset+r.Bytes]) {
					t.Errorf("line %d: shown bytes differ from the native bytes", r.Line)
				}
			}
		})
	}
	t.Run("latin-1 is escaped, never replaced", func(t *testing.T) {
		tb := decodeOK(t, formatstest.Read(t, "preview/text/iconv-latin1.txt"), nil)
		if tb.Rows[0]["text"] != `caf\xe9 cr\xe8me` || tb.Rows[0]["escaped"] != true || tb.Rows[2]["escaped"] != false {
			t.Errorf("%v / %v", tb.Rows[0], tb.Rows[2])
		}
		if m := tb.Summary.Metrics["escaped_lines"]; m.Value != int64(2) {
			t.Errorf("escaped_lines %v", m)
		}
	})
}

func TestWindows(t *testing.T) {
	data := []byte("one\r\ntwo\nthree\nfour\nfive")
	for _, c := range []struct {
		name string
		opts evidence.Object
		want string // line:offset:column:text:terminator per row
		end  bool
	}{
		{"whole", nil, "1:0:0:one:crlf 2:5:0:two:lf 3:9:0:three:lf 4:15:0:four:lf 5:20:0:five:eof", true},
		{"start_line", evidence.Object{"start_line": 3, "max_lines": 2}, "3:9:0:three:lf 4:15:0:four:lf", true},
		{"offset mid-line", evidence.Object{"offset": 11, "max_bytes": 6}, "3:11:2:ree:lf 4:15:0:fo:<nil>", false},
		{"offset at a line start", evidence.Object{"offset": 15}, "4:15:0:four:lf 5:20:0:five:eof", true},
		{"window ends inside CRLF", evidence.Object{"max_bytes": 4}, "1:0:0:one\r:<nil>", false},
		{"offset past the end", evidence.Object{"offset": 1000}, "", true},
		{"start_line past the end", evidence.Object{"start_line": 99}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := decodeOK(t, data, c.opts)
			var got []string
			for _, v := range tb.Rows {
				got = append(got, fmt.Sprintf("%v:%v:%v:%v:%v", v["line"], v["offset"], v["column"], v["text"], v["terminator"]))
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("rows %q\nwant %q", strings.Join(got, " "), c.want)
			}
			if tb.Summary.Coverage["end_reached"] != c.end {
				t.Errorf("end_reached %v, want %v", tb.Summary.Coverage["end_reached"], c.end)
			}
		})
	}
	t.Run("offset and start_line", func(t *testing.T) {
		_, err := formatstest.Decode(Spec, "t.txt", data, evidence.Object{"offset": 1, "start_line": 2}, nil)
		if evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("%v", err)
		}
	})
}

func TestBounds(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789\n"), 100)
	t.Run("max_lines counts the rest of the window", func(t *testing.T) {
		s := decodeOK(t, data, evidence.Object{"max_lines": 10}).Summary
		if s.RowsObserved != 100 || s.RowsEmitted != 10 || s.Truncation.Reason != "row_limit" || s.Truncation.Omitted != 90 {
			t.Errorf("%+v %+v", s, s.Truncation)
		}
	})
	t.Run("max_bytes", func(t *testing.T) {
		s := decodeOK(t, data, evidence.Object{"max_bytes": 55}).Summary
		if s.RowsObserved != 5 || s.Coverage["bytes_read"] != int64(55) || s.Truncation.Reason != "byte_limit" || s.Truncation.Omitted != 1100-55 {
			t.Errorf("%+v %+v", s, s.Truncation)
		}
	})
	t.Run("max_bytes cuts a line", func(t *testing.T) {
		tb := decodeOK(t, data, evidence.Object{"max_bytes": 16})
		last := tb.Rows[len(tb.Rows)-1]
		if last["bytes"] != int64(5) || last["terminator"] != nil || tb.Summary.Coverage["end_reached"] != false {
			t.Errorf("%v", last)
		}
	})
}

// TestHostile covers a 10 MB single line, a line cut inside a multi-byte
// character, NUL bytes, a missing final newline and a failing reader.
func TestHostile(t *testing.T) {
	t.Run("10 MB single line", func(t *testing.T) {
		data := bytes.Repeat([]byte("z"), 10<<20)
		tb := decodeOK(t, data, nil)
		r := rows(t, tb)[0]
		if len(tb.Rows) != 1 || r.Bytes != 1<<20 || len(r.Shown) != 4096 || r.Terminator.Valid || tb.Summary.Complete {
			t.Errorf("bytes %d shown %d term %v, summary %+v", r.Bytes, len(r.Shown), r.Terminator, tb.Summary)
		}
		tb = decodeOK(t, data, evidence.Object{"max_bytes": 64 << 20})
		if r := rows(t, tb)[0]; r.Bytes != 10<<20 || r.Terminator != table.Some(table.EOF) || tb.Summary.Metrics["cut_lines"].Value != int64(1) {
			t.Errorf("whole line: bytes %d term %v", r.Bytes, r.Terminator)
		}
	})
	t.Run("cut never splits a character", func(t *testing.T) {
		r := rows(t, decodeOK(t, []byte("ab€cd\n"), evidence.Object{"max_line_bytes": 3}))[0]
		if string(r.Shown) != "ab" || r.Bytes != 7 {
			t.Errorf("shown %q of %d", r.Shown, r.Bytes)
		}
	})
	t.Run("NUL and control bytes are text", func(t *testing.T) {
		tb := decodeOK(t, []byte("a\x00b\x1b[0m\n"), nil)
		if tb.Rows[0]["text"] != "a\x00b\x1b[0m" || tb.Rows[0]["escaped"] != false {
			t.Errorf("%q", tb.Rows[0]["text"])
		}
	})
	t.Run("empty", func(t *testing.T) {
		if tb := decodeOK(t, nil, nil); len(tb.Rows) != 0 || !tb.Summary.Complete {
			t.Errorf("%+v", tb.Summary)
		}
	})
	t.Run("read error", func(t *testing.T) {
		data := bytes.Repeat([]byte("line\n"), 1000)
		broken := func(r io.Reader) io.Reader {
			return io.MultiReader(io.LimitReader(r, 2000), iotest.ErrReader(errors.New("disk gone")))
		}
		sink, err := formatstest.Decode(Spec, "t.txt", data, nil, broken)
		formatstest.CheckInvariants(t, sink, err)
		if evidence.CodeOf(err) != evidence.CodeIOFailure || sink.Table(table.TextLines.Name).Summary.Complete {
			t.Errorf("%v", err)
		}
	})
	t.Run("sniff", func(t *testing.T) {
		if Spec.Sniff([]byte("PAR1\x00\x00")) != 0 || Spec.Sniff([]byte("plain")) != 1 {
			t.Error("sniff: NUL means No, anything else NeedMore")
		}
	})
}

func TestEscapeRoundTrip(t *testing.T) {
	for _, in := range []string{"", "plain", `back\slash`, "\xff\xfe", "mixed é \xe9 \\x41", "\xe2\x82"} {
		s, esc := Escape([]byte(in))
		back, err := Unescape(s, esc)
		if err != nil || string(back) != in {
			t.Errorf("%q -> %q (%v) -> %q", in, s, esc, back)
		}
	}
}

func TestReaders(t *testing.T) {
	data := formatstest.Read(t, "preview/text/python-importtime.txt")
	plain := formatstest.Canonical(t, decodeOK(t, data, evidence.Object{"max_line_bytes": 7}).Rows)
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"OneByteReader": iotest.OneByteReader, "HalfReader": iotest.HalfReader, "DataErrReader": iotest.DataErrReader,
	} {
		t.Run(name, func(t *testing.T) {
			sink, err := formatstest.Decode(Spec, "t.txt", data, evidence.Object{"max_line_bytes": 7}, wrap)
			formatstest.CheckInvariants(t, sink, err)
			if err != nil || formatstest.Canonical(t, sink.Table(table.TextLines.Name).Rows) != plain {
				t.Errorf("differs from a plain read (%v)", err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range formatstest.Seeds(f, "preview/text", 0) {
		f.Add(s, int64(0), int64(64))
	}
	f.Add([]byte("a\r\nb\xff\nc"), int64(3), int64(5))
	f.Fuzz(func(t *testing.T, data []byte, offset, maxBytes int64) {
		opts := evidence.Object{"offset": offset & 0xffff, "max_bytes": 1 + maxBytes&0xffff, "max_lines": 5, "max_line_bytes": 8}
		sink, err := formatstest.Decode(Spec, "f.txt", data, opts, nil)
		formatstest.CheckInvariants(t, sink, err)
		if err != nil {
			return
		}
		for _, r := range rows(t, sink.Table(table.TextLines.Name)) {
			end := r.Offset + int64(len(r.Shown))
			if end > int64(len(data)) || !bytes.Equal(r.Shown, data[r.Offset:end]) {
				t.Fatalf("line %d: shown bytes are not the native bytes at %d", r.Line, r.Offset)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	data := bytes.Repeat(formatstest.Read(b, "preview/text/python-importtime.txt"), 800) // ~1 MB
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := formatstest.DecodeInto(Spec, "bench.txt", data, evidence.Object{"max_lines": 1000000, "max_bytes": 1 << 30}, nil, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
