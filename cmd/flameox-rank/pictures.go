package main

import (
	"io"

	"github.com/flameox/flameox/internal/flamegraph"
	"github.com/flameox/flameox/internal/pprofout"
	"github.com/flameox/flameox/internal/rank"
)

// pictureOutput is the output of a --format that writes call stacks
// (folded, svg, html, pprof), or nil for the evidence formats.
func pictureOutput(format string, icicle bool, w io.Writer) rank.Output {
	switch format {
	case flamegraph.Folded, flamegraph.SVG, flamegraph.HTML:
		return &flamegraph.Writer{W: w, Format: format, Icicle: icicle}
	}
	if format == pprofout.Format {
		return &pprofout.Writer{W: w}
	}
	return nil
}
