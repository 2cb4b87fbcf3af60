package chrometrace

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/v8frame"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// CPU samples inside a trace. Chrome DevTools' Performance panel (and
// chromium's disabled-by-default-v8.cpu_profiler category) records V8's
// sampling profiler as P events: a Profile event opens a profile
// (args.data.startTime), identified by its id within its process, and
// ProfileChunk events of the same id carry its call tree incrementally
// (args.data.cpuProfile.nodes: id, callFrame, parent) and its samples
// (args.data.cpuProfile.samples, node ids, with args.data.timeDeltas in
// microseconds). They become cpu.frames, cpu.edges and cpu.stacks, one
// series per profile (its process and the thread the Profile event names),
// weighed in samples and with V8's frame identities (v8frame), as a
// .cpuprofile of the same run would be. Memory grows with the call-tree
// nodes and the distinct sampled nodes, never with the samples.

// traceTablesWithCPU are the tables of a Chrome trace: the trace tables,
// and the CPU tables when the trace carries V8 samples.
var traceTablesWithCPU = append(slices.Clone(table.TraceTables), table.CPUFrames.Schema, table.CPUEdges.Schema, table.CPUStacks.Schema)

type profKey struct{ pid, id string }

type cpuNode struct {
	frame  int32
	parent int64
	root   bool // no parent
}

// v8prof is one profile's call tree and sample counts.
type v8prof struct {
	pid, tid   string
	hasTid     bool // the Profile event's tid: the sampled thread
	nodes      map[int64]cpuNode
	counts     map[int64]int64
	samples    int64
	deltas     int64
	deltaSum   int64
	chunks     int64
	unknownIDs int64 // samples naming a node the profile never defined
}

// cpuSamples collects the V8 profiles of one trace.
type cpuSamples struct {
	profs    map[profKey]*v8prof
	order    []*v8prof
	frames   []v8frame.CallFrame
	frameIdx map[v8frame.CallFrame]int32
	events   int64
	nodes    int64
	bad      map[string]int64 // malformed P events by reason
	maxNodes int64
}

func (c *cpuSamples) reject(why string) {
	if c.bad == nil {
		c.bad = map[string]int64{}
	}
	c.bad[why]++
}

// sample reads a Profile or ProfileChunk event; other P events (legacy
// samples) report false and stay counted as not interpreted.
func (d *decoder) sample() bool {
	e := &d.ev
	if e.name != "Profile" && e.name != "ProfileChunk" {
		return false
	}
	c := &d.cpu
	if c.profs == nil {
		c.profs, c.frameIdx = map[profKey]*v8prof{}, map[v8frame.CallFrame]int32{}
		c.maxNodes = 50_000_000
	}
	c.events++
	if !e.hasID {
		c.reject(e.name + " without id")
		return true
	}
	k := profKey{e.pid, e.id}
	p := c.profs[k]
	if p == nil {
		p = &v8prof{pid: e.pid, tid: e.tid, nodes: map[int64]cpuNode{}, counts: map[int64]int64{}}
		c.profs[k] = p
		c.order = append(c.order, p)
	}
	if e.name == "Profile" {
		if e.hasTid {
			p.tid, p.hasTid = e.tid, true
		}
		return true
	}
	p.chunks++
	data, _ := e.arg("data").(map[string]any)
	if data == nil && e.argsCut > 0 {
		c.reject("ProfileChunk whose args.data max_args left out")
		return true
	}
	cp, _ := data["cpuProfile"].(map[string]any)
	if nodes, ok := cp["nodes"].([]any); ok {
		for _, n := range nodes {
			if err := c.node(p, n); err != "" {
				c.reject(err)
			}
		}
	}
	samples, _ := cp["samples"].([]any)
	for _, s := range samples {
		id, ok := intOf(s)
		if !ok {
			c.reject("a sample that is not a node id")
			continue
		}
		p.counts[id]++
		p.samples++
	}
	if deltas, ok := data["timeDeltas"].([]any); ok {
		for _, v := range deltas {
			if n, ok := intOf(v); ok {
				p.deltas++
				p.deltaSum += n
			}
		}
	}
	return true
}

