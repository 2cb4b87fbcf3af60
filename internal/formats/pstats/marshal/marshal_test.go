package marshal

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeOne(b []byte, lim Limits) (Value, error) {
	d := NewDecoder(bytes.NewReader(b), lim)
	v, err := d.Value()
	if err != nil {
		return nil, err
	}
	return v, d.CheckEnd()
}

// tokensOne reads b as a token stream and builds the value back from the
// tokens, so that it can be compared with what Value reads.
func tokensOne(b []byte, lim Limits) (Value, error) {
	d := NewDecoder(bytes.NewReader(b), lim)
	v, err := build(d)
	if err != nil {
		return nil, err
	}
	if d.Depth() != 0 {
		return nil, fmt.Errorf("%d containers still open after the object", d.Depth())
	}
	return v, d.CheckEnd()
}

func build(d *Decoder) (Value, error) {
	t, err := d.Next()
	if err != nil {
		return nil, err
	}
	return buildFrom(d, t)
}

func buildFrom(d *Decoder, t Token) (Value, error) {
	switch t.Kind {
	case KindNone:
		return nil, nil
	case KindBool:
		return t.Bool, nil
	case KindInt:
		if t.Value != nil {
			return t.Value, nil
		}
		return t.Int, nil
	case KindFloat:
		return t.Float, nil
	case KindStr:
		return t.Str, nil
	case KindTuple, KindList, KindSet, KindFrozenSet:
		items := []Value{}
		for range t.Len {
			v, err := build(d)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		switch t.Kind {
		case KindList:
			return List(items), nil
		case KindSet:
			return Set(items), nil
		case KindFrozenSet:
			return FrozenSet(items), nil
		}
		return Tuple(items), nil
	case KindDict:
		var out Dict
		for {
			k, err := d.Next()
			if err != nil {
				return nil, err
			}
			if k.Kind == KindEnd {
				return out, nil
			}
			kv, err := buildFrom(d, k)
			if err != nil {
				return nil, err
			}
			v, err := build(d)
			if err != nil {
				return nil, err
			}
			out = append(out, Item{kv, v})
		}
	case KindEnd:
		return nil, errors.New("end of dict outside a dict")
	}
	if t.Value == nil {
		return nil, fmt.Errorf("token of kind %s without a value", t.Kind)
	}
	return t.Value, nil
}

// sameError reports whether Value and the token reader failed alike: the
// same marshal failure (offset, message, class), whatever the wrapping.
func sameError(a, b error) bool {
	var ea, eb *Error
	if !errors.As(a, &ea) || !errors.As(b, &eb) {
		return false
	}
	return ea.Offset == eb.Offset && ea.Msg == eb.Msg && ea.Err == eb.Err && ea.Bound == eb.Bound && ea.Observed == eb.Observed
}

// The encodings below were produced by CPython 3.11's marshal.dumps.
func TestDecodeValues(t *testing.T) {
	big64, _ := new(big.Int).SetString("18446744073709551616", 10)
	bigNeg, _ := new(big.Int).SetString("-1267650600228229401496703205376", 10)
	cases := []struct {
		name string
		hex  string
		want Value
	}{
		{"none", "4e", nil},
		{"true", "54", true},
		{"false", "46", false},
		{"ellipsis", "2e", Ellipsis{}},
		{"int zero", "e900000000", int64(0)},
		{"int minus one", "e9ffffffff", int64(-1)},
		{"int max32", "e9ffffff7f", int64(math.MaxInt32)},
		{"long 2^31", "ec03000000000000000200", int64(1 << 31)},
		{"long -2^31-1", "ecfdffffff010000000200", int64(-(1 << 31) - 1)},
		{"long 2^62", "ec0500000000000000000000000400", int64(1 << 62)},
		{"long 2^64", "ec0500000000000000000000001000", big64},
		{"long -2^100", "ecf9ffffff0000000000000000000000000004", bigNeg},
		{"binary float", "e7000000000000f83f", 1.5},
		{"text float v1", "6603312e35", 1.5},
		{"short ascii", "da03616263", "abc"},
		{"unicode", "f502000000c3a9", "é"},
		{"unicode v1", "75020000006162", "ab"},
		{"ascii is latin-1", "7a02e961", "éa"},
		{"bytes", "f3020000006162", Bytes("ab")},
		{"small tuple", "a902e901000000e902000000", Tuple{int64(1), int64(2)}},
		{"empty tuple", "a900", Tuple{}},
		{"list", "db02000000e901000000da0161", List{int64(1), "a"}},
		{"dict", "fbe901000000e90200000030", Dict{{int64(1), int64(2)}}},
		{"frozenset", "be01000000e901000000", FrozenSet{int64(1)}},
		{"set", "bc01000000e903000000", Set{int64(3)}},
		{"binary complex", "f9000000000000f03f0000000000000040", complex(1, 2)},
		{"text complex v1", "7801310132", complex(1, 2)},
		{"ref to a shared str", "a902da067368617265647201000000", Tuple{"shared", "shared"}},
		{"slice", "3a4ee90100000046", Slice{nil, int64(1), false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodeOne(mustHex(t, c.hex), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !equal(got, c.want) {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
			got, err = tokensOne(mustHex(t, c.hex), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !equal(got, c.want) {
				t.Fatalf("tokens: got %#v, want %#v", got, c.want)
			}
		})
	}
}

func equal(a, b Value) bool {
	ga, _ := json.Marshal(shape(a))
	gb, _ := json.Marshal(shape(b))
	return bytes.Equal(ga, gb)
}

// shape renders a value in the JSON form the Python side of
// TestAgainstCPython prints, so both can be compared exactly.
func shape(v Value) any {
	list := func(tag string, xs []Value) any {
		out := make([]any, len(xs))
		for i, x := range xs {
			out[i] = shape(x)
		}
		return map[string]any{tag: out}
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x
	case int64:
		return map[string]any{"int": strconv.FormatInt(x, 10)}
	case *big.Int:
		return map[string]any{"int": x.String()}
	case float64:
		return map[string]any{"float": floatBits(x)}
	case complex128:
		return map[string]any{"complex": []string{floatBits(real(x)), floatBits(imag(x))}}
	case Bytes:
		return map[string]any{"bytes": hex.EncodeToString(x)}
	case Tuple:
		return list("tuple", x)
	case List:
		return list("list", x)
	case Set:
		return list("set", x)
	case FrozenSet:
		return list("frozenset", x)
	case Dict:
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = []any{shape(it.Key), shape(it.Value)}
		}
		return map[string]any{"dict": out}
	case Slice:
		return list("slice", []Value{x.Start, x.Stop, x.Step})
	case Ellipsis:
		return map[string]any{"ellipsis": true}
	case *Code:
		return map[string]any{"code": []any{x.Filename, x.Name, x.QualName, strconv.FormatInt(x.FirstLineNo, 10)}}
	}
	return fmt.Sprintf("unexpected %T", v)
}

func floatBits(f float64) string {
	if math.IsNaN(f) {
		return "nan"
	}
	return strconv.FormatUint(math.Float64bits(f), 16)
}

// TestAgainstCPython marshals values with the local CPython at every
// format version it writes and checks that each decodes to what Python
// itself holds, floats bit for bit.
func TestAgainstCPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot cross-check against CPython's marshal")
	}
	const script = `
import json, marshal, struct, sys, types
def bits(f):
    if f != f: return "nan"
    return format(struct.unpack("<Q", struct.pack("<d", f))[0], "x")
def shape(v):
    if v is None or isinstance(v, (bool, str)): return v
    if isinstance(v, int): return {"int": str(v)}
    if isinstance(v, float): return {"float": bits(v)}
    if isinstance(v, complex): return {"complex": [bits(v.real), bits(v.imag)]}
    if isinstance(v, bytes): return {"bytes": v.hex()}
    if isinstance(v, tuple): return {"tuple": [shape(x) for x in v]}
    if isinstance(v, list): return {"list": [shape(x) for x in v]}
    if isinstance(v, frozenset): return {"frozenset": [shape(x) for x in v]}
    if isinstance(v, set): return {"set": [shape(x) for x in v]}
    if isinstance(v, dict): return {"dict": [[shape(k), shape(x)] for k, x in v.items()]}
    if v is Ellipsis: return {"ellipsis": True}
    if isinstance(v, types.CodeType): return {"code": [v.co_filename, v.co_name, v.co_qualname, str(v.co_firstlineno)]}
    raise TypeError(type(v))
shared = "shared-string"
code = compile("x = {1, 2}\ndef f(a, *, b=1.5):\n    return [a, b, 1j, ..., b'z']\nclass C:\n    def m(self): return f\n", "mod.py", "exec")
values = [
    None, True, False, 0, -5, 2**31 - 1, 2**31, -(2**31) - 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 7**90,
    0.1, -0.0, 1e308, 5e-324, float("inf"), float("-inf"), float("nan"),
    "", "ascii", "é ü 中文 🙂", "x" * 300, b"", b"\x00\xff",
    (), (1,), tuple(range(300)), [1, [2, [3]]], {"a": 1, (1, "b"): [2]}, frozenset({1, 2, 3}), {4, 5},
    1 + 2j, (shared, shared, (shared,)), {("f.py", 1, "g"): (1, 2, 0.5, 0.75, {("f.py", 1, "g"): (1, 1, 0.25, 0.5)})},
    code, Ellipsis,
    (lambda t: [t, t, {"k": t}, (t,)])((1, "x", 2**40)), (lambda d: (d, [d], d))({"a": (1, 2), "b": {}}),
    (lambda e: {e: [e, e]})(()), (lambda s: [s, s])(frozenset({(1, 2)})), [[], {}, set(), ()],
]
for v in values:
    for version in range(0, marshal.version + 1):
        try:
            b = marshal.dumps(v, version)
        except ValueError:
            continue
        print(json.dumps({"version": version, "hex": b.hex(), "want": shape(v)}))
`
	out, err := exec.Command(py, "-c", script).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	n := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		var c struct {
			Version int
			Hex     string
			Want    json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		got, err := decodeOne(mustHex(t, c.Hex), Limits{})
		if err != nil {
			t.Errorf("version %d %s: %v", c.Version, c.Want, err)
			continue
		}
		g, _ := json.Marshal(shape(got))
		var want any
		_ = json.Unmarshal(c.Want, &want)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Errorf("version %d: got %s, want %s", c.Version, g, w)
		}
		// The token reader sees the same object, however it was shared.
		tv, err := tokensOne(mustHex(t, c.Hex), Limits{})
		if err != nil {
			t.Errorf("version %d %s: tokens: %v", c.Version, c.Want, err)
			continue
		}
		if g2, _ := json.Marshal(shape(tv)); !bytes.Equal(g2, w) {
			t.Errorf("version %d: tokens give %s, want %s", c.Version, g2, w)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("only %d encodings checked", n)
	}
}

// TestDeepLocation: a failure deep in nested containers names its item
// once, with the depth, not once per level.
func TestDeepLocation(t *testing.T) {
	_, err := decodeOne(mustHex(t, strings.Repeat("2901", 200)+"4e"), Limits{MaxDepth: 100})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("got %v, want the depth limit", err)
	}
	const want = "tuple item 0 (inside 99 containers): marshal: nesting deeper than max_depth 100 at byte 200"
	if err.Error() != want {
		t.Fatalf("got %q (%d bytes), want %q", err, len(err.Error()), want)
	}
	_, err = decodeOne(mustHex(t, "2902e901000000"), Limits{})
	if got := err.Error(); got != "tuple item 1: marshal: input ends inside type code at byte 7" {
		t.Fatalf("got %q", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name string
		hex  string
		lim  Limits
		want error // ErrTruncated, ErrLimit, or nil for bad data
		msg  string
	}{
		{"empty", "", Limits{}, ErrTruncated, "ends inside type code"},
		{"truncated int", "e90100", Limits{}, ErrTruncated, "ends inside int"},
		{"truncated str", "da0561", Limits{}, ErrTruncated, "ends inside str"},
		{"truncated tuple", "2902e901000000", Limits{}, ErrTruncated, "tuple item 1"},
		{"unterminated dict", "7be901000000e902000000", Limits{}, ErrTruncated, "ends inside dict"},
		{"unknown type code", "51", Limits{}, nil, "unknown type code 'Q'"},
		{"code type byte 0xff", "ff", Limits{}, nil, "unknown type code"},
		{"null item", "290130", Limits{}, nil, "NULL object"},
		{"null dict value", "7be90100000030", Limits{}, nil, "NULL object"},
		{"ref out of range", "7205000000", Limits{}, nil, "reference 5 to an unknown object"},
		{"negative ref", "72ffffffff", Limits{}, nil, "reference -1"},
		{"ref to itself", "a9017200000000", Limits{}, nil, "still being read"},
		{"dict containing itself", "fbe9010000007200000000" + "30", Limits{}, nil, "still being read"},
		{"negative str size", "75ffffffff", Limits{}, nil, "size -1 out of range"},
		{"negative tuple size", "28feffffff", Limits{}, nil, "size -2 out of range"},
		{"unnormalized long", "6c020000000100" + "0000", Limits{}, nil, "unnormalized"},
		{"long digit out of range", "6c01000000ffff", Limits{}, nil, "out of range"},
		{"bad text float", "660378317030", Limits{}, nil, "bad float text"},
		{"invalid utf-8 str", "7502000000eda080", Limits{}, nil, "not valid UTF-8"},
		{"trailing data", "4e4e", Limits{}, nil, "after the object"},
		{"code with old layout", "63" + strings.Repeat("00000000", 5) + "e900000000", Limits{}, nil, "only the CPython 3.11+ code layout"},
		{"huge str declared", "75ffffff7f", Limits{MaxBytes: 1 << 20}, ErrLimit, "declares 2147483647 bytes"},
		{"huge str within budget", "7500001000" + "61", Limits{}, ErrTruncated, "ends inside str"},
		{"huge tuple declared", "28ffffff7f", Limits{MaxObjects: 1000}, ErrLimit, "declares 2147483647 items"},
		{"huge tuple within budget", "2800001000" + "4e", Limits{}, ErrTruncated, "tuple item 1"},
		{"huge long declared", "6cffffff7f", Limits{MaxBytes: 1 << 20}, ErrLimit, "digits"},
		{"deep nesting", strings.Repeat("2901", 20) + "4e", Limits{MaxDepth: 10}, ErrLimit, "max_depth 10"},
		{"too many objects", "2903" + "4e4e4e", Limits{MaxObjects: 3}, ErrLimit, "max_objects 3"},
		{"too many bytes", "da0a" + strings.Repeat("61", 10), Limits{MaxBytes: 8}, ErrLimit, "max_bytes 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeOne(mustHex(t, c.hex), c.lim)
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("got %v, want a *marshal.Error", err)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if c.want == nil && (errors.Is(err, ErrLimit) || errors.Is(err, ErrTruncated)) {
				t.Fatalf("got %v, want bad data", err)
			}
			// A limit failure names its bound, as its message does.
			bound := map[string]Bound{"max_bytes": BoundBytes, "max_depth": BoundDepth, "max_objects": BoundObjects}
			for name, b := range bound {
				if errors.Is(err, ErrLimit) && strings.Contains(me.Msg, name) && me.Bound != b {
					t.Fatalf("%v: bound %d, want %d", err, me.Bound, b)
				}
			}
			if errors.Is(err, ErrLimit) != (me.Bound != 0) {
				t.Fatalf("%v: bound %d", err, me.Bound)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q lacks %q", err, c.msg)
			}
			if _, terr := tokensOne(mustHex(t, c.hex), c.lim); !sameError(err, terr) {
				t.Fatalf("tokens fail with %v, Value with %v", terr, err)
			}
		})
	}
}

