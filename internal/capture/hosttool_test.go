package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
)

func TestHostTool(t *testing.T) {
	bin := t.TempDir()
	tool := filepath.Join(bin, "flameox-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho \"tool $LC_ALL $EXTRA\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	want, err := FileSHA256(tool)
	if err != nil {
		t.Fatal(err)
	}
	ht := &HostTool{Name: "flameox-tool", Missing: "flameox-tool is not on PATH", Guidance: "install it"}

	t.Setenv("PATH", bin)
	path, digest, err := ht.Look()
	if err != nil || path != tool || digest != want {
		t.Fatalf("on PATH: %s %s %v", path, digest, err)
	}
	out, err := HostVersion(context.Background(), path, 10*time.Second, "EXTRA=x")
	if err != nil || strings.TrimSpace(string(out)) != "tool C x" {
		t.Fatalf("version %q %v", out, err)
	}

	t.Setenv("PATH", t.TempDir())
	_, _, err = ht.Look()
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable || f.Message != ht.Missing || f.Retry == nil || f.Retry.Action != "install it" {
		t.Fatalf("missing: %#v", err)
	}
	ht.Fallback = tool
	if path, digest, err = ht.Look(); err != nil || path != tool || digest != want {
		t.Fatalf("fallback: %s %s %v", path, digest, err)
	}
	ht.Fallback = bin // a directory is no fallback
	if _, _, err = ht.Look(); evidence.CodeOf(err) != evidence.CodeProviderUnavailable {
		t.Fatalf("directory fallback: %v", err)
	}
}
