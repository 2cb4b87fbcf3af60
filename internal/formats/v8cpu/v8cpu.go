// Package v8cpu decodes V8 CPU profiles (.cpuprofile), as written by
// `node --cpu-prof` and Chrome DevTools, into cpu.frames and cpu.edges.
//
// The file is streamed once. Memory grows with the number of call-tree
// nodes and distinct sampled node ids, never with the file size or the
// number of samples: samples are counted per node id as they stream past,
// and only resolved against the tree after the whole document was read, so
// key order in the file does not matter.
package v8cpu

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Version is the decoder version recorded in table headers.
const Version = "1"

// Limit names.
const (
	LimitBytes   = "max_bytes"
	LimitNodes   = "max_nodes"
	LimitSamples = "max_samples"
)

// Spec is the v8-cpuprofile format.
var Spec = &formats.Spec{
	Name:     "v8-cpuprofile",
	Title:    "Node/V8 CPU profile",
	Family:   "CPU profiles",
	Suffixes: []string{".cpuprofile"},
	Sniff:    sniff,
	Tables:   []*table.Schema{table.CPUFrames.Schema, table.CPUEdges.Schema},
	Limits: []formats.Limit{
		{Name: LimitBytes, Default: 16 << 30, Unit: "bytes", Doc: "bytes read from the profile"},
		{Name: LimitNodes, Default: 5_000_000, Unit: "count", Doc: "call-tree nodes"},
		{Name: LimitSamples, Default: 2_000_000_000, Unit: "samples", Doc: "entries in samples"},
	},
	Producer: "node --cpu-prof / Chrome DevTools",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
}

// sniff recognizes the start of a profile object: a "nodes" array whose
// first element carries a callFrame.
func sniff(prefix []byte) formats.Verdict {
	p := bytes.TrimLeft(prefix, " \t\r\n")
	if len(p) == 0 {
		return formats.NeedMore
	}
	if p[0] != '{' {
		return formats.No
	}
	if bytes.Contains(p, []byte(`"callFrame"`)) && bytes.Contains(p, []byte(`"nodes"`)) {
		if bytes.Contains(p, []byte(`"traceEvents"`)) || bytes.Contains(p, []byte(`"head"`)) {
			return formats.No // a trace or a heap profile
		}
		return formats.Yes
	}
	if len(p) < formats.SniffBytes {
		return formats.No
	}
	return formats.NeedMore
}

// callFrame is a node's frame identity.
type callFrame struct {
	function string
	scriptID string
	url      string
	line     int64 // -1 when absent
	column   int64
}

type node struct {
	id        int64
	frame     int32 // index into frames
	parent    int32 // index into nodes; -1 for a root
	children  []int64
	hitCount  int64
	hasHit    bool
	parentRef *int64 // the "parent" form of Chrome trace chunks
}

type profile struct {
	nodes      []node
	byID       map[int64]int32
	frames     []callFrame
	frameIdx   map[callFrame]int32
	dense      []int64         // samples per node id, for small ids
	sparse     map[int64]int64 // samples per node id, for the rest
	samples    int64
	deltas     int64
	deltaSum   int64
	startTime  *int64
	endTime    *int64
	hasSamples bool
	hasDeltas  bool
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	r := &limitReader{r: in.R, max: in.Limit(LimitBytes)}
	s := jsonscan.New(r)
	s.MaxDepth = 64
	p := &profile{byID: map[int64]int32{}, frameIdx: map[callFrame]int32{}, sparse: map[int64]int64{}}
	if err := p.parse(ctx, s, in); err != nil {
		if r.exceeded {
			return limitFailure(LimitBytes, r.max, "bytes")
		}
		return err
	}
	if err := p.link(); err != nil {
		return err
	}
	return p.emit(in, out)
}

func limitFailure(name string, limit int64, what string) error {
	return &evidence.Failure{Code: evidence.CodeLimitExceeded,
		Message: fmt.Sprintf("V8 profile has more than %d %s (limit %s)", limit, what, name),
		Details: evidence.Object{"limit": name, "value": limit}}
}

