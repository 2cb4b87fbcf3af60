package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// build reassembles a value from tokens, the way decoders walk documents.
func build(s *Scanner, t Token) (any, error) {
	switch t.Kind {
	case String:
		return string(t.Bytes), nil
	case Number:
		return strconv.ParseFloat(string(t.Bytes), 64)
	case True:
		return true, nil
	case False:
		return false, nil
	case Null:
		return nil, nil
	case ArrayStart:
		out := []any{}
		for {
			n, err := s.Next()
			if err != nil {
				return nil, err
			}
			if n.Kind == ArrayEnd {
				return out, nil
			}
			v, err := build(s, n)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	case ObjectStart:
		out := map[string]any{}
		for {
			k, err := s.Next()
			if err != nil {
				return nil, err
			}
			if k.Kind == ObjectEnd {
				return out, nil
			}
			if !k.IsKey {
				return nil, errors.New("key token not marked")
			}
			key := string(k.Bytes)
			n, err := s.Next()
			if err != nil {
				return nil, err
			}
			v, err := build(s, n)
			if err != nil {
				return nil, err
			}
			out[key] = v
		}
	}
	return nil, errors.New("unexpected " + t.Kind.String())
}

func scanAll(r io.Reader) (any, error) {
	s := New(r)
	t, err := s.Next()
	if err != nil {
		return nil, err
	}
	v, err := build(s, t)
	if err != nil {
		return nil, err
	}
	return v, s.CheckEnd()
}

var docs = []string{
	`{}`, `[]`, `0`, `-0.5e-3`, `"x"`, `null`, ` true `,
	`{"nodes":[1,"ab\"c",{"x":true}],"k":-1.5e3,"u":"\u00e9\ud83d\ude00\n\t\/"}`,
	`[[[[[]]]],{"a":{"b":{"c":[1,2,3]}}}]`,
	`{"long":"` + strings.Repeat("é", 70000) + `","esc":"` + strings.Repeat(`\"`, 40000) + `"}`,
	`[` + strings.Repeat(`123456789.125,`, 20000) + `0]`,
}

func TestMatchesEncodingJSON(t *testing.T) {
	for i, d := range docs {
		var want any
		if err := json.Unmarshal([]byte(d), &want); err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]io.Reader{
			"whole":    strings.NewReader(d),
			"one-byte": iotest.OneByteReader(strings.NewReader(d)),
			"half":     iotest.HalfReader(strings.NewReader(d)),
			"data-err": iotest.DataErrReader(strings.NewReader(d)),
		} {
			got, err := scanAll(r)
			if err != nil {
				t.Fatalf("doc %d %s: %v", i, name, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("doc %d %s: value differs", i, name)
			}
		}
	}
}

func TestRejects(t *testing.T) {
	cases := map[string]error{
		`{"a":1,"a":2}`:          ErrDuplicateKey,
		"\"\xff\"":               ErrInvalidUTF8,
		`"\ud800"`:               ErrInvalidUTF8,
		`"\udc00\ud800"`:         ErrInvalidUTF8,
		`{"a":1}x`:               ErrTrailing,
		strings.Repeat("[", 600): ErrDepth,
	}
	for doc, want := range cases {
		if _, err := scanAll(strings.NewReader(doc)); !errors.Is(err, want) {
			t.Errorf("%.20q: want %v, got %v", doc, want, err)
		}
	}
	for _, doc := range []string{``, `{`, `[1,]`, `{"a" 1}`, `{"a":}`, `01`, `1.`, `-`, `tru`, `"\x"`, "\"a\nb\"", `{1:2}`, `[1 2]`, `{"a":1,}`, `]`} {
		if _, err := scanAll(strings.NewReader(doc)); err == nil {
			t.Errorf("%q accepted", doc)
		}
		if json.Valid([]byte(doc)) {
			t.Errorf("%q is valid JSON: test case is wrong", doc)
		}
	}
}

func TestErrorPosition(t *testing.T) {
	_, err := scanAll(strings.NewReader("{\n\"a\": 1,\n\"b\": tru\n}"))
	var se *Error
	if !errors.As(err, &se) || se.Line != 3 || se.Offset != 15 {
		t.Fatalf("want line 3 byte 15, got %v", err)
	}
}

func TestTokenBound(t *testing.T) {
	s := New(strings.NewReader(`"` + strings.Repeat("a", 5000) + `"`))
	s.MaxToken = 1000
	if _, err := s.Next(); !errors.Is(err, ErrTokenTooLong) {
		t.Fatalf("want ErrTokenTooLong, got %v", err)
	}
}

func TestSkipAndTrailing(t *testing.T) {
	s := New(strings.NewReader(`{"a":[1,{"b":2}],"c":3} {"d":4}`))
	s.AllowTrailing = true
	tok, _ := s.Next()
	k, _ := s.Next()
	key := string(k.Bytes)
	v, _ := s.Next()
	if err := s.Skip(v); err != nil || key != "a" {
		t.Fatal(key, err)
	}
	k, _ = s.Next()
	if string(k.Bytes) != "c" {
		t.Fatalf("after skip got key %q", k.Bytes)
	}
	s.Next()
	if end, _ := s.Next(); end.Kind != ObjectEnd {
		t.Fatal("no object end")
	}
	_ = tok
	if second, err := s.Next(); err != nil || second.Kind != ObjectStart {
		t.Fatalf("second document: %v %v", second.Kind, err)
	}
}

func FuzzScanner(f *testing.F) {
	for _, d := range docs[:9] {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := scanAll(iotest.HalfReader(bytes.NewReader(b)))
		if err != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		var want any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("value differs from encoding/json for %q", b)
		}
	})
}

