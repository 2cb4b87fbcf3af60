package pipelinetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
)

// docs/tutorial.md's commands (its lines starting with "$ ") run in order
// in one directory, and its annotated row explains exactly the columns
// the ranked table has, so the tutorial cannot drift from the commands.
func TestTutorial(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("the tutorial captures a Node workload; node is needed: %v", err)
	}
	root, _ := filepath.Abs("../..")
	b, err := os.ReadFile(filepath.Join(root, "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	dir := t.TempDir()
	env := append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+dir, "FLAMEOX_REPO="+root)
	n := 0
	for l := range strings.Lines(doc) {
		line, ok := strings.CutPrefix(strings.TrimSuffix(l, "\n"), "$ ")
		if !ok {
			continue
		}
		n++
		cmd := exec.Command("bash", "-o", "pipefail", "-c", line)
		cmd.Dir, cmd.Env = dir, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if code := runWithin(t, 120*time.Second, cmd); code != 0 {
			t.Fatalf("tutorial step %q: exit %d\n%s", line, code, stderr.String())
		}
	}
	if n < 8 {
		t.Fatalf("found %d tutorial commands, want every step's", n)
	}

	// The ranked table's columns, and the first row, as the run made them.
	var columns []string
	var first evidence.Object
	ranked, err := os.ReadFile(filepath.Join(dir, "ranked.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(ranked)) {
		v, err := evidence.ParseValue([]byte(l), 64)
		if err != nil {
			t.Fatal(err)
		}
		o := v.(evidence.Object)
		switch o["kind"] {
		case "table":
			for _, c := range o["columns"].([]any) {
				columns = append(columns, c.(evidence.Object)["name"].(string))
			}
		case "row":
			if first == nil {
				first = o["values"].(evidence.Object)
			}
		}
	}
	var explained []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(doc, -1) {
		explained = append(explained, m[1])
	}
	slices.Sort(columns)
	slices.Sort(explained)
	if !slices.Equal(columns, explained) {
		t.Errorf("the tutorial explains columns %v; the ranked table has %v", explained, columns)
	}
	if first["function"] != "crunchPrimes" || fmt.Sprint(first["rank"]) != "1" {
		t.Errorf("the first ranked row is %v; the tutorial annotates crunchPrimes at rank 1", first)
	}
	// The bundle answered a new question: caller edges, from the preserved bytes.
	if callers, err := os.ReadFile(filepath.Join(dir, "callers.jsonl")); err != nil || !strings.Contains(string(callers), `"table_id":"rank.cpu.caller_edges"`) || !strings.Contains(string(callers), `"kind":"row"`) {
		t.Errorf("re-analysis of the bundle gave no caller edges: %v\n%.500s", err, callers)
	}
}