func (p *profile) parse(ctx context.Context, s *jsonscan.Scanner, in *formats.Input) error {
	tok, err := s.Next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonscan.ObjectStart {
		return s.Errorf(tok, "a V8 CPU profile is a JSON object, found %s", tok.Kind)
	}
	sawNodes := false
	for {
		key, err := s.Next()
		if err != nil {
			return err
		}
		if key.Kind == jsonscan.ObjectEnd {
			break
		}
		switch string(key.Bytes) {
		case "nodes":
			sawNodes = true
			err = p.parseNodes(ctx, s, in.Limit(LimitNodes))
		case "samples":
			p.hasSamples = true
			err = p.parseSamples(ctx, s, in.Limit(LimitSamples))
		case "timeDeltas":
			p.hasDeltas = true
			err = p.parseDeltas(s)
		case "startTime":
			p.startTime, err = optionalInt(s, "startTime")
		case "endTime":
			p.endTime, err = optionalInt(s, "endTime")
		default:
			err = skip(s)
		}
		if err != nil {
			return err
		}
	}
	if err := s.CheckEnd(); err != nil {
		return err
	}
	if !sawNodes {
		return errors.New("not a V8 CPU profile: no nodes array")
	}
	if !p.hasSamples {
		return errors.New("V8 CPU profile has no samples array")
	}
	if p.hasDeltas && p.deltas != p.samples {
		return fmt.Errorf("V8 CPU profile has %d samples but %d timeDeltas", p.samples, p.deltas)
	}
	return nil
}

func skip(s *jsonscan.Scanner) error {
	t, err := s.Next()
	if err != nil {
		return err
	}
	return s.Skip(t)
}

