package pprof

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// CountUnit is the unit of memory.frames counts: the objects of a Go heap
// profile's X_objects sample type.
const CountUnit = "objects"

// maxComments bounds the profile comments the summary lists.
const maxComments = 32

func frameID(k frameKey) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s\x00%x", k.name, k.file, k.start, k.module, k.address)
	if k.line != 0 {
		fmt.Fprintf(h, "\x00%d", k.line)
	}
	return "pprof:" + hex.EncodeToString(h.Sum(nil)[:8])
}

func line(n int64) int64 {
	if n <= 0 {
		return -1 // profile.proto writes 0 for an unknown line
	}
	return n
}

// siteRow returns the row coordinates of a frame: its function's start
// line, or in the line layer the line the samples were on.
func (g *graph) siteRow(f *frame, ids []string, vals *formats.Values) table.FrameSite {
	s := &g.sites[f.site]
	sym := table.Symbolized
	switch {
	case s.unresolved:
		sym = table.Unresolved
	case s.key.name == "":
		sym = table.Anonymous
	}
	ln := s.key.start
	if g.lineLayer {
		ln = s.key.line
	}
	return table.FrameSite{
		FrameID:       ids[f.site],
		Function:      vals.Bound(s.key.name),
		File:          table.NonEmpty(vals.Bound(s.key.file)),
		Line:          line(ln),
		Column:        -1,
		Module:        table.NonEmpty(vals.Bound(s.key.module)),
		Symbolization: sym,
		Thread:        g.seriesName(f.series, vals),
	}
}

func (g *graph) seriesName(i int32, vals *formats.Values) table.Null[string] {
	return table.NonEmpty(vals.Bound(g.series[i].name))
}

func (g *graph) emit(in *formats.Input, p *profile.Profile, w *weights, opt aggOptions, out formats.Sink) error {
	ids := make([]string, len(g.sites))
	for i := range g.sites {
		ids[i] = frameID(g.sites[i].key)
	}
	if w.memory != nil {
		return g.emitMemory(in, p, w, opt, out, ids)
	}
	if err := g.emitFunctions(in, p, w, opt, out, ids); err != nil {
		return err
	}
	if opt.lines {
		return g.emitLines(in, p, w, opt, out)
	}
	return nil
}

// emitFunctions writes cpu.frames and, when wanted, cpu.edges and
// cpu.stacks.
func (g *graph) emitFunctions(in *formats.Input, p *profile.Profile, w *weights, opt aggOptions, out formats.Sink, ids []string) error {
	if !out.Wants(table.CPUFrames.Schema) && !opt.edges && !opt.stacks {
		return nil
	}
	tw, err := out.Begin(table.CPUFrames.HeaderBased(w.unit.Name, 1))
	if err != nil {
		return err
	}
	vals := in.Values()
	var row table.Frame
	for i := range g.frames {
		f := &g.frames[i]
		row = table.Frame{FrameSite: g.siteRow(f, ids, vals),
			SelfWeight: float64(f.self[0]), InclusiveWeight: float64(f.incl[0])}
		if err := tw.Row(&row); err != nil {
			return err
		}
	}
	if err := tw.End(g.summary(in, p, w, opt, int64(len(g.frames)), vals, false)); err != nil {
		return err
	}
	if opt.edges {
		if err := g.emitEdges(in, p, w, opt, out, ids); err != nil {
			return err
		}
	}
	if opt.stacks {
		return g.emitStacks(in, p, w, opt, out, ids)
	}
	return nil
}

