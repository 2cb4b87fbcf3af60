package flamegraph

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
)

// Layout, in SVG user units (pixels at 100%).
const (
	imageWidth = 1200
	pad        = 10
	frameH     = 16
	fontSize   = 12
	charW      = 7.0 // average glyph advance of the 12px sans-serif font
	minWidth   = 0.1 // frames narrower than this are not drawn (flamegraph.pl's default)
	maxLimits  = 6   // limitation lines drawn; the rest is counted
)

// xmlText escapes s for XML text and attributes; characters XML 1.0 does
// not allow (most controls) become U+FFFD.
func xmlText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20 || r == 0xFFFE || r == 0xFFFF || (r >= 0xD800 && r <= 0xDFFF):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fit cuts a label to what a frame of width px shows: "" when under three
// characters fit.
func fit(label string, px float64) string {
	n := int((px - 6) / charW)
	if n < 3 {
		return ""
	}
	if utf8.RuneCountInString(label) <= n {
		return label
	}
	r := []rune(label)
	return string(r[:n-2]) + ".."
}

// hotColor is flamegraph.pl's "hot" palette, seeded by the name so a
// function keeps its colour across graphs.
func hotColor(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	a, b, c := float64(v&0xff)/255, float64(v>>8&0xff)/255, float64(v>>16&0xff)/255
	return fmt.Sprintf("rgb(%d,%d,%d)", 205+int(50*c), int(230*a), int(55*b))
}

