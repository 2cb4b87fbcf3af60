package param

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

var decl = []Param{
	{Name: "top", Type: Int, Default: int64(20), Min: F(1), Max: F(100), Doc: "rows"},
	{Name: "ratio", Type: Number, Min: F(0), Max: F(1), Doc: "share"},
	{Name: "pattern", Type: String, Doc: "re"},
	{Name: "synthetic", Type: Bool, Default: true, Doc: "keep"},
	{Name: "metric", Type: Enum, Enum: []string{"self", "calls"}, Doc: "metric"},
	{Name: "outcomes", Type: StringList, Doc: "keep only"},
}

func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument || f.Location.Field != field {
		t.Fatalf("err = %v, want INVALID_ARGUMENT at %q", err, field)
	}
}

func TestValidateDefaultsAndGiven(t *testing.T) {
	eff, given, err := Validate(decl, evidence.Object{"top": json.Number("5"), "outcomes": []any{"failed"}})
	if err != nil {
		t.Fatal(err)
	}
	if eff["top"] != int64(5) || eff["synthetic"] != true || !slices.Equal(eff["outcomes"].([]string), []string{"failed"}) {
		t.Errorf("effective %#v", eff)
	}
	if _, unset := eff["pattern"]; unset {
		t.Error("a parameter without a default was filled in")
	}
	if !given["top"] || !given["outcomes"] || given["synthetic"] || len(given) != 2 {
		t.Errorf("given %v, want top and outcomes only", given)
	}
	// A null is treated as not given, so the default applies.
	eff, given, err = Validate(decl, evidence.Object{"top": nil})
	if err != nil || eff["top"] != int64(20) || given["top"] {
		t.Errorf("null top: %v %v %v", eff, given, err)
	}
}

// JSON values keep their JSON type: nothing is reinterpreted.
func TestValidateStrict(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  evidence.Object
		field string
	}{
		{"unknown", evidence.Object{"bogus": 1, "zz": 2}, "bogus"},
		{"integer as string", evidence.Object{"top": "5"}, "top"},
		{"integer as boolean", evidence.Object{"top": true}, "top"},
		{"fractional integer", evidence.Object{"top": 2.5}, "top"},
		{"fractional integer literal", evidence.Object{"top": json.Number("2.5")}, "top"},
		{"below minimum", evidence.Object{"top": json.Number("0")}, "top"},
		{"above maximum", evidence.Object{"top": int64(101)}, "top"},
		{"number as string", evidence.Object{"ratio": "0.5"}, "ratio"},
		{"number above maximum", evidence.Object{"ratio": 1.5}, "ratio"},
		{"string as number", evidence.Object{"pattern": json.Number("1")}, "pattern"},
		{"boolean as string", evidence.Object{"synthetic": "true"}, "synthetic"},
		{"enum outside", evidence.Object{"metric": "wall"}, "metric"},
		{"list element", evidence.Object{"outcomes": []any{"failed", 3}}, "outcomes"},
		{"list as string", evidence.Object{"outcomes": "failed"}, "outcomes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Validate(decl, tc.args)
			wantInvalid(t, err, tc.field)
		})
	}
	_, _, err := Validate([]Param{{Name: "path", Type: String, Required: true}}, evidence.Object{})
	wantInvalid(t, err, "path")
	_, _, err = Validate(decl, evidence.Object{"zz": 1, "bogus": 2})
	if !strings.Contains(err.Error(), "unknown argument bogus, zz (accepted: top, ratio, pattern, synthetic, metric, outcomes)") {
		t.Errorf("message %q, want the sorted unknown names and the accepted ones", err)
	}
}

