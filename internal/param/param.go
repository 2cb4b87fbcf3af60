// Package param is the strict argument model shared by operations, capture
// providers and decoder options. One []Param declares what a request may
// carry; CLI flags, MCP input schemas, docs and validation are all derived
// from it, so they cannot disagree. It imports evidence.
package param

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
)

// Type is an argument's type.
type Type string

const (
	String     Type = "string"
	Int        Type = "integer"
	Number     Type = "number"
	Bool       Type = "boolean"
	Enum       Type = "enum"
	StringList Type = "string_list"
)

// Param declares one argument.
type Param struct {
	Name     string // snake_case; the CLI flag is the kebab-case form
	Type     Type
	Doc      string
	Default  any      // nil: unset unless given
	Enum     []string // for Enum
	Min, Max *float64 // inclusive bounds for Int and Number
	Required bool
}

// Flag returns the CLI flag name for the parameter.
func (p Param) Flag() string { return strings.ReplaceAll(p.Name, "_", "-") }

// F is a helper for Min/Max literals.
func F(v float64) *float64 { return &v }

// Range states the inclusive bounds of the parameter for people: "1 to
// 100", "at least 1", "at most 10", or "" when it has none.
func (p Param) Range() string {
	num := func(f *float64) string { return strconv.FormatFloat(*f, 'f', -1, 64) }
	switch {
	case p.Min != nil && p.Max != nil:
		return num(p.Min) + " to " + num(p.Max)
	case p.Min != nil:
		return "at least " + num(p.Min)
	case p.Max != nil:
		return "at most " + num(p.Max)
	}
	return ""
}

// DefaultText states the default for people: strings quoted (so an empty
// default shows), lists comma-separated, "" when there is none.
func (p Param) DefaultText() string {
	switch d := p.Default.(type) {
	case nil:
		return ""
	case string:
		return strconv.Quote(d)
	case []string:
		return strconv.Quote(strings.Join(d, ","))
	}
	return fmt.Sprint(p.Default)
}

// TypeText names the parameter's type for people: its JSON type, or the
// choices of an enum separated by sep.
func (p Param) TypeText(sep string) string {
	if p.Type == Enum {
		return strings.Join(p.Enum, sep)
	}
	return string(p.Type)
}

// Validate checks args against params strictly: unknown names, wrong types,
// out-of-range values and missing required arguments are INVALID_ARGUMENT
// failures. It returns the effective arguments with defaults filled in, and
// the set of names the caller gave explicitly.
func Validate(params []Param, args evidence.Object) (evidence.Object, map[string]bool, error) {
	out := evidence.Object{}
	given := map[string]bool{}
	byName := map[string]Param{}
	for _, p := range params {
		byName[p.Name] = p
	}
	var unknown []string
	for k := range args {
		if _, ok := byName[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("unknown argument %s (accepted: %s)", strings.Join(unknown, ", "), strings.Join(Names(params), ", ")),
			Location: evidence.Location{Field: unknown[0]}}
	}
	for _, p := range params {
		v, ok := args[p.Name]
		if !ok || v == nil {
			if p.Required {
				return nil, nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
					Message: "missing required argument " + p.Name, Location: evidence.Location{Field: p.Name}}
			}
			if p.Default != nil {
				out[p.Name] = p.Default
			}
			continue
		}
		cv, err := coerce(p, v)
		if err != nil {
			return nil, nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("argument %s: %v", p.Name, err), Location: evidence.Location{Field: p.Name}}
		}
		out[p.Name] = cv
		given[p.Name] = true
	}
	return out, given, nil
}

// FlagText is an argument value as a command line spells it: text that
// becomes the parameter's type when validated (--option max_rows=10 is an
// integer for an integer option and the string "10" for a string one).
// Values from JSON keep their JSON type and are never reinterpreted.
type FlagText string

