// Package cpu holds the CPU projections: hotspots over cpu.frames tables
// and caller edges over cpu.edges tables, from any CPU profile format.
// Rows are read as the typed rows of package table, whether a decoder in
// the same process handed them over or they came from a block stream.
//
// It imports projection, table, formats (capabilities), param, unit and
// evidence.
package cpu

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Metric names for hotspot ranking.
const (
	MetricSelf       = "self"
	MetricCumulative = "cumulative"
	MetricCalls      = "calls"
)

var commonParams = []param.Param{
	{Name: "top", Type: param.Int, Default: int64(20), Min: param.F(1), Max: param.F(100000),
		Doc: "rows to keep after selection and ranking"},
	{Name: "thread", Type: param.String, Doc: "keep only this thread or profile series (exact match)"},
	{Name: "process", Type: param.String, Doc: "keep only this process series (exact match)"},
}

// common is what commonParams ask for: the rows to keep after ranking,
// and one thread and process series.
type common struct {
	top             int
	thread, process string

	// The filters given, for the hint of a selection that kept nothing.
	misses
	threadMiss, processMiss *miss
}

func commonOf(args evidence.Object) common {
	top, _ := evidence.AsInt(args["top"])
	c := common{top: int(top)}
	c.thread, _ = args["thread"].(string)
	c.process, _ = args["process"].(string)
	return c
}

// series reports whether a row of this thread and process is in the
// selected series.
func (c *common) series(thread, process table.Null[string]) bool {
	return (c.thread == "" || thread == table.Some(c.thread)) && (c.process == "" || process == table.Some(c.process))
}

// seriesFilters registers the thread and process filters for their
// hints.
func (c *common) seriesFilters() {
	c.threadMiss = c.filter("thread", c.thread, "threads")
	c.processMiss = c.filter("process", c.process, "processes")
}

// inSeries is series, remembering the values the filters were tested
// against.
func (c *common) inSeries(thread, process table.Null[string]) bool {
	th := c.thread == "" || thread == table.Some(c.thread)
	pr := c.process == "" || process == table.Some(c.process)
	if thread.Valid {
		c.threadMiss.saw(thread.V, th)
	}
	if process.Valid {
		c.processMiss.saw(process.V, pr)
	}
	return th && pr
}

// str is a string argument; "" when not given.
func str(args evidence.Object, name string) string {
	s, _ := args[name].(string)
	return s
}

// Hotspots is the cpu-hotspots projection.
var Hotspots = &projection.Spec{
	Name:   "cpu-hotspots",
	Tables: []*table.Schema{table.CPUFrames.Schema, table.CPULines.Schema},
	Params: append(slices.Clone(commonParams),
		param.Param{Name: "metric", Type: param.Enum, Enum: []string{MetricSelf, MetricCumulative, MetricCalls},
			Doc: "ranking metric; pstats only (other formats have a native fixed weight: omit it)"},
		param.Param{Name: "function_pattern", Type: param.String, Doc: "RE2 regular expression the function name must match"},
		param.Param{Name: "file_pattern", Type: param.String, Doc: "RE2 regular expression the file or URL must match"},
		param.Param{Name: "include_synthetic", Type: param.Bool, Default: true,
			Doc: "keep producer-made frames such as (program), (idle) and (garbage collector)"},
		param.Param{Name: "group_by", Type: param.Enum, Enum: []string{GroupFunction, GroupLine, GroupFrame}, Default: GroupFunction,
			Doc: "function: a row per function of a series (py-spy's per-line frames pooled); line: a row per sampled source line (py-spy only); frame: a row per frame as decoded"},
	),
	New: newHotspots,
}

// Groupings of hotspot rows.
const (
	GroupFrame    = "frame"
	GroupFunction = "function"
	GroupLine     = "line"
)

// groupKey pools the frames of one function of one series of one table.
type groupKey struct {
	table           int
	function        string
	file, module    table.Null[string]
	thread, process table.Null[string]
	line            int64 // group_by line; 0 otherwise
}

// frameRow is a selected frame: a copy of its row (decoders may reuse
// theirs), its identity and its weights in the result unit.
type frameRow struct {
	frame table.Frame
	id    identity
	self  float64
	incl  float64
	// factor converts the row's other weights to the result unit.
	factor float64
	pooled bool // group_by function or line: the row pools several frames
}

