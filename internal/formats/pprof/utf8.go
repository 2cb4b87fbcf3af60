package pprof

import (
	"strings"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// validUTF8 replaces invalid UTF-8 in the profile's strings (names, files,
// mappings, types, labels, comments) with U+FFFD and returns how many
// strings it changed. Go writes UTF-8, but profile.proto's strings are
// bytes to other producers, and a row's text must be valid; the summary
// states the count instead of failing the whole profile.
func validUTF8(p *profile.Profile) int64 {
	var n int64
	fix := func(s *string) {
		if !utf8.ValidString(*s) {
			*s = strings.ToValidUTF8(*s, "\uFFFD")
			n++
		}
	}
	for _, f := range p.Function {
		fix(&f.Name)
		fix(&f.SystemName)
		fix(&f.Filename)
	}
	for _, m := range p.Mapping {
		fix(&m.File)
		fix(&m.BuildID)
	}
	for _, st := range p.SampleType {
		fix(&st.Type)
		fix(&st.Unit)
	}
	if p.PeriodType != nil {
		fix(&p.PeriodType.Type)
		fix(&p.PeriodType.Unit)
	}
	fix(&p.DefaultSampleType)
	fix(&p.DropFrames)
	fix(&p.KeepFrames)
	for i := range p.Comments {
		fix(&p.Comments[i])
	}
	for _, s := range p.Sample {
		if s.Label != nil {
			s.Label = fixLabels(s.Label, &n)
		}
		if s.NumLabel != nil {
			s.NumLabel = fixKeys(s.NumLabel, &n)
		}
		if s.NumUnit != nil {
			s.NumUnit = fixLabels(s.NumUnit, &n)
		}
	}
	return n
}

func fixLabels(m map[string][]string, n *int64) map[string][]string {
	m = fixKeys(m, n)
	for _, vs := range m {
		for i, v := range vs {
			if !utf8.ValidString(v) {
				vs[i] = strings.ToValidUTF8(v, "\uFFFD")
				*n++
			}
		}
	}
	return m
}

// fixKeys rebuilds m only when a key is invalid; two keys that become
// equal keep the values of both.
func fixKeys[V any](m map[string][]V, n *int64) map[string][]V {
	bad := false
	for k := range m {
		if !utf8.ValidString(k) {
			bad = true
			break
		}
	}
	if !bad {
		return m
	}
	out := make(map[string][]V, len(m))
	for k, v := range m {
		if !utf8.ValidString(k) {
			k = strings.ToValidUTF8(k, "\uFFFD")
			*n++
		}
		out[k] = append(out[k], v...)
	}
	return out
}
