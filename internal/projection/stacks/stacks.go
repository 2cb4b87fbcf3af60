// Package stacks holds the stack projections: cpu-stacks folds the
// cpu.stacks of any stack-bearing CPU profile into labelled stacks (the
// folded format, a flame graph's input), and cpu-stacks-diff does the same
// for the two sides of a comparison (a differential flame graph's input).
// Frames are labelled from the cpu.frames rows of the same artifact; the
// same label on the same path pools, whichever frame ids carried it.
//
// It imports projection, table, formats (capabilities), param, unit and
// evidence.
package stacks

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// MaxProfiles bounds how many profiles fold together, on each side.
const MaxProfiles = 32

var params = []param.Param{
	{Name: "min_share", Type: param.Number, Default: 0.0, Min: param.F(0), Max: param.F(1),
		Doc: "omit stacks whose weight is below this share of the total (0.001 = 0.1%); their weight is stated as omitted"},
	{Name: "max_stacks", Type: param.Int, Default: int64(200000), Min: param.F(1), Max: param.F(10_000_000),
		Doc: "keep at most this many stacks, the heaviest; the rest is stated as omitted"},
}

// Spec is the cpu-stacks projection.
var Spec = &projection.Spec{
	Name:   "cpu-stacks",
	Tables: []*table.Schema{table.CPUFrames.Schema, table.CPUStacks.Schema},
	Params: params,
	New: func(args evidence.Object, _ map[string]bool) (projection.Projector, error) {
		return newFolder(args, false, cpuKind), nil
	},
}

// Weights of memory stacks.
const (
	WeightBytes = "bytes"
	WeightCount = "count"
)

// Memory is the memory-stacks projection: the memory.stacks of a heap
// profile folded like cpu-stacks, weighed in bytes or in allocations.
var Memory = &projection.Spec{
	Name:   "memory-stacks",
	Tables: []*table.Schema{table.MemoryFrames.Schema, table.MemoryStacks.Schema},
	Params: append(slices.Clone(params), param.Param{Name: "weight", Type: param.Enum, Enum: []string{WeightBytes, WeightCount}, Default: WeightBytes,
		Doc: "weigh stacks by the population's bytes, or by its allocation (object, sample) count"}),
	New: func(args evidence.Object, _ map[string]bool) (projection.Projector, error) {
		k := memoryKind
		if w, _ := args["weight"].(string); w == WeightCount {
			k.count = true
		}
		return newFolder(args, false, k), nil
	},
}

// kind is the family a folder reads: CPU (cpu.frames, cpu.stacks) or
// memory (memory.frames, memory.stacks); the two never pool.
type kind struct {
	frames, stacks, folded *table.Schema
	memory, count          bool
}

var (
	cpuKind    = kind{frames: table.CPUFrames.Schema, stacks: table.CPUStacks.Schema, folded: table.CPUFolded.Schema}
	memoryKind = kind{frames: table.MemoryFrames.Schema, stacks: table.MemoryStacks.Schema, folded: table.MemoryFolded.Schema, memory: true}
)

// Diff is the cpu-stacks-diff projection.
var Diff = &projection.Spec{
	Name:     "cpu-stacks-diff",
	Tables:   []*table.Schema{table.CPUFrames.Schema, table.CPUStacks.Schema},
	Compares: true,
	Params: append(slices.Clone(params), projection.BaselineParam, param.Param{Name: "normalize", Type: param.Bool, Default: false,
		Doc: "scale the baseline's weights so its total equals the new total (pprof's -normalize)"}),
	New: func(args evidence.Object, _ map[string]bool) (projection.Projector, error) {
		return newFolder(args, true, cpuKind), nil
	},
}

// tableState is what the projection keeps of one admitted table.
type tableState struct {
	factor float64 // a stacks table's weights to the side's unit
}

// rawStack is a cpu.stacks row kept until the labels are known.
type rawStack struct {
	artifact        string
	frames          []string
	thread, process table.Null[string]
	weight          float64
}

// side is one side's admitted tables: the new side alone when not
// comparing.
type side struct {
	projection.Inputs[tableState]
	unit   string
	stacks []rawStack
	labels map[string]map[string]string // artifact → frame id → label
}

