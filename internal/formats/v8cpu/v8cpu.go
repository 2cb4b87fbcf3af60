// Package v8cpu decodes V8 CPU profiles (.cpuprofile), as written by
// `node --cpu-prof` and Chrome DevTools, into cpu.frames, cpu.edges,
// cpu.stacks and cpu.lines (the lines of each node's positionTicks).
//
// The file is streamed once. Memory grows with the number of call-tree
// nodes and distinct sampled node ids, never with the file size or the
// number of samples: samples are counted per node id as they stream past,
// and only resolved against the tree after the whole document was read, so
// key order in the file does not matter.
//
// It imports formats, evidence, jsonscan, param, table, unit, and v8frame
// for the callFrame reading it shares with the other V8 profile decoder.
package v8cpu

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/v8frame"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Version is the decoder version recorded in table headers.
const Version = "2" // 2: cpu.lines from positionTicks

// Limit names.
const (
	LimitNodes   = "max_nodes"
	LimitSamples = "max_samples"
)

// Spec is the v8-cpuprofile format.
var Spec = formats.WithLines(formats.CPUStackProfile(formats.Spec{
	Name:     "v8-cpuprofile",
	Title:    "Node/V8 CPU profile",
	Suffixes: []string{".cpuprofile"},
	Sniff:    sniff,
	Limits: []formats.Limit{
		{Name: formats.LimitBytes, Default: 16 << 30, Unit: "bytes", Doc: "bytes in the profile file"},
		{Name: LimitNodes, Default: 5_000_000, Unit: "count", Doc: "call-tree nodes"},
		{Name: LimitSamples, Default: 2_000_000_000, Unit: "samples", Doc: "entries in samples"},
		{Name: formats.LimitToken, Default: 64 << 20, Unit: "bytes", Doc: "bytes in one JSON string or number"},
	},
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "node --cpu-prof / Chrome DevTools",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
}))

// sniff recognizes the start of a profile object: a "nodes" array whose
// first element carries a callFrame.
func sniff(prefix []byte) formats.Verdict {
	return formats.SniffObject(prefix, false, func(p []byte) formats.Verdict {
		switch {
		case !bytes.Contains(p, []byte(`"callFrame"`)) || !bytes.Contains(p, []byte(`"nodes"`)):
			return formats.NeedMore
		case bytes.Contains(p, []byte(`"traceEvents"`)) || bytes.Contains(p, []byte(`"head"`)):
			return formats.No // a trace or a heap profile
		}
		return formats.Yes
	})
}

// callFrame is a node's frame identity.
type callFrame = v8frame.CallFrame

type node struct {
	id        int64
	frame     int32 // index into frames
	parent    int32 // index into nodes; -1 for a root
	children  []int64
	hitCount  int64
	hasHit    bool
	parentRef *int64 // the "parent" form of Chrome trace chunks
	// ticks are the node's positionTicks: V8 counts, for each sample
	// that hit the node, the source line it was on (1-based), when it
	// knew one.
	ticks []lineTick
}

// lineTick is one PositionTickInfo.
type lineTick struct{ line, ticks int64 }

type profile struct {
	nodes      []node
	byID       map[int64]int32
	frames     []callFrame
	frameIdx   map[callFrame]int32
	dense      []int64         // samples per node id, for small ids
	sparse     map[int64]int64 // samples per node id, for the rest
	samples    int64
	deltas     int64
	deltaSum   int64 // microseconds from startTime to the last sample read
	negDeltas  int64
	startTime  *int64
	endTime    *int64
	hasSamples bool
	hasDeltas  bool
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	s := in.JSONScanner(in.R, 64, formats.LimitToken)
	p := &profile{byID: map[int64]int32{}, frameIdx: map[callFrame]int32{}, sparse: map[int64]int64{}}
	if err := p.parse(ctx, &jsonscan.Walker{S: s}, in); err != nil {
		return err
	}
	if err := p.link(); err != nil {
		return err
	}
	return p.emit(in, out)
}

