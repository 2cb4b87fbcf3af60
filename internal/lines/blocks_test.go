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

// readBlocks reads every block and scans its lines, numbering them as a
// consumer would (Done, then Locate for failures).
func readBlocks(t testing.TB, r io.Reader, o BlockOptions) ([]*Block, []Line, error) {
	t.Helper()
	b := NewBlocks(r, o)
	var blocks []*Block
	var out []Line
	var base int64
	for {
		blk, err := b.Next(nil)
		if errors.Is(err, io.EOF) {
			return blocks, out, nil
		}
		if err != nil {
			return blocks, out, b.Locate(b.Seq(), err)
		}
		blocks = append(blocks, blk)
		sc := blk.Lines()
		for {
			l, err := sc.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return blocks, out, b.Locate(blk.Seq, err)
			}
			c := *l
			c.Number += base
			c.Bytes = append([]byte(nil), l.Bytes...)
			out = append(out, c)
		}
		b.Done(blk.Seq, sc.Count())
		base += sc.Count()
	}
}

func isHeader(line []byte) bool { return len(line) == 0 || line[0] != '\t' }

func TestBlocks(t *testing.T) {
	inputs := []string{"", "\n", "a", "a\n", "a\r\nb\r\n", "h1\n\tf\n\tg\n\nh2\n\tf\n", "h\n\tx\n\ty\n\tz\nh\n\tx\n",
		"\r\n\r\n", "abc\ndef", strings.Repeat("head\n\tframe one\n\tframe two\n\n", 50) + "tail"}
	for name, wrap := range wraps {
		for _, in := range inputs {
			for _, size := range []int{1, 3, 8, 64, 1 << 20} {
				for _, boundary := range []func([]byte) bool{nil, isHeader} {
					o := BlockOptions{Size: size, MaxLine: 1 << 10, Limit: "max_line_bytes", Boundary: boundary}
					blocks, got, err := readBlocks(t, wrap(strings.NewReader(in)), o)
					if err != nil {
						t.Fatalf("%s %q size %d: %v", name, in, size, err)
					}
					var joined []byte
					for i, blk := range blocks {
						if blk.Seq != i || blk.Offset != int64(len(joined)) || blk.Last != (i == len(blocks)-1) {
							t.Fatalf("%q size %d: block %d is %+v", in, size, i, blk)
						}
						if !blk.Last && (len(blk.Data) == 0 || blk.Data[len(blk.Data)-1] != '\n') {
							t.Fatalf("%q size %d: block %d does not end a line: %q", in, size, i, blk.Data)
						}
						if boundary != nil && i > 0 {
							first, _, _ := bytes.Cut(blk.Data, []byte("\n"))
							if !boundary(trimCR(first)) {
								t.Fatalf("%q size %d: block %d starts inside a record: %q", in, size, i, blk.Data)
							}
						}
						joined = append(joined, blk.Data...)
					}
					if string(joined) != in {
						t.Fatalf("%q size %d: blocks hold %q", in, size, joined)
					}
					want := reference([]byte(in), 1<<10)
					if len(got) != len(want) {
						t.Fatalf("%q size %d: %d lines, want %d", in, size, len(got), len(want))
					}
					for i := range want {
						g, w := got[i], want[i]
						if !bytes.Equal(g.Bytes, w.Bytes) || g.Number != w.Number || g.Offset != w.Offset || g.Size != w.Size || g.Term != w.Term {
							t.Fatalf("%q size %d line %d: got %+v, want %+v", in, size, i, g, w)
						}
					}
				}
			}
		}
	}
}

func receipt(t *testing.T, err error, name string, line int, off int64) evidence.Object {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded || f.Location.Line != line || f.Location.Offset != off {
		t.Fatalf("got %v (%+v), want LIMIT_EXCEEDED at line %d, byte %d", err, f, line, off)
	}
	lim, _ := f.Details["limit"].(evidence.Object)
	if lim["name"] != name || lim["unit"] != "bytes" {
		t.Fatalf("receipt %v", f.Details)
	}
	return lim
}

