package gpu

import (
	"regexp"
	"slices"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Findings is the projection behind inspect_sanitizer_findings.
var Findings = &projection.Spec{
	Name:   "gpu-sanitizer-findings",
	Tables: []*table.Schema{table.SanitizerFindings.Schema},
	Params: []param.Param{
		{Name: "mode", Type: param.Enum, Enum: []string{"findings", "groups"}, Default: "findings",
			Doc: "findings: one row per record, errors first, in report order; groups: records grouped by kind, tool, kernel and source line, most frequent first"},
		{Name: "kinds", Type: param.StringList, Doc: "keep these kinds (invalid_access, race, leak, api_error...); default: all"},
		{Name: "severities", Type: param.StringList, Doc: "keep these severities (error, warning); default: all"},
		{Name: "tools", Type: param.StringList, Doc: "keep findings of these tools (memcheck, racecheck, initcheck, synccheck); default: all"},
		{Name: "kernel_pattern", Type: param.String, Doc: "keep findings whose kernel matches this regular expression (RE2)"},
		{Name: "file_pattern", Type: param.String, Doc: "keep findings whose source file matches this regular expression (RE2)"},
		{Name: "top", Type: param.Int, Default: int64(50), Min: param.F(1), Max: param.F(10000), Doc: "rows to keep"},
	},
	New: newFindings,
}

type finding struct {
	row      table.SanitizerFinding
	artifact string
}

type sanGroupKey struct {
	artifact, kind, tool, kernel, file string
	line                               int64
}

type findings struct {
	projection.Inputs[struct{}]
	args                  evidence.Object
	groups                bool
	kinds, sev, tools     []string
	kernelRe, fileRe      *regexp.Regexp
	top                   *projection.TopN[finding]
	byGroup               map[sanGroupKey]*table.SanitizerGroup
	read, chosen, errorsN int64
}

func newFindings(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &findings{Inputs: projection.NewInputs[struct{}](table.SanitizerFindings.Schema), args: args, byGroup: map[sanGroupKey]*table.SanitizerGroup{}}
	p.groups = args["mode"] == "groups"
	p.kinds, _ = args["kinds"].([]string)
	p.sev, _ = args["severities"].([]string)
	p.tools, _ = args["tools"].([]string)
	var err error
	if p.kernelRe, err = compile(args, given, "kernel_pattern"); err != nil {
		return nil, err
	}
	if p.fileRe, err = compile(args, given, "file_pattern"); err != nil {
		return nil, err
	}
	top, _ := evidence.AsInt(args["top"])
	p.top = projection.NewTopN(int(top), func(a, b finding) bool {
		if (a.row.Severity == "error") != (b.row.Severity == "error") {
			return a.row.Severity == "error"
		}
		if a.artifact != b.artifact {
			return a.artifact < b.artifact
		}
		return a.row.Index < b.row.Index
	})
	return p, nil
}

func (p *findings) Table(t *evidence.Table, caps formats.Caps) error {
	if err := p.Check(t); err != nil {
		return err
	}
	_, err := p.Admit(t, caps, struct{}{})
	return err
}

func (p *findings) Row(t *evidence.Table, row any) error {
	r, _, artifact, err := projection.Read(&p.Inputs, table.SanitizerFindings, t, row)
	if err != nil {
		return err
	}
	p.read++
	if len(p.kinds) > 0 && !slices.Contains(p.kinds, r.Kind) || len(p.sev) > 0 && !slices.Contains(p.sev, r.Severity) ||
		len(p.tools) > 0 && (!r.Tool.Valid || !slices.Contains(p.tools, r.Tool.V)) ||
		p.kernelRe != nil && (!r.Kernel.Valid || !p.kernelRe.MatchString(r.Kernel.V)) ||
		p.fileRe != nil && (!r.File.Valid || !p.fileRe.MatchString(r.File.V)) {
		return nil
	}
	p.chosen++
	if r.Severity == "error" {
		p.errorsN++
	}
	if !p.groups {
		p.top.Add(finding{row: *r, artifact: artifact})
		return nil
	}
	k := sanGroupKey{artifact, r.Kind, r.Tool.V, r.Kernel.V, r.File.V, r.SourceLine.V}
	g := p.byGroup[k]
	if g == nil {
		g = &table.SanitizerGroup{Kind: r.Kind, Tool: r.Tool, Severity: r.Severity, Kernel: r.Kernel, File: r.File, SourceLine: r.SourceLine,
			FirstIndex: r.Index, Message: r.Message}
		p.byGroup[k] = g
	}
	g.Count++
	if r.Severity == "error" {
		g.Severity = "error"
	}
	if r.Hazards.Valid {
		g.Hazards.V += r.Hazards.V
		g.Hazards.Valid = true
	}
	return nil
}

func (p *findings) Finish(w projection.Emitter) error {
	var res *projection.Result
	var s *evidence.Summary
	var err error
	if !p.groups {
		if res, err = projection.Begin(w, p.Header(table.SanitizerSelection.Schema, "", evidence.Observed, p.args)); err != nil {
			return err
		}
		for _, f := range p.top.Sorted() {
			if err := res.Row(&f.row, f.artifact); err != nil {
				return err
			}
		}
		s = p.Summarize(p.top.Observed(), p.top.Truncation())
	} else {
		if res, err = projection.Begin(w, p.Header(table.SanitizerGroups.Schema, "", evidence.Derived, p.args)); err != nil {
			return err
		}
		keys := make([]sanGroupKey, 0, len(p.byGroup))
		for k := range p.byGroup {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := p.byGroup[keys[i]], p.byGroup[keys[j]]
			if a.Count != b.Count {
				return a.Count > b.Count
			}
			if keys[i].artifact != keys[j].artifact {
				return keys[i].artifact < keys[j].artifact
			}
			return a.FirstIndex < b.FirstIndex
		})
		top, _ := evidence.AsInt(p.args["top"])
		var trunc *evidence.Truncation
		if int64(len(keys)) > top {
			trunc = &evidence.Truncation{Reason: evidence.ReasonRowLimit, Limit: top, Omitted: int64(len(keys)) - top}
			keys = keys[:top]
		}
		for _, k := range keys {
			if err := res.Row(p.byGroup[k], k.artifact); err != nil {
				return err
			}
		}
		s = p.Summarize(int64(len(p.byGroup)), trunc)
	}
	s.Metrics["findings_read"] = evidence.Metric{Value: p.read, Unit: "count"}
	s.Metrics["findings_selected"] = evidence.Metric{Value: p.chosen, Unit: "count"}
	s.Metrics["errors_selected"] = evidence.Metric{Value: p.errorsN, Unit: "count"}
	return res.End(s)
}