// A declared length far beyond the input must not be allocated up front,
// whether the declaration crosses a limit or only the input's end.
func TestHugeDeclaredLengthsDoNotAllocate(t *testing.T) {
	for _, c := range []struct {
		hex  string
		want error
	}{
		{"75ffffff7f61", ErrLimit},       // str of 2 GiB - 1
		{"750000002061", ErrTruncated},   // str of 512 MiB
		{"28ffffff7f4e", ErrLimit},       // tuple of 2^31 - 1 items
		{"28000000054e", ErrTruncated},   // tuple of 83,886,080 items
		{"6cffffff7f0100", ErrLimit},     // long of 2^31 - 1 digits
		{"6c000000100100", ErrTruncated}, // long of 268,435,456 digits
	} {
		b := mustHex(t, c.hex)
		var err error
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		_, err = decodeOne(b, Limits{})
		_, terr := tokensOne(b, Limits{})
		runtime.ReadMemStats(&ms)
		if !errors.Is(err, c.want) || !errors.Is(terr, c.want) {
			t.Errorf("%s: got %v and %v (tokens), want %v", c.hex, err, terr, c.want)
		}
		if grew := ms.TotalAlloc - before; grew > 2<<20 {
			t.Errorf("%s: decoding allocated %d bytes", c.hex, grew)
		}
	}
}