// TestLastBlock: the block holding the end of input says so, even when a
// read ends exactly at a line's end.
func TestLastBlock(t *testing.T) {
	for _, in := range []string{"ab\n", "ab\ncd\n", "h\n\tf\n", "ab"} {
		for size := 1; size <= len(in)+1; size++ {
			for _, boundary := range []func([]byte) bool{nil, isHeader} {
				blocks, _, err := readBlocks(t, strings.NewReader(in), BlockOptions{Size: size, MaxLine: 8, Boundary: boundary})
				if err != nil || len(blocks) == 0 || !blocks[len(blocks)-1].Last || len(blocks[len(blocks)-1].Data) == 0 {
					t.Fatalf("%q size %d: %v, %d blocks", in, size, err, len(blocks))
				}
			}
		}
	}
}

func TestBlocksLineBound(t *testing.T) {
	data := "ok\nfine\r\n" + strings.Repeat("x", 40) + "\nafter\n"
	for _, size := range []int{4, 16, 1 << 10} {
		// A long line is caught whole in a block (its size observed) or,
		// when it runs past a small read, as soon as it crosses the bound.
		_, _, err := readBlocks(t, strings.NewReader(data), BlockOptions{Size: size, MaxLine: 10, Limit: "max_line_bytes"})
		lim := receipt(t, err, "max_line_bytes", 3, 9)
		if lim["value"] != int64(10) {
			t.Fatalf("size %d: receipt %v", size, lim)
		}
	}
	// At the bound, with a CRLF: accepted.
	if _, got, err := readBlocks(t, strings.NewReader("0123456789\r\n0123456789"), BlockOptions{Size: 3, MaxLine: 10, Limit: "m"}); err != nil || len(got) != 2 {
		t.Fatalf("lines at the bound: %v, %d lines", err, len(got))
	}
	// The last line, without a newline, is bounded too.
	_, _, err := readBlocks(t, strings.NewReader("a\n"+strings.Repeat("y", 11)), BlockOptions{Size: 64, MaxLine: 10, Limit: "m"})
	if lim := receipt(t, err, "m", 2, 2); lim["observed"] != int64(11) {
		t.Fatalf("receipt %v", lim)
	}
}

func TestBlocksRecordBound(t *testing.T) {
	data := "h\n" + strings.Repeat("\tf\n", 100) + "h\n"
	never := func([]byte) bool { return false }
	_, _, err := readBlocks(t, strings.NewReader(data), BlockOptions{Size: 8, MaxLine: 10, Limit: "m", Boundary: never, MaxRecord: 64})
	if lim := receipt(t, err, "max_record_bytes", 1, 0); lim["value"] != int64(64) {
		t.Fatalf("receipt %v", lim)
	}
	// Under the bound, a record longer than the read size stays whole.
	blocks, _, err := readBlocks(t, strings.NewReader(data+data), BlockOptions{Size: 8, MaxLine: 10, Limit: "m", Boundary: isHeader})
	if err != nil || len(blocks) < 2 || len(blocks[0].Data) <= 8 || !bytes.HasPrefix(blocks[1].Data, []byte("h\n")) {
		t.Fatalf("%v: %d blocks", err, len(blocks))
	}
}

func TestBlocksLocate(t *testing.T) {
	data := "a\nb\nc\n" + strings.Repeat("z", 20) + "\n"
	b := NewBlocks(strings.NewReader(data), BlockOptions{Size: 4, MaxLine: 8, Limit: "m"})
	var lastErr error
	var seq int
	for {
		blk, err := b.Next(nil)
		if err != nil {
			lastErr, seq = err, b.Seq()
			break
		}
		sc := blk.Lines()
		for {
			if _, err := sc.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					lastErr, seq = err, blk.Seq
				}
				break
			}
		}
		if lastErr != nil {
			break
		}
		b.Done(blk.Seq, sc.Count())
	}
	receipt(t, b.Locate(seq, lastErr), "m", 4, 6)
	if err := errors.New("plain"); b.Locate(0, err) != err {
		t.Fatal("Locate changed an error that is not a failure")
	}
}

func TestReadErrorBlocks(t *testing.T) {
	boom := errors.New("disk gone")
	b := NewBlocks(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), BlockOptions{Size: 16})
	if _, err := b.Next(nil); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if _, err := b.Next(nil); !errors.Is(err, boom) {
		t.Fatal("the reader went on after a read error")
	}
}

