package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flameox-preserve-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "flameox-preserve")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build flameox-preserve: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func runBinary(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

func encode(t *testing.T, blocks ...evidence.Marshaler) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	for _, b := range blocks {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// profileStream is what capture | decode would print for the committed
// Node CPU profile: provenance, the artifact, a cpu.frames table and a
// failure located in the artifact.
func profileStream(t *testing.T) ([]byte, *evidence.Artifact) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "fib.cpuprofile"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	a := &evidence.Artifact{ID: "sha256:" + hex.EncodeToString(sum[:]), Path: path, Size: int64(len(data)),
		Name: "fib.cpuprofile", Role: "cpu-profile", Format: "v8-cpuprofile",
		Producer: evidence.Producer{Name: "node", Version: "v20.20.2"}, CaptureID: "cap-fib"}
	exit := 0
	c := &evidence.Capture{ID: "cap-fib", Provider: evidence.Producer{Name: "node-cpu-profile", Version: "1"},
		Argv: []string{"node", "fib.js"}, Command: []string{"node", "--cpu-prof", "fib.js"}, Cwd: "/work",
		StartedAt: time.Date(2026, 11, 30, 10, 49, 0, 0, time.UTC), EndedAt: time.Date(2026, 11, 30, 10, 49, 1, 0, time.UTC),
		ExitCode: &exit, Outcome: evidence.OutcomeCompleted}
	tab := &evidence.Table{ID: a.Digest()[:12] + ".cpu.frames", Name: table.CPUFrames.Name, Operation: "decode", Format: "v8-cpuprofile",
		Columns: table.CPUFrames.EvidenceColumns("samples"), Evidence: evidence.Observed, ArtifactIDs: []string{a.ID},
		Decoder: evidence.Producer{Name: "v8-cpuprofile", Version: "1"}, Arguments: evidence.Object{}}
	row := func(id, fn string, self, incl float64) *evidence.Row {
		return &evidence.Row{TableID: tab.ID, Values: evidence.Object{
			"artifact_id": a.ID, "frame_id": id, "function": fn, "file": "[eval]", "line": 1, "column": 10,
			"module": nil, "symbolization": table.Symbolized, "thread": nil, "process": nil,
			"self_weight": self, "inclusive_weight": incl, "inclusive_occurrence_weight": nil, "calls": nil, "primitive_calls": nil}}
	}
	sumBlock := &evidence.Summary{TableID: tab.ID, RowsObserved: 2, RowsEmitted: 2, Complete: true,
		Metrics: map[string]evidence.Metric{table.MetricSamples: {Value: 41, Unit: "samples"}}}
	fail := &evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "timeDeltas shorter than samples",
		Location: evidence.Location{ArtifactID: a.ID, Field: "timeDeltas"}}
	return encode(t, c, a, tab, row("3", "fib", 30, 40), row("2", "(program)", 1, 1), sumBlock, fail), a
}

func TestPreserve(t *testing.T) {
	in, a := profileStream(t)
	store := t.TempDir()
	r := runBinary(t, in, "--store", store)
	// The stream carries a DECODE_FAILURE: it is preserved and forwarded
	// once, the bundle is published, and the status is that failure's,
	// without naming it on stderr again (decode did).
	if r.code != evidence.ExitCode(evidence.CodeDecodeFailure) || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q, stdout %s", r.code, r.stderr, r.stdout)
	}
	if !strings.HasPrefix(r.stdout, string(in)) {
		t.Fatalf("stdout does not start with the input blocks, unchanged:\n%s", r.stdout)
	}
	last := strings.TrimSuffix(strings.TrimPrefix(r.stdout, string(in)), "\n")
	if strings.Contains(last, "\n") {
		t.Fatalf("more than the bundle block after the input: %s", last)
	}
	v, err := evidence.ParseValue([]byte(last), 0)
	if err != nil {
		t.Fatal(err)
	}
	blk := v.(evidence.Object)
	if blk["kind"] != evidence.KindBundle {
		t.Fatalf("last line is not a bundle block: %s", last)
	}
	dir, _ := blk["path"].(string)
	rd, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rd.ID.String() != blk["bundle_id"] || dir != bundle.Dir(store, rd.ID) {
		t.Errorf("bundle %s at %s, block says %v at %s", rd.ID, bundle.Dir(store, rd.ID), blk["bundle_id"], dir)
	}
	arts := rd.Artifacts()
	if len(arts) != 1 || arts[0].ID != a.ID {
		t.Fatalf("artifacts %v", arts)
	}
	got, _ := os.ReadFile(arts[0].Path)
	want, _ := os.ReadFile(a.Path)
	if !bytes.Equal(got, want) {
		t.Error("preserved native bytes differ from the profile")
	}
	if len(rd.Failures()) != 1 || rd.Manifest.Failures[0].Native != "native/"+a.Digest() {
		t.Errorf("failure not preserved beside the native bytes: %+v", rd.Manifest.Failures)
	}

	// The same stream again: the same bundle, reused.
	again := runBinary(t, in, "--store", store)
	if again.code != r.code || again.stdout != r.stdout {
		t.Errorf("second run: exit %d, output differs:\n%s", again.code, again.stdout)
	}
}