// emitLines writes cpu.lines from the line layer.
func (g *graph) emitLines(in *formats.Input, p *profile.Profile, w *weights, opt aggOptions, out formats.Sink) error {
	l := g.lines
	l.series = g.series
	ids := make([]string, len(l.sites))
	for i := range l.sites {
		ids[i] = frameID(l.sites[i].key)
	}
	tw, err := out.Begin(table.LinesHeader(w.unit.Name, 1))
	if err != nil {
		return err
	}
	vals := in.Values()
	var row table.Frame
	var noLine int64
	for i := range l.frames {
		f := &l.frames[i]
		row = table.Frame{FrameSite: l.siteRow(f, ids, vals), SelfWeight: float64(f.self[0]), InclusiveWeight: float64(f.incl[0])}
		if row.Line < 1 {
			noLine += f.self[0]
		}
		if err := tw.Row(&row); err != nil {
			return err
		}
	}
	s := g.summary(in, p, w, opt, int64(len(l.frames)), vals, true)
	s.Metrics["self_weight_without_line"] = evidence.Metric{Value: noLine, Unit: w.unit.Name}
	if noLine > 0 {
		s.Limit("some locations record no line number: their samples are their function's row with line -1")
	}
	return tw.End(s)
}

// emitMemory writes memory.frames: bytes and objects of the population.
func (g *graph) emitMemory(in *formats.Input, p *profile.Profile, w *weights, opt aggOptions, out formats.Sink, ids []string) error {
	tw, err := out.Begin(table.MemoryFrames.HeaderBased(CountUnit, 1))
	if err != nil {
		return err
	}
	vals := in.Values()
	m := w.memory
	count := func(n int64) table.Null[int64] {
		if m.count < 0 {
			return table.Null[int64]{}
		}
		return table.Some(n)
	}
	var row table.MemoryFrame
	for i := range g.frames {
		f := &g.frames[i]
		row = table.MemoryFrame{FrameSite: g.siteRow(f, ids, vals), Population: m.population,
			SelfBytes: f.self[0], InclusiveBytes: f.incl[0], SelfCount: count(f.self[1]), InclusiveCount: count(f.incl[1])}
		if err := tw.Row(&row); err != nil {
			return err
		}
	}
	if err := tw.End(g.summary(in, p, w, opt, int64(len(g.frames)), vals, false)); err != nil {
		return err
	}
	if out.Wants(table.MemoryStacks.Schema) { // memstacks.go
		return g.emitMemoryStacks(in, p, w, opt, out, ids)
	}
	return nil
}

// emitStacks writes the cpu.stacks table.
func (g *graph) emitStacks(in *formats.Input, p *profile.Profile, w *weights, opt aggOptions, out formats.Sink, ids []string) error {
	sw, err := out.Begin(table.CPUStacks.Header(w.unit.Name))
	if err != nil {
		return err
	}
	vals := in.Values()
	for _, st := range g.stackOrder {
		frames := make([]string, len(st.frames))
		for i, fi := range st.frames {
			frames[len(frames)-1-i] = ids[g.frames[fi].site]
		}
		if err := sw.Row(&table.Stack{Frames: frames, Thread: g.seriesName(st.series, vals), Weight: float64(st.weight)}); err != nil {
			return err
		}
	}
	return sw.End(g.summary(in, p, w, opt, int64(len(g.stackOrder)), vals, false))
}

// emitEdges writes the cpu.edges table.
func (g *graph) emitEdges(in *formats.Input, p *profile.Profile, w *weights, opt aggOptions, out formats.Sink, ids []string) error {
	ew, err := out.Begin(table.CPUEdges.HeaderBased(w.unit.Name, 1))
	if err != nil {
		return err
	}
	var er table.Edge
	vals := in.Values()
	for _, k := range g.order {
		e := g.edges[k]
		caller, callee := &g.frames[k.caller], &g.frames[k.callee]
		cr, ce := g.siteRow(caller, ids, vals), g.siteRow(callee, ids, vals)
		er = table.Edge{CallerID: cr.FrameID, CallerFunction: cr.Function, CallerFile: cr.File, CallerLine: cr.Line,
			CalleeID: ce.FrameID, CalleeFunction: ce.Function, CalleeFile: ce.File, CalleeLine: ce.Line, Thread: ce.Thread,
			Weight: table.Some(float64(e.weight)), SelfWeight: table.Some(float64(e.self))}
		if err := ew.Row(&er); err != nil {
			return err
		}
	}
	s := g.summary(in, p, w, opt, int64(len(g.order)), vals, false)
	s.Limit("sampled caller edges are weights, not invocation counts")
	return ew.End(s)
}

