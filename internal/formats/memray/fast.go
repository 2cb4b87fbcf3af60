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
func (c *capture) fastRecords(s *source, room int64) (int64, error) {
	room = min(room, fastBatch)
	native := c.h.nativeTraces
	var n int64
	// The buffer and the read position stay in locals (s.pos is written
	// back before any return or refill): the record methods never read s.
	buf, pos := s.buf[:s.end], s.pos
	defer func() { s.pos = pos }()
	for n < room {
		if len(buf)-pos < fastRoom {
			s.pos = pos
			if s.err != nil || s.fill() != nil || s.end-s.pos < fastRoom {
				pos = s.pos
				return n, nil
			}
			buf, pos = s.buf[:s.end], s.pos
		}
		rec := buf[pos : pos+fastRoom : pos+fastRoom]
		b := rec[0]
		cur := c.cur
		if cur == nil {
			return n, nil
		}
		switch {
		case b&recAllocation != 0:
			i := 1
			allocator := b & 7
			if allocator == 0 {
				allocator = rec[1]
				if allocator == 0 || allocator > allocMunmap {
					return n, nil
				}
				i = 2
			}
			idx := (b >> 3) & 0x0f
			var ptrDelta, nDelta, size uint64
			var ok bool
			if idx == 15 {
				if ptrDelta, i, ok = uvarint(rec, i); !ok {
					return n, nil
				}
			}
			simpleFree := allocator == allocFree || allocator == allocPymallocFree
			if !simpleFree {
				if native {
					if nDelta, i, ok = uvarint(rec, i); !ok {
						return n, nil
					}
				}
				if size, i, ok = uvarint(rec, i); !ok {
					return n, nil
				}
			}
			pos += i
			var addr uint64
			if idx == 15 {
				addr = c.newPointer(ptrDelta)
			} else {
				j := c.head + int(idx)
				if j >= 15 {
					j -= 15
				}
				addr = c.cache[j]
			}
			if native && !simpleFree {
				c.lastN += unzigzag(nDelta)
			}
			switch {
			case simpleFree:
				c.free(addr)
			case allocator == allocMmap || allocator == allocMunmap:
				if err := c.allocation(addr, size, allocator); err != nil {
					return n, err
				}
			default:
				if err := c.alloc(addr, size, allocator); err != nil {
					return n, err
				}
			}
		case b&recFramePush != 0:
			code, i, ok := uvarint(rec, 1)
			if !ok {
				return n, nil
			}
			off, i, ok := uvarint(rec, i)
			if !ok {
				return n, nil
			}
			pos += i
			var parent uint32
			if k := len(cur.stack); k > 0 {
				parent = cur.stack[k-1]
			}
			node, err := c.push(parent, pyFrame{code: code, offset: int32(int64(unzigzag(off))), entry: b&1 != 0})
			if err != nil {
				return n, err
			}
			cur.stack = append(cur.stack, node)
		case b&recObject != 0:
			i := 1
			idx := (b >> 1) & 0x0f
			var ptrDelta, nDelta uint64
			var ok bool
			if idx == 15 {
				if ptrDelta, i, ok = uvarint(rec, i); !ok {
					return n, nil
				}
			}
			if native && b&1 != 0 {
				if nDelta, i, ok = uvarint(rec, i); !ok {
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
			if k > len(cur.stack) {
				return n, nil
			}
			pos++
			cur.stack = cur.stack[:len(cur.stack)-k]
		case b == recContextSwitch:
			pos += 9
			c.contextSwitch(binary.LittleEndian.Uint64(rec[1:9]))
		default:
			return n, nil
		}
		n++
	}
	return n, nil
}

// uvarint decodes the LEB128 varint at buf[i], which the caller knows
// has room for the longest one; ok is false for one longer than 64 bits.
func uvarint(buf []byte, i int) (v uint64, next int, ok bool) {
	if b := buf[i]; b < 0x80 {
		return uint64(b), i + 1, true
	}
	return uvarintLong(buf, i)
}

func uvarintLong(buf []byte, i int) (uint64, int, bool) {
	var v uint64
	for k := 0; k < 10; k++ {
		b := buf[i+k]
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
