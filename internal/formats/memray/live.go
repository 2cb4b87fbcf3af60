package memray

import "math/bits"

// liveMap maps the address of each live allocation to its location and
// size: the one structure that grows with the live heap rather than with
// the distinct locations. Open addressing with linear probing and
// backward-shift deletion keeps it flat and fast; the record stream
// inserts or deletes on nearly every record. The probes read only keys,
// 8 bytes a slot, so that they stay in cache; the values are read on a
// hit.
type liveMap struct {
	keys  []uint64 // liveKey(addr); 0 is an empty slot
	vals  []liveVal
	n     int
	mask  uint64
	shift uint // 64 - log2(len(keys))
}

type liveVal struct {
	size uint64
	loc  uint32
}

// liveKey is addr as a key: addresses are multiples of 8 (the stream
// stores them >>3), so setting the low bit keeps them distinct and never
// 0, the empty slot.
func liveKey(addr uint64) uint64 { return addr | 1 }

func newLiveMap() *liveMap {
	m := &liveMap{}
	m.resize(1 << 12)
	return m
}

// home is a key's first slot, by Fibonacci hashing: it scatters the
// neighbouring blocks pymalloc hands out, which a hash keeping neighbours
// together packed into long runs for frees to shift back. The shift is
// masked so that it compiles to one instruction (it is never 64).
func (m *liveMap) home(key uint64) uint64 {
	return (key >> 3) * 0x9E3779B97F4A7C15 >> (m.shift & 63)
}

func (m *liveMap) resize(n int) {
	keys, vals := m.keys, m.vals
	m.keys, m.vals = make([]uint64, n), make([]liveVal, n)
	m.mask = uint64(n - 1)
	m.shift = uint(64 - bits.TrailingZeros(uint(n)))
	m.n = 0
	for i, k := range keys {
		if k != 0 {
			m.put(k, vals[i])
		}
	}
}

// full is whether one more entry needs the table to grow first: it is
// kept at most a quarter full, since a probe that goes past its home
// slot is a branch the record stream makes unpredictable, and a free
// shifts back its run (half full cost a quarter more CPU time).
func (m *liveMap) full() bool { return 4*(m.n+1) > len(m.keys) }

// put sets key's entry and returns the entry it replaced, if any.
func (m *liveMap) put(key uint64, v liveVal) (old liveVal, replaced bool) {
	if m.full() {
		m.resize(2 * len(m.keys))
	}
	for i := m.home(key); ; i = (i + 1) & m.mask {
		switch m.keys[i] {
		case 0:
			m.keys[i], m.vals[i] = key, v
			m.n++
			return liveVal{}, false
		case key:
			old, m.vals[i] = m.vals[i], v
			return old, true
		}
	}
}

// take removes key's entry and returns it, if any.
func (m *liveMap) take(key uint64) (liveVal, bool) {
	for i := m.home(key); ; i = (i + 1) & m.mask {
		switch m.keys[i] {
		case 0:
			return liveVal{}, false
		case key:
			v := m.vals[i]
			m.remove(i)
			return v, true
		}
	}
}

// remove empties slot i and shifts back the entries of its probe run.
func (m *liveMap) remove(i uint64) {
	m.n--
	for {
		m.keys[i] = 0
		j := i
		for {
			j = (j + 1) & m.mask
			k := m.keys[j]
			if k == 0 {
				return
			}
			// k may move back to i when i is no nearer to j than its
			// home slot is (cyclically).
			if home := m.home(k); (j-home)&m.mask >= (j-i)&m.mask {
				m.keys[i], m.vals[i] = k, m.vals[j]
				i = j
				break
			}
		}
	}
}