func TestReaders(t *testing.T) {
	b := mustHex(t, "a902da067368617265647201000000")
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(b)),
		"half":     iotest.HalfReader(bytes.NewReader(b)),
		"data+err": iotest.DataErrReader(bytes.NewReader(b)),
	} {
		t.Run(name, func(t *testing.T) {
			d := NewDecoder(r, Limits{})
			v, err := d.Value()
			if err != nil {
				t.Fatal(err)
			}
			if err := d.CheckEnd(); err != nil {
				t.Fatal(err)
			}
			if !equal(v, Tuple{"shared", "shared"}) {
				t.Fatalf("got %#v", v)
			}
		})
	}
	t.Run("read error", func(t *testing.T) {
		boom := errors.New("boom")
		d := NewDecoder(io.MultiReader(bytes.NewReader(b[:3]), iotest.ErrReader(boom)), Limits{})
		if _, err := d.Value(); !errors.Is(err, boom) {
			t.Fatalf("got %v, want the read error", err)
		}
	})
}

func TestStreamingDict(t *testing.T) {
	// {1: 2, 3: (4,)} read item by item; the dict is flagged, as CPython
	// flags the stats dict.
	for _, c := range []struct {
		name, hex string
		refs      int
	}{
		// Slots: the dict, four flagged ints and the flagged tuple.
		{"flagged tuple", "fb e901000000 e902000000 e903000000 a901e904000000 30", 6},
		// The unflagged tuple takes no slot.
		{"unflagged tuple", "fb e901000000 e902000000 e903000000 2901e904000000 30", 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewDecoder(bytes.NewReader(mustHex(t, c.hex)), Limits{})
			if err := d.BeginDict(); err != nil {
				t.Fatal(err)
			}
			var got []Item
			for {
				k, err := d.Next()
				if err != nil {
					t.Fatal(err)
				}
				if k.Kind == KindEnd {
					break
				}
				kv, err := buildFrom(d, k)
				if err != nil {
					t.Fatal(err)
				}
				v, err := build(d)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, Item{kv, v})
			}
			if d.Depth() != 0 {
				t.Fatalf("depth %d after the dict", d.Depth())
			}
			if err := d.CheckEnd(); err != nil {
				t.Fatal(err)
			}
			if !equal(Dict(got), Dict{{int64(1), int64(2)}, {int64(3), Tuple{int64(4)}}}) {
				t.Fatalf("got %#v", got)
			}
			if d.Refs() != c.refs {
				t.Fatalf("refs = %d, want %d", d.Refs(), c.refs)
			}
		})
	}
	if err := NewDecoder(bytes.NewReader([]byte("N")), Limits{}).BeginDict(); err == nil {
		t.Fatal("BeginDict accepted None")
	}
	if _, err := NewDecoder(bytes.NewReader([]byte("{0")), Limits{}).Value(); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(bytes.NewReader([]byte("{N")), Limits{})
	if err := d.BeginDict(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Value(); err == nil {
		t.Fatal("Value inside a dict opened as tokens")
	}
}

