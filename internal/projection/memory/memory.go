// Package memory holds the memory hotspot projection: frames of
// memory.frames tables (Memray, V8 sampling heap profiles) ranked by the
// bytes or allocations of their population, self or inclusive, merged
// across threads unless asked per thread.
//
// It imports projection, table, formats (capabilities), param and
// evidence.
package memory

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

// MaxProfiles bounds how many memory profiles rank together.
const MaxProfiles = 32

// Ranking metrics.
const (
	RankSelfBytes      = "self_bytes"
	RankInclusiveBytes = "inclusive_bytes"
	RankSelfCount      = "self_count"
	RankInclusiveCount = "inclusive_count"
)

// Hotspots is the memory-hotspots projection.
var Hotspots = &projection.Spec{
	Name:   "memory-hotspots",
	Tables: []*table.Schema{table.MemoryFrames.Schema},
	Params: []param.Param{
		{Name: "top", Type: param.Int, Default: int64(20), Min: param.F(1), Max: param.F(100000),
			Doc: "rows to keep after selection and ranking"},
		{Name: "rank_by", Type: param.Enum, Enum: []string{RankSelfBytes, RankInclusiveBytes, RankSelfCount, RankInclusiveCount},
			Default: RankSelfBytes, Doc: "ranking metric: bytes or allocations (V8: sample records), where the frame is the leaf (self) or anywhere on the stack (inclusive)"},
		{Name: "per_thread", Type: param.Bool, Default: false,
			Doc: "keep one row per frame and thread; otherwise a frame's threads are summed"},
		{Name: "thread", Type: param.String, Doc: "keep only this thread (exact match of the thread column)"},
		{Name: "function_pattern", Type: param.String, Doc: "RE2 regular expression the function name must match"},
		{Name: "file_pattern", Type: param.String, Doc: "RE2 regular expression the file or URL must match"},
	},
	New: newHotspots,
}

// state is what the projection keeps of one admitted table.
type state struct {
	countUnit string
}

type key struct {
	artifact string
	table    int
	frame    string
	thread   table.Null[string]
}

type agg struct {
	row        table.MemoryFrame
	artifact   string
	self, incl [2]int64 // bytes, count
	noCount    bool     // a row merged in records no count
}

type hotspots struct {
	projection.Inputs[state]
	args      evidence.Object
	top       int
	rankBy    string
	perThread bool
	thread    string
	fn, file  *regexp.Regexp

	rows  map[key]*agg
	order []*agg
	// selectedSelf sums the self bytes of the selected thread's rows: the
	// denominator of a share when a thread is selected.
	selectedSelf [1]int64
	threads      map[string]bool
	matched      int64
	population   string // of every row read
}

func newHotspots(args evidence.Object, _ map[string]bool) (projection.Projector, error) {
	h := &hotspots{Inputs: projection.NewInputs[state](table.MemoryFrames.Schema), args: args,
		rows: map[key]*agg{}, threads: map[string]bool{}, rankBy: RankSelfBytes}
	h.Bound(projection.ArtifactBound{Name: "max_profiles", Max: MaxProfiles, Unit: "profiles"})
	top, _ := evidence.AsInt(args["top"])
	h.top = int(top)
	if s, ok := args["rank_by"].(string); ok && s != "" {
		h.rankBy = s
	}
	h.perThread, _ = args["per_thread"].(bool)
	h.thread, _ = args["thread"].(string)
	for _, p := range []struct {
		name string
		dst  **regexp.Regexp
	}{{"function_pattern", &h.fn}, {"file_pattern", &h.file}} {
		s, _ := args[p.name].(string)
		if s == "" {
			continue
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("argument %s: %v", p.name, err), Location: evidence.Location{Field: p.name}}
		}
		*p.dst = re
	}
	return h, nil
}

// Table admits a memory.frames table: one format, one count unit and one
// population across the admitted tables, since bytes of a high watermark
// and of leaks, or exact and sampled counts, do not add up.
func (h *hotspots) Table(t *evidence.Table, caps formats.Caps) error {
	if err := h.Check(t); err != nil {
		return err
	}
	c, _ := t.Column("self_count")
	st := state{countUnit: c.Unit}
	if prev := h.List(); len(prev) > 0 {
		p := prev[0]
		if t.Format != p.Table.Format {
			return &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("memory profiles of different formats (%s, %s) do not rank together; rank each format separately", p.Table.Format, t.Format),
				Details: evidence.Object{"formats": []string{p.Table.Format, t.Format}}}
		}
		if st.countUnit != p.State.countUnit {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s counts %s, the tables before it %s", t.ID, st.countUnit, p.State.countUnit)
		}
	}
	_, err := h.Admit(t, caps, st)
	return err
}

func (h *hotspots) Row(t *evidence.Table, row any) error {
	f, x, artifact, err := projection.Read(&h.Inputs, table.MemoryFrames, t, row)
	if err != nil {
		return err
	}
	if h.population == "" {
		h.population = f.Population
	} else if f.Population != h.population {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("table %s holds %s rows, the rows before it %s: populations do not rank together; rank each separately", t.ID, f.Population, h.population),
			Details: evidence.Object{"populations": []string{h.population, f.Population}}}
	}
	if f.Thread.Valid {
		h.threads[f.Thread.V] = true
	}
	if h.thread != "" && f.Thread != table.Some(h.thread) {
		return nil
	}
	h.selectedSelf[0] += f.SelfBytes
	if h.fn != nil && !h.fn.MatchString(f.Function) || h.file != nil && !h.file.MatchString(f.File.V) {
		return nil
	}
	h.matched++
	k := key{artifact: artifact, table: x.Index, frame: f.FrameID}
	if h.perThread {
		k.thread = f.Thread
	}
	a := h.rows[k]
	if a == nil {
		a = &agg{row: *f, artifact: artifact}
		if !h.perThread {
			a.row.Thread = table.Null[string]{}
		}
		h.rows[k] = a
		h.order = append(h.order, a)
	}
	a.self[0] += f.SelfBytes
	a.incl[0] += f.InclusiveBytes
	a.self[1] += f.SelfCount.V
	a.incl[1] += f.InclusiveCount.V
	a.noCount = a.noCount || !f.SelfCount.Valid || !f.InclusiveCount.Valid
	return nil
}

