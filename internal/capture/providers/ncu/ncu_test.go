package ncu

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

func TestPlan(t *testing.T) {
	args, _, err := param.Validate(Provider.Params, evidence.Object{ArgKernelName: "gemm|conv", ArgLaunchCount: int64(5)})
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	r := &capture.Resolved{Executable: &evidence.Executable{Path: "/opt/ncu/ncu"}}
	p, err := plan(&capture.Request{Argv: []string{"./app"}, Cwd: "/w", Args: args}, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/opt/ncu/ncu", "--set", "basic", "--force-overwrite", "--export", filepath.Join(scratch, "ncu", "report"),
		"--kernel-name", "regex:gemm|conv", "--launch-count", "5", "--", "./app"}
	if !slices.Equal(p.Command, want) {
		t.Fatalf("%q\n%q", p.Command, want)
	}
	args, _, _ = param.Validate(Provider.Params, evidence.Object{ArgKernelName: "("})
	if _, err := plan(&capture.Request{Argv: []string{"./app"}, Args: args}, scratch, r); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("%v", err)
	}
}

func stub(t *testing.T, dir string) string {
	t.Helper()
	ncu := filepath.Join(dir, "ncu")
	body := "#!/bin/sh\nprintf 'NVIDIA (R) Nsight Compute Command Line Profiler\\nCopyright (c) 2018-2026 NVIDIA Corporation\\nVersion 2026.3.0.0 (build 1) (public-release)\\n'\n"
	if err := os.WriteFile(ncu, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return ncu
}

// TestResolveNeedsReader: ncu without its installation's
// extras/python/ncu_report.py is unavailable; with it, resolved.
func TestResolveNeedsReader(t *testing.T) {
	dir := t.TempDir()
	stub(t, dir)
	t.Setenv("PATH", dir)
	old := fallback
	fallback = filepath.Join(dir, "none")
	defer func() { fallback = old }()
	_, err := resolve(context.Background(), &capture.Request{})
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil {
		t.Fatalf("ncu without its reader: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "extras", "python"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "extras", "python", "ncu_report.py"), []byte("# reader\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := resolve(context.Background(), &capture.Request{})
	if err != nil || res.Version != "2026.3.0.0" {
		t.Fatalf("%+v %v", res, err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := resolve(context.Background(), &capture.Request{}); evidence.CodeOf(err) != evidence.CodeProviderUnavailable {
		t.Fatalf("no ncu: %v", err)
	}
}

// TestReaderOfToolkitLauncher: the CUDA toolkit's bin/ncu finds the
// reader in the toolkit's nsight-compute-<version> directory.
func TestReaderOfToolkitLauncher(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	ex := filepath.Join(root, "nsight-compute-2026.3.0", "extras", "python")
	for _, d := range []string{bin, ex} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ex, "ncu_report.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := Reader(stub(t, bin)); !ok || got != ex {
		t.Fatalf("%q %v", got, ok)
	}
}

func TestResolveHere(t *testing.T) {
	if _, err := exec.LookPath("ncu"); err != nil {
		t.Skip("ncu (Nsight Compute) is not on PATH")
	}
	if _, err := resolve(context.Background(), &capture.Request{}); err != nil {
		t.Fatal(err)
	}
}