func TestRepeat(t *testing.T) {
	blk := &Block{Data: []byte("same\nsame\nsame\r\nsame"), max: 8, Offset: 100}
	sc := blk.Lines()
	first, err := sc.Next()
	if err != nil {
		t.Fatal(err)
	}
	p := first.Bytes
	if b, ok := sc.Repeat(p); !ok || string(b) != "same" || sc.Count() != 2 {
		t.Fatalf("repeat of an LF line: %q %v", b, ok)
	}
	if l := sc.Line(); l.Number != 2 || l.Offset != 105 || string(l.Bytes) != "same" || l.Term != LF {
		t.Fatalf("line after a repeat: %+v", l)
	}
	// A CRLF line and an unterminated last line are left to Next.
	if _, ok := sc.Repeat(p); ok {
		t.Fatal("Repeat took a CRLF line")
	}
	if l, _ := sc.Next(); l.Term != CRLF || l.Number != 3 || l.Offset != 110 {
		t.Fatalf("%+v", l)
	}
	if _, ok := sc.Repeat(p); ok {
		t.Fatal("Repeat took an unterminated line")
	}
	if l, _ := sc.Next(); l.Term != None || string(l.Bytes) != "same" || sc.Line() != l {
		t.Fatalf("%+v", l)
	}
	if _, err := sc.Next(); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
}

func TestScanBytes(t *testing.T) {
	blk := &Block{Data: []byte("a\r\n\nbc"), max: 2, Offset: 7}
	sc := blk.Lines()
	if l := sc.Line(); l.Number != 0 || len(l.Bytes) != 0 {
		t.Fatalf("line before any: %+v", l)
	}
	for _, want := range []struct {
		bytes string
		term  Terminator
		off   int64
	}{{"a", CRLF, 7}, {"", LF, 10}, {"bc", None, 11}} {
		b, err := sc.Bytes()
		l := sc.Line()
		if err != nil || string(b) != want.bytes || string(l.Bytes) != want.bytes || l.Term != want.term || l.Offset != want.off {
			t.Fatalf("got %q %v (%+v), want %+v", b, err, l, want)
		}
	}
	if _, err := sc.Bytes(); !errors.Is(err, io.EOF) || sc.Count() != 3 {
		t.Fatalf("%v after %d lines", err, sc.Count())
	}
}

func TestSplit(t *testing.T) {
	sc := Split([]byte("one\r\ntwo\nthr"))
	var got []string
	for {
		l, err := sc.Next()
		if err != nil {
			break
		}
		got = append(got, l.Term.String()+":"+string(l.Bytes))
	}
	if strings.Join(got, " ") != "crlf:one lf:two eof:thr" {
		t.Fatalf("%q", got)
	}
}

func TestLineAt(t *testing.T) {
	l := &Line{Number: 7, Offset: 42}
	f := l.At(evidence.Failf(evidence.CodeDecodeFailure, "x"))
	if f.Location.Line != 7 || f.Location.Offset != 42 {
		t.Fatalf("%+v", f.Location)
	}
	g := evidence.Failf(evidence.CodeDecodeFailure, "y")
	g.Location.Line = 3
	if l.At(g).Location.Line != 3 {
		t.Fatal("At moved a located failure")
	}
}

func FuzzBlocks(f *testing.F) {
	for _, s := range []string{"a\nb\r\n", "h\n\tf\n\nh\n", "xyz", "\r\r\n\n"} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		if size < 1 || size > 1<<12 {
			return
		}
		longest := 0
		for _, l := range reference(data, len(data)) {
			longest = max(longest, len(l.Bytes))
		}
		_, got, err := readBlocks(t, iotest.HalfReader(bytes.NewReader(data)), BlockOptions{Size: size, MaxLine: longest + 1, Boundary: isHeader})
		if err != nil {
			t.Fatal(err)
		}
		want := reference(data, len(data))
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].Bytes, want[i].Bytes) || got[i].Number != want[i].Number || got[i].Offset != want[i].Offset || got[i].Term != want[i].Term {
				t.Fatalf("line %d: got %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}

func BenchmarkBlocks(b *testing.B) {
	data := bytes.Repeat([]byte("python3 12345 [001] 1234.567890: cpu-clock:\n\t  7f00 PyEval_EvalFrame+0x1a (/usr/bin/python3)\n\n"), 100000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		r := NewBlocks(bytes.NewReader(data), BlockOptions{MaxLine: 4096, Limit: "m", Boundary: isHeader})
		for {
			blk, err := r.Next(buf)
			if err != nil {
				break
			}
			sc := blk.Lines()
			for {
				if _, err := sc.Next(); err != nil {
					break
				}
			}
			buf = blk.Buf
		}
	}
}
