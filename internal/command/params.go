package command

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

// ParamFlags is a set of CLI flags derived from []param.Param at run time,
// so every flag comes from the registry rather than from a hand-written
// struct. Put Plugin() in a kong.Plugins field.
type ParamFlags struct {
	params []param.Param
	value  reflect.Value // pointer to the generated struct
}

// NewParamFlags builds flags for params. help adds text after each
// parameter's doc (e.g. which operations accept it); group names the help
// section.
func NewParamFlags(params []param.Param, help func(param.Param) string, group string) *ParamFlags {
	fields := make([]reflect.StructField, 0, len(params))
	for i, p := range params {
		doc := p.Doc
		if help != nil {
			if extra := help(p); extra != "" {
				doc += " " + extra
			}
		}
		if p.Type == param.Enum {
			doc += " (one of: " + strings.Join(p.Enum, ", ") + ")"
		}
		if d := p.DefaultText(); d != "" {
			doc += " (default " + d + ")"
		}
		if r := p.Range(); r != "" {
			doc += " (" + r + ")"
		}
		typ := reflect.TypeOf((*string)(nil))
		tag := fmt.Sprintf(`name:%q help:%q group:%q placeholder:%q`, p.Flag(), doc, group, strings.ToUpper(string(p.Type)))
		if p.Type == param.Bool {
			typ = reflect.TypeOf((*bool)(nil))
			tag = fmt.Sprintf(`name:%q help:%q group:%q negatable:""`, p.Flag(), doc, group)
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("P%d", i), Type: typ, Tag: reflect.StructTag(tag)})
	}
	return &ParamFlags{params: params, value: reflect.New(reflect.StructOf(fields))}
}

// Plugin is the pointer to give kong.
func (f *ParamFlags) Plugin() any { return f.value.Interface() }

// Args returns the parameters given on the command line, typed.
func (f *ParamFlags) Args() (evidence.Object, error) {
	out := evidence.Object{}
	s := f.value.Elem()
	for i, p := range f.params {
		fv := s.Field(i)
		if fv.IsNil() {
			continue
		}
		if p.Type == param.Bool {
			out[p.Name] = fv.Elem().Bool()
			continue
		}
		v, err := param.ParseFlagValue(p, fv.Elem().String())
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "--%s", p.Flag())
		}
		out[p.Name] = v
	}
	return out, nil
}

// MergeRequest combines a --request JSON object with flags; a parameter
// given both ways must agree, so nothing is silently overridden.
func MergeRequest(request string, flags evidence.Object) (evidence.Object, error) {
	out := evidence.Object{}
	if request != "" {
		v, err := evidence.ParseValue([]byte(request), 16)
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "--request")
		}
		o, ok := v.(evidence.Object)
		if !ok {
			return nil, evidence.Failf(evidence.CodeInvalidArgument, "--request must be a JSON object")
		}
		out = o
	}
	for k, v := range flags {
		if prev, ok := out[k]; ok {
			a, _ := evidence.Canonical(prev)
			b, _ := evidence.Canonical(v)
			if string(a) != string(b) {
				return nil, evidence.Failf(evidence.CodeInvalidArgument, "argument %s is given twice with different values (--request and a flag)", k)
			}
		}
		out[k] = v
	}
	return out, nil
}
