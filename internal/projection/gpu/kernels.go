package gpu

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// DefaultMetric is what kernels rank by unless told otherwise.
const DefaultMetric = "gpu__time_duration.sum"

// Kernels is the projection behind inspect_kernel_metrics.
var Kernels = &projection.Spec{
	Name:   "gpu-kernel-metrics",
	Tables: []*table.Schema{table.GPUKernels.Schema, table.GPUKernelMetrics.Schema},
	Params: []param.Param{
		{Name: "metric", Type: param.String, Default: DefaultMetric,
			Doc: "native metric name to rank kernel launches by (its normalized value when flameox converts its unit)"},
		{Name: "order", Type: param.Enum, Enum: []string{"desc", "asc"}, Default: "desc", Doc: "desc: largest first; asc: smallest first"},
		{Name: "metric_pattern", Type: param.String, Doc: "list, for each ranked launch, the metrics whose name matches this regular expression (RE2)"},
		{Name: "max_metrics", Type: param.Int, Default: int64(32), Min: param.F(1), Max: param.F(1000), Doc: "metrics listed per launch at most; the rest are counted"},
		{Name: "kernel_pattern", Type: param.String, Doc: "keep launches whose demangled name matches this regular expression (RE2)"},
		{Name: "device", Type: param.Int, Min: param.F(0), Doc: "keep launches of this CUDA device id"},
		{Name: "top", Type: param.Int, Default: int64(20), Min: param.F(1), Max: param.F(10000), Doc: "rows to keep after ranking"},
	},
	New: newKernels,
}

type launchKey struct {
	artifact      string
	rangeI, actio int64
}

type kernelItem struct {
	key     launchKey
	kernel  *table.GPUKernel
	value   float64
	unit    string
	ranked  bool
	metrics evidence.Object
	omitted int64
}

type kernels struct {
	projection.Inputs[struct{}]
	args      evidence.Object
	metric    string
	asc       bool
	pattern   *regexp.Regexp
	maxMet    int
	kernelRe  *regexp.Regexp
	device    int64
	byDev     bool
	top       int
	items     map[launchKey]*kernelItem
	units     map[string]bool
	read      int64
	nonFinite int64
}

func compile(args evidence.Object, given map[string]bool, name string) (*regexp.Regexp, error) {
	pat, _ := args[name].(string)
	if !given[name] {
		return nil, nil
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: name + ": " + err.Error(), Location: evidence.Location{Field: name}}
	}
	return re, nil
}

func newKernels(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &kernels{Inputs: projection.NewInputs[struct{}](table.GPUKernels.Schema, table.GPUKernelMetrics.Schema), args: args,
		items: map[launchKey]*kernelItem{}, units: map[string]bool{}}
	p.metric, _ = args["metric"].(string)
	if p.metric == "" {
		p.metric = DefaultMetric
	}
	p.asc = args["order"] == "asc"
	var err error
	if p.pattern, err = compile(args, given, "metric_pattern"); err != nil {
		return nil, err
	}
	if p.kernelRe, err = compile(args, given, "kernel_pattern"); err != nil {
		return nil, err
	}
	if given["device"] {
		p.device, _ = evidence.AsInt(args["device"])
		p.byDev = true
	}
	n, _ := evidence.AsInt(args["max_metrics"])
	p.maxMet = int(n)
	top, _ := evidence.AsInt(args["top"])
	p.top = int(top)
	return p, nil
}

func (p *kernels) Table(t *evidence.Table, caps formats.Caps) error {
	if err := p.Check(t); err != nil {
		return err
	}
	_, err := p.Admit(t, caps, struct{}{})
	return err
}

func (p *kernels) item(k launchKey) *kernelItem {
	it := p.items[k]
	if it == nil {
		it = &kernelItem{key: k}
		p.items[k] = it
	}
	return it
}

