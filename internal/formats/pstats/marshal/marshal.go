// Package marshal reads CPython's marshal serialization (format versions 0
// to 5, as written by marshal.dump) from a stream, within explicit bounds on
// bytes, nesting and object count.
//
// It reads the object types that profiler statistics use (dicts, tuples,
// ints of any size, floats, strings and back-references) and, so that a
// pure-Python `profile` dump whose keys hold code objects can be read, the
// remaining constant types: lists, sets, frozensets, complex numbers,
// slices, Ellipsis and code objects in the CPython 3.11+ layout. Anything
// else is an error; nothing is guessed.
//
// Back-references (FLAG_REF / TYPE_REF) are numbered in pre-order, exactly
// as CPython numbers them: a container takes its slot before its items. A
// reference to an unknown slot, or to a container that is still being read
// (a cycle), is an error.
//
// Two readers share one stream: Value builds a whole object, and Next
// (token.go) reads objects as a typed token stream in which a container no
// back-reference can name is never built, so a large dict of tuples is
// read in constant memory per item.
//
// It imports nothing of flameox.
package marshal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Type codes, as CPython's Python/marshal.c names them.
const (
	typeNull               = '0'
	typeNone               = 'N'
	typeFalse              = 'F'
	typeTrue               = 'T'
	typeStopIter           = 'S'
	typeEllipsis           = '.'
	typeInt                = 'i'
	typeFloat              = 'f'
	typeBinaryFloat        = 'g'
	typeComplex            = 'x'
	typeBinaryComplex      = 'y'
	typeLong               = 'l'
	typeString             = 's' // bytes
	typeInterned           = 't'
	typeRef                = 'r'
	typeTuple              = '('
	typeList               = '['
	typeDict               = '{'
	typeCode               = 'c'
	typeUnicode            = 'u'
	typeSet                = '<'
	typeFrozenSet          = '>'
	typeASCII              = 'a'
	typeASCIIInterned      = 'A'
	typeSmallTuple         = ')'
	typeShortASCII         = 'z'
	typeShortASCIIInterned = 'Z'
	typeSlice              = ':'

	flagRef = 0x80
)

// Value is a decoded object: nil (None), bool, int64, *big.Int (ints
// beyond int64), float64, complex128, string (str), Bytes, Tuple, List,
// Dict, Set, FrozenSet, Slice, Ellipsis, StopIteration or *Code.
type Value any

// Bytes is a Python bytes object.
type Bytes []byte

// Tuple is a Python tuple.
type Tuple []Value

// List is a Python list.
type List []Value

// Set is a Python set, in stream order.
type Set []Value

// FrozenSet is a Python frozenset, in stream order.
type FrozenSet []Value

// Item is one key/value pair of a dict.
type Item struct{ Key, Value Value }

// Dict is a Python dict, in stream (insertion) order. Keys are not checked
// for uniqueness here; callers that need unique keys check them.
type Dict []Item

// Slice is a Python slice object (marshal version 5).
type Slice struct{ Start, Stop, Step Value }

// Ellipsis is Python's Ellipsis singleton.
type Ellipsis struct{}

// StopIteration is Python's StopIteration singleton.
type StopIteration struct{}

// Code is a Python code object, reduced to its identity. Its bytecode and
// constants are read (they must be well formed) but not kept.
type Code struct {
	Filename    string
	Name        string
	QualName    string
	FirstLineNo int64
}

// Limits bound a decode. Zero fields get the defaults below.
type Limits struct {
	MaxBytes   int64 // bytes read from the stream
	MaxDepth   int   // nesting of containers
	MaxObjects int64 // objects decoded, back-references included
}

// Default limits.
const (
	DefaultMaxBytes   = 1 << 30
	DefaultMaxDepth   = 100
	DefaultMaxObjects = 100_000_000
)

// ErrLimit reports that a bound in Limits was crossed. The input may be
// valid; it is larger or deeper than allowed.
var ErrLimit = errors.New("limit exceeded")

// ErrTruncated reports input that ends inside an object.
var ErrTruncated = errors.New("truncated input")

// Bound names the field of Limits that an ErrLimit failure crossed.
type Bound uint8

const (
	BoundBytes Bound = iota + 1
	BoundDepth
	BoundObjects
)

