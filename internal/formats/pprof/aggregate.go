package pprof

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/internal/formats"
)

// aggOptions are what one decode aggregates.
type aggOptions struct {
	lines         bool     // build the cpu.lines layer
	edges, stacks bool     // build cpu.edges, cpu.stacks
	series        []string // label keys that make series
	maxSeries     int64
}

// frameKey is a site's identity: a function of a binary (and, in the
// line layer, one of its source lines).
type frameKey struct {
	name, file string
	start      int64
	module     string
	address    uint64 // unsymbolized locations only
	line       int64  // line layer: the sampled line (0: unknown)
}

type site struct {
	key        frameKey
	unresolved bool
}

// frame is a site in one series, with its weights: [0] the chosen sample
// type (memory: bytes), [1] a memory profile's paired count.
type frame struct {
	site, series int32
	self, incl   [2]int64
	lastSample   int
}

type edgeKey struct{ caller, callee int32 }

type edge struct {
	weight, self int64
	lastSample   int
}

// series is one label series (index 0: the samples that carry none of
// the label_series keys, or every sample when there are none).
type series struct {
	name    string
	samples int64
	total   [2]int64
}

type stackWeight struct {
	frames []int32 // leaf first
	series int32
	weight int64
}

type graph struct {
	invalidUTF8 int64 // strings whose invalid UTF-8 became U+FFFD (validUTF8)
	sites       []site
	siteIndex   map[frameKey]int32
	// locSites maps a location id to its sites, leaf first (nil: not
	// expanded yet); ids are dense in the producers seen, else the map
	// locSparse holds them.
	locSites  [][]int32
	locSparse map[uint64][]int32
	frames    []frame
	// frameIndex maps (site, series) to a frame; nil with one series,
	// where a frame's index is its site's.
	frameIndex  map[[2]int32]int32
	series      []series
	seriesIndex map[string]int32

	edges map[edgeKey]*edge
	order []edgeKey // first-seen order, so output is deterministic

	totals  []int64 // per sample type, every sample
	noStack [2]int64
	inlined int64 // location lines beyond the first: inlined calls

	stacks     map[string]int
	stackOrder []stackWeight

	labels *labelStats

	// lines is the cpu.lines layer: the same samples over sites that
	// are (function, file, line), with frames only (nil: not built).
	lines     *graph
	lineLayer bool // this graph is a lines layer: sites carry their line
}

// newLayer is an empty graph of sites and frames over locations with ids
// up to dense (0: sparse), a frame per series when series.
func newLayer(dense int, series bool) *graph {
	g := &graph{siteIndex: map[frameKey]int32{}, locSites: make([][]int32, dense), locSparse: map[uint64][]int32{}}
	if series {
		g.frameIndex = map[[2]int32]int32{}
	}
	return g
}

// stackOf appends the frames of a sample's stack in series ser, leaf
// first, to stack.
func (g *graph) stackOf(s *profile.Sample, ser int32, stack []int32) []int32 {
	for _, loc := range s.Location {
		for _, st := range g.sitesOf(loc) {
			stack = append(stack, g.frameOf(st, ser))
		}
	}
	return stack
}

// weighLines adds sample si of weights v to the line layer: self to the
// leaf line, inclusive once per line of the stack.
func (g *graph) weighLines(si int, stack []int32, v [2]int64) {
	leaf := &g.frames[stack[0]]
	leaf.self[0] += v[0]
	leaf.self[1] += v[1]
	for _, fi := range stack {
		if f := &g.frames[fi]; f.lastSample != si {
			f.lastSample = si
			f.incl[0] += v[0]
			f.incl[1] += v[1]
		}
	}
}

func (g *graph) siteOf(k frameKey, unresolved bool) int32 {
	if i, ok := g.siteIndex[k]; ok {
		return i
	}
	i := int32(len(g.sites))
	g.sites = append(g.sites, site{key: k, unresolved: unresolved})
	g.siteIndex[k] = i
	if g.frameIndex == nil {
		g.frames = append(g.frames, frame{site: i, lastSample: -1})
	}
	return i
}

// frameOf is the frame of a site in a series.
func (g *graph) frameOf(s, ser int32) int32 {
	if g.frameIndex == nil {
		return s
	}
	k := [2]int32{s, ser}
	if i, ok := g.frameIndex[k]; ok {
		return i
	}
	i := int32(len(g.frames))
	g.frames = append(g.frames, frame{site: s, series: ser, lastSample: -1})
	g.frameIndex[k] = i
	return i
}

