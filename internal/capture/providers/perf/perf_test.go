package perf

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

func validArgs(t *testing.T, args evidence.Object) evidence.Object {
	t.Helper()
	out, _, err := param.Validate(Provider.Params, args)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var resolved = &capture.Resolved{Executable: &evidence.Executable{Path: "/usr/bin/perf", SHA256: "x"}, Version: "6.1"}

func TestPlan(t *testing.T) {
	cases := []struct {
		name string
		args evidence.Object
		want []string
	}{
		{"defaults", evidence.Object{}, []string{"/usr/bin/perf", "record", "--call-graph", "fp", "-F", "999"}},
		{"dwarf", evidence.Object{ArgCallGraph: "dwarf", ArgFrequency: int64(99)}, []string{"/usr/bin/perf", "record", "--call-graph", "dwarf", "-F", "99"}},
		{"event", evidence.Object{ArgEvent: "cpu-clock"}, []string{"/usr/bin/perf", "record", "--call-graph", "fp", "-F", "999", "-e", "cpu-clock"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scratch := t.TempDir()
			req := &capture.Request{Provider: "perf", Argv: []string{"./bench", "--n", "3"}, Cwd: "/work", Args: validArgs(t, c.args)}
			p, err := plan(req, scratch, resolved)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(scratch, "perf")
			want := append(c.want, "-o", filepath.Join(out, OutputName), "--", "./bench", "--n", "3")
			if !slices.Equal(p.Command, want) {
				t.Fatalf("command %q, want %q", p.Command, want)
			}
			if p.OutputDir != out || p.Dir != "/work" {
				t.Fatalf("output dir %s, dir %s", p.OutputDir, p.Dir)
			}
			if st, err := os.Stat(out); err != nil || !st.IsDir() {
				t.Fatalf("output dir not created: %v", err)
			}
		})
	}
}

func TestPlanRejects(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		args evidence.Object
	}{
		{"no workload", nil, evidence.Object{}},
		{"option as event", []string{"true"}, evidence.Object{ArgEvent: "--output=/etc/x"}},
		{"event with space", []string{"true"}, evidence.Object{ArgEvent: "cycles -a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := &capture.Request{Argv: c.argv, Cwd: "/", Args: validArgs(t, c.args)}
			_, err := plan(req, t.TempDir(), resolved)
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument {
				t.Fatalf("want INVALID_ARGUMENT, got %v", err)
			}
		})
	}
}

func TestParamsReject(t *testing.T) {
	for name, args := range map[string]evidence.Object{
		"bad call graph": {ArgCallGraph: "frames"},
		"zero frequency": {ArgFrequency: int64(0)},
		"metric":         {"metric": "cumulative"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := param.Validate(Provider.Params, args); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// needRecording skips when perf is absent or this user may not sample.
func needRecording(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf is not on PATH; install linux-perf to record")
	}
	if err := probePerfEvent(); err != nil {
		t.Skipf("perf_event_open refused for this user (%v): run as root or lower kernel.perf_event_paranoid", err)
	}
}

func TestResolveHere(t *testing.T) {
	needRecording(t)
	r, err := Provider.Resolve(context.Background(), &capture.Request{})
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	if r.Executable.Path == "" || len(r.Executable.SHA256) != 64 || r.Version == "" {
		t.Fatalf("resolved %+v %+v", r, r.Executable)
	}
}

func TestResolveMissingPerf(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Provider.Resolve(context.Background(), &capture.Request{})
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || f.Retry.Action == "" {
		t.Fatalf("want PROVIDER_UNAVAILABLE with guidance, got %#v", err)
	}
}

func TestPermissionGuidance(t *testing.T) {
	defer func(p func() error) { probe = p }(probe)
	for _, c := range []struct {
		errno syscall.Errno
	}{{syscall.EACCES}, {syscall.EPERM}, {syscall.ENOSYS}, {syscall.ENOENT}, {syscall.EINVAL}} {
		t.Run(c.errno.Error(), func(t *testing.T) {
			probe = func() error { return c.errno }
			err := permitted()
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable {
				t.Fatalf("want PROVIDER_UNAVAILABLE, got %v", err)
			}
			if f.Details["perf_event_paranoid"] == nil {
				t.Fatal("no perf_event_paranoid in details")
			}
			if c.errno != syscall.EINVAL && (f.Retry == nil || f.Retry.Action == "") {
				t.Fatal("no guidance")
			}
		})
	}
}

// TestProbeHere runs the real perf_event_open probe. As root (or with
// perf_event_paranoid <= 2) it must succeed, as perf record does.
func TestProbeHere(t *testing.T) {
	if err := probePerfEvent(); err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("probe failed as root: %v", err)
		}
		t.Logf("probe refused for this user: %v", err)
	}
}

// TestRecordPlanRuns executes a plan's command the way the capture runtime
// will and checks that the declared output appears.
func TestRecordPlanRuns(t *testing.T) {
	needRecording(t)
	r, err := Provider.Resolve(context.Background(), &capture.Request{})
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	req := &capture.Request{Argv: []string{"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"}, Cwd: scratch,
		Args: validArgs(t, evidence.Object{ArgEvent: "cpu-clock"})}
	p, err := plan(req, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p.Command[0], p.Command[1:]...)
	cmd.Dir = p.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", p.Command, err, out)
	}
	matches, _ := filepath.Glob(filepath.Join(p.OutputDir, Provider.Artifacts[0].Pattern))
	if len(matches) != 1 {
		t.Fatalf("declared output missing: %v", matches)
	}
	b := make([]byte, 8)
	f, err := os.Open(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Read(b); err != nil || string(b) != "PERFILE2" {
		t.Fatalf("output magic %q", b)
	}
}
