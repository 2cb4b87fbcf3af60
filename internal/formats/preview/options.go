package preview

import "github.com/flameox/flameox/internal/formats"

// LimitOf returns the effective value of a parser ceiling: the runner's
// effective limits carry the defaults; a direct caller that passes none
// gets the spec default.
func LimitOf(in *formats.Input, l formats.Limit) int64 {
	if v := in.Limit(l.Name); v > 0 {
		return v
	}
	return l.Default
}
