package perfetto

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/encoding/protowire"
)

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	src, err := in.DigestFirst()
	if err != nil {
		return err
	}
	d := newDecoder(ctx, in, out)
	defer func() {
		if d.zstd != nil {
			d.zstd.Close()
		}
	}()
	br := bufio.NewReaderSize(formats.FileReader(src), 256<<10)
	if p, _ := br.Peek(2); bytes.Equal(p, gzipMagic) {
		// A gzip'd trace (.pftrace.gz), which Trace Processor reads too.
		zr, err := gzip.NewReader(br)
		if err != nil {
			return evidence.Wrap(evidence.CodeDecodeFailure, err, "%s: gzip", in.Spec.Title)
		}
		defer zr.Close()
		lim := in.Decompressed(zr)
		d.gzip, d.gzLim = true, lim
		br = bufio.NewReaderSize(lim, 256<<10)
	}
	if err := d.stream(br); err != nil {
		over := d.over
		if d.gzLim != nil && d.gzLim.Over != nil {
			over = d.gzLim.Over
		}
		return d.abort(in.Typed(err, over))
	}
	return d.end()
}

var gzipMagic = []byte{0x1f, 0x8b}

// stream reads the Trace: a sequence of field 1 (packet), each a
// length-delimited TracePacket. A stream that ends inside a packet is
// read up to that packet and stated incomplete (a producer killed while
// writing leaves one).
func (d *decoder) stream(br *bufio.Reader) error {
	maxPacket := d.in.Limit(LimitPacket)
	var off int64
	for {
		start := off
		tag, n, err := readUvarint(br)
		off += int64(n)
		if err == io.EOF && n == 0 {
			return nil
		}
		if err != nil {
			return d.cut(start, off, err)
		}
		num, typ := protowire.DecodeTag(tag)
		if num < 1 || typ > protowire.Fixed32Type || typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			return evidence.Failf(evidence.CodeDecodeFailure, "%s: byte offset %d: not a protobuf field (tag %#x): not a Perfetto trace, or corrupt here", d.in.Spec.Title, start, tag)
		}
		var size uint64
		switch typ {
		case protowire.BytesType:
			size, n, err = readUvarint(br)
			off += int64(n)
			if err != nil {
				return d.cut(start, off, err)
			}
		case protowire.VarintType:
			_, n, err = readUvarint(br)
			off += int64(n)
			if err != nil {
				return d.cut(start, off, err)
			}
		case protowire.Fixed64Type:
			size = 8
		case protowire.Fixed32Type:
			size = 4
		}
		if num != 1 || typ != protowire.BytesType {
			d.st.traceFields++
			if _, err := br.Discard(int(min(size, 1<<62))); err != nil {
				return d.cut(start, off, err)
			}
			off += int64(size)
			continue
		}
		if size > uint64(maxPacket) {
			return d.in.ExceededAt(LimitPacket, int64(min(size, 1<<62)), start)
		}
		buf := d.grow(int(size))
		if k, err := io.ReadFull(br, buf); err != nil {
			return d.cut(start, off+int64(k), err)
		}
		off += int64(size)
		if err := d.packet(buf, start, false); err != nil {
			return err
		}
	}
}

// cut handles a read that ended inside the packet that starts at start:
// the end of the file is a stated cut, any other error fails.
func (d *decoder) cut(start, at int64, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		d.truncatedAt, d.truncatedBytes = start, at-start
		return nil
	}
	return err
}

func (d *decoder) grow(n int) []byte {
	if cap(d.buf) < n {
		d.buf = make([]byte, n, max(n, 2*cap(d.buf)))
	}
	return d.buf[:n]
}

// readUvarint reads a varint, saying how many bytes it took.
func readUvarint(br *bufio.Reader) (uint64, int, error) {
	var x uint64
	for i := 0; i < 10; i++ {
		b, err := br.ReadByte()
		if err != nil {
			if i > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, i, err
		}
		x |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return x, i + 1, nil
		}
	}
	return 0, 10, errors.New("varint longer than 10 bytes")
}

// compressed inflates a compressed_packets field (zlib of a Trace: more
// packets) and reads its packets, all located at the outer packet.
func (d *decoder) compressed(b []byte, at int64, zstdFrame bool) error {
	d.st.compressedBundles++
	var zr io.Reader
	if zstdFrame {
		if d.zstd == nil {
			zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(d.in.Limit(LimitPacket))+1))
			if err != nil {
				return err
			}
			d.zstd = zd // closed by decode
		}
		if err := d.zstd.Reset(bytes.NewReader(b)); err != nil {
			return evidence.Failf(evidence.CodeDecodeFailure, "%s: packet at byte offset %d: zstd_compressed_packets: %v", d.in.Spec.Title, at, err)
		}
		zr = d.zstd
	} else {
		z, err := zlib.NewReader(bytes.NewReader(b))
		if err != nil {
			return evidence.Failf(evidence.CodeDecodeFailure, "%s: packet at byte offset %d: compressed_packets: %v", d.in.Spec.Title, at, err)
		}
		defer z.Close()
		zr = z
	}
	maxPacket := d.in.Limit(LimitPacket)
	left := d.in.Limit(LimitDecompressed) - d.inflated
	r := io.LimitReader(zr, min(maxPacket, left)+1)
	d.zbuf.Reset()
	n, err := d.zbuf.ReadFrom(r)
	if err != nil {
		return evidence.Failf(evidence.CodeDecodeFailure, "%s: packet at byte offset %d: compressed_packets: %v", d.in.Spec.Title, at, err)
	}
	if n > left {
		d.over = d.in.ExceededAt(LimitDecompressed, d.inflated+n, at)
		return d.over
	}
	if n > maxPacket {
		return d.in.ExceededAt(LimitPacket, n, at)
	}
	d.inflated += n
	inner := d.zbuf.Bytes()
	for len(inner) > 0 {
		num, typ, k := protowire.ConsumeTag(inner)
		if k < 0 {
			return d.innerFail(at, parseError(k))
		}
		inner = inner[k:]
		if num != 1 || typ != protowire.BytesType {
			k = protowire.ConsumeFieldValue(num, typ, inner)
			if k < 0 {
				return d.innerFail(at, parseError(k))
			}
			d.st.traceFields++
			inner = inner[k:]
			continue
		}
		p, k := protowire.ConsumeBytes(inner)
		if k < 0 {
			return d.innerFail(at, parseError(k))
		}
		inner = inner[k:]
		if err := d.packet(p, at, true); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) innerFail(at int64, err error) error {
	return evidence.Failf(evidence.CodeDecodeFailure, "%s: packet at byte offset %d: the packets inflated from compressed_packets are malformed: %v", d.in.Spec.Title, at, err)
}

// malformed is the failure of a packet whose fields do not parse.
func (d *decoder) malformed(at int64, what string, err error) error {
	return evidence.Failf(evidence.CodeDecodeFailure, "%s: packet %d at byte offset %d: %s: %v", d.in.Spec.Title, d.st.packets, at, what, err)
}

var errWire = errors.New("wire type does not match the field")
