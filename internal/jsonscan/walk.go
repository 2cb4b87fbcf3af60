package jsonscan

import (
	"strconv"
)

// Walker reads typed values from a Scanner for decoders that walk a
// document by field name. Keys are literal and duplicates are rejected by
// the scanner, so a dotted or repeated key can never stand in for a native
// field.
type Walker struct {
	S *Scanner
}

// Members calls fn for each member of the object that starts with tok. fn
// must consume the member's value (with Value, Str, Integer or SkipValue).
// key is valid only until fn reads further.
func (w *Walker) Members(tok Token, what string, fn func(key []byte) error) error {
	if tok.Kind != ObjectStart {
		return w.S.Errorf(tok, "%s must be an object, found %s", what, tok.Kind)
	}
	for {
		k, err := w.S.Next()
		if err != nil {
			return err
		}
		if k.Kind == ObjectEnd {
			return nil
		}
		if !k.IsKey {
			return w.S.Errorf(k, "%s: expected a key, found %s", what, k.Kind)
		}
		if err := fn(k.Bytes); err != nil {
			return err
		}
	}
}

// Elements calls fn with each element's first token of the array that
// starts with tok; fn must consume the element.
func (w *Walker) Elements(tok Token, what string, fn func(i int, el Token) error) error {
	if tok.Kind != ArrayStart {
		return w.S.Errorf(tok, "%s must be an array, found %s", what, tok.Kind)
	}
	for i := 0; ; i++ {
		el, err := w.S.Next()
		if err != nil {
			return err
		}
		if el.Kind == ArrayEnd {
			return nil
		}
		if !isValueStart(el.Kind) {
			return w.S.Errorf(el, "%s: expected a value, found %s", what, el.Kind)
		}
		if err := fn(i, el); err != nil {
			return err
		}
	}
}

// Value reads the next value's first token. A close or the end of input
// where a value belongs is an error, so a walker can never lose its place.
func (w *Walker) Value() (Token, error) {
	tok, err := w.S.Next()
	if err != nil {
		return tok, err
	}
	if !isValueStart(tok.Kind) {
		return tok, w.S.Errorf(tok, "expected a value, found %s", tok.Kind)
	}
	return tok, nil
}

func isValueStart(k Kind) bool {
	switch k {
	case ObjectStart, ArrayStart, String, Number,
		True, False, Null:
		return true
	}
	return false
}

// SkipValue consumes the next value.
func (w *Walker) SkipValue() error {
	tok, err := w.Value()
	if err != nil {
		return err
	}
	return w.S.Skip(tok)
}

// Str reads a string value, bounded to max bytes (0: unbounded) cut on a
// rune boundary; it reports whether the text was cut and whether the value
// was null.
func (w *Walker) Str(what string, max int) (s string, cut, null bool, err error) {
	tok, err := w.Value()
	if err != nil {
		return "", false, false, err
	}
	switch tok.Kind {
	case Null:
		return "", false, true, nil
	case String:
		b := tok.Bytes
		if max > 0 && len(b) > max {
			return string(b[:RuneCut(b, max)]), true, false, nil
		}
		return string(b), false, false, nil
	}
	return "", false, false, w.S.Errorf(tok, "%s must be a string, found %s", what, tok.Kind)
}

// Integer reads an integer value that fits in int64.
func (w *Walker) Integer(what string) (int64, error) {
	tok, err := w.Value()
	if err != nil {
		return 0, err
	}
	if tok.Kind != Number {
		return 0, w.S.Errorf(tok, "%s must be an integer, found %s", what, tok.Kind)
	}
	n, err := strconv.ParseInt(string(tok.Bytes), 10, 64)
	if err != nil {
		return 0, w.S.Errorf(tok, "%s must be an integer, found %s", what, tok.Bytes)
	}
	return n, nil
}

// RuneCut returns the largest n <= max such that b[:n] ends on a rune
// boundary.
func RuneCut(b []byte, max int) int {
	n := max
	for n > 0 && n < len(b) && b[n]&0xC0 == 0x80 {
		n--
	}
	return n
}
