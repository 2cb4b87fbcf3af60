// Package v8heap decodes V8 sampling heap profiles (.heapprofile), as
// written by `node --heap-prof` and Chrome DevTools' allocation sampling,
// into memory.frames.
//
// The rules are the seed's. self_bytes and inclusive_bytes keep V8's own
// allocation estimates (the nodes' selfSize), independent of the sample
// counts; self_count and inclusive_count count the native sample records
// (the samples array) per frame identity, records of several call-tree
// nodes with one identity together. Samples that name a node absent from
// the exported tree stay in the totals, with unresolved_sample_count and
// unresolved_sampled_bytes, and make the table incomplete. Keys are
// literal, duplicate fields fail, and children must be arrays of nodes.
//
// The document is streamed once; memory grows with the call-tree nodes
// and distinct sampled node ids, not with the samples.
//
// It imports formats, evidence, jsonscan, param, table, unit, and v8frame
// for the callFrame reading it shares with the other V8 profile decoder.
package v8heap

import (
	"bytes"
	"context"
	"fmt"
	"math"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/v8frame"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Version is the decoder version recorded in table headers.
const Version = "1"

// Limit names.
const (
	LimitNodes   = "max_nodes"
	LimitSamples = "max_samples"
	LimitDepth   = "max_depth"
)

// Spec is the v8-heapprofile format.
var Spec = withStacks(formats.MemoryProfile(formats.Spec{
	Name:     "v8-heapprofile",
	Title:    "V8 sampling heap profile",
	Suffixes: []string{".heapprofile"},
	Sniff:    sniff,
	Limits: []formats.Limit{
		{Name: formats.LimitBytes, Default: 16 << 30, Unit: "bytes", Doc: "bytes in the profile file"},
		{Name: LimitNodes, Default: 5_000_000, Unit: "count", Doc: "call-tree nodes"},
		{Name: LimitSamples, Default: 2_000_000_000, Unit: "samples", Doc: "entries in samples"},
		{Name: LimitDepth, Default: 10_000, Unit: "count", Doc: "levels of the call tree"},
		{Name: formats.LimitToken, Default: 64 << 20, Unit: "bytes", Doc: "bytes in one JSON string or number"},
	},
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "node --heap-prof / Chrome DevTools (allocation sampling)",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
}))

// sniff recognizes a heap profile object: a call-tree head whose nodes
// carry selfSize.
func sniff(prefix []byte) formats.Verdict {
	return formats.SniffObject(prefix, false, func(p []byte) formats.Verdict {
		switch {
		case !bytes.Contains(p, []byte(`"head"`)) || !bytes.Contains(p, []byte(`"callFrame"`)) || !bytes.Contains(p, []byte(`"selfSize"`)):
			return formats.NeedMore
		case bytes.Contains(p, []byte(`"traceEvents"`)) || bytes.Contains(p, []byte(`"timeDeltas"`)):
			return formats.No
		}
		return formats.Yes
	})
}

// CountUnit is the unit of the count columns: sample records.
const CountUnit = unit.Samples

// callFrame is a node's frame identity.
type callFrame = v8frame.CallFrame

type node struct {
	frame    int32
	parent   int32
	selfSize int64
	id       int64
	hasID    bool
}

type sampled struct {
	n     int64
	bytes int64 // sum of the samples' sizes
}

type profile struct {
	nodes    []node
	frames   []callFrame
	frameIdx map[callFrame]int32
	byID     map[int64]int32
	samples  map[int64]*sampled // by node id
	nSamples int64
	sizeSum  int64
	hasHead  bool
	hasSamps bool
	in       *formats.Input
	maxNodes int64
	maxDepth int
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	depth := int(in.Limit(LimitDepth))
	s := in.JSONScanner(in.R, 2*depth+8, formats.LimitToken)
	p := &profile{frameIdx: map[callFrame]int32{}, byID: map[int64]int32{}, samples: map[int64]*sampled{},
		in: in, maxNodes: in.Limit(LimitNodes), maxDepth: depth}
	w := &jsonscan.Walker{S: s}
	err := w.Document("a V8 heap profile", func(key []byte) error {
		switch string(key) {
		case "head":
			p.hasHead = true
			tok, err := w.Value()
			if err != nil {
				return err
			}
			return p.parseNode(ctx, w, tok, -1, 0)
		case "samples":
			p.hasSamps = true
			return p.parseSamples(ctx, w)
		}
		return w.SkipValue()
	})
	if err != nil {
		return err
	}
	if !p.hasHead {
		return &evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "not a V8 heap profile: no head node"}
	}
	return p.emit(in, out)
}

