// Package speedscope decodes speedscope JSON files
// (https://www.speedscope.app/file-format-schema.json), the format py-spy
// writes with `--format speedscope`, into cpu.frames and cpu.edges.
//
// Every profile in a file stays a distinct series: its name is the thread
// column (py-spy writes one profile per thread), and no totals are pooled
// across profiles. Weights are normalized to one output unit per table;
// profiles whose units have different dimensions (bytes and time, say) go
// to separate tables, never into one total.
//
// The file is read in two passes over the artifact (random access, after
// the digest is verified): the first reads frames, profile headers and
// evented profiles and notes where each sampled profile's samples and
// weights arrays begin; the second walks each such pair of arrays in step.
// Memory therefore grows with frames and distinct stacks and edges, never
// with the number of samples or events.
//
// It imports formats, evidence, jsonscan, param, table and unit.
package speedscope

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Limit names.
const (
	LimitFrames   = "max_frames"
	LimitProfiles = "max_profiles"
	LimitSamples  = "max_samples"
	LimitEvents   = "max_events"
	LimitDepth    = "max_stack_depth"
	LimitStacks   = "max_stacks"
	LimitString   = "max_string_bytes"
)

var limitList = []formats.Limit{
	{Name: formats.LimitBytes, Default: 4 << 30, Unit: "bytes", Doc: "bytes in the file"},
	{Name: LimitFrames, Default: 1_000_000, Unit: "frames", Doc: "entries of shared.frames"},
	{Name: LimitProfiles, Default: 10_000, Unit: "profiles", Doc: "profiles in the file"},
	{Name: LimitSamples, Default: 200_000_000, Unit: "samples", Doc: "samples over all sampled profiles"},
	{Name: LimitEvents, Default: 200_000_000, Unit: "events", Doc: "events over all evented profiles"},
	{Name: LimitDepth, Default: 100_000, Unit: "frames", Doc: "frames in one stack"},
	{Name: LimitStacks, Default: 10_000_000, Unit: "stacks", Doc: "distinct stacks in one profile"},
	{Name: LimitString, Default: 1 << 20, Unit: "bytes", Doc: "bytes in one JSON string or number"},
}

// Spec is the speedscope format.
var Spec = formats.CPUStackProfile(formats.Spec{
	Name:     "speedscope",
	Title:    "Speedscope JSON (py-spy)",
	Suffixes: []string{".speedscope.json"},
	Sniff:    Sniff,
	Limits:   limitList,
	Options:  []param.Param{formats.ValueBytesParam},
	Caps:     formats.Caps{SampledLines: true}, // py-spy's frames are lines
	Producer: "py-spy record --format speedscope (or any speedscope exporter)",
	// 2: py-spy frame tables state their lines are sampled, 1-based.
	Version: "2",
	Decoder: formats.DecoderFunc(decode),
})

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if in.File == nil || in.Artifact == nil {
		return evidence.Failf(evidence.CodeInternal, "speedscope: the decoder reads the artifact file, and none was given")
	}
	size := in.Artifact.Size
	open := func(off int64) io.Reader { return io.NewSectionReader(in.File, off, size-off) }
	return decodeFrom(ctx, in, open, in.VerifyFile, out)
}

// decodeFrom decodes the artifact of in (its size known) that open can
// read from any offset, once verify has checked its bytes.
func decodeFrom(ctx context.Context, in *formats.Input, open func(off int64) io.Reader, verify func() error, out formats.Sink) error {
	// The size ceiling holds before the file is hashed or read.
	if err := in.CheckSize(); err != nil {
		return err
	}
	if err := verify(); err != nil {
		return err
	}
	r := &reader{ctx: ctx, in: in, open: open, edges: out.Wants(table.CPUEdges.Schema), stacks: out.Wants(table.CPUStacks.Schema), lim: limits{
		frames: in.Limit(LimitFrames), profiles: in.Limit(LimitProfiles), samples: in.Limit(LimitSamples),
		events: in.Limit(LimitEvents), depth: in.Limit(LimitDepth), stacks: in.Limit(LimitStacks),
	}}
	if err := r.pass1(); err != nil {
		return typed(err)
	}
	if err := r.pass2(); err != nil {
		return typed(err)
	}
	return r.emit(out)
}

