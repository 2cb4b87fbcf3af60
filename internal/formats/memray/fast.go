package memray

// fastRoom is how many buffered bytes the fast path wants before a
// record: more than the longest record it decodes (an allocation with a
// new address, a native trace index and a size: 32 bytes), so it reads
// from the buffer without bounds or refills.
const fastRoom = 64

// fastBatch bounds the records of one fast call, so the caller checks
// the context between batches.
const fastBatch = 1 << 16

// fastRecords decodes, straight from the buffer, the records that make
// up nearly all of a capture (allocations, frame pushes and pops, object
// records), at most room of them. It stops at anything else, at anything
// it would have to refuse or that needs more than the tables it reads
// (a new location or tree node, a table or stack to grow, a context
// switch), and at the end of the buffered bytes, leaving that record
// untouched for the general reader (record), which types the failure,
// grows the state or reads across the refill. It returns the number of
// records it applied.
func (c *capture) fastRecords(s *source, room int64) (int64, error) {
	room = min(room, fastBatch)
	var n int64
	for n < room {
		if s.end-s.pos < fastRoom {
			if s.err != nil || s.fill() != nil || s.end-s.pos < fastRoom {
				return n, nil
			}
		}
		k, more, err := c.fastRun(s, room-n)
		n += k
		if err != nil || !more {
			return n, err
		}
	}
	return n, nil
}

