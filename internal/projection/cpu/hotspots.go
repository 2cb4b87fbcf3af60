// Package cpu holds the CPU projections: hotspots over cpu.frames tables
// and caller edges over cpu.edges tables, from any CPU profile format.
package cpu

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// MaxProfiles bounds how many profiles rank together.
const MaxProfiles = 32

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

// Hotspots is the cpu-hotspots projection.
var Hotspots = &projection.Spec{
	Name:   "cpu-hotspots",
	Tables: []*table.Schema{table.CPUFrames.Schema},
	Params: append(slices.Clone(commonParams),
		param.Param{Name: "metric", Type: param.Enum, Enum: []string{MetricSelf, MetricCumulative, MetricCalls},
			Doc: "ranking metric; pstats only (other formats have a native fixed weight: omit it)"},
		param.Param{Name: "function_pattern", Type: param.String, Doc: "RE2 regular expression the function name must match"},
		param.Param{Name: "file_pattern", Type: param.String, Doc: "RE2 regular expression the file or URL must match"},
		param.Param{Name: "include_synthetic", Type: param.Bool, Default: true,
			Doc: "keep producer-made frames such as (program), (idle) and (garbage collector)"},
	),
	New: newHotspots,
}

type frameRow struct {
	values evidence.Object
	self   float64
	incl   float64
	calls  int64
	key    string
}

type hotspots struct {
	metric    string
	top       int
	fn, file  *regexp.Regexp
	thread    string
	process   string
	synthetic bool

	inputs inputs
	ranked *projection.TopN[frameRow]
}

func newHotspots(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	h := &hotspots{metric: MetricSelf, synthetic: true}
	if m, ok := args["metric"].(string); ok {
		h.metric = m
	}
	top, _ := evidence.AsInt(args["top"])
	h.top = int(top)
	var err error
	if h.fn, err = compile(args, "function_pattern"); err != nil {
		return nil, err
	}
	if h.file, err = compile(args, "file_pattern"); err != nil {
		return nil, err
	}
	h.thread, _ = args["thread"].(string)
	h.process, _ = args["process"].(string)
	if b, ok := args["include_synthetic"].(bool); ok {
		h.synthetic = b
	}
	h.inputs.args = args
	h.ranked = projection.NewTopN(h.top, h.before)
	return h, nil
}

func compile(args evidence.Object, name string) (*regexp.Regexp, error) {
	s, ok := args[name].(string)
	if !ok || s == "" {
		return nil, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("argument %s: %v", name, err), Location: evidence.Location{Field: name}}
	}
	return re, nil
}

func (h *hotspots) metricValue(r frameRow) float64 {
	switch h.metric {
	case MetricCumulative:
		return r.incl
	case MetricCalls:
		return float64(r.calls)
	}
	return r.self
}

// before ranks by the metric, then inclusive weight, then identity, so the
// order is total and repeatable.
func (h *hotspots) before(a, b frameRow) bool {
	if ma, mb := h.metricValue(a), h.metricValue(b); ma != mb {
		return ma > mb
	}
	if a.incl != b.incl {
		return a.incl > b.incl
	}
	return a.key < b.key
}

func (h *hotspots) Table(t *evidence.Table, _ formats.Caps) error {
	return h.inputs.admit(t, "self_weight", "inclusive_weight")
}

func (h *hotspots) Row(t *evidence.Table, row any) error {
	v, err := projection.Values(t, row)
	if err != nil {
		return err
	}
	in := h.inputs.of(t)
	self, ok1 := evidence.AsFloat(v["self_weight"])
	incl, ok2 := evidence.AsFloat(v["inclusive_weight"])
	if !ok1 || !ok2 {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s: row without numeric weights", t.ID)
	}
	self *= in.factor
	incl *= in.factor
	in.total += self
	if !h.selected(v) {
		return nil
	}
	calls, _ := evidence.AsInt(v["calls"])
	key := fmt.Sprint(v["artifact_id"], "\x00", v["frame_id"], "\x00", v["thread"], "\x00", v["process"])
	h.ranked.Add(frameRow{values: v, self: self, incl: incl, calls: calls, key: key})
	return nil
}

