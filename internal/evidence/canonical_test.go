package evidence

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Number vectors from RFC 8785 appendix B (IEEE-754 bits → canonical text).
func TestES6NumberRFC8785(t *testing.T) {
	cases := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, c := range cases {
		f := math.Float64frombits(c.bits)
		if got := string(AppendES6Number(nil, f)); got != c.want {
			t.Errorf("%016x: got %s, want %s", c.bits, got, c.want)
		}
	}
}

func TestCanonicalRFC8785Example(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	v, err := ParseValue([]byte(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// Key order from RFC 8785 section 3.2.3: UTF-16 code units, so the emoji
// (a surrogate pair starting 0xD83D) sorts before U+FB33.
func TestCanonicalKeyOrderUTF16(t *testing.T) {
	in := `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`
	v, err := ParseValue([]byte(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Canonical(v)
	want := "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestCanonicalIntegersAndNonFinite(t *testing.T) {
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	cases := []struct {
		v    any
		want string
	}{
		{int64(MaxSafeInteger), "9007199254740991"},
		{int64(MaxSafeInteger + 1), `"9007199254740992"`},
		{int64(-MaxSafeInteger - 1), `"-9007199254740992"`},
		{uint64(math.MaxUint64), `"18446744073709551615"`},
		{json.Number("18446744073709551616"), `"18446744073709551616"`},
		{json.Number("-9007199254740993"), `"-9007199254740993"`},
		{json.Number("1.0"), "1"},
		{json.Number("1e400"), `{"type":"double","value":"Infinity"}`},
		{huge, `"123456789012345678901234567890"`},
		{math.NaN(), `{"type":"double","value":"NaN"}`},
		{math.Inf(1), `{"type":"double","value":"Infinity"}`},
		{math.Inf(-1), `{"type":"double","value":"-Infinity"}`},
		{[]any{int64(1), "a", nil}, `[1,"a",null]`},
	}
	for _, c := range cases {
		got, err := Canonical(c.v)
		if err != nil {
			t.Fatalf("%v: %v", c.v, err)
		}
		if string(got) != c.want {
			t.Errorf("%v: got %s, want %s", c.v, got, c.want)
		}
	}
}

func TestCanonicalRejectsInvalidUTF8(t *testing.T) {
	for _, v := range []any{"a\xffb", Object{"k\xfe": 1}} {
		if _, err := Canonical(v); !errors.Is(err, ErrInvalidUTF8) {
			t.Errorf("%q: want ErrInvalidUTF8, got %v", v, err)
		}
	}
	if _, err := ParseValue([]byte(`{"a":"\ud800"}`), 0); err == nil {
		t.Error("lone surrogate accepted")
	}
	if _, err := ParseValue([]byte("\"\xff\""), 0); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
}

func TestParseRejectsDuplicateKeys(t *testing.T) {
	if _, err := ParseValue([]byte(`{"a":1,"b":{"c":1,"c":2}}`), 0); err == nil {
		t.Fatal("duplicate key accepted")
	}
}

// Property: canonical output parses and re-encodes to itself.
func TestCanonicalIsFixedPoint(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		v := randomValue(r, 0)
		a, err := Canonical(v)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		p, err := ParseValue(a, 0)
		if err != nil {
			t.Fatalf("case %d: reparse %s: %v", i, a, err)
		}
		b, err := Canonical(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Fatalf("case %d: not a fixed point:\n%s\n%s", i, a, b)
		}
	}
}

func randomValue(r *rand.Rand, depth int) any {
	k := r.IntN(9)
	if depth > 4 {
		k = r.IntN(6)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return r.Int64() >> uint(r.IntN(64))
	case 3:
		return math.Float64frombits(r.Uint64())
	case 4:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	case 5:
		return randomString(r)
	case 6, 7:
		n := r.IntN(5)
		a := make([]any, n)
		for i := range a {
			a[i] = randomValue(r, depth+1)
		}
		return a
	default:
		o := Object{}
		for range r.IntN(5) {
			o[randomString(r)] = randomValue(r, depth+1)
		}
		return o
	}
}

func randomString(r *rand.Rand) string {
	runes := []rune{'a', 'Z', '"', '\\', '\n', 0x01, 0x7f, 'é', '€', 0x1F600, 0xFB33, 0xE000}
	s := make([]rune, r.IntN(8))
	for i := range s {
		s[i] = runes[r.IntN(len(runes))]
	}
	return string(s)
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.5,"x",null]}`, `[1e400,-0,0.1]`, `{"\u20ac":"\ud83d\ude00"}`, `123456789012345678901`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseValue(b, 0)
		if err != nil {
			return
		}
		a, err := Canonical(v)
		if err != nil {
			t.Fatalf("parsed value does not encode: %v", err)
		}
		p, err := ParseValue(a, 0)
		if err != nil {
			t.Fatalf("canonical output does not parse: %s: %v", a, err)
		}
		c, _ := Canonical(p)
		if string(a) != string(c) {
			t.Fatalf("not a fixed point: %s vs %s", a, c)
		}
	})
}

// Every Go integer type encodes as its value, a decimal string beyond the
// safe range.
func TestCanonicalIntegerTypes(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{int(-5), "-5"}, {int8(-128), "-128"}, {int16(-32768), "-32768"}, {int32(math.MinInt32), "-2147483648"},
		{int64(math.MinInt64), `"-9223372036854775808"`}, {uint(7), "7"}, {uint8(255), "255"}, {uint16(65535), "65535"},
		{uint32(math.MaxUint32), "4294967295"}, {uint64(math.MaxUint64), `"18446744073709551615"`},
		{[]any{int8(1), uint16(2)}, "[1,2]"}, {[]int64{MaxSafeInteger + 1}, `["9007199254740992"]`},
	}
	for _, c := range cases {
		got, err := Canonical(c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%T %v: got %s (%v), want %s", c.v, c.v, got, err, c.want)
		}
	}
}
