// Package gpu holds the projections of GPU evidence: device launches
// (inspect_gpu_launches) from gpu.launches. Selection (kind, name, device)
// applies before any bound, and launches of different artifacts or
// devices never pool.
//
// It imports projection, table, formats (capabilities), param and
// evidence.
package gpu

import (
	"fmt"
	"regexp"
	"slices"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Modes of the launches projection.
const (
	ModeGroups   = "groups"
	ModeLaunches = "launches"
)

var kinds = []string{"kernel", "memcpy", "memset"}

// Launches is the projection behind inspect_gpu_launches.
var Launches = &projection.Spec{
	Name:   "gpu-launches",
	Tables: []*table.Schema{table.GPULaunches.Schema},
	Params: []param.Param{
		{Name: "mode", Type: param.Enum, Enum: []string{ModeGroups, ModeLaunches}, Default: ModeGroups,
			Doc: "groups: launches grouped by artifact, device, kind and name, ranked by total time; launches: single launches, longest first"},
		{Name: "kinds", Type: param.StringList, Doc: "keep these kinds of device activity (kernel, memcpy, memset); default: all"},
		{Name: "name_pattern", Type: param.String, Doc: "keep launches whose name matches this regular expression (RE2)"},
		{Name: "device", Type: param.Int, Min: param.F(0), Doc: "keep launches of this CUDA device id"},
		{Name: "top", Type: param.Int, Default: int64(20), Min: param.F(1), Max: param.F(10000), Doc: "rows to keep after ranking"},
	},
	New: newLaunches,
}

type groupKey struct {
	artifact string
	device   int64
	kind     string
	name     string
}

type group struct {
	key groupKey
	row table.GPULaunchGroup
}

type launch struct {
	row      table.GPULaunch
	artifact string
}

type launches struct {
	projection.Inputs[struct{}]
	args   evidence.Object
	mode   string
	kinds  []string
	re     *regexp.Regexp
	device int64
	byDev  bool
	top    int

	groups  map[groupKey]*group
	totals  map[[2]any]int64 // (artifact, device) → selected time
	single  *projection.TopN[launch]
	read    int64
	chosen  int64
	devices map[int64]bool
}

func newLaunches(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &launches{Inputs: projection.NewInputs[struct{}](table.GPULaunches.Schema), args: args,
		groups: map[groupKey]*group{}, totals: map[[2]any]int64{}, devices: map[int64]bool{}}
	p.mode, _ = args["mode"].(string)
	p.kinds, _ = args["kinds"].([]string)
	for _, k := range p.kinds {
		if !slices.Contains(kinds, k) {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("kinds: %q is not one of %v", k, kinds), Location: evidence.Location{Field: "kinds"}}
		}
	}
	if pat, _ := args["name_pattern"].(string); given["name_pattern"] {
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: "name_pattern: " + err.Error(), Location: evidence.Location{Field: "name_pattern"}}
		}
		p.re = re
	}
	if given["device"] {
		p.device, _ = evidence.AsInt(args["device"])
		p.byDev = true
	}
	top, _ := evidence.AsInt(args["top"])
	p.top = int(top)
	p.single = projection.NewTopN(p.top, func(a, b launch) bool {
		if a.row.DurationNS != b.row.DurationNS {
			return a.row.DurationNS > b.row.DurationNS
		}
		if a.artifact != b.artifact {
			return a.artifact < b.artifact
		}
		if a.row.StartNS != b.row.StartNS {
			return a.row.StartNS < b.row.StartNS
		}
		if a.row.DeviceID != b.row.DeviceID {
			return a.row.DeviceID < b.row.DeviceID
		}
		if a.row.SourceTable != b.row.SourceTable {
			return a.row.SourceTable < b.row.SourceTable
		}
		return a.row.CorrelationID.V < b.row.CorrelationID.V
	})
	return p, nil
}

func (p *launches) Table(t *evidence.Table, caps formats.Caps) error {
	if err := p.Check(t); err != nil {
		return err
	}
	_, err := p.Admit(t, caps, struct{}{})
	return err
}

