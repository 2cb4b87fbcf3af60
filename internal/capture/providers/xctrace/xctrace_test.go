package xctrace

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

func TestPlan(t *testing.T) {
	args, _, err := param.Validate(Provider.Params, evidence.Object{ArgTimeLimit: int64(30)})
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	out := filepath.Join(scratch, "xctrace")
	r := &capture.Resolved{Executable: &evidence.Executable{Path: "/Applications/Xcode.app/Contents/Developer/usr/bin/xctrace"}}
	p, err := plan(&capture.Request{Argv: []string{"./app", "-n", "1"}, Cwd: "/w", Args: args}, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	x := r.Executable.Path
	want := []string{x, "record", "--template", "Time Profiler", "--output", filepath.Join(out, "run.trace"), "--no-prompt",
		"--time-limit", "30s", "--launch", "--", "./app", "-n", "1"}
	if !slices.Equal(p.Command, want) || p.OutputDir != out {
		t.Fatalf("%q\n%q", p.Command, want)
	}
	export := []string{x, "export", "--input", filepath.Join(out, "run.trace"),
		"--xpath", `/trace-toc/run[@number="1"]/data/table[@schema="time-profile"]`, "--output", filepath.Join(out, "time-profile.xml")}
	if len(p.Post) != 1 || !slices.Equal(p.Post[0], export) {
		t.Fatalf("post %q\nwant %q", p.Post, export)
	}
	// Through xcrun, with the CPU Profiler.
	args, _, _ = param.Validate(Provider.Params, evidence.Object{ArgInstrument: "cpu-profiler"})
	r = &capture.Resolved{Executable: &evidence.Executable{Path: "/usr/bin/xcrun"}}
	p, err = plan(&capture.Request{Argv: []string{"./app"}, Args: args}, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Command[:4], []string{"/usr/bin/xcrun", "xctrace", "record", "--template"}) || p.Command[4] != "CPU Profiler" ||
		!slices.Contains(p.Post[0], `/trace-toc/run[@number="1"]/data/table[@schema="cpu-profile"]`) {
		t.Fatalf("%q %q", p.Command, p.Post)
	}
	if _, err := plan(&capture.Request{Args: args}, scratch, r); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("no workload: %v", err)
	}
	// The export is what the role stages; the trace bundle is not.
	if ok, _ := path.Match(Provider.Artifacts[0].Pattern, "time-profile.xml"); !ok {
		t.Error("the export is not staged")
	}
	if ok, _ := path.Match(Provider.Artifacts[0].Pattern, "run.trace"); ok {
		t.Error("the .trace bundle is staged as XML")
	}
}

func stub(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestResolve: absent (no xctrace, no xcrun) is PROVIDER_UNAVAILABLE with
// guidance, as on this Linux host; a program whose version names no
// xctrace version is too; xctrace's own version line resolves, directly
// or through xcrun.
func TestResolve(t *testing.T) {
	defer func(old string) { xcrun = old }(xcrun)
	xcrun = "xcrun-not-here"
	t.Setenv("PATH", t.TempDir())
	_, err := resolve(context.Background(), &capture.Request{})
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || f.Retry.Action != Guidance {
		t.Fatalf("absent: %v", err)
	}
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	stub(t, dir, "xctrace", "#!/bin/sh\necho hello\n")
	if _, err := resolve(context.Background(), &capture.Request{}); evidence.CodeOf(err) != evidence.CodeProviderUnavailable {
		t.Fatalf("no version: %v", err)
	}
	stub(t, dir, "xctrace", "#!/bin/sh\n[ \"$1\" = version ] && echo 'xctrace version 16.0 (16A242d)'\n")
	res, err := resolve(context.Background(), &capture.Request{})
	if err != nil || res.Version != "16.0" || res.Executable.SHA256 == "" {
		t.Fatalf("%+v %v", res, err)
	}
	dir = t.TempDir()
	t.Setenv("PATH", dir)
	xcrun = "xcrun"
	stub(t, dir, "xcrun", "#!/bin/sh\n[ \"$1 $2\" = 'xctrace version' ] && echo 'xctrace version 15.4 (15F31d)'\n")
	res, err = resolve(context.Background(), &capture.Request{})
	if err != nil || res.Version != "15.4" || filepath.Base(res.Executable.Path) != "xcrun" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestResolveHere(t *testing.T) {
	if _, err := exec.LookPath("xctrace"); err != nil {
		t.Skip("xctrace (Xcode, macOS) is not on PATH")
	}
	if _, err := resolve(context.Background(), &capture.Request{}); err != nil {
		t.Fatal(err)
	}
}