type folder struct {
	projection.Sides
	kind
	compare   bool
	sides     [2]side
	byID      map[string]*side
	minShare  float64
	max       int
	normalize bool
	args      evidence.Object
}

func newFolder(args evidence.Object, compare bool, k kind) *folder {
	f := &folder{kind: k, compare: compare, byID: map[string]*side{}, args: args, max: 200000}
	f.minShare, _ = evidence.AsFloat(args["min_share"])
	if n, ok := evidence.AsInt(args["max_stacks"]); ok {
		f.max = int(n)
	}
	f.normalize, _ = args["normalize"].(bool)
	for i := range f.sides {
		f.sides[i].Inputs = projection.NewInputs[tableState](k.frames, k.stacks)
		f.sides[i].Bound(projection.ArtifactBound{Name: "max_profiles", Max: MaxProfiles, Unit: "profiles"})
		f.sides[i].labels = map[string]map[string]string{}
	}
	return f
}

// Table admits a table: stacks weights of one dimension and one format
// across every table (both sides).
func (f *folder) Table(t *evidence.Table, caps formats.Caps) error {
	sd := projection.SideNew
	if f.compare {
		var err error
		if sd, err = f.Sides.Of(t); err != nil {
			return err
		}
	}
	s := &f.sides[sd]
	if err := s.Check(t); err != nil {
		return err
	}
	for i := range f.sides {
		if o := f.sides[i].Format(); len(f.sides[i].List()) > 0 && o != t.Format {
			return &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("profiles of different formats (%s, %s) do not fold together; fold each format separately", o, t.Format),
				Details: evidence.Object{"formats": []string{o, t.Format}}}
		}
	}
	st := tableState{factor: 1}
	if t.Name == table.MemoryStacks.Name {
		u := unit.Bytes
		if f.count {
			c, _ := t.Column("count")
			u = c.Unit
		}
		if o := s.unit; o != "" && o != u {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s counts %s and another table %s: memory stacks of different units do not fold together", t.ID, u, o)
		}
		s.unit = u
	} else if t.Name == table.CPUStacks.Name {
		c, _ := t.Column("weight")
		u, err := unit.Lookup(c.Unit)
		if err != nil {
			return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s", t.ID)
		}
		for i := range f.sides {
			if o := f.sides[i].unit; o != "" {
				if _, err := unit.Common(o, c.Unit); err != nil {
					return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s", t.ID)
				}
			}
		}
		st.factor = u.Factor
		if s.unit == "" {
			s.unit = u.Output
		}
	}
	if _, err := s.Admit(t, caps, st); err != nil {
		return err
	}
	f.byID[t.ID] = s
	return nil
}

func (f *folder) of(t *evidence.Table) (*side, error) {
	s, ok := f.byID[t.ID]
	if !ok {
		return nil, evidence.Failf(evidence.CodeInternal, "a table that was not admitted: %s", t.ID)
	}
	return s, nil
}

func (f *folder) Summary(t *evidence.Table, sm *evidence.Summary) error {
	s, err := f.of(t)
	if err != nil {
		return err
	}
	return s.Summary(t, sm)
}

