package perfetto

import (
	"bytes"
	"compress/gzip"
	"io"

	"github.com/flameox/flameox/internal/formats"
	"google.golang.org/protobuf/encoding/protowire"
)

// sniff recognizes a Trace by its wire structure, since it has no
// magic: the prefix is a run of field 1 (packet, length-delimited)
// whose packets are well-formed messages as far as the prefix reaches,
// and at least one packet carries a TracePacket field other than 1–3
// with its declared wire type (a timestamp, a sequence id, a track
// event…), which tells it from other protobuf streams that open with a
// field 1 message (OTLP's resource_spans holds only fields 1–3).
func sniff(prefix []byte) formats.Verdict {
	if bytes.HasPrefix(prefix, gzipMagic) {
		// As much of the gzip'd trace as the prefix inflates to.
		zr, err := gzip.NewReader(bytes.NewReader(prefix))
		if err != nil {
			return formats.No
		}
		inflated, _ := io.ReadAll(io.LimitReader(zr, formats.SniffBytes))
		prefix = inflated
	}
	if len(prefix) < 2 || prefix[0] != 0x0a {
		return formats.No
	}
	b := prefix
	packets, marks := 0, 0
	for len(b) > 0 && packets < 64 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break // cut by the prefix
		}
		if num != 1 || typ != protowire.BytesType {
			return formats.No
		}
		l, ln := protowire.ConsumeVarint(b[n:])
		if ln < 0 {
			break
		}
		body := b[n+ln:]
		whole := uint64(len(body)) >= l
		if whole {
			body = body[:l]
		}
		ok, m := packetShape(body, whole)
		if !ok {
			return formats.No
		}
		marks += m
		packets++
		if !whole {
			break
		}
		b = b[n+ln+int(l):]
	}
	if packets == 0 || marks == 0 {
		return formats.No
	}
	return formats.Yes
}

// Wire types of the TracePacket fields a sniffer checks.
var packetWire = map[protowire.Number]protowire.Type{
	8: protowire.VarintType, 10: protowire.VarintType, 13: protowire.VarintType, 58: protowire.VarintType,
	3: protowire.VarintType, 79: protowire.VarintType, 41: protowire.VarintType, 42: protowire.VarintType,
	87: protowire.VarintType, 11: protowire.BytesType, 12: protowire.BytesType, 59: protowire.BytesType,
	60: protowire.BytesType, 6: protowire.BytesType, 33: protowire.BytesType, 35: protowire.BytesType,
	50: protowire.BytesType, 1: protowire.BytesType, 2: protowire.BytesType, 36: protowire.BytesType,
	9: protowire.BytesType, 45: protowire.BytesType, 69: protowire.BytesType, 89: protowire.BytesType,
	133: protowire.BytesType, 43: protowire.BytesType, 44: protowire.BytesType, 54: protowire.BytesType, 66: protowire.BytesType,
}

// packetShape checks a packet's fields; a packet cut by the prefix is
// accepted as far as it goes. It returns how many fields mark a
// TracePacket.
func packetShape(b []byte, whole bool) (bool, int) {
	marks := 0
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return !whole, marks
		}
		if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			return false, 0
		}
		if want, ok := packetWire[num]; ok {
			if want != typ {
				return false, 0
			}
			if num > 3 {
				marks++
			}
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return !whole, marks
		}
		b = b[n+m:]
	}
	return true, marks
}
