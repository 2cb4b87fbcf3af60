package lines

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/flameox/flameox/internal/evidence"
)

// BlockOptions configure a Blocks reader.
type BlockOptions struct {
	// Size is how many bytes a block reads at least (default 4 MiB).
	Size int
	// MaxLine bounds one line, terminator excluded; a longer line is a
	// LIMIT_EXCEEDED failure naming Limit. Blocks keep lines whole, so
	// there is no cut mode.
	MaxLine int
	Limit   string
	// Boundary, when set, says whether a block may start with line (a
	// complete line, terminator excluded), so that records of several
	// lines stay in one block. Nil: a block may start at any line.
	Boundary func(line []byte) bool
	// MaxRecord bounds a run of lines with no boundary (default 64 MiB);
	// crossing it is a LIMIT_EXCEEDED failure naming RecordLimit
	// (default "max_record_bytes").
	MaxRecord   int
	RecordLimit string
}

// Blocks reads a stream in blocks of whole lines, for parsers that work
// on several blocks at once. A block ends just after a newline (at a
// Boundary when one is set) or at the end of input; a line is never split
// between blocks, and every line is bounded as in strict mode.
//
// A block's first line number is known only once every block before it
// has been scanned, so lines are numbered from 1 within their block: a
// consumer reports each scanned block with Done and turns a failure's
// block-relative line into the stream's with Locate.
type Blocks struct {
	r     io.Reader
	o     BlockOptions
	carry []byte // read bytes after the last block, not yet in one
	off   int64  // stream offset of carry[0]
	seq   int
	err   error

	mu   sync.Mutex
	done map[int]int64 // lines of each scanned block
}

// NewBlocks returns a block reader on r.
func NewBlocks(r io.Reader, o BlockOptions) *Blocks {
	if o.Size <= 0 {
		o.Size = 4 << 20
	}
	if l, ok := r.(interface{ Len() int }); ok && l.Len() < o.Size {
		o.Size = l.Len() + 1 // in memory already: no larger buffer (as NewReader)
	}
	if o.MaxLine <= 0 {
		o.MaxLine = 64 << 10
	}
	if o.MaxRecord <= 0 {
		o.MaxRecord = 64 << 20
	}
	if o.RecordLimit == "" {
		o.RecordLimit = "max_record_bytes"
	}
	return &Blocks{r: r, o: o, done: map[int]int64{}}
}

// Block is a run of whole lines.
type Block struct {
	// Buf backs Data; hand it back to Next to be reused once the block is
	// no longer needed.
	Buf []byte
	// Data holds the lines with their terminators; only the last block's
	// last line may lack one.
	Data   []byte
	Seq    int   // 0 for the first block
	Offset int64 // stream offset of Data[0]
	Last   bool  // the input ends with this block

	max   int
	limit string
}

// Seq is the sequence number of the next block, the one a failure of Next
// is located in.
func (b *Blocks) Seq() int { return b.seq }

// Offset is how many bytes have been read from the stream so far.
func (b *Blocks) Offset() int64 { return b.off + int64(len(b.carry)) }

// Next reads the next block into buf, which grows when it is too small
// (nil allocates). At the end of input it returns io.EOF. A read error
// ends the reader and is returned as it is; a bound crossed is a
// *evidence.Failure located in block Seq().
func (b *Blocks) Next(buf []byte) (*Block, error) {
	if b.err != nil {
		return nil, b.err
	}
	for {
		// Room for the carried partial record and at least as much again.
		need := max(b.o.Size, 2*len(b.carry))
		if cap(buf) < need {
			buf = make([]byte, need)
		}
		buf = buf[:cap(buf)]
		n := copy(buf, b.carry)
		m, err := io.ReadFull(b.r, buf[n:])
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			b.err = err
			return nil, err
		}
		data := buf[:n+m]
		if eof {
			b.err = io.EOF
			if len(data) == 0 {
				return nil, io.EOF
			}
			return b.block(buf, data, len(data), true), nil
		}
		// The unfinished last line is judged now: waiting for its end
		// could mean buffering without bound.
		nl := bytes.LastIndexByte(data, '\n')
		if tail := len(data) - nl - 1; tail > b.o.MaxLine+1 { // +1: a '\r' may end it
			b.err = b.tooLong(data, nl+1, int64(tail))
			return nil, b.err
		}
		if cut := b.split(data); cut > 0 {
			return b.block(buf, data, cut, false), nil
		}
		if len(data) >= b.o.MaxRecord {
			f := evidence.LimitExceeded(evidence.LimitReceipt{Name: b.o.RecordLimit, Value: int64(b.o.MaxRecord), Unit: "bytes"},
				"no record boundary within %s=%d bytes", b.o.RecordLimit, b.o.MaxRecord)
			f.Location = evidence.Location{Line: 1, Offset: b.off}
			b.err = f
			return nil, f
		}
		// One record fills the buffer: keep it whole and read more.
		b.carry = append(b.carry[:0], data...)
	}
}

func (b *Blocks) block(buf, data []byte, cut int, last bool) *Block {
	blk := &Block{Buf: buf, Data: data[:cut], Seq: b.seq, Offset: b.off, Last: last, max: b.o.MaxLine, limit: b.o.Limit}
	b.carry = append(b.carry[:0], data[cut:]...)
	b.off += int64(cut)
	b.seq++
	return blk
}

