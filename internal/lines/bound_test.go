package lines

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readWithin reads data with a bound that moves step bytes past the
// current offset at each call, and joins the parts of each line back.
func readWithin(t testing.TB, r io.Reader, max int, step int64) []Line {
	t.Helper()
	lr := NewReader(r, max)
	var out []Line
	for {
		l, err := lr.NextWithin(lr.Offset() + step)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := len(out); n > 0 && out[n-1].Term == Bound {
			p := &out[n-1]
			if l.Number != p.Number || l.Start != p.Start || l.Offset != p.Offset+p.Size {
				t.Fatalf("part %+v does not continue %+v", l, p)
			}
			p.Bytes = append(p.Bytes, l.Bytes...)
			p.Size += l.Size
			p.Term = l.Term
			continue
		}
		if l.Start != l.Offset || l.Number != lr.Lines() {
			t.Fatalf("line %+v starts a line but says otherwise (lines read %d)", l, lr.Lines())
		}
		c := *l
		c.Bytes = append([]byte(nil), l.Bytes...)
		out = append(out, c)
	}
}

// TestWithin: parts read under any bound join back into the lines a plain
// read gives (a CRLF split by a bound joins as content '\r' and LF).
func TestWithin(t *testing.T) {
	inputs := []string{"", "a", "a\n", "abc\ndef", "x\n\ny\r\n", "abc\r", strings.Repeat("long line ", 100) + "\nshort\n",
		strings.Repeat("z", BufferSize+17) + "\ntail"}
	for name, wrap := range wraps {
		for _, in := range inputs {
			for _, step := range []int64{1, 2, 7, 1 << 30} {
				want := reference([]byte(in), 1<<20)
				got := readWithin(t, wrap(strings.NewReader(in)), 1<<20, step)
				if len(got) != len(want) {
					t.Fatalf("%s %q step %d: %d lines, want %d", name, in, step, len(got), len(want))
				}
				for i, w := range want {
					g := got[i]
					if w.Term == CRLF && g.Term == LF {
						// The '\r' was read before a bound, as content.
						w.Term, w.Size, w.Bytes = LF, w.Size+1, append(append([]byte(nil), w.Bytes...), '\r')
					}
					if g.Number != w.Number || g.Offset != w.Offset || g.Size != w.Size || g.Term != w.Term || !bytes.Equal(g.Bytes, w.Bytes) {
						t.Fatalf("%s %q step %d line %d: got %+v, want %+v", name, in, step, i, g, w)
					}
				}
			}
		}
	}
}

func TestWithinStops(t *testing.T) {
	data := "first line\n" + strings.Repeat("x", 3*BufferSize) + "\nlast\n"
	src := &countingReader{r: strings.NewReader(data)}
	lr := NewReader(src, 8)
	if l, err := lr.NextWithin(5); err != nil || l.Term != Bound || string(l.Bytes) != "first" || l.Size != 5 {
		t.Fatalf("%+v %v", l, err)
	}
	if _, err := lr.NextWithin(5); !errors.Is(err, ErrBound) {
		t.Fatalf("at the bound: %v", err)
	}
	if l, err := lr.NextWithin(100); err != nil || l.Term != LF || string(l.Bytes) != " line" || l.Number != 1 || l.Start != 0 || l.Offset != 5 {
		t.Fatalf("rest of the line: %+v %v", l, err)
	}
	l, err := lr.NextWithin(11 + 1000)
	if err != nil || l.Term != Bound || l.Size != 1000 || len(l.Bytes) != 8 || l.Number != 2 {
		t.Fatalf("long line cut: %+v %v", l, err)
	}
	if src.n > 11+1000+1 {
		t.Fatalf("read %d bytes, more than the bound and one byte of look-ahead", src.n)
	}
	if p, _ := lr.Peek(1); string(p) != "x" {
		t.Fatalf("peek sees past the bound: %q", p)
	}
	l, err = lr.Next()
	if err != nil || l.Term != LF || l.Number != 2 || l.Offset != 1011 || l.Size != 3*BufferSize-1000 {
		t.Fatalf("Next after a bound: %+v %v", l, err)
	}
	if l, err := lr.Next(); err != nil || string(l.Bytes) != "last" || l.Number != 3 {
		t.Fatalf("%+v %v", l, err)
	}
}

// TestWithinBuffered: a bound below what a plain read buffered still cuts.
func TestWithinBuffered(t *testing.T) {
	lr := NewReader(strings.NewReader("a\nbcdef\ng\n"), 16)
	if l, _ := lr.Next(); string(l.Bytes) != "a" {
		t.Fatal(l)
	}
	l, err := lr.NextWithin(4)
	if err != nil || l.Term != Bound || string(l.Bytes) != "bc" {
		t.Fatalf("%+v %v", l, err)
	}
	if l, err := lr.NextWithin(100); err != nil || string(l.Bytes) != "def" || l.Term != LF || l.Start != 2 {
		t.Fatalf("%+v %v", l, err)
	}
}

// TestWithinEnd: an input that ends exactly at the bound ends its line.
func TestWithinEnd(t *testing.T) {
	lr := NewReader(strings.NewReader("ab\ncd"), 16)
	if l, err := lr.NextWithin(3); err != nil || l.Term != LF {
		t.Fatalf("%+v %v", l, err)
	}
	if l, err := lr.NextWithin(5); err != nil || l.Term != None || string(l.Bytes) != "cd" {
		t.Fatalf("%+v %v", l, err)
	}
	if _, err := lr.NextWithin(5); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last line: %v", err)
	}
}

func TestWithinStrict(t *testing.T) {
	lr := NewStrict(strings.NewReader("abcdef\n"), 4, "max_line_bytes")
	if l, err := lr.NextWithin(3); err != nil || l.Term != Bound {
		t.Fatalf("%+v %v", l, err)
	}
	if _, err := lr.NextWithin(100); err == nil {
		t.Fatal("the parts of a line count together against the strict bound")
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func FuzzWithin(f *testing.F) {
	f.Add([]byte("a\nb\r\nccc"), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, step int64) {
		if step < 1 || step > 1<<20 {
			return
		}
		var joined []byte
		for _, l := range readWithin(t, iotest.HalfReader(bytes.NewReader(data)), 1<<20, step) {
			joined = append(joined, l.Bytes...)
			switch l.Term {
			case LF:
				joined = append(joined, '\n')
			case CRLF:
				joined = append(joined, '\r', '\n')
			}
		}
		if !bytes.Equal(joined, data) {
			t.Fatalf("parts join to %q, not %q", joined, data)
		}
	})
}
