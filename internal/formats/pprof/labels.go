package pprof

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// Bounds of the label summary: keys and distinct values tracked per key
// (the rest are counted apart), and values listed per key.
const (
	maxLabelKeys   = 256
	maxLabelValues = 4096
	listedValues   = 32
)

// labelStats totals the samples carrying each label key and value, in
// the rows' weights, as pprof -tags does.
type labelStats struct {
	keys      map[string]*keyStats
	cutKeys   int64 // samples' labels under keys past maxLabelKeys
	keysSeen  map[string]bool
	anyLabels bool
}

type keyStats struct {
	key     string
	numeric bool
	units   []string
	samples int64
	weight  [2]int64
	values  map[string]*valueStats
	// other holds the values past maxLabelValues, pooled.
	other      valueStats
	otherCount int64 // distinct values pooled in other (at least)
}

type valueStats struct {
	samples int64
	weight  [2]int64
}

func newLabelStats() *labelStats {
	return &labelStats{keys: map[string]*keyStats{}, keysSeen: map[string]bool{}}
}

func (l *labelStats) key(name string, numeric bool) *keyStats {
	k := l.keys[name]
	if k == nil {
		if len(l.keys) >= maxLabelKeys {
			if !l.keysSeen[name] {
				l.keysSeen[name] = true
				l.cutKeys++
			}
			return nil
		}
		k = &keyStats{key: name, numeric: numeric, values: map[string]*valueStats{}}
		l.keys[name] = k
	}
	return k
}

func (k *keyStats) add(value string, v [2]int64) {
	s := k.values[value]
	if s == nil {
		if len(k.values) >= maxLabelValues {
			k.otherCount++ // an upper bound: a value seen twice counts twice
			s = &k.other
		} else {
			s = &valueStats{}
			k.values[value] = s
		}
	}
	s.samples++
	s.weight[0] += v[0]
	s.weight[1] += v[1]
}

func (l *labelStats) add(s *profile.Sample, v [2]int64) {
	l.anyLabels = true
	for name, vals := range s.Label {
		k := l.key(name, false)
		if k == nil {
			continue
		}
		k.samples++
		k.weight[0] += v[0]
		k.weight[1] += v[1]
		for _, x := range vals {
			k.add(x, v)
		}
	}
	for name, nums := range s.NumLabel {
		k := l.key(name, true)
		if k == nil {
			continue
		}
		k.samples++
		k.weight[0] += v[0]
		k.weight[1] += v[1]
		units := s.NumUnit[name]
		for i, n := range nums {
			if i < len(units) && units[i] != "" && !slices.Contains(k.units, units[i]) {
				k.units = append(k.units, units[i])
			}
			k.add(strconv.FormatInt(n, 10), v)
		}
	}
}

// names lists the keys, sorted.
func (l *labelStats) names() []string {
	out := make([]string, 0, len(l.keys))
	for n := range l.keys {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// coverage is the summary's label list: per key its kind, unit, samples,
// weights and distinct values, and its heaviest values. weightUnit and
// countUnit name the weights ("" for none).
func (l *labelStats) coverage(vals *formats.Values, weightUnit, countUnit string) []any {
	var out []any
	for _, name := range l.names() {
		k := l.keys[name]
		type kv struct {
			value string
			s     *valueStats
		}
		list := make([]kv, 0, len(k.values))
		for v, s := range k.values {
			list = append(list, kv{v, s})
		}
		slices.SortFunc(list, func(a, b kv) int {
			return cmp.Or(cmp.Compare(b.s.weight[0], a.s.weight[0]), cmp.Compare(b.s.samples, a.s.samples), cmp.Compare(a.value, b.value))
		})
		top := make([]any, 0, min(len(list), listedValues))
		for _, x := range list[:min(len(list), listedValues)] {
			top = append(top, value(vals.Bound(x.value), x.s, weightUnit, countUnit))
		}
		kind := "string"
		if k.numeric {
			kind = "numeric"
		}
		var units any
		if len(k.units) > 0 {
			u := make([]any, len(k.units))
			for i, x := range k.units {
				u[i] = vals.Bound(x)
			}
			units = u
		}
		o := value("", &valueStats{samples: k.samples, weight: k.weight}, weightUnit, countUnit)
		delete(o, "value")
		o["key"] = vals.Bound(name)
		o["kind"] = kind
		o["num_units"] = units
		o["distinct_values"] = int64(len(k.values)) + k.otherCount
		o["values"] = top
		if k.otherCount > 0 {
			o["values_pooled"] = value("", &k.other, weightUnit, countUnit)
			delete(o["values_pooled"].(evidence.Object), "value")
		}
		out = append(out, o)
	}
	return out
}

func value(v string, s *valueStats, weightUnit, countUnit string) evidence.Object {
	o := evidence.Object{"value": v, "samples": s.samples, "weight": s.weight[0]}
	if countUnit != "" {
		o["count"] = s.weight[1]
	}
	return o
}

// limitations states how the rows treat labels.
func (l *labelStats) limitations(keys []string, vals *formats.Values) []string {
	if !l.anyLabels {
		return nil
	}
	var out []string
	names := l.names()
	if len(keys) == 0 {
		out = append(out, fmt.Sprintf("samples carry labels (keys: %s; totals per value under coverage.labels): rows pool every label value of a frame, as pprof -top does; decode with --option %s=KEY to make each value of KEY a series of its own",
			joinNames(names, vals), OptionLabelSeries))
	} else {
		out = append(out, fmt.Sprintf("the values of label keys %s are series of their own (thread column, key=value); other label keys are pooled", joinNames(keys, vals)))
	}
	for _, n := range names {
		if k := l.keys[n]; k.otherCount > 0 {
			out = append(out, fmt.Sprintf("label %s has more than %d distinct values: the values past them are pooled under values_pooled", vals.Bound(n), maxLabelValues))
		}
	}
	if l.cutKeys > 0 {
		out = append(out, fmt.Sprintf("%d label keys past the first %d are not listed", l.cutKeys, maxLabelKeys))
	}
	return out
}

func joinNames(names []string, vals *formats.Values) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += vals.Bound(n)
		if i == 15 && len(names) > 16 {
			return s + fmt.Sprintf(" and %d more", len(names)-16)
		}
	}
	return s
}