// A reference to a tuple read as tokens names the same tuple: the
// container is read whole when flagged, then replayed.
func TestTokensReplayReferences(t *testing.T) {
	// [(1, "ab") flagged, ref 0 (the tuple), ref 1 (the int 1)]
	b := mustHex(t, "5b03000000 a902 e901000000 da026162 7200000000 7201000000")
	var kinds []Kind
	d := NewDecoder(bytes.NewReader(b), Limits{})
	for {
		tk, err := d.Next()
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, tk.Kind)
		if d.Depth() == 0 {
			break
		}
	}
	want := []Kind{KindList, KindTuple, KindInt, KindStr, KindTuple, KindInt, KindStr, KindInt}
	if !slices.Equal(kinds, want) {
		t.Fatalf("tokens %v, want %v", kinds, want)
	}
	if err := d.CheckEnd(); err != nil {
		t.Fatal(err)
	}
}

// Reading an unflagged dict of tuples as tokens allocates nothing per
// item: such containers are never built.
func TestTokensDoNotBuild(t *testing.T) {
	var b []byte
	b = append(b, '{')
	const n = 5000
	for i := range n {
		b = append(b, 'i', byte(i), byte(i>>8), 0, 0, ')', 2, 'i', 1, 0, 0, 0, 'g', 0, 0, 0, 0, 0, 0, 0xf8, 0x3f)
	}
	b = append(b, '0')
	var seen int
	allocs := testing.AllocsPerRun(5, func() {
		d := NewDecoder(bytes.NewReader(b), Limits{})
		seen = 0
		for {
			tk, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			seen++
			if d.Depth() == 0 && tk.Kind == KindEnd {
				break
			}
		}
	})
	if seen != 1+4*n+1 {
		t.Fatalf("%d tokens", seen)
	}
	if allocs > 10 {
		t.Fatalf("%v allocations for %d items", allocs, n)
	}
}

