package perfscript

import (
	"bytes"
	"hash/maphash"
)

// lineTable maps a callchain line's text (after its address) to a frame
// id. It is keyed by the address perf printed, already parsed while the
// line was scanned, so the hot path hashes an integer instead of the text;
// the stored text is still compared byte for byte, so equal addresses with
// different symbols (another process, another module) stay apart. Texts
// live in one arena, so the table holds no pointers for the GC to scan.
type lineTable struct {
	slots []lineSlot // open addressing, length a power of two
	arena []byte
	n     int
	seed  maphash.Seed
}

type lineSlot struct {
	key       uint64
	off, size uint32
	id        uint32
	used      bool
}

func newLineTable() *lineTable {
	return &lineTable{slots: make([]lineSlot, 64), seed: maphash.MakeSeed()}
}

// key is the address when there is one, else a hash of the text.
func (t *lineTable) key(addr uint64, hasAddr bool, text []byte) uint64 {
	if hasAddr {
		return addr
	}
	return maphash.Bytes(t.seed, text)
}

func slotOf(key uint64, mask int) int {
	return int((key * 0x9E3779B97F4A7C15) >> 32 & uint64(mask))
}

func (t *lineTable) get(key uint64, text []byte) (uint32, bool) {
	mask := len(t.slots) - 1
	for i := slotOf(key, mask); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			return 0, false
		}
		if s.key == key && int(s.size) == len(text) && bytes.Equal(t.arena[s.off:s.off+s.size], text) {
			return s.id, true
		}
	}
}

// put adds text under key. When the table holds max entries or its arena
// would pass 4 GiB it starts over: it is a cache of the frame table, so
// forgetting costs time, never accuracy.
func (t *lineTable) put(key uint64, text []byte, id uint32, max int) {
	if t.n >= max || len(t.arena)+len(text) > 1<<32-1 {
		clear(t.slots)
		t.arena = t.arena[:0]
		t.n = 0
	}
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]lineSlot, 2*len(old))
		for _, s := range old {
			if s.used {
				t.insert(s)
			}
		}
	}
	off := uint32(len(t.arena))
	t.arena = append(t.arena, text...)
	t.insert(lineSlot{key: key, off: off, size: uint32(len(text)), id: id, used: true})
	t.n++
}

func (t *lineTable) insert(s lineSlot) {
	mask := len(t.slots) - 1
	i := slotOf(s.key, mask)
	for t.slots[i].used {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}
