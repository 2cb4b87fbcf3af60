package otlp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// protobuf walks the top level of a TracesData / ExportTraceServiceRequest
// message: field 1 (resource_spans) is unmarshalled one at a time; other
// fields are skipped as protobuf skips unknown fields.
func (d *decoder) protobuf(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	maxMsg := d.in.Limit(LimitMessage)
	var buf bytes.Buffer
	fail := func(at int64, format string, args ...any) error {
		f := evidence.Failf(evidence.CodeDecodeFailure, "%s (protobuf): %s", d.in.Spec.Title, fmt.Sprintf(format, args...))
		f.Location.Offset = at
		return f
	}
	for {
		start := off
		tag, n, err := readVarint(br)
		if err == io.EOF && n == 0 {
			return nil
		}
		off += int64(n)
		if err != nil {
			return d.readFail(err, start, "truncated field tag", fail)
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		if num < protowire.MinValidNumber || num > protowire.MaxValidNumber {
			return fail(start, "invalid field number %d", num)
		}
		switch typ {
		case protowire.VarintType:
			_, n, err := readVarint(br)
			off += int64(n)
			if err != nil {
				return d.readFail(err, start, "truncated varint field", fail)
			}
		case protowire.Fixed32Type, protowire.Fixed64Type:
			size := 4
			if typ == protowire.Fixed64Type {
				size = 8
			}
			if _, err := io.ReadFull(br, make([]byte, size)); err != nil {
				return d.readFail(err, start, "truncated fixed field", fail)
			}
			off += int64(size)
		case protowire.BytesType:
			l, n, err := readVarint(br)
			off += int64(n)
			if err != nil {
				return d.readFail(err, start, "truncated length", fail)
			}
			if int64(l) < 0 || l > 1<<62 {
				return fail(start, "field %d: length %d is not a length", num, l)
			}
			if d.in.Artifact != nil && !d.compressed && off+int64(l) > d.in.Artifact.Size {
				return fail(start, "field %d: length %d runs past the end of the %d-byte file", num, l, d.in.Artifact.Size)
			}
			if num != 1 {
				if _, err := io.CopyN(io.Discard, br, int64(l)); err != nil {
					if err == io.EOF {
						err = io.ErrUnexpectedEOF
					}
					return d.readFail(err, start, fmt.Sprintf("field %d: length %d runs past the end", num, l), fail)
				}
				off += int64(l)
				continue
			}
			if int64(l) > maxMsg {
				return d.in.ExceededAt(LimitMessage, int64(l), start)
			}
			// Grown as the bytes arrive, so that a length the stream does
			// not hold (a gzip'd body's size is unknown) allocates nothing.
			buf.Reset()
			if _, err := io.CopyN(&buf, br, int64(l)); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return d.readFail(err, start, fmt.Sprintf("resource_spans length %d runs past the end", l), fail)
			}
			off += int64(l)
			rs := &tracepb.ResourceSpans{}
			if err := proto.Unmarshal(buf.Bytes(), rs); err != nil {
				return fail(start, "resource_spans %d: %v", d.resourceSpans+1, formats.ProtoError(err))
			}
			if err := d.resource(rs); err != nil {
				var f *evidence.Failure
				if errors.As(err, &f) && f.Location.Offset == 0 {
					f.Location.Offset = start
				}
				return err
			}
		default:
			// Groups (deprecated) and the reserved wire types 6 and 7
			// are in no OTLP message.
			return fail(start, "field %d has wire type %d, which no OTLP traces message uses", num, typ)
		}
	}
}

// readFail is a read error: a truncation (EOF within a field) is
// DECODE_FAILURE; anything else (the artifact's read, a limit) keeps its
// own error.
func (d *decoder) readFail(err error, at int64, what string, fail func(int64, string, ...any) error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fail(at, "%s: the message is truncated", what)
	}
	return err
}

// readVarint reads a base-128 varint; n is the bytes consumed.
func readVarint(br *bufio.Reader) (v uint64, n int, err error) {
	for shift := uint(0); ; shift += 7 {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF && n > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, n, err
		}
		n++
		if n > 10 || (n == 10 && b > 1) {
			return 0, n, errors.New("varint overflows 64 bits")
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, n, nil
		}
	}
}
