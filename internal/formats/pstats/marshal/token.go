package marshal

import (
	"fmt"
	"math/big"
)

// Kind is the Python type of a token.
type Kind uint8

const (
	KindNone Kind = iota + 1
	KindBool
	KindInt
	KindFloat
	KindComplex
	KindStr
	KindBytes
	KindTuple
	KindList
	KindSet
	KindFrozenSet
	KindDict
	KindSlice
	KindEllipsis
	KindStopIteration
	KindCode
	// KindEnd closes a dict: it stands for the NULL after its last item.
	KindEnd
	// KindBound is a reference to a slot the reader bound (Bind); Int
	// holds the number it bound.
	KindBound
)

var kindNames = [...]string{
	KindNone: "None", KindBool: "bool", KindInt: "int", KindFloat: "float", KindComplex: "complex",
	KindStr: "str", KindBytes: "bytes", KindTuple: "tuple", KindList: "list", KindSet: "set",
	KindFrozenSet: "frozenset", KindDict: "dict", KindSlice: "slice", KindEllipsis: "ellipsis",
	KindStopIteration: "StopIteration", KindCode: "code", KindEnd: "end of dict", KindBound: "bound reference",
}

// String is the Python type name, as TypeName writes it.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Token is one object of the stream Next reads.
//
// Scalars arrive whole, in the field of their kind. A tuple, list, set,
// frozenset or dict arrives as its head: Len items (a dict: key and value
// tokens, then KindEnd) follow as tokens of their own. Such a container
// is built only when a back-reference may name it (it is flagged, or it is
// the target of a reference): it is then read whole, as Value reads it,
// and replayed item by item, so a reader sees the same tokens however the
// writer shared objects. Big ints, complex numbers, bytes, slices,
// Ellipsis, StopIteration and code objects arrive whole in Value.
//
// A container read whole carries its back-reference slot. A reader that
// has made something of it (a key it interned) can Bind the slot to a
// number of its own, so that each later reference arrives as one
// KindBound token rather than a replay, and the container is released.
// A reader that will bind a container anyway reads its head with Claim,
// and the container is never built.
type Token struct {
	Kind  Kind
	Off   int64 // offset of the type code (of the reference, for a replayed item)
	Bool  bool
	Int   int64 // KindInt, when Value is nil; KindBound: the bound number
	Float float64
	Str   string
	Len   int   // items of a KindTuple, KindList, KindSet or KindFrozenSet
	Value Value // *big.Int beyond int64, complex128, Bytes, Slice, Ellipsis, StopIteration, *Code
	Slot  int   // the slot a container read whole or claimed occupies, or a reference names; -1 for none
}

// bound is a slot's object after Bind; unbound marks a claimed container
// that closed without one.
type (
	bound   int64
	unbound struct{}
)

// Bind replaces the container in a back-reference slot (a Token's Slot)
// by the number n: later references to it read as KindBound tokens holding
// n, in Next and inside objects read whole alike. A slot that holds no
// container is left as it is.
func (d *Decoder) Bind(slot int, n int64) {
	if slot < 0 || slot >= d.refs.n {
		return
	}
	r := d.refs.at(slot)
	switch (*r).(type) {
	case Tuple, List, Set, FrozenSet, Dict, bound, unbound:
		*r = bound(n)
	}
}

// frame is a container open in the token stream: read from the stream
// (holding a nesting level) or replayed from a value read whole.
type frame struct {
	off    int64
	left   int  // sequence items still to come
	dict   bool // a dict: closes at its terminator
	key    bool // a dict: the next token is a key or the end
	stream bool
	slot   int     // a claimed container's slot, else -1
	seq    []Value // a replayed sequence
	items  []Item  // a replayed dict
	pos    int     // replay position: items of seq, keys and values of items
}

// Depth is the number of containers open in the token stream.
func (d *Decoder) Depth() int { return len(d.stack) }

// BeginDict opens a dict whose items the caller reads with Next, down to
// its KindEnd, even when the dict is flagged: the one object a stream
// holds can be larger than memory. A reference to it from inside is a
// cycle error, as in Value.
func (d *Decoder) BeginDict() error {
	off := d.off
	code, err := d.byte1("type code")
	if err != nil {
		return err
	}
	if code&^flagRef != typeDict {
		return d.fail(off, nil, "expected a dict, found type code %s", codeName(code))
	}
	if err := d.count(off, 1); err != nil {
		return err
	}
	if err := d.enter(off); err != nil {
		return err
	}
	d.reserve(code&flagRef != 0)
	d.stack = append(d.stack, frame{off: off, dict: true, key: true, stream: true, slot: -1})
	return nil
}

