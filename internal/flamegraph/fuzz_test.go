package flamegraph

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// FuzzSVG draws stacks of arbitrary labels (any text a profile may carry:
// markup, quotes, controls, invalid UTF-8 cut by the value bound) and
// checks the SVG is well-formed XML, the folded lines keep one frame per
// label and the HTML page parses as XML text too.
func FuzzSVG(f *testing.F) {
	for _, s := range []string{"main;parse", "a<b>&\"c';d", "x\x00y;\x1b[31m", "\xff\xfe;<script>alert(1)</script>", "]]>;--><!--"} {
		f.Add(s, 3.0, false)
	}
	f.Fuzz(func(t *testing.T, stack string, weight float64, diff bool) {
		if weight != weight || weight < 0 || weight > 1e15 {
			return
		}
		labels := strings.Split(stack, ";")
		var out [3]bytes.Buffer
		for i, format := range []string{SVG, HTML, Folded} {
			w := &Writer{W: &out[i], Format: format}
			h := table.CPUFolded.Schema.Header("samples")
			row := evidence.Object{"stack": labels, "weight": weight, "share": nil}
			if diff {
				h = table.CPUFoldedDiff.Schema.Header("samples")
				row = evidence.Object{"stack": labels, "base_weight": weight / 2, "new_weight": weight, "delta_weight": weight / 2}
			}
			if err := w.Begin(h); err != nil {
				t.Fatal(err)
			}
			if err := w.Row(row); err != nil {
				t.Fatal(err)
			}
			if err := w.End(&evidence.Summary{Complete: true, Limitations: []string{stack}, Metrics: map[string]evidence.Metric{}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range out[:1] {
			d := xml.NewDecoder(&b)
			for {
				_, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("not well-formed: %v\n%s", err, out[0].String())
				}
			}
		}
		if n := strings.Count(out[2].String(), "\n"); n != 1 {
			t.Fatalf("folded output has %d lines: %q", n, out[2].String())
		}
	})
}
