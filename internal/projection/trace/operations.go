// Package trace holds the trace projections, over the tables every trace
// format emits (table.TraceTables): operations (summarize_trace_operations)
// aggregates the slices of each name and identity; window
// (inspect_trace_window) lists the slices and counter samples of a time
// window in time order, with a cursor to continue. Selection (name,
// category, kind, process, thread, time window) comes before any bound.
//
// It imports projection, table, param and evidence.
package trace

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Ranking metrics of summarize_trace_operations.
const (
	RankTotal = "total"
	RankSelf  = "self"
	RankCount = "count"
	RankMax   = "max"
	RankMean  = "mean"
)

// MaxArtifacts bounds how many traces summarize together.
const MaxArtifacts = 64

var selectParams = []param.Param{
	{Name: "name_pattern", Type: param.String, Doc: "RE2 regular expression the operation name must match"},
	{Name: "category", Type: param.String, Doc: "keep only this category (exact: cpu_op, kernel, cuda_runtime…)"},
	{Name: "kind", Type: param.Enum, Enum: []string{table.SliceThread, table.SliceAsync, table.SliceInstant, table.SliceSpan, table.SliceObject},
		Doc: "keep only slices of this kind"},
	{Name: "process", Type: param.String, Doc: "keep only this process: its native id or the name the trace gives it (exact)"},
	{Name: "thread", Type: param.String, Doc: "keep only this thread or track: its native id or the name the trace gives it (exact)"},
	{Name: "start_ns", Type: param.Int, Doc: "window start on the trace's clock, ns: keep slices that end after it (instants at or after it)"},
	{Name: "end_ns", Type: param.Int, Doc: "window end on the trace's clock, ns: keep slices that start before it"},
}

// Operations is the trace-operations projection.
var Operations = &projection.Spec{
	Name:   "trace-operations",
	Tables: []*table.Schema{table.TraceSlices.Schema, table.TraceTracks.Schema},
	Params: append([]param.Param{
		{Name: "top", Type: param.Int, Default: int64(20), Min: param.F(1), Max: param.F(100000),
			Doc: "rows to keep after selection and ranking"},
		{Name: "rank_by", Type: param.Enum, Enum: []string{RankTotal, RankSelf, RankCount, RankMax, RankMean}, Default: RankTotal,
			Doc: "ranking metric: total duration, self time, count, longest or mean duration"},
	}, selectParams...),
	New: newOperations,
}

// selection is the filters every trace projection applies to a slice.
type selection struct {
	name             *regexp.Regexp
	category, kind   string
	process, thread  string
	start, end       int64
	hasStart, hasEnd bool
}

func selectionOf(args evidence.Object, given map[string]bool) (selection, error) {
	var s selection
	if p, _ := args["name_pattern"].(string); p != "" {
		re, err := regexp.Compile(p)
		if err != nil {
			return s, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("argument name_pattern: %v", err), Location: evidence.Location{Field: "name_pattern"}}
		}
		s.name = re
	}
	s.category, _ = args["category"].(string)
	s.kind, _ = args["kind"].(string)
	s.process, _ = args["process"].(string)
	s.thread, _ = args["thread"].(string)
	s.start, s.hasStart = evidence.AsInt(args["start_ns"])
	s.end, s.hasEnd = evidence.AsInt(args["end_ns"])
	s.hasStart = s.hasStart && given["start_ns"]
	s.hasEnd = s.hasEnd && given["end_ns"]
	if s.hasStart && s.hasEnd && s.end <= s.start {
		return s, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("end_ns (%d) must be after start_ns (%d)", s.end, s.start),
			Location: evidence.Location{Field: "end_ns"}}
	}
	return s, nil
}

// overlaps reports whether [start, end] lies in the window: a slice that
// ends after the window starts and starts before it ends; an instant in
// [start_ns, end_ns).
func (s *selection) overlaps(start, end int64) bool {
	if end == start {
		return (!s.hasStart || start >= s.start) && (!s.hasEnd || start < s.end)
	}
	return (!s.hasStart || end > s.start) && (!s.hasEnd || start < s.end)
}

// row reports whether a slice passes the filters that do not need names
// (process and thread are matched on groups, once names are known).
func (s *selection) row(r *table.TraceSlice) bool {
	return (s.kind == "" || r.Kind == s.kind) &&
		(s.category == "" || r.Category == table.Some(s.category)) &&
		(s.name == nil || s.name.MatchString(r.Name)) &&
		s.overlaps(r.StartNS, r.EndNS)
}

