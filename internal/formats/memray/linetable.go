package memray

// lineOf is the line memray reports for a frame: the code object's line
// table (CPython's own encoding, which changed in 3.10 and 3.11) read at
// the frame's instruction offset, as memray's compat::parseLinetable
// reads it. 0 means memray has no line: an empty table, a negative
// offset, or an offset the table does not cover.
func lineOf(pyVersion int32, table []byte, offset int32, first int32) int32 {
	if len(table) == 0 || offset < 0 {
		return 0
	}
	switch {
	case pyVersion >= 0x030B0000:
		return line311(uint64(offset), table, first)
	case pyVersion >= 0x030A0000:
		return line310(uint64(offset), table, first)
	}
	return line39(uint64(offset), table, first)
}

// line311 reads the 3.11+ location table (co_linetable): entries of a
// first byte (1, code:4, length-1:3) and code-dependent operands with
// 6-bit varints. Bytes past the table read as 0, which ends it.
func line311(addrq uint64, t []byte, first int32) int32 {
	addrq /= 2 // instruction offset to code units
	p := 0
	at := func() byte {
		if p >= len(t) {
			p++
			return 0
		}
		b := t[p]
		p++
		return b
	}
	varint := func() uint32 {
		read := uint32(at())
		val := read & 63
		shift := uint32(0)
		for read&64 != 0 && p <= len(t) {
			read = uint32(at())
			shift += 6
			if shift < 32 {
				val |= (read & 63) << shift
			}
		}
		return val
	}
	svarint := func() int32 {
		u := varint()
		v := int32(u >> 1)
		if u&1 != 0 {
			return -v
		}
		return v
	}
	line := first
	var addr uint64
	for p < len(t) && t[p] != 0 {
		b := at()
		code := (b >> 3) & 15
		end := addr + uint64(b&7) + 1
		switch code {
		case 15: // no location
		case 14: // long form
			line += svarint()
			varint() // end line delta
			varint() // column + 1
			varint() // end column + 1
		case 13: // no columns
			line += svarint()
		case 10, 11, 12: // one line, line delta code-10
			line += int32(code) - 10
			at()
			at()
		default: // short form: same line
			at()
		}
		if addr <= addrq && end > addrq {
			return line
		}
		addr = end
	}
	return 0
}

// line310 reads the 3.10 line table: (start delta, signed line delta)
// byte pairs, -128 meaning no line.
func line310(offset uint64, t []byte, first int32) int32 {
	at := func(i int) byte {
		if i < len(t) {
			return t[i]
		}
		return 0
	}
	line := first
	last := offset << 1
	var cur uint64
	for i := 0; i < len(t); i += 2 {
		cur += uint64(at(i))
		if d := int8(at(i + 1)); d != -128 {
			line += int32(d)
		}
		if cur > last {
			break
		}
	}
	return line
}

// line39 reads co_lnotab (3.9 and earlier): (bytecode delta, line delta)
// byte pairs. memray adds the bytecode delta as a C char, signed on the
// platforms it supports, and so does this.
func line39(offset uint64, t []byte, first int32) int32 {
	at := func(i int) byte {
		if i < len(t) {
			return t[i]
		}
		return 0
	}
	line := first
	var bc uint64
	for i := 0; i < len(t); i += 2 {
		bc += uint64(int64(int8(at(i))))
		if bc > offset {
			break
		}
		line += int32(int8(at(i + 1)))
	}
	return line
}
