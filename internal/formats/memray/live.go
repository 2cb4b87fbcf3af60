package memray

import "math/bits"

// liveMap maps the address of each live allocation to its location and
// size: the one structure that grows with the live heap rather than with
// the distinct locations. Open addressing with linear probing and
// backward-shift deletion keeps it flat and fast; the record stream
// inserts or deletes on nearly every record.
type liveMap struct {
	slots []liveSlot
	n     int
	mask  uint64
	shift uint // 64 - log2(len(slots))
}

type liveSlot struct {
	addr uint64
	size uint64
	loc  uint32 // location index + 1; 0 is an empty slot
}

func newLiveMap() *liveMap {
	m := &liveMap{}
	m.resize(1 << 12)
	return m
}

// home is addr's first slot, by Fibonacci hashing of the address (its
// low three bits are always zero): it scatters the neighbouring blocks
// pymalloc hands out, which a hash keeping neighbours together packed
// into long runs for frees to shift back. The shift is masked so that
// it compiles to one instruction (it is never 64).
func (m *liveMap) home(addr uint64) uint64 {
	return (addr >> 3) * 0x9E3779B97F4A7C15 >> (m.shift & 63)
}

func (m *liveMap) resize(n int) {
	old := m.slots
	m.slots = make([]liveSlot, n)
	m.mask = uint64(n - 1)
	m.shift = uint(64 - bits.TrailingZeros(uint(n)))
	m.n = 0
	for _, s := range old {
		if s.loc != 0 {
			m.put(s.addr, s.loc-1, s.size)
		}
	}
}

// put sets addr's entry and returns the entry it replaced, if any.
func (m *liveMap) put(addr uint64, loc uint32, size uint64) (old liveSlot, replaced bool) {
	if 2*(m.n+1) > len(m.slots) {
		m.resize(2 * len(m.slots))
	}
	i := m.home(addr)
	for {
		s := &m.slots[i]
		if s.loc == 0 {
			*s = liveSlot{addr: addr, size: size, loc: loc + 1}
			m.n++
			return liveSlot{}, false
		}
		if s.addr == addr {
			old = *s
			old.loc--
			*s = liveSlot{addr: addr, size: size, loc: loc + 1}
			return old, true
		}
		i = (i + 1) & m.mask
	}
}

// remove empties slot i and shifts back the entries of its probe run.
func (m *liveMap) remove(i uint64) {
	m.n--
	for {
		m.slots[i] = liveSlot{}
		j := i
		for {
			j = (j + 1) & m.mask
			s := m.slots[j]
			if s.loc == 0 {
				return
			}
			home := m.home(s.addr)
			// s may move back to i when i is no nearer to j than its
			// home slot is (cyclically).
			if (j-home)&m.mask >= (j-i)&m.mask {
				m.slots[i] = s
				i = j
				break
			}
		}
	}
}