// names are the process, thread and track names of trace.tracks rows.
type names struct {
	process map[[2]string]string // artifact, process
	thread  map[[3]string]string // artifact, process, thread
	track   map[[2]string]string // artifact, track
}

func newNames() names {
	return names{process: map[[2]string]string{}, thread: map[[3]string]string{}, track: map[[2]string]string{}}
}

func (n *names) add(artifact string, t *table.TraceTrack) {
	if !t.Name.Valid {
		return
	}
	switch t.Kind {
	case table.TrackProcess:
		n.process[[2]string{artifact, t.Process.V}] = t.Name.V
	case table.TrackThread:
		n.thread[[3]string{artifact, t.Process.V, t.Thread.V}] = t.Name.V
	default:
		n.track[[2]string{artifact, t.Track.V}] = t.Name.V
	}
}

// of returns the process and thread (or track) names of ids.
func (n *names) of(artifact string, ids *table.TraceIDs) (process, thread table.Null[string]) {
	if p, ok := n.process[[2]string{artifact, ids.Process.V}]; ok && ids.Process.Valid {
		process = table.Some(p)
	}
	if ids.Thread.Valid {
		if t, ok := n.thread[[3]string{artifact, ids.Process.V, ids.Thread.V}]; ok {
			thread = table.Some(t)
		}
	} else if ids.Track.Valid {
		if t, ok := n.track[[2]string{artifact, ids.Track.V}]; ok {
			thread = table.Some(t)
		}
	}
	return process, thread
}

// matches reports whether a native id or its name is want ("" matches).
func matches(want string, id, name table.Null[string]) bool {
	return want == "" || id == table.Some(want) || name == table.Some(want)
}

// groupKey is an operation's identity.
type groupKey struct {
	artifact string
	name     string
	kind     string
	category table.Null[string]
	ids      table.TraceIDs
}

type group struct {
	key         groupKey
	count       int64
	total, self int64
	selfUnknown bool
	durs        durations
	first, last int64
}

type operations struct {
	projection.Inputs[struct{}]
	sel    selection
	top    int
	rankBy string
	args   evidence.Object
	groups map[groupKey]*group
	names  names
	read   int64 // slices read
	picked int64 // slices selected
}

func newOperations(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	sel, err := selectionOf(args, given)
	if err != nil {
		return nil, err
	}
	top, _ := evidence.AsInt(args["top"])
	o := &operations{Inputs: projection.NewInputs[struct{}](table.TraceSlices.Schema, table.TraceTracks.Schema),
		sel: sel, top: int(top), rankBy: RankTotal, args: args, groups: map[groupKey]*group{}, names: newNames()}
	if r, ok := args["rank_by"].(string); ok && r != "" {
		o.rankBy = r
	}
	o.Bound(projection.ArtifactBound{Name: "max_artifacts", Max: MaxArtifacts, Unit: "traces"})
	return o, nil
}

func (o *operations) Row(t *evidence.Table, row any) error {
	if t.Name == table.TraceTracks.Name {
		tr, _, artifact, err := projection.Read(&o.Inputs, table.TraceTracks, t, row)
		if err != nil {
			return err
		}
		o.names.add(artifact, tr)
		return nil
	}
	r, _, artifact, err := projection.Read(&o.Inputs, table.TraceSlices, t, row)
	if err != nil {
		return err
	}
	o.read++
	if !o.sel.row(r) {
		return nil
	}
	o.picked++
	k := groupKey{artifact: artifact, name: r.Name, kind: r.Kind, category: r.Category, ids: r.TraceIDs}
	if r.Thread.Valid {
		// A thread's async ids and tracks are instances, not series.
		k.ids.Track = table.Null[string]{}
	}
	g := o.groups[k]
	if g == nil {
		g = &group{key: k, first: r.StartNS, last: r.EndNS}
		o.groups[k] = g
	}
	g.count++
	g.total += r.DurationNS
	switch {
	case r.SelfNS.Valid:
		g.self += r.SelfNS.V
	case r.Kind == table.SliceInstant:
		// An instant has no duration to share.
	default:
		g.selfUnknown = true
	}
	g.durs.add(r.DurationNS)
	g.first = min(g.first, r.StartNS)
	g.last = max(g.last, r.EndNS)
	return nil
}