// Error is a decode failure at a byte offset.
type Error struct {
	Offset int64 // offset of the object's type code, or of the failing read
	Msg    string
	Err    error // ErrLimit, ErrTruncated, a read error, or nil for bad data
	// For ErrLimit: the bound crossed, and the amount the input asked for
	// (bytes, levels) when known, else 0.
	Bound    Bound
	Observed int64
}

func (e *Error) Error() string {
	s := fmt.Sprintf("marshal: %s at byte %d", e.Msg, e.Offset)
	if e.Err != nil && !errors.Is(e.Err, ErrLimit) && !errors.Is(e.Err, ErrTruncated) {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// building marks a ref slot whose container is still being read.
type building struct{}

// Decoder reads marshal objects from a stream.
type Decoder struct {
	br      *bufio.Reader
	lim     Limits
	off     int64 // bytes consumed by the decoder
	depth   int
	objects int64
	refs    refTable
	stack   []frame // containers open in the token stream (token.go)
}

// NewDecoder returns a decoder reading r within lim.
func NewDecoder(r io.Reader, lim Limits) *Decoder {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultMaxBytes
	}
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = DefaultMaxDepth
	}
	if lim.MaxObjects <= 0 {
		lim.MaxObjects = DefaultMaxObjects
	}
	return &Decoder{br: bufio.NewReaderSize(r, bufSize), lim: lim}
}

// bufSize is the read buffer; strings up to this size are decoded from it
// without an intermediate copy.
const bufSize = 64 << 10

// Offset is the number of bytes consumed so far.
func (d *Decoder) Offset() int64 { return d.off }

// Refs is the number of back-reference slots assigned so far.
func (d *Decoder) Refs() int { return d.refs.n }

// refTable holds the back-reference slots in fixed-size chunks: it grows
// without copying, where a slice would leave each outgrown copy behind as
// garbage (several times the table's own size over a large file).
type refTable struct {
	c [][]Value
	n int
}

const refChunk = 4096

func (t *refTable) add(v Value) {
	if t.n%refChunk == 0 {
		t.c = append(t.c, make([]Value, refChunk))
	}
	t.c[t.n/refChunk][t.n%refChunk] = v
	t.n++
}

func (t *refTable) at(i int) *Value { return &t.c[i/refChunk][i%refChunk] }

// CheckEnd verifies that the stream ends here. marshal.load would ignore
// what follows its object; a decoder of evidence does not, because bytes
// after the object mean a concatenated or corrupt file.
func (d *Decoder) CheckEnd() error {
	_, err := d.br.ReadByte()
	switch {
	case err == nil && d.off >= d.lim.MaxBytes:
		return d.limit(d.off, BoundBytes, 0, "input is larger than max_bytes %d", d.lim.MaxBytes)
	case err == nil:
		return d.fail(d.off, nil, "unexpected data after the object")
	case errors.Is(err, io.EOF):
		return nil
	}
	return d.readErr(d.off, err, "end of input")
}

func (d *Decoder) fail(off int64, err error, format string, args ...any) error {
	return &Error{Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

// limit is an ErrLimit failure that names the bound crossed and, when
// known, the amount it would take (0 when only "more" is known).
func (d *Decoder) limit(off int64, b Bound, observed int64, format string, args ...any) error {
	return &Error{Offset: off, Msg: fmt.Sprintf(format, args...), Err: ErrLimit, Bound: b, Observed: observed}
}

// beyond reports a read of n bytes that would cross MaxBytes: a limit when
// the input goes on past the bound, truncation when it ends before.
func (d *Decoder) beyond(n int, what string) error {
	if _, err := d.br.Peek(int(d.lim.MaxBytes-d.off) + 1); err != nil {
		return d.readErr(d.off, err, what)
	}
	return d.limit(d.off, BoundBytes, d.off+int64(n), "reading %s: input is larger than max_bytes %d", what, d.lim.MaxBytes)
}

// readErr classifies a failed read at offset off.
func (d *Decoder) readErr(off int64, err error, what string) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return d.fail(off, ErrTruncated, "input ends inside %s", what)
	}
	return d.fail(off, err, "reading %s", what)
}

func (d *Decoder) byte1(what string) (byte, error) {
	if d.off >= d.lim.MaxBytes {
		return 0, d.beyond(1, what)
	}
	b, err := d.br.ReadByte()
	if err != nil {
		return 0, d.readErr(d.off, err, what)
	}
	d.off++
	return b, nil
}