func (p *profile) parse(ctx context.Context, w *jsonscan.Walker, in *formats.Input) error {
	sawNodes := false
	err := w.Document("a V8 CPU profile", func(key []byte) error {
		switch string(key) {
		case "nodes":
			sawNodes = true
			return p.parseNodes(ctx, w, in)
		case "samples":
			p.hasSamples = true
			return p.parseSamples(ctx, w, in)
		case "timeDeltas":
			p.hasDeltas = true
			return w.Ints("timeDeltas", func(d int64) error {
				return p.delta(w, d)
			})
		case "startTime":
			return optionalInt(w, "startTime", &p.startTime)
		case "endTime":
			return optionalInt(w, "endTime", &p.endTime)
		}
		return w.SkipValue()
	})
	if err != nil {
		return err
	}
	if !sawNodes {
		return errors.New("not a V8 CPU profile: no nodes array")
	}
	if !p.hasSamples {
		return errors.New("V8 CPU profile has no samples array")
	}
	if p.startTime != nil && p.endTime != nil {
		// endTime-startTime must neither wrap nor run backwards: a profile
		// ends after it starts.
		if d := *p.endTime - *p.startTime; *p.endTime < *p.startTime || (*p.startTime < 0 && d < 0) {
			return &evidence.Failure{Code: evidence.CodeDecodeFailure, Location: evidence.Location{Field: "endTime"},
				Message: fmt.Sprintf("V8 CPU profile: endTime %d is before startTime %d, or too far after it for int64 microseconds", *p.endTime, *p.startTime)}
		}
	}
	if p.hasDeltas && p.deltas != p.samples {
		return fmt.Errorf("V8 CPU profile has %d samples but %d timeDeltas", p.samples, p.deltas)
	}
	return nil
}

// delta adds one entry of timeDeltas. A delta is the time from the
// previous sample (the first: from startTime), in microseconds. V8 writes
// a few small negative ones when it records samples slightly out of time
// order, so a negative delta is the format's own: it is counted and the
// duration stays the net sum. A running sum below zero (a sample before
// the profile started) or past int64 is no V8 profile: a failure at the
// delta, never a wrapped duration.
func (p *profile) delta(w *jsonscan.Walker, d int64) error {
	// While Ints' callback runs, the scanner's offset is the integer's.
	at := jsonscan.Token{Offset: w.S.Offset()}
	i := p.deltas
	p.deltas++
	if d < 0 {
		p.negDeltas++
	}
	sum := p.deltaSum + d
	if d > 0 && sum < p.deltaSum {
		return w.S.Errorf(at, "timeDeltas[%d]: the time since startTime overflows int64 microseconds", i)
	}
	if sum < 0 {
		return w.S.Errorf(at, "timeDeltas[%d] puts sample %d %d µs before startTime", i, i, -sum)
	}
	p.deltaSum = sum
	return nil
}

// optionalInt reads an integer or null into *dst (nil for null).
func optionalInt(w *jsonscan.Walker, what string, dst **int64) error {
	n, ok, err := w.OptionalInt(what)
	if ok {
		*dst = &n
	}
	return err
}

func (p *profile) parseSamples(ctx context.Context, w *jsonscan.Walker, in *formats.Input) error {
	max := in.Limit(LimitSamples)
	return w.Ints("samples", func(id int64) error {
		p.samples++
		if p.samples > max {
			return in.Exceeded(LimitSamples, nil)
		}
		if p.samples&0xFFFFF == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		p.count(id)
		return nil
	})
}

// denseIDs bounds the id range counted in a slice; V8 numbers nodes from 1
// upwards, so real profiles never reach the map.
const denseIDs = 1 << 20

func (p *profile) count(id int64) {
	if id >= 0 && id < denseIDs {
		if id >= int64(len(p.dense)) {
			n := max(2*len(p.dense), int(id)+1, 1024)
			p.dense = append(p.dense, make([]int64, min(n, denseIDs)-len(p.dense))...)
		}
		p.dense[id]++
		return
	}
	p.sparse[id]++
}

