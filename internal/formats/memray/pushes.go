package memray

import "math/bits"

// pushMap maps a frame pushed on a stack (the stack's top node and the
// frame) to the node it makes: the lookup of every frame push record,
// one probe of a flat table instead of memray's two maps (the frame
// registry and the tree's children). It holds one entry per tree node.
type pushMap struct {
	slots []pushSlot
	n     int
	mask  uint64
	shift uint
}

type pushSlot struct {
	code   uint64
	parent uint32
	offset int32
	node   uint32 // node + 1; 0 is an empty slot
	entry  bool
}

func newPushMap() *pushMap {
	m := &pushMap{}
	m.resize(1 << 10)
	return m
}

func (m *pushMap) home(parent uint32, f pyFrame) uint64 {
	h := f.code ^ uint64(parent)<<32 ^ uint64(uint32(f.offset))<<1
	if f.entry {
		h ^= 1
	}
	return h * 0x9E3779B97F4A7C15 >> (m.shift & 63)
}

// get is the node of f pushed on parent, or false when none is known.
func (m *pushMap) get(parent uint32, f pyFrame) (uint32, bool) {
	for i := m.home(parent, f); ; i = (i + 1) & m.mask {
		s := &m.slots[i]
		if s.node == 0 {
			return 0, false
		}
		if s.code == f.code && s.parent == parent && s.offset == f.offset && s.entry == f.entry {
			return s.node - 1, true
		}
	}
}

// put adds the node of f pushed on parent, which get did not find.
func (m *pushMap) put(parent uint32, f pyFrame, node uint32) {
	if 2*(m.n+1) > len(m.slots) {
		m.resize(2 * len(m.slots))
	}
	i := m.home(parent, f)
	for m.slots[i].node != 0 {
		i = (i + 1) & m.mask
	}
	m.slots[i] = pushSlot{code: f.code, parent: parent, offset: f.offset, node: node + 1, entry: f.entry}
	m.n++
}

func (m *pushMap) resize(n int) {
	old := m.slots
	m.slots = make([]pushSlot, n)
	m.mask = uint64(n - 1)
	m.shift = uint(64 - bits.TrailingZeros(uint(n)))
	m.n = 0
	for _, s := range old {
		if s.node != 0 {
			m.put(s.parent, pyFrame{code: s.code, offset: s.offset, entry: s.entry}, s.node-1)
		}
	}
}