// fastRun is fastRecords within the buffered bytes; more is whether it
// stopped only because fewer than fastRoom of them are left.
//
// It makes no call but one (allocations with native rows): Go keeps no
// register across a call, and a call on the way of every record reloaded
// the loop's whole state. So frees and simple allocations are applied
// here rather than by free and alloc (which the general reader uses, and
// which they must match), and all else that would call stops the run
// before changing anything.
func (c *capture) fastRun(s *source, room int64) (n int64, more bool, err error) {
	t := c.cur
	if t == nil {
		return 0, false, nil
	}
	native := c.h.nativeTraces
	// Few values live across the loop, so that they stay in registers:
	// the buffer as one pointer, the records left to room, not a count.
	buf, pos := (*[sourceSize]byte)(s.buf), s.pos
	lim := s.end - fastRoom
	left := room
	for ; left > 0; left-- {
		if pos > lim {
			s.pos = pos
			return room - left, true, nil
		}
		rec := (*[fastRoom]byte)(buf[pos : pos+fastRoom])
		b := rec[0]
		var addr, ptrDelta uint64
		var i, idx int
		var allocator byte
		// One jump on the record's kind, which the stream makes hard to
		// predict, instead of a branch on each of its bits.
		switch recKinds[b] {
		case kindFree:
			pos++
			addr = c.cached(int(b>>3) & 0x0f)
			goto free
		case kindFreeNew:
			d, j := varint2(rec, 1)
			if j == 1 {
				var ok bool
				if d, j, ok = uvarint(rec, 1); !ok {
					s.pos = pos
					return room - left, false, nil
				}
			}
			pos += j
			addr = c.newPointer(d)
			goto free
		case kindAlloc:
			i, allocator, idx = 1, b&7, int(b>>3)&0x0f
			goto alloc
		case kindAllocNew:
			var j int
			if ptrDelta, j = varint2(rec, 1); j == 1 {
				var ok bool
				if ptrDelta, j, ok = uvarint(rec, 1); !ok {
					s.pos = pos
					return room - left, false, nil
				}
			}
			i, allocator, idx = j, b&7, 15
			goto alloc
		case kindAllocWide:
			allocator = rec[1]
			if allocator == 0 || allocator >= allocMmap || allocator == allocFree || allocator == allocPymallocFree {
				// Wide frees are rare: the general reader's.
				s.pos = pos
				return room - left, false, nil
			}
			i, idx = 2, int(b>>3)&0x0f
			if idx == 15 {
				var j int
				if ptrDelta, j = varint2(rec, 2); j == 2 {
					var ok bool
					if ptrDelta, j, ok = uvarint(rec, 2); !ok {
						s.pos = pos
						return room - left, false, nil
					}
				}
				i = j
			}
			goto alloc
		case kindPush:
			i, j := 1, 0
			var code, off uint64
			var ok bool
			if code, j = varint2(rec, i); j == i {
				if code, j, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return room - left, false, nil
				}
			}
			i = j
			if off, j = varint2(rec, i); j == i {
				if off, j, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return room - left, false, nil
				}
			}
			i = j
			k := len(t.stack)
			var parent uint32
			if k > 0 {
				parent = t.stack[k-1]
			}
			f := pyFrame{code: code, offset: int32(int64(unzigzag(off))), entry: b&1 != 0}
			// pushMap.get, by hand; a new node or a full stack is the
			// general reader's.
			pm := c.pushes
			var node uint32
			for j := pm.home(parent, f); ; j = (j + 1) & pm.mask {
				sl := &pm.slots[j]
				if sl.node == 0 {
					break
				}
				if sl.code == f.code && sl.parent == parent && sl.offset == f.offset && sl.entry == f.entry {
					node = sl.node
					break
				}
			}
			if node == 0 || k == cap(t.stack) {
				s.pos = pos
				return room - left, false, nil
			}
			pos += i
			t.stack = t.stack[:k+1]
			t.stack[k] = node - 1
		case kindObject:
			i := 1
			idx := (b >> 1) & 0x0f
			var ptrDelta, nDelta uint64
			var ok bool
			if idx == 15 {
				if ptrDelta, i, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return room - left, false, nil
				}
			}
			if native && b&1 != 0 {
				if nDelta, i, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return room - left, false, nil
				}
			}
			pos += i
			if idx == 15 {
				c.newPointer(ptrDelta)
			}
			if native && b&1 != 0 {
				c.lastN += unzigzag(nDelta)
			}
			c.objects++
		case kindPop:
			k := int(b&0x0f) + 1
			if k > len(t.stack) {
				s.pos = pos
				return room - left, false, nil
			}
			pos++
			t.stack = t.stack[:len(t.stack)-k]
		default:
			s.pos = pos
			return room - left, false, nil
		}
		continue
	free:
		{
			// liveMap.take, by hand.
			c.records++
			m := c.live
			key := liveKey(addr)
			for j := m.home(key); ; j = (j + 1) & m.mask {
				k := m.keys[j]
				if k == 0 {
					break
				}
				if k == key {
					v := m.vals[j]
					// liveMap.remove, by hand (the loop is too big for
					// the compiler to inline it).
					m.n--
				shift:
					for {
						m.keys[j] = 0
						for i := (j + 1) & m.mask; ; i = (i + 1) & m.mask {
							k := m.keys[i]
							if k == 0 {
								break shift
							}
							if home := m.home(k); (i-home)&m.mask >= (i-j)&m.mask {
								m.keys[j], m.vals[j] = k, m.vals[i]
								j = i
								break
							}
						}
					}
					c.change(v.loc, -1, -int64(v.size))
					c.heap -= v.size
					break
				}
			}
			c.updatePeak()
		}
		continue
	alloc:
		{
			var j int
			var ok bool
			var nDelta, size uint64
			if native {
				if nDelta, i, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return room - left, false, nil
				}
			}
			if size, j = varint2(rec, i); j == i {
				if size, j, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return room - left, false, nil
				}
			}
			i = j
			if c.nativeRows {
				// Native rows key locations by native trace too: alloc
				// does, in the one call of the run (it happens only with
				// them).
				pos += i
				if idx == 15 {
					addr = c.newPointer(ptrDelta)
				} else {
					addr = c.cached(idx)
				}
				c.lastN += unzigzag(nDelta)
				if err := c.alloc(addr, size, allocator); err != nil {
					s.pos = pos
					return room - left, false, err
				}
				continue
			}
			// alloc, by hand, once it is known to need nothing new: the
			// location is the thread's or its top node's last one, and
			// the live table has room.
			var top uint32
			if k := len(t.stack); k > 0 {
				top = t.stack[k-1]
			}
			loc := t.loc - 1
			if t.loc == 0 || t.locNode != top {
				nd := &c.nodes[top]
				if nd.loc == 0 || nd.locTID != c.tid {
					s.pos = pos
					return room - left, false, nil
				}
				loc = nd.loc - 1
				t.locNode, t.loc = top, loc+1
			}
			m := c.live
			if m.full() {
				s.pos = pos
				return room - left, false, nil
			}
			pos += i
			if idx == 15 {
				addr = c.newPointer(ptrDelta)
			} else {
				addr = c.cached(idx)
			}
			if native {
				c.lastN += unzigzag(nDelta)
			}
			c.countAllocation(size, allocator)
			// liveMap.put, by hand.
			key := liveKey(addr)
			for j := m.home(key); ; j = (j + 1) & m.mask {
				k := m.keys[j]
				if k == 0 {
					m.keys[j], m.vals[j] = key, liveVal{size: size, loc: loc}
					m.n++
					break
				}
				if k == key {
					// As alloc: the replaced allocation is forgotten.
					old := m.vals[j]
					m.vals[j] = liveVal{size: size, loc: loc}
					c.change(old.loc, -1, -int64(old.size))
					break
				}
			}
			c.change(loc, 1, int64(size))
			c.heap += size
			c.updatePeak()
		}
	}
	s.pos = pos
	return room - left, false, nil
}