// sitesOf expands a location into its sites, the innermost inlined
// function first, as profile.proto orders Location.Line.
func (g *graph) sitesOf(loc *profile.Location) []int32 {
	dense := loc.ID < uint64(len(g.locSites))
	if dense && g.locSites[loc.ID] != nil {
		return g.locSites[loc.ID]
	}
	if fs, ok := g.locSparse[loc.ID]; !dense && ok {
		return fs
	}
	module := ""
	if loc.Mapping != nil {
		module = loc.Mapping.File
	}
	var fs []int32
	for _, l := range loc.Line {
		fn := l.Function
		k := frameKey{name: fn.Name, file: fn.Filename, start: fn.StartLine, module: module}
		if g.lineLayer {
			k.line = l.Line
		}
		fs = append(fs, g.siteOf(k, false))
	}
	if len(loc.Line) > 1 {
		g.inlined += int64(len(loc.Line) - 1)
	}
	if len(fs) == 0 {
		fs = append(fs, g.siteOf(frameKey{name: fmt.Sprintf("0x%x", loc.Address), module: module, address: loc.Address}, true))
	}
	if dense {
		g.locSites[loc.ID] = fs
	} else {
		g.locSparse[loc.ID] = fs
	}
	return fs
}

// seriesOf is the series of a sample: its values of the label_series
// keys, as key=value joined by commas ("" when it carries none).
func (g *graph) seriesOf(s *profile.Sample, keys []string, in *formats.Input) (int32, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	var b strings.Builder
	for _, k := range keys {
		var vals []string
		if vs, ok := s.Label[k]; ok {
			vals = vs
		} else if ns, ok := s.NumLabel[k]; ok {
			units := s.NumUnit[k]
			for i, n := range ns {
				v := strconv.FormatInt(n, 10)
				if i < len(units) && units[i] != "" {
					v += " " + units[i]
				}
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strings.Join(vals, "|"))
	}
	name := b.String()
	if i, ok := g.seriesIndex[name]; ok {
		return i, nil
	}
	if n := int64(len(g.series)); n >= in.Limit(LimitSeries) {
		return 0, in.Exceeded(LimitSeries, nil)
	}
	i := int32(len(g.series))
	g.series = append(g.series, series{name: name})
	g.seriesIndex[name] = i
	return i, nil
}

func aggregate(ctx context.Context, p *profile.Profile, w *weights, opt aggOptions, in *formats.Input) (*graph, error) {
	var maxID uint64
	for _, l := range p.Location {
		maxID = max(maxID, l.ID)
	}
	dense := 0
	if maxID < uint64(4*len(p.Location)+1024) {
		dense = int(maxID) + 1
	}
	g := newLayer(dense, len(opt.series) > 0)
	g.series, g.seriesIndex = []series{{}}, map[string]int32{"": 0}
	g.totals, g.labels = make([]int64, len(p.SampleType)), newLabelStats()
	if opt.lines {
		g.lines = newLayer(dense, len(opt.series) > 0)
		g.lines.lineLayer = true
	}
	if opt.edges {
		g.edges = map[edgeKey]*edge{}
	}
	if opt.stacks {
		g.stacks = map[string]int{}
	}
	var stack, lstack []int32
	var key []byte
	for si, s := range p.Sample {
		if si&0xFFFF == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for i, v := range s.Value {
			g.totals[i] += v
		}
		var v [2]int64
		if m := w.memory; m != nil {
			v[0] = s.Value[m.bytes] * m.factor
			if m.count >= 0 {
				v[1] = s.Value[m.count]
			}
		} else {
			v[0] = s.Value[w.index]
		}
		if len(s.Label)+len(s.NumLabel) > 0 {
			g.labels.add(s, v)
		}
		ser, err := g.seriesOf(s, opt.series, in)
		if err != nil {
			return nil, err
		}
		g.series[ser].samples++
		g.series[ser].total[0] += v[0]
		g.series[ser].total[1] += v[1]
		stack = g.stackOf(s, ser, stack[:0])
		if len(stack) == 0 {
			g.noStack[0] += v[0]
			g.noStack[1] += v[1]
			continue
		}
		if g.lines != nil {
			lstack = g.lines.stackOf(s, ser, lstack[:0])
			g.lines.weighLines(si, lstack, v)
		}
		leaf := &g.frames[stack[0]]
		leaf.self[0] += v[0]
		leaf.self[1] += v[1]
		if opt.stacks {
			key = key[:0]
			for _, fi := range stack {
				key = binary.LittleEndian.AppendUint32(key, uint32(fi))
			}
			if j, ok := g.stacks[string(key)]; ok {
				g.stackOrder[j].weight += v[0]
			} else {
				g.stacks[string(key)] = len(g.stackOrder)
				g.stackOrder = append(g.stackOrder, stackWeight{frames: slices.Clone(stack), series: ser, weight: v[0]})
			}
		}
		for i, fi := range stack {
			f := &g.frames[fi]
			if f.lastSample != si { // once per sample, however deep the recursion
				f.lastSample = si
				f.incl[0] += v[0]
				f.incl[1] += v[1]
			}
			if !opt.edges || i+1 == len(stack) {
				continue
			}
			k := edgeKey{caller: stack[i+1], callee: fi}
			e := g.edges[k]
			if e == nil {
				e = &edge{lastSample: -1}
				g.edges[k] = e
				g.order = append(g.order, k)
			}
			if e.lastSample != si {
				e.lastSample = si
				e.weight += v[0]
			}
			if i == 0 {
				e.self += v[0]
			}
		}
	}
	return g, nil
}
