package memray

import "encoding/binary"

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
// records, context switches), at most room of them. It stops at anything
// else, at anything it would have to refuse, and near the end of the
// buffered bytes, leaving that record untouched for the general reader
// (record), which types the failure or reads across the refill. It
// returns the number of records it applied.
//
// Frees and simple allocations, nearly every other record each, are
// applied here rather than by free and alloc (which the general reader
// uses, and which they must match): Go keeps no register across a call,
// so a call per record reloads the loop's whole state.
func (c *capture) fastRecords(s *source, room int64) (int64, error) {
	room = min(room, fastBatch)
	t := c.cur
	if t == nil {
		return 0, nil
	}
	native := c.h.nativeTraces
	// The buffer and the read position stay in locals; s.pos is written
	// back before any return or refill.
	buf, pos := s.buf[:s.end], s.pos
	var n int64
	for ; n < room; n++ {
		if len(buf)-pos < fastRoom {
			s.pos = pos
			if s.err != nil || s.fill() != nil || s.end-s.pos < fastRoom {
				return n, nil
			}
			buf, pos = s.buf[:s.end], s.pos
		}
		rec := (*[fastRoom]byte)(buf[pos:])
		b := rec[0]
		switch {
		case b&recAllocation != 0:
			i := 1
			allocator := b & 7
			if allocator == 0 {
				allocator = rec[1]
				if allocator == 0 || allocator > allocMunmap {
					s.pos = pos
					return n, nil
				}
				i = 2
			}
			idx := int(b>>3) & 0x0f
			var ptrDelta uint64
			var ok bool
			if idx == 15 {
				if ptrDelta, i, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return n, nil
				}
			}
			if allocator == allocFree || allocator == allocPymallocFree {
				pos += i
				var addr uint64
				if idx == 15 {
					addr = c.newPointer(ptrDelta)
				} else {
					addr = c.cached(idx)
				}
				// free, by hand.
				c.records++
				m := c.live
				for j := m.home(addr); ; j = (j + 1) & m.mask {
					sl := &m.slots[j]
					if sl.loc == 0 {
						break
					}
					if sl.addr == addr {
						loc, size := sl.loc-1, sl.size
						if m.slots[(j+1)&m.mask].loc == 0 {
							*sl = liveSlot{} // nothing to shift back
							m.n--
						} else {
							m.remove(j)
						}
						c.change(loc, -1, -int64(size))
						c.heap -= size
						break
					}
				}
				c.updatePeak()
				continue
			}
			var nDelta, size uint64
			if native {
				if nDelta, i, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return n, nil
				}
			}
			if size, i, ok = uvarint(rec, i); !ok {
				s.pos = pos
				return n, nil
			}
			pos += i
			var addr uint64
			if idx == 15 {
				addr = c.newPointer(ptrDelta)
			} else {
				addr = c.cached(idx)
			}
			if native {
				c.lastN += unzigzag(nDelta)
			}
			if allocator == allocMmap || allocator == allocMunmap || c.nativeRows {
				if err := c.allocation(addr, size, allocator); err != nil {
					s.pos = pos
					return n, err
				}
				continue
			}
			// alloc, by hand.
			c.countAllocation(size, allocator)
			var top uint32
			if k := len(t.stack); k > 0 {
				top = t.stack[k-1]
			}
			loc := t.loc - 1
			if t.loc == 0 || t.locNode != top {
				nd := &c.nodes[top]
				if nd.loc != 0 && nd.locTID == c.tid {
					loc = nd.loc - 1
				} else {
					var err error
					if loc, err = c.location(c.tid, top); err != nil {
						s.pos = pos
						return n, err
					}
				}
				t.locNode, t.loc = top, loc+1
			}
			m := c.live
			if 2*(m.n+1) > len(m.slots) {
				m.resize(2 * len(m.slots))
			}
			for j := m.home(addr); ; j = (j + 1) & m.mask {
				sl := &m.slots[j]
				if sl.loc == 0 {
					*sl = liveSlot{addr: addr, size: size, loc: loc + 1}
					m.n++
					break
				}
				if sl.addr == addr {
					// As alloc: the replaced allocation is forgotten.
					old, oldSize := sl.loc-1, sl.size
					*sl = liveSlot{addr: addr, size: size, loc: loc + 1}
					c.change(old, -1, -int64(oldSize))
					break
				}
			}
			c.change(loc, 1, int64(size))
			c.heap += size
			c.updatePeak()
		case b&recFramePush != 0:
			code, i, ok := uvarint(rec, 1)
			if !ok {
				s.pos = pos
				return n, nil
			}
			off, i, ok := uvarint(rec, i)
			if !ok {
				s.pos = pos
				return n, nil
			}
			pos += i
			var parent uint32
			if k := len(t.stack); k > 0 {
				parent = t.stack[k-1]
			}
			f := pyFrame{code: code, offset: int32(int64(unzigzag(off))), entry: b&1 != 0}
			node, ok := c.pushes.get(parent, f)
			if !ok {
				var err error
				if node, err = c.push(parent, f); err != nil {
					s.pos = pos
					return n, err
				}
			}
			t.stack = append(t.stack, node)
		case b&recObject != 0:
			i := 1
			idx := (b >> 1) & 0x0f
			var ptrDelta, nDelta uint64
			var ok bool
			if idx == 15 {
				if ptrDelta, i, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return n, nil
				}
			}
			if native && b&1 != 0 {
				if nDelta, i, ok = uvarint(rec, i); !ok {
					s.pos = pos
					return n, nil
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
		case b&recFramePop != 0:
			k := int(b&0x0f) + 1
			if k > len(t.stack) {
				s.pos = pos
				return n, nil
			}
			pos++
			t.stack = t.stack[:len(t.stack)-k]
		case b == recContextSwitch:
			pos += 9
			c.contextSwitch(binary.LittleEndian.Uint64(rec[1:9]))
			t = c.cur
		default:
			s.pos = pos
			return n, nil
		}
	}
	s.pos = pos
	return n, nil
}

// cached is entry idx (0 the newest) of the pointer cache.
func (c *capture) cached(idx int) uint64 {
	j := c.head + idx
	if j >= 15 {
		j -= 15
	}
	return c.cache[j]
}

// uvarint decodes the LEB128 varint at buf[i]; ok is false for one
// longer than 64 bits. The records' indexes stay far below fastRoom (the
// longest varint is 10 bytes, a record holds at most three), so the mask
// never wraps; it spares the bounds checks. It makes no call, so that it
// is inlined.
func uvarint(buf *[fastRoom]byte, i int) (v uint64, next int, ok bool) {
	b := buf[i&(fastRoom-1)]
	if b < 0x80 {
		return uint64(b), i + 1, true
	}
	v = uint64(b & 0x7f)
	for k := 1; k < 10; k++ {
		b = buf[(i+k)&(fastRoom-1)]
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