// node adds one call-tree node; the reason it cannot, or "".
func (c *cpuSamples) node(p *v8prof, v any) string {
	o, ok := v.(map[string]any)
	if !ok {
		return "a cpuProfile node that is not an object"
	}
	id, ok := intOf(o["id"])
	if !ok {
		return "a cpuProfile node without an integer id"
	}
	if _, dup := p.nodes[id]; dup {
		return "a cpuProfile node id defined twice"
	}
	if c.nodes >= c.maxNodes {
		return "cpuProfile nodes past 50,000,000"
	}
	c.nodes++
	cf := v8frame.CallFrame{Line: -1, Column: -1}
	f, _ := o["callFrame"].(map[string]any)
	if f == nil {
		return "a cpuProfile node without a callFrame"
	}
	cf.Function, _ = f["functionName"].(string)
	cf.URL, _ = f["url"].(string)
	switch s := f["scriptId"].(type) {
	case string:
		cf.ScriptID = s
	case json.Number:
		cf.ScriptID = string(s)
	}
	if n, ok := intOf(f["lineNumber"]); ok {
		cf.Line = n
	}
	if n, ok := intOf(f["columnNumber"]); ok {
		cf.Column = n
	}
	fi, ok := c.frameIdx[cf]
	if !ok {
		fi = int32(len(c.frames))
		c.frames = append(c.frames, cf)
		c.frameIdx[cf] = fi
	}
	n := cpuNode{frame: fi, root: true}
	if par, ok := intOf(o["parent"]); ok {
		n.parent, n.root = par, false
	}
	p.nodes[id] = n
	return ""
}

