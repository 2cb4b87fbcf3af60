package formats

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

// OptionValueBytes is the decoder option that bounds one string value of
// a row. A decoder that declares it (ValueBytesParam in Spec.Options)
// passes every native string it puts in a row through Input.Values.
const OptionValueBytes = "max_value_bytes"

// DefaultValueBytes is its default; MaxValueBytes its ceiling: a row of
// four such strings, each escaped at worst six bytes per byte, stays
// under the 8 MiB a block-stream reader accepts per line, so what
// flameox-decode writes, flameox-rank can read.
const (
	DefaultValueBytes = 64 << 10
	MaxValueBytes     = 256 << 10
)

// ValueBytesParam declares OptionValueBytes.
var ValueBytesParam = param.Param{Name: OptionValueBytes, Type: param.Int, Default: int64(DefaultValueBytes),
	Min: param.F(16), Max: param.F(MaxValueBytes),
	Doc: "bytes kept of one string value of a row (a function name, a file); a longer one is cut at a character boundary, marked, and the table is incomplete"}

// Values bounds the string values a decoder puts in rows and counts what
// it cut, so the summary can say so. The zero value is unusable; get one
// from Input.Values.
type Values struct {
	max      int
	cut      int64 // values cut
	cutBytes int64 // bytes left out of them
}

// Values returns the value bound of this input: the option's value, or
// the default when the input carries none (an Input built by hand).
func (in *Input) Values() *Values {
	n := int(in.Int(OptionValueBytes))
	if n <= 0 {
		n = DefaultValueBytes
	}
	return &Values{max: n}
}

// Bound returns s, or, when it is longer than the bound, its first bytes
// up to a UTF-8 character boundary followed by a marker saying how many
// bytes were cut; a nil bound keeps s. Identities (frame ids) are the decoder's to compute
// from the full value, before it is bounded.
func (v *Values) Bound(s string) string {
	if v == nil || len(s) <= v.max {
		return s
	}
	n := v.max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	v.cut++
	v.cutBytes += int64(len(s) - n)
	return s[:n] + fmt.Sprintf("…[%d bytes cut]", len(s)-n)
}

// Summarize states in s what the bound cut: the metrics, a limitation and
// complete=false (a cut value is not the native one). Nothing when
// nothing was cut.
func (v *Values) Summarize(s *evidence.Summary) {
	if v == nil || v.cut == 0 {
		return
	}
	if s.Metrics == nil {
		s.Metrics = map[string]evidence.Metric{}
	}
	// Several bounds may state into one summary (rows and coverage): the
	// metrics add up.
	add := func(name string, n int64, unit string) {
		prev, _ := evidence.AsInt(s.Metrics[name].Value)
		s.Metrics[name] = evidence.Metric{Value: prev + n, Unit: unit}
	}
	add("cut_values", v.cut, "count")
	add("cut_value_bytes", v.cutBytes, "bytes")
	s.Complete = false
	s.Limit(fmt.Sprintf("%d string values were longer than %s=%d bytes: each is cut at a character boundary and ends in \"…[N bytes cut]\"; frame ids are of the full values",
		v.cut, OptionValueBytes, v.max))
}

// BoundInto puts the members of m into dst with their keys bounded and
// each value mapped by val, so that dst does not depend on m's order: a
// key the bound leaves whole keeps its value, and keys cut to one
// bounded key (or to a key present whole) give it the value of the first
// in byte order. The cut is stated by the bound's own counts.
func BoundInto[V any](v *Values, dst map[string]any, m map[string]V, val func(V) any) {
	type member struct {
		key, bounded string
		val          any
	}
	var cut []member
	for k, x := range m {
		b, bv := v.Bound(k), val(x)
		if b != k {
			cut = append(cut, member{k, b, bv})
			continue
		}
		dst[k] = bv
	}
	slices.SortFunc(cut, func(a, b member) int { return strings.Compare(a.key, b.key) })
	for _, c := range cut {
		if _, taken := dst[c.bounded]; !taken {
			dst[c.bounded] = c.val
		}
	}
}

// Add adds what o cut to v: a bound used by a worker on a part of the
// input, merged in input order, states what one bound over it all would.
func (v *Values) Add(o *Values) {
	v.cut += o.cut
	v.cutBytes += o.cutBytes
}
