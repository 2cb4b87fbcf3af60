package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/wire"
)

func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs node (Node.js 12 or newer) on PATH")
	}
}

type outcome struct {
	c      *evidence.Capture
	err    error
	arts   []*evidence.Artifact
	blocks int
}

func capt(t *testing.T, argv []string, args evidence.Object, opt capture.Options) *outcome {
	t.Helper()
	return captCtx(t, context.Background(), argv, args, opt)
}

func captCtx(t *testing.T, ctx context.Context, argv []string, args evidence.Object, opt capture.Options) *outcome {
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if opt.ScratchRoot == "" {
		opt.ScratchRoot = t.TempDir()
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	c, err := capture.Run(ctx, Provider, &capture.Request{Argv: argv, Cwd: testdata, Args: args}, opt, w)
	if ferr := w.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	o := &outcome{c: c, err: err}
	r := wire.NewReader(&buf)
	for {
		b, err := r.Next()
		if err != nil {
			break
		}
		o.blocks++
		if b.Kind() == evidence.KindArtifact {
			a, err := evidence.ArtifactFrom(b.Obj)
			if err != nil {
				t.Fatal(err)
			}
			o.arts = append(o.arts, a)
		}
	}
	return o
}

// profileName is Node's generated name: CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile.
var profileName = regexp.MustCompile(`^CPU\.\d{8}\.\d{6}\.(\d+)\.(\d+)\.(\d+)\.cpuprofile$`)

// checkProfile asserts an artifact is a V8 CPU profile Node wrote and
// returns its pid and thread id.
func checkProfile(t *testing.T, a *evidence.Artifact) (pid, tid string) {
	t.Helper()
	m := profileName.FindStringSubmatch(a.Name)
	if m == nil {
		t.Fatalf("artifact name %q is not Node's generated profile name", a.Name)
	}
	if a.Role != "cpu-profile" || a.Format != "v8-cpuprofile" || a.Producer.Name != "node" || !strings.HasPrefix(a.Producer.Version, "v") {
		t.Errorf("artifact %+v", a)
	}
	b, err := os.ReadFile(a.Path)
	if err != nil {
		t.Fatal(err)
	}
	var prof struct {
		Nodes   []json.RawMessage `json:"nodes"`
		Samples []int             `json:"samples"`
	}
	if err := json.Unmarshal(b, &prof); err != nil || len(prof.Nodes) == 0 {
		t.Fatalf("%s is not a V8 CPU profile: %v", a.Path, err)
	}
	return m[1], m[2]
}

func TestWorkerThreadsOneArtifactEach(t *testing.T) {
	needNode(t)
	o := capt(t, []string{"node", "workers.js"}, evidence.Object{"sampling_interval_us": 250}, capture.Options{})
	if o.err != nil {
		t.Fatal(o.err)
	}
	if len(o.arts) != 3 {
		t.Fatalf("%d profiles, want 3 (main thread and two workers)", len(o.arts))
	}
	var tids []string
	pids := map[string]bool{}
	for _, a := range o.arts {
		pid, tid := checkProfile(t, a)
		pids[pid] = true
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	if len(pids) != 1 || !slices.Equal(tids, []string{"0", "1", "2"}) {
		t.Errorf("pids %v thread ids %v, want one process with threads 0, 1, 2", pids, tids)
	}
	c := o.c
	if !slices.Contains(c.Command, "--cpu-prof-interval=250") || c.Command[1] != "--cpu-prof" {
		t.Errorf("command %v", c.Command)
	}
	if c.Executable == nil || len(c.Executable.SHA256) != 64 || !filepath.IsAbs(c.Executable.Path) {
		t.Errorf("executable %+v", c.Executable)
	}
	sum, err := capture.FileSHA256(c.Executable.Path)
	if err != nil || sum != c.Executable.SHA256 {
		t.Errorf("recorded sha256 %s, node hashes to %s (%v)", c.Executable.SHA256, sum, err)
	}
	if c.Provider.Name != "node-cpu-profile" || !strings.HasPrefix(c.Provider.Version, "v") {
		t.Errorf("provider %+v", c.Provider)
	}
	if got := c.Console["stdout"].Text; got != "workers done\n" {
		t.Errorf("stdout %q", got)
	}
}

func TestForkedChildProfiled(t *testing.T) {
	needNode(t)
	o := capt(t, []string{"node", "fork.js"}, nil, capture.Options{})
	if o.err != nil {
		t.Fatal(o.err)
	}
	pids := map[string]bool{}
	for _, a := range o.arts {
		pid, _ := checkProfile(t, a)
		pids[pid] = true
	}
	if len(o.arts) != 2 || len(pids) != 2 {
		t.Fatalf("%d profiles from %d processes, want 2 and 2", len(o.arts), len(pids))
	}
}

func TestFailedScriptKeepsProfile(t *testing.T) {
	needNode(t)
	o := capt(t, []string{"node", "throws.js"}, nil, capture.Options{})
	if evidence.CodeOf(o.err) != evidence.CodeCaptureFailed || o.c.Outcome != evidence.OutcomeWorkloadFailed {
		t.Fatalf("err %v outcome %q", o.err, o.c.Outcome)
	}
	if *o.c.ExitCode != 1 || !strings.Contains(o.c.Console["stderr"].Text, "workload failed on purpose") {
		t.Errorf("exit %v stderr %q", *o.c.ExitCode, o.c.Console["stderr"].Text)
	}
	if len(o.arts) != 1 {
		t.Fatalf("%d profiles, want the one Node wrote before exiting", len(o.arts))
	}
	checkProfile(t, o.arts[0])
}

func TestCancelEndsNodeTree(t *testing.T) {
	needNode(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *outcome, 1)
	go func() {
		done <- captCtx(t, ctx, []string{"node", "grandchild.js", pidfile}, nil, capture.Options{ScratchRoot: root})
	}()
	var pids []string
	for pids == nil {
		select {
		case o := <-done:
			t.Fatalf("capture ended before the workload started its grandchild: %v", o.err)
		default:
		}
		if b, err := os.ReadFile(pidfile); err == nil {
			pids = strings.Fields(string(b))
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	cancel()
	o := <-done
	if evidence.CodeOf(o.err) != evidence.CodeCancelled || o.c.Outcome != evidence.OutcomeCancelled {
		t.Fatalf("err %v outcome %q", o.err, o.c.Outcome)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %s survived cancellation", pid)
		}
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("scratch root keeps %d entries", len(ents))
	}
	if len(o.arts) != 0 {
		t.Errorf("a cancelled capture emitted %d artifacts", len(o.arts))
	}
}

// alive reports whether a process exists and is not a zombie.
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || len(b) < i+3 || b[i+2] != 'Z'
}

func TestRejectedBeforeRunning(t *testing.T) {
	needNode(t)
	for _, tc := range []struct {
		name string
		argv []string
		args evidence.Object
		code evidence.Code
	}{
		{"not node", []string{"python3", "x.py"}, nil, evidence.CodeInvalidArgument},
		{"own profiler flags", []string{"node", "--cpu-prof-dir=/tmp", "workers.js"}, nil, evidence.CodeInvalidArgument},
		{"interval type", []string{"node", "workers.js"}, evidence.Object{"sampling_interval_us": "fast"}, evidence.CodeInvalidArgument},
		{"interval range", []string{"node", "workers.js"}, evidence.Object{"sampling_interval_us": 0}, evidence.CodeInvalidArgument},
		{"unknown argument", []string{"node", "workers.js"}, evidence.Object{"metric": "self"}, evidence.CodeInvalidArgument},
		{"missing node path", []string{"/nonexistent/node", "workers.js"}, nil, evidence.CodeProviderUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := capt(t, tc.argv, tc.args, capture.Options{})
			if evidence.CodeOf(o.err) != tc.code || o.c != nil || o.blocks != 0 {
				t.Fatalf("err %v capture %v blocks %d", o.err, o.c, o.blocks)
			}
		})
	}
}

func TestNodeMissingFromPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	o := capt(t, []string{"node", "workers.js"}, nil, capture.Options{})
	var f *evidence.Failure
	if !errors.As(o.err, &f) || f.Code != evidence.CodeProviderUnavailable {
		t.Fatalf("err %v", o.err)
	}
	if f.Retry == nil || f.Retry.Action != Guidance || len(f.Retry.Argv) != 0 {
		t.Errorf("retry %+v, want host guidance", f.Retry)
	}
	if o.blocks != 0 {
		t.Errorf("%d blocks written", o.blocks)
	}
}

// TestBudgetEndedSaysWhyNoProfile: a Node run ended by its budget writes
// no profile (V8 flushes --cpu-prof only at a normal exit); the capture
// block says so instead of leaving the missing profile unexplained.
func TestBudgetEndedSaysWhyNoProfile(t *testing.T) {
	needNode(t)
	o := capt(t, []string{"node", "-e", "setInterval(() => {}, 1000)"}, nil,
		capture.Options{Budget: capture.Budget{TimeoutSeconds: 1}})
	if evidence.CodeOf(o.err) != evidence.CodeLimitExceeded || o.c.Outcome != evidence.OutcomeLimitExceeded {
		t.Fatalf("err %v outcome %q", o.err, o.c.Outcome)
	}
	if len(o.arts) != 0 {
		t.Fatalf("%d artifacts", len(o.arts))
	}
	notes := strings.Join(o.c.Notes, "\n")
	if !strings.Contains(notes, "no cpu-profile output") || !strings.Contains(notes, "timeout_seconds") ||
		!strings.Contains(notes, "normal exit") {
		t.Errorf("notes %q do not say why no profile was flushed", o.c.Notes)
	}
}