// Next reads the next token. Objects are checked, counted and numbered for
// back-references exactly as Value does, in the same order.
func (d *Decoder) Next() (Token, error) { return d.next(false) }

// Claim reads the next token as Next does, except that a flagged
// container is not built: its items follow as tokens, and the caller
// binds its Slot (Bind) once it has read them. A later reference to a
// claimed container left unbound is an error, so a reader claims only
// what it always binds.
func (d *Decoder) Claim() (Token, error) { return d.next(true) }

func (d *Decoder) next(claim bool) (Token, error) {
	n := len(d.stack)
	if n > 0 && !d.stack[n-1].stream {
		return d.replay()
	}
	atKey := n > 0 && d.stack[n-1].dict && d.stack[n-1].key
	what := "type code"
	if atKey {
		what = "dict"
	}
	off := d.off
	code, err := d.byte1(what)
	if err != nil {
		return Token{}, err
	}
	if code == typeNull {
		if !atKey {
			return Token{}, d.fail(off, nil, "NULL object outside a dict terminator")
		}
		d.pop()
		d.done()
		return Token{Kind: KindEnd, Off: off, Slot: -1}, nil
	}
	if err := d.count(off, 1); err != nil {
		return Token{}, err
	}
	t := Token{Off: off, Slot: -1}
	flag := code&flagRef != 0
	switch c := code &^ flagRef; {
	case c == typeNone:
		t.Kind = KindNone
	case c == typeTrue, c == typeFalse:
		t.Kind, t.Bool = KindBool, c == typeTrue
	case c == typeInt:
		v, err := d.int32("int")
		if err != nil {
			return Token{}, err
		}
		t.Kind, t.Int = KindInt, int64(v)
		if flag {
			d.refs.add(t.Int)
		}
	case c == typeBinaryFloat:
		f, err := d.float(c, "float")
		if err != nil {
			return Token{}, err
		}
		t.Kind, t.Float = KindFloat, f
		if flag {
			d.refs.add(f)
		}
	case c == typeUnicode, c == typeInterned, c == typeASCII, c == typeASCIIInterned,
		c == typeShortASCII, c == typeShortASCIIInterned:
		s, err := d.text(off, c)
		if err != nil {
			return Token{}, err
		}
		t.Kind, t.Str = KindStr, s
		if flag {
			d.refs.add(s)
		}
	case c == typeRef:
		v, slot, err := d.ref(off)
		if err != nil {
			return Token{}, err
		}
		return d.token(v, off, slot), nil
	case flag && !(claim && (isSeq(c) || c == typeDict)):
		// A back-reference may name it: read it whole.
		slot := d.refs.n
		v, err := d.object(off, code)
		if err != nil {
			return Token{}, err
		}
		return d.token(v, off, slot), nil
	case isSeq(c):
		return d.open(off, c, flag)
	case c == typeDict:
		if err := d.enter(off); err != nil {
			return Token{}, err
		}
		slot := d.reserve(flag)
		d.stack = append(d.stack, frame{off: off, dict: true, key: true, stream: true, slot: slot})
		return Token{Kind: KindDict, Off: off, Slot: slot}, nil
	default:
		v, err := d.object(off, code)
		if err != nil {
			return Token{}, err
		}
		return d.token(v, off, -1), nil
	}
	d.done()
	return t, nil
}

func isSeq(c byte) bool {
	return c == typeSmallTuple || c == typeTuple || c == typeList || c == typeSet || c == typeFrozenSet
}

// open reads the head of a sequence of kind c at off, read as tokens: it
// is unflagged, or claimed.
func (d *Decoder) open(off int64, c byte, flag bool) (Token, error) {
	var n int
	var err error
	kind := c
	if c == typeSmallTuple {
		var b byte
		b, err = d.byte1("tuple size")
		n, kind = int(b), typeTuple
	} else {
		n, err = d.size(kindName(c))
	}
	if err != nil {
		return Token{}, err
	}
	if int64(n) > d.lim.MaxObjects-d.objects {
		return Token{}, d.limit(off, BoundObjects, d.objects+int64(n), "%s declares %d items, more than max_objects %d allows", kindName(kind), n, d.lim.MaxObjects)
	}
	if err := d.enter(off); err != nil {
		return Token{}, err
	}
	slot := d.reserve(flag)
	t := Token{Kind: seqKind(kind), Off: off, Len: n, Slot: slot}
	d.stack = append(d.stack, frame{off: off, left: n, stream: true, slot: slot})
	if n == 0 {
		d.pop()
		d.done()
	}
	return t, nil
}

