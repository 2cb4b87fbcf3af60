package registry

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

func TestCoverageRankCheck(t *testing.T) {
	op, _ := OperationByName("summarize_coverage")
	cases := []struct {
		fmts  []string
		given bool
		rank  string
		ok    bool
	}{
		{[]string{"coverage-sqlite"}, true, "missing_lines", false},
		{[]string{"coverage-sqlite"}, true, "percent_covered", false},
		{[]string{"coverage-sqlite"}, true, "executed_lines", true},
		{[]string{"coverage-sqlite"}, false, "", true},
		{[]string{"coverage-sqlite", "coverage-json"}, true, "missing_lines", true},
		{[]string{"coverage-json"}, true, "missing_branches", true},
	}
	for _, c := range cases {
		args := evidence.Object{}
		given := map[string]bool{}
		if c.given {
			args["rank_by"] = c.rank
			given["rank_by"] = true
		}
		err := CheckCompatible(op, c.fmts, given, args)
		var f *evidence.Failure
		if (err == nil) != c.ok || (err != nil && (!errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument)) {
			t.Errorf("%v rank_by=%q: %v", c.fmts, c.rank, err)
		}
	}
	sarifOp, _ := OperationByName("inspect_static_candidates")
	if err := CheckCompatible(sarifOp, []string{"coverage-json"}, nil, nil); err == nil {
		t.Error("inspect_static_candidates accepted a coverage report")
	}
}

// Explicit paths resolve to the right format by suffix or by sniffing.
func TestDetectCoverageAndSARIF(t *testing.T) {
	dir := t.TempDir()
	copyAs := func(src, name string) string {
		b, err := os.ReadFile(filepath.Join("../../testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct{ src, name, want string }{
		{"coverage/branch.coverage", ".coverage", "coverage-sqlite"},
		{"coverage/branch.coverage", "data.sqlite", "coverage-sqlite"},
		{"coverage/branch.coverage.json", "coverage.json", "coverage-json"},
		{"coverage/branch.coverage.json", "x.coverage.json", "coverage-json"},
		{"sarif/gosec.sarif", "results.sarif", "sarif"},
		{"sarif/eslint.sarif", "eslint-output.json", "sarif"},
		{"sarif/binskim-clang.execstack.sarif", "binskim.sarif", "sarif"},
	}
	for _, c := range cases {
		p := copyAs(c.src, c.name)
		prefix, err := formats.ReadPrefix(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := formats.Detect(Formats(), p, prefix, "")
		if err != nil || s.Name != c.want {
			t.Errorf("%s as %s: got %v %v, want %s", c.src, c.name, s, err, c.want)
		}
	}
}