func (h *hotspots) metric(a *agg) int64 {
	switch h.rankBy {
	case RankInclusiveBytes:
		return a.incl[0]
	case RankSelfCount:
		return a.self[1]
	case RankInclusiveCount:
		return a.incl[1]
	}
	return a.self[0]
}

// before ranks by the metric, then inclusive bytes, then identity, so the
// order is total and repeatable.
func (h *hotspots) before(a, b *agg) bool {
	if ma, mb := h.metric(a), h.metric(b); ma != mb {
		return ma > mb
	}
	if a.incl[0] != b.incl[0] {
		return a.incl[0] > b.incl[0]
	}
	if a.artifact != b.artifact {
		return a.artifact < b.artifact
	}
	if a.row.FrameID != b.row.FrameID {
		return a.row.FrameID < b.row.FrameID
	}
	return a.row.Thread.V < b.row.Thread.V
}

// count is a merged count; null when a row merged in records none.
func count(a *agg, n int64) table.Null[int64] {
	if a.noCount {
		return table.Null[int64]{}
	}
	return table.Some(n)
}

func (h *hotspots) Finish(w projection.Emitter) error {
	if err := h.Ready(); err != nil {
		return err
	}
	list := h.List()
	unit := list[0].State.countUnit
	head := h.Header(table.MemoryHotspots.Schema, unit, evidence.Derived, h.args)
	head.Arguments["rank_by"] = h.rankBy
	res, err := projection.Begin(w, head)
	if err != nil {
		return err
	}
	ranked := projection.NewTopN(h.top, h.before)
	for _, a := range h.order {
		ranked.Add(a)
	}
	// The denominator: the population the decoders totalled (unresolved
	// samples included), or, for one thread, its rows' self values.
	var total int64
	var missing []string
	for _, x := range list {
		v, ok := int64(0), false
		if x.Summary != nil {
			v, ok = evidence.AsInt(x.Summary.Metrics[table.MetricPopulationBytes].Value)
		}
		if !ok {
			missing = append(missing, x.Table.ID)
		}
		total += v
	}
	if h.thread != "" || len(missing) > 0 {
		total = h.selectedSelf[0]
	}
	share := func(v int64) table.Null[float64] {
		if total == 0 {
			return table.Null[float64]{}
		}
		return table.Some(float64(v) / float64(total))
	}
	population := ""
	for i, a := range ranked.Sorted() {
		population = a.row.Population
		if err := res.Row(&table.MemoryHotspot{Rank: int64(i + 1), ArtifactID: a.artifact, FrameSite: a.row.FrameSite,
			Population: a.row.Population, SelfBytes: a.self[0], SelfShare: share(a.self[0]),
			InclusiveBytes: a.incl[0], InclusiveShare: share(a.incl[0]), SelfCount: count(a, a.self[1]), InclusiveCount: count(a, a.incl[1])}, ""); err != nil {
			return err
		}
	}
	s := h.Summarize(ranked.Observed(), ranked.Truncation())
	s.Metrics[table.MetricPopulationBytes] = evidence.Metric{Value: total, Unit: "bytes"}
	h.carryTotals(s)
	if len(list) > 1 {
		s.Metrics["profile_count"] = evidence.Metric{Value: len(list), Unit: "count"}
	}
	if population != "" {
		s.Coverage["population"] = population
	}
	s.Coverage["count_unit"] = unit
	if len(missing) > 0 {
		s.Limit(fmt.Sprintf("input tables %v state no %s: shares are of the selected rows' self bytes", missing, table.MetricPopulationBytes))
	}
	if h.thread != "" && !h.threads[h.thread] {
		s.Limit(fmt.Sprintf("no row has thread %q: an empty result is not evidence that it allocated nothing", h.thread))
		s.Complete = false
	}
	if (h.rankBy == RankSelfCount || h.rankBy == RankInclusiveCount) && slices.ContainsFunc(h.order, func(a *agg) bool { return a.noCount }) {
		s.Limit("some profiles record no sample counts (null): those rows rank as if their count were 0")
	}
	if h.matched == 0 && (h.fn != nil || h.file != nil) {
		s.Limit("no frame matched the function or file pattern")
	}
	return res.End(s)
}

// carried are the decoders' totals a result repeats: summed over the
// admitted profiles, except the peak, which is one process's.
var carried = []string{"allocations", "allocated_bytes", "high_watermark_bytes", "leaked_bytes",
	"unresolved_sample_count", "unresolved_sampled_bytes", "peak_memory"}

func (h *hotspots) carryTotals(s *evidence.Summary) {
	list := h.List()
	for _, name := range carried {
		if name == "peak_memory" && len(list) > 1 {
			continue
		}
		var sum int64
		var unit string
		for _, x := range list {
			if x.Summary == nil {
				return
			}
			m, ok := x.Summary.Metrics[name]
			v, isInt := evidence.AsInt(m.Value)
			if !ok || !isInt {
				sum, unit = -1, ""
				break
			}
			sum += v
			unit = m.Unit
		}
		if unit != "" {
			s.Metrics[name] = evidence.Metric{Value: sum, Unit: unit}
		}
	}
}