// Command-line text takes the declared type: "10" is an integer for an
// integer parameter and the string "10" for a string one.
func TestFlagTextTakesTheDeclaredType(t *testing.T) {
	eff, _, err := Validate(decl, evidence.Object{
		"top": FlagText("10"), "ratio": FlagText("0.25"), "pattern": FlagText("10"),
		"synthetic": FlagText("no"), "metric": FlagText("calls"), "outcomes": FlagText("failed,error"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := evidence.Object{"top": int64(10), "ratio": 0.25, "pattern": "10", "synthetic": false, "metric": "calls"}
	for k, v := range want {
		if eff[k] != v {
			t.Errorf("%s = %#v (%T), want %#v", k, eff[k], eff[k], v)
		}
	}
	if !slices.Equal(eff["outcomes"].([]string), []string{"failed", "error"}) {
		t.Errorf("outcomes = %v", eff["outcomes"])
	}
	eff, _, _ = Validate(decl, evidence.Object{"outcomes": FlagText("")})
	if got := eff["outcomes"].([]string); len(got) != 0 {
		t.Errorf("empty list text = %v", got)
	}
	for _, bad := range []struct{ name, text string }{
		{"top", "ten"}, {"top", "1.5"}, {"top", "0"}, {"ratio", "half"}, {"synthetic", "maybe"}, {"metric", "wall"},
	} {
		_, _, err := Validate(decl, evidence.Object{bad.name: FlagText(bad.text)})
		wantInvalid(t, err, bad.name)
	}
}

func TestJSONSchema(t *testing.T) {
	s := JSONSchema(decl, map[string]evidence.Object{"paths": {"type": "array"}}, []string{"paths"})
	if s["additionalProperties"] != false || s["type"] != "object" {
		t.Errorf("schema %v is not a closed object", s)
	}
	props := s["properties"].(evidence.Object)
	for name, want := range map[string]string{"top": "integer", "ratio": "number", "pattern": "string", "synthetic": "boolean", "metric": "string", "outcomes": "array", "paths": "array"} {
		if p, ok := props[name].(evidence.Object); !ok || p["type"] != want {
			t.Errorf("%s = %v, want type %s", name, props[name], want)
		}
	}
	top := props["top"].(evidence.Object)
	if top["minimum"] != float64(1) || top["maximum"] != float64(100) || top["default"] != int64(20) || top["description"] != "rows" {
		t.Errorf("top = %v", top)
	}
	if m := props["metric"].(evidence.Object); !slices.Equal(m["enum"].([]string), []string{"self", "calls"}) {
		t.Errorf("metric = %v", m)
	}
	req := JSONSchema([]Param{{Name: "b", Type: String, Required: true}, {Name: "a", Type: String, Required: true}}, nil, nil)["required"]
	if !slices.Equal(req.([]string), []string{"a", "b"}) {
		t.Errorf("required = %v", req)
	}
	if r := JSONSchema(nil, nil, nil)["required"].([]string); r == nil || len(r) != 0 {
		t.Errorf("no required names must be an empty list, got %#v", r)
	}
}

func TestTextForPeople(t *testing.T) {
	for _, tc := range []struct {
		p                 Param
		flag, rng, def, t string
	}{
		{Param{Name: "max_rows", Type: Int, Min: F(0), Max: F(1 << 40), Default: int64(100)}, "max-rows", "0 to 1099511627776", "100", "integer"},
		{Param{Name: "top", Type: Int, Min: F(1)}, "top", "at least 1", "", "integer"},
		{Param{Name: "ratio", Type: Number, Max: F(0.5)}, "ratio", "at most 0.5", "", "number"},
		{Param{Name: "delimiter", Type: String, Default: ""}, "delimiter", "", `""`, "string"},
		{Param{Name: "mode", Type: Enum, Enum: []string{"a", "b"}, Default: "a"}, "mode", "", `"a"`, "a|b"},
		{Param{Name: "on", Type: Bool, Default: false}, "on", "", "false", "boolean"},
		{Param{Name: "roots", Type: StringList, Default: []string{"x", "y"}}, "roots", "", `"x,y"`, "string_list"},
	} {
		if got := tc.p.Flag(); got != tc.flag {
			t.Errorf("%s: flag %q, want %q", tc.p.Name, got, tc.flag)
		}
		if got := tc.p.Range(); got != tc.rng {
			t.Errorf("%s: range %q, want %q", tc.p.Name, got, tc.rng)
		}
		if got := tc.p.DefaultText(); got != tc.def {
			t.Errorf("%s: default %q, want %q", tc.p.Name, got, tc.def)
		}
		if got := tc.p.TypeText("|"); got != tc.t {
			t.Errorf("%s: type %q, want %q", tc.p.Name, got, tc.t)
		}
	}
}

// Bounds and values in messages are written in digits: an integer limit
// of a million is "1000000", never "1e+06" (9.21).
func TestRangeMessagesInDigits(t *testing.T) {
	big := []Param{{Name: "max_lines", Type: Int, Min: F(1), Max: F(1_000_000), Doc: "lines"}, {Name: "ratio", Type: Number, Max: F(0.5), Doc: "r"}}
	_, _, err := Validate(big, evidence.Object{"max_lines": int64(100_000_000_000_000)})
	if err == nil || !strings.Contains(err.Error(), "100000000000000 is above the maximum 1000000") {
		t.Fatalf("got %v", err)
	}
	_, _, err = Validate(big, evidence.Object{"ratio": 0.75})
	if err == nil || !strings.Contains(err.Error(), "0.75 is above the maximum 0.5") {
		t.Fatalf("got %v", err)
	}
}