// The kinds of record the fast run tells apart by the type byte: frees
// and allocations with a cached address or a new one, allocations whose
// allocator takes a byte of its own, frame pushes, objects, frame pops.
// There are eight, so that the switch on them compiles to a jump table.
const (
	kindOther = iota
	kindFree
	kindFreeNew
	kindAlloc
	kindAllocNew
	kindAllocWide
	kindPush
	kindObject
	kindPop
)

// recKinds is the kind of each type byte, as record tells them apart.
var recKinds = func() (k [256]uint8) {
	for b := range k {
		switch {
		case b&recAllocation != 0:
			allocator, idx := b&7, b>>3&0x0f
			switch {
			case allocator == 0:
				k[b] = kindAllocWide
			case allocator == allocFree || allocator == allocPymallocFree:
				k[b] = kindFree
				if idx == 15 {
					k[b] = kindFreeNew
				}
			default:
				k[b] = kindAlloc
				if idx == 15 {
					k[b] = kindAllocNew
				}
			}
		case b&recFramePush != 0:
			k[b] = kindPush
		case b&recObject != 0:
			k[b] = kindObject
		case b&recFramePop != 0:
			k[b] = kindPop
		}
	}
	return k
}()

// cached is entry idx (0 the newest) of the pointer cache.
func (c *capture) cached(idx int) uint64 {
	return c.cache[(c.head+idx)&31]
}

// varint2 decodes a varint of one or two bytes at buf[i], or returns
// next == i for a longer one. The records' indexes stay far below
// fastRoom (the longest varint is 10 bytes, a record holds at most
// three), so the masks never wrap; they spare the bounds checks.
func varint2(buf *[fastRoom]byte, i int) (v uint64, next int) {
	b0, b1 := uint64(buf[i&(fastRoom-1)]), uint64(buf[(i+1)&(fastRoom-1)])
	if b0&b1 >= 0x80 {
		return 0, i
	}
	two := b0 >> 7 // 1 when b0 continues into b1
	return b0&0x7f | b1<<7&-two, i + 1 + int(two)
}

// uvarint decodes the LEB128 varint at buf[i]; ok is false for one
// longer than 64 bits. It makes no call, so that it is inlined.
func uvarint(buf *[fastRoom]byte, i int) (v uint64, next int, ok bool) {
	for k := 0; k < 10; k++ {
		b := buf[(i+k)&(fastRoom-1)]
		v |= uint64(b&0x7f) << (7 * k)
		if b < 0x80 {
			return v, i + k + 1, true
		}
	}
	return 0, i, false
}

// unzigzag is a zig-zag encoded delta as the wrapping unsigned addend
// memray's writeIntegralDelta meant.
func unzigzag(u uint64) uint64 { return uint64(int64(u>>1) ^ -int64(u&1)) }
