package gpu

import (
	"regexp"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Autotune is the projection behind inspect_triton_autotune.
var Autotune = &projection.Spec{
	Name:   "gpu-triton-autotune",
	Tables: []*table.Schema{table.AutotuneConfigs.Schema},
	Params: []param.Param{
		{Name: "mode", Type: param.Enum, Enum: []string{"configs", "best"}, Default: "configs",
			Doc: "configs: every configuration of each kernel and tuning key, in producer order; best: only the one Triton selects for each"},
		{Name: "kernel_pattern", Type: param.String, Doc: "keep kernels whose name matches this regular expression (RE2)"},
		{Name: "include_failed", Type: param.Bool, Default: true, Doc: "keep configurations whose timings are all +Infinity (failed to compile or out of resources)"},
		{Name: "top", Type: param.Int, Default: int64(100), Min: param.F(1), Max: param.F(10000), Doc: "rows to keep"},
	},
	New: newAutotune,
}

type autotuneItem struct {
	row      table.AutotuneConfig
	artifact string
}

type autotune struct {
	projection.Inputs[struct{}]
	args       evidence.Object
	best       bool
	failed     bool
	re         *regexp.Regexp
	top        int
	items      []autotuneItem
	read, keys int64
	seenKey    map[[3]string]bool
}

func newAutotune(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &autotune{Inputs: projection.NewInputs[struct{}](table.AutotuneConfigs.Schema), args: args, seenKey: map[[3]string]bool{}}
	p.best = args["mode"] == "best"
	p.failed, _ = args["include_failed"].(bool)
	var err error
	if p.re, err = compile(args, given, "kernel_pattern"); err != nil {
		return nil, err
	}
	top, _ := evidence.AsInt(args["top"])
	p.top = int(top)
	return p, nil
}

func (p *autotune) Table(t *evidence.Table, caps formats.Caps) error {
	if err := p.Check(t); err != nil {
		return err
	}
	_, err := p.Admit(t, caps, struct{}{})
	return err
}

func (p *autotune) Row(t *evidence.Table, row any) error {
	r, _, artifact, err := projection.Read(&p.Inputs, table.AutotuneConfigs, t, row)
	if err != nil {
		return err
	}
	p.read++
	if p.re != nil && !p.re.MatchString(r.Kernel) || p.best && !r.Best || !p.failed && r.Failed {
		return nil
	}
	if k := [3]string{artifact, r.Kernel, r.KeyText}; !p.seenKey[k] {
		p.seenKey[k] = true
		p.keys++
	}
	p.items = append(p.items, autotuneItem{row: *r, artifact: artifact})
	return nil
}

func (p *autotune) Finish(w projection.Emitter) error {
	sort.SliceStable(p.items, func(i, j int) bool {
		a, b := p.items[i], p.items[j]
		if a.row.Kernel != b.row.Kernel {
			return a.row.Kernel < b.row.Kernel
		}
		if a.artifact != b.artifact {
			return a.artifact < b.artifact
		}
		if a.row.KeyText != b.row.KeyText {
			return a.row.KeyText < b.row.KeyText
		}
		return a.row.Index < b.row.Index
	})
	observed := int64(len(p.items))
	var trunc *evidence.Truncation
	list := p.items
	if len(list) > p.top {
		trunc = &evidence.Truncation{Reason: evidence.ReasonRowLimit, Limit: int64(p.top), Omitted: int64(len(list) - p.top)}
		list = list[:p.top]
	}
	res, err := projection.Begin(w, p.Header(table.AutotuneSelection.Schema, "", evidence.Observed, p.args))
	if err != nil {
		return err
	}
	for _, it := range list {
		if err := res.Row(&it.row, it.artifact); err != nil {
			return err
		}
	}
	s := p.Summarize(observed, trunc)
	s.Metrics["configs_read"] = evidence.Metric{Value: p.read, Unit: "count"}
	s.Metrics["tuning_keys_selected"] = evidence.Metric{Value: p.keys, Unit: "count"}
	return res.End(s)
}
