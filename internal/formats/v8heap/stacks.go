package v8heap

import (
	"encoding/binary"
	"maps"
	"slices"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
)

// emitStacks writes memory.stacks from the call tree: each node that
// holds bytes (selfSize) or resolved samples is one stack, its path of
// frames from the head; nodes whose paths name the same frames pool. The
// head is left out when it is V8's own (root), which stands for the whole
// profile. Samples naming no exported node are in the totals and on no
// stack, as the summary states.
func (p *profile) emitStacks(in *formats.Input, out formats.Sink, counts []int64, frames *evidence.Summary) error {
	if !out.Wants(table.MemoryStacks.Schema) {
		return nil
	}
	ids := make([]string, len(p.frames))
	var buf []byte
	for i, cf := range p.frames {
		ids[i], buf = cf.ID(buf)
	}
	type stack struct {
		frames       []int32 // root first
		bytes, count int64
	}
	var order []stack
	index := map[string]int{}
	var path []int32 // node indexes of the current node's ancestors and itself
	var key []byte
	for i := range p.nodes {
		n := &p.nodes[i]
		for len(path) > 0 && path[len(path)-1] != n.parent {
			path = path[:len(path)-1]
		}
		path = append(path, int32(i))
		if n.selfSize == 0 && counts[i] == 0 {
			continue
		}
		key = key[:0]
		var fs []int32
		for _, ni := range path {
			nd := &p.nodes[ni]
			if nd.parent < 0 && p.frames[nd.frame].Function == "(root)" && p.frames[nd.frame].URL == "" {
				continue
			}
			fs = append(fs, nd.frame)
			key = binary.LittleEndian.AppendUint32(key, uint32(nd.frame))
		}
		if len(fs) == 0 {
			continue // bytes of the (root) itself: in the total, on no stack
		}
		if j, ok := index[string(key)]; ok {
			order[j].bytes += n.selfSize
			order[j].count += counts[i]
			continue
		}
		index[string(key)] = len(order)
		order = append(order, stack{frames: slices.Clone(fs), bytes: n.selfSize, count: counts[i]})
	}
	sw, err := out.Begin(table.MemoryStacks.Header(CountUnit))
	if err != nil {
		return err
	}
	for _, st := range order {
		row := table.MemoryStack{Frames: make([]string, len(st.frames)), Bytes: st.bytes}
		for i, fi := range st.frames {
			row.Frames[i] = ids[fi]
		}
		if p.hasSamps {
			row.Count = table.Some(st.count)
		}
		if err := sw.Row(&row); err != nil {
			return err
		}
	}
	s := *frames
	s.RowsObserved = int64(len(order))
	s.Metrics = maps.Clone(frames.Metrics)
	s.Coverage = maps.Clone(frames.Coverage)
	if s.Coverage == nil {
		s.Coverage = evidence.Object{}
	}
	s.Coverage["population"] = table.PopulationSampled
	s.Limitations = slices.Clone(frames.Limitations)
	s.Limit("stacks are the call tree's paths from its head, (root) left out; bytes are the nodes' selfSize, counts their resolved sample records")
	return sw.End(&s)
}

// withStacks adds memory.stacks to a memory-profile spec's tables: the
// call tree gives whole stacks.
func withStacks(s *formats.Spec) *formats.Spec {
	s.Tables = append(slices.Clone(s.Tables), table.MemoryStacks.Schema)
	return s
}
