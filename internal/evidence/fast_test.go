package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"unicode/utf8"
)

// The fast encoders are checked against the straightforward ones they
// replaced, kept here as references: same bytes, same errors.

func refAppendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, ErrInvalidUTF8
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		if e := shortEscape[c]; e != 0 {
			dst = append(dst, '\\', e)
		} else {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

func refAppendInt(dst []byte, n int64) []byte {
	if n > MaxSafeInteger || n < -MaxSafeInteger {
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, n, 10)
		return append(dst, '"')
	}
	return strconv.AppendInt(dst, n, 10)
}

func refAppendES6Number(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	sci := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	epos := slices.Index(sci, 'e')
	mant, exp := sci[:epos], sci[epos+1:]
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	e, _ := strconv.Atoi(string(exp))
	k := len(digits)
	n := e + 1
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

func checkString(t *testing.T, s string) {
	t.Helper()
	prefix := []byte("x,")
	got, gerr := appendString(slices.Clone(prefix), s)
	want, werr := refAppendString(slices.Clone(prefix), s)
	if !bytes.Equal(got, want) || gerr != werr {
		t.Fatalf("%q: got %q (%v), want %q (%v)", s, got, gerr, want, werr)
	}
}

// stringPieces are the bytes and sequences a fast path can get wrong:
// every escape, the lane boundaries of the word tests (0x1f/0x20,
// 0x21/0x22/0x23, 0x5b/0x5c/0x5d, 0x7f/0x80), U+2028/9, U+FFFD, the
// largest rune, and invalid UTF-8 (stray continuation, truncated and
// overlong sequences, surrogates, beyond U+10FFFF).
var stringPieces = []string{
	"a", "Z", "~", "\x00", "\x01", "\x1f", " ", "!", "\"", "#", "[", "\\", "]", "\x7f",
	"\b", "\f", "\n", "\r", "\t", "é", "€", "\u2028", "\u2029", "\ufffd", "\U0010ffff", "😀",
	"\x80", "\xbf", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff",
	"abcdefgh", "ABCDEFGHIJKLMNOP",
}

func TestAppendStringMatchesReference(t *testing.T) {
	for _, p := range stringPieces {
		// Every position of the piece relative to an 8-byte word.
		for pad := range 17 {
			checkString(t, p+string(bytes.Repeat([]byte("x"), pad)))
			checkString(t, string(bytes.Repeat([]byte("y"), pad))+p)
			checkString(t, string(bytes.Repeat([]byte("y"), pad))+p+"tail-of-some-length")
		}
	}
	// Every single byte, and every byte in each lane of a word.
	for c := range 256 {
		for lane := range 8 {
			b := bytes.Repeat([]byte("k"), 16)
			b[lane] = byte(c)
			b[lane+8] = byte(c)
			checkString(t, string(b))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var b []byte
		for range r.IntN(40) {
			if r.IntN(3) == 0 {
				b = append(b, stringPieces[r.IntN(len(stringPieces))]...)
			} else {
				b = append(b, byte(r.IntN(256)))
			}
		}
		checkString(t, string(b))
	}
}

func FuzzAppendString(f *testing.F) {
	for _, p := range stringPieces {
		f.Add(p + "0123456789")
	}
	f.Fuzz(func(t *testing.T, s string) { checkString(t, s) })
}

func checkInt(t *testing.T, n int64) {
	t.Helper()
	if got, want := appendInt([]byte("x"), n), refAppendInt([]byte("x"), n); !bytes.Equal(got, want) {
		t.Fatalf("%d: got %s, want %s", n, got, want)
	}
}

func TestAppendIntMatchesReference(t *testing.T) {
	for _, n := range []int64{0, 1, -1, 9, 10, 99, 100, 999, 1000, 9999, 10000, -10000, 99999999, 100000000,
		1e15, 1e16 - 1, 1e16, MaxSafeInteger, MaxSafeInteger + 1, -MaxSafeInteger, -MaxSafeInteger - 1,
		math.MaxInt64, math.MinInt64, math.MinInt64 + 1, math.MaxInt32, math.MinInt32} {
		for d := int64(-2); d <= 2; d++ {
			checkInt(t, n+d)
		}
	}
	for p := int64(1); p < 1e18; p *= 10 {
		for _, n := range []int64{p - 1, p, p + 1, -p, -p + 1} {
			checkInt(t, n)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 300000 {
		checkInt(t, int64(r.Uint64())>>r.IntN(64))
	}
}

func FuzzAppendInt(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(MaxSafeInteger + 1))
	f.Add(int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, n int64) { checkInt(t, n) })
}

func checkFloat(t *testing.T, x float64) {
	t.Helper()
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	if got, want := AppendES6Number([]byte("x"), x), refAppendES6Number([]byte("x"), x); !bytes.Equal(got, want) {
		t.Fatalf("%v (%016x): got %s, want %s", x, math.Float64bits(x), got, want)
	}
}

func TestES6NumberMatchesReference(t *testing.T) {
	// The form changes at 1e-6, 1e21 and beyond the exact integers (2^53);
	// check each boundary and the doubles next to it.
	for _, b := range []float64{0, 1, 0.1, 0.5, 1.5, 1e-7, 1e-6, 1e-5, 1e15, 1e16, 1e17, 1e20, 1e21, 1e22,
		1 << 53, 1<<53 + 2, 1 << 54, 1 << 63, 1 << 64, math.MaxFloat64, math.SmallestNonzeroFloat64,
		0x1p-1022, 123456789.125, 4294967296.5} {
		for _, x := range []float64{b, -b} {
			y := x
			for range 20 {
				checkFloat(t, y)
				y = math.Nextafter(y, math.Inf(1))
			}
			y = x
			for range 20 {
				checkFloat(t, y)
				y = math.Nextafter(y, math.Inf(-1))
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 300000 {
		checkFloat(t, math.Float64frombits(r.Uint64()))
		// Values decoders actually produce: integers, and decimals of a
		// few digits, at every scale.
		checkFloat(t, float64(int64(r.Uint64())>>r.IntN(64)))
		checkFloat(t, float64(r.IntN(1_000_000))*math.Pow10(r.IntN(40)-20))
		checkFloat(t, float64(r.IntN(1_000_000))/1000)
	}
}

func FuzzES6Number(f *testing.F) {
	f.Add(uint64(0x3eb0c6f7a0b5ed8d))
	f.Add(uint64(0x444b1ae4d6e2ef50))
	f.Fuzz(func(t *testing.T, bits uint64) { checkFloat(t, math.Float64frombits(bits)) })
}

// Typical row text: names, ids, an artifact id, a path, some non-ASCII and
// an escape.
var benchStrings = []string{"ThreadPool_PostTask", "2374", "thread", "toplevel.flow", "927078",
	"sha256:79ce599211b2e089da859fc9202bcd58ca4178216b63a26b297af976ec114eed",
	"/usr/lib/python3.12/site-packages/torch/nn/modules/module.py", "aten::linear", "ünïcode name", "a\tb"}

func BenchmarkAppendString(b *testing.B) {
	for _, c := range []struct {
		name string
		fn   func([]byte, string) ([]byte, error)
	}{{"reference", refAppendString}, {"fast", appendString}} {
		b.Run(c.name, func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				buf = buf[:0]
				for _, s := range benchStrings {
					buf, _ = c.fn(buf, s)
				}
			}
		})
	}
}

var benchFloats = []float64{3901000, 0.25, 1234.5678, 34064438658741, 1e-9, 6.02e23, 0.1, 99.5}

func BenchmarkES6Number(b *testing.B) {
	for _, c := range []struct {
		name string
		fn   func([]byte, float64) []byte
	}{{"reference", refAppendES6Number}, {"fast", AppendES6Number}} {
		b.Run(c.name, func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				buf = buf[:0]
				for _, f := range benchFloats {
					buf = c.fn(buf, f)
				}
			}
		})
	}
}

var benchInts = []int64{0, 7, 2374, 927078, 35090218, 34064438658741, -1, 1 << 60}

func BenchmarkAppendInt(b *testing.B) {
	for _, c := range []struct {
		name string
		fn   func([]byte, int64) []byte
	}{{"reference", refAppendInt}, {"fast", appendInt}} {
		b.Run(c.name, func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				buf = buf[:0]
				for _, n := range benchInts {
					buf = c.fn(buf, n)
				}
			}
		})
	}
}

