package evidence

import (
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/jsonscan"
)

// A decoder that meets the token bound of a plain scanner and wraps the
// error as a decode failure still reports a crossed parser ceiling:
// LIMIT_EXCEEDED with the receipt, at the token.
func TestWrapTokenBound(t *testing.T) {
	s := jsonscan.NewBytes([]byte(`{"a":"` + strings.Repeat("x", 40) + `"}`))
	s.MaxToken = 16
	var err error
	for err == nil {
		_, err = s.Next()
	}
	f := Wrap(CodeDecodeFailure, err, "profile")
	lim, _ := f.Details["limit"].(Object)
	if f.Code != CodeLimitExceeded || lim["name"] != jsonscan.TokenLimit || lim["value"] != int64(16) || f.Location.Offset != 5 {
		t.Fatalf("got %v, details %v, location %+v", f, f.Details, f.Location)
	}
	// Nesting beyond the depth bound stays a malformed document.
	s = jsonscan.NewBytes([]byte(`[[[[1]]]]`))
	s.MaxDepth = 2
	for err = nil; err == nil; {
		_, err = s.Next()
	}
	if f := Wrap(CodeDecodeFailure, err, ""); f.Code != CodeDecodeFailure {
		t.Fatalf("depth: %v", f)
	}
}
