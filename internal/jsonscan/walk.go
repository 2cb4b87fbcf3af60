package jsonscan

import (
	"math"
	"strconv"
)

// Walker reads a document by field name: typed reads of the next value,
// and iteration over the members of an object and the elements of an
// array. It is the one way decoders walk JSON. Keys are literal and
// duplicates are rejected by the scanner, so a dotted or repeated key can
// never stand in for a native field; every error names what was read
// (the what argument) and carries the scanner's offset and line.
//
// Reads that take no token consume the next value; the ...Of forms
// convert a token the caller already holds (an array element, say).
type Walker struct {
	S *Scanner
}

// kindWords names a kind as an error message expects it: "an object".
var kindWords = [...]string{ObjectStart: "an object", ArrayStart: "an array", String: "a string",
	Number: "a number", True: "true", False: "false", Null: "null"}

func kindWord(k Kind) string {
	if int(k) < len(kindWords) && kindWords[k] != "" {
		return kindWords[k]
	}
	return k.String()
}

// Value reads the next value's first token. A close or the end of input
// where a value belongs is an error, so a walker can never lose its place.
func (w *Walker) Value() (Token, error) {
	if tok, ok := w.S.scalar(); ok {
		return tok, nil
	}
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

// Expect reads the next value's first token, which must be of kind k.
func (w *Walker) Expect(k Kind, what string) (Token, error) {
	tok, err := w.Value()
	if err != nil {
		return tok, err
	}
	if tok.Kind != k {
		return tok, w.S.Errorf(tok, "%s must be %s, found %s", what, kindWord(k), tok.Kind)
	}
	return tok, nil
}

// SkipValue consumes the next value.
func (w *Walker) SkipValue() error {
	tok, err := w.Value()
	if err != nil {
		return err
	}
	return w.S.Skip(tok)
}

// Skip consumes the rest of the value whose first token is tok.
func (w *Walker) Skip(tok Token) error { return w.S.Skip(tok) }

// Members calls fn for each member of the object that starts with tok. fn
// must consume the member's value (with a typed read or SkipValue). key is
// valid only until fn reads further.
func (w *Walker) Members(tok Token, what string, fn func(key []byte) error) error {
	if tok.Kind != ObjectStart {
		return w.S.Errorf(tok, "%s must be an object, found %s", what, tok.Kind)
	}
	for {
		if key, end, ok := w.S.member(); ok {
			if end {
				return nil
			}
			if err := fn(key); err != nil {
				return err
			}
			continue
		}
		k, end, err := w.nextKey(what)
		if err != nil || end {
			return err
		}
		if err := fn(k.Bytes); err != nil {
			return err
		}
	}
}

// nextKey reads the next member's key token of an object being walked
// token by token; end reports the object's close instead.
func (w *Walker) nextKey(what string) (k Token, end bool, err error) {
	if k, err = w.S.Next(); err != nil {
		return k, false, err
	}
	if k.Kind == ObjectEnd {
		return k, true, nil
	}
	if !k.IsKey {
		return k, false, w.S.Errorf(k, "%s: expected a key, found %s", what, k.Kind)
	}
	return k, false, nil
}

// Pick is Members for the members whose key want accepts: fn is called
// for those and must consume the value; the others are skipped. The
// skipped members are checked as SkipValue checks them (grammar,
// duplicate keys, depth, token size) but, where they are plain and in
// the buffer, without making their tokens: for records of which a
// decoder reads a few fields of many. want must not read the scanner;
// its key is valid only during the call.
func (w *Walker) Pick(tok Token, what string, want func(key []byte) bool, fn func(key []byte) error) error {
	if tok.Kind != ObjectStart {
		return w.S.Errorf(tok, "%s must be an object, found %s", what, tok.Kind)
	}
	depth := len(w.S.stack) - 1
	fast := true
	for {
		if fast {
			key, r := w.S.skipFast(depth, want)
			switch r {
			case skipClosed:
				return nil
			case skipStopped:
				if err := fn(key); err != nil {
					return err
				}
				continue
			}
			// Not plain or not all in the buffer: the rest of this
			// object goes member by member (retrying would rescan it).
			fast = false
		}
		k, end, err := w.nextKey(what)
		if err != nil || end {
			return err
		}
		if !want(k.Bytes) {
			err = w.SkipValue()
		} else {
			err = fn(k.Bytes)
		}
		if err != nil {
			return err
		}
	}
}

// PickObject reads the next value, which must be an object, as Pick does.
func (w *Walker) PickObject(what string, want func(key []byte) bool, fn func(key []byte) error) error {
	tok, err := w.Value()
	if err != nil {
		return err
	}
	return w.Pick(tok, what, want, fn)
}

// Elements calls fn with each element's first token of the array that
// starts with tok; fn must consume the element (Skip, a ...Of read or
// Members for a container).
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

// Object reads the next value, which must be an object, calling fn for
// each member as Members does.
func (w *Walker) Object(what string, fn func(key []byte) error) error {
	tok, err := w.Value()
	if err != nil {
		return err
	}
	return w.Members(tok, what, fn)
}

// Document reads a whole document whose top level is an object, calling
// fn for each member as Members does, and checks that nothing follows it.
// what names the document in the error when it is not an object.
func (w *Walker) Document(what string, fn func(key []byte) error) error {
	tok, err := w.Value()
	if err != nil {
		return err
	}
	if tok.Kind != ObjectStart {
		return w.S.Errorf(tok, "%s must be a JSON object, found %s", what, tok.Kind)
	}
	if err := w.Members(tok, what, fn); err != nil {
		return err
	}
	return w.S.CheckEnd()
}

// Array reads the next value, which must be an array, calling fn for each
// element as Elements does.
func (w *Walker) Array(what string, fn func(i int, el Token) error) error {
	tok, err := w.Value()
	if err != nil {
		return err
	}
	return w.Elements(tok, what, fn)
}

// ObjectOrNull is Object for a field that may be null; null reports
// true and calls nothing.
func (w *Walker) ObjectOrNull(what string, fn func(key []byte) error) (null bool, err error) {
	tok, err := w.Value()
	if err != nil || tok.Kind == Null {
		return err == nil, err
	}
	return false, w.Members(tok, what, fn)
}

// ArrayOrNull is Array for a field that may be null; null reports true
// and calls nothing.
func (w *Walker) ArrayOrNull(what string, fn func(i int, el Token) error) (null bool, err error) {
	tok, err := w.Value()
	if err != nil || tok.Kind == Null {
		return err == nil, err
	}
	return false, w.Elements(tok, what, fn)
}

// Str reads a string value, bounded to max bytes (0: unbounded) cut on a
// rune boundary; it reports whether the text was cut and whether the value
// was null.
func (w *Walker) Str(what string, max int) (s string, cut, null bool, err error) {
	b, cut, null, err := w.StrBytes(what, max)
	return string(b), cut, null, err
}

// StrBytes is Str without making a string: b is valid until the scanner
// reads on, for a caller that compares or copies the text itself.
func (w *Walker) StrBytes(what string, max int) (b []byte, cut, null bool, err error) {
	tok, err := w.Value()
	if err != nil {
		return nil, false, false, err
	}
	switch tok.Kind {
	case Null:
		return nil, false, true, nil
	case String:
		b := tok.Bytes
		if max > 0 && len(b) > max {
			return b[:RuneCut(b, max)], true, false, nil
		}
		return b, false, false, nil
	}
	return nil, false, false, w.S.Errorf(tok, "%s must be a string, found %s", what, tok.Kind)
}

// String reads a string value; null is an error. Its length is bounded
// by the scanner's MaxToken only.
func (w *Walker) String(what string) (string, error) {
	tok, err := w.Expect(String, what)
	if err != nil {
		return "", err
	}
	return string(tok.Bytes), nil
}

// Int reads an integer value that fits in int64.
func (w *Walker) Int(what string) (int64, error) {
	tok, err := w.Value()
	if err != nil {
		return 0, err
	}
	return w.IntOf(tok, what)
}

// OptionalInt reads an integer value or null; ok is false for null.
func (w *Walker) OptionalInt(what string) (n int64, ok bool, err error) {
	tok, err := w.Value()
	if err != nil || tok.Kind == Null {
		return 0, false, err
	}
	n, err = w.IntOf(tok, what)
	return n, err == nil, err
}

// IntOf converts a token to an integer: a number written without
// fraction or exponent that fits in int64.
func (w *Walker) IntOf(tok Token, what string) (int64, error) {
	if tok.Kind != Number {
		return 0, w.S.Errorf(tok, "%s must be an integer, found %s", what, tok.Kind)
	}
	n, err := Integer(tok.Bytes)
	if err != nil {
		return 0, w.S.Errorf(tok, "%s must be an integer, found %s", what, tok.Bytes)
	}
	return n, nil
}

// Float reads a number as a float64; a number beyond its range is an
// error, never an infinity.
func (w *Walker) Float(what string) (float64, error) {
	tok, err := w.Value()
	if err != nil {
		return 0, err
	}
	return w.FloatOf(tok, what)
}

// FloatOf converts a token to a finite float64.
func (w *Walker) FloatOf(tok Token, what string) (float64, error) {
	if tok.Kind != Number {
		return 0, w.S.Errorf(tok, "%s must be a number, found %s", what, tok.Kind)
	}
	f, err := strconv.ParseFloat(string(tok.Bytes), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, w.S.Errorf(tok, "%s %s is out of range", what, tok.Bytes)
	}
	return f, nil
}

// Bool reads true or false.
func (w *Walker) Bool(what string) (bool, error) {
	tok, err := w.Value()
	if err != nil {
		return false, err
	}
	switch tok.Kind {
	case True:
		return true, nil
	case False:
		return false, nil
	}
	return false, w.S.Errorf(tok, "%s must be a boolean, found %s", what, tok.Kind)
}

// Ints reads an array of integers, calling fn for each element: the fast
// path of Scanner.Ints for the long id and delta arrays of profiles.
func (w *Walker) Ints(what string, fn func(int64) error) error {
	if _, err := w.Expect(ArrayStart, what); err != nil {
		return err
	}
	return w.S.Ints(fn)
}

// Integer parses a JSON number literal that must be an integer within
// int64 (no fraction, no exponent), without allocating.
func Integer(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, ErrNotInteger
	}
	n, i, err := parseInt(b, 0)
	if err != nil {
		return 0, err
	}
	if i != len(b) {
		return 0, ErrNotInteger
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
