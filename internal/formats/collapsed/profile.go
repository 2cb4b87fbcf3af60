package collapsed

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Frame is one frame identity: the producer's complete function text and
// its module (binary, shared object), "" when the producer names none.
type Frame struct {
	Function   string
	Module     string
	Unresolved bool // the producer could not name the function ([unknown])
	// File and Line are the source line a sample was on, for a profile
	// of lines (perf script's srcline): Line 1-based, 0 when unknown.
	File string
	Line int64
}

// Series is one sampled population that projections never blend: a
// process, optionally a thread, and the sampled event.
type Series struct {
	Process string // "" when the format has one process
	Thread  string // "" when threads are not split
	Event   string // "" when the format names no event
}

type weights struct{ self, incl int64 }

type edgeKey struct{ series, caller, callee uint32 }

// Profile accumulates weighted stacks (leaf first, frame ids from Frame)
// into per-series frame and caller→callee weights. Memory grows with
// distinct frames, series and edges, never with the number of samples.
//
// Recursion: a frame counts once per stack in its inclusive weight, and a
// caller→callee pair once per stack in the edge weight, so no inclusive
// weight exceeds the series total. Self weight goes to the leaf only; an
// unresolved leaf keeps its weight.
type Profile struct {
	Frames []Frame
	Series []Series

	frameIdx  map[Frame]uint32
	seriesIdx map[Series]uint32
	nodes     map[uint64]int // series<<32|frame → index in nodeW
	nodeW     []weights
	edges     map[edgeKey]int
	edgeW     []weights
	totals    []int64 // per series
	samples   []int64 // per series: native samples
	unresLeaf []int64 // per series: weight whose leaf is unresolved

	// Folded lines with no frame (their weight is in the total only).
	emptyLines, emptyWeight int64

	// KeepStacks makes the profile keep each distinct stack of a series
	// and its weight, for cpu.stacks; set it before the first Add. Memory
	// then grows with distinct stacks too.
	KeepStacks bool
	stackIdx   map[string]int // series and frames (leaf first) → index in stacks
	stacks     []stackRec
	stackKey   []byte

	mark    []uint32 // per frame: the stack generation that last counted it
	edgeGen map[uint64]uint32
	gen     uint32
}

// NewProfile returns an empty profile.
func NewProfile() *Profile {
	return &Profile{
		frameIdx:  map[Frame]uint32{},
		seriesIdx: map[Series]uint32{},
		nodes:     map[uint64]int{},
		edges:     map[edgeKey]int{},
		edgeGen:   map[uint64]uint32{},
	}
}

// intern returns k's id, its index in *list, appending it when new (added).
func intern[K comparable](list *[]K, idx map[K]uint32, k K) (id uint32, added bool) {
	if id, ok := idx[k]; ok {
		return id, false
	}
	id = uint32(len(*list))
	*list = append(*list, k)
	idx[k] = id
	return id, true
}

// Frame returns the id of a frame, adding it when new.
func (p *Profile) Frame(f Frame) uint32 {
	id, added := intern(&p.Frames, p.frameIdx, f)
	if added {
		p.mark = append(p.mark, 0)
	}
	return id
}

// SeriesID returns the id of a series, adding it when new.
func (p *Profile) SeriesID(s Series) uint32 {
	id, added := intern(&p.Series, p.seriesIdx, s)
	if added {
		p.totals = append(p.totals, 0)
		p.samples = append(p.samples, 0)
		p.unresLeaf = append(p.unresLeaf, 0)
	}
	return id
}

// Add records weight w for a stack (leaf first) observed in n native
// samples. An empty stack adds to the series total only.
func (p *Profile) Add(series uint32, leafFirst []uint32, w, n int64) {
	p.totals[series] += w
	p.samples[series] += n
	if len(leafFirst) == 0 {
		return
	}
	if p.KeepStacks {
		p.keepStack(series, leafFirst, w)
	}
	p.gen++
	if p.gen == 0 { // wrapped: old marks could collide with the new generation
		clear(p.mark)
		clear(p.edgeGen)
		p.gen = 1
	}
	leaf := leafFirst[0]
	if p.Frames[leaf].Unresolved {
		p.unresLeaf[series] += w
	}
	p.node(series, leaf).self += w
	for i, f := range leafFirst {
		if p.mark[f] != p.gen {
			p.mark[f] = p.gen
			p.node(series, f).incl += w
		}
		if i == 0 {
			continue
		}
		caller, callee := f, leafFirst[i-1]
		pk := uint64(caller)<<32 | uint64(callee)
		if p.edgeGen[pk] == p.gen {
			continue
		}
		p.edgeGen[pk] = p.gen
		e := p.edge(edgeKey{series, caller, callee})
		e.incl += w
		if i == 1 {
			e.self += w
		}
	}
}