func (p *launches) Row(t *evidence.Table, row any) error {
	r, _, artifact, err := projection.Read(&p.Inputs, table.GPULaunches, t, row)
	if err != nil {
		return err
	}
	p.read++
	if len(p.kinds) > 0 && !slices.Contains(p.kinds, r.Kind) {
		return nil
	}
	if p.byDev && r.DeviceID != p.device {
		return nil
	}
	if p.re != nil && !p.re.MatchString(r.Name) {
		return nil
	}
	p.chosen++
	p.devices[r.DeviceID] = true
	if p.mode == ModeLaunches {
		p.single.Add(launch{row: *r, artifact: artifact})
		return nil
	}
	k := groupKey{artifact, r.DeviceID, r.Kind, r.Name}
	g := p.groups[k]
	if g == nil {
		g = &group{key: k, row: table.GPULaunchGroup{DeviceID: r.DeviceID, Kind: r.Kind, Name: r.Name, MinNS: r.DurationNS, MaxNS: r.DurationNS}}
		p.groups[k] = g
	}
	g.row.Count++
	g.row.TotalNS += r.DurationNS
	g.row.MinNS = min(g.row.MinNS, r.DurationNS)
	g.row.MaxNS = max(g.row.MaxNS, r.DurationNS)
	if r.Bytes.Valid {
		g.row.Bytes.V += r.Bytes.V
		g.row.Bytes.Valid = true
	}
	p.totals[[2]any{artifact, r.DeviceID}] += r.DurationNS
	return nil
}

func (p *launches) Finish(w projection.Emitter) error {
	var res *projection.Result
	var s *evidence.Summary
	var err error
	if p.mode == ModeLaunches {
		res, err = projection.Begin(w, p.Header(table.GPUSelectedLaunches.Schema, "", evidence.Observed, p.args))
		if err != nil {
			return err
		}
		for _, l := range p.single.Sorted() {
			if err := res.Row(&l.row, l.artifact); err != nil {
				return err
			}
		}
		s = p.Summarize(p.single.Observed(), p.single.Truncation())
	} else {
		res, err = projection.Begin(w, p.Header(table.GPULaunchGroups.Schema, "", evidence.Derived, p.args))
		if err != nil {
			return err
		}
		list := make([]*group, 0, len(p.groups))
		for _, g := range p.groups {
			g.row.MeanNS = float64(g.row.TotalNS) / float64(g.row.Count)
			if tot := p.totals[[2]any{g.key.artifact, g.key.device}]; tot > 0 {
				g.row.Share = float64(g.row.TotalNS) / float64(tot)
			}
			list = append(list, g)
		}
		sort.Slice(list, func(i, j int) bool {
			a, b := list[i], list[j]
			if a.row.TotalNS != b.row.TotalNS {
				return a.row.TotalNS > b.row.TotalNS
			}
			if a.key.artifact != b.key.artifact {
				return a.key.artifact < b.key.artifact
			}
			if a.key.device != b.key.device {
				return a.key.device < b.key.device
			}
			if a.key.kind != b.key.kind {
				return a.key.kind < b.key.kind
			}
			return a.key.name < b.key.name
		})
		var trunc *evidence.Truncation
		if len(list) > p.top {
			trunc = &evidence.Truncation{Reason: evidence.ReasonRowLimit, Limit: int64(p.top), Omitted: int64(len(list) - p.top)}
			list = list[:p.top]
		}
		for _, g := range list {
			if err := res.Row(&g.row, g.key.artifact); err != nil {
				return err
			}
		}
		s = p.Summarize(int64(len(p.groups)), trunc)
	}
	s.Metrics["launches_read"] = evidence.Metric{Value: p.read, Unit: "count"}
	s.Metrics["launches_selected"] = evidence.Metric{Value: p.chosen, Unit: "count"}
	s.Metrics["devices_selected"] = evidence.Metric{Value: int64(len(p.devices)), Unit: "count"}
	return res.End(s)
}