func TestFailures(t *testing.T) {
	in, a := profileStream(t)
	lines := strings.SplitAfter(string(in), "\n")
	bad := *a
	bad.Size++
	tests := []struct {
		name  string
		args  []string
		stdin []byte
		code  evidence.Code
		line  int
	}{
		{"no store", []string{}, in, evidence.CodeInvalidArgument, 0},
		{"unknown flag", []string{"--store", "x", "--bogus"}, in, evidence.CodeInvalidArgument, 0},
		{"rows without their header", nil, []byte(lines[0] + lines[1] + lines[3]), evidence.CodeInvalidArgument, 3},
		{"not a block", nil, []byte(lines[0] + "[1,2]\n"), evidence.CodeInvalidArgument, 2},
		{"native size mismatch", nil, encode(t, &bad), evidence.CodeIntegrity, 0},
		{"empty input", nil, nil, evidence.CodeInvalidArgument, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if args == nil {
				args = []string{"--store", t.TempDir()}
			}
			r := runBinary(t, tt.stdin, args...)
			if r.code != evidence.ExitCode(tt.code) {
				t.Errorf("exit %d, want %d (%s)", r.code, evidence.ExitCode(tt.code), tt.code)
			}
			if n := strings.Count(r.stderr, "\n"); n != 1 || !strings.HasPrefix(r.stderr, "flameox-preserve: "+string(tt.code)) {
				t.Errorf("stderr is not one line naming %s: %q", tt.code, r.stderr)
			}
			out := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			v, err := evidence.ParseValue([]byte(out[len(out)-1]), 0)
			if err != nil {
				t.Fatalf("last stdout line: %v", err)
			}
			f, err := evidence.FailureFrom(v.(evidence.Object))
			if err != nil || f.Code != tt.code {
				t.Fatalf("last stdout line is not a %s failure block: %s", tt.code, out[len(out)-1])
			}
			if tt.line > 0 && f.Location.Line != tt.line {
				t.Errorf("failure at line %d, want %d", f.Location.Line, tt.line)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	r := runBinary(t, nil, "--help")
	if r.code != 0 {
		t.Fatalf("--help exits %d", r.code)
	}
	for _, want := range []string{"Examples:", "flameox-preserve --store ./evidence", "flameox-decode --bundle", "--store=DIR"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--help lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestInterrupt(t *testing.T) {
	store := t.TempDir()
	in, _ := profileStream(t)
	cmd := exec.Command(binary, "--store", store)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	// Part of a stream, then silence: the command waits on stdin.
	if _, err := stdin.Write(in[:bytes.IndexByte(in, '\n')+1]); err != nil {
		t.Fatal(err)
	}
	// The work directory exists once the signal handler is installed.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if entries, _ := os.ReadDir(filepath.Join(store, "tmp")); len(entries) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("flameox-preserve never started its bundle")
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != evidence.ExitCode(evidence.CodeCancelled) {
		t.Fatalf("interrupted run ended with %v, want exit %d", err, evidence.ExitCode(evidence.CodeCancelled))
	}
	if !strings.Contains(out.String(), `"code":"CANCELLED"`) {
		t.Errorf("no CANCELLED failure block on stdout: %s", out.String())
	}
	if entries, _ := os.ReadDir(filepath.Join(store, "tmp")); len(entries) != 0 {
		t.Errorf("an interrupted run left %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Join(store, "bundles")); len(entries) != 0 {
		t.Errorf("an interrupted run published %v", entries)
	}
}

// TestForgedArtifactPaths: artifact blocks are input, so the path check of
// explicit paths applies to theirs too. A FIFO must not hang preserve (it
// used to block in open, deaf to SIGINT, leaving tmp/build-*), a device
// must not be copied forever, and what decode refuses preserve refuses.
func TestForgedArtifactPaths(t *testing.T) {
	_, a := profileStream(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*evidence.Artifact)
		code evidence.Code
	}{
		{"fifo", func(b *evidence.Artifact) { b.Path = fifo }, evidence.CodeInvalidArgument},
		{"dev zero", func(b *evidence.Artifact) { b.Path = "/dev/zero" }, evidence.CodeInvalidArgument},
		{"directory", func(b *evidence.Artifact) { b.Path = t.TempDir() }, evidence.CodeInvalidArgument},
		{"relative", func(b *evidence.Artifact) { b.Path = "fib.cpuprofile" }, evidence.CodeInvalidArgument},
		{"negative size", func(b *evidence.Artifact) { b.Size = -1 }, evidence.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := *a
			tt.edit(&b)
			store := t.TempDir()
			cmd := exec.Command(binary, "--store", store)
			cmd.Stdin = bytes.NewReader(encode(t, &b))
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			timer := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
			err := cmd.Wait()
			if !timer.Stop() {
				t.Fatalf("flameox-preserve still ran after 10 s on %s", b.Path)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != evidence.ExitCode(tt.code) {
				t.Fatalf("ended with %v, want exit %d (%s); stdout %s", err, evidence.ExitCode(tt.code), tt.code, out.String())
			}
			if !strings.Contains(out.String(), `"code":"`+string(tt.code)+`"`) {
				t.Errorf("no %s failure block: %s", tt.code, out.String())
			}
			if entries, _ := os.ReadDir(filepath.Join(store, "tmp")); len(entries) != 0 {
				t.Errorf("a refused run left %v", entries)
			}
		})
	}
}
