package chrometrace

import "errors"

// errTime is a timestamp that is not a finite number of nanoseconds that
// fits int64.
var errTime = errors.New("not a representable time")

// microsToNanos converts a JSON number literal of microseconds (the
// Trace Event Format's unit for ts and dur) to integer nanoseconds,
// exactly: the decimal digits are shifted by three places, never passed
// through a float, so 1694039968955744.123 is 1694039968955744123 ns. A
// literal with digits below the nanosecond is rounded half to even, and
// rounded reports it.
func microsToNanos(lit []byte) (ns int64, rounded bool, err error) {
	if ns, ok := plainMicros(lit); ok {
		return ns, false, nil
	}
	return microsToNanosAny(lit)
}

// plainMicros is microsToNanos for the literals most writers write: at
// most 16 integer digits and at most three below the point (exact in
// nanoseconds), read without microsToNanosAny's digit buffer. ok is
// false for anything else, which microsToNanosAny reads.
func plainMicros(lit []byte) (ns int64, ok bool) {
	var v uint64
	i := 0
	for ; i < len(lit) && lit[i]-'0' <= 9; i++ {
		v = v*10 + uint64(lit[i]-'0')
	}
	if i == 0 || i > 16 {
		return 0, false
	}
	v *= 1000
	if i < len(lit) {
		if lit[i] != '.' {
			return 0, false
		}
		scale := uint64(100)
		j := i + 1
		for ; j < len(lit) && lit[j]-'0' <= 9; j++ {
			if j-i > 3 {
				return 0, false
			}
			v += uint64(lit[j]-'0') * scale
			scale /= 10
		}
		if j == i+1 || j != len(lit) {
			return 0, false
		}
	}
	if v > 1<<63-1 {
		return 0, false // out of range: microsToNanosAny says so
	}
	return int64(v), true
}

// microsToNanosAny is microsToNanos for any literal.
func microsToNanosAny(lit []byte) (ns int64, rounded bool, err error) {
	i := 0
	neg := false
	if i < len(lit) && lit[i] == '-' {
		neg = true
		i++
	}
	// Collect the significant digits and the decimal exponent: value =
	// digits × 10^exp microseconds.
	var digits [40]byte
	nd := 0
	exp := 0
	dropped := false // nonzero digits beyond what digits can hold
	sawDigit := false
	add := func(c byte, frac bool) {
		sawDigit = true
		if nd == 0 && c == '0' {
			if frac {
				exp--
			}
			return
		}
		if nd < len(digits) {
			digits[nd] = c
			nd++
			if frac {
				exp--
			}
			return
		}
		if c != '0' {
			dropped = true
		}
		if !frac {
			exp++
		}
	}
	for ; i < len(lit) && lit[i] >= '0' && lit[i] <= '9'; i++ {
		add(lit[i], false)
	}
	if i < len(lit) && lit[i] == '.' {
		for i++; i < len(lit) && lit[i] >= '0' && lit[i] <= '9'; i++ {
			add(lit[i], true)
		}
	}
	if !sawDigit {
		return 0, false, errTime
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		eneg := false
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			eneg = lit[i] == '-'
			i++
		}
		e := 0
		start := i
		for ; i < len(lit) && lit[i] >= '0' && lit[i] <= '9'; i++ {
			if e < 10000 {
				e = e*10 + int(lit[i]-'0')
			}
		}
		if i == start {
			return 0, false, errTime
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(lit) {
		return 0, false, errTime
	}
	// Nanoseconds: shift by three more places.
	exp += 3
	if nd == 0 {
		return 0, false, nil
	}
	if nd+exp > 19 {
		return 0, false, errTime
	}
	var v uint64
	keep := nd
	if exp < 0 {
		keep = nd + exp // digits at or above the nanosecond
	}
	for k := 0; k < keep; k++ {
		v = v*10 + uint64(digits[k]-'0')
	}
	for k := 0; k < exp; k++ {
		v *= 10
	}
	if exp < 0 {
		// Round half to even on the digits below the nanosecond.
		rounded = true
		first := byte('0')
		if keep >= 0 && keep < nd {
			first = digits[keep]
		}
		if keep < 0 {
			first = '0' // the value is below half a nanosecond
		}
		rest := dropped
		for k := max(keep+1, 0); k < nd; k++ {
			if digits[k] != '0' {
				rest = true
			}
		}
		if first > '5' || (first == '5' && (rest || v%2 == 1)) {
			v++
		}
	} else if dropped {
		rounded = true
	}
	if v > 1<<63-1 {
		return 0, false, errTime
	}
	ns = int64(v)
	if neg {
		ns = -ns
	}
	return ns, rounded, nil
}
