package perfetto

// Interned strings. A trace never says that a sequence ended, so every
// sequence's interned state is kept to the end, and a long trace has
// thousands of sequences that intern the same names (a writer per thread,
// Chrome's startup trace repeated). A sequence's tables therefore map an
// iid to an index in one decode-wide pool of distinct strings, in a dense
// slice where iids are small (producers number them from 1): memory
// follows the distinct strings, and a sequence costs a few words per iid.

// strPool is the decode's distinct interned strings.
type strPool struct {
	idx  map[string]uint32
	strs []string
}

func (p *strPool) id(b []byte) uint32 {
	if i, ok := p.idx[string(b)]; ok {
		return i
	}
	if p.idx == nil {
		p.idx = map[string]uint32{}
	}
	i := uint32(len(p.strs))
	s := string(b)
	p.strs = append(p.strs, s)
	p.idx[s] = i
	return i
}

// maxDense bounds the iids kept in a table's dense slice; a table grows
// it only up to twice its size plus denseSlack past its largest iid, so
// a few large iids cost a map entry each, not a slice up to them.
const (
	maxDense   = 1 << 16
	denseSlack = 64
)

// strTable is one kind of interned string of one sequence: iid → pool
// index + 1 (0: not interned).
type strTable struct {
	dense  []uint32
	sparse map[uint64]uint32
}

func (t *strTable) get(iid uint64) (uint32, bool) {
	if iid < uint64(len(t.dense)) {
		v := t.dense[iid]
		return v - 1, v != 0
	}
	v, ok := t.sparse[iid]
	return v - 1, ok
}

func (t *strTable) put(iid uint64, i uint32) {
	if iid < uint64(len(t.dense)) {
		t.dense[iid] = i + 1
		return
	}
	if iid < maxDense && iid <= uint64(2*len(t.dense)+denseSlack) {
		t.dense = append(t.dense, make([]uint32, int(iid)+1-len(t.dense))...)
		t.dense[iid] = i + 1
		return
	}
	if t.sparse == nil {
		t.sparse = map[uint64]uint32{}
	}
	t.sparse[iid] = i + 1
}

// lookup is the string sequence table t interns as iid.
func (d *decoder) lookup(t *strTable, iid uint64) (string, bool) {
	i, ok := t.get(iid)
	if !ok {
		return "", false
	}
	return d.pool.strs[i], true
}

// counterVal is an incremental counter track's running value on a
// sequence: a sequence has a few (Chrome: its thread's time), so they
// are a short list, not a map.
type counterVal struct {
	uuid uint64
	v    float64
}

// addCounter adds v to the running value of track uuid and returns it.
// Past maxCounterScan tracks the list is indexed by a map.
func (s *seqState) addCounter(uuid uint64, v float64) float64 {
	i := -1
	if s.counterIdx != nil {
		if j, ok := s.counterIdx[uuid]; ok {
			i = j
		}
	} else {
		for j := range s.counters {
			if s.counters[j].uuid == uuid {
				i = j
				break
			}
		}
	}
	if i >= 0 {
		s.counters[i].v += v
		return s.counters[i].v
	}
	zero := 0.0
	v = zero + v // as a missing map entry added: -0 becomes +0
	s.counters = append(s.counters, counterVal{uuid, v})
	if s.counterIdx != nil {
		s.counterIdx[uuid] = len(s.counters) - 1
	} else if len(s.counters) > maxCounterScan {
		s.counterIdx = make(map[uint64]int, len(s.counters))
		for j, c := range s.counters {
			s.counterIdx[c.uuid] = j
		}
	}
	return v
}

const maxCounterScan = 16

// seqClockOf is the sequence-scoped clock id of s, nil when its
// snapshots never defined it.
func (s *seqState) seqClockOf(id uint32) *seqClock {
	for i := range s.clocks {
		if s.clocks[i].id == id {
			return &s.clocks[i]
		}
	}
	return nil
}

func (s *seqState) setSeqClock(c seqClock) {
	if old := s.seqClockOf(c.id); old != nil {
		*old = c
		return
	}
	s.clocks = append(s.clocks, c)
}
