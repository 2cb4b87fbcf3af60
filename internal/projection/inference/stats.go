package inference

import (
	"math"
	"slices"
)

// dist is one metric's values, in the unit they were read in (ns, tokens).
type dist struct{ xs []float64 }

func (d *dist) add(x float64) {
	if !math.IsNaN(x) && !math.IsInf(x, 0) {
		d.xs = append(d.xs, x)
	}
}

// stats are the statistics of a distribution, computed the way the three
// producers do: the mean as sum / n, the population standard deviation
// (numpy's default ddof=0), and percentiles by linear interpolation
// between the closest ranks (numpy.percentile's default method, which
// AIPerf copies in metric_result_from_array).
type stats struct {
	n                   int
	mean, std, min, max float64
	sorted              []float64
}

func (d *dist) stats() *stats {
	n := len(d.xs)
	if n == 0 {
		return nil
	}
	xs := slices.Clone(d.xs)
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return &stats{n: n, mean: mean, std: math.Sqrt(ss / float64(n)), min: xs[0], max: xs[n-1], sorted: xs}
}

// percentile is the q-th percentile (0..100) by linear interpolation.
func (s *stats) percentile(q float64) float64 {
	n := len(s.sorted)
	v := q / 100 * float64(n-1)
	lo := int(v)
	hi := min(lo+1, n-1)
	frac := v - float64(lo)
	return s.sorted[lo] + frac*(s.sorted[hi]-s.sorted[lo])
}

// stat returns the named statistic: mean, median, std, min, max, count or
// pNN (p99.9 included).
func (s *stats) stat(name string) (float64, bool) {
	switch name {
	case "mean":
		return s.mean, true
	case "median":
		return s.percentile(50), true
	case "std":
		return s.std, true
	case "min":
		return s.min, true
	case "max":
		return s.max, true
	case "count":
		return float64(s.n), true
	}
	if q, ok := percentileOf(name); ok {
		return s.percentile(q), true
	}
	return 0, false
}

// percentileOf parses "p99" or "p99.9" (vLLM's spelling of 99.9) or
// "p999" (AIPerf's) into the percentile.
func percentileOf(name string) (float64, bool) {
	if len(name) < 2 || name[0] != 'p' {
		return 0, false
	}
	if name == "p999" {
		return 99.9, true
	}
	var q float64
	frac, seen := 0.0, false
	for _, c := range name[1:] {
		switch {
		case c >= '0' && c <= '9':
			if frac > 0 {
				q += float64(c-'0') * frac
				frac /= 10
			} else {
				q = q*10 + float64(c-'0')
			}
			seen = true
		case c == '.' && frac == 0:
			frac = 0.1
		default:
			return 0, false
		}
	}
	if !seen || q < 0 || q > 100 {
		return 0, false
	}
	return q, true
}

// relDiff is |a-b| relative to the larger magnitude (0 when both are 0).
func relDiff(a, b float64) float64 {
	d := math.Abs(a - b)
	if d == 0 {
		return 0
	}
	return d / math.Max(math.Abs(a), math.Abs(b))
}
