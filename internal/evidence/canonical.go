package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxSafeInteger is the largest integer that every JSON reader holds exactly
// (2^53-1). Integers beyond ±MaxSafeInteger are written as decimal strings.
const MaxSafeInteger = 1<<53 - 1

// ErrInvalidUTF8 reports text that is not valid UTF-8. Canonical output never
// replaces bad bytes: a caller must fail instead.
var ErrInvalidUTF8 = errors.New("invalid UTF-8")

// Object is a JSON object in the canonical domain. Keys are sorted on output.
type Object = map[string]any

// Marshaler is implemented by values that project themselves into the
// canonical domain (an Object, a slice, or a scalar).
type Marshaler interface {
	CanonicalValue() any
}

// Canonical returns the RFC 8785 encoding of v.
func Canonical(v any) ([]byte, error) {
	return AppendCanonical(nil, v)
}

// AppendCanonical appends the RFC 8785 (JCS) encoding of v to dst.
//
// Accepted values: nil, bool, string, []byte (must be UTF-8 text), all Go
// integer types, float32/float64, json.Number, *big.Int, Object and
// map[string]string, []any and other slices of accepted values, and
// Marshaler. Integers outside ±MaxSafeInteger become exact decimal strings;
// non-finite doubles become {"type":"double","value":"NaN"} and friends.
func AppendCanonical(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return appendString(dst, x)
	case int:
		return appendInt(dst, int64(x)), nil
	case int64:
		return appendInt(dst, x), nil
	case uint64:
		return appendUint(dst, x), nil
	// The other integer types are rare in the canonical domain; reflect
	// widens them exactly.
	case int8, int16, int32:
		return appendInt(dst, reflect.ValueOf(x).Int()), nil
	case uint, uint8, uint16, uint32:
		return appendUint(dst, reflect.ValueOf(x).Uint()), nil
	case float32:
		return appendFloat(dst, float64(x)), nil
	case float64:
		return appendFloat(dst, x), nil
	case json.Number:
		return appendNumber(dst, string(x))
	case *big.Int:
		if x.IsInt64() {
			return appendInt(dst, x.Int64()), nil
		}
		dst = append(dst, '"')
		dst = x.Append(dst, 10)
		return append(dst, '"'), nil
	case Object:
		return appendObject(dst, x)
	case map[string]string:
		m := make(Object, len(x))
		for k, s := range x {
			m[k] = s
		}
		return appendObject(dst, m)
	case []any:
		return appendArray(dst, x)
	case []string:
		return appendArray(dst, x)
	case []int64:
		return appendArray(dst, x)
	case []float64:
		return appendArray(dst, x)
	case []Object:
		return appendArray(dst, x)
	case Marshaler:
		return AppendCanonical(dst, x.CanonicalValue())
	}
	return dst, fmt.Errorf("canonical: unsupported value of type %T", v)
}

func appendArray[E any](dst []byte, xs []E) ([]byte, error) {
	dst = append(dst, '[')
	var err error
	for i, x := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = AppendCanonical(dst, x); err != nil {
			return dst, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return append(dst, ']'), nil
}

// member is an object's key with its value, so a sorted object is
// written without a second lookup of each key.
type member struct {
	k   string
	v   any
	bmp bool // isBMP(k), found once rather than at every comparison
}

func appendObject(dst []byte, m Object) ([]byte, error) {
	// Rows' objects (args, dimensions) are small: their members stay on
	// the stack.
	var small [16]member
	ms := small[:0]
	if len(m) > len(small) {
		ms = make([]member, 0, len(m))
	}
	for k, v := range m {
		if !utf8.ValidString(k) {
			return dst, fmt.Errorf("object key %q: %w", k, ErrInvalidUTF8)
		}
		ms = append(ms, member{k, v, isBMP(k)})
	}
	sortMembers(ms)
	dst = append(dst, '{')
	var err error
	for i := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst, _ = appendString(dst, ms[i].k)
		dst = append(dst, ':')
		if dst, err = AppendCanonical(dst, ms[i].v); err != nil {
			return dst, fmt.Errorf("%s: %w", ms[i].k, err)
		}
	}
	return append(dst, '}'), nil
}

