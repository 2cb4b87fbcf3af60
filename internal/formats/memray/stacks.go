package memray

import (
	"encoding/binary"
	"maps"
	"slices"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
)

// memStacks collects memory.stacks: the population's distinct stacks of
// sites per thread, as emit attributes them to memory.frames.
type memStacks struct {
	index map[string]int
	order []memStack
	key   []byte
}

type memStack struct {
	sites []int32 // leaf first
	tid   uint64
	u     usage
}

// newMemStacks is nil when memory.stacks is not wanted.
func newMemStacks(out formats.Sink) *memStacks {
	if !out.Wants(table.MemoryStacks.Schema) {
		return nil
	}
	return &memStacks{index: map[string]int{}}
}

// add counts one location's usage on its stack of sites, leaf first.
func (m *memStacks) add(stack []int32, tid uint64, u usage) {
	if m == nil {
		return
	}
	m.key = binary.LittleEndian.AppendUint64(m.key[:0], tid)
	for _, s := range stack {
		m.key = binary.LittleEndian.AppendUint32(m.key, uint32(s))
	}
	if j, ok := m.index[string(m.key)]; ok {
		m.order[j].u.bytes += u.bytes
		m.order[j].u.count += u.count
		return
	}
	m.index[string(m.key)] = len(m.order)
	m.order = append(m.order, memStack{sites: slices.Clone(stack), tid: tid, u: u})
}

// emit writes the stacks; frames is the memory.frames summary they share.
func (m *memStacks) emit(c *capture, in *formats.Input, out formats.Sink, ids []string, frames *evidence.Summary) error {
	if m == nil {
		return nil
	}
	sw, err := out.Begin(table.MemoryStacks.Header(CountUnit))
	if err != nil {
		return err
	}
	vals := in.Values()
	labels := map[uint64]table.Null[string]{}
	for _, st := range m.order {
		lab, ok := labels[st.tid]
		if !ok {
			lab = table.Some(vals.Bound(c.threadLabel(st.tid)))
			labels[st.tid] = lab
		}
		row := table.MemoryStack{Frames: make([]string, len(st.sites)), Thread: lab, Bytes: st.u.bytes, Count: table.Some(st.u.count)}
		for i, s := range st.sites {
			row.Frames[len(st.sites)-1-i] = ids[s]
		}
		if err := sw.Row(&row); err != nil {
			return err
		}
	}
	s := *frames
	s.RowsObserved = int64(len(m.order))
	s.Metrics = maps.Clone(frames.Metrics)
	s.Coverage = maps.Clone(frames.Coverage)
	s.Limitations = slices.Clone(frames.Limitations)
	return sw.End(&s)
}

// withStacks adds memory.stacks to a memory-profile spec's tables.
func withStacks(s *formats.Spec) *formats.Spec {
	s.Tables = append(slices.Clone(s.Tables), table.MemoryStacks.Schema)
	return s
}
