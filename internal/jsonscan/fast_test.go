package jsonscan

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
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