// measures says what the weights of a sample type are, for the types
// Go's runtime writes; others are the producer's to define.
func measures(st *profile.ValueType, memory bool) (what string, cpu bool) {
	switch st.Type {
	case "cpu":
		return "CPU time", true
	case "samples":
		return "CPU samples", true
	case "wall":
		return "wall-clock time, on CPU or not", false
	case "contentions":
		return "contention events (how often goroutines waited on a mutex or a blocking operation), not CPU samples", false
	case "delay":
		return "time goroutines waited on contended mutexes or blocking operations, not CPU time", false
	case "goroutine":
		return "live goroutines with each stack when the profile was written, not CPU samples", false
	case "inuse_space", "inuse_objects":
		return "sampled heap memory still live at the most recent garbage collection", false
	case "alloc_space", "alloc_objects":
		return "sampled heap memory allocated since the program started, freed or not", false
	}
	if memory {
		return fmt.Sprintf("%s in %s, as the producer defines it", st.Type, st.Unit), false
	}
	return fmt.Sprintf("%s in %s, as the producer defines it; not known to be CPU time", st.Type, st.Unit), false
}

// summary is a table's summary; lineRows: the table is cpu.lines.
func (g *graph) summary(in *formats.Input, p *profile.Profile, w *weights, opt aggOptions, rows int64, vals *formats.Values, lineRows bool) *evidence.Summary {
	st := p.SampleType[w.index]
	what, cpu := measures(st, w.memory != nil)
	s := &evidence.Summary{RowsObserved: rows, Complete: true,
		Metrics: map[string]evidence.Metric{
			table.MetricSamples: {Value: int64(len(p.Sample)), Unit: unit.Samples},
			"sample_type":       {Value: vals.Bound(w.name)},
			"functions":         {Value: int64(len(p.Function)), Unit: "count"},
			"locations":         {Value: int64(len(p.Location)), Unit: "count"},
			"inlined_calls":     {Value: g.inlined, Unit: "count"},
		},
		Coverage: evidence.Object{"sample_type": vals.Bound(st.Type), "measures": what}}
	types := make([]any, len(p.SampleType))
	for i, t := range p.SampleType {
		types[i] = evidence.Object{"type": vals.Bound(t.Type), "unit": vals.Bound(t.Unit), "total": g.totals[i]}
	}
	s.Coverage["sample_types"] = types
	if p.DefaultSampleType != "" {
		s.Coverage["default_sample_type"] = vals.Bound(p.DefaultSampleType)
	}
	if m := w.memory; m != nil {
		s.Metrics[table.MetricPopulationBytes] = evidence.Metric{Value: g.totals[m.bytes] * m.factor, Unit: unit.Bytes}
		s.Metrics["samples_without_stack_bytes"] = evidence.Metric{Value: g.noStack[0], Unit: unit.Bytes}
		s.Coverage["population"] = m.population
		if m.count >= 0 {
			s.Metrics[table.MetricPopulationCount] = evidence.Metric{Value: g.totals[m.count], Unit: CountUnit}
			s.Coverage["count_type"] = vals.Bound(*m.counted)
		} else {
			s.Limit(fmt.Sprintf("the profile has no object count paired with %s: the count columns are null", w.name))
		}
		s.Limit("bytes and objects are the values the profiler wrote: Go's heap profile scales its sampled allocations (runtime.MemProfileRate) to estimates")
		if w.index == m.count {
			s.Limit(fmt.Sprintf("sample_index %s selects the population; rank it by count with rank_by self_count", st.Type))
		}
	} else {
		s.Metrics[table.MetricTotalWeight] = evidence.Metric{Value: g.totals[w.index], Unit: w.unit.Name}
		s.Metrics["samples_without_stack"] = evidence.Metric{Value: g.noStack[0], Unit: w.unit.Name}
		if !cpu {
			s.Limit(fmt.Sprintf("the weights measure %s (sample type %s)", what, w.name))
		}
	}
	switch {
	case lineRows:
		s.Limit("rows are source lines (function, file, line), as pprof -lines: self weight is the line of the innermost function at each sample's leaf location; inclusive weight counts each (function, file, line) on the stack once per sample, as pprof's cum does")
		if g.inlined > 0 {
			s.Limit("an inlined call's line is a row of its own, beside the line of the function it was inlined into (the call site), as pprof lists it")
		}
	default:
		if opt.lines {
			s.Limit("frames are functions (pprof's default granularity); the lines samples were on are the cpu.lines table (group_by line)")
		} else {
			s.Limit("frames are functions (pprof's default granularity)")
		}
		s.Limit("inclusive weight counts a frame once per sample, as pprof's cum does")
		if g.inlined > 0 {
			s.Limit("an inlined call is a frame of its own, under the function it was inlined into, as pprof lists it")
		}
	}
	if p.DurationNanos > 0 {
		s.Metrics["profile_duration"] = evidence.Metric{Value: float64(p.DurationNanos) * 1e-9, Unit: unit.Seconds}
	}
	if p.TimeNanos != 0 {
		s.Coverage["time_nanos"] = p.TimeNanos
	}
	if p.PeriodType != nil {
		s.Coverage["period_type"] = vals.Bound(p.PeriodType.Type + "/" + p.PeriodType.Unit)
		if p.Period > 0 {
			s.Metrics["period"] = evidence.Metric{Value: p.Period, Unit: vals.Bound(p.PeriodType.Unit)}
		}
	}
	if p.DropFrames != "" {
		s.Coverage["drop_frames"] = vals.Bound(p.DropFrames)
	}
	if p.KeepFrames != "" {
		s.Coverage["keep_frames"] = vals.Bound(p.KeepFrames)
	}
	if len(p.Comments) > 0 {
		list := make([]any, 0, min(len(p.Comments), maxComments))
		for _, c := range p.Comments[:min(len(p.Comments), maxComments)] {
			list = append(list, vals.Bound(c))
		}
		s.Coverage["comments"] = list
		if len(p.Comments) > maxComments {
			s.Limit(fmt.Sprintf("the profile has %d comments; the first %d are listed", len(p.Comments), maxComments))
		}
	}
	countUnit, weightUnit := "", w.unit.Name
	if w.memory != nil {
		countUnit, weightUnit = CountUnit, unit.Bytes
	}
	if g.labels.anyLabels {
		s.Coverage["labels"] = g.labels.coverage(vals, weightUnit, countUnit)
		s.Coverage["label_weight_unit"] = weightUnit
	}
	for _, l := range g.labels.limitations(opt.series, vals) {
		s.Limit(l)
	}
	if len(opt.series) > 0 {
		keys := make([]any, len(opt.series))
		for i, k := range opt.series {
			keys[i] = vals.Bound(k)
		}
		s.Coverage["label_series"] = keys
		list := make([]any, 0, len(g.series))
		for i := range g.series {
			if g.series[i].samples == 0 {
				continue // no sample lacks every key
			}
			var name any
			if n := g.seriesName(int32(i), vals); n.Valid {
				name = n.V
			}
			e := evidence.Object{"thread": name, "process": nil, "total_weight": g.series[i].total[0]}
			if w.memory != nil {
				e["population_bytes"] = g.series[i].total[0]
				e["population_count"] = g.series[i].total[1]
			}
			list = append(list, e)
		}
		s.Coverage[table.CoverageProfiles] = list
	}
	if g.noStack[0] > 0 {
		s.Limit("some samples have no stack: their weight counts in the totals but in no frame")
	}
	if g.invalidUTF8 > 0 {
		s.Metrics["invalid_utf8_strings"] = evidence.Metric{Value: g.invalidUTF8, Unit: "count"}
		s.Limit("some of the profile's strings were not valid UTF-8: their invalid bytes are shown as U+FFFD")
		s.Complete = false
	}
	vals.Summarize(s)
	return s
}
