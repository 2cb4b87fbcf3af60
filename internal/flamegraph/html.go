package flamegraph

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
)

// hotRows is how many functions the page's hotspot table lists.
const hotRows = 50

// hot is a function's weights over the stacks: self where it is the
// leaf, inclusive once per stack however often it recurs.
type hot struct {
	name               string
	self, incl         float64
	baseSelf, baseIncl float64
}

func (w *Writer) hotspots() []*hot {
	by := map[string]*hot{}
	get := func(n string) *hot {
		h := by[n]
		if h == nil {
			h = &hot{name: n}
			by[n] = h
		}
		return h
	}
	seen := map[string]bool{}
	for _, r := range w.rows {
		if len(r.stack) == 0 {
			continue
		}
		leaf := get(r.stack[len(r.stack)-1])
		leaf.self += r.new
		leaf.baseSelf += r.base
		clear(seen)
		for _, l := range r.stack {
			if !seen[l] {
				seen[l] = true
				h := get(l)
				h.incl += r.new
				h.baseIncl += r.base
			}
		}
	}
	out := make([]*hot, 0, len(by))
	for _, h := range by {
		out = append(out, h)
	}
	key := func(h *hot) float64 { return h.self }
	if w.diff {
		key = func(h *hot) float64 { return math.Abs(h.self - h.baseSelf) }
	}
	slices.SortFunc(out, func(a, b *hot) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), cmp.Compare(a.name, b.name))
	})
	return out
}

// html writes one page: title, summary, the graph inline, the hotspot
// table and every limitation. Nothing is fetched.
func (w *Writer) html(bw *bufio.Writer, s *evidence.Summary) error {
	l := w.layout(s)
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(bw, "<title>%s</title>\n", xmlText(l.title))
	bw.WriteString(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">` + "\n")
	bw.WriteString("<style>body{font-family:Verdana,\"DejaVu Sans\",sans-serif;font-size:13px;margin:16px;color:#222}" +
		"table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}" +
		"td.n,th.n{text-align:left;max-width:700px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}" +
		"h1{font-size:18px}h2{font-size:15px;margin-top:20px}.lim{color:#555}</style>\n</head><body>\n")
	fmt.Fprintf(bw, "<h1>%s</h1>\n", xmlText(l.title))
	for _, sub := range l.subtitle {
		fmt.Fprintf(bw, "<p>%s</p>\n", xmlText(sub))
	}
	if s != nil {
		bw.WriteString("<h2>Summary</h2>\n<table>\n")
		fmt.Fprintf(bw, "<tr><td class=\"n\">complete</td><td>%t</td></tr>\n", s.Complete)
		names := make([]string, 0, len(s.Metrics))
		for k := range s.Metrics {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			m := s.Metrics[k]
			fmt.Fprintf(bw, "<tr><td class=\"n\">%s</td><td>%s</td></tr>\n", xmlText(k), xmlText(metricText(m)))
		}
		bw.WriteString("</table>\n")
	}
	bw.WriteString("<h2>Flame graph</h2>\n<div>")
	if err := w.svg(bw, s, true); err != nil {
		return err
	}
	bw.WriteString("</div>\n<h2>Hotspots</h2>\n<table id=\"hotspots\">\n")
	if w.diff {
		bw.WriteString("<tr><th>rank</th><th class=\"n\">function</th><th>new self</th><th>baseline self</th><th>delta self</th><th>new inclusive</th><th>baseline inclusive</th></tr>\n")
	} else {
		bw.WriteString("<tr><th>rank</th><th class=\"n\">function</th><th>self</th><th>self%</th><th>inclusive</th><th>inclusive%</th></tr>\n")
	}
	hs := w.hotspots()
	for i, h := range hs {
		if i == hotRows {
			break
		}
		if w.diff {
			fmt.Fprintf(bw, "<tr><td>%d</td><td class=\"n\" title=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
				i+1, xmlText(h.name), xmlText(h.name), FormatWeight(h.self, l.unit), FormatWeight(h.baseSelf, l.unit),
				signed(h.self-h.baseSelf, l.unit), FormatWeight(h.incl, l.unit), FormatWeight(h.baseIncl, l.unit))
			continue
		}
		fmt.Fprintf(bw, "<tr><td>%d</td><td class=\"n\" title=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			i+1, xmlText(h.name), xmlText(h.name), FormatWeight(h.self, l.unit), pct(h.self, l.root.v), FormatWeight(h.incl, l.unit), pct(h.incl, l.root.v))
	}
	bw.WriteString("</table>\n")
	if len(hs) > hotRows {
		fmt.Fprintf(bw, "<p>%d more functions (--format jsonl, or flameox-rank without --format, ranks them all)</p>\n", len(hs)-hotRows)
	}
	if lims := w.limitations(s); len(lims) > 0 {
		bw.WriteString("<h2>Limitations</h2>\n<ul>\n")
		for _, x := range lims {
			fmt.Fprintf(bw, "<li class=\"lim\">%s</li>\n", xmlText(x))
		}
		bw.WriteString("</ul>\n")
	}
	bw.WriteString("</body></html>\n")
	return nil
}

func metricText(m evidence.Metric) string {
	if v, ok := evidence.AsFloat(m.Value); ok && m.Unit != "" {
		return FormatWeight(v, m.Unit)
	}
	return fmt.Sprint(m.Value)
}