// le reads a little-endian field of n bytes (2, 4 or 8) straight from
// the buffer.
func (d *Decoder) le(n int, what string) (uint64, error) {
	b, err := d.peek(n, what)
	if err != nil {
		return 0, err
	}
	var v uint64
	switch n {
	case 2:
		v = uint64(binary.LittleEndian.Uint16(b))
	case 4:
		v = uint64(binary.LittleEndian.Uint32(b))
	default:
		v = binary.LittleEndian.Uint64(b)
	}
	d.consume(n)
	return v, nil
}

// peek returns the next n bytes (n <= bufSize) without consuming them;
// they stay valid until the next read.
func (d *Decoder) peek(n int, what string) ([]byte, error) {
	if int64(n) > d.lim.MaxBytes-d.off {
		return nil, d.beyond(n, what)
	}
	b, err := d.br.Peek(n)
	if err != nil {
		return nil, d.readErr(d.off, err, what)
	}
	return b, nil
}

func (d *Decoder) consume(n int) {
	_, _ = d.br.Discard(n) // peeked bytes: cannot fail
	d.off += int64(n)
}

func (d *Decoder) int32(what string) (int32, error) {
	v, err := d.le(4, what)
	return int32(uint32(v)), err
}

// size reads a non-negative 32-bit length.
func (d *Decoder) size(what string) (int, error) {
	off := d.off
	n, err := d.int32(what)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, d.fail(off, nil, "%s size %d out of range", what, n)
	}
	return int(n), nil
}

// bytesN reads n bytes, growing the buffer only as data arrives, so that a
// huge declared length costs nothing until its bytes exist.
func (d *Decoder) bytesN(n int, what string) ([]byte, error) {
	if err := d.declared(n, what); err != nil {
		return nil, err
	}
	const chunk = 64 << 10
	buf := make([]byte, 0, min(n, chunk))
	for len(buf) < n {
		k := min(n-len(buf), chunk)
		buf = append(buf, make([]byte, k)...)
		if _, err := io.ReadFull(d.br, buf[len(buf)-k:]); err != nil {
			return nil, d.readErr(d.off, err, what)
		}
		d.off += int64(k)
	}
	return buf, nil
}

// declared checks a declared byte length against what MaxBytes leaves.
func (d *Decoder) declared(n int, what string) error {
	if int64(n) > d.lim.MaxBytes-d.off {
		return d.limit(d.off, BoundBytes, d.off+int64(n), "%s declares %d bytes, more than max_bytes %d allows", what, n, d.lim.MaxBytes)
	}
	return nil
}

// count admits n more objects against MaxObjects.
func (d *Decoder) count(off int64, n int64) error {
	if n > d.lim.MaxObjects-d.objects {
		return d.limit(off, BoundObjects, 0, "more than max_objects %d objects", d.lim.MaxObjects)
	}
	d.objects += n
	return nil
}

// reserve assigns the next ref slot to a container still being read.
func (d *Decoder) reserve(flag bool) int {
	if !flag {
		return -1
	}
	d.refs.add(building{})
	return d.refs.n - 1
}

func (d *Decoder) fill(idx int, v Value) Value {
	if idx >= 0 {
		*d.refs.at(idx) = v
	}
	return v
}

func (d *Decoder) enter(off int64) error {
	if d.depth >= d.lim.MaxDepth {
		return d.limit(off, BoundDepth, int64(d.depth)+1, "nesting deeper than max_depth %d", d.lim.MaxDepth)
	}
	d.depth++
	return nil
}

func (d *Decoder) leave() { d.depth-- }

// Value reads one complete object. Between the tokens of a container
// opened by Next or BeginDict, read with Next.
func (d *Decoder) Value() (Value, error) {
	if len(d.stack) > 0 {
		return nil, d.fail(d.off, nil, "Value called inside a container opened as tokens")
	}
	return d.value()
}

// value reads one complete object.
func (d *Decoder) value() (Value, error) {
	off := d.off
	code, err := d.byte1("type code")
	if err != nil {
		return nil, err
	}
	if code == typeNull {
		return nil, d.fail(off, nil, "NULL object outside a dict terminator")
	}
	if err := d.count(off, 1); err != nil {
		return nil, err
	}
	return d.object(off, code)
}