// sampleCounts calls fn for every node id that was sampled.
func (p *profile) sampleCounts(fn func(id, n int64) error) error {
	for id, n := range p.dense {
		if n > 0 {
			if err := fn(int64(id), n); err != nil {
				return err
			}
		}
	}
	for id, n := range p.sparse {
		if err := fn(id, n); err != nil {
			return err
		}
	}
	return nil
}

func (p *profile) samplesOf(id int64) int64 {
	if id >= 0 && id < int64(len(p.dense)) {
		return p.dense[id]
	}
	return p.sparse[id]
}

func (p *profile) parseNodes(ctx context.Context, w *jsonscan.Walker, in *formats.Input) error {
	max := in.Limit(LimitNodes)
	return w.Array("nodes", func(i int, el jsonscan.Token) error {
		if el.Kind != jsonscan.ObjectStart {
			return w.S.Errorf(el, "nodes[%d] must be an object, found %s", i, el.Kind)
		}
		if int64(i) >= max {
			return in.Exceeded(LimitNodes, nil)
		}
		if i&0xFFFF == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := p.parseNode(w, el); err != nil {
			return fmt.Errorf("nodes[%d]: %w", i, err)
		}
		return nil
	})
}

func (p *profile) parseNode(w *jsonscan.Walker, start jsonscan.Token) error {
	n := node{parent: -1, frame: -1}
	var haveID, haveFrame bool
	var cf callFrame
	err := w.Members(start, "a node", func(key []byte) error {
		var err error
		switch string(key) {
		case "id":
			n.id, err = w.Int("id")
			haveID = true
		case "callFrame":
			cf, err = v8frame.Parse(w)
			haveFrame = true
		case "hitCount":
			n.hitCount, err = w.Int("hitCount")
			n.hasHit = true
		case "children":
			err = w.Array("children", func(_ int, el jsonscan.Token) error {
				id, err := w.IntOf(el, "children[]")
				n.children = append(n.children, id)
				return err
			})
		case "parent":
			// The "parent" form of Chrome trace chunks.
			err = optionalInt(w, "parent", &n.parentRef)
		case "positionTicks":
			n.ticks, err = parseTicks(w, n.ticks[:0])
		default:
			err = w.SkipValue()
		}
		return err
	})
	if err != nil {
		return err
	}
	if !haveID {
		return w.S.Errorf(start, "the node has no id")
	}
	if !haveFrame {
		return w.S.Errorf(start, "node %d has no callFrame", n.id)
	}
	if _, dup := p.byID[n.id]; dup {
		return w.S.Errorf(start, "node id %d appears twice", n.id)
	}
	fi, ok := p.frameIdx[cf]
	if !ok {
		fi = int32(len(p.frames))
		p.frames = append(p.frames, cf)
		p.frameIdx[cf] = fi
	}
	n.frame = fi
	p.byID[n.id] = int32(len(p.nodes))
	p.nodes = append(p.nodes, n)
	return nil
}

