package sarif

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// copyTree copies a fixture source directory (regular files only).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// runProducer runs a linter that exits 1 when it finds issues.
func runProducer(t *testing.T, dir string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
}

func gosecBinary(t *testing.T) string {
	if p := os.Getenv("GOSEC"); p != "" {
		return p
	}
	if p, err := exec.LookPath("gosec"); err == nil {
		return p
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "gosec")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("gosec is not installed (go install github.com/securego/gosec/v2/cmd/gosec@v2.30.0)")
	return ""
}

// A fresh gosec run: its SARIF log decodes to exactly the issues of its
// JSON report, relative to wherever it ran.
func TestLiveGosec(t *testing.T) {
	gosec := gosecBinary(t)
	dir := t.TempDir()
	copyTree(t, filepath.Join(testdata, "gosec", "src"), dir)
	runProducer(t, dir, gosec, "-quiet", "-fmt", "sarif", "-out", "out.sarif", "./...")
	runProducer(t, dir, gosec, "-quiet", "-fmt", "json", "-out", "out.json", "./...")
	var native struct {
		Issues []struct {
			RuleID string `json:"rule_id"`
			File   string `json:"file"`
			Line   string `json:"line"`
			Column string `json:"column"`
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &native); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	var want []finding
	for _, is := range native.Issues {
		rel, _ := filepath.Rel(real, is.File)
		line, _ := strconv.ParseInt(strings.SplitN(is.Line, "-", 2)[0], 10, 64)
		col, _ := strconv.ParseInt(is.Column, 10, 64)
		want = append(want, finding{path: rel, line: line, col: col, rule: is.RuleID})
	}
	if len(want) == 0 {
		t.Fatal("gosec found nothing in a deliberately insecure program")
	}
	s, err := decodeFile(t, filepath.Join(dir, "out.sarif"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []finding
	for _, r := range one(t, s).Rows {
		if r["location_status"] != StatusOK {
			t.Fatalf("location rejected: %v", r)
		}
		f := rowFinding(r, false)
		f.level = ""
		got = append(got, f)
	}
	if g, w := sortedStrings(got), sortedStrings(want); !slices.Equal(g, w) {
		t.Fatalf("live gosec SARIF differs from its JSON:\n got %v\nwant %v", g, w)
	}
}

// A fresh ESLint run with Microsoft's SARIF formatter: absolute file://
// URIs normalize against the directory it ran in.
func TestLiveESLint(t *testing.T) {
	npm := os.Getenv("FLAMEOX_SARIF_NPM")
	if npm == "" {
		npm = filepath.Join(testdata, "..", "..", ".cache", "sarif-npm")
	}
	npm, _ = filepath.Abs(npm)
	eslint := filepath.Join(npm, "node_modules", ".bin", "eslint")
	formatter := filepath.Join(npm, "node_modules", "@microsoft", "eslint-formatter-sarif", "sarif.js")
	for _, p := range []string{eslint, formatter} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("ESLint with the SARIF formatter is not installed in %s (npm install --prefix %s eslint@10.15.0 @microsoft/eslint-formatter-sarif@3.1.0)", npm, npm)
		}
	}
	dir := t.TempDir()
	copyTree(t, filepath.Join(testdata, "eslint", "src"), dir)
	runProducer(t, dir, eslint, "-f", formatter, "-o", "out.sarif", ".")
	runProducer(t, dir, eslint, "-f", "json", "-o", "out.json", ".")
	var native []struct {
		FilePath string `json:"filePath"`
		Messages []struct {
			RuleID    string `json:"ruleId"`
			Severity  int    `json:"severity"`
			Line      int64  `json:"line"`
			Column    int64  `json:"column"`
			EndLine   int64  `json:"endLine"`
			EndColumn int64  `json:"endColumn"`
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &native); err != nil {
		t.Fatal(err)
	}
	var want []finding
	for _, f := range native {
		rel, _ := filepath.Rel(dir, f.FilePath)
		for _, m := range f.Messages {
			want = append(want, finding{rel, m.Line, m.Column, m.EndLine, m.EndColumn, m.RuleID, map[int]string{1: "warning", 2: "error"}[m.Severity]})
		}
	}
	s, err := decodeFile(t, filepath.Join(dir, "out.sarif"), evidence.Object{OptSourceRoot: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []finding
	for _, r := range one(t, s).Rows {
		if r["location_status"] != StatusOK {
			t.Fatalf("location rejected: %v", r)
		}
		got = append(got, rowFinding(r, true))
	}
	if g, w := sortedStrings(got), sortedStrings(want); !slices.Equal(g, w) || len(want) == 0 {
		t.Fatalf("live ESLint SARIF differs from its JSON:\n got %v\nwant %v", g, w)
	}
}