func (h *hotspots) selected(v evidence.Object) bool {
	if !h.synthetic && v["symbolization"] == table.Synthetic {
		return false
	}
	if h.thread != "" && v["thread"] != h.thread {
		return false
	}
	if h.process != "" && v["process"] != h.process {
		return false
	}
	if h.fn != nil {
		s, _ := v["function"].(string)
		if !h.fn.MatchString(s) {
			return false
		}
	}
	if h.file != nil {
		s, _ := v["file"].(string)
		if !h.file.MatchString(s) {
			return false
		}
	}
	return true
}

func (h *hotspots) Summary(t *evidence.Table, s *evidence.Summary) error {
	h.inputs.summary(t, s)
	return nil
}

var hotspotColumns = []string{"artifact_id", "frame_id", "function", "file", "line", "column", "module",
	"symbolization", "thread", "process"}

func (h *hotspots) Finish(w projection.Emitter) error {
	if err := h.inputs.ready(); err != nil {
		return err
	}
	wu := h.inputs.unit
	cols := []evidence.Column{{Name: "rank", Type: evidence.TypeInt, Description: "1 = hottest by the ranking metric"}}
	base := table.CPUFrames.EvidenceColumns(wu)
	for _, name := range hotspotColumns {
		c, _ := findColumn(base, name)
		cols = append(cols, c)
	}
	cols = append(cols,
		evidence.Column{Name: "self_weight", Type: evidence.TypeDouble, Unit: wu, Description: "weight where the frame is the leaf"},
		evidence.Column{Name: "self_share", Type: evidence.TypeDouble, Unit: unit.Ratio1, Description: "self_weight / total weight of the admitted profiles"},
		evidence.Column{Name: "inclusive_weight", Type: evidence.TypeDouble, Unit: wu, Description: "weight of stacks containing the frame (recursion counted per occurrence where the format does)"},
		evidence.Column{Name: "inclusive_share", Type: evidence.TypeDouble, Unit: unit.Ratio1, Description: "inclusive_weight / total weight"},
		evidence.Column{Name: "calls", Type: evidence.TypeInt, Unit: unit.Calls, Description: "recorded call count; null for sampled formats"},
		evidence.Column{Name: "primitive_calls", Type: evidence.TypeInt, Unit: unit.Calls, Description: "recorded non-recursive calls; null for sampled formats"},
	)
	t := h.inputs.header("cpu-hotspots", Hotspots.Name, "summarize_cpu_hotspots", cols)
	t.Arguments["metric"] = h.metric
	if err := w.Begin(t); err != nil {
		return err
	}
	total := h.inputs.totalWeight()
	for i, r := range h.ranked.Sorted() {
		out := evidence.Object{"rank": i + 1}
		for _, name := range hotspotColumns {
			out[name] = r.values[name]
		}
		out["self_weight"] = r.self
		out["inclusive_weight"] = r.incl
		out["self_share"] = share(r.self, total)
		out["inclusive_share"] = share(r.incl, total)
		out["calls"] = r.values["calls"]
		out["primitive_calls"] = r.values["primitive_calls"]
		if err := w.Row(out); err != nil {
			return err
		}
	}
	return w.End(h.inputs.closing(h.ranked.Observed(), h.ranked.Truncation("top")))
}

func share(v, total float64) any {
	if total == 0 {
		return nil
	}
	return v / total
}

func findColumn(cols []evidence.Column, name string) (evidence.Column, bool) {
	for _, c := range cols {
		if c.Name == name {
			return c, true
		}
	}
	return evidence.Column{}, false
}

// Check is the pre-execution rule of summarize_cpu_hotspots: an explicit
// metric applies only to pstats, whose records carry calls, self and
// cumulative time; every other format has one native fixed weight.
func Check(specs []*formats.Spec, given map[string]bool, _ evidence.Object) error {
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
		Message:  fmt.Sprintf("metric applies only to pstats; %s has a native fixed weight: omit metric", strings.Join(other, ", ")),
		Location: evidence.Location{Field: "metric"}}
}