// group is the profiles that share one output unit, and so one table.
type group struct {
	unit     string // normalized output unit
	profiles []*profile
}

func (r *reader) emit(out formats.Sink) error {
	// A frame's id and symbolization, made once for all its rows.
	ids := make([]string, len(r.frames))
	syms := make([]string, len(r.frames))
	for i, f := range r.frames {
		ids[i], syms[i] = strconv.Itoa(i), symbolization(f.name)
	}
	var groups []*group
	names := map[string]int{}
	for _, p := range r.profiles {
		names[p.name]++
	}
	dupNames := false
	for _, p := range r.profiles {
		p.thread = p.name
		if names[p.name] > 1 {
			p.thread = fmt.Sprintf("%s (profile %d)", p.name, p.index)
			dupNames = true
		}
		u, err := unit.Lookup(p.unit)
		if err != nil {
			return evidence.Wrap(evidence.CodeInternal, err, "speedscope: unit %q", p.unit)
		}
		var g *group
		for _, x := range groups {
			if x.unit == u.Output {
				g = x
			}
		}
		if g == nil {
			g = &group{unit: u.Output}
			groups = append(groups, g)
		}
		g.profiles = append(g.profiles, p)
	}
	if len(groups) == 0 {
		// No profiles: empty tables, in seconds.
		groups = []*group{{unit: unit.Seconds}}
	}
	e := emitter{r: r, ids: ids, syms: syms, dupNames: dupNames, split: len(groups) > 1}
	for _, g := range groups {
		if err := e.group(g, out); err != nil {
			return err
		}
	}
	return nil
}

// emitter writes the tables of each unit group.
type emitter struct {
	r               *reader
	ids, syms       []string
	dupNames, split bool
}

