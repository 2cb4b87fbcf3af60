package perfetto

import (
	"errors"
	"math"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
)

// Clocks. Every row's time is on the trace's clock: BOOTTIME (6) unless
// the trace config or a clock snapshot names another primary clock
// before any time was converted (Trace Processor's rule: a primary
// named after a conversion is ignored, and counted). A packet on
// another clock is converted through the clock snapshots read so far:
// the latest snapshot whose value of that clock is at or before the
// packet's (the first snapshot for a packet before them all), the
// offset to the primary clock in that snapshot. A clock no snapshot
// relates directly to the primary one (or a packet before any snapshot)
// cannot be converted: the packet is counted, not guessed.
//
// Sequence-scoped clocks (ids 64–127) are the sequence's own, defined by
// its snapshots, with their unit multiplier and, when incremental,
// timestamps that are deltas from the sequence's previous one.

const (
	clockBoottime  = 6
	firstSeqClock  = 64
	firstNonSeqClk = 128
)

var errNested = errors.New("compressed_packets inside compressed_packets")

type pair struct{ c, p int64 } // a time on a clock and on the primary clock, in ns

type clockVal struct {
	key uint64 // clock id, or sequence<<32 | clock id for a sequence-scoped clock
	ns  int64
}

type seqClock struct {
	id          uint32
	incremental bool
	mult        int64
	last        int64 // in the clock's units
}

type clocks struct {
	primary   uint32
	converted int64 // packets whose time was converted
	named     bool  // a primary clock was named by the trace
	ignored   int64 // primary clocks named after a conversion
	snapshots [][]clockVal
	// The pairs of each clock, sorted by its time: a clock one snapshot
	// relates has one, in one (every sequence's clocks, in a trace of
	// many sequences); more go to pairs.
	one        map[uint64]pair
	pairs      map[uint64][]pair
	failed     map[uint32]int64
	overflowed int64

	// The pairs of the clock last converted, and the one used; hit is
	// false once the pairs change.
	hit      bool
	hitKey   uint64
	hitPairs []pair
	hitI     int
	hitOne   [1]pair
}

func (c *clocks) init() {
	c.primary = clockBoottime
	c.one = map[uint64]pair{}
	c.pairs = map[uint64][]pair{}
	c.failed = map[uint32]int64{}
}

// setPrimary names the trace's clock.
func (c *clocks) setPrimary(id uint32) {
	if id == 0 || id == c.primary {
		c.named = c.named || id != 0
		return
	}
	if c.converted > 0 {
		c.ignored++
		return
	}
	c.primary, c.named = id, true
	c.hit = false
	c.one = map[uint64]pair{}
	c.pairs = map[uint64][]pair{}
	for _, s := range c.snapshots {
		c.addPairs(s)
	}
}

func (c *clocks) addPairs(s []clockVal) {
	defer func() { c.hit = false }() // after the conversions it makes, before any other
	var prim int64
	found := false
	for _, v := range s {
		if v.key == uint64(c.primary) {
			prim, found = v.ns, true
		}
	}
	if !found {
		// Through a clock of this snapshot that converts already (a
		// sequence-scoped clock's snapshot names BOOTTIME, not always
		// the primary clock).
		for _, v := range s {
			if r, ok := c.convert(v.key, v.ns); ok {
				prim, found = r, true
				break
			}
		}
		if !found {
			return
		}
	}
	for _, v := range s {
		if v.key == uint64(c.primary) {
			continue
		}
		ps, ok := c.pairs[v.key]
		if !ok {
			o, ok := c.one[v.key]
			if !ok {
				c.one[v.key] = pair{v.ns, prim}
				continue
			}
			delete(c.one, v.key)
			ps = []pair{o}
		}
		i := sort.Search(len(ps), func(i int) bool { return ps[i].c > v.ns })
		ps = append(ps, pair{})
		copy(ps[i+1:], ps[i:])
		ps[i] = pair{v.ns, prim}
		c.pairs[v.key] = ps
	}
}

