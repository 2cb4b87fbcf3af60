package table

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

type Object = evidence.Object

// fastStrings are texts the string encoder treats specially: escapes,
// non-ASCII, U+2028, words of plain ASCII with a special byte in them,
// and invalid UTF-8.
var fastStrings = []string{"", "s\"é", "plain", "sha256:79ce599211b2e089da859fc9202bcd58ca4178216b63a26b297af976ec114eed",
	"tab\there", "\x00\x1f", "\u2028", "back\\slash-and-more-text", "😀 emoji", "bad\xff"}

// fill sets every settable scalar of v from r (the first round: distinct
// fixed values), and every Null valid or not.
func fill(v reflect.Value, r *rand.Rand, valid bool, n *int) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		*n++
		switch f.Kind() {
		case reflect.String:
			if r == nil {
				f.SetString("s\"é" + string(rune('a'+*n%26)))
			} else {
				f.SetString(fastStrings[r.IntN(len(fastStrings))])
			}
		case reflect.Int64, reflect.Int:
			if r == nil {
				f.SetInt(int64(*n) * -1234567)
			} else {
				f.SetInt(int64(r.Uint64()) >> r.IntN(64))
			}
		case reflect.Float64:
			switch {
			case r == nil:
				f.SetFloat(float64(*n) + 0.25)
			case r.IntN(10) == 0:
				f.SetFloat([]float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e21, 1e-7}[r.IntN(6)])
			default:
				f.SetFloat(math.Float64frombits(r.Uint64()))
			}
		case reflect.Bool:
			f.SetBool(*n%2 == 0)
		case reflect.Map, reflect.Interface, reflect.Slice:
			if r != nil {
				setJSONField(f, r)
			}
		case reflect.Struct:
			fill(f, r, valid, n)
			if _, ok := f.Addr().Interface().(nullable); ok {
				f.Field(1).SetBool(valid)
			}
		}
	}
}

// AppendValues, which reads scalars at their offsets, and an Encoder,
// with the artifact id encoded once, write for every schema exactly what
// the canonical encoding of Values writes (or fail alike), with every
// scalar set (distinct values, then random ones) and every Null valid and
// not.
func TestAppendValuesOffsets(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range All() {
		for round := range 40 {
			rr := r
			if round < 2 {
				rr = nil
			}
			valid := round%2 == 0
			artifact := "art"
			if round%7 == 3 {
				artifact = fastStrings[r.IntN(len(fastStrings))]
			}
			rv := reflect.New(s.codec.typ)
			n := 0
			fill(rv.Elem(), rr, valid, &n)
			got, gerr := s.AppendValues(nil, rv.Interface(), artifact)
			enc, eerr := s.Encoder(artifact).Append([]byte("x"), rv.Interface())
			o, err := s.Values(rv.Interface(), artifact)
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			want, werr := evidence.AppendCanonical(nil, o)
			if (gerr == nil) != (werr == nil) || (eerr == nil) != (werr == nil) {
				t.Fatalf("%s: errors %v, %v; canonical %v", s.Name, gerr, eerr, werr)
			}
			if werr != nil {
				if fmt.Sprint(gerr) != fmt.Sprint(eerr) {
					t.Fatalf("%s: errors differ: %v vs %v", s.Name, gerr, eerr)
				}
				continue
			}
			// The same values as an object take the general path.
			byObject, err := s.AppendValues(nil, maps.Clone(o), artifact)
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			if !bytes.Equal(got, want) || !bytes.Equal(enc[1:], want) || !bytes.Equal(byObject, want) {
				t.Fatalf("%s (round %d):\n got %s\n enc %s\n obj %s\nwant %s", s.Name, round, got, enc[1:], byObject, want)
			}
		}
		// A nil *T is not a row.
		if _, err := s.AppendValues(nil, reflect.Zero(reflect.PointerTo(s.codec.typ)).Interface(), "art"); err == nil {
			t.Fatalf("%s: a nil row encodes", s.Name)
		}
	}
}

// setJSONField sets a json column to null, empty or a few values.
func setJSONField(f reflect.Value, r *rand.Rand) {
	if r.IntN(4) == 0 {
		f.SetZero()
		return
	}
	values := []any{"x\u2028", int64(1) << 60, 2.5, Object{"b": "é", "a": []any{int64(1), nil}}, nil, true}
	switch f.Kind() {
	case reflect.Map:
		o := Object{}
		for range r.IntN(20) {
			o[fastStrings[r.IntN(len(fastStrings)-1)]+string(rune('a'+r.IntN(26)))] = values[r.IntN(len(values))]
		}
		f.Set(reflect.ValueOf(o))
	case reflect.Interface:
		v := values[r.IntN(len(values))]
		if v != nil {
			f.Set(reflect.ValueOf(v))
		}
	case reflect.Slice:
		xs := reflect.MakeSlice(f.Type(), r.IntN(4), 4)
		for i := range xs.Len() {
			e := xs.Index(i)
			switch e.Kind() {
			case reflect.String:
				e.SetString(fastStrings[r.IntN(len(fastStrings))])
			case reflect.Int64:
				e.SetInt(int64(r.Uint64()) >> r.IntN(64))
			default:
				if v := values[r.IntN(len(values))]; v != nil {
					e.Set(reflect.ValueOf(v))
				}
			}
		}
		f.Set(xs)
	}
}
