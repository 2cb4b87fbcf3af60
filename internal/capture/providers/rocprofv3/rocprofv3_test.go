package rocprofv3

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
	args, _, err := param.Validate(Provider.Params, evidence.Object{ArgTrace: "sys", ArgPMC: "SQ_WAVES,GRBM_COUNT"})
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	r := &capture.Resolved{Executable: &evidence.Executable{Path: "/opt/rocm/bin/rocprofv3"}}
	p, err := plan(&capture.Request{Argv: []string{"./app", "-n", "1"}, Cwd: "/w", Args: args}, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(scratch, "rocprofv3")
	want := []string{"/opt/rocm/bin/rocprofv3", "--sys-trace", "--pmc", "SQ_WAVES", "GRBM_COUNT",
		"--output-format", "csv", "-d", out, "-o", "run", "--", "./app", "-n", "1"}
	if !slices.Equal(p.Command, want) || p.OutputDir != out {
		t.Fatalf("%q\n%q", p.Command, want)
	}
	args, _, _ = param.Validate(Provider.Params, evidence.Object{ArgTrace: "none"})
	if _, err := plan(&capture.Request{Argv: []string{"./app"}, Args: args}, scratch, r); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("none without pmc: %v", err)
	}
	if _, err := plan(&capture.Request{Args: args}, scratch, r); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("no workload: %v", err)
	}
}

// TestPatterns: the roles stage the domain traces and the counters, and
// not agent_info.csv or the --stats files rocprofv3 writes beside them.
func TestPatterns(t *testing.T) {
	match := func(name string) string {
		for _, r := range Provider.Artifacts {
			if ok, _ := path.Match(r.Pattern, name); ok {
				return r.Role
			}
		}
		return ""
	}
	for name, role := range map[string]string{
		"run_kernel_trace.csv": "trace", "run_hip_api_trace.csv": "trace", "run_memory_copy_trace.csv": "trace",
		"run_marker_api_trace.csv": "trace", "run_counter_collection.csv": "counters",
		"run_agent_info.csv": "", "run_kernel_stats.csv": "", "run_domain_stats.csv": "",
	} {
		if got := match(name); got != role {
			t.Errorf("%s: role %q, want %q", name, got, role)
		}
	}
}

func stub(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "rocprofv3"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestResolve: absent is PROVIDER_UNAVAILABLE with guidance; a program
// whose --version names no version is too; rocprofv3's version line
// resolves (rocprofv3.py prints each key right-aligned to 16 columns).
func TestResolve(t *testing.T) {
	old := fallback
	defer func() { fallback = old }()
	dir := t.TempDir()
	fallback = filepath.Join(dir, "none")
	t.Setenv("PATH", t.TempDir())
	_, err := resolve(context.Background(), &capture.Request{})
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || f.Retry.Action != Guidance {
		t.Fatalf("absent: %v", err)
	}
	t.Setenv("PATH", dir)
	stub(t, dir, "#!/bin/sh\necho hello\n")
	if _, err := resolve(context.Background(), &capture.Request{}); evidence.CodeOf(err) != evidence.CodeProviderUnavailable {
		t.Fatalf("no version: %v", err)
	}
	stub(t, dir, "#!/bin/sh\nprintf '         version: 1.0.0\\n    git_revision: abc\\n    rocm_version: 7.0.0\\n'\n")
	res, err := resolve(context.Background(), &capture.Request{})
	if err != nil || res.Version != "1.0.0" || res.Executable.SHA256 == "" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestResolveHere(t *testing.T) {
	if _, err := exec.LookPath("rocprofv3"); err != nil {
		t.Skip("rocprofv3 (ROCm) is not on PATH")
	}
	if _, err := resolve(context.Background(), &capture.Request{}); err != nil {
		t.Fatal(err)
	}
}
