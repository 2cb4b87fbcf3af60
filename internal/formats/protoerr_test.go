package formats

import (
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestProtoError: every parse error protowire gives reads with plain
// spaces, and still is what it wraps.
func TestProtoError(t *testing.T) {
	for n := -1; n >= -6; n-- {
		err := ProtoError(protowire.ParseError(n))
		if strings.ContainsRune(err.Error(), '\u00a0') {
			t.Errorf("%d: %q", n, err)
		}
	}
	if !errors.Is(ProtoError(protowire.ParseError(-1)), io.ErrUnexpectedEOF) {
		t.Error("truncation is no longer io.ErrUnexpectedEOF")
	}
	if ProtoError(nil) != nil {
		t.Error("nil is not nil")
	}
	if got := ProtoError(errors.New("a\u00a0b")).Error(); got != "a b" {
		t.Errorf("%q", got)
	}
}
