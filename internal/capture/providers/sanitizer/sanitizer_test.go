package sanitizer

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

var resolved = &capture.Resolved{Executable: &evidence.Executable{Path: "/usr/local/cuda/bin/compute-sanitizer", SHA256: "x"}, Version: "2026.3.0.0"}

func TestPlan(t *testing.T) {
	cs := resolved.Executable.Path
	for _, c := range []struct {
		name string
		args evidence.Object
		want []string
	}{
		{"defaults", evidence.Object{}, []string{cs, "--tool", "memcheck"}},
		{"racecheck", evidence.Object{ArgTool: "racecheck", ArgPrintLimit: int64(0), ArgShowBacktrace: "device"}, []string{cs, "--tool", "racecheck"}},
		{"leaks", evidence.Object{ArgLeakCheck: true}, []string{cs, "--tool", "memcheck"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			scratch := t.TempDir()
			req := &capture.Request{Argv: []string{"./app", "-n", "3"}, Cwd: "/work", Args: validArgs(t, c.args)}
			p, err := plan(req, scratch, resolved)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(scratch, "sanitizer")
			limit, bt := "100", "yes"
			if c.name == "racecheck" {
				limit, bt = "0", "device"
			}
			want := append(c.want, "--log-file", filepath.Join(out, OutputName), "--print-limit", limit, "--show-backtrace", bt)
			if c.name == "leaks" {
				want = append(want, "--leak-check", "full")
			}
			want = append(want, "--", "./app", "-n", "3")
			if !slices.Equal(p.Command, want) || p.OutputDir != out || !p.AnyExit {
				t.Fatalf("command %q, want %q", p.Command, want)
			}
		})
	}
}

func TestPlanRejects(t *testing.T) {
	for _, c := range []struct {
		argv []string
		args evidence.Object
	}{{nil, evidence.Object{}}, {[]string{"./app"}, evidence.Object{ArgTool: "racecheck", ArgLeakCheck: true}}} {
		_, err := plan(&capture.Request{Argv: c.argv, Cwd: "/", Args: validArgs(t, c.args)}, t.TempDir(), resolved)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument {
			t.Fatalf("%v: want INVALID_ARGUMENT, got %v", c, err)
		}
	}
	if _, _, err := param.Validate(Provider.Params, evidence.Object{ArgTool: "leakcheck"}); err == nil {
		t.Fatal("an unknown tool is accepted")
	}
}

func TestResolveMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	old := fallback
	fallback = filepath.Join(t.TempDir(), "compute-sanitizer")
	defer func() { fallback = old }()
	_, err := resolve(context.Background(), &capture.Request{})
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || f.Retry.Action == "" {
		t.Fatalf("want PROVIDER_UNAVAILABLE with guidance, got %v", err)
	}
}

// TestResolveVersion probes a stand-in that prints what compute-sanitizer
// 2026.3 prints for --version, and one that prints something else.
func TestResolveVersion(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	tool := filepath.Join(dir, "compute-sanitizer")
	write := func(body string) {
		if err := os.WriteFile(tool, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("printf 'NVIDIA (R) Compute Sanitizer\\nCopyright (c) 2020-2026 NVIDIA Corporation\\nVersion 2026.3.0.0 (build 38855100) (public-release)\\n'\n")
	r, err := resolve(context.Background(), &capture.Request{})
	if err != nil || r.Version != "2026.3.0.0" || r.Executable.Path != tool {
		t.Fatalf("%+v %v", r, err)
	}
	write("echo 'some other tool 1.0'\n")
	if _, err := resolve(context.Background(), &capture.Request{}); evidence.CodeOf(err) != evidence.CodeProviderUnavailable {
		t.Fatalf("%v", err)
	}
}

// TestResolveHere resolves the real tool where one is installed; a GPU
// run of it is the shared GPU fixture script's job.
func TestResolveHere(t *testing.T) {
	if _, err := exec.LookPath("compute-sanitizer"); err != nil {
		t.Skip("compute-sanitizer is not on PATH (CUDA toolkit or nvidia-cuda-sanitizer-api)")
	}
	r, err := resolve(context.Background(), &capture.Request{})
	if err != nil || r.Version == "" {
		t.Fatalf("%+v %v", r, err)
	}
}
