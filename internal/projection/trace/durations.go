package trace

import (
	"encoding/binary"
	"slices"
)

// durations are a group's slice durations, kept whole for exact
// percentiles in little memory: they arrive in a small buffer, and each
// full buffer is sorted and packed as a run of varint deltas (sorted
// durations are close together, so most deltas take a byte or two, not
// the eight of an int64). The percentiles are read by merging the runs.
type durations struct {
	buf  []int64 // not yet packed, in arrival order; fewer than runLen
	runs []byte  // packed runs, each: uvarint count, zigzag varint first, uvarint deltas
	n    int64   // durations added
	max  int64
}

// runLen is the durations of one packed run: a group of fewer holds at
// most that many int64, and merging reads one run per runLen.
const runLen = 256

func (d *durations) add(v int64) {
	if d.n == 0 || v > d.max {
		d.max = v
	}
	d.n++
	d.buf = append(d.buf, v)
	if len(d.buf) == runLen {
		d.pack()
	}
}

func (d *durations) pack() {
	slices.Sort(d.buf)
	d.runs = binary.AppendUvarint(d.runs, uint64(len(d.buf)))
	d.runs = binary.AppendVarint(d.runs, d.buf[0])
	for i := 1; i < len(d.buf); i++ {
		d.runs = binary.AppendUvarint(d.runs, uint64(d.buf[i]-d.buf[i-1]))
	}
	d.buf = d.buf[:0]
}

// cursor reads one sorted run in order.
type cursor struct {
	v    int64  // the current duration
	left int    // durations after it in the run
	rest []byte // their deltas
	buf  []int64
}

func (c *cursor) next() {
	c.left--
	if c.buf != nil {
		c.buf = c.buf[1:]
		if c.left > 0 {
			c.v = c.buf[0]
		}
		return
	}
	if c.left > 0 {
		u, k := binary.Uvarint(c.rest)
		c.rest = c.rest[k:]
		c.v += int64(u)
	}
}

// percentiles are the nearest-rank p-th percentiles (ascending ps) of
// the durations; there is at least one.
func (d *durations) percentiles(ps ...int) []int64 {
	ranks := make([]int64, len(ps)) // 1-based
	for i, p := range ps {
		ranks[i] = max((d.n*int64(p)+99)/100, 1)
	}
	out := make([]int64, len(ps))
	slices.Sort(d.buf)
	if len(d.runs) == 0 {
		for i, r := range ranks {
			out[i] = d.buf[r-1]
		}
		return out
	}
	var cs []cursor
	if len(d.buf) > 0 {
		cs = append(cs, cursor{v: d.buf[0], left: len(d.buf), buf: d.buf})
	}
	for b := d.runs; len(b) > 0; {
		n, k := binary.Uvarint(b)
		b = b[k:]
		first, k := binary.Varint(b)
		b = b[k:]
		c := cursor{v: first, left: int(n), rest: b}
		for i := 1; i < int(n); i++ { // skip to the next run
			_, k := binary.Uvarint(b)
			b = b[k:]
		}
		cs = append(cs, c)
	}
	// A min-heap of the runs by their current duration: popping it walks
	// every duration in ascending order up to the highest rank asked.
	less := func(i, j int) bool { return cs[i].v < cs[j].v }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(cs) {
				return
			}
			m := l
			if r := l + 1; r < len(cs) && less(r, l) {
				m = r
			}
			if !less(m, i) {
				return
			}
			cs[i], cs[m] = cs[m], cs[i]
			i = m
		}
	}
	for i := len(cs)/2 - 1; i >= 0; i-- {
		down(i)
	}
	next := 0
	for rank := int64(1); next < len(ranks); rank++ {
		c := &cs[0]
		for next < len(ranks) && ranks[next] == rank {
			out[next] = c.v
			next++
		}
		c.next()
		if c.left == 0 {
			cs[0] = cs[len(cs)-1]
			cs = cs[:len(cs)-1]
		}
		if len(cs) > 0 {
			down(0)
		}
	}
	return out
}