type hotspots struct {
	// The admitted profiles; Table and Summary are theirs.
	profiles
	common

	metric    string
	fn, file  *regexp.Regexp
	synthetic bool

	args   evidence.Object
	ranked *projection.TopN[frameRow]

	fnMiss, fileMiss *miss

	group  string           // GroupFunction, GroupLine or GroupFrame
	groups map[groupKey]int // index in rows
	rows   []frameRow       // the groups, in order of first frame
	pooled int              // groups that pooled several frames
	// group_by line: frames of a line table that carry no line, each
	// ranked as a row of its own.
	noLine int
	// lineTables: an admitted table's frames are lines, so group_by
	// function pools (and says how much).
	lineTables bool
	// skipped are the tables this grouping does not read: cpu.lines
	// unless group_by line; with it, the function tables of formats
	// that emit cpu.lines beside them (Caps.LineTable). awaiting names
	// the artifacts of those function tables (their format), and
	// withLines the artifacts whose cpu.lines table came.
	skipped   map[string]bool
	awaiting  map[string]string
	withLines map[string]bool
}

func newHotspots(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	re, err := compile(args, "function_pattern", "file_pattern")
	if err != nil {
		return nil, err
	}
	h := &hotspots{profiles: newProfilesOf([]*table.Schema{table.CPUFrames.Schema, table.CPULines.Schema}, "self_weight", "inclusive_weight"), common: commonOf(args),
		skipped: map[string]bool{}, awaiting: map[string]string{}, withLines: map[string]bool{},
		metric: MetricSelf, fn: re[0], file: re[1], synthetic: true, args: args}
	if m, ok := args["metric"].(string); ok {
		h.metric = m
	}
	if b, ok := args["include_synthetic"].(bool); ok {
		h.synthetic = b
	}
	h.ranked = projection.NewTopN(h.top, h.before)
	h.group = GroupFunction
	if g, ok := args["group_by"].(string); ok {
		h.group = g
	}
	if h.group != GroupFrame {
		h.groups = map[groupKey]int{}
	}
	h.seriesFilters()
	h.fnMiss = h.filter("function_pattern", str(args, "function_pattern"), "function names")
	h.fileMiss = h.filter("file_pattern", str(args, "file_pattern"), "files")
	return h, nil
}

// compile compiles the RE2 patterns of the arguments named, in order; nil
// for one not given.
func compile(args evidence.Object, names ...string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, len(names))
	for i, name := range names {
		s, ok := args[name].(string)
		if !ok || s == "" {
			continue
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("argument %s: %v", name, err), Location: evidence.Location{Field: name}}
		}
		out[i] = re
	}
	return out, nil
}

func (h *hotspots) metricValue(r *frameRow) float64 {
	switch h.metric {
	case MetricCumulative:
		return r.incl
	case MetricCalls:
		return float64(r.frame.Calls.V)
	}
	return r.self
}

// before ranks by the metric, then inclusive weight, then identity, so the
// order is total and repeatable.
func (h *hotspots) before(a, b frameRow) bool {
	if ma, mb := h.metricValue(&a), h.metricValue(&b); ma != mb {
		return ma > mb
	}
	if a.incl != b.incl {
		return a.incl > b.incl
	}
	return compareIdentity(&a.id, &b.id) < 0
}

func (h *hotspots) Row(t *evidence.Table, row any) error {
	if h.skipped[t.ID] {
		return nil
	}
	f, x, artifact, err := projection.Read(&h.Inputs, table.CPUFrames, t, row)
	if err != nil {
		return err
	}
	self := f.SelfWeight * x.State.factor
	incl := f.InclusiveWeight * x.State.factor
	if h.series(f.Thread, f.Process) {
		x.State.seen(f.Thread, f.Process, self)
	}
	if !h.selected(f) {
		return nil
	}
	r := frameRow{frame: *f, self: self, incl: incl, factor: x.State.factor,
		id: identity{artifact: artifact, table: x.Index, a: f.FrameID, thread: f.Thread, process: f.Process}}
	// A table whose frames are functions already has a row per
	// function; only one whose frames are lines pools them.
	switch {
	case h.group == GroupFunction && x.State.lines:
		h.pool(r, groupKey{table: x.Index, function: f.Function, file: f.File, module: f.Module, thread: f.Thread, process: f.Process})
	case h.group == GroupLine && f.Line >= 1:
		h.pool(r, groupKey{table: x.Index, function: f.Function, file: f.File, module: f.Module, thread: f.Thread, process: f.Process, line: f.Line})
	case h.group == GroupLine:
		h.noLine++
		h.ranked.Add(r)
	default:
		h.ranked.Add(r)
	}
	return nil
}

