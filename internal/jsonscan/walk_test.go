package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func walker(doc string) *Walker { return &Walker{S: NewBytes([]byte(doc))} }

// TestWalkerTypedReads reads each typed value from a document and checks
// what it accepts and what it refuses.
func TestWalkerTypedReads(t *testing.T) {
	ok := []struct {
		doc  string
		read func(w *Walker) (any, error)
		want any
	}{
		{`-9223372036854775808`, func(w *Walker) (any, error) { return w.Int("n") }, int64(math.MinInt64)},
		{`42`, func(w *Walker) (any, error) { return w.Int("n") }, int64(42)},
		{`null`, func(w *Walker) (any, error) { n, ok, err := w.OptionalInt("n"); return fmt.Sprint(n, ok), err }, "0 false"},
		{`-7`, func(w *Walker) (any, error) { n, ok, err := w.OptionalInt("n"); return fmt.Sprint(n, ok), err }, "-7 true"},
		{`2.5e3`, func(w *Walker) (any, error) { return w.Float("x") }, 2500.0},
		{`true`, func(w *Walker) (any, error) { return w.Bool("b") }, true},
		{`false`, func(w *Walker) (any, error) { return w.Bool("b") }, false},
		{`"é"`, func(w *Walker) (any, error) { return w.String("s") }, "é"},
		{`"héllo"`, func(w *Walker) (any, error) { s, cut, _, err := w.Str("s", 2); return fmt.Sprint(s, " ", cut), err }, "h true"},
		{`null`, func(w *Walker) (any, error) { _, _, null, err := w.Str("s", 0); return null, err }, true},
		{`[1, -2 ,3]`, func(w *Walker) (any, error) {
			var out []int64
			err := w.Ints("ids", func(n int64) error { out = append(out, n); return nil })
			return out, err
		}, []int64{1, -2, 3}},
	}
	for _, c := range ok {
		got, err := c.read(walker(c.doc))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v %v, want %v", c.doc, got, err, c.want)
		}
	}
	bad := []struct {
		doc, msg string
		read     func(w *Walker) error
	}{
		{`1.5`, "n must be an integer, found 1.5", func(w *Walker) error { _, err := w.Int("n"); return err }},
		{`1e2`, "n must be an integer", func(w *Walker) error { _, err := w.Int("n"); return err }},
		{`9223372036854775808`, "n must be an integer", func(w *Walker) error { _, err := w.Int("n"); return err }},
		{`"1"`, "n must be an integer, found string", func(w *Walker) error { _, err := w.Int("n"); return err }},
		{`null`, "n must be an integer, found null", func(w *Walker) error { _, err := w.Int("n"); return err }},
		{`1e999`, "x 1e999 is out of range", func(w *Walker) error { _, err := w.Float("x"); return err }},
		{`"1"`, "x must be a number", func(w *Walker) error { _, err := w.Float("x"); return err }},
		{`1`, "b must be a boolean", func(w *Walker) error { _, err := w.Bool("b"); return err }},
		{`null`, "s must be a string, found null", func(w *Walker) error { _, err := w.String("s"); return err }},
		{`{}`, "o must be an array, found {", func(w *Walker) error { _, err := w.Expect(ArrayStart, "o"); return err }},
		{`[1.5]`, "want an integer", func(w *Walker) error { return w.Ints("ids", func(int64) error { return nil }) }},
		{`{"a":1}`, "ids must be an array", func(w *Walker) error { return w.Ints("ids", func(int64) error { return nil }) }},
	}
	for _, c := range bad {
		err := c.read(walker(c.doc))
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want a located error containing %q", c.doc, err, c.msg)
		}
	}
}