// object reads the rest of the object whose type code, at off, has been
// read and counted.
func (d *Decoder) object(off int64, code byte) (Value, error) {
	flag := code&flagRef != 0
	switch t := code &^ flagRef; t {
	case typeNone:
		return nil, nil
	case typeTrue:
		return true, nil
	case typeFalse:
		return false, nil
	case typeEllipsis:
		return Ellipsis{}, nil
	case typeStopIter:
		return StopIteration{}, nil
	case typeRef:
		v, _, err := d.ref(off)
		return v, err
	case typeInt:
		n, err := d.int32("int")
		if err != nil {
			return nil, err
		}
		return d.scalar(flag, int64(n)), nil
	case typeLong:
		v, err := d.long()
		if err != nil {
			return nil, err
		}
		return d.scalar(flag, v), nil
	case typeBinaryFloat, typeFloat:
		f, err := d.float(t, "float")
		if err != nil {
			return nil, err
		}
		return d.scalar(flag, f), nil
	case typeBinaryComplex, typeComplex:
		re, err := d.float(t, "complex")
		if err != nil {
			return nil, err
		}
		im, err := d.float(t, "complex")
		if err != nil {
			return nil, err
		}
		return d.scalar(flag, complex(re, im)), nil
	case typeString:
		n, err := d.size("bytes")
		if err != nil {
			return nil, err
		}
		b, err := d.bytesN(n, "bytes")
		if err != nil {
			return nil, err
		}
		return d.scalar(flag, Bytes(b)), nil
	case typeUnicode, typeInterned, typeASCII, typeASCIIInterned, typeShortASCII, typeShortASCIIInterned:
		s, err := d.text(off, t)
		if err != nil {
			return nil, err
		}
		return d.scalar(flag, s), nil
	case typeSmallTuple:
		n, err := d.byte1("tuple size")
		if err != nil {
			return nil, err
		}
		return d.container(off, flag, int(n), typeTuple)
	case typeTuple, typeList, typeSet, typeFrozenSet:
		n, err := d.size(kindName(t))
		if err != nil {
			return nil, err
		}
		return d.container(off, flag, n, t)
	case typeDict:
		return d.dict(off, flag)
	case typeSlice:
		return d.container(off, flag, 3, typeSlice)
	case typeCode:
		return d.code(off, flag)
	default:
		return nil, d.fail(off, nil, "unknown type code %s", codeName(code))
	}
}

// ref reads the slot number of a TYPE_REF at off and returns the object
// in that slot.
func (d *Decoder) ref(off int64) (Value, int, error) {
	n, err := d.int32("reference")
	if err != nil {
		return nil, 0, err
	}
	if n < 0 || int(n) >= d.refs.n {
		return nil, 0, d.fail(off, nil, "reference %d to an unknown object (%d assigned)", n, d.refs.n)
	}
	switch v := (*d.refs.at(int(n))).(type) {
	case building:
		return nil, 0, d.fail(off, nil, "reference %d to a container that is still being read (a cycle)", n)
	case unbound:
		return nil, 0, d.fail(off, nil, "reference %d to a container read as tokens and not kept", n)
	default:
		return v, int(n), nil
	}
}

// float reads a binary (8-byte) or text float; t is the type code's kind.
func (d *Decoder) float(t byte, what string) (float64, error) {
	if t == typeFloat || t == typeComplex {
		return d.textFloat()
	}
	b, err := d.le(8, what)
	return math.Float64frombits(b), err
}

// text reads a str of kind t (type code at off): u and t hold UTF-8, the
// ASCII kinds decode as Latin-1 as in CPython. A string that fits the read
// buffer is decoded from it, without an intermediate copy.
func (d *Decoder) text(off int64, t byte) (string, error) {
	var n int
	var err error
	if t == typeShortASCII || t == typeShortASCIIInterned {
		var b byte
		b, err = d.byte1("str size")
		n = int(b)
	} else {
		n, err = d.size("str")
	}
	if err != nil {
		return "", err
	}
	var b []byte
	if n <= bufSize {
		if err := d.declared(n, "str"); err != nil {
			return "", err
		}
		if b, err = d.br.Peek(n); err != nil {
			return "", d.readErr(d.off, err, "str")
		}
	} else if b, err = d.bytesN(n, "str"); err != nil {
		return "", err
	}
	var s string
	if t == typeUnicode || t == typeInterned {
		if !utf8.Valid(b) {
			// CPython writes str with surrogatepass, so a lone surrogate
			// (an undecodable file name, say) lands here: it has no UTF-8
			// form and cannot become evidence text.
			return "", d.fail(off, nil, "str is not valid UTF-8 (it may hold a lone surrogate)")
		}
		s = string(b)
	} else {
		s = latin1(b)
	}
	if n <= bufSize {
		d.consume(n)
	}
	return s, nil
}