// diffColor is FlameGraph's difffolded colouring: red for a frame whose
// weight grew, blue for one that shrank, by the change's size relative to
// the largest change; white when unchanged.
func diffColor(delta, maxAbs float64) string {
	if maxAbs == 0 || delta == 0 {
		return "rgb(250,250,250)"
	}
	k := int(math.Round(210 * math.Min(1, math.Abs(delta)/maxAbs)))
	if delta > 0 {
		return fmt.Sprintf("rgb(255,%d,%d)", 250-k, 250-k)
	}
	return fmt.Sprintf("rgb(%d,%d,255)", 250-k, 250-k)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func px(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// svgLayout is what a drawing knows before it draws.
type svgLayout struct {
	root      *node
	unit      string
	scale     float64 // pixels per weight unit
	depth     int     // frames of the deepest drawn stack
	top       float64 // y of the first frame row
	height    float64
	maxDelta  float64
	pruned    int     // frames too narrow to draw
	prunedW   float64 // their weight (outermost pruned frames only)
	title     string
	subtitle  []string
	limits    []string
	moreLimit int
}

func (w *Writer) layout(s *evidence.Summary) *svgLayout {
	l := &svgLayout{root: w.tree(s), unit: w.unitOf()}
	if l.root.v > 0 {
		l.scale = (imageWidth - 2*pad) / l.root.v
	}
	// Place frames and find the drawn depth and the largest change.
	var walk func(n *node, x float64, d int)
	walk = func(n *node, x float64, d int) {
		n.x, n.depth = x, d
		if d > l.depth {
			l.depth = d
		}
		if w.diff {
			l.maxDelta = math.Max(l.maxDelta, math.Abs(n.v-n.base))
		}
		cx := x
		for _, c := range n.kids {
			if c.v*l.scale < minWidth {
				l.pruned += count(c)
				l.prunedW += c.v
				cx += c.v
				continue
			}
			n.drawnKids = true
			walk(c, cx, d+1)
			cx += c.v
		}
	}
	walk(l.root, 0, 0)
	l.title = "Flame Graph"
	if w.Icicle {
		l.title = "Icicle Graph"
	}
	if w.diff {
		l.title = "Differential " + l.title
	}
	if w.memory {
		l.title = "Memory " + l.title + " (" + memoryMeasure(l.unit) + ")"
	}
	if len(w.artifacts) > 0 {
		l.subtitle = append(l.subtitle, strings.Join(w.artifacts, ", "))
	}
	sub := fmt.Sprintf("total %s in %d stacks", FormatWeight(l.root.v, l.unit), len(w.rows))
	if w.diff {
		sub += fmt.Sprintf("; baseline %s; widths are the new profile, red grew, blue shrank", FormatWeight(l.root.base, l.unit))
	}
	if s != nil && !s.Complete {
		sub += "; incomplete evidence"
	}
	if l.pruned > 0 {
		sub += fmt.Sprintf("; %d frames narrower than %g px (%s) not drawn", l.pruned, minWidth, FormatWeight(l.prunedW, l.unit))
	}
	l.subtitle = append(l.subtitle, sub)
	lims := w.limitations(s)
	if len(lims) > maxLimits {
		l.moreLimit = len(lims) - maxLimits
		lims = lims[:maxLimits]
	}
	l.limits = lims
	l.top = float64(40 + 16*len(l.subtitle) + 14*len(l.limits))
	if l.moreLimit > 0 {
		l.top += 14
	}
	l.height = l.top + float64(l.depth+1)*frameH + 30
	return l
}

func count(n *node) int {
	c := 1
	for _, k := range n.kids {
		c += count(k)
	}
	return c
}

// y is the top of a frame row at depth d.
func (l *svgLayout) y(d int, icicle bool) float64 {
	if icicle {
		return l.top + float64(d)*frameH
	}
	return l.top + float64(l.depth-d)*frameH
}

// svg writes a standalone SVG document (inline says it is part of an
// HTML page: no XML prologue).
func (w *Writer) svg(bw *bufio.Writer, s *evidence.Summary, inline bool) error {
	l := w.layout(s)
	if !inline {
		bw.WriteString(`<?xml version="1.0" standalone="no"?>` + "\n")
	}
	fmt.Fprintf(bw, `<svg id="fg" version="1.1" width="%d" height="%s" viewBox="0 0 %d %s" xmlns="http://www.w3.org/2000/svg" data-total="%s" data-unit="%s">`+"\n",
		imageWidth, px(l.height), imageWidth, px(l.height), num(l.root.v), xmlText(l.unit))
	bw.WriteString(`<style>text{font-family:Verdana,"DejaVu Sans",sans-serif;font-size:12px;fill:#000}` +
		`#fg .f rect{stroke:#fff;stroke-width:0.5;rx:2}#fg .f:hover rect{stroke:#000}` +
		`#fg .f text{pointer-events:none}#fg .ctl{cursor:pointer;fill:#333}#fg .lim{font-size:11px;fill:#555}</style>` + "\n")
	fmt.Fprintf(bw, `<rect x="0" y="0" width="%d" height="%s" fill="#f8f8f8"/>`+"\n", imageWidth, px(l.height))
	fmt.Fprintf(bw, `<text x="%d" y="24" text-anchor="middle" style="font-size:17px">%s</text>`+"\n", imageWidth/2, xmlText(l.title))
	y := 24.0
	for _, sub := range l.subtitle {
		y += 16
		fmt.Fprintf(bw, `<text x="%d" y="%s" text-anchor="middle">%s</text>`+"\n", imageWidth/2, px(y), xmlText(sub))
	}
	for _, lim := range l.limits {
		y += 14
		fmt.Fprintf(bw, `<text class="lim" x="%d" y="%s">limitation: %s</text>`+"\n", pad, px(y), xmlText(cut(lim, 190)))
	}
	if l.moreLimit > 0 {
		y += 14
		fmt.Fprintf(bw, `<text class="lim" x="%d" y="%s">and %d more limitations (--format jsonl states them all)</text>`+"\n", pad, px(y), l.moreLimit)
	}
	fmt.Fprintf(bw, `<text id="reset" class="ctl" x="%d" y="24" style="display:none">Reset Zoom</text>`+"\n", pad)
	fmt.Fprintf(bw, `<text id="search" class="ctl" x="%d" y="24" text-anchor="end">Search</text>`+"\n", imageWidth-pad)
	fmt.Fprintf(bw, `<text id="matched" x="%d" y="%s" text-anchor="end"></text>`+"\n", imageWidth-pad, px(l.height-10))
	fmt.Fprintf(bw, `<text id="details" x="%d" y="%s"> </text>`+"\n", pad, px(l.height-10))
	bw.WriteString(`<g id="frames">` + "\n")
	var draw func(n *node)
	draw = func(n *node) {
		wpx := n.v * l.scale
		fill := hotColor(n.name)
		if w.diff {
			fill = diffColor(n.v-n.base, l.maxDelta)
		}
		title := fmt.Sprintf("%s (%s, %s)", n.name, FormatWeight(n.v, l.unit), pct(n.v, l.root.v))
		if w.diff {
			title = fmt.Sprintf("%s (new %s, baseline %s, %s)", n.name, FormatWeight(n.v, l.unit), FormatWeight(n.base, l.unit), signed(n.v-n.base, l.unit))
		}
		yy := l.y(n.depth, w.Icicle)
		fmt.Fprintf(bw, `<g class="f" data-n="%s" data-x="%s" data-w="%s" data-d="%d"><title>%s</title><rect x="%s" y="%s" width="%s" height="%d" fill="%s" data-c="%s"/><text x="%s" y="%s">%s</text></g>`+"\n",
			xmlText(n.name), num(n.x), num(n.v), n.depth, xmlText(title),
			px(pad+n.x*l.scale), px(yy), px(wpx), frameH-1, fill, fill,
			px(pad+n.x*l.scale+3), px(yy+frameH-4), xmlText(fit(n.name, wpx)))
		for _, c := range n.kids {
			if c.v*l.scale >= minWidth {
				draw(c)
			}
		}
	}
	draw(l.root)
	bw.WriteString("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n")
	fmt.Fprintf(bw, "var FG={width:%d,pad:%d,charW:%s};\n", imageWidth-2*pad, pad, num(charW))
	bw.WriteString(script)
	bw.WriteString("]]></script>\n</svg>\n")
	return nil
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func pct(v, total float64) string {
	if total == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*v/total, 'f', 2, 64) + "%"
}

func signed(d float64, u string) string {
	if d > 0 {
		return "+" + FormatWeight(d, u)
	}
	return FormatWeight(d, u)
}

// script is the graph's own behaviour: click a frame to zoom to it (its
// ancestors span the width, others hide), Reset Zoom, Search (a regular
// expression, asked for by prompt or given as ?s=RE in the address) that
// colours matching frames and states the share they cover.
const script = `(function(){
var svg=document.getElementById('fg');
var frames=Array.prototype.slice.call(svg.querySelectorAll('#frames g.f'));
function q(id){return svg.querySelector('#'+id);}
function num(g,a){return parseFloat(g.getAttribute(a));}
var root=frames[0], total=num(root,'data-w'), scale=FG.width/(total||1);
function fitText(t,label,w){var n=Math.floor((w-6)/FG.charW);if(n<3){t.textContent='';return;}
 t.textContent=label.length<=n?label:label.slice(0,n-2)+'..';}
function place(x0,w,d0){var s=FG.width/(w||1);
 frames.forEach(function(g){var x=num(g,'data-x'),v=num(g,'data-w'),d=num(g,'data-d'),e=1e-9*(total||1);
  var anc=d<d0&&x<=x0+e&&x+v>=x0+w-e, inside=d>=d0&&x>=x0-e&&x+v<=x0+w+e;
  var r=g.querySelector('rect'),t=g.querySelector('text');
  if(!anc&&!inside){g.style.display='none';return;}
  g.style.display='';var nx=anc?0:(x-x0)*s,nw=anc?FG.width:v*s;
  r.setAttribute('x',(FG.pad+nx).toFixed(2));r.setAttribute('width',nw.toFixed(2));
  t.setAttribute('x',(FG.pad+nx+3).toFixed(2));fitText(t,g.getAttribute('data-n'),nw);});}
function zoom(g){place(num(g,'data-x'),num(g,'data-w'),num(g,'data-d'));q('reset').style.display=g===root?'none':'';}
frames.forEach(function(g){g.addEventListener('click',function(){zoom(g);});
 g.addEventListener('mouseover',function(){q('details').textContent=g.querySelector('title').textContent;});});
q('reset').addEventListener('click',function(){zoom(root);});
function clearSearch(){frames.forEach(function(g){var r=g.querySelector('rect');r.setAttribute('fill',r.getAttribute('data-c'));g.removeAttribute('data-match');});q('matched').textContent='';}
function search(term){clearSearch();if(!term)return 0;var re;try{re=new RegExp(term);}catch(e){q('matched').textContent='bad regular expression';return 0;}
 var spans=[];frames.forEach(function(g){if(g!==root&&re.test(g.getAttribute('data-n'))){g.setAttribute('data-match','1');
  g.querySelector('rect').setAttribute('fill','rgb(230,0,230)');spans.push([num(g,'data-x'),num(g,'data-w')]);}});
 spans.sort(function(a,b){return a[0]-b[0]||b[1]-a[1];});var covered=0,end=-1;
 spans.forEach(function(s){if(s[0]>=end){covered+=s[1];end=s[0]+s[1];}else if(s[0]+s[1]>end){covered+=s[0]+s[1]-end;end=s[0]+s[1];}});
 var share=total?covered/total:0;q('matched').textContent='Matched: '+(100*share).toFixed(2)+'%';return share;}
q('search').addEventListener('click',function(){var t=prompt('Search frames (regular expression)','');if(t!==null)search(t);});
window.flamegraphSearch=search;window.flamegraphZoom=zoom;
var m=/[?&#]s=([^&]*)/.exec(location.search+location.hash);if(m)search(decodeURIComponent(m[1]));
})();
`

// memoryMeasure names a memory picture's weights in its title: bytes,
// or the population's count unit (objects, allocations, samples).
func memoryMeasure(u string) string {
	if u == "" {
		return "count"
	}
	return u
}
