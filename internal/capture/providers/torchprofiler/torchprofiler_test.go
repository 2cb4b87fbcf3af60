package torchprofiler

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
)

func TestPlan(t *testing.T) {
	r := &capture.Resolved{Executable: &evidence.Executable{Path: "/venv/bin/python"}, Version: "2.5.1"}
	for _, c := range []struct {
		name string
		argv []string
		args evidence.Object
		want string
		code evidence.Code
	}{
		{"script", []string{"python", "train.py", "--epochs", "1"}, nil,
			`/venv/bin/python /s/support/flameox_torch_profiler.py /s/output {"profile_memory":false,"record_shapes":false,"with_stack":false} train.py --epochs 1`, ""},
		{"module with shapes", []string{"python3", "-m", "pkg.train"}, evidence.Object{"record_shapes": true, "with_stack": true},
			`/venv/bin/python /s/support/flameox_torch_profiler.py /s/output {"profile_memory":false,"record_shapes":true,"with_stack":true} -m pkg.train`, ""},
		{"-c", []string{"python", "-c", "print(1)"}, nil, "", evidence.CodeInvalidArgument},
		{"interpreter option", []string{"python", "-X", "dev", "train.py"}, nil, "", evidence.CodeInvalidArgument},
		{"bare -m", []string{"python", "-m"}, nil, "", evidence.CodeInvalidArgument},
		{"no script", []string{"python"}, nil, "", evidence.CodeInvalidArgument},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Plan(&capture.Request{Provider: Provider.Name, Argv: c.argv, Cwd: "/w", Args: c.args}, "/s", r)
			if c.code != "" {
				if evidence.CodeOf(err) != c.code {
					t.Fatalf("got %v, want %s", err, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.Command, " "); got != c.want {
				t.Fatalf("command %q\nwant    %q", got, c.want)
			}
			if p.Dir != "/w" || p.OutputDir != "/s/output" || len(p.Support) != 1 || !p.AnyExit ||
				string(p.Support[0].Content) != string(launcher) {
				t.Fatalf("plan %+v", p)
			}
		})
	}
}

// TestResolve: an interpreter without torch is PROVIDER_UNAVAILABLE with
// the install command; one that is not Python is INVALID_ARGUMENT.
func TestResolve(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		py   string
		code evidence.Code
		ver  string
	}{
		{fake("notorch", `echo 'warning: noise'; echo '{"executable":"`+dir+`/notorch","python":"3.11.7","torch":null,"cuda":false}'`), evidence.CodeProviderUnavailable, ""},
		{fake("old", `echo '{"executable":"`+dir+`/old","python":"3.8.1","torch":"1.13.0","cuda":false}'`), evidence.CodeProviderUnavailable, ""},
		{fake("ok", `echo '{"executable":"`+dir+`/ok","python":"3.11.7","torch":"2.5.1","cuda":false}'`), "", "2.5.1"},
		{fake("broken", `exit 2`), evidence.CodeInvalidArgument, ""},
		{fake("silent", `true`), evidence.CodeInvalidArgument, ""},
	} {
		res, err := Resolve(context.Background(), &capture.Request{Argv: []string{c.py, "train.py"}, Cwd: dir})
		if c.code != "" {
			if evidence.CodeOf(err) != c.code {
				t.Errorf("%s: got %v, want %s", filepath.Base(c.py), err, c.code)
			}
			continue
		}
		if err != nil || res.Version != c.ver || res.Executable.SHA256 == "" {
			t.Errorf("%s: %+v %v", filepath.Base(c.py), res, err)
		}
	}
}
