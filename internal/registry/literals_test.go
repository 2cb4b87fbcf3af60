package registry

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// A synthetic module: every line that ends in "// want" must be reported,
// and no other line.
var literalTree = fstest.MapFS{
	"go.mod": {Data: []byte("module example.com/m\n\ngo 1.26\n")},
	"internal/formats/csvx/csvx.go": {Data: []byte(`package csvx

import "example.com/m/internal/formats"

var Spec = &formats.Spec{Name: "csv", Suffixes: []string{".csv"}}
`)},
	"internal/formats/cov/cov.go": {Data: []byte(`package cov

import "example.com/m/internal/formats"

const (
	FormatJSON   = "coverage-json"
	FormatSQLite = "coverage-sqlite"
)

var JSONSpec = &formats.Spec{Name: FormatJSON}
`)},
	"internal/formats/cov/data/data.go": {Data: []byte(`package data

import (
	"example.com/m/internal/formats"
	"example.com/m/internal/formats/cov"
)

var Spec = &formats.Spec{Name: cov.FormatSQLite}
`)},
	"internal/projection/p/p.go": {Data: []byte(`package p

import (
	"fmt"
	"slices"
)

const FormatJSON = "coverage-json" // want

var byFormat = map[string]int{"csv": 1} // want

func use(in, t, op, registry, evidence, spec, h any) {
	if in.Format == "csv" { // want
	}
	if "pstats" != spec.Name { // want
	}
	switch t.Format {
	case "pstats", "text": // want
	}
	_ = &evidence.Table{Format: "pytest-events"} // want
	_ = Caps{Formats: []string{"sarif"}} // want
	registry.Format("text") // want
	_ = slices.Contains(op.Formats(), "json") // want
	_ = byFormat["csv"] // want
	_ = evidence.Object{"format": "jsonl"} // want
	h.ArtifactFormat = "observations" // want
	x := "summarize_cpu_hotspots" // want
	_ = fmt.Sprintf("%s", "summarize_cpu_hotspots") // want

	// Not formats: JSON keys and values, messages, other flags, roles.
	_ = evidence.Object{"csv": 1, "text": "text", "observations": 2}
	_ = fmt.Sprintf("text %s", "csv")
	args := []string{"--format", "jsonl"}
	_ = Role{Name: "text", Role: "observations"}
	role := "observations"
	if x == "json" {
	}
	switch role {
	case "text":
	}
	_ = "summarize_cpu_hotspots_extra"
}

func formatOf() string {
	return "csv" // want
}

func name() string {
	return "csv"
}
`)},
	"internal/registry/list.go": {Data: []byte(`package registry

var op = &Operation{Name: "summarize_cpu_hotspots", Formats: []string{"csv"}}
`)},
	"internal/projection/p/p_test.go": {Data: []byte(`package p

var _ = T{Format: "csv", Op: "summarize_cpu_hotspots"}
`)},
	"internal/projection/p/testdata/x.go": {Data: []byte(`package x

var _ = T{Format: "csv"}
`)},
	"tools/nested/go.mod": {Data: []byte("module example.com/nested\n")},
	"tools/nested/n.go": {Data: []byte(`package n

var _ = T{Format: "csv"}
`)},
}

func TestLiteralsFindFormatAndOperationNames(t *testing.T) {
	fmts := []string{"csv", "pstats", "text", "json", "jsonl", "coverage-json", "coverage-sqlite", "pytest-events", "sarif", "observations"}
	found, err := literals(literalTree, fmts, []string{"summarize_cpu_hotspots"})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for name, f := range literalTree {
		for i, line := range strings.Split(string(f.Data), "\n") {
			if strings.HasSuffix(line, "// want") {
				want = append(want, fmt.Sprintf("%s:%d", name, i+1))
			}
		}
	}
	var got []string
	for _, l := range found {
		if at := fmt.Sprintf("%s:%d", l.File, l.Line); !slices.Contains(got, at) {
			got = append(got, at)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		for _, l := range found {
			t.Log(l)
		}
		t.Fatalf("reported lines\n%v\nwant\n%v", got, want)
	}
	// Both names on the case line are reported, each with its rule.
	var onCase []string
	for _, l := range found {
		if strings.Contains(l.Why, "switch on t.Format") {
			onCase = append(onCase, l.Name)
		}
	}
	if !slices.Equal(onCase, []string{"pstats", "text"}) {
		t.Errorf("case literals %v, want pstats and text", onCase)
	}
	if s := found[0].String(); !strings.Contains(s, "internal/projection/p/p.go:8: format name \"coverage-json\"") {
		t.Errorf("finding reads %q", s)
	}
}

func TestLiteralsNeedsAModule(t *testing.T) {
	if _, err := literals(fstest.MapFS{"a.go": {Data: []byte("package a\n")}}, nil, nil); err == nil {
		t.Error("a tree without go.mod was scanned")
	}
	bad := fstest.MapFS{"go.mod": {Data: []byte("module m\n")}, "a.go": {Data: []byte("package a\nfunc (\n")}}
	if _, err := literals(bad, nil, nil); err == nil || !strings.Contains(err.Error(), "a.go") {
		t.Errorf("a file that does not parse: %v", err)
	}
}

// Check reports a literal with its place.
func TestCheckSources(t *testing.T) {
	errs := checkSources(fstest.MapFS{
		"go.mod":          {Data: []byte("module github.com/flameox/flameox\n")},
		"internal/x/x.go": {Data: []byte("package x\n\nvar _ = T{Format: \"csv\"}\n")},
	})
	if len(errs) != 1 || !strings.HasPrefix(errs[0], `internal/x/x.go:3: format name "csv"`) {
		t.Fatalf("errors %q, want the one literal", errs)
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"Format":                "format",
		"ArtifactFormat":        "artifact format",
		"FormatJSON":            "format json",
		"format_name":           "format name",
		"JSONSpec":              "json spec",
		"CodeUnsupportedFormat": "code unsupported format",
		"inspectStatic":         "inspect static",
		"fmts":                  "fmts",
	} {
		if got := strings.Join(words(in), " "); got != want {
			t.Errorf("words(%s) = %q, want %q", in, got, want)
		}
	}
	if mentionsFormat("inspectStatic") || mentionsFormat("fmt") || !mentionsFormat("specs") {
		t.Error("mentionsFormat matches parts of words, or misses a plural")
	}
}