// Table admits a table as profiles do; group_by line also needs a table
// whose frames are the lines samples were on.
//
// A format with a cpu.lines table (Caps.LineTable) ranks its functions
// from cpu.frames and, with group_by line, its lines from cpu.lines:
// the other table is skipped, and a function table whose lines never
// came is refused at the end.
func (h *hotspots) Table(t *evidence.Table, caps formats.Caps) error {
	isLines := t.Name == table.CPULines.Name
	switch {
	case isLines && h.group != GroupLine:
		h.skipped[t.ID] = true
		return nil
	case !isLines && h.group == GroupLine && caps.LineTable && !table.SampledLines(t):
		if err := h.Check(t); err != nil {
			return err
		}
		h.skipped[t.ID] = true
		for _, a := range t.ArtifactIDs {
			h.awaiting[a] = t.Format
		}
		return nil
	}
	if err := h.profiles.Table(t, caps); err != nil {
		return err
	}
	lines := table.SampledLines(t)
	if h.group == GroupLine && !lines {
		return lineFailure(t.Format, " (table "+t.ID+")")
	}
	if isLines {
		for _, a := range t.ArtifactIDs {
			h.withLines[a] = true
		}
	} else {
		h.lineTables = h.lineTables || lines
	}
	return nil
}

// Summary records an admitted table's summary; a skipped table's is
// not read.
func (h *hotspots) Summary(t *evidence.Table, s *evidence.Summary) error {
	if h.skipped[t.ID] {
		return nil
	}
	return h.profiles.Summary(t, s)
}

// lineFailure refuses group_by line for a profile whose frames are
// functions: their line is where the function starts, not a hot line.
func lineFailure(format, where string) error {
	return &evidence.Failure{Code: evidence.CodeInvalidArgument,
		Message: fmt.Sprintf("group_by line: %s frames%s carry where each function starts, not the lines samples were on; "+
			"hot lines are read from py-spy speedscope profiles, V8 .cpuprofile positionTicks, perf script srcline, pprof profiles and xctrace exports with <source> lines: use group_by function", format, where),
		Location: evidence.Location{Field: "group_by"}, Details: evidence.Object{"format": format}}
}

// noLinesFailure refuses group_by line for an artifact whose format can
// carry sampled lines but whose decoded tables hold none: perf prints
// them only when asked; other formats' blocks came from a decode that
// did not write cpu.lines.
func noLinesFailure(format, artifact string) error {
	how := "decode the artifact again with flameox-decode, which writes cpu.lines beside cpu.frames, or rank it directly"
	if strings.HasPrefix(format, "perf") {
		how = "perf script prints them with -F comm,pid,tid,time,event,ip,sym,dso,srcline, perf.data with the decoder option srcline=true " +
			"(flameox-rank --option srcline=true)"
	}
	return &evidence.Failure{Code: evidence.CodeInvalidArgument,
		Message:  fmt.Sprintf("group_by line: the %s artifact %s has no cpu.lines table (the lines its samples were on): %s; or use group_by function", format, artifact, how),
		Location: evidence.Location{Field: "group_by"}, Details: evidence.Object{"format": format, "artifact": artifact}}
}

// pool adds a selected frame to its group's row (group_by function or
// line). Weights add; a coordinate the frames do not share becomes -1;
// call counts add where all the frames record them.
func (h *hotspots) pool(r frameRow, k groupKey) {
	f := &r.frame
	i, ok := h.groups[k]
	if !ok {
		h.groups[k] = len(h.rows)
		h.rows = append(h.rows, r)
		return
	}
	g := &h.rows[i]
	if g.frame.Line != f.Line {
		g.frame.Line = -1
	}
	if g.frame.Column != f.Column {
		g.frame.Column = -1
	}
	if !g.pooled && g.frame.FrameID != f.FrameID {
		h.pooled++
		g.pooled = true
	}
	g.self += r.self
	g.incl += r.incl
	o := &g.frame.InclusiveOccurrenceWeight
	o.Valid = o.Valid && f.InclusiveOccurrenceWeight.Valid
	o.V += f.InclusiveOccurrenceWeight.V * r.factor / g.factor
	for _, c := range []struct {
		dst *table.Null[int64]
		src table.Null[int64]
	}{{&g.frame.Calls, f.Calls}, {&g.frame.PrimitiveCalls, f.PrimitiveCalls}} {
		c.dst.Valid = c.dst.Valid && c.src.Valid
		c.dst.V += c.src.V
	}
}