func FuzzDecode(f *testing.F) {
	for _, h := range []string{
		"a902da067368617265647201000000", "fbe901000000e90200000030", "ec0500000000000000000000001000",
		"e30000000000000000000000000100000000000000f310000000970064005a00640184005a01640253002903e901000000" +
			"630100000000000000000000000200000003000000f30c00000097007c0064017a000000530029024e7202000000a900" +
			"2901da0161730100000020fa046d2e7079da0166720700000002000000730b0000008000d8090a88318913802af300000000" +
			"4e2902da01787207000000720400000072080000007206000000fa083c6d6f64756c653e720a000000010000007323000000" +
			"f003010101d802038001f00201010df00001010df00001010df00001010df00001010d7208000000",
	} {
		f.Add(mustHex(f, h))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := Limits{MaxBytes: 1 << 20, MaxObjects: 1 << 16, MaxDepth: 32}
		v, err := decodeOne(b, lim)
		tv, terr := tokensOne(b, lim)
		if err != nil {
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if !sameError(err, terr) {
				t.Fatalf("Value fails with %v, tokens with %v", err, terr)
			}
			return
		}
		if terr != nil {
			t.Fatalf("Value reads %#v, tokens fail with %v", v, terr)
		}
		if !equal(v, tv) {
			t.Fatalf("Value reads %#v, tokens %#v", v, tv)
		}
	})
}