// scalar records a flagged scalar in the next ref slot.
func (d *Decoder) scalar(flag bool, v Value) Value {
	if flag {
		d.refs.add(v)
	}
	return v
}

// container reads the n items of a tuple, list, set, frozenset or slice
// whose type code is at off. The declared n is checked against the object
// budget before anything is allocated, and storage grows only as items
// arrive. A flagged container takes its ref slot before its items.
func (d *Decoder) container(off int64, flag bool, n int, kind byte) (Value, error) {
	if int64(n) > d.lim.MaxObjects-d.objects {
		return nil, d.limit(off, BoundObjects, d.objects+int64(n), "%s declares %d items, more than max_objects %d allows", kindName(kind), n, d.lim.MaxObjects)
	}
	if err := d.enter(off); err != nil {
		return nil, err
	}
	idx := d.reserve(flag)
	items := make([]Value, 0, min(n, 1024))
	for i := range n {
		v, err := d.value()
		if err != nil {
			return nil, inItem(err, kindName(kind), i)
		}
		items = append(items, v)
	}
	d.leave()
	var v Value
	switch kind {
	case typeTuple:
		v = Tuple(items)
	case typeList:
		v = List(items)
	case typeSet:
		v = Set(items)
	case typeFrozenSet:
		v = FrozenSet(items)
	case typeSlice:
		v = Slice{items[0], items[1], items[2]}
	}
	return d.fill(idx, v), nil
}

// itemError locates a failure at the innermost container item it
// happened in, with the number of containers around that one: a failure
// 100 levels down reads "tuple item 0 (inside 99 containers)", not the
// path spelled out 100 times.
type itemError struct {
	kind  string
	index int
	outer int
	err   error
}

func (e *itemError) Error() string {
	if e.outer == 0 {
		return fmt.Sprintf("%s item %d: %v", e.kind, e.index, e.err)
	}
	return fmt.Sprintf("%s item %d (inside %d containers): %v", e.kind, e.index, e.outer, e.err)
}

func (e *itemError) Unwrap() error { return e.err }

// inItem locates err at item i of a container, or counts one more
// container around the item it is already located at.
func inItem(err error, kind string, i int) error {
	if ie, ok := err.(*itemError); ok {
		ie.outer++
		return ie
	}
	return &itemError{kind: kind, index: i, err: err}
}

func kindName(kind byte) string {
	switch kind {
	case typeTuple:
		return "tuple"
	case typeList:
		return "list"
	case typeSet:
		return "set"
	case typeFrozenSet:
		return "frozenset"
	case typeSlice:
		return "slice"
	}
	return "container"
}

// code reads a code object in the CPython 3.11+ layout: five 32-bit
// fields, then bytecode, constants, names, local names and kinds, file
// name, name, qualified name, first line, line table and exception table.
// Each field must have its expected type, so an older layout is rejected
// rather than misread.
func (d *Decoder) code(off int64, flag bool) (Value, error) {
	if err := d.enter(off); err != nil {
		return nil, err
	}
	idx := d.reserve(flag)
	for range 5 {
		if _, err := d.int32("code object header"); err != nil {
			return nil, err
		}
	}
	var c Code
	fields := []struct {
		name string
		want string
		set  func(Value) bool
	}{
		{"co_code", "bytes", isBytes},
		{"co_consts", "tuple", isTuple},
		{"co_names", "tuple", isTuple},
		{"co_localsplusnames", "tuple", isTuple},
		{"co_localspluskinds", "bytes", isBytes},
		{"co_filename", "str", func(v Value) bool { s, ok := v.(string); c.Filename = s; return ok }},
		{"co_name", "str", func(v Value) bool { s, ok := v.(string); c.Name = s; return ok }},
		{"co_qualname", "str", func(v Value) bool { s, ok := v.(string); c.QualName = s; return ok }},
		{"co_firstlineno", "", nil},
		{"co_linetable", "bytes", isBytes},
		{"co_exceptiontable", "bytes", isBytes},
	}
	for _, f := range fields {
		foff := d.off
		if f.set == nil {
			n, err := d.int32(f.name)
			if err != nil {
				return nil, err
			}
			c.FirstLineNo = int64(n)
			continue
		}
		v, err := d.value()
		if err != nil {
			return nil, fmt.Errorf("code object %s: %w", f.name, err)
		}
		if !f.set(v) {
			return nil, d.fail(foff, nil, "code object %s is %s, not %s (only the CPython 3.11+ code layout is read)", f.name, TypeName(v), f.want)
		}
	}
	d.leave()
	return d.fill(idx, &c), nil
}

