package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// countingWriter records the size of every write.
type countingWriter struct {
	bytes.Buffer
	writes []int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes = append(c.writes, len(p))
	return c.Buffer.Write(p)
}

// A line whose encoding fails leaves nothing behind; the others go out
// whole, in writes of at least flushAt bytes but the last, and the stream
// is the lines in order.
func TestWriteFuncLines(t *testing.T) {
	var out countingWriter
	w := NewWriter(&out)
	var want bytes.Buffer
	bad := errors.New("bad row")
	for i := range 5000 {
		line := strings.Repeat(string(rune('a'+i%26)), i%300)
		err := w.WriteFunc(func(dst []byte) ([]byte, error) {
			dst = append(dst, line...)
			if i%7 == 3 {
				return dst, bad
			}
			return dst, nil
		})
		if i%7 == 3 {
			if err != bad {
				t.Fatalf("line %d: got %v, want the encoder's error", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		want.WriteString(line + "\n")
	}
	// A line larger than the buffer.
	big := strings.Repeat("x", 3*flushAt)
	if err := w.WriteFunc(func(dst []byte) ([]byte, error) { return append(dst, big...), nil }); err != nil {
		t.Fatal(err)
	}
	want.WriteString(big + "\n")
	if err := w.Write(&evidence.Summary{TableID: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got := out.Bytes()
	if !bytes.HasPrefix(got, want.Bytes()) || !bytes.Contains(got[want.Len():], []byte(`"kind":"summary"`)) {
		t.Fatal("stream is not the lines written")
	}
	for i, n := range out.writes[:len(out.writes)-1] {
		if n < flushAt {
			t.Fatalf("write %d of %d bytes", i, n)
		}
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) { return f.n, nil }

// A short write is an IO_FAILURE, and it sticks.
func TestWriterShortWrite(t *testing.T) {
	w := NewWriter(&failingWriter{n: 1})
	w.WriteFunc(func(dst []byte) ([]byte, error) { return append(dst, "x"...), nil })
	err := w.Flush()
	if evidence.CodeOf(err) != evidence.CodeIOFailure {
		t.Fatalf("got %v", err)
	}
	if w.WriteFunc(func(dst []byte) ([]byte, error) { return dst, nil }) != err {
		t.Fatal("error did not stick")
	}
}
