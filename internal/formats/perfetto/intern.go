package perfetto

import (
	"strings"
	"unicode/utf8"
)

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
	// texts are strs made valid UTF-8 (decoder.text), once per distinct
	// string rather than at every event naming it; bad says which were not.
	texts []string
	bad   []bool
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
	t, bad := s, !utf8.ValidString(s)
	if bad {
		t = strings.ToValidUTF8(s, "\uFFFD")
	}
	p.texts, p.bad = append(p.texts, t), append(p.bad, bad)
	p.idx[s] = i
	return i
}

// maxDense bounds the iids kept in a kind's dense slice; a slice grows
// only up to twice its size plus denseSlack past its largest iid, so a
// few large iids cost a map entry each, not a slice up to them.
const (
	maxDense   = 1 << 16
	denseSlack = 64
)

// Kinds of interned strings of a sequence.
const (
	strNames = iota
	strCats
	strAnnNames
	strAnnStrs
	strCorrStrs
	nStrKinds
)

// str is the pool index of the string of kind k that s interns as iid.
func (s *seqState) str(k int, iid uint64) (uint32, bool) {
	if t := s.strs[k]; iid < uint64(len(t)) {
		v := t[iid]
		return v - 1, v != 0
	}
	if s.rare == nil {
		return 0, false
	}
	v, ok := s.rare.sparse[k][iid]
	return v - 1, ok
}

func (s *seqState) putStr(k int, iid uint64, i uint32) {
	t := s.strs[k]
	if iid < uint64(len(t)) {
		t[iid] = i + 1
		return
	}
	if iid < maxDense && iid <= uint64(2*len(t)+denseSlack) {
		t = append(t, make([]uint32, int(iid)+1-len(t))...)
		t[iid] = i + 1
		s.strs[k] = t
		return
	}
	r := s.rareOf()
	if r.sparse[k] == nil {
		r.sparse[k] = map[uint64]uint32{}
	}
	r.sparse[k][iid] = i + 1
}

// lookupText is d.text of the string of kind k that s interns as iid:
// the same string, and the same count of invalid UTF-8.
func (d *decoder) lookupText(s *seqState, k int, iid uint64) (string, bool) {
	i, ok := s.str(k, iid)
	if !ok {
		return "", false
	}
	if d.pool.bad[i] {
		d.st.invalidUTF8++
	}
	return d.pool.texts[i], true
}

// lookup is the string of kind k that s interns as iid.
func (d *decoder) lookup(s *seqState, k int, iid uint64) (string, bool) {
	i, ok := s.str(k, iid)
	if !ok {
		return "", false
	}
	return d.pool.strs[i], true
}

func (s *seqState) defExtraDbl() []uint64 {
	if s.rare == nil {
		return nil
	}
	return s.rare.defExtraDbl
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
	var idx map[uint64]int
	if s.rare != nil {
		idx = s.rare.counterIdx
	}
	if idx != nil {
		if j, ok := idx[uuid]; ok {
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
	if idx != nil {
		idx[uuid] = len(s.counters) - 1
	} else if len(s.counters) > maxCounterScan {
		idx = make(map[uint64]int, len(s.counters))
		for j, c := range s.counters {
			idx[c.uuid] = j
		}
		s.rareOf().counterIdx = idx
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
