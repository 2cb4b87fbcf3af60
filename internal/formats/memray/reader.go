package memray

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
)

// source reads the record stream (decompressed when the file is an LZ4
// frame) and counts its bytes, so failures name the offset of the record
// they are in.
type source struct {
	r   *bufio.Reader
	off int64 // bytes of the record stream consumed
	lz4 bool  // offsets are in the decompressed stream
	// maxString bounds one NUL-terminated string or line table.
	maxString int64
	stringErr func(observed any, off int64) error
	buf       []byte
}

// errTruncated is a record cut by the end of the stream.
var errTruncated = errors.New("the record stream ends inside a record")

func (s *source) byte() (byte, error) {
	b, err := s.r.ReadByte()
	if err != nil {
		return 0, s.eof(err)
	}
	s.off++
	return b, nil
}

func (s *source) eof(err error) error {
	if errors.Is(err, io.EOF) {
		return errTruncated
	}
	return err
}

// fixed reads n bytes (n <= 72) into s.buf.
func (s *source) fixed(n int) ([]byte, error) {
	if cap(s.buf) < n {
		s.buf = make([]byte, n, 256)
	}
	b := s.buf[:n]
	if _, err := io.ReadFull(s.r, b); err != nil {
		return nil, s.eof(err)
	}
	s.off += int64(n)
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
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, fmt.Errorf("a varint longer than 64 bits")
		}
		b, err := s.r.ReadByte()
		if err != nil {
			return 0, s.eof(err)
		}
		s.off++
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
	start := s.off
	line, err := s.r.ReadSlice(0)
	if err == nil && int64(len(line)-1) <= s.maxString {
		s.off += int64(len(line))
		return string(line[:len(line)-1]), nil
	}
	var out []byte
	for {
		out = append(out, line...)
		s.off += int64(len(line))
		if int64(len(out)) > s.maxString+1 {
			return "", s.stringErr(nil, start)
		}
		switch {
		case err == nil:
			return string(out[:len(out)-1]), nil
		case errors.Is(err, bufio.ErrBufferFull):
			line, err = s.r.ReadSlice(0)
		default:
			return "", s.eof(err)
		}
	}
}

// bytes reads n bytes of a line table, bounded like a string.
func (s *source) bytes(n uint64) ([]byte, error) {
	if n > uint64(s.maxString) {
		return nil, s.stringErr(int64(n), s.off)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(s.r, b); err != nil {
		return nil, s.eof(err)
	}
	s.off += int64(n)
	return b, nil
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