func (p *profile) parseNode(ctx context.Context, w *jsonscan.Walker, start jsonscan.Token, parent int32, depth int) error {
	if start.Kind != jsonscan.ObjectStart {
		return w.S.Errorf(start, "a call-tree node must be an object, found %s", start.Kind)
	}
	if depth >= p.maxDepth {
		return p.in.ExceededAt(LimitDepth, nil, start.Offset)
	}
	if int64(len(p.nodes)) >= p.maxNodes {
		return p.in.ExceededAt(LimitNodes, nil, start.Offset)
	}
	if len(p.nodes)&0xFFFF == 0 && ctx.Err() != nil {
		return ctx.Err()
	}
	i := int32(len(p.nodes))
	p.nodes = append(p.nodes, node{parent: parent, frame: -1})
	var haveFrame, haveSize bool
	err := w.Members(start, "a call-tree node", func(key []byte) error {
		switch string(key) {
		case "callFrame":
			cf, err := v8frame.Parse(w)
			if err != nil {
				return err
			}
			fi, ok := p.frameIdx[cf]
			if !ok {
				fi = int32(len(p.frames))
				p.frames = append(p.frames, cf)
				p.frameIdx[cf] = fi
			}
			p.nodes[i].frame = fi
			haveFrame = true
		case "selfSize":
			tok, err := w.Value()
			if err != nil {
				return err
			}
			n, err := wholeBytes(w, tok, "selfSize")
			if err != nil {
				return err
			}
			p.nodes[i].selfSize = n
			haveSize = true
		case "id":
			id, err := w.Int("id")
			if err != nil {
				return err
			}
			p.nodes[i].id, p.nodes[i].hasID = id, true
		case "children":
			return w.Array("children", func(_ int, el jsonscan.Token) error {
				return p.parseNode(ctx, w, el, i, depth+1)
			})
		default:
			return w.SkipValue()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !haveFrame {
		return w.S.Errorf(start, "a call-tree node has no callFrame")
	}
	if !haveSize {
		return w.S.Errorf(start, "a call-tree node has no selfSize")
	}
	if n := &p.nodes[i]; n.hasID {
		if _, dup := p.byID[n.id]; dup {
			return w.S.Errorf(start, "node id %d appears twice", n.id)
		}
		p.byID[n.id] = i
	}
	return nil
}

// wholeBytes reads a byte count: a non-negative whole number (V8 writes
// integers; the protocol types them as numbers).
func wholeBytes(w *jsonscan.Walker, tok jsonscan.Token, what string) (int64, error) {
	if n, err := w.IntOf(tok, what); err == nil {
		if n < 0 {
			return 0, w.S.Errorf(tok, "%s must not be negative, found %d", what, n)
		}
		return n, nil
	}
	f, err := w.FloatOf(tok, what)
	if err != nil {
		return 0, err
	}
	if f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return 0, w.S.Errorf(tok, "%s must be a whole number of bytes, found %s", what, tok.Bytes)
	}
	return int64(f), nil
}

func (p *profile) parseSamples(ctx context.Context, w *jsonscan.Walker) error {
	max := p.in.Limit(LimitSamples)
	return w.Array("samples", func(i int, el jsonscan.Token) error {
		if el.Kind != jsonscan.ObjectStart {
			return w.S.Errorf(el, "samples[%d] must be an object, found %s", i, el.Kind)
		}
		p.nSamples++
		if p.nSamples > max {
			return p.in.ExceededAt(LimitSamples, nil, el.Offset)
		}
		if p.nSamples&0xFFFFF == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		var size, id int64
		var haveSize, haveID bool
		err := w.Members(el, "a sample", func(key []byte) error {
			switch string(key) {
			case "size":
				tok, err := w.Value()
				if err != nil {
					return err
				}
				size, err = wholeBytes(w, tok, "samples[].size")
				haveSize = true
				return err
			case "nodeId":
				var err error
				id, err = w.Int("samples[].nodeId")
				haveID = true
				return err
			}
			return w.SkipValue()
		})
		if err != nil {
			return err
		}
		if !haveSize || !haveID {
			return w.S.Errorf(el, "samples[%d] lacks size or nodeId", i)
		}
		sm := p.samples[id]
		if sm == nil {
			sm = &sampled{}
			p.samples[id] = sm
		}
		sm.n++
		sm.bytes += size
		p.sizeSum += size
		return nil
	})
}

// symbolization: producer-made nodes are synthetic; a frame with neither
// a URL nor a line (Node 20 writes user module frames so, and V8's native
// builtins) is unresolved: its location is unknown, whatever its name.
func symbolization(cf callFrame) string {
	switch {
	case cf.Synthetic():
		return table.Synthetic
	case cf.URL == "" && cf.Line < 0:
		return table.Unresolved
	case cf.Function == "":
		return table.Anonymous
	}
	return table.Symbolized
}

func (p *profile) emit(in *formats.Input, out formats.Sink) error {
	// Samples resolved against the tree; the rest stay in the totals.
	counts := make([]int64, len(p.nodes))
	var unresolvedN, unresolvedB int64
	for id, sm := range p.samples {
		if i, ok := p.byID[id]; ok {
			counts[i] += sm.n
		} else {
			unresolvedN += sm.n
			unresolvedB += sm.bytes
		}
	}
	// Nodes are in pre-order: children after their parent.
	subBytes := make([]int64, len(p.nodes))
	subCount := make([]int64, len(p.nodes))
	var treeBytes int64
	for i := len(p.nodes) - 1; i >= 0; i-- {
		n := &p.nodes[i]
		subBytes[i] += n.selfSize
		subCount[i] += counts[i]
		treeBytes += n.selfSize
		if n.parent >= 0 {
			subBytes[n.parent] += subBytes[i]
			subCount[n.parent] += subCount[i]
		}
	}
	nf := len(p.frames)
	selfB, selfN := make([]int64, nf), make([]int64, nf)
	inclB, inclN := make([]int64, nf), make([]int64, nf)
	onPath := make([]int32, nf)
	// A walk in pre-order with the path of ancestors: a frame's subtree
	// counts at its outermost occurrence on the path only, so recursion
	// counts once.
	var path []int32
	for i := range p.nodes {
		n := &p.nodes[i]
		for len(path) > 0 && path[len(path)-1] != n.parent {
			onPath[p.nodes[path[len(path)-1]].frame]--
			path = path[:len(path)-1]
		}
		selfB[n.frame] += n.selfSize
		selfN[n.frame] += counts[i]
		if onPath[n.frame] == 0 {
			inclB[n.frame] += subBytes[i]
			inclN[n.frame] += subCount[i]
		}
		onPath[n.frame]++
		path = append(path, int32(i))
	}

	s := &evidence.Summary{RowsObserved: int64(nf), Complete: true, Metrics: map[string]evidence.Metric{
		table.MetricPopulationBytes: {Value: treeBytes, Unit: unit.Bytes},
		"nodes":                     {Value: len(p.nodes), Unit: "count"},
		"frames":                    {Value: nf, Unit: "count"},
	}, Limitations: []string{
		"bytes are V8's sampled estimates (selfSize) of the memory live when the profile was taken, not exact allocations",
		"source maps are not resolved",
	}}
	if p.hasSamps {
		s.Metrics[table.MetricPopulationCount] = evidence.Metric{Value: p.nSamples, Unit: CountUnit}
		s.Metrics["samples"] = evidence.Metric{Value: p.nSamples, Unit: CountUnit}
		s.Metrics["sampled_bytes"] = evidence.Metric{Value: p.sizeSum, Unit: unit.Bytes}
		s.Metrics["unresolved_sample_count"] = evidence.Metric{Value: unresolvedN, Unit: CountUnit}
		s.Metrics["unresolved_sampled_bytes"] = evidence.Metric{Value: unresolvedB, Unit: unit.Bytes}
		if unresolvedN > 0 {
			s.Complete = false
			s.Limit(fmt.Sprintf("%d samples (%d sampled bytes) name call-tree nodes the profile does not export: they are in the totals (samples, sampled_bytes) but attributed to no frame, so frame counts cover %d of %d samples",
				unresolvedN, unresolvedB, p.nSamples-unresolvedN, p.nSamples))
		}
	} else {
		s.Limit("the profile has no samples array (Node before 12): sample counts are not recorded and the count columns are null")
	}
	if !out.Wants(table.MemoryFrames.Schema) {
		return nil
	}
	tw, err := out.Begin(table.MemoryFrames.HeaderBased(CountUnit, 0))
	if err != nil {
		return err
	}
	rows := make([]table.MemoryFrame, nf)
	vals := in.Values()
	var buf []byte
	count := func(n int64) table.Null[int64] {
		if !p.hasSamps {
			return table.Null[int64]{}
		}
		return table.Some(n)
	}
	for fi, cf := range p.frames {
		var id string
		id, buf = cf.ID(buf)
		rows[fi] = table.MemoryFrame{
			FrameSite: table.FrameSite{FrameID: id, Function: vals.Bound(cf.Function), File: table.NonEmpty(vals.Bound(cf.URL)),
				Line: cf.Line, Column: cf.Column, Symbolization: symbolization(cf)},
			Population: table.PopulationSampled,
			SelfBytes:  selfB[fi], InclusiveBytes: inclB[fi],
			SelfCount: count(selfN[fi]), InclusiveCount: count(inclN[fi]),
		}
		if err := tw.Row(&rows[fi]); err != nil {
			return err
		}
	}
	vals.Summarize(s)
	if err := tw.End(s); err != nil {
		return err
	}
	return p.emitStacks(in, out, counts, s) // stacks.go
}
