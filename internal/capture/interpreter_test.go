package capture

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
)

// fakeInterpreter writes a shell script standing in for python: it
// ignores `-c SCRIPT` and runs body.
func fakeInterpreter(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "python")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInterpreterProbe(t *testing.T) {
	type answer struct {
		Executable string  `json:"executable"`
		Tool       *string `json:"tool"`
	}
	cases := []struct {
		name, body string
		code       evidence.Code
		msg        string
		field      string
		tool       string
	}{
		{"answer", `echo '{"executable": "/venv/bin/python", "tool": "1.0"}'`, "", "", "", "1.0"},
		{"warnings before the answer", `echo 'UserWarning: slow import'; echo '{"executable": "/venv/bin/python", "tool": "2.0"}'`, "", "", "", "2.0"},
		{"not python", `echo "usage: tool" >&2; exit 2`, evidence.CodeInvalidArgument, "broken", "argv", ""},
		{"garbage", `echo hello`, evidence.CodeInvalidArgument, "silent", "", ""},
		{"no executable", `echo '{"tool": "1.0"}'`, evidence.CodeInvalidArgument, "silent", "", ""},
		{"slow", `sleep 5`, evidence.CodeProviderUnavailable, "for tool timed out after 200ms", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			py := fakeInterpreter(t, c.body)
			p := &InterpreterProbe{Script: "pass", For: "tool", Timeout: 200 * time.Millisecond,
				Broken: "broken", Field: "argv", Silent: "silent"}
			var a answer
			err := p.Run(context.Background(), py, t.TempDir(), &a)
			if c.code == "" {
				if err != nil || a.Tool == nil || *a.Tool != c.tool || a.Executable != "/venv/bin/python" {
					t.Fatalf("got %+v, %v", a, err)
				}
				return
			}
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != c.code || !strings.Contains(f.Message, c.msg) || f.Location.Field != c.field {
				t.Fatalf("got %#v, want %s %q at %q", err, c.code, c.msg, c.field)
			}
			if c.msg == "broken" && !strings.Contains(f.Details["stderr"].(string), "usage: tool") {
				t.Fatalf("details %v lack the interpreter's stderr", f.Details)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := (&InterpreterProbe{Script: "pass", For: "tool", Timeout: time.Minute}).Run(ctx, fakeInterpreter(t, "sleep 5"), t.TempDir(), &struct{}{})
	if evidence.CodeOf(err) != evidence.CodeCancelled {
		t.Fatalf("cancelled probe: %v", err)
	}
}

func TestInterpreterResolved(t *testing.T) {
	py := fakeInterpreter(t, "true")
	r, err := InterpreterResolved(py, "1.2.3")
	if err != nil || r.Executable.Path != py || len(r.Executable.SHA256) != 64 || r.Version != "1.2.3" {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := InterpreterResolved(filepath.Join(t.TempDir(), "gone"), "1"); evidence.CodeOf(err) != evidence.CodeProviderUnavailable {
		t.Fatalf("missing interpreter: %v", err)
	}
}

func TestCheckScriptArgv(t *testing.T) {
	for _, c := range []struct {
		argv []string
		msg  string
	}{
		{[]string{"python", "app.py", "-x"}, ""},
		{[]string{"python", "-m", "pkg", "-x"}, ""},
		{[]string{"python"}, `tool needs a script, got ["python"]`},
		{[]string{"python", "-m"}, "`-m` needs a module name"},
		{[]string{"python", "-m", ""}, "`-m` needs a module name"},
		{[]string{"python", "-c", "pass"}, `interpreter option "-c" is not supported: give a script`},
	} {
		err := CheckScriptArgv(c.argv, "tool needs a script", "give a script")
		if c.msg == "" {
			if err != nil {
				t.Fatalf("%q: %v", c.argv, err)
			}
			continue
		}
		if evidence.CodeOf(err) != evidence.CodeInvalidArgument || err.(*evidence.Failure).Message != c.msg {
			t.Fatalf("%q: %v, want %q", c.argv, err, c.msg)
		}
	}
}

// TestVersionProbe runs the generated script in a real interpreter: a
// module that imports answers its version, a missing one null.
func TestVersionProbe(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	for _, c := range []struct {
		module string
		found  bool
	}{{"json", true}, {"flameox_no_such_module", false}} {
		a := map[string]any{}
		p := &InterpreterProbe{Script: VersionProbe(c.module), For: c.module, Timeout: time.Minute, Broken: "broken", Silent: "silent"}
		if err := p.Run(context.Background(), py, t.TempDir(), &a); err != nil {
			t.Fatalf("%s: %v", c.module, err)
		}
		v, ok := a[c.module]
		if !ok || (v != nil) != c.found || a["python"] == nil {
			t.Fatalf("%s: answer %v", c.module, a)
		}
	}
}

func TestNotInWorkload(t *testing.T) {
	f := NotInWorkload("memray", "/venv/bin/python", "3.11.7", InstallRetry("/venv/bin/python", "memray", "memray==1.20.0"))
	if f.Code != evidence.CodeProviderUnavailable || f.Message != "memray is not installed in the workload interpreter /venv/bin/python (Python 3.11.7)" ||
		strings.Join(f.Retry.Argv, " ") != "/venv/bin/python -m pip install memray==1.20.0" || f.Details["interpreter"] != "/venv/bin/python" {
		t.Fatalf("%+v %+v", f, f.Retry)
	}
}