// A long of hundreds of thousands of digits decodes exactly, in time
// linear in its length.
func TestLongLong(t *testing.T) {
	for _, neg := range []bool{false, true} {
		want := new(big.Int).Exp(big.NewInt(7), big.NewInt(300000), nil)
		if neg {
			want.Neg(want)
		}
		// 15-bit digits, least significant first, from the magnitude's
		// little-endian bytes.
		be := new(big.Int).Abs(want).Bytes()
		slices.Reverse(be)
		var digits []byte
		n := int32(0)
		for bit := 0; bit < len(be)*8; bit += 15 {
			var d uint32
			for k := range 15 {
				if i := bit + k; i/8 < len(be) && be[i/8]>>(i%8)&1 == 1 {
					d |= 1 << k
				}
			}
			digits = append(digits, byte(d), byte(d>>8))
			n++
		}
		for n > 0 && digits[2*n-1] == 0 && digits[2*n-2] == 0 {
			n--
		}
		digits = digits[:2*n]
		if neg {
			n = -n
		}
		b := []byte{'l', byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
		got, err := decodeOne(append(b, digits...), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if g, ok := got.(*big.Int); !ok || g.Cmp(want) != 0 {
			t.Fatalf("neg=%v: wrong value", neg)
		}
	}
}

// A key read as tokens and bound: later references, read with Next or
// inside an object read whole, arrive as the bound number.
func TestBind(t *testing.T) {
	// [(1, "ab") flagged, ref 0, [ref 0] flagged]
	b := mustHex(t, "5b03000000 a902 e901000000 da026162 7200000000 db01000000 7200000000")
	for _, claim := range []bool{false, true} {
		d := NewDecoder(bytes.NewReader(b), Limits{})
		if _, err := d.Next(); err != nil { // the list
			t.Fatal(err)
		}
		read := d.Next
		if claim {
			read = d.Claim
		}
		head, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if head.Kind != KindTuple || head.Len != 2 || head.Slot != 0 {
			t.Fatalf("claim=%v: head %+v", claim, head)
		}
		for range 2 {
			if _, err := d.Next(); err != nil {
				t.Fatal(err)
			}
		}
		d.Bind(head.Slot, 42)
		var got []Token
		for d.Depth() > 0 {
			tk, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, tk)
		}
		if len(got) != 3 || got[0].Kind != KindBound || got[0].Int != 42 || got[1].Kind != KindList || got[2].Kind != KindBound || got[2].Int != 42 {
			t.Fatalf("claim=%v: tokens %+v", claim, got)
		}
		if err := d.CheckEnd(); err != nil {
			t.Fatal(err)
		}
		// The slots are those Value assigns.
		if v := NewDecoder(bytes.NewReader(b), Limits{}); true {
			if _, err := v.Value(); err != nil {
				t.Fatal(err)
			}
			if v.Refs() != d.Refs() {
				t.Fatalf("claim=%v: %d slots, Value assigns %d", claim, d.Refs(), v.Refs())
			}
		}
	}
	t.Run("claimed and not bound", func(t *testing.T) {
		d := NewDecoder(bytes.NewReader(b), Limits{})
		if _, err := d.Next(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Claim(); err != nil {
			t.Fatal(err)
		}
		var err error
		for err == nil && d.Depth() > 0 {
			_, err = d.Next()
		}
		if err == nil || !strings.Contains(err.Error(), "not kept") {
			t.Fatalf("got %v, want a failure for the reference", err)
		}
	})
}

// Close drops a replayed container without walking it: sharing can make
// one reference stand for billions of items.
func TestCloseDoesNotWalkReplays(t *testing.T) {
	// [t0, t1, ..., t40]: t0 = (1,) flagged, t(k) = (t(k-1), t(k-1))
	// flagged, so t40 has 2^40 leaves in a few hundred bytes. Slots: t0
	// takes 0 and its int 1; t(k) takes k+1.
	b := mustHex(t, "5b29000000 a901e901000000")
	for k := 1; k <= 40; k++ {
		prev := byte(k)
		if k == 1 {
			prev = 0
		}
		b = append(b, 0xa9, 2, 'r', prev, 0, 0, 0, 'r', prev, 0, 0, 0)
	}
	d := NewDecoder(bytes.NewReader(b), Limits{})
	if _, err := d.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Next(); err != nil { // t0's head
		t.Fatal(err)
	}
	if err := d.Close(0); err != nil {
		t.Fatal(err)
	}
	if err := d.CheckEnd(); err != nil {
		t.Fatal(err)
	}
}
