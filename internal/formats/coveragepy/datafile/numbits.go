package datafile

import "math/bits"

// numbitsMax returns the highest number a coverage.py numbits blob names,
// or -1 when it names none: bit i of byte j is the number 8*j+i, and
// trailing zero bytes name nothing.
func numbitsMax(b []byte) int64 {
	last := len(b) - 1
	for last >= 0 && b[last] == 0 {
		last--
	}
	if last < 0 {
		return -1
	}
	return int64(last)*8 + int64(bits.Len8(b[last])) - 1
}