func (e *emitter) group(g *group, out formats.Sink) error {
	// Each table bounds its own values; the coverage both share is
	// bounded by a third and stated in both.
	covVals, frameVals, edgeVals := e.r.in.Values(), e.r.in.Values(), e.r.in.Values()
	var total float64
	var samples, events int64
	var cov []any
	var sampled, evented, unitless bool
	var empty int64
	var emptyIn []string // the profiles that have empty samples
	var nframes, nedges int
	for _, p := range g.profiles {
		u, _ := unit.Lookup(p.unit)
		w := p.total * u.Factor
		total += w
		samples += p.samples
		events += p.events
		empty += p.empty
		if p.empty > 0 {
			emptyIn = append(emptyIn, fmt.Sprintf("profile %d: %d", p.index, p.empty))
		}
		nframes += len(p.agg.frames)
		nedges += len(p.agg.edges)
		entry := evidence.Object{
			"index": p.index, "name": covVals.Bound(p.name), "thread": covVals.Bound(p.thread), "type": p.typ, "unit": p.unit,
			"start_value": p.start, "end_value": p.end, "total_weight": w,
		}
		if p.typ == "sampled" {
			entry["samples"] = p.samples
			entry["empty_samples"] = p.empty
			sampled = true
		} else {
			entry["events"] = p.events
			evented = true
		}
		unitless = unitless || p.unit == "none"
		cov = append(cov, entry)
	}
	metrics := map[string]evidence.Metric{
		table.MetricTotalWeight: {Value: total, Unit: g.unit},
		table.MetricSamples:     {Value: samples, Unit: unit.Samples},
		"events":                {Value: events, Unit: unit.Events},
		"profiles":              {Value: int64(len(g.profiles))},
	}
	coverage := evidence.Object{"profiles": cov}
	if e.r.exporter != "" {
		coverage["exporter"] = covVals.Bound(e.r.exporter)
	}
	if e.r.name != "" {
		coverage["name"] = covVals.Bound(e.r.name)
	}
	summary := func(rows int64, vals *formats.Values) *evidence.Summary {
		m := make(map[string]evidence.Metric, len(metrics))
		for k, v := range metrics {
			m[k] = v
		}
		s := &evidence.Summary{RowsObserved: rows, Complete: true, Metrics: m, Coverage: coverage}
		covVals.Summarize(s)
		vals.Summarize(s)
		if e.split {
			s.Limit("the file's profiles use units of different dimensions; each dimension has its own table and they are never pooled")
		}
		if e.dupNames {
			s.Limit("several profiles share a name; the thread column adds each one's index to keep them apart")
		}
		if unitless {
			s.Limit("a profile declares unit none: its weights are unitless counts, reported in the samples unit")
		}
		if evented {
			s.Limit("evented profiles attribute the time between consecutive events to the stack open between them")
		}
		if empty > 0 {
			// Per profile, so a consumer that selects profiles can tell
			// whether the statement concerns its selection.
			in := emptyIn
			if len(in) > 5 {
				in = append(in[:5:5], fmt.Sprintf("%d more profiles", len(emptyIn)-5))
			}
			s.Limit(fmt.Sprintf("%d samples have no frames (%s): their weight is in total_weight but on no frame", empty, strings.Join(in, ", ")))
		}
		return s
	}

	if out.Wants(table.CPUFrames.Schema) {
		h := table.CPUFrames.Header(g.unit)
		if e.sampledLines() {
			h = table.SampledLinesHeader(g.unit, 1)
		}
		tw, err := out.Begin(h)
		if err != nil {
			return err
		}
		// One backing array: a sink may keep the rows it is handed.
		rows := make([]table.Frame, 0, nframes)
		for _, p := range g.profiles {
			u, _ := unit.Lookup(p.unit)
			thread := table.Some(frameVals.Bound(p.thread))
			for _, a := range p.agg.frames {
				f := &e.r.frames[a.frame]
				rows = append(rows, table.Frame{
					FrameSite: table.FrameSite{
						FrameID:       e.ids[a.frame],
						Function:      frameVals.Bound(f.name),
						File:          table.Null[string]{V: frameVals.Bound(f.file), Valid: f.hasFile},
						Line:          f.line,
						Column:        f.col,
						Symbolization: e.syms[a.frame],
						Thread:        thread,
					},
					SelfWeight:      a.self * u.Factor,
					InclusiveWeight: a.inclusive * u.Factor,
				})
				row := &rows[len(rows)-1]
				if p.typ == "evented" {
					row.Calls, row.PrimitiveCalls = table.Some(a.calls), table.Some(a.prim)
				}
				if err := tw.Row(row); err != nil {
					return err
				}
			}
		}
		s := summary(int64(len(rows)), frameVals)
		if sampled {
			s.Limit("sampled profiles record stacks, not calls: calls and primitive_calls are null for them")
		}
		if err := tw.End(s); err != nil {
			return err
		}
	}
	if e.r.edges {
		if err := e.emitEdges(out, g, nedges, edgeVals, summary, sampled); err != nil {
			return err
		}
	}
	if !e.r.stacks {
		return nil
	}
	// Stacks name frames by id only; their thread is bounded as in the
	// frame rows, so the two match.
	sw, err := out.Begin(table.CPUStacks.Header(g.unit))
	if err != nil {
		return err
	}
	var nstacks int64
	for _, p := range g.profiles {
		u, _ := unit.Lookup(p.unit)
		thread := table.Some(frameVals.Bound(p.thread))
		for _, st := range p.agg.stacks {
			ids := make([]string, len(st.frames))
			for i, f := range st.frames {
				ids[i] = e.ids[f]
			}
			if err := sw.Row(&table.Stack{Frames: ids, Thread: thread, Weight: st.weight * u.Factor}); err != nil {
				return err
			}
			nstacks++
		}
	}
	return sw.End(summary(nstacks, frameVals))
}

