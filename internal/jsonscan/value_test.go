package jsonscan

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func valueOf(t *testing.T, doc string, lim ValueLimits) (any, error) {
	t.Helper()
	s := NewBytes([]byte(doc))
	tok, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	return s.Value(tok, lim)
}

func TestValue(t *testing.T) {
	v, err := valueOf(t, `{"a":[1,2.5,"x",true,null,{}],"b":{"c":-0}}`, ValueLimits{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": []any{json.Number("1"), json.Number("2.5"), "x", true, nil, map[string]any{}},
		"b": map[string]any{"c": json.Number("-0")}}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("%#v", v)
	}
}

func TestValueBounds(t *testing.T) {
	for _, c := range []struct {
		doc   string
		lim   ValueLimits
		bound string
	}{
		{`[[[1]]]`, ValueLimits{MaxDepth: 2}, "depth"},
		{`[1,2,3]`, ValueLimits{MaxEntries: 2}, "entries"},
		{`{"a":1,"b":2,"c":3}`, ValueLimits{MaxEntries: 2}, "entries"},
		{`["aaaaaaaaaaaaaaaa","b"]`, ValueLimits{End: 8}, "bytes"},
	} {
		_, err := valueOf(t, c.doc, c.lim)
		var be *BoundError
		if !errors.As(err, &be) || be.Bound != c.bound || !errors.Is(err, ErrBound) {
			t.Errorf("%s: got %v, want a %s bound", c.doc, err, c.bound)
		}
	}
	if _, err := valueOf(t, `[[1]]`, ValueLimits{MaxDepth: 2}); err != nil {
		t.Errorf("depth 2 within MaxDepth 2: %v", err)
	}
	v, err := valueOf(t, `[7]`, ValueLimits{Number: func(b []byte) (any, error) { return string(b) + "!", nil }})
	if err != nil || v.([]any)[0] != "7!" {
		t.Errorf("Number hook: %v %v", v, err)
	}
}