func (p *Profile) node(series, frame uint32) *weights {
	return slot(p.nodes, &p.nodeW, uint64(series)<<32|uint64(frame))
}

func (p *Profile) edge(k edgeKey) *weights { return slot(p.edges, &p.edgeW, k) }

// slot returns the weights kept for key k, adding zero weights when new.
func slot[K comparable](idx map[K]int, w *[]weights, k K) *weights {
	i, ok := idx[k]
	if !ok {
		i = len(*w)
		*w = append(*w, weights{})
		idx[k] = i
	}
	return &(*w)[i]
}

// stackRec is one distinct stack of a series.
type stackRec struct {
	series    uint32
	leafFirst []uint32
	w         int64
}

func (p *Profile) keepStack(series uint32, leafFirst []uint32, w int64) {
	k := binary.LittleEndian.AppendUint32(p.stackKey[:0], series)
	for _, f := range leafFirst {
		k = binary.LittleEndian.AppendUint32(k, f)
	}
	p.stackKey = k
	if p.stackIdx == nil {
		p.stackIdx = map[string]int{}
	}
	if i, ok := p.stackIdx[string(k)]; ok {
		p.stacks[i].w += w
		return
	}
	p.stackIdx[string(k)] = len(p.stacks)
	p.stacks = append(p.stacks, stackRec{series: series, leafFirst: slices.Clone(leafFirst), w: w})
}

// Merge adds q into p, remapping q's frame and series ids.
func (p *Profile) Merge(q *Profile) {
	fmap := make([]uint32, len(q.Frames))
	for i, f := range q.Frames {
		fmap[i] = p.Frame(f)
	}
	smap := make([]uint32, len(q.Series))
	for i, s := range q.Series {
		smap[i] = p.SeriesID(s)
		p.totals[smap[i]] += q.totals[i]
		p.samples[smap[i]] += q.samples[i]
		p.unresLeaf[smap[i]] += q.unresLeaf[i]
	}
	for k, i := range q.nodes {
		w := p.node(smap[k>>32], fmap[uint32(k)])
		w.self += q.nodeW[i].self
		w.incl += q.nodeW[i].incl
	}
	for k, i := range q.edges {
		w := p.edge(edgeKey{smap[k.series], fmap[k.caller], fmap[k.callee]})
		w.self += q.edgeW[i].self
		w.incl += q.edgeW[i].incl
	}
	if !p.KeepStacks {
		return
	}
	var ids []uint32
	for _, st := range q.stacks {
		ids = ids[:0]
		for _, f := range st.leafFirst {
			ids = append(ids, fmap[f])
		}
		p.keepStack(smap[st.series], ids, st.w)
	}
}

// EmitOptions say what every summary states besides the weights.
type EmitOptions struct {
	Coverage    evidence.Object
	Limitations []string
	Complete    bool
	Metrics     map[string]evidence.Metric // added to every summary
	// Unit is the weights' unit, "" for samples. In any other unit the
	// number of native samples is not known and no samples metric is
	// stated.
	Unit string
	// In, when set, bounds the string values of rows by its
	// max_value_bytes option (formats.Values), each table counting its own
	// cuts; nil bounds nothing.
	In *formats.Input
}

// values is a fresh bound for one table; nil when there is no input.
func (o EmitOptions) values() *formats.Values {
	if o.In == nil {
		return nil
	}
	return o.In.Values()
}

// FrameID is a frame's identity within an artifact: a digest of its module
// and function, so the same frame has the same id in frames and edges and
// in every decode of the same native profile.
func FrameID(f Frame) string {
	k := f.Module + "\x00" + f.Function
	if f.Line > 0 {
		k += "\x00" + f.File + "\x00" + strconv.FormatInt(f.Line, 10)
	}
	h := sha256.Sum256([]byte(k))
	return hex.EncodeToString(h[:8])
}

func symbolization(f Frame) string {
	if f.Unresolved {
		return table.Unresolved
	}
	return table.Symbolized
}

// Emit writes one cpu.frames and one cpu.edges table per event, rows
// sorted by series, then function and module, so output is deterministic
// however the input was chunked. A table the sink declines is not built.
func (p *Profile) Emit(out formats.Sink, o EmitOptions) error {
	return p.emit(out, o, false)
}

// EmitLines writes one cpu.lines table per event, from a profile whose
// frames are (function, module, file, line): the rows of cpu.frames,
// with their lines, 1-based (-1 where a frame's line is unknown).
func (p *Profile) EmitLines(out formats.Sink, o EmitOptions) error {
	return p.emit(out, o, true)
}

