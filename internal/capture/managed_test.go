package capture

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// probeWheel writes a minimal pure-Python wheel with one console script,
// flameox-probe, that prints "flameox-probe VERSION". The test installs it
// with the real python3 -m venv and pip, offline (PIP_NO_INDEX with
// PIP_FIND_LINKS), so it needs no network and no third-party package.
func probeWheel(t *testing.T, dir, version string) {
	t.Helper()
	info := "flameox_probe-" + version + ".dist-info/"
	files := []struct{ name, body string }{
		{"flameox_probe/__init__.py", "def main():\n    print(\"flameox-probe " + version + "\")\n"},
		{info + "METADATA", "Metadata-Version: 2.1\nName: flameox-probe\nVersion: " + version + "\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: flameox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "entry_points.txt", "[console_scripts]\nflameox-probe = flameox_probe:main\n"},
	}
	var record bytes.Buffer
	for _, f := range files {
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	fmt.Fprintf(&record, "%sRECORD,,\n", info)
	files = append(files, struct{ name, body string }{info + "RECORD", record.String()})
	out, err := os.Create(filepath.Join(dir, "flameox_probe-"+version+"-py3-none-any.whl"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(out)
	for _, f := range files {
		w, err := z.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f.body)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func unavailable(t *testing.T, err error, provider string) {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable {
		t.Fatalf("err %v, want PROVIDER_UNAVAILABLE", err)
	}
	want := []string{"flameox-capture", "setup", "--provider", provider}
	if f.Retry == nil || fmt.Sprint(f.Retry.Argv) != fmt.Sprint(want) {
		t.Fatalf("retry %+v, want argv %v", f.Retry, want)
	}
}

func TestManagedSetupResolve(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 (with venv and ensurepip) to create managed environments")
	}
	wheels := t.TempDir()
	probeWheel(t, wheels, "1.0.0")
	t.Setenv("PIP_NO_INDEX", "1")
	t.Setenv("PIP_FIND_LINKS", wheels)
	t.Setenv(EnvHome, t.TempDir())
	m := Managed{Provider: "probe", Package: "flameox-probe", Version: "1.0.0", Executable: "flameox-probe",
		VersionArgs: nil, VersionPrefix: "flameox-probe 1.0.0"}
	ctx := context.Background()

	_, err := ResolveManaged(ctx, m)
	unavailable(t, err, "probe") // nothing installed yet, and capture never installs

	var log bytes.Buffer
	r, err := SetupManaged(ctx, m, &log)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, log.String())
	}
	dir, _ := ManagedDir(m)
	if r.Executable.Path != filepath.Join(dir, "bin", "flameox-probe") || r.Version != "1.0.0" {
		t.Fatalf("resolved %+v", r)
	}
	sum, err := FileSHA256(r.Executable.Path)
	if err != nil || sum != r.Executable.SHA256 {
		t.Fatalf("identity %s, file hashes to %s (%v)", r.Executable.SHA256, sum, err)
	}
	again, err := ResolveManaged(ctx, m)
	if err != nil || *again.Executable != *r.Executable {
		t.Fatalf("resolve after setup: %+v, %v", again, err)
	}

	t.Run("version output mismatch", func(t *testing.T) {
		bad := m
		bad.VersionPrefix = "flameox-probe 2"
		_, err := ResolveManaged(ctx, bad)
		unavailable(t, err, "probe")
	})
	t.Run("other pinned version", func(t *testing.T) {
		other := m
		other.Version = "1.0.1"
		_, err := ResolveManaged(ctx, other)
		unavailable(t, err, "probe")
	})
	t.Run("tampered executable", func(t *testing.T) {
		f, err := os.OpenFile(r.Executable.Path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("# changed\n")
		f.Close()
		_, err = ResolveManaged(ctx, m)
		unavailable(t, err, "probe")
	})
	t.Run("setup again repairs it", func(t *testing.T) {
		r2, err := SetupManaged(ctx, m, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if r2.Executable.SHA256 != r.Executable.SHA256 {
			t.Errorf("reinstalled identity %s, first %s", r2.Executable.SHA256, r.Executable.SHA256)
		}
	})
	t.Run("removed executable", func(t *testing.T) {
		if err := os.Remove(r.Executable.Path); err != nil {
			t.Fatal(err)
		}
		_, err := ResolveManaged(ctx, m)
		unavailable(t, err, "probe")
	})
	t.Run("setup of an unknown pin fails typed", func(t *testing.T) {
		missing := m
		missing.Version = "9.9.9"
		_, err := SetupManaged(ctx, missing, io.Discard)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable {
			t.Fatalf("err %v", err)
		}
		d, _ := ManagedDir(missing)
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("failed setup left %s behind", d)
		}
	})
}

// TestManagedSetupWithoutHostPip covers hosts whose python3 has venv but
// no pip of its own: the environment is seeded by ensurepip.
func TestManagedSetupWithoutHostPip(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 (with venv and ensurepip) to create managed environments")
	}
	if testing.Short() {
		t.Skip("slow: seeds a venv with ensurepip")
	}
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nif [ \"$1 $2\" = \"-m pip\" ]; then echo 'No module named pip' >&2; exit 1; fi\nexec " + python + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	wheels := t.TempDir()
	probeWheel(t, wheels, "1.0.0")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("PIP_NO_INDEX", "1")
	t.Setenv("PIP_FIND_LINKS", wheels)
	t.Setenv(EnvHome, t.TempDir())
	m := Managed{Provider: "probe", Package: "flameox-probe", Version: "1.0.0", Executable: "flameox-probe", VersionPrefix: "flameox-probe 1.0.0"}
	var log bytes.Buffer
	if _, err := SetupManaged(context.Background(), m, &log); err != nil {
		t.Fatalf("setup: %v\n%s", err, log.String())
	}
	dir, _ := ManagedDir(m)
	if _, err := os.Stat(filepath.Join(dir, "bin", "pip")); err != nil {
		t.Errorf("the environment was not seeded with its own pip: %v", err)
	}
}

func TestManagedPinValidated(t *testing.T) {
	for _, m := range []Managed{
		{Provider: "x", Package: "a b", Version: "1", Executable: "a"},
		{Provider: "x", Package: "a", Version: "1; rm", Executable: "a"},
		{Provider: "x", Package: "a", Version: "1", Executable: "../a"},
	} {
		if _, err := ManagedDir(m); err == nil {
			t.Errorf("pin %+v accepted", m)
		}
	}
}
