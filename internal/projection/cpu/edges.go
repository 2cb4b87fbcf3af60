package cpu

import (
	"regexp"
	"slices"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Edges is the cpu-caller-edges projection.
var Edges = &projection.Spec{
	Name:   "cpu-caller-edges",
	Tables: []*table.Schema{table.CPUEdges.Schema},
	Params: append(slices.Clone(commonParams),
		param.Param{Name: "caller_pattern", Type: param.String, Doc: "RE2 regular expression the caller function must match"},
		param.Param{Name: "callee_pattern", Type: param.String, Doc: "RE2 regular expression the callee function must match"},
	),
	New: newEdges,
}

// edgeRow is a selected edge: a copy of its row, its identity and its
// weights in the result unit.
type edgeRow struct {
	edge     table.Edge
	id       identity
	weighted bool // the producer recorded weights for this edge
	weight   float64
	self     float64
}

type edges struct {
	// The admitted profiles; Table and Summary are theirs.
	profiles
	common

	caller, callee *regexp.Regexp
	args           evidence.Object
	ranked         *projection.TopN[edgeRow]
	unweighted     int64 // edges without recorded weights

	callerMiss, calleeMiss *miss
}

func newEdges(args evidence.Object, _ map[string]bool) (projection.Projector, error) {
	re, err := compile(args, "caller_pattern", "callee_pattern")
	if err != nil {
		return nil, err
	}
	e := &edges{profiles: newProfiles(table.CPUEdges.Schema, "weight", "self_weight"), common: commonOf(args), caller: re[0], callee: re[1], args: args}
	e.seriesFilters()
	e.callerMiss = e.filter("caller_pattern", str(args, "caller_pattern"), "caller function names")
	e.calleeMiss = e.filter("callee_pattern", str(args, "callee_pattern"), "callee function names")
	e.fallback = "the callee self weight of its selected edges; the own weight of root frames and samples with empty stacks are not in it"
	// Weighted edges rank first by weight; edges whose producer recorded
	// only call counts (the profile module's pstats) follow, by calls.
	e.ranked = projection.NewTopN(e.top, func(a, b edgeRow) bool {
		if a.weighted != b.weighted {
			return a.weighted
		}
		if a.weight != b.weight {
			return a.weight > b.weight
		}
		if a.self != b.self {
			return a.self > b.self
		}
		if a.edge.Calls.V != b.edge.Calls.V {
			return a.edge.Calls.V > b.edge.Calls.V
		}
		return compareIdentity(&a.id, &b.id) < 0
	})
	return e, nil
}

func (e *edges) Row(t *evidence.Table, row any) error {
	r, x, artifact, err := projection.Read(&e.Inputs, table.CPUEdges, t, row)
	if err != nil {
		return err
	}
	weighted := r.Weight.Valid && r.SelfWeight.Valid
	if !weighted && (r.Weight.Valid || r.SelfWeight.Valid) {
		return evidence.Failf(evidence.CodeDecodeFailure, "table %s: edge weights must be numbers or both null", t.ID)
	}
	if !weighted {
		e.unweighted++
	}
	w := r.Weight.V * x.State.factor
	s := r.SelfWeight.V * x.State.factor
	if !e.inSeries(r.Thread, r.Process) {
		return nil
	}
	x.State.seen(r.Thread, r.Process, s)
	caller := e.caller == nil || e.caller.MatchString(r.CallerFunction)
	callee := e.callee == nil || e.callee.MatchString(r.CalleeFunction)
	e.callerMiss.saw(r.CallerFunction, caller)
	e.calleeMiss.saw(r.CalleeFunction, callee)
	if !caller || !callee {
		return nil
	}
	e.ranked.Add(edgeRow{edge: *r, weighted: weighted, weight: w, self: s,
		id: identity{artifact: artifact, table: x.Index, a: r.CallerID, b: r.CalleeID, thread: r.Thread, process: r.Process}})
	return nil
}

func (e *edges) Finish(w projection.Emitter) error {
	if err := e.Ready(); err != nil {
		return err
	}
	res, err := projection.Begin(w, e.Header(table.CPUCallerEdges.Schema, e.unit, evidence.Derived, e.args))
	if err != nil {
		return err
	}
	for i, r := range e.ranked.Sorted() {
		// An unweighted edge's weights are null already (Row refuses one of
		// the two alone); a weighted edge's are converted.
		out := &table.CallerEdge{Rank: int64(i + 1), ArtifactID: r.id.artifact, Edge: r.edge}
		if r.weighted {
			out.Weight, out.SelfWeight = table.Some(r.weight), table.Some(r.self)
		}
		if err := res.Row(out, ""); err != nil {
			return err
		}
	}
	sum := e.summary(e.population(&e.common), &e.misses, e.ranked.Observed(), e.ranked.Truncation())
	if e.unweighted > 0 {
		sum.Metrics["unweighted_edges"] = evidence.Metric{Value: e.unweighted, Unit: "count"}
		sum.Limit("some edges carry call counts but no weights (the producer recorded none); they rank after weighted edges, by calls")
	}
	return res.End(sum)
}
