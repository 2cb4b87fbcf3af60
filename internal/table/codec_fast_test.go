package table

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// AppendValues, which reads scalars at their offsets, writes for every
// schema exactly what the canonical encoding of Values writes, with every
// scalar set (distinct values) and with every Null valid and not.
func TestAppendValuesOffsets(t *testing.T) {
	for _, s := range All() {
		for _, valid := range []bool{true, false} {
			rv := reflect.New(s.codec.typ)
			n := 0
			var fill func(v reflect.Value)
			fill = func(v reflect.Value) {
				for i := range v.NumField() {
					f := v.Field(i)
					if !f.CanSet() {
						continue
					}
					n++
					switch f.Kind() {
					case reflect.String:
						f.SetString("s\"é" + string(rune('a'+n%26)))
					case reflect.Int64, reflect.Int:
						f.SetInt(int64(n) * -1234567)
					case reflect.Float64:
						f.SetFloat(float64(n) + 0.25)
					case reflect.Bool:
						f.SetBool(n%2 == 0)
					case reflect.Struct:
						fill(f)
						if _, ok := f.Addr().Interface().(nullable); ok {
							f.Field(1).SetBool(valid)
						}
					}
				}
			}
			fill(rv.Elem())
			got, err := s.AppendValues(nil, rv.Interface(), "art")
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			o, err := s.Values(rv.Interface(), "art")
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			want, err := evidence.AppendCanonical(nil, o)
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s (valid %v):\n got %s\nwant %s", s.Name, valid, got, want)
			}
		}
	}
}
