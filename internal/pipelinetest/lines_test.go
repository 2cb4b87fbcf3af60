package pipelinetest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/formats/formatstest"
)

// --group-by line through the command: py-spy's hot lines as file:line in
// the table (1-based, as py-spy wrote them), through flameox-decode's
// blocks too; V8's positionTicks, pprof and perf srcline likewise; collapsed stacks, whose
// frames are functions, are refused with exit 2 and the grouping that
// works, and no table.
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

	// V8's positionTicks: the hot line of parse, file:line, direct and
	// through flameox-decode's blocks.
	v8, _ := filepath.Abs("../../testdata/diff/slow.cpuprofile")
	out, err = exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", "--top", "3", v8).Output()
	if err != nil || !strings.Contains(string(out), "work.js:9 ") || !strings.Contains(string(out), "lines are positionTicks") {
		t.Errorf("v8 --group-by line: %v\n%s", err, out)
	}
	if blocks, err = exec.Command(filepath.Join(binDir, "flameox-decode"), v8).Output(); err != nil {
		t.Fatal(err)
	}
	rank = exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", "--top", "3")
	rank.Stdin = bytes.NewReader(blocks)
	if piped, err = rank.Output(); err != nil || !strings.Contains(string(piped), "work.js:9 ") {
		t.Errorf("decode | rank --group-by line (v8): %v\n%s", err, piped)
	}

	// pprof's location lines, with no option: the hot line of spin, as
	// go tool pprof -top -lines lists it.
	pp, _ := filepath.Abs("../../testdata/pprof/cpu.pb.gz")
	out, err = exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", "--top", "3", pp).Output()
	if err != nil || !strings.Contains(string(out), "main.go:22 ") || !strings.Contains(string(out), "as pprof -lines") {
		t.Errorf("pprof --group-by line: %v\n%s", err, out)
	}
	if blocks, err = exec.Command(filepath.Join(binDir, "flameox-decode"), pp).Output(); err != nil {
		t.Fatal(err)
	}
	rank = exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", "--top", "3")
	rank.Stdin = bytes.NewReader(blocks)
	if piped, err = rank.Output(); err != nil || !strings.Contains(string(piped), "main.go:22 ") {
		t.Errorf("decode | rank --group-by line (pprof): %v\n%s", err, piped)
	}

	// perf script's srcline, and perf.data with the srcline option; a
	// perf script without srcline is refused with the perf script fields
	// that print them.
	perfTxt, _ := filepath.Abs("../../testdata/perf/lines.srcline.perf.txt")
	out, err = exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", "--top", "3", perfTxt).Output()
	if err != nil || !strings.Contains(string(out), "lines.c:10 ") || !strings.Contains(string(out), "lines are perf's srcline") {
		t.Errorf("perf script --group-by line: %v\n%s", err, out)
	}
	if _, err := exec.LookPath("perf"); err == nil {
		formatstest.InstallPerfBinary(t, "flameox-lines")
		perfData, _ := filepath.Abs("../../testdata/perf/lines.perf.data")
		out, err = exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", "--option", "srcline=true", "--top", "3", perfData).Output()
		if err != nil || !strings.Contains(string(out), "lines.c:10 ") {
			t.Errorf("perf.data --group-by line: %v\n%s", err, out)
		}
	}
	plain, _ := filepath.Abs("../../testdata/perf/hot.perf.txt")
	var perr bytes.Buffer
	pc := exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", plain)
	pc.Stderr = &perr
	_, _ = pc.Output()
	if pc.ProcessState.ExitCode() != 2 || !strings.Contains(perr.String(), "has no cpu.lines table") || !strings.Contains(perr.String(), "srcline") {
		t.Errorf("perf script without srcline --group-by line: exit %d, stderr %q", pc.ProcessState.ExitCode(), perr.String())
	}

	// Collapsed stacks carry no lines: refused with exit 2 and the
	// grouping that works, and no table.
	folded, _ := filepath.Abs("../../testdata/collapsed/hot.folded")
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", "--group-by", "line", folded)
	cmd.Stderr = &stderr
	got, _ := cmd.Output()
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(stderr.String(), "INVALID_ARGUMENT: group_by line: collapsed") ||
		!strings.Contains(stderr.String(), "use group_by function") || strings.Contains(string(got), "rank ") {
		t.Errorf("collapsed --group-by line: exit %d, stderr %q, stdout %q", cmd.ProcessState.ExitCode(), stderr.String(), got)
	}
}
