package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ValueLimits bound what Value builds. Zero fields are unbounded (depth is
// still bounded by the scanner's MaxDepth).
type ValueLimits struct {
	// End is a stream offset the value's text may not reach past (0: no
	// bound), so a value can share the byte budget of the record holding it.
	End        int64
	MaxDepth   int // containers nested inside the value, the value included
	MaxEntries int // members of one object or elements of one array
	// Number turns a number literal into its value; nil keeps the literal
	// exact as a json.Number. The bytes are only valid during the call.
	Number func(lit []byte) (any, error)
}

// BoundError reports that a value crossed one of its ValueLimits.
type BoundError struct {
	Bound  string // "bytes", "depth" or "entries"
	Limit  int64
	Offset int64 // where the value started
}

func (e *BoundError) Error() string {
	switch e.Bound {
	case "bytes":
		return fmt.Sprintf("value reaches past byte %d", e.Limit)
	case "depth":
		return fmt.Sprintf("value nests deeper than %d levels", e.Limit)
	}
	return fmt.Sprintf("a container has more than %d entries", e.Limit)
}

// ErrBound matches every *BoundError with errors.Is.
var ErrBound = errors.New("value bound crossed")

func (e *BoundError) Is(target error) bool { return target == ErrBound }

// Value reads the rest of the value whose first token is tok into the
// canonical domain: map[string]any (evidence.Object), []any, string,
// json.Number (or what lim.Number returns), bool and nil. This is the one
// place a token stream becomes values; decoders that walk a document by
// field use Walker and call Value for the parts they keep whole.
func (s *Scanner) Value(tok Token, lim ValueLimits) (any, error) {
	b := valueBuilder{s: s, lim: lim, start: tok.Offset}
	return b.build(tok, 0)
}

type valueBuilder struct {
	s     *Scanner
	lim   ValueLimits
	start int64
}

func (b *valueBuilder) next() (Token, error) {
	tok, err := b.s.Next()
	if err != nil {
		return tok, err
	}
	if b.lim.End > 0 && b.s.Offset() > b.lim.End {
		return tok, &BoundError{Bound: "bytes", Limit: b.lim.End, Offset: b.start}
	}
	return tok, nil
}

func (b *valueBuilder) build(tok Token, depth int) (any, error) {
	switch tok.Kind {
	case String:
		return string(tok.Bytes), nil
	case Number:
		if b.lim.Number != nil {
			return b.lim.Number(tok.Bytes)
		}
		return json.Number(tok.Bytes), nil
	case True:
		return true, nil
	case False:
		return false, nil
	case Null:
		return nil, nil
	case ArrayStart, ObjectStart:
		if b.lim.MaxDepth > 0 && depth >= b.lim.MaxDepth {
			return nil, &BoundError{Bound: "depth", Limit: int64(b.lim.MaxDepth), Offset: b.start}
		}
	default:
		return nil, b.s.Errorf(tok, "expected a value, found %s", tok.Kind)
	}
	if tok.Kind == ArrayStart {
		arr := []any{}
		for {
			t, err := b.next()
			if err != nil {
				return nil, err
			}
			if t.Kind == ArrayEnd {
				return arr, nil
			}
			if b.lim.MaxEntries > 0 && len(arr) == b.lim.MaxEntries {
				return nil, &BoundError{Bound: "entries", Limit: int64(b.lim.MaxEntries), Offset: b.start}
			}
			v, err := b.build(t, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
	}
	obj := map[string]any{}
	for {
		t, err := b.next()
		if err != nil {
			return nil, err
		}
		if t.Kind == ObjectEnd {
			return obj, nil
		}
		if b.lim.MaxEntries > 0 && len(obj) == b.lim.MaxEntries {
			return nil, &BoundError{Bound: "entries", Limit: int64(b.lim.MaxEntries), Offset: b.start}
		}
		key := string(t.Bytes)
		vt, err := b.next()
		if err != nil {
			return nil, err
		}
		v, err := b.build(vt, depth+1)
		if err != nil {
			return nil, err
		}
		obj[key] = v
	}
}
