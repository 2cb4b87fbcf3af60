package preview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// Option kinds.
const (
	Int    = "int"
	Bool   = "bool"
	String = "string"
)

// Option is one decoder option: a bound on what a preview reads or shows,
// or a reading choice (a delimiter, a records pointer). Options are not
// parser ceilings; those are formats.Limit and fail when crossed.
type Option struct {
	Name     string
	Kind     string
	Default  any // int64, bool or string
	Min, Max int64
	Doc      string
}

// Options is a decoder's option set.
type Options []Option

// Docs renders the set for formats.Spec.Options, with defaults and ranges.
func (os Options) Docs() map[string]string {
	out := make(map[string]string, len(os))
	for _, o := range os {
		d := o.Doc
		switch o.Kind {
		case Int:
			d += fmt.Sprintf(" (integer %d..%d, default %d)", o.Min, o.Max, o.Default)
		case Bool:
			d += fmt.Sprintf(" (true or false, default %v)", o.Default)
		case String:
			d += fmt.Sprintf(" (default %q)", o.Default)
		}
		out[o.Name] = d
	}
	return out
}

// Values are parsed options.
type Values struct {
	v     map[string]any
	given map[string]bool
}

// Int returns an integer option.
func (v Values) Int(name string) int64 { return v.v[name].(int64) }

// Bool returns a boolean option.
func (v Values) Bool(name string) bool { return v.v[name].(bool) }

// String returns a string option.
func (v Values) String(name string) string { return v.v[name].(string) }

// Given reports whether the caller set the option.
func (v Values) Given(name string) bool { return v.given[name] }

// Parse validates given options strictly: unknown names, wrong kinds and
// out-of-range values are INVALID_ARGUMENT failures. Values may arrive as
// JSON values or as the strings of `--option k=v`.
func (os Options) Parse(given evidence.Object) (Values, error) {
	out := Values{v: map[string]any{}, given: map[string]bool{}}
	for k := range given {
		if !slices.ContainsFunc(os, func(o Option) bool { return o.Name == k }) {
			names := make([]string, len(os))
			for i, o := range os {
				names[i] = o.Name
			}
			slices.Sort(names)
			return Values{}, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  fmt.Sprintf("unknown decoder option %q (accepted: %s)", k, strings.Join(names, ", ")),
				Location: evidence.Location{Field: k}}
		}
	}
	for _, o := range os {
		raw, ok := given[o.Name]
		if !ok || raw == nil {
			out.v[o.Name] = o.Default
			continue
		}
		v, err := o.parse(raw)
		if err != nil {
			return Values{}, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("decoder option %s: %v", o.Name, err), Location: evidence.Location{Field: o.Name}}
		}
		out.v[o.Name] = v
		out.given[o.Name] = true
	}
	return out, nil
}

func (o Option) parse(raw any) (any, error) {
	switch o.Kind {
	case Int:
		if _, isBool := raw.(bool); isBool {
			return nil, fmt.Errorf("want an integer, got a boolean")
		}
		n, ok := evidence.AsInt(raw)
		if !ok {
			return nil, fmt.Errorf("want an integer, got %v", raw)
		}
		if n < o.Min || n > o.Max {
			return nil, fmt.Errorf("%d is outside %d..%d", n, o.Min, o.Max)
		}
		return n, nil
	case Bool:
		switch x := raw.(type) {
		case bool:
			return x, nil
		case string:
			switch x {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
		}
		return nil, fmt.Errorf("want true or false, got %v", raw)
	case String:
		s, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %T", raw)
		}
		return s, nil
	}
	return nil, fmt.Errorf("option kind %q is not supported", o.Kind)
}

// LimitOf returns the effective value of a parser ceiling: the runner's
// effective limits carry the defaults; a direct caller that passes none
// gets the spec default.
func LimitOf(in *formats.Input, l formats.Limit) int64 {
	if v := in.Limit(l.Name); v > 0 {
		return v
	}
	return l.Default
}
