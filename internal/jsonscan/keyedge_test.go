package jsonscan

import (
	"strings"
	"testing"
	"testing/iotest"
)

// A key whose closing quote is the last byte read so far must survive the
// refill that reads its ':'.
func TestKeyAtReadBoundary(t *testing.T) {
	doc := `{"runs" : [1], "version":"x"}`
	s := New(iotest.OneByteReader(strings.NewReader(doc)))
	var keys []string
	for {
		tok, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if tok.Kind == EOF {
			break
		}
		if tok.IsKey {
			keys = append(keys, string(tok.Bytes))
		}
	}
	if strings.Join(keys, ",") != "runs,version" {
		t.Fatalf("keys read through a one-byte reader: %q", keys)
	}
}

// A key without a value is a syntax error, not an empty object.
func TestKeyWithoutValue(t *testing.T) {
	for _, doc := range []string{`{"a":}`, `{"a":1,"b":}`} {
		s := NewBytes([]byte(doc))
		var err error
		for err == nil {
			var tok Token
			tok, err = s.Next()
			if tok.Kind == EOF {
				break
			}
		}
		if err == nil {
			t.Errorf("%s was accepted", doc)
		}
	}
}