// intsOf runs Ints over a document that must be one integer array.
func intsOf(r io.Reader) ([]int64, error) {
	s := New(r)
	t, err := s.Next()
	if err != nil {
		return nil, err
	}
	if t.Kind != ArrayStart {
		return nil, errors.New("not an array")
	}
	out := []int64{}
	if err := s.Ints(func(n int64) error { out = append(out, n); return nil }); err != nil {
		return nil, err
	}
	return out, s.CheckEnd()
}

// wantInts decodes with encoding/json, accepting only exact integers.
func wantInts(b []byte) ([]int64, bool) {
	// Into []any with UseNumber: unmarshalling into []json.Number would
	// also accept a string holding a number ("0"), which is not one.
	var vs []any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&vs); err != nil || vs == nil || d.InputOffset() != int64(len(bytes.TrimRight(b, " \t\r\n"))) {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false // more than one document
	}
	out := make([]int64, len(vs))
	for i, x := range vs {
		n, isNum := x.(json.Number)
		if !isNum {
			return nil, false
		}
		if strings.ContainsAny(string(n), ".eE") {
			return nil, false
		}
		v, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func TestIntsBoundaries(t *testing.T) {
	// Many elements across buffer refills, with whitespace runs that
	// straddle the 64 KiB read size.
	var b strings.Builder
	b.WriteString("[")
	for i := range 50000 {
		if i > 0 {
			b.WriteString(",")
		}
		if i%997 == 0 {
			b.WriteString(strings.Repeat(" \n", 40))
		}
		b.WriteString(strconv.Itoa(i*7919 - 1<<20))
	}
	b.WriteString(", -9223372036854775808, 9223372036854775807 ]")
	doc := b.String()
	want, ok := wantInts([]byte(doc))
	if !ok {
		t.Fatal("test document is not an integer array")
	}
	for name, r := range map[string]io.Reader{"whole": strings.NewReader(doc), "one-byte": iotest.OneByteReader(strings.NewReader(doc)), "half": iotest.HalfReader(strings.NewReader(doc))} {
		got, err := intsOf(r)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %v (%d of %d values)", name, err, len(got), len(want))
		}
	}
	for _, bad := range []string{`[1,]`, `[,1]`, `[1 2]`, `[01]`, `[1.5]`, `[1e3]`, `[9223372036854775808]`, `[-]`, `["1"]`, `[1`, `[1,`} {
		if _, err := intsOf(strings.NewReader(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func FuzzInts(f *testing.F) {
	for _, s := range []string{`[]`, `[1,2,3]`, `[ -1 , 0 ,9223372036854775807]`, `[1.0]`, `[01]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := intsOf(iotest.HalfReader(bytes.NewReader(b)))
		want, ok := wantInts(b)
		if err == nil && (!ok || !reflect.DeepEqual(got, want)) {
			t.Fatalf("accepted %q as %v; encoding/json says %v %v", b, got, want, ok)
		}
		if err != nil && ok {
			t.Fatalf("rejected the integer array %q: %v", b, err)
		}
	})
}

// BenchmarkInts reads a profile-like id array: small ids and four-digit
// deltas, as V8 writes samples and timeDeltas.
func BenchmarkInts(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	seed := uint32(1)
	for i := range 1 << 20 {
		if i > 0 {
			sb.WriteByte(',')
		}
		seed = seed*1664525 + 1013904223
		if i%2 == 0 {
			sb.WriteString(strconv.Itoa(int(seed>>8) % 400))
		} else {
			sb.WriteString(strconv.Itoa(100 + int(seed>>8)%2000))
		}
	}
	sb.WriteString("]")
	doc := []byte(sb.String())
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var sum int64
	for b.Loop() {
		s := New(bytes.NewReader(doc))
		if _, err := s.Next(); err != nil {
			b.Fatal(err)
		}
		if err := s.Ints(func(n int64) error { sum += n; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	_ = sum
}

// Duplicate keys are found in small and large objects, and a sibling
// object reusing the key storage at the same depth starts afresh.
func TestDuplicateKeys(t *testing.T) {
	var many []string
	for i := range 20 {
		many = append(many, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	big := "{" + strings.Join(many, ",")
	for _, c := range []struct {
		doc string
		dup bool
	}{
		{`{"ab":1,"a":2,"b":3,"ba":4}`, false},
		{`{"ab":1,"a":2,"b":3,"ab":4}`, true},
		{big + "}", false},
		{big + `,"k0":0}`, true},
		{big + `,"k19":0}`, true},
		{`[{"a":1,"b":2},{"a":1,"b":2},{"b":[{"a":1},{"a":2}],"a":3}]`, false},
		{`[{"a":1},{"b":{"a":1,"a":2}}]`, true},
		{`[` + big + `},{"k0":1,"k1":2}]`, false},
	} {
		_, err := scanAll(strings.NewReader(c.doc))
		if got := errors.Is(err, ErrDuplicateKey); got != c.dup {
			t.Errorf("%.40s: duplicate %v, want %v (%v)", c.doc, got, c.dup, err)
		}
		if !c.dup && err != nil {
			t.Errorf("%.40s: %v", c.doc, err)
		}
	}
}

// hasDuplicateKey reports, with encoding/json's tokenizer, whether a
// document repeats a key in one object before any syntax error.
func hasDuplicateKey(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	type level struct {
		keys   map[string]bool
		object bool
		key    bool // the next string in the object is a key
	}
	var stack []level
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			top := &stack[n-1]
			if s, ok := tok.(string); ok && top.key {
				if top.keys[s] {
					return true
				}
				top.keys[s] = true
				top.key = false
				continue
			}
			top.key = true // after a value, a key follows
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{keys: map[string]bool{}, object: true, key: true})
		case json.Delim('['):
			stack = append(stack, level{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].key = true
			}
		}
	}
}

// FuzzDuplicateKeys checks duplicate detection against an independent
// one: a document is refused for a repeated key exactly when it has one.
func FuzzDuplicateKeys(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":1}]}`))
	f.Add([]byte(`{"a":1,"b":2,"a":3}`))
	f.Add([]byte(`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k0":7}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) || !json.Valid(b) {
			return // the tokenizers differ on invalid input; FuzzScanner covers it
		}
		_, err := scanAll(bytes.NewReader(b))
		if err != nil && !errors.Is(err, ErrDuplicateKey) {
			return // refused for another reason (depth, a lone surrogate) first
		}
		if got, want := err != nil, hasDuplicateKey(b); got != want {
			t.Fatalf("%q: duplicate key %v, encoding/json's tokens say %v (%v)", b, got, want, err)
		}
	})
}

func TestAllowNonFinite(t *testing.T) {
	doc := `[NaN, Infinity, -Infinity, -1.5]`
	if _, err := readAll(NewBytes([]byte(doc))); err == nil {
		t.Fatal("NaN is not JSON unless allowed")
	}
	s := NewBytes([]byte(doc))
	s.AllowNonFinite = true
	var got []string
	for {
		tok, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if tok.Kind == Number {
			got = append(got, string(tok.Bytes))
		}
		if tok.Kind == ArrayEnd {
			break
		}
	}
	if strings.Join(got, " ") != "NaN Infinity -Infinity -1.5" {
		t.Fatalf("%q", got)
	}
	for _, bad := range []string{`[Inf]`, `[-Inf]`, `[Nan]`} {
		s := NewBytes([]byte(bad))
		s.AllowNonFinite = true
		if _, err := readAll(s); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func readAll(s *Scanner) ([]Token, error) {
	var out []Token
	for {
		tok, err := s.Next()
		if err != nil {
			return out, err
		}
		out = append(out, tok)
		if s.Depth() == 0 {
			return out, nil
		}
	}
}

// AllowNonFinite reads Python's Infinity, -Infinity and NaN as number tokens
// that FloatOf refuses; without it they are invalid.
func TestNonFiniteFloatOf(t *testing.T) {
	doc := `{"a":Infinity,"b":-Infinity,"c":NaN,"d":-1}`
	s := NewBytes([]byte(doc))
	if err := s.Skip(mustNext(t, s)); err == nil {
		t.Fatal("Infinity accepted without AllowNonFinite")
	}
	s = NewBytes([]byte(doc))
	s.AllowNonFinite = true
	w := Walker{S: s}
	var got []string
	err := w.Document("doc", func(key []byte) error {
		tok, err := w.Value()
		if err != nil {
			return err
		}
		if tok.Kind != Number {
			t.Errorf("%s: %v", key, tok.Kind)
		}
		if _, err := w.FloatOf(tok, "x"); err == nil && string(key) != "d" {
			t.Errorf("%s: FloatOf accepted %s", key, tok.Bytes)
		}
		got = append(got, string(tok.Bytes))
		return nil
	})
	if err != nil || strings.Join(got, " ") != "Infinity -Infinity NaN -1" {
		t.Fatalf("%v %v", got, err)
	}
}

func mustNext(t *testing.T, s *Scanner) Token {
	t.Helper()
	tok, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
