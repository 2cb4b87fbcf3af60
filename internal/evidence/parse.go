package evidence

import (
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
	v, err := s.Value(tok, jsonscan.ValueLimits{})
	if err != nil {
		return nil, err
	}
	if err := s.CheckEnd(); err != nil {
		return nil, err
	}
	return v, nil
}
