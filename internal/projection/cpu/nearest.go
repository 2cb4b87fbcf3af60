package cpu

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxNames bounds the distinct values one filter remembers for its hint,
// so the memory of a miss stays flat however many frames a profile has.
const maxNames = 100_000

// nearNames is how many names a hint offers.
const nearNames = 5

// misses remembers, for each filter given, the distinct values it was
// tested against, so a filter that selected nothing can say so and name
// the values nearest to what it asked for (a function V8 inlined away, a
// thread named slightly differently).
type misses struct {
	filters []*miss
}

type miss struct {
	arg, pattern string // the argument and its value
	what         string // what its values are: "function names", "threads"
	names        map[string]bool
	full         bool // more distinct values were seen than maxNames
	matched      bool // some value passed the filter
}

// filter registers a filter; nil when the argument was not given.
func (m *misses) filter(arg, pattern, what string) *miss {
	if pattern == "" {
		return nil
	}
	x := &miss{arg: arg, pattern: pattern, what: what, names: map[string]bool{}}
	m.filters = append(m.filters, x)
	return x
}

// saw records a value the filter was tested against, and whether it
// passed.
func (x *miss) saw(v string, ok bool) {
	if x == nil {
		return
	}
	x.matched = x.matched || ok
	if x.names[v] {
		return
	}
	if len(x.names) >= maxNames {
		x.full = true
		return
	}
	x.names[v] = true
}

// limitations says, when nothing was selected, that the filters matched
// nothing, each with its nearest values.
func (m *misses) limitations(selected int64) []string {
	if selected > 0 || len(m.filters) == 0 {
		return nil
	}
	var out []string
	for _, x := range m.filters {
		if x.matched {
			continue
		}
		l := fmt.Sprintf("the filter matched nothing: %s %q; ", x.arg, x.pattern)
		near := nearest(x.pattern, x.names, nearNames)
		switch {
		case len(near) == 0:
			l += fmt.Sprintf("the selected profiles hold no %s", x.what)
		default:
			q := make([]string, len(near))
			for i, n := range near {
				q[i] = strconv.Quote(n)
			}
			l += fmt.Sprintf("nearest %s: %s", x.what, strings.Join(q, ", "))
		}
		if x.full {
			l += fmt.Sprintf(" (among the first %d distinct ones)", maxNames)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		out = append(out, "the filters matched nothing together: each matches some rows, but no row matches all of them")
	}
	return out
}

// nearest returns up to k names closest to pattern: names holding its
// literal text first, then by edit distance, then by name.
func nearest(pattern string, names map[string]bool, k int) []string {
	needle := strings.ToLower(literal(pattern))
	type cand struct {
		name     string
		contains bool
		dist     int
	}
	cands := make([]cand, 0, len(names))
	for n := range names {
		if n == "" {
			continue // an anonymous function's empty name is no hint
		}
		low := strings.ToLower(n)
		c := cand{name: n, contains: needle != "" && (strings.Contains(low, needle) || strings.Contains(needle, low) && low != "")}
		c.dist = distance(needle, low)
		cands = append(cands, c)
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.contains != b.contains {
			if a.contains {
				return -1
			}
			return 1
		}
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, k)
	for _, c := range cands[:min(k, len(cands))] {
		out = append(out, c.name)
	}
	return out
}

// literal is a pattern with its regular-expression operators dropped:
// "^parse$" asks for "parse". Escaped characters keep their character.
func literal(pattern string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			i++
			b.WriteByte(pattern[i])
		case strings.IndexByte(`^$.*+?()[]{}|`, c) >= 0:
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// maxDistanceRunes bounds the runes of each side an edit distance
// compares, so a huge name costs no more than a long one.
const maxDistanceRunes = 256

// distance is the Levenshtein distance of a and b, each cut to
// maxDistanceRunes runes.
func distance(a, b string) int {
	ra, rb := runes(a), runes(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func runes(s string) []rune {
	out := make([]rune, 0, min(len(s), maxDistanceRunes))
	for len(s) > 0 && len(out) < maxDistanceRunes {
		r, n := utf8.DecodeRuneInString(s)
		out = append(out, r)
		s = s[n:]
	}
	return out
}