func isBytes(v Value) bool { _, ok := v.(Bytes); return ok }
func isTuple(v Value) bool { _, ok := v.(Tuple); return ok }

// TypeName names a decoded value's Python type, for error messages.
func TypeName(v Value) string {
	if k := kindOf(v); k != 0 {
		return k.String()
	}
	return fmt.Sprintf("%T", v)
}

func (d *Decoder) dict(off int64, flag bool) (Value, error) {
	if err := d.enter(off); err != nil {
		return nil, err
	}
	idx := d.reserve(flag)
	var out Dict
	for {
		koff := d.off
		code, err := d.byte1("dict")
		if err != nil {
			return nil, err
		}
		if code == typeNull {
			break
		}
		if err := d.count(koff, 1); err != nil {
			return nil, err
		}
		k, err := d.object(koff, code)
		if err != nil {
			return nil, fmt.Errorf("dict key %d: %w", len(out), err)
		}
		v, err := d.value()
		if err != nil {
			return nil, fmt.Errorf("dict value %d: %w", len(out), err)
		}
		out = append(out, Item{k, v})
	}
	d.leave()
	return d.fill(idx, out), nil
}

// long reads a TYPE_LONG: a signed digit count, then 15-bit digits, least
// significant first. Unnormalized or out-of-range digits are bad data, as
// in CPython.
func (d *Decoder) long() (Value, error) {
	off := d.off
	n, err := d.int32("long size")
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return int64(0), nil
	}
	neg := n < 0
	cnt := int64(n)
	if neg {
		cnt = -cnt
	}
	if cnt*2 > d.lim.MaxBytes-d.off {
		return nil, d.limit(off, BoundBytes, d.off+cnt*2, "long declares %d digits, more than max_bytes %d allows", cnt, d.lim.MaxBytes)
	}
	// Pack the 15-bit digits into a little-endian bit string as they come:
	// linear in the digit count, however long the number.
	le := make([]byte, 0, min((cnt*15+7)/8, 4096))
	var acc uint32
	var bits uint
	var last uint16
	for i := int64(0); i < cnt; i++ {
		v, err := d.le(2, "long digits")
		if err != nil {
			return nil, err
		}
		digit := uint16(v)
		if digit >= 1<<15 {
			return nil, d.fail(d.off-2, nil, "long digit %d out of range", digit)
		}
		last = digit
		acc |= uint32(digit) << bits
		bits += 15
		for bits >= 8 {
			le = append(le, byte(acc))
			acc >>= 8
			bits -= 8
		}
	}
	if bits > 0 {
		le = append(le, byte(acc))
	}
	if last == 0 {
		return nil, d.fail(off, nil, "unnormalized long data")
	}
	slices.Reverse(le)
	mag := new(big.Int).SetBytes(le)
	if neg {
		mag.Neg(mag)
	}
	if mag.IsInt64() {
		return mag.Int64(), nil
	}
	return mag, nil
}

// textFloat reads a TYPE_FLOAT repr (marshal versions 0 and 1): a length
// byte, then the decimal text. Overflow gives ±Inf, as in CPython.
func (d *Decoder) textFloat() (float64, error) {
	off := d.off
	n, err := d.byte1("float size")
	if err != nil {
		return 0, err
	}
	b, err := d.bytesN(int(n), "float")
	if err != nil {
		return 0, err
	}
	if !decimalText(b) {
		return 0, d.fail(off, nil, "bad float text %q", b)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, d.fail(off, nil, "bad float text %q", b)
	}
	return f, nil
}

// decimalText rejects what Go's ParseFloat accepts beyond CPython's float
// text: hexadecimal mantissas and digit separators.
func decimalText(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		switch c {
		case 'x', 'X', 'p', 'P', '_':
			return false
		}
	}
	return true
}

func latin1(b []byte) string {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

func codeName(code byte) string {
	t := code &^ flagRef
	if t >= 0x20 && t < 0x7f {
		return strconv.QuoteRune(rune(t)) + fmt.Sprintf(" (0x%02x)", code)
	}
	return fmt.Sprintf("0x%02x", code)
}