// TestWalkerContainers walks nested objects and arrays, with null where
// a container may be absent, and checks that errors keep their place.
func TestWalkerContainers(t *testing.T) {
	doc := "{\"a\":{\"x\":[1,{\"y\":null}]},\n\"b\":null,\"c\":[],\"d\":\"skip me\"}"
	w := walker(doc)
	var trace []string
	err := w.Object("doc", func(key []byte) error {
		k := string(key)
		switch k {
		case "a":
			return w.Object("a", func(key []byte) error {
				return w.Array("a.x", func(i int, el Token) error {
					if el.Kind == Number {
						n, err := w.IntOf(el, "a.x[0]")
						trace = append(trace, fmt.Sprint("x", i, "=", n))
						return err
					}
					return w.Members(el, "a.x[1]", func(key []byte) error {
						null, err := w.ObjectOrNull("y", func([]byte) error { return nil })
						trace = append(trace, fmt.Sprint(string(key), " null=", null))
						return err
					})
				})
			})
		case "b":
			null, err := w.ArrayOrNull("b", func(int, Token) error { return nil })
			trace = append(trace, fmt.Sprint("b null=", null))
			return err
		case "c":
			null, err := w.ArrayOrNull("c", func(int, Token) error { t.Fatal("empty array has an element"); return nil })
			trace = append(trace, fmt.Sprint("c null=", null))
			return err
		}
		return w.SkipValue()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.S.CheckEnd(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trace, ","); got != "x0=1,y null=true,b null=true,c null=false" {
		t.Fatalf("walk: %s", got)
	}

	// Errors name the field and say where they are.
	for _, c := range []struct {
		doc, msg  string
		line, off int
	}{
		{`{"a":[1]}`, "a must be an object, found [", 1, 5},
		{"{\n\"a\":{\"b\":{}}}", "a must be an array, found {", 2, 11},
		{`[1,2]`, "doc must be an object", 1, 0},
	} {
		w := walker(c.doc)
		err := w.Object("doc", func(key []byte) error {
			return w.Object("a", func(key []byte) error {
				return w.Array("a", func(int, Token) error { return nil })
			})
		})
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(se.Msg, c.msg) || se.Line != c.line || se.Offset != int64(c.off) {
			t.Errorf("%s: got %v, want %q at line %d byte %d", c.doc, err, c.msg, c.line, c.off)
		}
	}
	// A close where a value belongs never passes for a value.
	w = walker(`{}`)
	w.S.Next()
	if _, err := w.Value(); err == nil || !strings.Contains(err.Error(), "expected a value, found }") {
		t.Fatalf("a close read as a value: %v", err)
	}
	// A duplicate key fails in the walk, not after it.
	w = walker(`{"a":1,"a":2}`)
	err = w.Object("doc", func([]byte) error { return w.SkipValue() })
	if !errors.Is(err, ErrDuplicateKey) {
		t.Fatalf("duplicate key: %v", err)
	}
}

func TestNewAtOffsets(t *testing.T) {
	doc := []byte(`{"pad":"xxxx","arr":[1,2,oops]}`)
	at := int64(bytes.Index(doc, []byte("[1,")))
	s := NewAt(bytes.NewReader(doc[at:]), at)
	tok, err := s.Next()
	if err != nil || tok.Offset != at {
		t.Fatalf("first token at %d (%v), want %d", tok.Offset, err, at)
	}
	err = s.Ints(func(int64) error { return nil })
	var se *Error
	if !errors.As(err, &se) || se.Offset != int64(bytes.Index(doc, []byte("oops"))) || se.Line != 0 {
		t.Fatalf("got %v, want the document offset of oops and no line", err)
	}
	if strings.Contains(err.Error(), "line") {
		t.Fatalf("a scanner from NewAt does not know lines: %v", err)
	}
}

func TestErrRead(t *testing.T) {
	boom := errors.New("disk on fire")
	s := New(io.MultiReader(strings.NewReader(`{"a":[1,2`), iotest.ErrReader(boom)))
	tok, _ := s.Next()
	err := s.Skip(tok)
	if !errors.Is(err, ErrRead) || !errors.Is(err, boom) {
		t.Fatalf("a failed read: %v", err)
	}
	s = New(strings.NewReader(`{"a":[1,2`))
	tok, _ = s.Next()
	if err := s.Skip(tok); err == nil || errors.Is(err, ErrRead) {
		t.Fatalf("a truncated document is not a read failure: %v", err)
	}
}

func TestBoundHook(t *testing.T) {
	mine := errors.New("limit receipt")
	var gotErr error
	var gotOff int64
	hook := func(err error, off int64) error {
		gotErr, gotOff = err, off
		if err == ErrDepth {
			return nil // keep the scanner's error
		}
		return mine
	}
	s := New(strings.NewReader(`{"a":"` + strings.Repeat("x", 100) + `"}`))
	s.MaxToken, s.Bound = 10, hook
	tok, _ := s.Next()
	if err := s.Skip(tok); err != mine || gotErr != ErrTokenTooLong || gotOff != 5 {
		t.Fatalf("token bound: %v (%v at %d)", err, gotErr, gotOff)
	}
	s = New(strings.NewReader(`[[[[1]]]]`))
	s.MaxDepth, s.Bound = 2, hook
	tok, _ = s.Next()
	if err := s.Skip(tok); !errors.Is(err, ErrDepth) || gotOff != 2 {
		t.Fatalf("depth bound: %v at %d", err, gotOff)
	}
}

// FuzzWalker walks arbitrary documents with the walker's containers and
// typed reads: it must never panic, never accept what encoding/json
// rejects, and fail only with located errors.
func FuzzWalker(f *testing.F) {
	for _, d := range docs[:9] {
		f.Add([]byte(d))
	}
	f.Add([]byte(`{"a":1,"b":[1,2,3],"c":{"d":true},"e":null,"f":1.5,"g":"s","h":[[1],[2,3]]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		w := &Walker{S: New(iotest.HalfReader(bytes.NewReader(b)))}
		var walk func(tok Token) error
		walk = func(tok Token) error {
			switch tok.Kind {
			case ObjectStart:
				return w.Members(tok, "o", func(key []byte) error {
					if len(key)%2 == 0 {
						return w.SkipValue()
					}
					v, err := w.Value()
					if err != nil {
						return err
					}
					return walk(v)
				})
			case ArrayStart:
				return w.Elements(tok, "a", func(i int, el Token) error { return walk(el) })
			case Number:
				// Type errors are the caller's to judge; the reads must
				// agree with each other.
				n, ierr := w.IntOf(tok, "n")
				x, ferr := w.FloatOf(tok, "n")
				if ierr == nil && ferr == nil && float64(n) != x {
					t.Fatalf("%s: Int %d, Float %v", tok.Bytes, n, x)
				}
			}
			return nil
		}
		tok, err := w.Value()
		if err == nil {
			err = walk(tok)
		}
		if err == nil {
			err = w.S.CheckEnd()
		}
		var se *Error
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("unlocated error %T: %v", err, err)
		}
		if err == nil && !json.Valid(b) {
			t.Fatalf("walked invalid JSON %q", b)
		}
	})
}