func intOf(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

// cpuFrame is one frame of the CPU tables: a V8 call frame, a stackFrames
// entry or a stack string.
type cpuFrame struct {
	id, function, file, module, sym string
	line, column                    int64
}

// cpuSeries is one series of the CPU tables: its rows' thread and
// process, and whether the coverage names them.
type cpuSeries struct {
	pid, tid       string
	covTid, covPid bool
}

// emitCPU writes the CPU tables of the trace's samples: the V8 profiles
// first, then the format's own samples (legacy.go), each with its series;
// a trace with neither has none.
func (d *decoder) emitCPU(out formats.Sink) error {
	c, t := &d.cpu, &d.tef
	if c.events == 0 && !t.any() {
		return nil
	}
	// seen is the last record that added to incl: a frame or edge that
	// recurs in one stack counts once, found in time linear in the depth.
	type agg struct {
		self, incl int64
		seen       int
	}
	type stackRow struct {
		p      int
		frames []int32 // leaf first, shared with the record
		w      int64
	}
	var frames []cpuFrame
	var series []cpuSeries
	var recs []weighed
	var total, unplaced, cycles int64
	var buf []byte
	for _, cf := range c.frames {
		f := cpuFrame{function: cf.Function, file: cf.URL, line: cf.Line, column: cf.Column, sym: table.Symbolized}
		f.id, buf = cf.ID(buf)
		switch {
		case cf.Synthetic():
			f.sym = table.Synthetic
		case cf.Function == "":
			f.sym = table.Anonymous
		}
		frames = append(frames, f)
	}
	totals := make([]int64, len(c.order))
	var path []int32
	for pi, p := range c.order {
		series = append(series, cpuSeries{pid: p.pid, tid: p.tid, covTid: p.tid != "" || p.hasTid, covPid: p.pid != ""})
		ids := make([]int64, 0, len(p.counts))
		for id := range p.counts {
			ids = append(ids, id)
		}
		slices.Sort(ids) // output independent of map order
		for _, id := range ids {
			n := p.counts[id]
			total += n
			totals[pi] += n
			path = path[:0]
			ok := true
			for cur, steps := id, 0; ; steps++ {
				nd, found := p.nodes[cur]
				if !found || steps > len(p.nodes) {
					if !found {
						p.unknownIDs += n
					} else {
						cycles += n
					}
					ok = false
					break
				}
				path = append(path, nd.frame)
				if nd.root {
					break
				}
				cur = nd.parent
			}
			if !ok {
				unplaced += n
				continue
			}
			// Leaf first; the (root) node stands for the whole profile.
			if last := path[len(path)-1]; c.frames[last].Function == "(root)" && c.frames[last].URL == "" {
				path = path[:len(path)-1]
			}
			if len(path) == 0 {
				continue
			}
			recs = append(recs, weighed{series: int32(pi), path: slices.Clone(path), w: n})
		}
	}
	v8Total := total
	var tefUnplacedN, tefUnplacedW int64
	if t.any() {
		t.init()
		fbase, sbase := int32(len(frames)), int32(len(series))
		lrecs := t.records(fbase, sbase) // interns the stackFrames frames it reaches
		for _, f := range t.frames {
			frames = append(frames, legacyCPUFrame(f))
		}
		for i, s := range t.series {
			series = append(series, cpuSeries{pid: s.pid, tid: s.tid, covTid: s.hasTid, covPid: s.hasPid})
			totals = append(totals, t.seriesW[i])
			total += t.seriesW[i]
		}
		recs = append(recs, lrecs...)
		for _, u := range t.unplaced {
			tefUnplacedN += u.n
			tefUnplacedW += u.w
		}
	}
	frameW := map[[2]int32]*agg{} // series, frame
	edgeW := map[[3]int32]*agg{}  // series, caller, callee
	var stacks []stackRow
	for ri, r := range recs {
		path, n, pi, mark := r.path, r.w, r.series, ri+1
		for i, f := range path {
			a := frameW[[2]int32{pi, f}]
			if a == nil {
				a = &agg{}
				frameW[[2]int32{pi, f}] = a
			}
			if i == 0 {
				a.self += n
			}
			if a.seen != mark {
				a.seen = mark
				a.incl += n
			}
			if i == 0 {
				continue
			}
			ek := [3]int32{pi, f, path[i-1]}
			e := edgeW[ek]
			if e == nil {
				e = &agg{}
				edgeW[ek] = e
			}
			if e.seen != mark {
				e.seen = mark
				e.incl += n
			}
			if i == 1 {
				e.self += n
			}
		}
		stacks = append(stacks, stackRow{p: int(pi), frames: path, w: n})
	}
	summary := func(rows int64, vals *formats.Values) *evidence.Summary {
		s := &evidence.Summary{RowsObserved: rows, Complete: unplaced == 0,
			Metrics: map[string]evidence.Metric{
				table.MetricTotalWeight: {Value: total, Unit: unit.Samples},
				table.MetricSamples:     {Value: v8Total + t.read, Unit: unit.Samples},
				"unplaced_samples":      {Value: unplaced + tefUnplacedW, Unit: unit.Samples},
			}}
		if c.events > 0 {
			s.Metrics["profiles"] = evidence.Metric{Value: len(c.order), Unit: "count"}
			s.Metrics["profile_events"] = evidence.Metric{Value: c.events, Unit: "count"}
		}
		var list []any
		for pi, p := range series {
			list = append(list, evidence.Object{"thread": nullable(vals.Bound(p.tid), p.covTid), "process": nullable(vals.Bound(p.pid), p.covPid), "total_weight": totals[pi]})
		}
		if len(list) > 0 {
			s.Coverage = evidence.Object{table.CoverageProfiles: list}
		}
		if c.events > 0 {
			s.Limit("CPU samples are the V8 profiles of Profile/ProfileChunk events, one series per profile (process and sampled thread as native ids); weights count samples; per-sample lines and columns are not used")
		}
		var unknown int64
		for _, p := range c.order {
			unknown += p.unknownIDs
		}
		if unknown > 0 {
			s.Limit(fmt.Sprintf("%d samples name a node no chunk of their profile defined: they count in the total but in no frame", unknown))
		}
		if cycles > 0 {
			s.Limit(fmt.Sprintf("%d samples sit on a node whose parent chain loops: they count in the total but in no frame", cycles))
		}
		reasons := make([]string, 0, len(c.bad))
		for r := range c.bad {
			reasons = append(reasons, r)
		}
		slices.Sort(reasons)
		for _, r := range reasons {
			s.Limit(fmt.Sprintf("%d × %s: skipped", c.bad[r], r))
		}
		if t.any() {
			t.summarize(s, tefUnplacedN)
		}
		return s
	}
	if out.Wants(table.CPUFrames.Schema) {
		keys := make([][2]int32, 0, len(frameW))
		for k := range frameW {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b [2]int32) int { return cmp2(a[0], b[0], a[1], b[1]) })
		tw, err := out.Begin(table.CPUFrames.HeaderBased(unit.Samples, 0))
		if err != nil {
			return err
		}
		vals := d.in.Values()
		for _, k := range keys {
			cf, p, a := frames[k[1]], series[k[0]], frameW[k]
			if err := tw.Row(&table.Frame{FrameSite: table.FrameSite{
				FrameID: cf.id, Function: vals.Bound(cf.function), File: table.NonEmpty(vals.Bound(cf.file)),
				Line: cf.line, Column: cf.column, Module: table.NonEmpty(vals.Bound(cf.module)), Symbolization: cf.sym,
				Thread: table.NonEmpty(vals.Bound(p.tid)), Process: table.NonEmpty(vals.Bound(p.pid))},
				SelfWeight: float64(a.self), InclusiveWeight: float64(a.incl)}); err != nil {
				return err
			}
		}
		s := summary(int64(len(keys)), vals)
		vals.Summarize(s)
		if err := tw.End(s); err != nil {
			return err
		}
	}
	if out.Wants(table.CPUEdges.Schema) {
		keys := make([][3]int32, 0, len(edgeW))
		for k := range edgeW {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b [3]int32) int {
			if a[0] != b[0] {
				return int(a[0] - b[0])
			}
			return cmp2(a[1], b[1], a[2], b[2])
		})
		tw, err := out.Begin(table.CPUEdges.HeaderBased(unit.Samples, 0))
		if err != nil {
			return err
		}
		vals := d.in.Values()
		for _, k := range keys {
			caller, callee, p, a := frames[k[1]], frames[k[2]], series[k[0]], edgeW[k]
			if err := tw.Row(&table.Edge{
				CallerID: caller.id, CallerFunction: vals.Bound(caller.function), CallerFile: table.NonEmpty(vals.Bound(caller.file)), CallerLine: caller.line,
				CalleeID: callee.id, CalleeFunction: vals.Bound(callee.function), CalleeFile: table.NonEmpty(vals.Bound(callee.file)), CalleeLine: callee.line,
				Thread: table.NonEmpty(vals.Bound(p.tid)), Process: table.NonEmpty(vals.Bound(p.pid)),
				Weight: table.Some(float64(a.incl)), SelfWeight: table.Some(float64(a.self))}); err != nil {
				return err
			}
		}
		s := summary(int64(len(keys)), vals)
		s.Limit("sampled caller edges are weights, not invocation counts")
		vals.Summarize(s)
		if err := tw.End(s); err != nil {
			return err
		}
	}
	if out.Wants(table.CPUStacks.Schema) {
		tw, err := out.Begin(table.CPUStacks.Header(unit.Samples))
		if err != nil {
			return err
		}
		vals := d.in.Values()
		for _, st := range stacks {
			p := series[st.p]
			fr := make([]string, len(st.frames))
			for i, f := range st.frames {
				fr[len(fr)-1-i] = frames[f].id // root first
			}
			if err := tw.Row(&table.Stack{Frames: fr, Weight: float64(st.w),
				Thread: table.NonEmpty(vals.Bound(p.tid)), Process: table.NonEmpty(vals.Bound(p.pid))}); err != nil {
				return err
			}
		}
		s := summary(int64(len(stacks)), vals)
		if c.events > 0 {
			s.Limit("stacks are the call-tree paths of the nodes samples hit; the (root) node is left out")
		}
		if t.any() {
			s.Limit("stacks of the format's own samples are their stackFrames parent chains, or their stack arrays, as written")
		}
		vals.Summarize(s)
		return tw.End(s)
	}
	return nil
}

func nullable(s string, ok bool) any {
	if !ok {
		return nil
	}
	return s
}

func cmp2(a0, b0, a1, b1 int32) int {
	if a0 != b0 {
		return int(a0 - b0)
	}
	return int(a1 - b1)
}