// metric is a group's ranking value.
func (o *operations) metric(g *group) float64 {
	switch o.rankBy {
	case RankSelf:
		if g.selfUnknown {
			return -1
		}
		return float64(g.self)
	case RankCount:
		return float64(g.count)
	case RankMax:
		return float64(g.durs.max)
	case RankMean:
		return float64(g.total) / float64(g.count)
	}
	return float64(g.total)
}

func cmpNull(a, b table.Null[string]) int {
	if a.Valid != b.Valid {
		if a.Valid {
			return 1
		}
		return -1
	}
	return strings.Compare(a.V, b.V)
}

// before ranks by the metric, then total, then identity: a total order.
func (o *operations) before(a, b *group) bool {
	if ma, mb := o.metric(a), o.metric(b); ma != mb {
		return ma > mb
	}
	if a.total != b.total {
		return a.total > b.total
	}
	ka, kb := &a.key, &b.key
	if c := cmp.Or(strings.Compare(ka.name, kb.name), strings.Compare(ka.artifact, kb.artifact), strings.Compare(ka.kind, kb.kind),
		cmpNull(ka.category, kb.category), cmpNull(ka.ids.Process, kb.ids.Process), cmpNull(ka.ids.Thread, kb.ids.Thread),
		cmpNull(ka.ids.Track, kb.ids.Track), cmpNull(ka.ids.Device, kb.ids.Device), cmpNull(ka.ids.Stream, kb.ids.Stream)); c != 0 {
		return c < 0
	}
	return ka.ids.DistRank.V < kb.ids.DistRank.V || (!ka.ids.DistRank.Valid && kb.ids.DistRank.Valid)
}

func (o *operations) Finish(w projection.Emitter) error {
	if err := o.Ready(); err != nil {
		return err
	}
	ranked := projection.NewTopN(o.top, o.before)
	for _, g := range o.groups {
		proc, thr := o.names.of(g.key.artifact, &g.key.ids)
		if !matches(o.sel.process, g.key.ids.Process, proc) {
			continue
		}
		th := g.key.ids.Thread
		if !th.Valid {
			th = g.key.ids.Track
		}
		if !matches(o.sel.thread, th, thr) {
			continue
		}
		ranked.Add(g)
	}
	head := o.Header(table.TraceOperations.Schema, "", evidence.Derived, o.args)
	head.Arguments["rank_by"] = o.rankBy
	res, err := projection.Begin(w, head)
	if err != nil {
		return err
	}
	var selected int64
	for i, g := range ranked.Sorted() {
		q := g.durs.percentiles(50, 90, 99)
		proc, thr := o.names.of(g.key.artifact, &g.key.ids)
		row := &table.TraceOperation{Rank: int64(i + 1), ArtifactID: g.key.artifact, Name: g.key.name, Kind: g.key.kind,
			Category: g.key.category, TraceIDs: g.key.ids, ProcessName: proc, ThreadName: thr,
			Count: g.count, TotalNS: g.total, MeanNS: float64(g.total) / float64(g.count),
			P50NS: q[0], P90NS: q[1], P99NS: q[2],
			MaxNS: g.durs.max, FirstNS: g.first, LastNS: g.last}
		if !g.selfUnknown {
			row.SelfNS = table.Some(g.self)
		}
		selected += g.count
		if err := res.Row(row, ""); err != nil {
			return err
		}
	}
	s := o.Summarize(ranked.Observed(), ranked.Truncation())
	s.Metrics["slices_read"] = evidence.Metric{Value: o.read, Unit: "slices"}
	s.Metrics["slices_selected"] = evidence.Metric{Value: o.picked, Unit: "slices"}
	s.Metrics["slices_in_rows"] = evidence.Metric{Value: selected, Unit: "slices"}
	unknown := int64(0)
	for _, g := range o.groups {
		if g.selfUnknown {
			unknown++
		}
	}
	if unknown > 0 {
		s.Limit(fmt.Sprintf("%d operations hold slices whose self time is unknown (async slices, spans, or slices the decoder could not place on their thread): their self_ns is null", unknown))
	}
	if o.sel.hasStart || o.sel.hasEnd {
		s.Limit("a time window keeps whole slices that overlap it; durations are not clipped to the window")
	}
	return res.End(s)
}
