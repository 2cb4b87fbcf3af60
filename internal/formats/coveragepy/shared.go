package coveragepy

import (
	"fmt"
	"math/bits"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// Numbits calls fn with each number in a coverage.py numbits blob, in
// ascending order: bit i of byte j is the number 8*j+i. A blob naming a
// number above max is a LIMIT_EXCEEDED failure.
func Numbits(b []byte, max int64, fn func(n int64)) error {
	// Trailing zero bytes name nothing; only the highest set bit counts.
	last := len(b) - 1
	for last >= 0 && b[last] == 0 {
		last--
	}
	if last >= 0 && int64(last)*8+int64(bits.Len8(b[last]))-1 > max {
		return LimitError(LimitLines, max, "as a line number")
	}
	for j := 0; j <= last; j++ {
		c := b[j]
		for c != 0 {
			i := bits.TrailingZeros8(c)
			fn(int64(j)*8 + int64(i))
			c &= c - 1
		}
	}
	return nil
}

// LimitError is the LIMIT_EXCEEDED failure for a raw parser ceiling.
func LimitError(name string, limit int64, what string) error {
	return &evidence.Failure{Code: evidence.CodeLimitExceeded,
		Message: fmt.Sprintf("coverage: more than %d %s: raise --limits %s=N to read further", limit, what, name),
		Details: evidence.Object{"limit": name, "value": limit}}
}

// BoundedStrings returns at most n strings as a JSON array value.
func BoundedStrings(xs []string, n int) []any {
	if len(xs) > n {
		xs = xs[:n]
	}
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Limit returns the effective value of a named limit, or the spec's
// default when the caller passed none.
func Limit(in *formats.Input, spec *formats.Spec, name string) int64 {
	if n := in.Limit(name); n > 0 {
		return n
	}
	for _, l := range spec.Limits {
		if l.Name == name {
			return l.Default
		}
	}
	return 0
}
