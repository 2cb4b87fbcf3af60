package jsonscan

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// plainText agrees with a byte-by-byte check on every byte value at every
// position of a word and on random text.
func TestPlainText(t *testing.T) {
	ref := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c >= 0x80 || c == '\\' {
				return false
			}
		}
		return true
	}
	for n := range 20 {
		for pos := range n {
			for c := range 256 {
				b := bytes.Repeat([]byte{'a'}, n)
				b[pos] = byte(c)
				if got, want := plainText(b), ref(b); got != want {
					t.Fatalf("plainText(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(0x18 + r.IntN(0x70))
		}
		if got, want := plainText(b), ref(b); got != want {
			t.Fatalf("plainText(%q) = %v, want %v", b, got, want)
		}
	}
}

// The fingerprint check finds every duplicate and no false one, in
// objects small and large, with keys that share length and edges.
func TestDuplicateKeysFingerprint(t *testing.T) {
	for _, n := range []int{2, 9, 31, 32, 33, 40, 63, 64, 65, 100, 200} {
		var keys []string
		for i := range n {
			keys = append(keys, "key_"+string(rune('a'+i%26))+"_middle_"+string(rune('a'+i/26))+"_end")
		}
		var doc bytes.Buffer
		doc.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				doc.WriteString(",")
			}
			doc.WriteString(`"` + k + `":1`)
		}
		good := doc.String() + "}"
		if err := drain(good); err != nil {
			t.Fatalf("%d distinct keys: %v", n, err)
		}
		for _, dup := range []int{0, n / 2, n - 1} {
			bad := doc.String() + `,"` + keys[dup] + `":2}`
			if err := drain(bad); err == nil {
				t.Fatalf("%d keys: duplicate of key %d accepted", n, dup)
			}
		}
	}
}

func drain(doc string) error {
	s := NewBytes([]byte(doc))
	for {
		tok, err := s.Next()
		if err != nil {
			return err
		}
		if tok.Kind == EOF {
			return nil
		}
	}
}

// skipBoth skips doc's first value with Skip (the fast path where it
// applies) and token by token, and reports both outcomes.
func skipBoth(doc []byte) (fast, slow string) {
	run := func(tokens bool, chunk int) string {
		s := NewBytes(doc)
		if chunk > 0 {
			s = New(&chunkReader{b: doc, n: chunk})
		}
		tok, err := s.Next()
		if err != nil {
			return "first: " + err.Error()
		}
		if tokens {
			depth := len(s.stack) - 1
			if tok.Kind == ObjectStart || tok.Kind == ArrayStart {
				for len(s.stack) > depth {
					if _, err = s.Next(); err != nil {
						break
					}
				}
			}
		} else {
			err = s.Skip(tok)
		}
		if err == nil {
			err = s.CheckEnd()
		}
		msg := "ok"
		if err != nil {
			msg = err.Error()
		}
		return fmt.Sprintf("%s @%d line %d", msg, s.Offset(), s.Line())
	}
	fast = run(false, 0)
	if c := run(false, 5); c != fast {
		return fast + " / read in chunks: " + c, run(true, 0)
	}
	return fast, run(true, 0)
}

// chunkReader reads n bytes at a time, so values cross the scanner's
// buffer end.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n, len(r.b))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

var skipSeeds = []string{
	`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`,
	`[1,2,3]`, `{}`, `[]`, `[{}]`, `{"a":{}}`, `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`,
	`{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{"a":}`, `{"a":01}`, `[1.]`, `[-]`, `[1e]`, `["\u00e9"]`,
	`["é"]`, "[\"a\tb\"]", `[nul]`, `[truex]`, "{\n\"a\"\n:\n[\n1\n]\n}\n", `[[[[[[[[[[1]]]]]]]]]]`,
	`{"x":[1,2],"y":"z"} trailing`, `[1,2`, `{"a":"b"`, `[NaN]`, `[-Infinity]`, `{"k":"v\\"}`,
}

func TestSkipFastAgrees(t *testing.T) {
	for _, d := range skipSeeds {
		if fast, slow := skipBoth([]byte(d)); fast != slow {
			t.Errorf("%q: Skip %s, tokens %s", d, fast, slow)
		}
	}
	var big bytes.Buffer
	big.WriteString("{")
	for i := range 100 {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `"k%d":[%d,{"v":%d}]`, i, i, i)
	}
	for _, tail := range []string{"}", `,"k50":1}`, `,"k99":1}`} {
		d := big.String() + tail
		if fast, slow := skipBoth([]byte(d)); fast != slow {
			t.Errorf("large object +%s: Skip %s, tokens %s", tail, fast, slow)
		}
	}
}

func FuzzSkip(f *testing.F) {
	for _, d := range skipSeeds {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if fast, slow := skipBoth(doc); fast != slow {
			t.Fatalf("%q: Skip %s, tokens %s", doc, fast, slow)
		}
	})
}

// numberEndRef is what the scanner did before numberEnd: the run of
// number bytes, then the grammar.
func numberEndRef(b []byte, i int) int {
	j := i
	for j < len(b) && numberByte[b[j]] {
		j++
	}
	if !validNumber(b[i:j]) {
		return -1
	}
	return j
}

