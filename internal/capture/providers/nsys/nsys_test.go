package nsys

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	nsysformat "github.com/flameox/flameox/internal/formats/nsys"
	"github.com/flameox/flameox/internal/param"
)

func TestPlan(t *testing.T) {
	args, _, err := param.Validate(Provider.Params, evidence.Object{ArgTrace: "cuda,nvtx"})
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	r := &capture.Resolved{Executable: &evidence.Executable{Path: "/opt/nsys/bin/nsys"}}
	p, err := plan(&capture.Request{Argv: []string{"./app", "--size", "4"}, Cwd: "/w", Args: args}, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/opt/nsys/bin/nsys", "profile", "--output", filepath.Join(scratch, "nsys", "report"), "--force-overwrite", "true",
		"--trace", "cuda,nvtx", "--sample", "none", "--stats", "false", "--export", "none", "./app", "--size", "4"}
	if !slices.Equal(p.Command, want) || p.OutputDir != filepath.Join(scratch, "nsys") || p.Dir != "/w" {
		t.Fatalf("%q\n%q", p.Command, want)
	}
	for _, bad := range []evidence.Object{{ArgTrace: "cuda;rm"}, {ArgTrace: ""}} {
		args, _, _ := param.Validate(Provider.Params, bad)
		if bad[ArgTrace] == "" {
			continue // the default applies
		}
		if _, err := plan(&capture.Request{Argv: []string{"./app"}, Args: args}, scratch, r); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Fatalf("%v: %v", bad, err)
		}
	}
	if _, err := plan(&capture.Request{Argv: []string{"--help"}, Args: args}, scratch, r); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("an option as the program: %v", err)
	}
}

// TestResolve: no nsys is PROVIDER_UNAVAILABLE with this provider's
// guidance; a stand-in answering --version like Nsight Systems resolves
// with its version.
func TestResolve(t *testing.T) {
	old := nsysformat.SearchGlobs
	nsysformat.SearchGlobs = []string{filepath.Join(t.TempDir(), "*", "nsys")}
	defer func() { nsysformat.SearchGlobs = old }()
	t.Setenv("PATH", t.TempDir())
	_, err := resolve(context.Background(), &capture.Request{})
	if f, ok := err.(*evidence.Failure); !ok || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || f.Retry.Action != Guidance {
		t.Fatalf("no nsys: %v", err)
	}
	dir := t.TempDir()
	body := "#!/bin/sh\necho 'NVIDIA Nsight Systems version 2025.3.1.90-253135822126v0'\n"
	if err := os.WriteFile(filepath.Join(dir, "nsys"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	res, err := resolve(context.Background(), &capture.Request{})
	if err != nil || res.Version != "2025.3.1.90-253135822126v0" || res.Executable.SHA256 == "" {
		t.Fatalf("%+v %v", res, err)
	}
	// Something else called nsys is not Nsight Systems.
	if err := os.WriteFile(filepath.Join(dir, "nsys"), []byte("#!/bin/sh\necho 'nsys 1.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := resolve(context.Background(), &capture.Request{}); evidence.CodeOf(err) != evidence.CodeProviderUnavailable {
		t.Fatalf("not Nsight Systems: %v", err)
	}
}

// TestResolveHere resolves the host's own nsys, where it has one.
func TestResolveHere(t *testing.T) {
	if _, err := exec.LookPath("nsys"); err != nil {
		t.Skip("nsys (Nsight Systems) is not on PATH")
	}
	if _, err := resolve(context.Background(), &capture.Request{}); err != nil {
		t.Fatal(err)
	}
}