func (p *Profile) emit(out formats.Sink, o EmitOptions, asLines bool) error {
	frames, edges := out.Wants(table.CPUFrames.Schema), out.Wants(table.CPUEdges.Schema)
	stacks := p.KeepStacks && out.Wants(table.CPUStacks.Schema)
	if asLines {
		frames, edges, stacks = out.Wants(table.CPULines.Schema), false, false
	}
	if !frames && !edges && !stacks {
		return nil
	}
	var events []string
	for _, s := range p.Series {
		if !slices.Contains(events, s.Event) {
			events = append(events, s.Event)
		}
	}
	slices.Sort(events)
	if len(events) == 0 {
		events = []string{""} // an empty profile still emits its (empty) tables
	}
	wu := o.Unit
	if wu == "" {
		wu = unit.Samples
	}
	ids := make([]string, len(p.Frames))
	for i, f := range p.Frames {
		ids[i] = FrameID(f)
	}
	for _, ev := range events {
		inEvent := func(s uint32) bool { return p.Series[s].Event == ev }
		var total, samples, unres int64
		for s := range p.Series {
			if inEvent(uint32(s)) {
				total += p.totals[s]
				samples += p.samples[s]
				unres += p.unresLeaf[s]
			}
		}
		metrics := map[string]evidence.Metric{
			table.MetricTotalWeight:  {Value: total, Unit: wu},
			"unresolved_leaf_weight": {Value: unres, Unit: wu},
		}
		if wu == unit.Samples {
			metrics[table.MetricSamples] = evidence.Metric{Value: samples, Unit: unit.Samples}
		}
		for k, v := range o.Metrics {
			metrics[k] = v
		}
		cov := evidence.Object{}
		for k, v := range o.Coverage {
			cov[k] = v
		}
		if ev != "" {
			cov["event"] = ev
		}
		if named := p.seriesTotals(o, inEvent); named != nil {
			cov[table.CoverageProfiles] = named
		}
		if frames {
			h := &evidence.Table{Name: table.CPUFrames.Name, Columns: table.CPUFrames.EvidenceColumns(wu)}
			if asLines {
				h = table.LinesHeader(wu, 1)
			}
			h.Evidence = evidence.Observed
			if err := p.emitFrames(out, h, o, ids, inEvent, metrics, cov); err != nil {
				return err
			}
		}
		if edges {
			if err := p.emitEdges(out, o, wu, ids, inEvent, metrics, cov); err != nil {
				return err
			}
		}
		if stacks {
			if err := p.emitStacks(out, o, wu, ids, inEvent, metrics, cov); err != nil {
				return err
			}
		}
	}
	return nil
}

// seriesTotals lists each named series' total (table.CoverageProfiles),
// samples without a stack included, so that a projection selecting
// threads or processes divides by their own total; nil when no series of
// the event is named (one anonymous series: the table total says it all).
// Names are bounded as in the rows, so the two match.
func (p *Profile) seriesTotals(o EmitOptions, inEvent func(uint32) bool) []any {
	vals := o.values()
	name := func(s string) any {
		if s == "" {
			return nil
		}
		return vals.Bound(s)
	}
	var out []any
	named := false
	for i, s := range p.Series {
		if !inEvent(uint32(i)) {
			continue
		}
		named = named || s.Thread != "" || s.Process != ""
		out = append(out, evidence.Object{"thread": name(s.Thread), "process": name(s.Process), "total_weight": p.totals[i]})
	}
	if !named {
		return nil
	}
	return out
}

func (p *Profile) seriesLess(a, b uint32) int {
	sa, sb := p.Series[a], p.Series[b]
	if c := strings.Compare(sa.Process, sb.Process); c != 0 {
		return c
	}
	return strings.Compare(sa.Thread, sb.Thread)
}

func (p *Profile) frameLess(a, b uint32) int {
	fa, fb := p.Frames[a], p.Frames[b]
	if c := strings.Compare(fa.Function, fb.Function); c != 0 {
		return c
	}
	if c := strings.Compare(fa.Module, fb.Module); c != 0 {
		return c
	}
	return cmp.Or(strings.Compare(fa.File, fb.File), cmp.Compare(fa.Line, fb.Line))
}

func (p *Profile) summary(o EmitOptions, rows int64, metrics map[string]evidence.Metric, cov evidence.Object) *evidence.Summary {
	// Each table its own metrics: a table adds what it alone cut.
	s := &evidence.Summary{RowsObserved: rows, Complete: o.Complete, Coverage: cov, Metrics: maps.Clone(metrics)}
	for _, l := range o.Limitations {
		s.Limit(l)
	}
	return s
}

