package triton

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
)

func TestPlan(t *testing.T) {
	scratch := t.TempDir()
	p, err := plan(&capture.Request{Argv: []string{"/venv/bin/python", "train.py"}, Cwd: "/w"}, scratch, nil)
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(scratch, "triton", CacheDir)
	if !slices.Equal(p.Command, []string{"/venv/bin/python", "train.py"}) ||
		!slices.Equal(p.Env, []string{"TRITON_CACHE_AUTOTUNING=1", "TRITON_CACHE_DIR=" + cache}) {
		t.Fatalf("%+v", p)
	}
	if st, err := os.Stat(cache); err != nil || !st.IsDir() {
		t.Fatal("the request-owned cache directory is not made")
	}
	if m, _ := filepath.Match(filepath.Join(p.OutputDir, Provider.Artifacts[0].Pattern), filepath.Join(cache, "abc", "add_kernel.autotune.json")); !m {
		t.Fatal("the role's pattern does not match a cache file")
	}
}

func fakePython(t *testing.T, version string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	dir := t.TempDir()
	if version != "" {
		pkg := filepath.Join(dir, "site", "triton")
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "__init__.py"), []byte("__version__ = '"+version+"'\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := filepath.Join(dir, "python")
	body := "#!/bin/sh\nPYTHONPATH=" + filepath.Join(dir, "site") + " exec " + py + " -S \"$@\"\n"
	if err := os.WriteFile(w, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestResolveProbesInterpreter: Triton is probed in the workload's own
// interpreter; absent or at another release, the capture is unavailable
// with the install command for that interpreter.
func TestResolveProbesInterpreter(t *testing.T) {
	for _, c := range []struct {
		version string
		ok      bool
	}{{"3.7.0", true}, {"", false}, {"3.1.0", false}} {
		py := fakePython(t, c.version)
		r, err := resolve(context.Background(), &capture.Request{Argv: []string{py, "train.py"}, Cwd: t.TempDir()})
		if c.ok {
			if err != nil || r.Version != "triton 3.7.0" {
				t.Fatalf("%s: %+v %v", c.version, r, err)
			}
			continue
		}
		f, _ := err.(*evidence.Failure)
		if f == nil || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || len(f.Retry.Argv) == 0 {
			t.Fatalf("%q: %v", c.version, err)
		}
	}
}
