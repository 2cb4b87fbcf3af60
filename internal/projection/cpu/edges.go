package cpu

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
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

type edgeRow struct {
	values   evidence.Object
	weighted bool // the producer recorded weights for this edge
	weight   float64
	self     float64
	calls    int64
	key      string
}

type edges struct {
	top             int
	caller, callee  *regexp.Regexp
	thread, process string
	inputs          inputs
	ranked          *projection.TopN[edgeRow]
	unweighted      int64 // edges without recorded weights
}

func newEdges(args evidence.Object, _ map[string]bool) (projection.Projector, error) {
	e := &edges{}
	top, _ := evidence.AsInt(args["top"])
	e.top = int(top)
	var err error
	if e.caller, err = compile(args, "caller_pattern"); err != nil {
		return nil, err
	}
	if e.callee, err = compile(args, "callee_pattern"); err != nil {
		return nil, err
	}
	e.thread, _ = args["thread"].(string)
	e.process, _ = args["process"].(string)
	e.inputs.args = args
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
		if a.calls != b.calls {
			return a.calls > b.calls
		}
		return a.key < b.key
	})
	return e, nil
}

func (e *edges) Table(t *evidence.Table, _ formats.Caps) error {
	return e.inputs.admit(t, "weight", "self_weight")
}

func (e *edges) Row(t *evidence.Table, row any) error {
	v, err := projection.Values(t, row)
	if err != nil {
		return err
	}
	in := e.inputs.of(t)
	w, ok1 := evidence.AsFloat(v["weight"])
	s, ok2 := evidence.AsFloat(v["self_weight"])
	weighted := ok1 && ok2
	if !weighted && (v["weight"] != nil || v["self_weight"] != nil) {
		return evidence.Failf(evidence.CodeDecodeFailure, "table %s: edge weights must be numbers or both null", t.ID)
	}
	if !weighted {
		e.unweighted++
	}
	w *= in.factor
	s *= in.factor
	in.total += s
	if e.thread != "" && v["thread"] != e.thread {
		return nil
	}
	if e.process != "" && v["process"] != e.process {
		return nil
	}
	if e.caller != nil {
		f, _ := v["caller_function"].(string)
		if !e.caller.MatchString(f) {
			return nil
		}
	}
	if e.callee != nil {
		f, _ := v["callee_function"].(string)
		if !e.callee.MatchString(f) {
			return nil
		}
	}
	key := fmt.Sprint(v["artifact_id"], "\x00", v["caller_id"], "\x00", v["callee_id"], "\x00", v["thread"], "\x00", v["process"])
	calls, _ := evidence.AsInt(v["calls"])
	e.ranked.Add(edgeRow{values: v, weighted: weighted, weight: w, self: s, calls: calls, key: key})
	return nil
}

func (e *edges) Summary(t *evidence.Table, s *evidence.Summary) error {
	e.inputs.summary(t, s)
	return nil
}

func (e *edges) Finish(w projection.Emitter) error {
	if err := e.inputs.ready(); err != nil {
		return err
	}
	base := table.CPUEdges.EvidenceColumns(e.inputs.unit)
	cols := append([]evidence.Column{{Name: "rank", Type: evidence.TypeInt, Description: "1 = heaviest edge"}}, base...)
	t := e.inputs.header("cpu-caller-edges", Edges.Name, "summarize_cpu_caller_edges", cols)
	if err := w.Begin(t); err != nil {
		return err
	}
	for i, r := range e.ranked.Sorted() {
		out := evidence.Object{"rank": i + 1}
		for _, c := range base {
			out[c.Name] = r.values[c.Name]
		}
		if r.weighted {
			out["weight"] = r.weight
			out["self_weight"] = r.self
		}
		if err := w.Row(out); err != nil {
			return err
		}
	}
	sum := e.inputs.closing(e.ranked.Observed(), e.ranked.Truncation("top"))
	if e.unweighted > 0 {
		sum.Metrics["unweighted_edges"] = evidence.Metric{Value: e.unweighted, Unit: "count"}
		sum.Limit("some edges carry call counts but no weights (the producer recorded none); they rank after weighted edges, by calls")
	}
	return w.End(sum)
}
