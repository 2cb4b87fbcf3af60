package memray

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
)

// source reads the record stream (decompressed when the file is an LZ4
// frame) from a buffer of its own, so the per-byte reads of the record
// loop stay inline, and counts its bytes, so failures name the offset of
// the record they are in.
type source struct {
	r        io.Reader
	buf      []byte
	pos, end int
	base     int64 // stream offset of buf[0]
	err      error // the reader's error, once it gave one
	lz4      bool  // offsets are in the decompressed stream
	// maxString bounds one NUL-terminated string or line table.
	maxString int64
	stringErr func(observed any, off int64) error
}

// sourceSize is the size of a source's buffer, fixed so that the fast
// path holds the buffer as one pointer with no length to keep.
const sourceSize = 1 << 20

func newSource(r io.Reader) *source {
	return &source{r: r, buf: make([]byte, sourceSize)}
}

// errTruncated is a record cut by the end of the stream.
var errTruncated = errors.New("the record stream ends inside a record")

// offset is the stream offset of the next byte.
func (s *source) offset() int64 { return s.base + int64(s.pos) }

// fill moves the unread bytes to the front and reads more; it fails only
// when nothing more can be read.
func (s *source) fill() error {
	if s.err != nil {
		return s.err
	}
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:s.end])
		s.base += int64(s.pos)
		s.pos, s.end = 0, n
	}
	for zero := 0; s.end < len(s.buf); zero++ {
		if zero == 100 {
			// A reader that keeps returning nothing (an LZ4 frame of
			// empty blocks) must not spin.
			s.err = io.ErrNoProgress
			return s.err
		}
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
			if n > 0 {
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
	}
	return nil
}

// next is the next byte, or the reader's error (io.EOF at the end).
func (s *source) next() (byte, error) {
	if s.pos < s.end {
		b := s.buf[s.pos]
		s.pos++
		return b, nil
	}
	if err := s.fill(); err != nil {
		return 0, err
	}
	b := s.buf[s.pos]
	s.pos++
	return b, nil
}

// byte is next inside a record: the end of the stream is errTruncated.
func (s *source) byte() (byte, error) {
	if s.pos < s.end {
		b := s.buf[s.pos]
		s.pos++
		return b, nil
	}
	b, err := s.next()
	return b, s.eof(err)
}

func (s *source) eof(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// fixed returns the next n bytes (n <= 72), valid until the next read.
func (s *source) fixed(n int) ([]byte, error) {
	for s.end-s.pos < n {
		if err := s.fill(); err != nil {
			return nil, s.eof(err)
		}
		if s.end-s.pos < n && s.err != nil {
			return nil, s.eof(s.err)
		}
	}
	b := s.buf[s.pos : s.pos+n]
	s.pos += n
	return b, nil
}

func (s *source) u64() (uint64, error) {
	b, err := s.fixed(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (s *source) i32() (int32, error) {
	b, err := s.fixed(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.LittleEndian.Uint32(b)), nil
}

// varint reads memray's unsigned LEB128 varint (at most 64 bits).
func (s *source) varint() (uint64, error) {
	// Fast path: the longest varint is in the buffer.
	if s.end-s.pos >= 10 {
		buf := s.buf[s.pos : s.pos+10]
		var v uint64
		for i, b := range buf {
			v |= uint64(b&0x7f) << (7 * i)
			if b < 0x80 {
				s.pos += i + 1
				return v, nil
			}
		}
		return 0, fmt.Errorf("a varint longer than 64 bits")
	}
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, fmt.Errorf("a varint longer than 64 bits")
		}
		b, err := s.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, nil
		}
	}
}

// svarint reads a zig-zag encoded signed varint.
func (s *source) svarint() (int64, error) {
	u, err := s.varint()
	return int64(u>>1) ^ -int64(u&1), err
}

// delta reads a signed delta and applies it to *prev, as memray's
// writeIntegralDelta wrote it (wrapping, as the C++ unsigned fields do).
func (s *source) delta(prev *uint64) (uint64, error) {
	d, err := s.svarint()
	if err != nil {
		return 0, err
	}
	*prev += uint64(d)
	return *prev, nil
}

// cstring reads a NUL-terminated string of at most maxString bytes.
func (s *source) cstring() (string, error) {
	start := s.offset()
	var out []byte
	for {
		if i := bytes.IndexByte(s.buf[s.pos:s.end], 0); i >= 0 {
			if int64(len(out)+i) > s.maxString {
				return "", s.stringErr(nil, start)
			}
			var str string
			if out == nil {
				str = string(s.buf[s.pos : s.pos+i])
			} else {
				str = string(append(out, s.buf[s.pos:s.pos+i]...))
			}
			s.pos += i + 1
			return str, nil
		}
		out = append(out, s.buf[s.pos:s.end]...)
		s.pos = s.end
		if int64(len(out)) > s.maxString {
			return "", s.stringErr(nil, start)
		}
		if err := s.fill(); err != nil {
			return "", s.eof(err)
		}
	}
}

// bytes reads n bytes of a line table, bounded like a string.
func (s *source) bytes(n uint64) ([]byte, error) {
	if n > uint64(s.maxString) {
		return nil, s.stringErr(int64(n), s.offset())
	}
	out := make([]byte, 0, n)
	for uint64(len(out)) < n {
		if s.pos == s.end {
			if err := s.fill(); err != nil {
				return nil, s.eof(err)
			}
		}
		k := min(int(n)-len(out), s.end-s.pos)
		out = append(out, s.buf[s.pos:s.pos+k]...)
		s.pos += k
	}
	return out, nil
}

// rest reads to the end of the stream, calling fn with each chunk.
func (s *source) rest(fn func([]byte) error) error {
	for {
		if err := fn(s.buf[s.pos:s.end]); err != nil {
			return err
		}
		s.pos = s.end
		if err := s.fill(); err != nil {
			return err
		}
	}
}

// failure is a DECODE_FAILURE at a record that starts at off.
func (s *source) failure(off int64, format string, args ...any) *evidence.Failure {
	where := "byte"
	if s.lz4 {
		where = "decompressed byte"
	}
	return &evidence.Failure{Code: evidence.CodeDecodeFailure, Location: evidence.Location{Offset: off},
		Message: fmt.Sprintf("Memray capture: record at %s %d: %s", where, off, fmt.Sprintf(format, args...))}
}