func (f *folder) Row(t *evidence.Table, row any) error {
	s, err := f.of(t)
	if err != nil {
		return err
	}
	if t.Name == table.MemoryStacks.Name {
		st, _, artifact, err := projection.Read(&s.Inputs, table.MemoryStacks, t, row)
		if err != nil {
			return err
		}
		w := float64(st.Bytes)
		if f.count {
			if !st.Count.Valid {
				return evidence.Failf(evidence.CodeInvalidArgument, "table %s records no allocation counts: weigh its stacks by bytes (weight=bytes)", t.ID)
			}
			w = float64(st.Count.V)
		}
		if w == 0 {
			return nil // holds none of the population's weight: nothing to draw
		}
		s.stacks = append(s.stacks, rawStack{artifact: artifact, frames: slices.Clone(st.Frames),
			thread: st.Thread, process: st.Process, weight: w})
		return nil
	}
	if t.Name == table.CPUFrames.Name || t.Name == table.MemoryFrames.Name {
		var id, function string
		var artifact string
		if t.Name == table.CPUFrames.Name {
			fr, _, a, err := projection.Read(&s.Inputs, table.CPUFrames, t, row)
			if err != nil {
				return err
			}
			id, function, artifact = fr.FrameID, fr.Function, a
		} else {
			fr, _, a, err := projection.Read(&s.Inputs, table.MemoryFrames, t, row)
			if err != nil {
				return err
			}
			id, function, artifact = fr.FrameID, fr.Function, a
		}
		m := s.labels[artifact]
		if m == nil {
			m = map[string]string{}
			s.labels[artifact] = m
		}
		if _, ok := m[id]; !ok {
			m[id] = Label(function)
		}
		return nil
	}
	st, x, artifact, err := projection.Read(&s.Inputs, table.CPUStacks, t, row)
	if err != nil {
		return err
	}
	s.stacks = append(s.stacks, rawStack{artifact: artifact, frames: slices.Clone(st.Frames),
		thread: st.Thread, process: st.Process, weight: st.Weight * x.State.factor})
	return nil
}

// Label is a frame's label in a folded stack: its function name;
// "(anonymous)" for a frame without one.
func Label(function string) string {
	if function == "" {
		return "(anonymous)"
	}
	return function
}

// total is a side's total weight: each stacks table's total_weight
// (samples without a stack included), else the sum of its stacks.
func (s *side) total(k kind) (float64, []string) {
	var total float64
	var limits []string
	metric := table.MetricTotalWeight
	if k.memory {
		metric = table.MetricPopulationBytes
		if k.count {
			metric = table.MetricPopulationCount
		}
	}
	for _, x := range s.List() {
		if x.Table.Name != k.stacks.Name {
			continue
		}
		if x.Summary != nil {
			if v, ok := evidence.AsFloat(x.Summary.Metrics[metric].Value); ok {
				total += v * x.State.factor
				continue
			}
		}
		var sum float64
		for _, r := range s.stacks {
			if r.artifact == x.Artifact {
				sum += r.weight
			}
		}
		total += sum
		limits = append(limits, fmt.Sprintf("table %s: its summary has no %s, so its total is the weight of its stacks", x.Table.ID, metric))
	}
	return total, limits
}

// folded is one labelled stack with its weight on each side.
type folded struct {
	labels []string
	w      [2]float64
}

// fold labels a side's stacks and pools equal label paths into acc.
func (f *folder) fold(sd projection.Side, acc map[string]*folded, order *[]*folded) error {
	s := &f.sides[sd]
	var key strings.Builder
	for _, r := range s.stacks {
		m := s.labels[r.artifact]
		if m == nil {
			return evidence.Failf(evidence.CodeInvalidArgument, "the input has %s of artifact %s but not its %s: decode the artifact whole", f.stacks.Name, r.artifact, f.frames.Name)
		}
		labels := make([]string, 0, len(r.frames)+2)
		if r.process.Valid {
			labels = append(labels, r.process.V)
		}
		if r.thread.Valid {
			labels = append(labels, r.thread.V)
		}
		for _, id := range r.frames {
			l, ok := m[id]
			if !ok {
				return evidence.Failf(evidence.CodeInvalidArgument, "a stack of artifact %s names frame %s, which its %s table does not hold", r.artifact, id, f.frames.Name)
			}
			labels = append(labels, l)
		}
		if len(labels) == 0 {
			continue
		}
		key.Reset()
		for _, l := range labels {
			key.WriteString(l)
			key.WriteByte(0)
		}
		k := key.String()
		e := acc[k]
		if e == nil {
			e = &folded{labels: labels}
			acc[k] = e
			*order = append(*order, e)
		}
		e.w[sd] += r.weight
	}
	return nil
}

