package evidence

import (
	"encoding/json"
	"fmt"

	"github.com/flameox/flameox/internal/jsonscan"
)

// ParseValue parses one JSON document into the canonical domain: Object,
// []any, string, json.Number, bool and nil. Repeated keys, invalid UTF-8
// and nesting beyond maxDepth (0 means 64) are errors.
func ParseValue(b []byte, maxDepth int) (any, error) {
	if maxDepth == 0 {
		maxDepth = 64
	}
	s := jsonscan.NewBytes(b)
	s.MaxDepth = maxDepth
	tok, err := s.Next()
	if err != nil {
		return nil, err
	}
	v, err := buildValue(s, tok)
	if err != nil {
		return nil, err
	}
	if err := s.CheckEnd(); err != nil {
		return nil, err
	}
	return v, nil
}

func buildValue(s *jsonscan.Scanner, tok jsonscan.Token) (any, error) {
	switch tok.Kind {
	case jsonscan.String:
		return string(tok.Bytes), nil
	case jsonscan.Number:
		return json.Number(tok.Bytes), nil
	case jsonscan.True:
		return true, nil
	case jsonscan.False:
		return false, nil
	case jsonscan.Null:
		return nil, nil
	case jsonscan.ArrayStart:
		arr := []any{}
		for {
			t, err := s.Next()
			if err != nil {
				return nil, err
			}
			if t.Kind == jsonscan.ArrayEnd {
				return arr, nil
			}
			v, err := buildValue(s, t)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
	case jsonscan.ObjectStart:
		obj := Object{}
		for {
			t, err := s.Next()
			if err != nil {
				return nil, err
			}
			if t.Kind == jsonscan.ObjectEnd {
				return obj, nil
			}
			key := string(t.Bytes)
			vt, err := s.Next()
			if err != nil {
				return nil, err
			}
			v, err := buildValue(s, vt)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
	}
	return nil, fmt.Errorf("json: unexpected %s", tok.Kind)
}
