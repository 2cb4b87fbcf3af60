//go:build !unix

package render

import "io"

// ttyWidth is unknown off unix: COLUMNS or the default decides.
func ttyWidth(io.Writer) int { return 0 }