// sortMembers orders members by key as SortKeys does; an insertion sort
// for the few members of a typical object.
func sortMembers(ms []member) {
	if len(ms) > 12 {
		slices.SortFunc(ms, compareMembers)
		return
	}
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && compareMembers(ms[j], ms[j-1]) < 0; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// SortKeys orders object keys as RFC 8785 requires: by UTF-16 code units.
func SortKeys(keys []string) {
	slices.SortFunc(keys, compareUTF16)
}

func compareMembers(a, b member) int {
	if a.bmp && b.bmp {
		return strings.Compare(a.k, b.k) // see compareUTF16
	}
	return compareUTF16(a.k, b.k)
}

func compareUTF16(a, b string) int {
	// For text without supplementary-plane characters UTF-8 byte order and
	// UTF-16 order agree except for U+E000..U+FFFF against surrogate pairs,
	// which only exist above U+FFFF; so the fast path is exact for ASCII and
	// BMP-only keys.
	if isBMP(a) && isBMP(b) {
		return strings.Compare(a, b)
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(ua, ub)
}

func isBMP(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xF0 { // a 4-byte UTF-8 sequence encodes a rune above U+FFFF
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// shortEscape is the second byte of the two-byte escapes RFC 8785 writes;
// other control characters are written \u00XX.
var shortEscape = [256]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// SWAR masks: lo8 has 0x01 in every byte, hi8 0x80.
const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// plain8 reports whether the 8 bytes of w (one byte per lane) are all
// ASCII that the canonical form copies as they are: none below 0x20, none
// 0x80 or above, no '"' or '\\'. The lane tests are the classic "has a
// byte less than n / equal to n" tricks, exact for whether any lane
// matches, which is all a skip needs.
func plain8(w uint64) bool {
	ctl := (w - 0x20*lo8) &^ w // a lane below 0x20 sets its high bit
	q := w ^ '"'*lo8           // a lane equal to '"' is zero here,
	q = (q - lo8) &^ q         // and a zero lane sets its high bit
	b := w ^ '\\'*lo8
	b = (b - lo8) &^ b
	// Where w has a high bit set the lane tests may be wrong, but w's own
	// high bits (non-ASCII) fail the word anyway.
	return (w|ctl|q|b)&hi8 == 0
}

// load8 reads s[i:i+8] as a little-endian word; the compiler merges the
// byte loads into one.
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plainByte marks the ASCII bytes the canonical form copies as they are.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString validates and escapes in one pass: runs of plain ASCII are
// skipped 8 bytes at a time and copied in one append; only the bytes that
// need a look (escapes, multi-byte sequences) and the tail of a string
// whose last 8 bytes are not all plain are read one by one. On invalid
// UTF-8 dst comes back as it was given.
func appendString(dst []byte, s string) ([]byte, error) {
	n0 := len(dst)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			if plain8(load8(s, i)) {
				i += 8
				continue
			}
		} else if len(s) >= 8 && plain8(load8(s, len(s)-8)) {
			break // the tail lies in the last 8 bytes, all plain
		}
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return dst[:n0], ErrInvalidUTF8
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		if e := shortEscape[c]; e != 0 {
			dst = append(dst, '\\', e)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

func appendInt(dst []byte, n int64) []byte {
	if n > MaxSafeInteger || n < -MaxSafeInteger {
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, n, 10)
		return append(dst, '"')
	}
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	return appendSafe(dst, uint64(n))
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

// appendSafe writes u, at most MaxSafeInteger (16 digits), in decimal two
// digits a step: strconv's method without its general bases and widths,
// which row encoding pays for at every integer.
func appendSafe(dst []byte, u uint64) []byte {
	if u < 10 {
		return append(dst, byte('0'+u))
	}
	var buf [16]byte
	i := len(buf)
	for u >= 100 {
		r := u % 100
		u /= 100
		i -= 2
		buf[i], buf[i+1] = digitPairs[2*r], digitPairs[2*r+1]
	}
	if u >= 10 {
		i -= 2
		buf[i], buf[i+1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		i--
		buf[i] = byte('0' + u)
	}
	return append(dst, buf[i:]...)
}

func appendUint(dst []byte, n uint64) []byte {
	if n > MaxSafeInteger {
		dst = append(dst, '"')
		dst = strconv.AppendUint(dst, n, 10)
		return append(dst, '"')
	}
	return strconv.AppendUint(dst, n, 10)
}

// NonFinite returns the tagged form of a non-finite double.
func NonFinite(f float64) Object {
	v := "NaN"
	switch {
	case math.IsInf(f, 1):
		v = "Infinity"
	case math.IsInf(f, -1):
		v = "-Infinity"
	}
	return Object{"type": "double", "value": v}
}

// Double is a double as a value: the number itself when finite, else its
// tagged form (NonFinite), which every reader of the blocks understands.
func Double(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NonFinite(f)
	}
	return f
}

func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		b, _ := appendObject(dst, NonFinite(f))
		return b
	}
	// An integral double beyond the safe range prints like an integer
	// literal, which readers would take as an inexact integer; it travels
	// as a decimal string like every other integer beyond the safe range.
	if a := math.Abs(f); a > MaxSafeInteger && a < 1e21 && f == math.Trunc(f) {
		dst = append(dst, '"')
		dst = AppendES6Number(dst, f)
		return append(dst, '"')
	}
	return AppendES6Number(dst, f)
}

// AppendES6Number formats a finite double as ECMAScript's Number.prototype.
// toString does, which is the number form RFC 8785 prescribes.
func AppendES6Number(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // also -0
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// An integer below 2^53 is its own shortest digits, with at most 16
	// of them: ECMAScript writes it as the integer.
	if f < 1<<53 && f == float64(int64(f)) {
		return appendSafe(dst, uint64(f))
	}
	// From 1e-6 up to 1e21 ECMAScript writes the shortest digits in fixed
	// notation, which is what 'f' with precision -1 writes. The bounds are
	// exact as float comparisons: a double below the double nearest 1e-6
	// has shortest digits below 1e-6 (else they would read back as that
	// double), and 1e21 is a double.
	if f >= 1e-6 && f < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	// Shortest round-trip digits in scientific form: d.ddddde±x.
	var buf [32]byte
	sci := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	epos := slices.Index(sci, 'e')
	mant, exp := sci[:epos], sci[epos+1:]
	var dbuf [24]byte // at most 17 significant digits
	digits := dbuf[:0]
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	e, _ := strconv.Atoi(string(exp))
	k := len(digits)
	n := e + 1 // position of the decimal point relative to the digits
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// appendNumber canonicalizes a JSON number literal. Integers keep every digit
// (as a string beyond the safe range); other numbers go through float64,
// which is what RFC 8785 defines them to be.
func appendNumber(dst []byte, lit string) ([]byte, error) {
	if isIntegerLiteral(lit) {
		// Up to 15 digits without a leading zero, the literal is already
		// the canonical integer (2^53 has 16 digits).
		if d := strings.TrimPrefix(lit, "-"); len(d) <= 15 && (d[0] != '0' || lit == "0") {
			return append(dst, lit...), nil
		}
		if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return appendInt(dst, n), nil
		}
		var b big.Int
		if _, ok := b.SetString(lit, 10); !ok {
			return dst, fmt.Errorf("canonical: bad integer %q", lit)
		}
		dst = append(dst, '"')
		dst = b.Append(dst, 10)
		return append(dst, '"'), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return dst, fmt.Errorf("canonical: bad number %q: %w", lit, err)
	}
	return appendFloat(dst, f), nil
}

func isIntegerLiteral(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// AppendString appends the canonical form of a string; invalid UTF-8 is
// ErrInvalidUTF8. Typed encoders (package table) call these scalar forms
// directly rather than boxing each value.
func AppendString(dst []byte, s string) ([]byte, error) { return appendString(dst, s) }

// AppendInt appends the canonical form of an integer: a decimal string
// beyond ±MaxSafeInteger.
func AppendInt(dst []byte, n int64) []byte { return appendInt(dst, n) }

// AppendFloat appends the canonical form of a double, tagged when
// non-finite.
func AppendFloat(dst []byte, f float64) []byte { return appendFloat(dst, f) }