func compareLabels(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func (f *folder) Finish(w projection.Emitter) error {
	nu, base := &f.sides[projection.SideNew], &f.sides[projection.SideBase]
	if f.compare && (len(base.List()) == 0 || len(nu.List()) == 0) {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  "a comparison needs a decoded CPU profile on both sides: give the baseline with --baseline PATH and the new profiles as PATH arguments",
			Location: evidence.Location{Field: "baseline"}}
	}
	if err := nu.Ready(); err != nil {
		return err
	}
	if nu.unit == "" && f.memory {
		return evidence.Failf(evidence.CodeInvalidArgument, "the input has no memory.stacks table: %s records no whole allocation stacks to fold; rank its memory hotspots instead", nu.Format())
	}
	population, err := f.population()
	if err != nil {
		return err
	}
	if nu.unit == "" {
		return evidence.Failf(evidence.CodeInvalidArgument, "the input has no cpu.stacks table: %s records no whole stacks to fold (flame graphs and folded output need V8, perf, pprof, speedscope or collapsed stacks); rank its hotspots or caller edges instead", nu.Format())
	}
	acc := map[string]*folded{}
	var order []*folded
	if err := f.fold(projection.SideNew, acc, &order); err != nil {
		return err
	}
	ntotal, limits := nu.total(f.kind)
	btotal, scale := 0.0, 1.0
	if f.compare {
		if err := f.fold(projection.SideBase, acc, &order); err != nil {
			return err
		}
		var bl []string
		btotal, bl = base.total(f.kind)
		if base.unit != nu.unit {
			bu, _ := unit.Lookup(base.unit)
			ru, _ := unit.Lookup(nu.unit)
			btotal *= bu.Factor / ru.Factor
			for _, e := range order {
				e.w[projection.SideBase] *= bu.Factor / ru.Factor
			}
		}
		if f.normalize && btotal > 0 {
			scale = ntotal / btotal
			for _, e := range order {
				e.w[projection.SideBase] *= scale
			}
		}
		for _, l := range bl {
			limits = append(limits, "baseline: "+l)
		}
	}
	// A stack's size: its weight; in a comparison the larger side's.
	size := func(e *folded) float64 { return max(math.Abs(e.w[0]), math.Abs(e.w[1])) }
	minW := f.minShare * max(ntotal, btotal*scale)
	var omitted int64 // below min_share
	ranked := projection.NewTopN(f.max, func(a, b *folded) bool {
		if sa, sb := size(a), size(b); sa != sb {
			return sa > sb
		}
		return compareLabels(a.labels, b.labels) < 0
	})
	for _, e := range order {
		if f.minShare > 0 && size(e) < minW {
			omitted++
			continue
		}
		ranked.Add(e)
	}
	kept := ranked.Sorted()
	var keptW float64
	for _, e := range kept {
		keptW += e.w[projection.SideNew]
	}
	var stackedW float64
	for _, e := range order {
		stackedW += e.w[projection.SideNew]
	}
	omittedW := stackedW - keptW
	slices.SortFunc(kept, func(a, b *folded) int { return compareLabels(a.labels, b.labels) })

	schema := f.folded
	if f.compare {
		schema = table.CPUFoldedDiff.Schema
	}
	head := nu.Header(schema, nu.unit, evidence.Derived, f.args)
	if f.compare {
		head.ArtifactIDs = append(base.Artifacts(), nu.Artifacts()...)
		slices.Sort(head.ArtifactIDs)
		head.ArtifactIDs = slices.Compact(head.ArtifactIDs)
	}
	res, err := projection.Begin(w, head)
	if err != nil {
		return err
	}
	for _, e := range kept {
		var row any
		if f.compare {
			row = &table.FoldedDiff{Stack: e.labels, BaseWeight: e.w[projection.SideBase], NewWeight: e.w[projection.SideNew],
				Delta: e.w[projection.SideNew] - e.w[projection.SideBase]}
		} else {
			sh := table.Null[float64]{}
			if ntotal > 0 {
				sh = table.Some(e.w[projection.SideNew] / ntotal)
			}
			row = &table.FoldedStack{Stack: e.labels, Weight: e.w[projection.SideNew], Share: sh}
		}
		if err := res.Row(row, ""); err != nil {
			return err
		}
	}
	var trunc *evidence.Truncation
	if n := int64(len(order) - len(kept)); n > 0 {
		trunc = &evidence.Truncation{Reason: evidence.ReasonRowLimit, Limit: int64(f.max), Omitted: n}
	}
	sum := nu.Summarize(int64(len(order)), trunc)
	if f.compare {
		bs := base.Summarize(int64(len(order)), nil)
		sum.Complete = sum.Complete && bs.Complete
		for _, l := range bs.Limitations {
			if !slices.Contains(sum.Limitations, l) {
				sum.Limit("baseline: " + l)
			}
		}
		cov := f.Sides.Coverage()
		cov["new"], cov["baseline"] = sum.Coverage, bs.Coverage
		sum.Coverage = cov
		sum.Metrics["base_total_weight"] = evidence.Metric{Value: btotal * scale, Unit: nu.unit}
		sum.Metrics["normalize_scale"] = evidence.Metric{Value: scale, Unit: "ratio"}
	}
	for _, l := range limits {
		sum.Limit(l)
	}
	if population != "" {
		if sum.Coverage == nil {
			sum.Coverage = evidence.Object{}
		}
		sum.Coverage["population"] = population
		sum.Coverage["weight"] = map[bool]string{false: WeightBytes, true: WeightCount}[f.count]
	}
	for i := range f.sides {
		if l := f.sides[i].pooledEvents(); l != "" {
			sum.Limit(l)
			sum.Complete = false
		}
	}
	if omitted > 0 {
		sum.Limit(fmt.Sprintf("%d stacks below min_share %g of the total are omitted", omitted, f.minShare))
	}
	if trunc != nil {
		sum.Limit(fmt.Sprintf("%d stacks are omitted (min_share, max_stacks); their weight is omitted_weight", trunc.Omitted))
	}
	sum.Metrics[table.MetricTotalWeight] = evidence.Metric{Value: ntotal, Unit: nu.unit}
	sum.Metrics["stacked_weight"] = evidence.Metric{Value: stackedW, Unit: nu.unit}
	sum.Metrics["omitted_weight"] = evidence.Metric{Value: omittedW, Unit: nu.unit}
	if d := ntotal - stackedW; d > 1e-9*max(1, ntotal) {
		sum.Limit(fmt.Sprintf("%.6g %s of the total is on no stack (samples without a stack, or weight a producer-made root holds); a flame graph's root is the total, so that part stays unlabelled", d, nu.unit))
	}
	return res.End(sum)
}