// parseTicks reads a positionTicks array: objects with an integer line
// and ticks. Negative ticks are no V8 profile; a line below 1 (V8 writes
// none: it leaves out samples it has no line for) is kept and later
// counted as a sample without a line.
func parseTicks(w *jsonscan.Walker, out []lineTick) ([]lineTick, error) {
	err := w.Array("positionTicks", func(i int, el jsonscan.Token) error {
		if el.Kind != jsonscan.ObjectStart {
			return w.S.Errorf(el, "positionTicks[%d] must be an object, found %s", i, el.Kind)
		}
		t := lineTick{line: -1, ticks: -1}
		err := w.Members(el, "a position tick", func(key []byte) error {
			var err error
			switch string(key) {
			case "line":
				t.line, err = w.Int("positionTicks[].line")
			case "ticks":
				t.ticks, err = w.Int("positionTicks[].ticks")
			default:
				err = w.SkipValue()
			}
			return err
		})
		if err != nil {
			return err
		}
		if t.ticks < 0 {
			return w.S.Errorf(el, "positionTicks[%d] has no ticks count, or a negative one", i)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// link resolves every child and parent id inside the file and checks that
// the nodes form a forest: one parent per node, no cycles.
func (p *profile) link() error {
	// The parent form becomes child links once every node is known.
	for i := range p.nodes {
		n := &p.nodes[i]
		if n.parentRef == nil {
			continue
		}
		pi, ok := p.byID[*n.parentRef]
		if !ok {
			return fmt.Errorf("node %d names parent %d, which is not in the profile", n.id, *n.parentRef)
		}
		p.nodes[pi].children = append(p.nodes[pi].children, n.id)
	}
	for i := range p.nodes {
		for _, cid := range p.nodes[i].children {
			ci, ok := p.byID[cid]
			if !ok {
				return fmt.Errorf("node %d names child %d, which is not in the profile", p.nodes[i].id, cid)
			}
			c := &p.nodes[ci]
			if c.parent != -1 {
				return fmt.Errorf("node %d has two parents (%d and %d)", cid, p.nodes[c.parent].id, p.nodes[i].id)
			}
			if ci == int32(i) {
				return fmt.Errorf("node %d is its own child", cid)
			}
			c.parent = int32(i)
		}
	}
	return p.sampleCounts(func(id, _ int64) error {
		if _, ok := p.byID[id]; !ok {
			return fmt.Errorf("a sample names node %d, which is not in the profile", id)
		}
		return nil
	})
}

// order returns node indexes with every child before its parent, and fails
// on cycles (nodes that no root reaches).
func (p *profile) order() ([]int32, error) {
	out := make([]int32, 0, len(p.nodes))
	type item struct {
		idx  int32
		next int
	}
	var stack []item
	for i := range p.nodes {
		if p.nodes[i].parent != -1 {
			continue
		}
		stack = append(stack, item{int32(i), 0})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			n := &p.nodes[top.idx]
			if top.next < len(n.children) {
				ci := p.byID[n.children[top.next]]
				top.next++
				stack = append(stack, item{ci, 0})
				continue
			}
			out = append(out, top.idx)
			stack = stack[:len(stack)-1]
		}
	}
	if len(out) != len(p.nodes) {
		return nil, fmt.Errorf("the call tree has a cycle: %d nodes are unreachable from a root", len(p.nodes)-len(out))
	}
	return out, nil
}

func symbolization(cf callFrame) string {
	switch {
	case cf.Synthetic():
		return table.Synthetic
	case cf.Function == "":
		return table.Anonymous
	}
	return table.Symbolized
}

func (p *profile) emit(in *formats.Input, out formats.Sink) error {
	post, err := p.order()
	if err != nil {
		return err
	}
	wantFrames, wantEdges := out.Wants(table.CPUFrames.Schema), out.Wants(table.CPUEdges.Schema)
	// Edges are numbered in node order, the order they are emitted in, so
	// the output does not depend on map iteration.
	var edges []edgeKey
	edgeOf := []int32(nil)
	if wantEdges {
		slot := map[edgeKey]int32{}
		edgeOf = make([]int32, len(p.nodes))
		for i := range p.nodes {
			n := &p.nodes[i]
			if n.parent < 0 {
				edgeOf[i] = -1
				continue
			}
			k := edgeKey{p.nodes[n.parent].frame, n.frame}
			e, ok := slot[k]
			if !ok {
				e = int32(len(edges))
				slot[k] = e
				edges = append(edges, k)
			}
			edgeOf[i] = e
		}
	}
	subtree := make([]int64, len(p.nodes))
	self := make([]int64, len(p.frames))
	occ := make([]int64, len(p.frames))   // summed over call-tree occurrences
	edgeW := make([][2]int64, len(edges)) // callee inclusive, callee self
	var hitMismatch int64
	for _, i := range post {
		n := &p.nodes[i]
		c := p.samplesOf(n.id)
		if n.hasHit && n.hitCount != c {
			hitMismatch++
		}
		subtree[i] += c
		self[n.frame] += c
		occ[n.frame] += subtree[i]
		if n.parent >= 0 {
			subtree[n.parent] += subtree[i]
			if wantEdges {
				edgeW[edgeOf[i]][1] += c
			}
		}
	}
	incl := p.onceInclusive(subtree, edgeOf, edgeW)

	ids := make([]string, len(p.frames))
	var buf []byte
	for fi, cf := range p.frames {
		ids[fi], buf = cf.ID(buf)
	}
	if wantFrames {
		tw, err := out.Begin(table.CPUFrames.HeaderBased(unit.Samples, 0))
		if err != nil {
			return err
		}
		// One backing array: a sink may keep the rows it is handed.
		rows := make([]table.Frame, len(p.frames))
		vals := in.Values()
		for fi, cf := range p.frames {
			row := &rows[fi]
			*row = table.Frame{
				FrameSite: table.FrameSite{
					FrameID:       ids[fi],
					Function:      vals.Bound(cf.Function),
					File:          table.NonEmpty(vals.Bound(cf.URL)),
					Line:          cf.Line,
					Column:        cf.Column,
					Symbolization: symbolization(cf),
				},
				SelfWeight:                float64(self[fi]),
				InclusiveWeight:           float64(incl[fi]),
				InclusiveOccurrenceWeight: table.Some(float64(occ[fi])),
			}
			if err := tw.Row(row); err != nil {
				return err
			}
		}
		s := p.summary(int64(len(p.frames)), hitMismatch)
		vals.Summarize(s)
		if err := tw.End(s); err != nil {
			return err
		}
	}
	if wantEdges {
		if err := p.emitEdges(in, out, ids, edges, edgeW, hitMismatch); err != nil {
			return err
		}
	}
	if out.Wants(table.CPULines.Schema) {
		if err := p.emitLines(in, out, ids, hitMismatch); err != nil {
			return err
		}
	}
	if out.Wants(table.CPUStacks.Schema) {
		return p.emitStacks(in, out, ids, hitMismatch)
	}
	return nil
}

// frameLine is a (frame, source line) pair of cpu.lines.
type frameLine struct {
	frame int32
	line  int64
}

// emitLines writes the cpu.lines table from the nodes' positionTicks.
// The weights are sample counts, as in cpu.frames: a tick is a sample
// (V8 adds one to the line of the node each sample hits), so a line's
// weight is exact, not a share of the node's time. A node's samples
// that its ticks do not cover (V8 records no line for them, or the node
// has no positionTicks, as V8's own nodes) stay its function's, line -1.
// A node whose ticks exceed the samples that hit it cannot be split
// honestly: all its samples are line -1, and a limitation counts it.
func (p *profile) emitLines(in *formats.Input, out formats.Sink, ids []string, hitMismatch int64) error {
	byLine := map[frameLine]int64{}
	unknown := make([]int64, len(p.frames))
	var withTicks, over, unknownTotal int64
	for i := range p.nodes {
		n := &p.nodes[i]
		c := p.samplesOf(n.id)
		if n.ticks != nil {
			withTicks++
		}
		var known int64
		for _, t := range n.ticks {
			if t.line >= 1 {
				known += t.ticks
			}
		}
		if known > c {
			over++
			known = 0
		} else {
			for _, t := range n.ticks {
				if t.line >= 1 && t.ticks > 0 {
					byLine[frameLine{n.frame, t.line}] += t.ticks
				}
			}
		}
		unknown[n.frame] += c - known
		unknownTotal += c - known
	}
	keys := make([]frameLine, 0, len(byLine))
	for k := range byLine {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b frameLine) int {
		return cmp.Or(cmp.Compare(a.frame, b.frame), cmp.Compare(a.line, b.line))
	})
	tw, err := out.Begin(table.LinesHeader(unit.Samples, 1))
	if err != nil {
		return err
	}
	vals := in.Values()
	var rows int64
	row := func(fi int32, id string, line int64, w int64) error {
		cf := &p.frames[fi]
		rows++
		return tw.Row(&table.Frame{
			FrameSite: table.FrameSite{
				FrameID:       id,
				Function:      vals.Bound(cf.Function),
				File:          table.NonEmpty(vals.Bound(cf.URL)),
				Line:          line,
				Column:        -1,
				Symbolization: symbolization(*cf),
			},
			SelfWeight:      float64(w),
			InclusiveWeight: float64(w),
		})
	}
	k := 0
	for fi := range p.frames {
		for ; k < len(keys) && keys[k].frame == int32(fi); k++ {
			if err := row(int32(fi), ids[fi]+":"+strconv.FormatInt(keys[k].line, 10), keys[k].line, byLine[keys[k]]); err != nil {
				return err
			}
		}
		if unknown[fi] > 0 {
			if err := row(int32(fi), ids[fi], -1, unknown[fi]); err != nil {
				return err
			}
		}
	}
	s := p.summary(rows, hitMismatch)
	s.Metrics["nodes_with_position_ticks"] = evidence.Metric{Value: withTicks, Unit: "count"}
	s.Metrics["line_unknown_weight"] = evidence.Metric{Value: unknownTotal, Unit: unit.Samples}
	s.Metrics["position_ticks_over_samples_nodes"] = evidence.Metric{Value: over, Unit: "count"}
	s.Limit("lines are positionTicks: V8 counts a sample on the line of the function it hit, so a line's weight is self weight and its inclusive_weight equals it (the lines callers called from are not recorded)")
	if withTicks == 0 {
		s.Limit("the profile has no positionTicks (older V8 versions and some exporters write none): every row is its function's self weight, line -1")
	} else if unknownTotal > 0 {
		s.Limit(fmt.Sprintf("%d samples have no line (V8's own nodes such as (program) and (garbage collector), or no line recorded): each function's are one row, line -1", unknownTotal))
	}
	if over > 0 {
		s.Limit(fmt.Sprintf("%d nodes have more positionTicks than samples in the samples array: their samples are not split by line (line -1)", over))
	}
	vals.Summarize(s)
	return tw.End(s)
}

// emitEdges writes the cpu.edges table.
func (p *profile) emitEdges(in *formats.Input, out formats.Sink, ids []string, edges []edgeKey, edgeW [][2]int64, hitMismatch int64) error {
	ew, err := out.Begin(table.CPUEdges.HeaderBased(unit.Samples, 0))
	if err != nil {
		return err
	}
	rows := make([]table.Edge, len(edges))
	vals := in.Values()
	for e, k := range edges {
		caller, callee := &p.frames[k.caller], &p.frames[k.callee]
		row := &rows[e]
		*row = table.Edge{
			CallerID:       ids[k.caller],
			CallerFunction: vals.Bound(caller.Function),
			CallerFile:     table.NonEmpty(vals.Bound(caller.URL)),
			CallerLine:     caller.Line,
			CalleeID:       ids[k.callee],
			CalleeFunction: vals.Bound(callee.Function),
			CalleeFile:     table.NonEmpty(vals.Bound(callee.URL)),
			CalleeLine:     callee.Line,
			Weight:         table.Some(float64(edgeW[e][0])),
			SelfWeight:     table.Some(float64(edgeW[e][1])),
		}
		if err := ew.Row(row); err != nil {
			return err
		}
	}
	es := p.summary(int64(len(edges)), hitMismatch)
	es.Limit("sampled caller edges are weights, not invocation counts")
	vals.Summarize(es)
	return ew.End(es)
}

// onceInclusive returns each frame's once-per-sample inclusive weight
// and adds each edge's to edgeW[e][0] (edgeOf nil: no edges). A node's
// subtree counts for its frame only at the frame's outermost occurrence
// on the root path, so a sample under a recursive frame counts once, as
// pprof's cum does; edges likewise count a caller→callee pair once per
// root path. One depth-first walk tracks what is on the path.
func (p *profile) onceInclusive(subtree []int64, edgeOf []int32, edgeW [][2]int64) []int64 {
	incl := make([]int64, len(p.frames))
	onPath := make([]int32, len(p.frames))
	var edgeOnPath []int32
	if edgeOf != nil {
		edgeOnPath = make([]int32, len(edgeW))
	}
	// A negative entry leaves node ^entry.
	var stack []int32
	for i := range p.nodes {
		if p.nodes[i].parent == -1 {
			stack = append(stack, int32(i))
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		leave := i < 0
		if leave {
			i = ^i
		}
		n := &p.nodes[i]
		e := int32(-1)
		if edgeOf != nil {
			e = edgeOf[i]
		}
		if leave {
			onPath[n.frame]--
			if e >= 0 {
				edgeOnPath[e]--
			}
			continue
		}
		if onPath[n.frame] == 0 {
			incl[n.frame] += subtree[i]
		}
		onPath[n.frame]++
		if e >= 0 {
			if edgeOnPath[e] == 0 {
				edgeW[e][0] += subtree[i]
			}
			edgeOnPath[e]++
		}
		stack = append(stack, ^i)
		for _, c := range n.children {
			stack = append(stack, p.byID[c])
		}
	}
	return incl
}

func (p *profile) summary(rows, hitMismatch int64) *evidence.Summary {
	s := &evidence.Summary{
		RowsObserved: rows,
		Complete:     true,
		Metrics: map[string]evidence.Metric{
			table.MetricTotalWeight:    {Value: p.samples, Unit: unit.Samples},
			table.MetricSamples:        {Value: p.samples, Unit: unit.Samples},
			"nodes":                    {Value: len(p.nodes), Unit: "count"},
			"frames":                   {Value: len(p.frames), Unit: "count"},
			"hit_count_mismatch_nodes": {Value: hitMismatch, Unit: "count"},
		},
		Limitations: []string{
			"source maps are not resolved",
			"counts come from the samples array; hitCount is not used",
			"inclusive_weight counts each sample once per frame on its stack; inclusive_occurrence_weight sums the frame's call-tree occurrences, so a recursive frame's can exceed the total",
		},
	}
	if p.hasDeltas {
		s.Metrics["sampled_duration"] = evidence.Metric{Value: float64(p.deltaSum) * 1e-6, Unit: unit.Seconds}
		s.Metrics["negative_time_deltas"] = evidence.Metric{Value: p.negDeltas, Unit: "count"}
		if p.negDeltas > 0 {
			s.Limit(fmt.Sprintf("%d timeDeltas are negative (V8 recorded those samples slightly out of time order); sampled_duration is the net sum, the last sample's time after startTime", p.negDeltas))
		}
	}
	if p.startTime != nil && p.endTime != nil {
		s.Metrics["profile_duration"] = evidence.Metric{Value: float64(*p.endTime-*p.startTime) * 1e-6, Unit: unit.Seconds}
	}
	return s
}

// edgeKey is a caller→callee pair of frames.
type edgeKey struct{ caller, callee int32 }

// emitStacks writes one cpu.stacks row per node that samples hit: the
// frames on its path from the root, outermost first. The (root) node
// stands for the whole profile and is left out.
func (p *profile) emitStacks(in *formats.Input, out formats.Sink, ids []string, hitMismatch int64) error {
	tw, err := out.Begin(table.CPUStacks.Header(unit.Samples))
	if err != nil {
		return err
	}
	var rows int64
	var path []int32
	for i := range p.nodes {
		n := &p.nodes[i]
		c := p.samplesOf(n.id)
		if c == 0 {
			continue
		}
		path = path[:0]
		for j := int32(i); j >= 0; j = p.nodes[j].parent {
			path = append(path, j)
		}
		frames := make([]string, 0, len(path))
		for k := len(path) - 1; k >= 0; k-- {
			nd := &p.nodes[path[k]]
			if nd.parent < 0 && p.frames[nd.frame].Function == "(root)" && p.frames[nd.frame].URL == "" {
				continue
			}
			frames = append(frames, ids[nd.frame])
		}
		if len(frames) == 0 {
			continue // samples of (root) itself: in the total, on no stack
		}
		if err := tw.Row(&table.Stack{Frames: frames, Weight: float64(c)}); err != nil {
			return err
		}
		rows++
	}
	s := p.summary(rows, hitMismatch)
	s.Limit("stacks are the call-tree paths of the nodes samples hit; the (root) node is left out")
	return tw.End(s)
}