func seqKind(c byte) Kind {
	switch c {
	case typeList:
		return KindList
	case typeSet:
		return KindSet
	case typeFrozenSet:
		return KindFrozenSet
	}
	return KindTuple
}

// token turns a value read whole into its token; a non-empty container
// (and every dict, which still owes its KindEnd) is opened for replay.
// slot is the value's back-reference slot, or -1.
func (d *Decoder) token(v Value, off int64, slot int) Token {
	t := Token{Off: off, Slot: -1}
	var seq []Value
	switch x := v.(type) {
	case bound:
		t.Kind, t.Int = KindBound, int64(x)
		d.done()
		return t
	case nil:
		t.Kind = KindNone
	case bool:
		t.Kind, t.Bool = KindBool, x
	case int64:
		t.Kind, t.Int = KindInt, x
	case *big.Int:
		t.Kind, t.Value = KindInt, x
	case float64:
		t.Kind, t.Float = KindFloat, x
	case string:
		t.Kind, t.Str = KindStr, x
	case Tuple:
		t.Kind, seq = KindTuple, x
	case List:
		t.Kind, seq = KindList, x
	case Set:
		t.Kind, seq = KindSet, x
	case FrozenSet:
		t.Kind, seq = KindFrozenSet, x
	case Dict:
		d.stack = append(d.stack, frame{off: off, dict: true, key: true, items: x, slot: -1})
		t.Kind, t.Slot = KindDict, slot
		return t
	default:
		t.Kind, t.Value = kindOf(v), v
	}
	t.Len = len(seq)
	if seq != nil {
		t.Slot = slot
	}
	if len(seq) > 0 {
		d.stack = append(d.stack, frame{off: off, left: len(seq), seq: seq, slot: -1})
		return t
	}
	d.done()
	return t
}

// replay yields the next token of a container read whole.
func (d *Decoder) replay() (Token, error) {
	f := &d.stack[len(d.stack)-1]
	if f.seq != nil {
		v := f.seq[f.pos]
		f.pos++
		return d.token(v, f.off, -1), nil
	}
	if f.pos == 2*len(f.items) {
		off := f.off
		d.pop()
		d.done()
		return Token{Kind: KindEnd, Off: off, Slot: -1}, nil
	}
	it := f.items[f.pos/2]
	v := it.Key
	if f.pos%2 == 1 {
		v = it.Value
	}
	f.pos++
	return d.token(v, f.off, -1), nil
}

// done records that the innermost open container received one complete
// item, closing every container that is thereby complete.
func (d *Decoder) done() {
	for n := len(d.stack); n > 0; n = len(d.stack) {
		f := &d.stack[n-1]
		if f.dict {
			f.key = !f.key
			return
		}
		if f.left--; f.left > 0 {
			return
		}
		d.pop()
	}
}

func (d *Decoder) pop() {
	f := &d.stack[len(d.stack)-1]
	if f.stream {
		d.leave()
	}
	if f.slot >= 0 {
		if r := d.refs.at(f.slot); *r == (building{}) {
			*r = unbound{}
		}
	}
	d.stack = d.stack[:len(d.stack)-1]
}

// kindOf is the Kind of a decoded value, 0 for a type Value never holds.
func kindOf(v Value) Kind {
	switch v.(type) {
	case nil:
		return KindNone
	case bool:
		return KindBool
	case int64, *big.Int:
		return KindInt
	case float64:
		return KindFloat
	case complex128:
		return KindComplex
	case string:
		return KindStr
	case Bytes:
		return KindBytes
	case Tuple:
		return KindTuple
	case List:
		return KindList
	case Dict:
		return KindDict
	case Set:
		return KindSet
	case FrozenSet:
		return KindFrozenSet
	case Slice:
		return KindSlice
	case Ellipsis:
		return KindEllipsis
	case StopIteration:
		return KindStopIteration
	case *Code:
		return KindCode
	case bound:
		return KindBound
	}
	return 0
}

// Close ends the containers open above depth n: what remains of them in
// the stream is read and checked as Next reads it, and replayed
// containers, read and checked already, are dropped without being walked
// (sharing can make a replay far larger than its bytes).
func (d *Decoder) Close(n int) error {
	for len(d.stack) > n {
		if !d.stack[len(d.stack)-1].stream {
			d.stack = d.stack[:len(d.stack)-1]
			d.done()
			continue
		}
		if _, err := d.Next(); err != nil {
			return err
		}
	}
	return nil
}