// split returns where the block in data ends: just after a newline, and
// at a Boundary when one is set; 0 when there is no such place. The rest
// is never empty, so the block that holds the input's end, read later,
// knows it is the last.
func (b *Blocks) split(data []byte) int {
	last := bytes.LastIndexByte(data, '\n')
	if b.o.Boundary == nil {
		if last == len(data)-1 && last >= 0 {
			last = bytes.LastIndexByte(data[:last], '\n')
		}
		return last + 1
	}
	// The line after a cut must be complete to be judged.
	for end := last; end > 0; {
		nl := bytes.LastIndexByte(data[:end], '\n')
		if nl < 0 {
			return 0
		}
		if b.o.Boundary(trimCR(data[nl+1 : end])) {
			return nl + 1
		}
		end = nl
	}
	return 0
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// tooLong is the failure for the line starting at data[start], numbered
// within the block that begins at data[0].
func (b *Blocks) tooLong(data []byte, start int, size int64) *evidence.Failure {
	return lineTooLong(b.o.Limit, b.o.MaxLine, size, 1+int64(bytes.Count(data[:start], []byte{'\n'})), b.off+int64(start))
}

func lineTooLong(limit string, max int, size, line, off int64) *evidence.Failure {
	f := evidence.LimitExceeded(evidence.LimitReceipt{Name: limit, Value: int64(max), Observed: size, Unit: "bytes"},
		"a line is longer than %s=%d bytes", limit, max)
	f.Location = evidence.Location{Line: int(line), Offset: off}
	return f
}

// Done records that block seq has lines lines. It is safe for concurrent
// use.
func (b *Blocks) Done(seq int, lines int64) {
	b.mu.Lock()
	b.done[seq] = lines
	b.mu.Unlock()
}

// Locate turns the block-relative line of a failure found in block seq
// (by its Scan, or by Next when seq is Seq()) into the stream's line.
// Every block before seq must be Done. Other errors pass unchanged.
func (b *Blocks) Locate(seq int, err error) error {
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Location.Line <= 0 {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var base int64
	for s, n := range b.done {
		if s < seq {
			base += n
		}
	}
	f.Location.Line += int(base)
	return err
}

// Lines returns a scanner over the block's lines.
func (blk *Block) Lines() Scan {
	return Scan{data: blk.Data, base: blk.Offset, max: blk.max, limit: blk.limit}
}

// Split returns a scanner over the lines of b, already in memory (a
// sniffer's prefix). Lines are bounded by b alone; numbers count from 1.
// The last line of a prefix may be incomplete: its Term is None.
func Split(b []byte) Scan { return Scan{data: b, max: len(b)} }

// Scan reads the lines of one block. Line numbers count from 1 within the
// block (see Blocks.Locate); offsets are the stream's.
type Scan struct {
	data  []byte
	pos   int   // data[pos:] is unread
	base  int64 // stream offset of data[0]
	n     int64
	max   int
	limit string
	line  Line // the last line read, described by Line when asked
}

// Count is the number of lines read so far.
func (s *Scan) Count() int64 { return s.n }

// Next returns the next line, or io.EOF at the end of the block. A line
// longer than the bound is a LIMIT_EXCEEDED failure.
func (s *Scan) Next() (*Line, error) {
	if _, err := s.Bytes(); err != nil {
		return nil, err
	}
	return s.Line(), nil
}

// Bytes is Next for hot loops: it returns only the line's bytes (valid as
// long as the block), and Line describes the line when that is needed.
func (s *Scan) Bytes() ([]byte, error) {
	// The common line (LF-terminated, within the bound) is taken first,
	// with no more state than where the next one starts: Line works out
	// the rest when asked.
	rest := s.data[s.pos:]
	if nl := bytes.IndexByte(rest, '\n'); nl > 0 && nl <= s.max && rest[nl-1] != '\r' {
		s.pos += nl + 1
		s.n++
		return rest[:nl], nil
	}
	return s.slow()
}

func (s *Scan) slow() ([]byte, error) {
	rest := s.data[s.pos:]
	if len(rest) == 0 {
		return nil, io.EOF
	}
	b, adv, _ := split(rest)
	if len(b) > s.max {
		return nil, lineTooLong(s.limit, s.max, int64(len(b)), s.n+1, s.base+int64(s.pos))
	}
	s.pos += adv
	s.n++
	return b, nil
}

// split returns the first line of b without its terminator, the bytes it
// takes with it, and the terminator.
func split(b []byte) (line []byte, adv int, term Terminator) {
	nl := bytes.IndexByte(b, '\n')
	switch {
	case nl < 0:
		return b, len(b), None
	case nl > 0 && b[nl-1] == '\r':
		return b[:nl-1], nl + 1, CRLF
	}
	return b[:nl], nl + 1, LF
}

// Line describes the last line read (by Next, Bytes or Repeat), for
// locating a failure found in it: the line that ends where the next one
// starts. Before any, it is empty.
func (s *Scan) Line() *Line {
	s.line = Line{}
	if s.n > 0 {
		start := bytes.LastIndexByte(s.data[:s.pos-1], '\n') + 1
		b, _, term := split(s.data[start:s.pos])
		s.line = Line{Bytes: b, Number: s.n, Offset: s.base + int64(start), Size: int64(len(b)), Term: term}
	}
	return &s.line
}

// Repeat consumes the next line when it is p ended by "\n" and returns
// its bytes (within the block): parsers whose lines often repeat an
// earlier line (the callers of consecutive stack samples) skip the search
// for its end. p must be a line Next or Bytes returned (so within the
// bound).
func (s *Scan) Repeat(p []byte) ([]byte, bool) {
	end := s.pos + len(p)
	// A p ending in '\r' would hide a CRLF terminator that Next strips.
	if end >= len(s.data) || s.data[end] != '\n' || !bytes.Equal(s.data[s.pos:end], p) || len(p) > 0 && p[len(p)-1] == '\r' {
		return nil, false
	}
	b := s.data[s.pos:end]
	s.pos = end + 1
	s.n++
	return b, true
}
