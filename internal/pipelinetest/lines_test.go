package pipelinetest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// --group-by line through the command: py-spy's hot lines as file:line in
// the table (1-based, as py-spy wrote them), through flameox-decode's
// blocks too; a V8 profile, whose frames are functions, is refused with
// exit 2 and the grouping that works, and no table.
func TestGroupByLineCommand(t *testing.T) {
	py, _ := filepath.Abs("../../testdata/speedscope/pyspy-0.4.1-two-threads.speedscope.json")
	out, err := exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", "--top", "3", py).Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"/tmp/pyspy041/two_threads.py:19", "/tmp/pyspy041/two_threads.py:27", "pooled_lines: 0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	decode := exec.Command(filepath.Join(binDir, "flameox-decode"), py)
	blocks, err := decode.Output()
	if err != nil {
		t.Fatal(err)
	}
	rank := exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", "--top", "3")
	rank.Stdin = bytes.NewReader(blocks)
	piped, err := rank.Output()
	if err != nil || !strings.Contains(string(piped), "two_threads.py:19") {
		t.Errorf("decode | rank --group-by line: %v\n%s", err, piped)
	}

	v8, _ := filepath.Abs("../../testdata/v8/hotspot.cpuprofile")
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", v8)
	cmd.Stderr = &stderr
	got, _ := cmd.Output()
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(stderr.String(), "INVALID_ARGUMENT: group_by line: v8-cpuprofile") ||
		!strings.Contains(stderr.String(), "use group_by function") || strings.Contains(string(got), "rank ") {
		t.Errorf("v8 --group-by line: exit %d, stderr %q, stdout %q", cmd.ProcessState.ExitCode(), stderr.String(), got)
	}
}
