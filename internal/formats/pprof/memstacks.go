package pprof

import (
	"encoding/binary"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
)

// memStack is one distinct stack of a heap profile with the bytes and
// the objects of its samples.
type memStack struct {
	frames []int32 // leaf first
	series int32
	v      [2]int64
}

// emitMemoryStacks writes memory.stacks: a second pass over the samples,
// after aggregate has made every site, series and frame, so the stacks
// name the memory.frames rows just written. Each sample's stack is
// expanded exactly as aggregate expands it.
func (g *graph) emitMemoryStacks(in *formats.Input, p *profile.Profile, w *weights, opt aggOptions, out formats.Sink, ids []string) error {
	m := w.memory
	index := map[string]int{}
	var order []memStack
	var stack []int32
	var key []byte
	for _, s := range p.Sample {
		ser, err := g.seriesOf(s, opt.series, in)
		if err != nil {
			return err
		}
		stack = stack[:0]
		for _, loc := range s.Location {
			for _, st := range g.sitesOf(loc) {
				stack = append(stack, g.frameOf(st, ser))
			}
		}
		if len(stack) == 0 {
			continue // stated: samples_without_stack_bytes
		}
		var v [2]int64
		v[0] = s.Value[m.bytes] * m.factor
		if m.count >= 0 {
			v[1] = s.Value[m.count]
		}
		key = key[:0]
		for _, fi := range stack {
			key = binary.LittleEndian.AppendUint32(key, uint32(fi))
		}
		if j, ok := index[string(key)]; ok {
			order[j].v[0] += v[0]
			order[j].v[1] += v[1]
			continue
		}
		index[string(key)] = len(order)
		order = append(order, memStack{frames: slices.Clone(stack), series: ser, v: v})
	}
	sw, err := out.Begin(table.MemoryStacks.Header(CountUnit))
	if err != nil {
		return err
	}
	vals := in.Values()
	var rows int64
	for _, st := range order {
		if st.v == [2]int64{} {
			continue // not in the population (an inuse stack whose allocations were all freed)
		}
		rows++
		frames := make([]string, len(st.frames))
		for i, fi := range st.frames {
			frames[len(frames)-1-i] = ids[g.frames[fi].site]
		}
		row := table.MemoryStack{Frames: frames, Thread: g.seriesName(st.series, vals), Bytes: st.v[0]}
		if m.count >= 0 {
			row.Count = table.Some(st.v[1])
		}
		if err := sw.Row(&row); err != nil {
			return err
		}
	}
	return sw.End(g.summary(in, p, w, opt, rows, vals, false))
}