func (p *Profile) emitFrames(out formats.Sink, h *evidence.Table, o EmitOptions, ids []string, inEvent func(uint32) bool, metrics map[string]evidence.Metric, cov evidence.Object) error {
	keys := make([]uint64, 0, len(p.nodes))
	for k := range p.nodes {
		if inEvent(uint32(k >> 32)) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b uint64) int {
		if c := p.seriesLess(uint32(a>>32), uint32(b>>32)); c != 0 {
			return c
		}
		return p.frameLess(uint32(a), uint32(b))
	})
	tw, err := out.Begin(h)
	if err != nil {
		return err
	}
	vals := o.values()
	for _, k := range keys {
		s, f := p.Series[k>>32], p.Frames[uint32(k)]
		w := p.nodeW[p.nodes[k]]
		line := int64(-1)
		if f.Line > 0 {
			line = f.Line
		}
		// A fresh row each time: a sink in the same process may keep it.
		row := &table.Frame{
			FrameSite: table.FrameSite{
				FrameID:       ids[uint32(k)],
				Function:      vals.Bound(f.Function),
				File:          table.NonEmpty(vals.Bound(f.File)),
				Line:          line,
				Column:        -1,
				Module:        table.NonEmpty(vals.Bound(f.Module)),
				Symbolization: symbolization(f),
				Thread:        table.NonEmpty(vals.Bound(s.Thread)),
				Process:       table.NonEmpty(vals.Bound(s.Process)),
			},
			SelfWeight:      float64(w.self),
			InclusiveWeight: float64(w.incl),
		}
		if err := tw.Row(row); err != nil {
			return err
		}
	}
	sum := p.summary(o, int64(len(keys)), metrics, cov)
	vals.Summarize(sum)
	return tw.End(sum)
}

func (p *Profile) emitEdges(out formats.Sink, o EmitOptions, wu string, ids []string, inEvent func(uint32) bool, metrics map[string]evidence.Metric, cov evidence.Object) error {
	keys := make([]edgeKey, 0, len(p.edges))
	for k := range p.edges {
		if inEvent(k.series) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b edgeKey) int {
		if c := p.seriesLess(a.series, b.series); c != 0 {
			return c
		}
		if c := p.frameLess(a.caller, b.caller); c != 0 {
			return c
		}
		return p.frameLess(a.callee, b.callee)
	})
	tw, err := out.Begin(&evidence.Table{Name: table.CPUEdges.Name, Columns: table.CPUEdges.EvidenceColumns(wu), Evidence: evidence.Observed})
	if err != nil {
		return err
	}
	vals := o.values()
	for _, k := range keys {
		s := p.Series[k.series]
		w := p.edgeW[p.edges[k]]
		row := &table.Edge{
			CallerID:       ids[k.caller],
			CallerFunction: vals.Bound(p.Frames[k.caller].Function),
			CallerLine:     -1,
			CalleeID:       ids[k.callee],
			CalleeFunction: vals.Bound(p.Frames[k.callee].Function),
			CalleeLine:     -1,
			Thread:         table.NonEmpty(vals.Bound(s.Thread)),
			Process:        table.NonEmpty(vals.Bound(s.Process)),
			Weight:         table.Some(float64(w.incl)),
			SelfWeight:     table.Some(float64(w.self)),
		}
		if err := tw.Row(row); err != nil {
			return err
		}
	}
	sum := p.summary(o, int64(len(keys)), metrics, cov)
	vals.Summarize(sum)
	return tw.End(sum)
}

// emitStacks writes the kept stacks of an event, root first, sorted by
// series and then frame ids, so the output does not depend on how the
// input was chunked.
func (p *Profile) emitStacks(out formats.Sink, o EmitOptions, wu string, ids []string, inEvent func(uint32) bool, metrics map[string]evidence.Metric, cov evidence.Object) error {
	idx := make([]int, 0, len(p.stacks))
	for i, st := range p.stacks {
		if inEvent(st.series) {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		sa, sb := &p.stacks[a], &p.stacks[b]
		if c := p.seriesLess(sa.series, sb.series); c != 0 {
			return c
		}
		for i, j := len(sa.leafFirst)-1, len(sb.leafFirst)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
			if c := strings.Compare(ids[sa.leafFirst[i]], ids[sb.leafFirst[j]]); c != 0 {
				return c
			}
		}
		return len(sa.leafFirst) - len(sb.leafFirst)
	})
	tw, err := out.Begin(&evidence.Table{Name: table.CPUStacks.Name, Columns: table.CPUStacks.EvidenceColumns(wu), Evidence: evidence.Observed})
	if err != nil {
		return err
	}
	vals := o.values()
	for _, i := range idx {
		st := &p.stacks[i]
		s := p.Series[st.series]
		frames := make([]string, len(st.leafFirst))
		for j, f := range st.leafFirst {
			frames[len(frames)-1-j] = ids[f]
		}
		if err := tw.Row(&table.Stack{Frames: frames, Weight: float64(st.w),
			Thread: table.NonEmpty(vals.Bound(s.Thread)), Process: table.NonEmpty(vals.Bound(s.Process))}); err != nil {
			return err
		}
	}
	sum := p.summary(o, int64(len(idx)), metrics, cov)
	vals.Summarize(sum)
	return tw.End(sum)
}
