package otlp

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"google.golang.org/protobuf/encoding/protowire"
)

// sniff recognizes OTLP/JSON (an object whose members include
// resourceSpans, an array) and OTLP protobuf (a prefix that is a
// well-formed TracesData as deep as it goes; see wire).
func sniff(prefix []byte) formats.Verdict {
	p := bytes.TrimLeft(prefix, " \t\r\n")
	if len(p) > 0 && p[0] == '{' {
		if v := formats.SniffObject(prefix, false, sniffJSON); v != formats.No {
			return v
		}
	}
	return sniffProto(prefix)
}

func sniffJSON(doc []byte) formats.Verdict {
	s := jsonscan.NewBytes(doc)
	s.CheckDuplicates = false
	if tok, err := s.Next(); err != nil || tok.Kind != jsonscan.ObjectStart {
		return formats.No
	}
	for {
		k, err := s.Next()
		if err != nil {
			return formats.NeedMore
		}
		if k.Kind != jsonscan.String {
			return formats.No
		}
		key := norm(string(k.Bytes))
		v, err := s.Next()
		if err != nil {
			return formats.NeedMore
		}
		if key == "resourcespans" {
			if v.Kind == jsonscan.ArrayStart {
				return formats.Yes
			}
			return formats.No
		}
		if err := s.Skip(v); err != nil {
			return formats.NeedMore
		}
	}
}

// The OTLP trace messages as the sniffer checks them: for each field
// number, its wire type and (for a message) the message it holds; 0 is
// a string, checked for UTF-8; -1 is bytes.
type msgSchema map[protowire.Number]fieldSchema

type fieldSchema struct {
	typ protowire.Type
	msg msgSchema
	str bool
}

var (
	anyValue, keyValue msgSchema
	tracesData         msgSchema
)

func init() {
	str := fieldSchema{typ: protowire.BytesType, str: true}
	raw := fieldSchema{typ: protowire.BytesType}
	varint := fieldSchema{typ: protowire.VarintType}
	fixed64 := fieldSchema{typ: protowire.Fixed64Type}
	fixed32 := fieldSchema{typ: protowire.Fixed32Type}
	anyValue = msgSchema{1: str, 2: varint, 3: varint, 4: fixed64, 7: raw}
	keyValue = msgSchema{1: str, 2: {typ: protowire.BytesType, msg: anyValue}}
	kvList := msgSchema{1: {typ: protowire.BytesType, msg: keyValue}}
	anyValue[5] = fieldSchema{typ: protowire.BytesType, msg: msgSchema{1: {typ: protowire.BytesType, msg: anyValue}}}
	anyValue[6] = fieldSchema{typ: protowire.BytesType, msg: kvList}
	attrs := fieldSchema{typ: protowire.BytesType, msg: keyValue}
	resource := msgSchema{1: attrs, 2: varint, 3: raw}
	scope := msgSchema{1: str, 2: str, 3: attrs, 4: varint}
	event := msgSchema{1: fixed64, 2: str, 3: attrs, 4: varint}
	link := msgSchema{1: raw, 2: raw, 3: str, 4: attrs, 5: varint, 6: fixed32}
	status := msgSchema{2: str, 3: varint}
	span := msgSchema{1: raw, 2: raw, 3: str, 4: raw, 5: str, 6: varint, 7: fixed64, 8: fixed64, 9: attrs, 10: varint,
		11: {typ: protowire.BytesType, msg: event}, 12: varint, 13: {typ: protowire.BytesType, msg: link}, 14: varint,
		15: {typ: protowire.BytesType, msg: status}, 16: fixed32}
	scopeSpans := msgSchema{1: {typ: protowire.BytesType, msg: scope}, 2: {typ: protowire.BytesType, msg: span}, 3: str}
	resourceSpans := msgSchema{1: {typ: protowire.BytesType, msg: resource}, 2: {typ: protowire.BytesType, msg: scopeSpans}, 3: str}
	tracesData = msgSchema{1: {typ: protowire.BytesType, msg: resourceSpans}}
}

// sniffProto says Yes when the prefix is a TracesData whose fields, as
// deep as the prefix reaches, are all the OTLP trace fields with their
// wire types, and at least one span's or attribute's field was seen;
// other protobuf messages (pprof, Perfetto) differ in their first
// fields.
func sniffProto(prefix []byte) formats.Verdict {
	if len(prefix) < 2 || prefix[0] != 0x0a {
		return formats.No
	}
	seen := 0
	ok, _ := wire(prefix, tracesData, 0, &seen)
	if !ok || seen < 3 {
		return formats.No
	}
	return formats.Yes
}

// wire checks b against m; a message cut by the end of the prefix is
// accepted as far as it goes (cut=true).
func wire(b []byte, m msgSchema, depth int, seen *int) (ok, cut bool) {
	if depth > 40 {
		return true, true
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return truncated(n), true
		}
		f, known := m[num]
		if !known || f.typ != typ {
			return false, false
		}
		b = b[n:]
		*seen++
		switch typ {
		case protowire.VarintType:
			_, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			_, n = protowire.ConsumeFixed32(b)
		case protowire.Fixed64Type:
			_, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			l, ln := protowire.ConsumeVarint(b)
			if ln < 0 {
				return truncated(ln), true
			}
			body := b[ln:]
			short := uint64(len(body)) < l
			if !short {
				body = body[:l]
			}
			switch {
			case f.msg != nil:
				ok, c := wire(body, f.msg, depth+1, seen)
				if !ok {
					return false, false
				}
				if c && !short {
					return false, false // a whole message cannot end mid-field
				}
			case f.str:
				if !short && !utf8.Valid(body) {
					return false, false
				}
			}
			if short {
				return true, true
			}
			n = ln + int(l)
		}
		if n < 0 {
			return truncated(n), true
		}
		b = b[n:]
	}
	return true, false
}

// truncated says whether a protowire error code is a field cut by the
// end of the buffer.
func truncated(n int) bool { return protowire.ParseError(n) == io.ErrUnexpectedEOF }
