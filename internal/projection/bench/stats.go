package bench

import (
	"math"
	"math/big"
	"slices"
)

// Stats are the statistics of one series, computed as pyperf computes
// them (Python's statistics module, pyperf._utils.percentile), so that
// they equal `pyperf stats` bit for bit: the mean is the exact mean
// rounded once; the standard deviation is the correctly rounded square
// root of the exact sample variance; the median is the middle value or
// the mean of the two middle ones ((a+b)/2 in doubles); a percentile
// interpolates linearly between the closest ranks.
type Stats struct {
	N                 int64
	Mean, Median      float64
	Stdev             float64 // NaN for n < 2
	Min, Max, P5, P95 float64
}

// Compute returns the statistics of values (n >= 1); values is sorted in
// place.
func Compute(values []float64) Stats {
	slices.Sort(values)
	n := len(values)
	s := Stats{N: int64(n), Min: values[0], Max: values[n-1]}
	s.Median = median(values)
	s.P5, s.P95 = Percentile(values, 0.05), Percentile(values, 0.95)
	s.Mean, s.Stdev = meanStdev(values)
	return s
}

// median of sorted values, as statistics.median.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Percentile is pyperf._utils.percentile of sorted values, p in [0, 1].
// The products are rounded before they are added (float64(...)), as
// Python computes them, so that no platform fuses them.
func Percentile(sorted []float64, p float64) float64 {
	k := float64(len(sorted)-1) * p
	f, c := math.Floor(k), math.Ceil(k)
	if f == c {
		return sorted[int(k)]
	}
	d0 := float64(sorted[int(f)] * (c - k))
	d1 := float64(sorted[int(c)] * (k - f))
	return d0 + d1
}

// meanStdev computes the exact sums Σx and Σx² (as exact expansions of
// doubles, Shewchuk's algorithm, which is what keeps this fast), then
// the mean and the variance exactly as rationals, and rounds each once.
func meanStdev(values []float64) (mean, stdev float64) {
	var sx, sxx expansion
	exact := true
	for _, v := range values {
		sx.add(v)
		hi := v * v
		lo := math.FMA(v, v, -hi)
		if math.IsInf(hi, 0) || (hi != 0 && math.Abs(hi) < 0x1p-960) {
			exact = false // the square leaves the range where hi+lo is exact
		}
		sxx.add(hi)
		sxx.add(lo)
	}
	n := big.NewRat(int64(len(values)), 1)
	var rx, rxx *big.Rat
	if exact {
		rx, rxx = sx.rat(), sxx.rat()
	} else {
		rx, rxx = new(big.Rat), new(big.Rat)
		for _, v := range values {
			x := new(big.Rat).SetFloat64(v)
			rx.Add(rx, x)
			rxx.Add(rxx, x.Mul(x, x))
		}
	}
	m := new(big.Rat).Quo(rx, n)
	mean, _ = m.Float64()
	if len(values) < 2 {
		return mean, math.NaN()
	}
	// ssd = (n·Σx² − (Σx)²) / n; variance = ssd / (n − 1)
	ssd := new(big.Rat).Mul(n, rxx)
	ssd.Sub(ssd, new(big.Rat).Mul(rx, rx))
	ssd.Quo(ssd, n)
	ssd.Quo(ssd, big.NewRat(int64(len(values)-1), 1))
	return mean, sqrtRat(ssd)
}

// sqrtRat is the correctly rounded square root of a non-negative
// rational: the integer square root of the value scaled to 2·(54+) bits,
// with a sticky bit for an inexact root, then one rounding to a double.
func sqrtRat(q *big.Rat) float64 {
	if q.Sign() <= 0 {
		return 0
	}
	num, den := q.Num(), q.Denom()
	// Scale by 4^e so that num·4^e/den has at least 2·60 bits of integer.
	e := (120 - (num.BitLen() - den.BitLen())) / 2
	if e < 0 {
		e = 0
	}
	n := new(big.Int).Lsh(num, uint(2*e))
	n.Quo(n, den)
	exact := new(big.Int).Mul(n, den).Cmp(new(big.Int).Lsh(num, uint(2*e))) == 0
	r := new(big.Int).Sqrt(n)
	if exact && new(big.Int).Mul(r, r).Cmp(n) != 0 {
		exact = false
	}
	// Round to odd: an inexact root sets the lowest bit, so that the one
	// rounding to 53 bits below cannot meet a false tie.
	if !exact {
		r.SetBit(r, 0, 1)
	}
	// SetInt keeps every bit of r; scaling by 2^-e is exact; Float64
	// rounds once, to nearest even.
	bf := new(big.Float).SetInt(r)
	bf.SetMantExp(bf, -e)
	out, _ := bf.Float64()
	return out
}

// expansion is an exact sum of doubles as non-overlapping partials
// (Shewchuk; Python's math.fsum keeps the same).
type expansion struct{ p []float64 }

func (e *expansion) add(x float64) {
	i := 0
	for _, y := range e.p {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			e.p[i] = lo
			i++
		}
		x = hi
	}
	e.p = append(e.p[:i], x)
}

func (e *expansion) rat() *big.Rat {
	r := new(big.Rat)
	for _, x := range e.p {
		r.Add(r, new(big.Rat).SetFloat64(x))
	}
	return r
}
