package pipelinetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// flameox-decode NEW | flameox-rank --baseline BASE.jsonl [-]: the new
// side from stdin, the baseline from a file of decoded blocks; parse, 3x
// slower, ranks first with a positive delta, with "-" or no PATH.
func TestCompareFromStdin(t *testing.T) {
	base, _ := filepath.Abs("../../testdata/diff/base.cpuprofile")
	slow, _ := filepath.Abs("../../testdata/diff/slow.cpuprofile")
	blocks, err := exec.Command(filepath.Join(binDir, "flameox-decode"), base).Output()
	if err != nil {
		t.Fatal(err)
	}
	baseFile := filepath.Join(t.TempDir(), "base.jsonl")
	if err := os.WriteFile(baseFile, blocks, 0o644); err != nil {
		t.Fatal(err)
	}
	newBlocks, err := exec.Command(filepath.Join(binDir, "flameox-decode"), slow).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, tail := range [][]string{{"-"}, nil} {
		args := append([]string{"--format", "table", "--top", "2", "--baseline", baseFile}, tail...)
		cmd := exec.Command(filepath.Join(binDir, "flameox-rank"), args...)
		cmd.Stdin = bytes.NewReader(newBlocks)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		first := ""
		for _, ln := range strings.Split(string(out), "\n") {
			if f := strings.Fields(ln); len(f) > 3 && f[0] == "1" {
				first = ln
			}
		}
		if f := strings.Fields(first); len(f) < 5 || f[1] != "parse" || strings.HasPrefix(f[4], "-") {
			t.Errorf("%v: first row %q\n%s", args, first, out)
		}
	}
}
