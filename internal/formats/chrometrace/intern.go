package chrometrace

import (
	"encoding/binary"
	"encoding/json"
)

// texts interns the short texts of events (names, categories, pids,
// tids, arg keys) in a fixed table of strings indexed by a hash of their
// bytes: a hit makes no string, a miss makes one and takes the slot. A
// map was slower (ids are mostly unique, so it grew to its bound and
// every lookup missed the CPU caches) and its growth cost allocations;
// a slot table costs one hash, one compare and bounded memory
// (textSlots × textMax bytes at most).
type texts struct {
	slot [textSlots]string
}

const (
	textSlots = 4096 // a power of two
	textMax   = 256  // longer texts are not kept
)

// get returns b as a string, the kept one when an equal text holds b's slot.
func (t *texts) get(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if n > textMax {
		return string(b)
	}
	s := &t.slot[textHash(b)&(textSlots-1)]
	if *s == string(b) { // compared without making a string
		return *s
	}
	*s = string(b)
	return *s
}

// textHash mixes the length and the first and last eight bytes: texts
// that share a slot only cost a string each, so the hash need not read
// every byte, and names that differ only in the middle are rare.
func textHash(b []byte) uint64 {
	n := len(b)
	var lo, hi uint64
	if n >= 8 {
		lo = binary.LittleEndian.Uint64(b)
		hi = binary.LittleEndian.Uint64(b[n-8:])
	} else {
		for i := range n {
			lo |= uint64(b[i]) << (8 * i)
		}
	}
	h := (lo ^ uint64(n)<<56) * 0x9E3779B97F4A7C15
	h ^= hi * 0xC2B2AE3D27D4EB4F
	return h ^ h>>29
}

// boxes keeps arg values (json.Number or string, as Scanner.Value makes
// them) already boxed, by their text: the small numbers and words that
// repeat across events (devices, streams, callback ids) then cost no
// allocation. Values are immutable, so sharing one between rows is safe.
// Numbers and strings have a table each: the string "1" is not 1.
type boxes struct {
	nums, strs boxSlots
}

type boxSlots [textSlots]box

type box struct {
	lit string
	v   any
}

// number is the json.Number of the literal b.
func (c *boxes) number(b []byte) any { return c.nums.get(b, numberOf) }

// str is the string b.
func (c *boxes) str(b []byte) any { return c.strs.get(b, stringOf) }

func numberOf(s string) any { return json.Number(s) }
func stringOf(s string) any { return s }

// get is the value mk makes of the text b, kept in b's slot.
func (t *boxSlots) get(b []byte, mk func(string) any) any {
	if len(b) > textMax {
		return mk(string(b))
	}
	s := &t[textHash(b)&(textSlots-1)]
	if s.v != nil && s.lit == string(b) {
		return s.v
	}
	s.lit = string(b)
	s.v = mk(s.lit)
	return s.v
}
