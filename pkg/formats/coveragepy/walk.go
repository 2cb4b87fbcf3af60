package coveragepy

import (
	"strconv"

	"github.com/flameox/flameox/pkg/jsonscan"
)

// walker reads typed values from a jsonscan stream. Keys are literal and
// duplicates are rejected by the scanner, so a dotted or repeated key can
// never stand in for a native field.
type walker struct {
	s *jsonscan.Scanner
}

// members calls fn for each member of the object that starts with tok. fn
// must consume the member's value (with value, str, integer or skip).
// key is valid only until fn reads further.
func (w *walker) members(tok jsonscan.Token, what string, fn func(key []byte) error) error {
	if tok.Kind != jsonscan.ObjectStart {
		return w.s.Errorf(tok, "%s must be an object, found %s", what, tok.Kind)
	}
	for {
		k, err := w.s.Next()
		if err != nil {
			return err
		}
		if k.Kind == jsonscan.ObjectEnd {
			return nil
		}
		if !k.IsKey {
			return w.s.Errorf(k, "%s: expected a key, found %s", what, k.Kind)
		}
		if err := fn(k.Bytes); err != nil {
			return err
		}
	}
}

// elements calls fn with each element's first token of the array that
// starts with tok; fn must consume the element.
func (w *walker) elements(tok jsonscan.Token, what string, fn func(i int, el jsonscan.Token) error) error {
	if tok.Kind != jsonscan.ArrayStart {
		return w.s.Errorf(tok, "%s must be an array, found %s", what, tok.Kind)
	}
	for i := 0; ; i++ {
		el, err := w.s.Next()
		if err != nil {
			return err
		}
		if el.Kind == jsonscan.ArrayEnd {
			return nil
		}
		if !isValueStart(el.Kind) {
			return w.s.Errorf(el, "%s: expected a value, found %s", what, el.Kind)
		}
		if err := fn(i, el); err != nil {
			return err
		}
	}
}

// value reads the next value's first token. A close or the end of input
// where a value belongs is an error, so a walker can never lose its place.
func (w *walker) value() (jsonscan.Token, error) {
	tok, err := w.s.Next()
	if err != nil {
		return tok, err
	}
	if !isValueStart(tok.Kind) {
		return tok, w.s.Errorf(tok, "expected a value, found %s", tok.Kind)
	}
	return tok, nil
}

func isValueStart(k jsonscan.Kind) bool {
	switch k {
	case jsonscan.ObjectStart, jsonscan.ArrayStart, jsonscan.String, jsonscan.Number,
		jsonscan.True, jsonscan.False, jsonscan.Null:
		return true
	}
	return false
}

// skip consumes the next value.
func (w *walker) skip() error {
	tok, err := w.value()
	if err != nil {
		return err
	}
	return w.s.Skip(tok)
}

// str reads a string value, bounded to max bytes (0: unbounded) cut on a
// rune boundary; it reports whether the text was cut and whether the value
// was null.
func (w *walker) str(what string, max int) (s string, cut, null bool, err error) {
	tok, err := w.value()
	if err != nil {
		return "", false, false, err
	}
	switch tok.Kind {
	case jsonscan.Null:
		return "", false, true, nil
	case jsonscan.String:
		b := tok.Bytes
		if max > 0 && len(b) > max {
			return string(b[:runeCut(b, max)]), true, false, nil
		}
		return string(b), false, false, nil
	}
	return "", false, false, w.s.Errorf(tok, "%s must be a string, found %s", what, tok.Kind)
}

// integer reads an integer value that fits in int64.
func (w *walker) integer(what string) (int64, error) {
	tok, err := w.value()
	if err != nil {
		return 0, err
	}
	if tok.Kind != jsonscan.Number {
		return 0, w.s.Errorf(tok, "%s must be an integer, found %s", what, tok.Kind)
	}
	n, err := strconv.ParseInt(string(tok.Bytes), 10, 64)
	if err != nil {
		return 0, w.s.Errorf(tok, "%s must be an integer, found %s", what, tok.Bytes)
	}
	return n, nil
}

// runeCut returns the largest n <= max such that b[:n] ends on a rune
// boundary.
func runeCut(b []byte, max int) int {
	n := max
	for n > 0 && n < len(b) && b[n]&0xC0 == 0x80 {
		n--
	}
	return n
}