func optionalInt(s *jsonscan.Scanner, field string) (*int64, error) {
	t, err := s.Next()
	if err != nil {
		return nil, err
	}
	if t.Kind == jsonscan.Null {
		return nil, nil
	}
	n, err := intToken(s, t, field)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// intToken reads an integer; V8 writes every id, count and delta as one.
func intToken(s *jsonscan.Scanner, t jsonscan.Token, field string) (int64, error) {
	if t.Kind != jsonscan.Number {
		return 0, s.Errorf(t, "%s must be an integer, found %s", field, t.Kind)
	}
	n, err := strconv.ParseInt(string(t.Bytes), 10, 64)
	if err != nil {
		return 0, s.Errorf(t, "%s must be an integer, found %s", field, t.Bytes)
	}
	return n, nil
}

func expect(s *jsonscan.Scanner, k jsonscan.Kind, what string) error {
	t, err := s.Next()
	if err != nil {
		return err
	}
	if t.Kind != k {
		return s.Errorf(t, "%s must be %s, found %s", what, k, t.Kind)
	}
	return nil
}

func (p *profile) parseSamples(ctx context.Context, s *jsonscan.Scanner, max int64) error {
	if err := expect(s, jsonscan.ArrayStart, "samples"); err != nil {
		return err
	}
	return s.Ints(func(id int64) error {
		p.samples++
		if p.samples > max {
			return limitFailure(LimitSamples, max, "samples")
		}
		if p.samples&0xFFFFF == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		p.count(id)
		return nil
	})
}

// denseIDs bounds the id range counted in a slice; V8 numbers nodes from 1
// upwards, so real profiles never reach the map.
const denseIDs = 1 << 20

func (p *profile) count(id int64) {
	if id >= 0 && id < denseIDs {
		if id >= int64(len(p.dense)) {
			n := max(2*len(p.dense), int(id)+1, 1024)
			p.dense = append(p.dense, make([]int64, min(n, denseIDs)-len(p.dense))...)
		}
		p.dense[id]++
		return
	}
	p.sparse[id]++
}

// sampleCounts calls fn for every node id that was sampled.
func (p *profile) sampleCounts(fn func(id, n int64) error) error {
	for id, n := range p.dense {
		if n > 0 {
			if err := fn(int64(id), n); err != nil {
				return err
			}
		}
	}
	for id, n := range p.sparse {
		if err := fn(id, n); err != nil {
			return err
		}
	}
	return nil
}

func (p *profile) samplesOf(id int64) int64 {
	if id >= 0 && id < int64(len(p.dense)) {
		return p.dense[id]
	}
	return p.sparse[id]
}

func (p *profile) parseDeltas(s *jsonscan.Scanner) error {
	if err := expect(s, jsonscan.ArrayStart, "timeDeltas"); err != nil {
		return err
	}
	return s.Ints(func(d int64) error {
		p.deltas++
		p.deltaSum += d
		return nil
	})
}

func (p *profile) parseNodes(ctx context.Context, s *jsonscan.Scanner, max int64) error {
	if err := expect(s, jsonscan.ArrayStart, "nodes"); err != nil {
		return err
	}
	for {
		t, err := s.Next()
		if err != nil {
			return err
		}
		if t.Kind == jsonscan.ArrayEnd {
			return nil
		}
		if t.Kind != jsonscan.ObjectStart {
			return s.Errorf(t, "nodes[%d] must be an object, found %s", len(p.nodes), t.Kind)
		}
		if int64(len(p.nodes)) >= max {
			return limitFailure(LimitNodes, max, "nodes")
		}
		if len(p.nodes)&0xFFFF == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := p.parseNode(s, t); err != nil {
			return err
		}
	}
}

func (p *profile) parseNode(s *jsonscan.Scanner, start jsonscan.Token) error {
	n := node{parent: -1, frame: -1}
	idx := len(p.nodes)
	var haveID, haveFrame bool
	var parentID *int64
	var cf callFrame
	for {
		key, err := s.Next()
		if err != nil {
			return err
		}
		if key.Kind == jsonscan.ObjectEnd {
			break
		}
		switch string(key.Bytes) {
		case "id":
			t, err := s.Next()
			if err != nil {
				return err
			}
			if n.id, err = intToken(s, t, fmt.Sprintf("nodes[%d].id", idx)); err != nil {
				return err
			}
			haveID = true
		case "callFrame":
			if cf, err = parseCallFrame(s, idx); err != nil {
				return err
			}
			haveFrame = true
		case "hitCount":
			t, err := s.Next()
			if err != nil {
				return err
			}
			if n.hitCount, err = intToken(s, t, "hitCount"); err != nil {
				return err
			}
			n.hasHit = true
		case "children":
			if n.children, err = parseChildren(s, idx); err != nil {
				return err
			}
		case "parent":
			pid, err := optionalInt(s, fmt.Sprintf("nodes[%d].parent", idx))
			if err != nil {
				return err
			}
			parentID = pid
		default:
			if err := skip(s); err != nil {
				return err
			}
		}
	}
	if !haveID {
		return s.Errorf(start, "nodes[%d] has no id", idx)
	}
	if !haveFrame {
		return s.Errorf(start, "node %d has no callFrame", n.id)
	}
	if _, dup := p.byID[n.id]; dup {
		return s.Errorf(start, "node id %d appears twice", n.id)
	}
	fi, ok := p.frameIdx[cf]
	if !ok {
		fi = int32(len(p.frames))
		p.frames = append(p.frames, cf)
		p.frameIdx[cf] = fi
	}
	n.frame = fi
	n.parentRef = parentID
	p.byID[n.id] = int32(idx)
	p.nodes = append(p.nodes, n)
	return nil
}

func parseChildren(s *jsonscan.Scanner, idx int) ([]int64, error) {
	t, err := s.Next()
	if err != nil {
		return nil, err
	}
	if t.Kind != jsonscan.ArrayStart {
		return nil, s.Errorf(t, "nodes[%d].children must be an array of node ids, found %s", idx, t.Kind)
	}
	var out []int64
	for {
		t, err := s.Next()
		if err != nil {
			return nil, err
		}
		if t.Kind == jsonscan.ArrayEnd {
			return out, nil
		}
		id, err := intToken(s, t, fmt.Sprintf("nodes[%d].children[]", idx))
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
}

func parseCallFrame(s *jsonscan.Scanner, idx int) (callFrame, error) {
	cf := callFrame{line: -1, column: -1}
	if err := expect(s, jsonscan.ObjectStart, fmt.Sprintf("nodes[%d].callFrame", idx)); err != nil {
		return cf, err
	}
	for {
		key, err := s.Next()
		if err != nil {
			return cf, err
		}
		if key.Kind == jsonscan.ObjectEnd {
			return cf, nil
		}
		name := string(key.Bytes)
		t, err := s.Next()
		if err != nil {
			return cf, err
		}
		switch name {
		case "functionName", "scriptId", "url":
			var v string
			switch t.Kind {
			case jsonscan.String:
				v = string(t.Bytes)
			case jsonscan.Number:
				if name != "scriptId" {
					return cf, s.Errorf(t, "callFrame.%s must be a string", name)
				}
				v = string(t.Bytes) // older profiles write scriptId as a number
			default:
				return cf, s.Errorf(t, "callFrame.%s must be a string, found %s", name, t.Kind)
			}
			switch name {
			case "functionName":
				cf.function = v
			case "scriptId":
				cf.scriptID = v
			default:
				cf.url = v
			}
		case "lineNumber", "columnNumber":
			n, err := intToken(s, t, "callFrame."+name)
			if err != nil {
				return cf, err
			}
			if name == "lineNumber" {
				cf.line = n
			} else {
				cf.column = n
			}
		default:
			if err := s.Skip(t); err != nil {
				return cf, err
			}
		}
	}
}

// link resolves every child and parent id inside the file and checks that
// the nodes form a forest: one parent per node, no cycles.
func (p *profile) link() error {
	// The parent form becomes child links once every node is known.
	for i := range p.nodes {
		n := &p.nodes[i]
		if n.parentRef == nil {
			continue
		}
		pi, ok := p.byID[*n.parentRef]
		if !ok {
			return fmt.Errorf("node %d names parent %d, which is not in the profile", n.id, *n.parentRef)
		}
		p.nodes[pi].children = append(p.nodes[pi].children, n.id)
	}
	for i := range p.nodes {
		for _, cid := range p.nodes[i].children {
			ci, ok := p.byID[cid]
			if !ok {
				return fmt.Errorf("node %d names child %d, which is not in the profile", p.nodes[i].id, cid)
			}
			c := &p.nodes[ci]
			if c.parent != -1 {
				return fmt.Errorf("node %d has two parents (%d and %d)", cid, p.nodes[c.parent].id, p.nodes[i].id)
			}
			if ci == int32(i) {
				return fmt.Errorf("node %d is its own child", cid)
			}
			c.parent = int32(i)
		}
	}
	return p.sampleCounts(func(id, _ int64) error {
		if _, ok := p.byID[id]; !ok {
			return fmt.Errorf("a sample names node %d, which is not in the profile", id)
		}
		return nil
	})
}

// order returns node indexes with every child before its parent, and fails
// on cycles (nodes that no root reaches).
func (p *profile) order() ([]int32, error) {
	out := make([]int32, 0, len(p.nodes))
	type item struct {
		idx  int32
		next int
	}
	var stack []item
	for i := range p.nodes {
		if p.nodes[i].parent != -1 {
			continue
		}
		stack = append(stack, item{int32(i), 0})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			n := &p.nodes[top.idx]
			if top.next < len(n.children) {
				ci := p.byID[n.children[top.next]]
				top.next++
				stack = append(stack, item{ci, 0})
				continue
			}
			out = append(out, top.idx)
			stack = stack[:len(stack)-1]
		}
	}
	if len(out) != len(p.nodes) {
		return nil, fmt.Errorf("the call tree has a cycle: %d nodes are unreachable from a root", len(p.nodes)-len(out))
	}
	return out, nil
}

var syntheticNames = map[string]bool{"(root)": true, "(program)": true, "(idle)": true, "(garbage collector)": true}

func symbolization(cf callFrame) string {
	switch {
	case syntheticNames[cf.function] && cf.url == "":
		return table.Synthetic
	case cf.function == "":
		return table.Anonymous
	}
	return table.Symbolized
}

func frameID(cf callFrame) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%d", cf.function, cf.scriptID, cf.url, cf.line, cf.column)
	return "v8:" + hex.EncodeToString(h.Sum(nil)[:8])
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (p *profile) emit(in *formats.Input, out formats.Sink) error {
	post, err := p.order()
	if err != nil {
		return err
	}
	subtree := make([]int64, len(p.nodes))
	self := make([]int64, len(p.frames))
	incl := make([]int64, len(p.frames))
	type edgeKey struct{ caller, callee int32 }
	edgeW := map[edgeKey][2]int64{}
	var hitMismatch int64
	for _, i := range post {
		n := &p.nodes[i]
		c := p.samplesOf(n.id)
		if n.hasHit && n.hitCount != c {
			hitMismatch++
		}
		subtree[i] += c
		self[n.frame] += c
		incl[n.frame] += subtree[i]
		if n.parent >= 0 {
			subtree[n.parent] += subtree[i]
			k := edgeKey{p.nodes[n.parent].frame, n.frame}
			w := edgeW[k]
			w[0] += subtree[i]
			w[1] += c
			edgeW[k] = w
		}
	}

	aid := in.Artifact.ID
	tw, err := out.Begin(&evidence.Table{Name: table.CPUFrames.Name, Columns: table.CPUFrames.EvidenceColumns(unit.Samples)})
	if err != nil {
		return err
	}
	ids := make([]string, len(p.frames))
	for fi, cf := range p.frames {
		ids[fi] = frameID(cf)
		if err := tw.Row(evidence.Object{
			"artifact_id":      aid,
			"frame_id":         ids[fi],
			"function":         cf.function,
			"file":             nullIfEmpty(cf.url),
			"line":             cf.line,
			"column":           cf.column,
			"module":           nil,
			"symbolization":    symbolization(cf),
			"thread":           nil,
			"process":          nil,
			"self_weight":      self[fi],
			"inclusive_weight": incl[fi],
			"calls":            nil,
			"primitive_calls":  nil,
		}); err != nil {
			return err
		}
	}
	summary := p.summary(int64(len(p.frames)), hitMismatch)
	if err := tw.End(summary); err != nil {
		return err
	}

	ew, err := out.Begin(&evidence.Table{Name: table.CPUEdges.Name, Columns: table.CPUEdges.EvidenceColumns(unit.Samples)})
	if err != nil {
		return err
	}
	// Emit edges in tree order so output is deterministic.
	emitted := map[edgeKey]bool{}
	for i := range p.nodes {
		n := &p.nodes[i]
		if n.parent < 0 {
			continue
		}
		k := edgeKey{p.nodes[n.parent].frame, n.frame}
		if emitted[k] {
			continue
		}
		emitted[k] = true
		caller, callee := p.frames[k.caller], p.frames[k.callee]
		w := edgeW[k]
		if err := ew.Row(evidence.Object{
			"artifact_id":     aid,
			"caller_id":       ids[k.caller],
			"caller_function": caller.function,
			"caller_file":     nullIfEmpty(caller.url),
			"caller_line":     caller.line,
			"callee_id":       ids[k.callee],
			"callee_function": callee.function,
			"callee_file":     nullIfEmpty(callee.url),
			"callee_line":     callee.line,
			"thread":          nil,
			"process":         nil,
			"weight":          w[0],
			"self_weight":     w[1],
			"calls":           nil,
			"primitive_calls": nil,
		}); err != nil {
			return err
		}
	}
	es := p.summary(int64(len(emitted)), hitMismatch)
	es.Limit("sampled caller edges are weights, not invocation counts")
	return ew.End(es)
}

func (p *profile) summary(rows, hitMismatch int64) *evidence.Summary {
	s := &evidence.Summary{
		RowsObserved: rows,
		Complete:     true,
		Metrics: map[string]evidence.Metric{
			table.MetricTotalWeight:    {Value: p.samples, Unit: unit.Samples},
			table.MetricSamples:        {Value: p.samples, Unit: unit.Samples},
			"nodes":                    {Value: len(p.nodes), Unit: "count"},
			"frames":                   {Value: len(p.frames), Unit: "count"},
			"hit_count_mismatch_nodes": {Value: hitMismatch, Unit: "count"},
		},
		Limitations: []string{
			"source maps are not resolved",
			"counts come from the samples array; hitCount is not used",
			"inclusive weight sums call-tree occurrences, so recursive frames can exceed the total",
		},
	}
	if p.hasDeltas {
		s.Metrics["sampled_duration"] = evidence.Metric{Value: float64(p.deltaSum) * 1e-6, Unit: unit.Seconds}
	}
	if p.startTime != nil && p.endTime != nil {
		s.Metrics["profile_duration"] = evidence.Metric{Value: float64(*p.endTime-*p.startTime) * 1e-6, Unit: unit.Seconds}
	}
	return s
}

// limitReader fails reads past max bytes, so a ceiling on input size holds
// even for a stream without a known length.
type limitReader struct {
	r        io.Reader
	max, n   int64
	exceeded bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n >= l.max {
		// Probe one byte: a file of exactly max bytes is within the limit.
		var one [1]byte
		if k, _ := l.r.Read(one[:]); k > 0 {
			l.exceeded = true
			return 0, errors.New("input exceeds the byte limit")
		}
		return 0, io.EOF
	}
	if rem := l.max - l.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}
