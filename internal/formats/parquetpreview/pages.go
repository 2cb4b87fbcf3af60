package parquetpreview

import (
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/parquet-go/parquet-go/format"
)

// Page headers are read here, with a thrift compact reader whose every step
// consumes input, before parquet-go reads them: parquet-go 0.32's skipper
// drops the read error of a DOUBLE, so an unknown list of doubles declaring
// two billion items in a page header spins for seconds per page over a
// file of a few hundred bytes (found by FuzzDecode).

const (
	pageWindow    = 64 << 10 // first read of a page header
	maxThriftNest = 32       // structs and lists inside a page header
)

var errShort = errors.New("ends inside the page header")

// checkPages walks the page headers of one column chunk, start to end:
// each must parse, and its compressed page must lie inside the chunk.
func checkPages(ra io.ReaderAt, md *format.ColumnMetaData, start int64, name string, gi, ci int) error {
	end := start + md.TotalCompressedSize
	var buf []byte
	for off := start; off < end; {
		var size int64
		var err error
		for window := int64(pageWindow); ; window *= 4 {
			n := min(window, end-off)
			if int64(cap(buf)) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			if _, rerr := ra.ReadAt(buf, off); rerr != nil && !errors.Is(rerr, io.EOF) {
				return evidence.Wrap(evidence.CodeIOFailure, rerr, "read parquet page header")
			}
			var hdr int
			hdr, size, err = pageHeader(buf)
			if errors.Is(err, errShort) && n < end-off {
				continue // the header is longer than the window
			}
			if err == nil {
				off += int64(hdr)
			}
			break
		}
		if err == nil && (size < 0 || size > end-off) {
			err = fmt.Errorf("its page of %d bytes overruns the chunk's %d remaining bytes", size, end-off)
		}
		if err != nil {
			f := evidence.Failf(evidence.CodeDecodeFailure, "corrupt Parquet page header at byte %d of row group %d column %d (%s): %v", off, gi, ci, name, err)
			f.Location.Offset, f.Location.Field = off, name
			return f
		}
		off += size
	}
	return nil
}

// pageHeader parses one thrift compact PageHeader at the start of b and
// returns its length and compressed_page_size (field 3).
func pageHeader(b []byte) (n int, compressed int64, err error) {
	c := &compact{b: b}
	compressed = -1
	var id int16
	for {
		h, err := c.byte1()
		if err != nil {
			return 0, 0, err
		}
		if h == 0 {
			break
		}
		if id, err = c.fieldID(h, id); err != nil {
			return 0, 0, err
		}
		if id == 3 && h&0x0f == 5 { // compressed_page_size: i32
			v, err := c.varint()
			if err != nil {
				return 0, 0, err
			}
			compressed = int64(int32(uint32(v>>1) ^ -uint32(v&1)))
			continue
		}
		if err := c.skip(h&0x0f, 0, false); err != nil {
			return 0, 0, err
		}
	}
	if compressed < 0 {
		return 0, 0, errors.New("no compressed_page_size")
	}
	return c.off, compressed, nil
}

type compact struct {
	b   []byte
	off int
}

func (c *compact) byte1() (byte, error) {
	if c.off >= len(c.b) {
		return 0, errShort
	}
	c.off++
	return c.b[c.off-1], nil
}

func (c *compact) varint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		x, err := c.byte1()
		if err != nil {
			return 0, err
		}
		v |= uint64(x&0x7f) << shift
		if x < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint longer than 10 bytes")
}

func (c *compact) take(n uint64) error {
	if n > uint64(len(c.b)-c.off) {
		return errShort
	}
	c.off += int(n)
	return nil
}

// fieldID returns the id of the field whose header byte is h.
func (c *compact) fieldID(h byte, prev int16) (int16, error) {
	if d := h >> 4; d != 0 {
		return prev + int16(d), nil
	}
	v, err := c.varint()
	return int16(uint16(v>>1) ^ -uint16(v&1)), err
}

// count reads a list or set size and refuses one that the remaining bytes
// cannot hold (every item takes at least one byte).
func (c *compact) count(v uint64) (uint64, error) {
	if v > uint64(len(c.b)-c.off) {
		return 0, errShort
	}
	return v, nil
}

// skip consumes one value of compact type t; inList says a boolean takes
// a byte (in a field it is the type itself).
func (c *compact) skip(t byte, depth int, inList bool) error {
	if depth > maxThriftNest {
		return fmt.Errorf("nested deeper than %d", maxThriftNest)
	}
	switch t {
	case 1, 2: // boolean true, false
		if inList {
			return c.take(1)
		}
		return nil
	case 3: // byte
		return c.take(1)
	case 4, 5, 6: // i16, i32, i64
		_, err := c.varint()
		return err
	case 7: // double
		return c.take(8)
	case 8: // binary
		n, err := c.varint()
		if err != nil {
			return err
		}
		return c.take(n)
	case 9, 10: // list, set
		h, err := c.byte1()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = c.varint(); err != nil {
				return err
			}
		}
		if n, err = c.count(n); err != nil {
			return err
		}
		for range n {
			if err := c.skip(h&0x0f, depth+1, true); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := c.varint()
		if err != nil || n == 0 {
			return err
		}
		if n, err = c.count(n); err != nil {
			return err
		}
		kv, err := c.byte1()
		if err != nil {
			return err
		}
		for range n {
			if err := c.skip(kv>>4, depth+1, true); err != nil {
				return err
			}
			if err := c.skip(kv&0x0f, depth+1, true); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		var id int16
		for {
			h, err := c.byte1()
			if err != nil || h == 0 {
				return err
			}
			if id, err = c.fieldID(h, id); err != nil {
				return err
			}
			if err := c.skip(h&0x0f, depth+1, false); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unknown thrift type %d", t)
}
