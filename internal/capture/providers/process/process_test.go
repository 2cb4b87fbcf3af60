package process

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
)

func sum(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "bench.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "data.txt")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("sh is not on PATH")
	}
	for _, c := range []struct {
		name string
		argv []string
		cwd  string
		path string
		code evidence.Code
	}{
		{"on PATH", []string{"sh", "-c", "true"}, dir, sh, ""},
		{"absolute", []string{script}, "/", script, ""},
		{"relative to the request's cwd", []string{"./bench.sh"}, dir, script, ""},
		{"missing on PATH", []string{"flameox-no-such-program"}, dir, "", evidence.CodeProviderUnavailable},
		{"missing file", []string{"./nope"}, dir, "", evidence.CodeProviderUnavailable},
		{"not executable", []string{"./data.txt"}, dir, "", evidence.CodeProviderUnavailable},
		{"a directory", []string{dir}, dir, "", evidence.CodeProviderUnavailable},
		{"no command", nil, dir, "", evidence.CodeInvalidArgument},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Resolve(context.Background(), &capture.Request{Provider: "process", Argv: c.argv, Cwd: c.cwd})
			if got := evidence.CodeOf(err); got != c.code {
				t.Fatalf("code %q, want %q (%v)", got, c.code, err)
			}
			if c.code == evidence.CodeProviderUnavailable {
				f := err.(*evidence.Failure)
				if f.Retry == nil || f.Retry.Action == "" || f.Details["argv0"] != c.argv[0] {
					t.Errorf("an unavailable program comes with guidance: %+v", f)
				}
			}
			if c.code != "" {
				return
			}
			if r.Executable.Path != c.path || r.Executable.SHA256 != sum(t, c.path) {
				t.Errorf("identity %+v, want %s", r.Executable, c.path)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	req := &capture.Request{Provider: "process", Argv: []string{"sh", "-c", "echo out; echo err >&2"}, Cwd: "/tmp"}
	r, err := Resolve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	p, err := Plan(req, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	if !p.FullConsole || p.Dir != "/tmp" || p.OutputDir != scratch || p.Command[0] != r.Executable.Path ||
		len(p.Command) != 3 || p.Command[2] != req.Argv[2] {
		t.Errorf("plan %+v", p)
	}
	if len(p.Env) != 0 || len(p.Post) != 0 || len(p.Support) != 0 {
		t.Errorf("the process provider adds nothing to the workload: %+v", p)
	}
	if _, err := Plan(req, "relative", r); evidence.CodeOf(err) != evidence.CodeInternal {
		t.Errorf("relative scratch: %v", err)
	}
	if _, err := Plan(req, scratch, nil); evidence.CodeOf(err) != evidence.CodeInternal {
		t.Errorf("unresolved: %v", err)
	}
}

// TestRoles: the declared roles are the console files the runtime writes
// under a FullConsole plan, as text.
func TestRoles(t *testing.T) {
	want := map[string]string{RoleStdout: "console/stdout", RoleStderr: "console/stderr"}
	for _, r := range Provider.Artifacts {
		if want[r.Role] != r.Pattern || r.Format != "text" || !r.Required {
			t.Errorf("role %+v", r)
		}
		if ok, _ := path.Match(r.Pattern, want[r.Role]); !ok {
			t.Errorf("pattern %q does not match %q", r.Pattern, want[r.Role])
		}
		delete(want, r.Role)
	}
	if len(want) != 0 {
		t.Errorf("undeclared roles %v", want)
	}
}
