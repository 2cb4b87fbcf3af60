package datafile

import "math/bits"

// chunkBytes is how many bytes of line bits one chunk holds (512 lines).
const chunkBytes = 64

// lineSet is a set of line numbers stored as a sparse bitset: chunks of
// 512 lines, allocated only where a line is set. Memory follows the lines
// the data names, not the highest line number: a dense bitset let one arc
// at line 9,999,999 cost 1.25 MB per file.
type lineSet struct {
	chunks map[int64]*[chunkBytes]byte
}

func (s *lineSet) chunk(i int64) *[chunkBytes]byte {
	if s.chunks == nil {
		s.chunks = map[int64]*[chunkBytes]byte{}
	}
	c := s.chunks[i]
	if c == nil {
		c = new([chunkBytes]byte)
		s.chunks[i] = c
	}
	return c
}

// set adds line n (n >= 0).
func (s *lineSet) set(n int64) {
	s.chunk(n / (8 * chunkBytes))[n/8%chunkBytes] |= 1 << (n % 8)
}

// addNumbits adds the numbers of a coverage.py numbits blob (bit i of byte
// j is the number 8*j+i), byte by byte.
func (s *lineSet) addNumbits(b []byte) {
	for j, c := range b {
		if c != 0 {
			s.chunk(int64(j) / chunkBytes)[j%chunkBytes] |= c
		}
	}
}

func (s *lineSet) count() int64 {
	var n int
	for _, c := range s.chunks {
		for _, b := range c {
			n += bits.OnesCount8(b)
		}
	}
	return int64(n)
}