// plainEnd, digitEnd and numberEnd agree with byte-by-byte references on
// every byte value at every position of short words (the eight-byte
// paths and the tails) and on random number-like text.
func TestEightByteScans(t *testing.T) {
	plainRef := func(b []byte, i int) int {
		for ; i < len(b); i++ {
			if b[i] == '"' {
				return i
			}
			if b[i] < 0x20 || b[i] >= 0x80 || b[i] == '\\' {
				return -1
			}
		}
		return -1
	}
	digitRef := func(b []byte, i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	for n := 1; n < 20; n++ {
		for pos := range n {
			for c := range 256 {
				p := bytes.Repeat([]byte{'a'}, n)
				p[pos] = byte(c)
				if got, want := plainEnd(p, 0), plainRef(p, 0); got != want {
					t.Fatalf("plainEnd(%q) = %d, want %d", p, got, want)
				}
				d := bytes.Repeat([]byte{'7'}, n)
				d[pos] = byte(c)
				if got, want := digitEnd(d, 0), digitRef(d, 0); got != want {
					t.Fatalf("digitEnd(%q) = %d, want %d", d, got, want)
				}
				if d[0] == '-' || d[0]-'0' <= 9 {
					if got, want := numberEnd(d, 0), numberEndRef(d, 0); got != want {
						t.Fatalf("numberEnd(%q) = %d, want %d", d, got, want)
					}
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "0123456789-+.eE,]x"
	for range 200000 {
		b := make([]byte, 1+r.IntN(30))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if b[0] != '-' && b[0]-'0' > 9 {
			continue
		}
		if got, want := numberEnd(b, 0), numberEndRef(b, 0); got != want {
			t.Fatalf("numberEnd(%q) = %d, want %d", b, got, want)
		}
	}
}

func FuzzNumberEnd(f *testing.F) {
	for _, s := range []string{"0", "-0", "01", "1.5e+3", "1.", "1e", "-", "12345678901234567890.5", "0.0000001E-7,"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || (b[0] != '-' && b[0]-'0' > 9) {
			return
		}
		if got, want := numberEnd(b, 0), numberEndRef(b, 0); got != want {
			t.Fatalf("numberEnd(%q) = %d, want %d", b, got, want)
		}
	})
}

// skipBounded is skipBoth under tight bounds: Skip and the tokens must
// fail alike on a crossed depth or token bound.
func skipBounded(doc []byte, depth, token int) (fast, slow string) {
	run := func(tokens bool) string {
		s := NewBytes(doc)
		s.MaxDepth, s.MaxToken = depth, token
		tok, err := s.Next()
		if err == nil {
			if tokens {
				d := len(s.stack) - 1
				if tok.Kind == ObjectStart || tok.Kind == ArrayStart {
					for len(s.stack) > d {
						if _, err = s.Next(); err != nil {
							break
						}
					}
				}
			} else {
				err = s.Skip(tok)
			}
		}
		msg := "ok"
		if err != nil {
			msg = err.Error()
		}
		return fmt.Sprintf("%s @%d line %d", msg, s.Offset(), s.Line())
	}
	return run(false), run(true)
}

// Containers nested in a skipped value are checked for depth, token size
// and duplicate keys as the token path checks them, nested objects of
// more than smallObject keys included (skipFast leaves those to Next).
func TestSkipFastNested(t *testing.T) {
	docs := []string{
		`{"a":{"b":{"c":[1,[2,[3]]]}}}`, `[[[[1]]]]`, `{"a":[{"k":1,"k":2}]}`, `[{"k":1},{"k":2}]`,
		`{"m":{"value":1.25,"unit":"ms"},"n":{"value":[1,2],"unit":"ms"}}`, `{"a":{"b":1,"c":{"b":2},"b":3}}`,
		`{"long_key_name":"a long string value","k":12345678}`, `[{"a":1,"b":{"a":1,"b":2}}]`,
	}
	for _, d := range docs {
		for depth := 1; depth <= 5; depth++ {
			for _, token := range []int{1, 2, 4, 8, 0} {
				if fast, slow := skipBounded([]byte(d), depth, token); fast != slow {
					t.Errorf("%q depth %d token %d: Skip %s, tokens %s", d, depth, token, fast, slow)
				}
			}
		}
	}
	for _, n := range []int{smallObject - 1, smallObject, smallObject + 1, 3 * smallObject} {
		var in bytes.Buffer
		in.WriteString(`[{`)
		for i := range n {
			if i > 0 {
				in.WriteString(",")
			}
			fmt.Fprintf(&in, `"key%d":%d`, i, i)
		}
		for _, tail := range []string{`}]`, `,"key0":1}]`, fmt.Sprintf(`,"key%d":1}]`, n-1)} {
			d := in.String() + tail
			if fast, slow := skipBoth([]byte(d)); fast != slow {
				t.Errorf("nested object of %d keys +%s: Skip %s, tokens %s", n, tail, fast, slow)
			}
		}
	}
}

// valueBoth walks doc reading every value with Walker.Value and every
// object with Walker.Members (their fast paths where they apply) and with
// Next alone, under a token and a depth bound,
// and reports the first pair of walks (whole, then in small chunks) that
// differ: the tokens with their offsets, the error, and where the scanner
// stopped.
func valueBoth(doc []byte, maxTok, maxDepth int) (fast, slow string) {
	run := func(useValue bool, chunk int) string {
		s := NewBytes(doc)
		if chunk > 0 {
			s = New(&chunkReader{b: doc, n: chunk})
		}
		s.MaxToken, s.MaxDepth = maxTok, maxDepth
		w := &Walker{S: s}
		var got strings.Builder
		value := func() (Token, error) {
			if useValue {
				return w.Value()
			}
			tok, err := s.Next()
			if err == nil && !isValueStart(tok.Kind) {
				err = s.Errorf(tok, "expected a value, found %s", tok.Kind)
			}
			return tok, err
		}
		var walk func(tok Token) error
		walk = func(tok Token) error {
			fmt.Fprintf(&got, "%s:%q@%d;", tok.Kind, tok.Bytes, tok.Offset)
			switch tok.Kind {
			case ObjectStart:
				member := func(key []byte) error {
					fmt.Fprintf(&got, "key %q;", key)
					v, err := value()
					if err != nil {
						return err
					}
					return walk(v)
				}
				if useValue {
					return w.Members(tok, "o", member)
				}
				// Members as it reads without its fast path.
				for {
					k, err := s.Next()
					if err != nil || k.Kind == ObjectEnd {
						return err
					}
					if !k.IsKey {
						return s.Errorf(k, "%s: expected a key, found %s", "o", k.Kind)
					}
					if err := member(k.Bytes); err != nil {
						return err
					}
				}
			case ArrayStart:
				for {
					// A close goes to Next; anything else is read as
					// a value, so elements take the fast path too.
					if s.skipSpace() && s.buf[s.pos] == ']' {
						end, err := s.Next()
						fmt.Fprintf(&got, "%s;", end.Kind)
						return err
					}
					v, err := value()
					if err != nil {
						return err
					}
					if err := walk(v); err != nil {
						return err
					}
				}
			}
			return nil
		}
		tok, err := value()
		if err == nil {
			err = walk(tok)
		}
		if err == nil {
			err = s.CheckEnd()
		}
		msg := "ok"
		if err != nil {
			msg = err.Error()
		}
		return fmt.Sprintf("%s %s @%d line %d", got.String(), msg, s.Offset(), s.Line())
	}
	// Read whole and in chunks, the scanner bounds tokens differently
	// (a number whole in memory is never too long), so each way of
	// reading is compared with itself.
	fast, slow = run(true, 0), run(false, 0)
	if fast == slow {
		fast, slow = run(true, 3), run(false, 3)
	}
	return fast, slow
}

var valueSeeds = append([]string{
	`{"a":"x","b":12,"c":-0.5e+3,"d":[1,"y",[2]],"e":{"f":"g"}}`, `["a\\u00e9",1]`, `{"a":"é"}`, `{"a":01}`,
	`{"a":1.}`, `{"a":-}`, `{"a": 1}`, `[1 ,2]`, `{"a":"toolongvalue"}`, `[12345678901]`, `[1,]`, `{"a":1,"a":2}`,
	`{"a":NaN}`, `[-Infinity]`, "[\"a\tb\"]", `[1`, `{"a":"b`, `{"a":12`, `{"a":1,"b":2,"a":3}`, `{"a":1,}`,
	`{"a":1 ,"b":2}`, `{"a":1, "b":2}`, `{"a" :1}`, `{"toolongkey":1}`, `{"a":{},"b":{"c":{}}}`, `{"a":1,"b"`, `{"a":1,"b":`,
	`{"a":1,"\u0062":2,"b":3}`, `{"é":1}`, `{"a":1}}`, `{"a":1,]`, `{,"a":1}`, `{"a":1"b":2}`, `[[[[1]]]]`, `{"a":{"b":{"c":[]}}}`, `{"a":[{"b":[1]}]}`,
}, skipSeeds...)

func TestValueAgrees(t *testing.T) {
	for _, d := range valueSeeds {
		for _, tok := range []int{0, 4} {
			for _, depth := range []int{0, 1, 2, 3} {
				if fast, slow := valueBoth([]byte(d), tok, depth); fast != slow {
					t.Errorf("%q token bound %d depth %d:\n Value %s\n Next  %s", d, tok, depth, fast, slow)
				}
			}
		}
	}
}

func FuzzValue(f *testing.F) {
	for _, d := range valueSeeds {
		f.Add([]byte(d), uint8(0))
	}
	f.Fuzz(func(t *testing.T, doc []byte, bound uint8) {
		tok, depth := int(bound%16), int(bound/16%4)
		if fast, slow := valueBoth(doc, tok, depth); fast != slow {
			t.Fatalf("%q token bound %d depth %d:\n Value %s\n Next  %s", doc, tok, depth, fast, slow)
		}
	})
}