func (p *kernels) Row(t *evidence.Table, row any) error {
	if t.Name == table.GPUKernels.Name {
		r, _, artifact, err := projection.Read(&p.Inputs, table.GPUKernels, t, row)
		if err != nil {
			return err
		}
		p.read++
		k := *r
		p.item(launchKey{artifact, r.RangeIndex, r.ActionIndex}).kernel = &k
		return nil
	}
	r, _, artifact, err := projection.Read(&p.Inputs, table.GPUKernelMetrics, t, row)
	if err != nil {
		return err
	}
	if r.Metric != p.metric && (p.pattern == nil || !p.pattern.MatchString(r.Metric)) {
		return nil
	}
	it := p.item(launchKey{artifact, r.RangeIndex, r.ActionIndex})
	val, unit := r.Value, r.Unit
	if r.NormalizedVal.Valid {
		val, unit = r.NormalizedVal, r.NormalizedUnit
	}
	if r.Metric == p.metric {
		switch {
		case val.Valid:
			it.value, it.unit, it.ranked = val.V, unit.V, true
		case r.Text.Valid && r.Kind != "string":
			p.nonFinite++
		}
	}
	if p.pattern != nil && p.pattern.MatchString(r.Metric) {
		if it.metrics == nil {
			it.metrics = evidence.Object{}
		}
		if len(it.metrics) >= p.maxMet {
			it.omitted++
			return nil
		}
		it.metrics[r.Metric] = evidence.Object{"value": val.Value(), "text": r.Text.Value(), "unit": unit.Value()}
	}
	return nil
}

func (p *kernels) Finish(w projection.Emitter) error {
	var list []*kernelItem
	var unranked, unmatched int64
	for _, it := range p.items {
		k := it.kernel
		if k == nil {
			unmatched++
			continue
		}
		if p.kernelRe != nil && !p.kernelRe.MatchString(k.Name) || p.byDev && (!k.DeviceID.Valid || k.DeviceID.V != p.device) {
			continue
		}
		if !it.ranked {
			unranked++
			continue
		}
		p.units[it.unit] = true
		list = append(list, it)
	}
	if len(p.units) > 1 {
		var us []string
		for u := range p.units {
			us = append(us, fmt.Sprintf("%q", u))
		}
		sort.Strings(us)
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("metric %s is in different units across the launches (%v): they cannot be ranked together; select one report or device", p.metric, us),
			Location: evidence.Location{Field: "metric"}}
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.value != b.value {
			return (a.value < b.value) == p.asc
		}
		if a.key.artifact != b.key.artifact {
			return a.key.artifact < b.key.artifact
		}
		if a.key.rangeI != b.key.rangeI {
			return a.key.rangeI < b.key.rangeI
		}
		return a.key.actio < b.key.actio
	})
	observed := int64(len(list))
	var trunc *evidence.Truncation
	if len(list) > p.top {
		trunc = &evidence.Truncation{Reason: evidence.ReasonRowLimit, Limit: int64(p.top), Omitted: int64(len(list) - p.top)}
		list = list[:p.top]
	}
	res, err := projection.Begin(w, p.Header(table.GPUKernelRanking.Schema, "", evidence.Derived, p.args))
	if err != nil {
		return err
	}
	var listedOmitted int64
	for _, it := range list {
		k := it.kernel
		row := &table.GPUKernelRank{RangeIndex: k.RangeIndex, ActionIndex: k.ActionIndex, DeviceID: k.DeviceID, DeviceName: k.DeviceName,
			Name: k.Name, Metric: p.metric, Value: it.value, Unit: table.NonEmpty(it.unit), DurationNS: k.DurationNS,
			SMThroughput: k.SMThroughput, MemThroughput: k.MemThroughput, Occupancy: k.Occupancy, Registers: k.Registers,
			Rules: ruleIDs(k.Rules), Metrics: it.metrics}
		listedOmitted += it.omitted
		if err := res.Row(row, it.key.artifact); err != nil {
			return err
		}
	}
	s := p.Summarize(observed, trunc)
	s.Metrics["launches_read"] = evidence.Metric{Value: p.read, Unit: "count"}
	s.Metrics["launches_ranked"] = evidence.Metric{Value: observed, Unit: "count"}
	s.Metrics["launches_without_metric"] = evidence.Metric{Value: unranked, Unit: "count"}
	if unranked > 0 {
		s.Limit(fmt.Sprintf("%d selected launches hold no finite %s and are not ranked", unranked, p.metric))
	}
	if unmatched > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d launches have metric rows but no gpu.kernels row: give both tables of the report", unmatched))
	}
	if listedOmitted > 0 {
		s.Limit(fmt.Sprintf("%d metrics matching metric_pattern were left out of the listed launches by max_metrics=%d", listedOmitted, p.maxMet))
	}
	return res.End(s)
}

// ruleIDs lists the ids of the rule results that carry a message.
func ruleIDs(rules []any) []any {
	out := []any{}
	for _, r := range rules {
		o, ok := r.(evidence.Object)
		if !ok || o["message"] == nil {
			continue
		}
		if id, ok := o["id"].(string); ok {
			out = append(out, id)
		}
	}
	return out
}
