package lines

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
)

// reference splits data into lines the slow, obvious way.
func reference(data []byte, max int) []Line {
	var out []Line
	off := int64(0)
	for n := int64(1); off < int64(len(data)); n++ {
		rest := data[off:]
		i := bytes.IndexByte(rest, '\n')
		l := Line{Number: n, Offset: off, Term: LF}
		var body []byte
		if i < 0 {
			body, l.Term = rest, None
		} else {
			body = rest[:i]
			if len(body) > 0 && body[len(body)-1] == '\r' {
				body, l.Term = body[:len(body)-1], CRLF
			}
		}
		l.Size = int64(len(body))
		l.Bytes = body[:min(len(body), max)]
		out = append(out, l)
		off = l.End()
	}
	return out
}

func readAll(t testing.TB, r io.Reader, max int) []Line {
	lr := NewReader(r, max)
	var out []Line
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		c := *l
		c.Bytes = append([]byte(nil), l.Bytes...)
		out = append(out, c)
	}
}

func same(t testing.TB, data []byte, max int, wrap func(io.Reader) io.Reader) {
	t.Helper()
	want := reference(data, max)
	got := readAll(t, wrap(bytes.NewReader(data)), max)
	if len(got) != len(want) {
		t.Fatalf("%q max %d: %d lines, want %d", data, max, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !bytes.Equal(g.Bytes, w.Bytes) || g.Number != w.Number || g.Offset != w.Offset || g.Size != w.Size || g.Term != w.Term {
			t.Fatalf("%q max %d line %d: got %+v (%q), want %+v (%q)", data, max, i, g, g.Bytes, w, w.Bytes)
		}
	}
}

var wraps = map[string]func(io.Reader) io.Reader{
	"plain":    func(r io.Reader) io.Reader { return r },
	"one byte": iotest.OneByteReader,
	"half":     iotest.HalfReader,
}

func TestLines(t *testing.T) {
	inputs := []string{"", "\n", "a", "a\n", "a\r\n", "a\rb\n", "\r\n\r\n", "abc\ndef", "x\n\ny\r\n", "\r", "abc\r",
		strings.Repeat("long line ", 100) + "\r\nshort\n", strings.Repeat("z", BufferSize+17) + "\n" + "tail"}
	for name, wrap := range wraps {
		for _, in := range inputs {
			for _, max := range []int{1, 3, 8, 1 << 20} {
				t.Run(name, func(t *testing.T) { same(t, []byte(in), max, wrap) })
			}
		}
	}
}

func TestStrict(t *testing.T) {
	data := "ok\r\nabc\r\nabcdef\nnever\n"
	lr := NewStrict(strings.NewReader(data), 3, "max_line_bytes")
	for _, want := range []string{"ok", "abc"} {
		l, err := lr.Next()
		if err != nil || string(l.Bytes) != want {
			t.Fatalf("got %v %v, want %q", l, err, want)
		}
	}
	_, err := lr.Next()
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded || f.Location.Line != 3 || f.Location.Offset != 9 {
		t.Fatalf("third line: %v (%+v)", err, f)
	}
	lim, _ := f.Details["limit"].(evidence.Object)
	if lim["name"] != "max_line_bytes" || lim["value"] != int64(3) || lim["unit"] != "bytes" {
		t.Fatalf("receipt %v", f.Details)
	}
	if _, again := lr.Next(); again != err {
		t.Fatal("a strict reader goes on after its failure")
	}
}

func TestStrictFunc(t *testing.T) {
	fail := func(l *Line) *evidence.Failure {
		return evidence.Failf(evidence.CodeDecodeFailure, "line %d is not a record", l.Number)
	}
	// The long line is refused before it is read whole.
	long := io.MultiReader(strings.NewReader("abc\n"+strings.Repeat("x", 100)), iotest.ErrReader(errors.New("read past the bound")))
	lr := NewStrictFunc(long, 3, fail)
	if l, err := lr.Next(); err != nil || string(l.Bytes) != "abc" {
		t.Fatal(l, err)
	}
	_, err := lr.Next()
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure || f.Location.Line != 2 || f.Location.Offset != 4 || f.Message != "line 2 is not a record" {
		t.Fatalf("%v (%+v)", err, f)
	}
	// An unterminated last line is bounded too.
	lr = NewStrictFunc(strings.NewReader("abcd"), 3, fail)
	if _, err := lr.Next(); !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure {
		t.Fatalf("%v", err)
	}
}

// TestLocations: the reader's position and the failures it locates.
func TestLocations(t *testing.T) {
	lr := NewReader(strings.NewReader("one\r\ntwo\nthree"), 4)
	if lr.Max() != 4 {
		t.Fatalf("max %d", lr.Max())
	}
	for _, want := range []int64{5, 9, 14} {
		if _, err := lr.Next(); err != nil || lr.Offset() != want {
			t.Fatalf("offset %d after a line, want %d (%v)", lr.Offset(), want, err)
		}
	}
	if lr.Lines() != 3 {
		t.Fatalf("%d lines", lr.Lines())
	}
	f := lr.Err(evidence.CodeDecodeFailure, "bad %s", "three")
	if f.Location.Line != 3 || f.Location.Offset != 9 || f.Message != "bad three" {
		t.Fatalf("%+v", f)
	}
	// A plain error gains the line; a located failure keeps its place.
	if f := lr.Errorf(evidence.CodeDecodeFailure, errors.New("boom"), "field"); f.Location.Line != 3 || f.Location.Offset != 9 || f.Code != evidence.CodeDecodeFailure {
		t.Fatalf("%+v", f)
	}
	located := &evidence.Failure{Code: evidence.CodeLimitExceeded, Location: evidence.Location{Line: 1, Offset: 2}}
	if f := lr.Errorf(evidence.CodeDecodeFailure, located, "field"); f.Location.Line != 1 || f.Code != evidence.CodeLimitExceeded {
		t.Fatalf("%+v", f)
	}
	if s := lr.line.String(); s != "line 3 (byte 9)" {
		t.Fatal(s)
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("disk gone")
	lr := NewReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), 10)
	if l, err := lr.Next(); err != nil || string(l.Bytes) != "a" {
		t.Fatal(l, err)
	}
	if _, err := lr.Next(); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
}

func TestPeekDiscard(t *testing.T) {
	lr := NewReader(strings.NewReader("\xEF\xBB\xBFhead\nnext\n"), 16)
	if p, _ := lr.Peek(3); string(p) != "\xEF\xBB\xBF" {
		t.Fatalf("peek %q", p)
	}
	if err := lr.Discard(3); err != nil {
		t.Fatal(err)
	}
	l, _ := lr.Next()
	if string(l.Bytes) != "head" || l.Offset != 3 || l.Number != 1 {
		t.Fatalf("%+v", l)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"a\nb\r\n", "\r\r\n\n", "xyz"} {
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		same(t, data, max, iotest.HalfReader)
	})
}

func BenchmarkReader(b *testing.B) {
	data := bytes.Repeat([]byte("python3 12345 [001] 1234.567890: cpu-clock:\n\t  7f00 PyEval_EvalFrame+0x1a (/usr/bin/python3)\n"), 100000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lr := NewReader(bytes.NewReader(data), 4096)
		for {
			if _, err := lr.Next(); err != nil {
				break
			}
		}
	}
}