func (h *hotspots) selected(f *table.Frame) bool {
	if !h.inSeries(f.Thread, f.Process) || !h.synthetic && f.Symbolization == table.Synthetic {
		return false
	}
	fn := h.fn == nil || h.fn.MatchString(f.Function)
	file := h.file == nil || h.file.MatchString(f.File.V)
	h.fnMiss.saw(f.Function, fn)
	if f.File.Valid {
		h.fileMiss.saw(f.File.V, file)
	}
	return fn && file
}

func (h *hotspots) Finish(w projection.Emitter) error {
	for _, a := range slices.Sorted(maps.Keys(h.awaiting)) {
		if !h.withLines[a] {
			return noLinesFailure(h.awaiting[a], a)
		}
	}
	if err := h.Ready(); err != nil {
		return err
	}
	for _, r := range h.rows {
		h.ranked.Add(r)
	}
	head := h.Header(table.CPUHotspots.Schema, h.unit, evidence.Derived, h.args)
	head.Arguments["metric"] = h.metric
	res, err := projection.Begin(w, head)
	if err != nil {
		return err
	}
	pop := h.population(&h.common)
	total := pop.total
	for i, r := range h.ranked.Sorted() {
		f := &r.frame
		if err := res.Row(&table.Hotspot{Rank: int64(i + 1), ArtifactID: r.id.artifact, FrameSite: f.FrameSite,
			SelfWeight: r.self, SelfShare: share(r.self, total), InclusiveWeight: r.incl, InclusiveShare: share(r.incl, total),
			InclusiveOccurrenceWeight: scaled(f.InclusiveOccurrenceWeight, r.factor),
			Calls:                     f.Calls, PrimitiveCalls: f.PrimitiveCalls}, ""); err != nil {
			return err
		}
	}
	sum := h.summary(pop, &h.misses, h.ranked.Observed(), h.ranked.Truncation())
	switch h.group {
	case GroupFunction:
		if !h.lineTables {
			break // frames are functions: nothing pooled
		}
		sum.Metrics["pooled_functions"] = evidence.Metric{Value: int64(h.pooled), Unit: "count"}
		if h.pooled > 0 {
			sum.Limit(fmt.Sprintf("group_by function: %d functions pool several frames (their lines or columns differ); a row's frame_id is its first frame's, its line and column -1 where the frames differ, and its inclusive weight the sum of its frames', which counts a sample twice when two of them are on its stack", h.pooled))
		}
	case GroupLine:
		sum.Metrics["pooled_lines"] = evidence.Metric{Value: int64(h.pooled), Unit: "count"}
		if h.pooled > 0 {
			sum.Limit(fmt.Sprintf("group_by line: %d lines pool several frames (their columns or ids differ); a row's frame_id is its first frame's and its inclusive weight the sum of its frames'", h.pooled))
		}
		if h.noLine > 0 {
			sum.Limit(fmt.Sprintf("group_by line: %d selected frames carry no line; each is a row of its own, its line unavailable", h.noLine))
		}
	}
	return res.End(sum)
}

// scaled is v converted by factor; null stays null.
func scaled(v table.Null[float64], factor float64) table.Null[float64] {
	if !v.Valid {
		return v
	}
	return table.Some(v.V * factor)
}

// share is v's share of total; null when there is no total weight.
func share(v, total float64) table.Null[float64] {
	if total == 0 {
		return table.Null[float64]{}
	}
	return table.Some(v / total)
}

// Check is the pre-execution rule of summarize_cpu_hotspots: an explicit
// metric needs recorded call counts and cumulative times (a deterministic
// profiler's records); a sampled format has one native fixed weight.
func Check(specs []*formats.Spec, given map[string]bool, args evidence.Object) error {
	if g, _ := args["group_by"].(string); g == GroupLine {
		for _, s := range specs {
			if !s.Caps.SampledLines {
				return lineFailure(s.Name, "")
			}
		}
	}
	if !given["metric"] {
		return nil
	}
	var other []string
	for _, s := range specs {
		if !s.Caps.CallCounts && !slices.Contains(other, s.Name) {
			other = append(other, s.Name)
		}
	}
	if len(other) == 0 {
		return nil
	}
	return &evidence.Failure{Code: evidence.CodeInvalidArgument,
		Message:  fmt.Sprintf("metric applies only to profiles with recorded call counts; %s has a native fixed weight: omit metric", strings.Join(other, ", ")),
		Location: evidence.Location{Field: "metric"}}
}