// pooledEvents says when one artifact's stacks tables hold different
// sampled events (perf record -e a,b writes one table per event): their
// stacks are pooled into one picture.
func (s *side) pooledEvents() string {
	events := map[string][]string{}
	for _, x := range s.List() {
		if x.Table.Name != table.CPUStacks.Name || x.Summary == nil {
			continue
		}
		ev, _ := x.Summary.Coverage["event"].(string)
		if ev != "" && !slices.Contains(events[x.Artifact], ev) {
			events[x.Artifact] = append(events[x.Artifact], ev)
		}
	}
	for _, a := range s.Artifacts() {
		if evs := events[a]; len(evs) > 1 {
			slices.Sort(evs)
			return fmt.Sprintf("the profile holds samples of %d events (%s) and their stacks are pooled; to draw one event, record it alone (perf record -e %s)",
				len(evs), strings.Join(evs, ", "), strings.SplitN(evs[0], ":", 2)[0])
		}
	}
	return ""
}

// population is the one memory population of the admitted memory.stacks
// tables (their summaries' coverage): stacks of different populations
// (live and allocated, high watermark and leaks) never pool.
func (f *folder) population() (string, error) {
	if !f.memory {
		return "", nil
	}
	var pops []string
	for _, x := range f.sides[projection.SideNew].List() {
		if x.Table.Name != table.MemoryStacks.Name || x.Summary == nil {
			continue
		}
		if p, _ := x.Summary.Coverage["population"].(string); p != "" && !slices.Contains(pops, p) {
			pops = append(pops, p)
		}
	}
	if len(pops) > 1 {
		slices.Sort(pops)
		return "", &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("the inputs describe different memory populations (%s), which do not fold together: decode each population separately", strings.Join(pops, ", ")),
			Details: evidence.Object{"populations": pops}}
	}
	if len(pops) == 1 {
		return pops[0], nil
	}
	return "", nil
}