// emitEdges writes the cpu.edges table.
func (e *emitter) emitEdges(out formats.Sink, g *group, nedges int, edgeVals *formats.Values, summary func(int64, *formats.Values) *evidence.Summary, sampled bool) error {
	tw, err := out.Begin(table.CPUEdges.Header(g.unit))
	if err != nil {
		return err
	}
	rows := make([]table.Edge, 0, nedges)
	for _, p := range g.profiles {
		u, _ := unit.Lookup(p.unit)
		thread := table.Some(edgeVals.Bound(p.thread))
		for _, a := range p.agg.edges {
			caller, callee := &e.r.frames[a.caller], &e.r.frames[a.callee]
			rows = append(rows, table.Edge{
				CallerID:       e.ids[a.caller],
				CallerFunction: edgeVals.Bound(caller.name),
				CallerFile:     table.Null[string]{V: edgeVals.Bound(caller.file), Valid: caller.hasFile},
				CallerLine:     caller.line,
				CalleeID:       e.ids[a.callee],
				CalleeFunction: edgeVals.Bound(callee.name),
				CalleeFile:     table.Null[string]{V: edgeVals.Bound(callee.file), Valid: callee.hasFile},
				CalleeLine:     callee.line,
				Thread:         thread,
				Weight:         table.Some(a.weight * u.Factor),
				SelfWeight:     table.Some(a.self * u.Factor),
			})
			row := &rows[len(rows)-1]
			if p.typ == "evented" {
				row.Calls = table.Some(a.calls)
			}
			if err := tw.Row(row); err != nil {
				return err
			}
		}
	}
	s := summary(int64(len(rows)), edgeVals)
	if sampled {
		s.Limit("sampled edges carry weights, not invocation counts: calls is null for them")
	}
	return tw.End(s)
}

var addressName = regexp.MustCompile(`^(0x)?[0-9a-fA-F]{6,}$`)

// symbolization classifies a frame by its name. Producers write a bare
// address, an empty name or [unknown] when they could not resolve a frame.
func symbolization(name string) string {
	switch {
	case name == "", name == "[unknown]", addressName.MatchString(name):
		return table.Unresolved
	case name == "<lambda>", name == "(anonymous)", name == "(anonymous function)":
		return table.Anonymous
	case name == "(root)", name == "(program)", name == "(idle)", name == "(garbage collector)":
		return table.Synthetic
	}
	return table.Symbolized
}

// Sniff recognizes a JSON object whose top-level "$schema" is the
// speedscope schema URL, scanning top-level keys with the decoder's
// tokenizer until it finds "$schema" or the prefix ends.
func Sniff(prefix []byte) formats.Verdict {
	s := jsonscan.NewBytes(prefix)
	tok, err := s.Next()
	if err != nil {
		return needMoreOrNo(err)
	}
	if tok.Kind != jsonscan.ObjectStart {
		return formats.No
	}
	for {
		k, err := s.Next()
		if err != nil {
			return needMoreOrNo(err)
		}
		if !k.IsKey {
			return formats.No // the object's end, or a scanner fault
		}
		isSchema := string(k.Bytes) == "$schema"
		v, err := s.Next()
		if err != nil {
			return needMoreOrNo(err)
		}
		switch v.Kind {
		case jsonscan.ObjectEnd, jsonscan.ArrayEnd, jsonscan.EOF:
			return formats.No // a key without a value
		}
		if isSchema {
			if v.Kind == jsonscan.String && string(v.Bytes) == SchemaURL {
				return formats.Yes
			}
			return formats.No
		}
		if err := s.Skip(v); err != nil {
			return needMoreOrNo(err)
		}
	}
}

func needMoreOrNo(err error) formats.Verdict {
	if isEOF(err) {
		return formats.NeedMore
	}
	return formats.No
}

func isEOF(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }

// sampledLines reports whether the frames are the source lines samples
// were on, numbered from 1: py-spy writes a frame per (function, line)
// with Python's line numbers unless --nolineno leaves them out (then no
// frame has one). Other exporters' lines are their own (speedscope's
// Chrome import, for one, writes where a function starts), so they are
// not said to be sampled lines.
func (e *emitter) sampledLines() bool {
	if !strings.HasPrefix(e.r.exporter, "py-spy@") {
		return false
	}
	for i := range e.r.frames {
		if e.r.frames[i].line > 0 {
			return true
		}
	}
	return false
}