// refAppendObject is the object encoder before members: sorted keys, then
// a lookup of each; nested objects go through it too.
func refAppendObject(dst []byte, m Object) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !utf8.ValidString(k) {
			return dst, fmt.Errorf("object key %q: %w", k, ErrInvalidUTF8)
		}
		keys = append(keys, k)
	}
	SortKeys(keys)
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst, _ = refAppendString(dst, k)
		dst = append(dst, ':')
		if o, ok := m[k].(Object); ok {
			dst, err = refAppendObject(dst, o)
		} else {
			dst, err = AppendCanonical(dst, m[k])
		}
		if err != nil {
			return dst, fmt.Errorf("%s: %w", k, err)
		}
	}
	return append(dst, '}'), nil
}

// randObject has up to 40 members (both sides of the insertion-sort and
// on-stack bounds), keys that sort differently in UTF-16 and UTF-8
// (U+FB33 against U+1F600), nested objects, and now and then a bad key or
// value.
func randObject(r *rand.Rand, depth int) Object {
	keys := []string{"a", "b", "ab", "", "é", "\ufb33", "\U0001f600", "\ue000", "Z", "name", "id", "ts", "dur", "x\x00"}
	o := Object{}
	for range r.IntN(41) {
		k := keys[r.IntN(len(keys))] + strconv.Itoa(r.IntN(30))
		if r.IntN(500) == 0 {
			k += "\xff"
		}
		switch r.IntN(6) {
		case 0:
			o[k] = int64(r.Uint64()) >> r.IntN(64)
		case 1:
			o[k] = r.Float64() * 1e6
		case 2:
			if depth < 2 {
				o[k] = randObject(r, depth+1)
			} else {
				o[k] = nil
			}
		case 3:
			if r.IntN(200) == 0 {
				o[k] = "bad\xc3"
			} else {
				o[k] = keys[r.IntN(len(keys))]
			}
		case 4:
			o[k] = json.Number(strconv.Itoa(r.IntN(1000)))
		default:
			o[k] = r.IntN(2) == 0
		}
	}
	return o
}

func TestAppendObjectMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		o := randObject(r, 0)
		got, gerr := appendObject([]byte("x"), o)
		want, werr := refAppendObject([]byte("x"), o)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%v: got error %v, want %v", o, gerr, werr)
		}
		// With two bad keys, which one is reported depends on map order,
		// in both.
		if gerr == nil && !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
}

// A Kineto kernel's args, as the Chrome trace decoder keeps them.
var benchObject = Object{"External id": json.Number("1234"), "correlation": json.Number("567890"), "device": json.Number("0"),
	"stream": json.Number("7"), "grid": []any{json.Number("128"), json.Number("1"), json.Number("1")}, "registers per thread": json.Number("32"),
	"shared memory": json.Number("0"), "blocks per SM": 1.5, "warps per SM": 12.0, "queued": json.Number("0")}

func BenchmarkAppendObject(b *testing.B) {
	for _, c := range []struct {
		name string
		fn   func([]byte, Object) ([]byte, error)
	}{{"reference", refAppendObject}, {"fast", appendObject}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf, _ = c.fn(buf[:0], benchObject)
			}
		})
	}
}

func refAppendNumber(dst []byte, lit string) ([]byte, error) {
	if isIntegerLiteral(lit) {
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

func checkNumber(t *testing.T, lit string) {
	t.Helper()
	got, gerr := appendNumber([]byte("x"), lit)
	want, werr := refAppendNumber([]byte("x"), lit)
	if !bytes.Equal(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%q: got %s (%v), want %s (%v)", lit, got, gerr, want, werr)
	}
}

func TestAppendNumberMatchesReference(t *testing.T) {
	for _, lit := range []string{"0", "-0", "00", "007", "-007", "1", "-1", "999999999999999", "-999999999999999",
		"1000000000000000", "9007199254740991", "9007199254740992", "-9007199254740993", "0000000000000001",
		"99999999999999999999999", "-", "", "1.5", "1e3", "-0.0", "1E400", "abc", "12a"} {
		checkNumber(t, lit)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 100000 {
		var b []byte
		if r.IntN(4) == 0 {
			b = append(b, '-')
		}
		for range 1 + r.IntN(20) {
			b = append(b, byte('0'+r.IntN(10)))
		}
		checkNumber(t, string(b))
	}
}

func FuzzAppendNumber(f *testing.F) {
	f.Add("123")
	f.Add("-0")
	f.Add("007")
	f.Fuzz(func(t *testing.T, lit string) { checkNumber(t, lit) })
}