func coerce(p Param, v any) (any, error) {
	if t, ok := v.(FlagText); ok {
		parsed, err := ParseFlagValue(p, string(t))
		if err != nil {
			return nil, err
		}
		v = parsed
	}
	switch p.Type {
	case String:
		return typed[string](v, "a string")
	case Enum:
		s, ok := v.(string)
		if !ok || !slices.Contains(p.Enum, s) {
			return nil, fmt.Errorf("want one of %s, got %v", strings.Join(p.Enum, ", "), v)
		}
		return s, nil
	case Bool:
		return typed[bool](v, "a boolean")
	case Int:
		switch v.(type) {
		case bool:
			return nil, fmt.Errorf("want an integer, got a boolean")
		case string:
			// Only command-line text (FlagText) becomes a number.
			return nil, fmt.Errorf("want an integer, got a string")
		}
		n, ok := evidence.AsInt(v)
		if !ok {
			if f, isF := v.(float64); !isF || f != math.Trunc(f) {
				return nil, fmt.Errorf("want an integer, got %v", v)
			}
			n = int64(v.(float64))
		}
		if err := inRange(p, float64(n)); err != nil {
			return nil, err
		}
		return n, nil
	case Number:
		if _, isStr := v.(string); isStr {
			return nil, fmt.Errorf("want a number, got a string")
		}
		f, ok := evidence.AsFloat(v)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("want a finite number, got %v", v)
		}
		if err := inRange(p, f); err != nil {
			return nil, err
		}
		return f, nil
	case StringList:
		switch x := v.(type) {
		case []string:
			return x, nil
		case []any:
			out := make([]string, len(x))
			for i, e := range x {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("element %d: want a string, got %T", i, e)
				}
				out[i] = s
			}
			return out, nil
		}
		return nil, fmt.Errorf("want a list of strings, got %T", v)
	}
	return nil, fmt.Errorf("parameter type %q is not supported", p.Type)
}

// typed takes v as it is when it already has the Go type T of its
// parameter; what names that type in the failure.
func typed[T any](v any, what string) (any, error) {
	x, ok := v.(T)
	if !ok {
		return nil, fmt.Errorf("want %s, got %T", what, v)
	}
	return x, nil
}

func inRange(p Param, f float64) error {
	if p.Min != nil && f < *p.Min {
		return fmt.Errorf("%s is below the minimum %s", number(f), number(*p.Min))
	}
	if p.Max != nil && f > *p.Max {
		return fmt.Errorf("%s is above the maximum %s", number(f), number(*p.Max))
	}
	return nil
}

// number writes a bound or value as a person wrote it: an integer in
// digits (1000000, not 1e+06), a fraction in its shortest exact form.
func number(f float64) string {
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Names lists parameter names.
func Names(params []Param) []string {
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = p.Name
	}
	return out
}

// JSONSchema returns the JSON Schema (draft 2020-12 subset) of an object
// holding params. extra adds properties that are not Params (for example an
// artifact path), already in schema form.
func JSONSchema(params []Param, extra map[string]evidence.Object, required []string) evidence.Object {
	props := evidence.Object{}
	req := append([]string(nil), required...)
	for k, v := range extra {
		props[k] = v
	}
	for _, p := range params {
		s := evidence.Object{"description": p.Doc}
		switch p.Type {
		case String:
			s["type"] = "string"
		case Enum:
			s["type"] = "string"
			s["enum"] = p.Enum
		case Bool:
			s["type"] = "boolean"
		case Int:
			s["type"] = "integer"
		case Number:
			s["type"] = "number"
		case StringList:
			s["type"] = "array"
			s["items"] = evidence.Object{"type": "string"}
		}
		if p.Min != nil {
			s["minimum"] = *p.Min
		}
		if p.Max != nil {
			s["maximum"] = *p.Max
		}
		if p.Default != nil {
			s["default"] = p.Default
		}
		props[p.Name] = s
		if p.Required {
			req = append(req, p.Name)
		}
	}
	sort.Strings(req)
	if req == nil {
		req = []string{}
	}
	return evidence.Object{"type": "object", "properties": props, "required": req, "additionalProperties": false}
}

// ParseFlagValue converts a CLI string to the parameter's type.
func ParseFlagValue(p Param, s string) (any, error) {
	switch p.Type {
	case String, Enum:
		return s, nil
	case Bool:
		switch s {
		case "true", "1", "yes":
			return true, nil
		case "false", "0", "no":
			return false, nil
		}
		return nil, fmt.Errorf("want true or false, got %q", s)
	case Int, Number:
		return json.Number(s), nil
	case StringList:
		if s == "" {
			return []string{}, nil
		}
		return strings.Split(s, ","), nil
	}
	return s, nil
}

// EnvSpelling, set to SpellingRequest in a command's environment, keeps
// the request model's argument names ("argument top") in its failures
// instead of its flags: flameox-mcp sets it for the commands it composes,
// whose failures its clients read in MCP's terms.
const (
	EnvSpelling     = "FLAMEOX_ARGUMENT_SPELLING"
	SpellingRequest = "request"
)