// convert takes ns on the clock key to the primary clock.
func (c *clocks) convert(key uint64, ns int64) (int64, bool) {
	var ps []pair
	if c.hit && c.hitKey == key {
		ps = c.hitPairs
	} else if ps = c.pairs[key]; len(ps) == 0 {
		o, ok := c.one[key]
		if !ok {
			return 0, false
		}
		c.hitOne[0] = o
		ps = c.hitOne[:]
	}
	// Packets of a clock come mostly in time order: the pair the last
	// conversion used is mostly the one again.
	i := c.hitI
	if !c.hit || c.hitKey != key || i >= len(ps) || ps[i].c > ns || i+1 < len(ps) && ps[i+1].c <= ns {
		i = max(sort.Search(len(ps), func(i int) bool { return ps[i].c > ns })-1, 0)
	}
	c.hit, c.hitKey, c.hitPairs, c.hitI = true, key, ps, i
	at := ps[i]
	r := at.p + (ns - at.c)
	if (ns > at.c) != (r > at.p) && ns != at.c {
		return 0, false
	}
	return r, true
}

// time is a packet's timestamp on the trace's clock; ok false when it
// has none or it cannot be converted (counted).
func (d *decoder) time(s *seqState, p *packet) (int64, bool) {
	if !p.hasTS {
		d.st.noTimestamp++
		return 0, false
	}
	id := p.clock
	if id == 0 {
		id = s.defClock
	}
	if id >= firstSeqClock && id < firstNonSeqClk {
		sc := s.seqClockOf(id)
		if sc == nil {
			d.clk.failed[id]++
			return 0, false
		}
		raw := int64(p.ts)
		if p.ts > math.MaxInt64 {
			d.clk.overflowed++
			return 0, false
		}
		if sc.incremental {
			raw += sc.last
			sc.last = raw
		}
		ns := raw * sc.mult
		if sc.mult != 0 && ns/sc.mult != raw {
			d.clk.overflowed++
			return 0, false
		}
		r, ok := d.clk.convert(uint64(s.id)<<32|uint64(id), ns)
		if !ok {
			d.clk.failed[id]++
			return 0, false
		}
		d.clk.converted++
		return r, true
	}
	if p.ts > math.MaxInt64 {
		d.clk.overflowed++
		return 0, false
	}
	if id == 0 || id == d.clk.primary {
		return int64(p.ts), true
	}
	r, ok := d.clk.convert(uint64(id), int64(p.ts))
	if !ok {
		d.clk.failed[id]++
		return 0, false
	}
	d.clk.converted++
	return r, true
}

// snapshot reads a ClockSnapshot.
func (d *decoder) snapshot(s *seqState, b []byte, at int64) error {
	var vals []clockVal
	var primary uint32
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch num {
		case 1:
			if typ != protowire.BytesType {
				return errWire
			}
			var id uint32
			var ts uint64
			mult := uint64(1)
			incr := false
			if err := fields(body, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
				switch num {
				case 1:
					id = uint32(v)
				case 2:
					ts = v
				case 3:
					incr = v != 0
				case 4:
					if v != 0 {
						mult = v
					}
				}
				return nil
			}, nil); err != nil {
				return err
			}
			if ts > math.MaxInt64 || mult > math.MaxInt32 {
				d.clk.overflowed++
				return nil
			}
			key := uint64(id)
			if id >= firstSeqClock && id < firstNonSeqClk {
				key |= uint64(s.id) << 32
				s.setSeqClock(seqClock{id: id, mult: int64(mult), incremental: incr, last: int64(ts)})
			}
			ns := int64(ts) * int64(mult)
			if int64(mult) != 0 && ns/int64(mult) != int64(ts) {
				d.clk.overflowed++
				return nil
			}
			vals = append(vals, clockVal{key, ns})
		case 2:
			primary = uint32(v)
		}
		return nil
	}, d.fieldErr(at, "clock_snapshot"))
	if err != nil {
		return err
	}
	d.st.snapshots++
	if primary != 0 {
		d.clk.setPrimary(primary)
	}
	// The snapshots are kept to relate them to a primary clock named
	// later, which is ignored once a time was converted: from then on
	// they are not kept (a long trace has a snapshot per sequence).
	if d.clk.converted == 0 {
		d.clk.snapshots = append(d.clk.snapshots, vals)
	} else {
		d.clk.snapshots = nil
	}
	d.clk.addPairs(vals)
	return nil
}

// traceConfig reads the primary clock the trace config names
// (builtin_data_sources.primary_trace_clock).
func (d *decoder) traceConfig(b []byte, at int64) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		if num != 20 || typ != protowire.BytesType {
			return nil
		}
		return fields(body, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
			if num == 5 && typ == protowire.VarintType && v != 0 {
				d.clk.setPrimary(uint32(v))
			}
			return nil
		}, nil)
	}, d.fieldErr(at, "trace_config"))
}
