package worker

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

func TestCacheRoundTrip(t *testing.T) {
	c := &Cache{Dir: filepath.Join(t.TempDir(), "conversions")}
	k := Key{Input: "sha256:ab", Converter: "perf script", Identity: "sha256:cd perf version 6.1", Args: []string{"-F", "ip"}, Consumer: "parser 1"}
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit in an empty cache")
	}
	p, err := c.Begin(k)
	if err != nil {
		t.Fatal(err)
	}
	p.Write([]byte("converted "))
	p.Write([]byte("text\n"))
	if _, ok := c.Lookup(k); ok {
		t.Fatal("an uncommitted entry is visible")
	}
	if err := p.Commit(Stderr{Text: "warn", Retained: 4}); err != nil {
		t.Fatal(err)
	}
	e, ok := c.Lookup(k)
	if !ok || e.Meta.Stderr.Text != "warn" || e.Meta.OutputSize != 15 {
		t.Fatalf("lookup %v %+v", ok, e)
	}
	vr, err := e.Open()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(vr)
	if string(b) != "converted text\n" || vr.Verify() != nil {
		t.Fatalf("read %q", b)
	}
	other := k
	other.Identity = "sha256:ef perf version 6.2"
	if _, ok := c.Lookup(other); ok {
		t.Fatal("another converter identity hit the entry")
	}
	entries, _ := os.ReadDir(c.Dir)
	if len(entries) != 1 || entries[0].Name() != k.Hex() {
		t.Fatalf("cache dir holds %v", entries)
	}
}

func TestCacheAbortLeavesNothing(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	k := Key{Input: "sha256:ab"}
	p, err := c.Begin(k)
	if err != nil {
		t.Fatal(err)
	}
	p.Write([]byte("partial"))
	p.Abort()
	entries, _ := os.ReadDir(c.Dir)
	if len(entries) != 0 {
		t.Fatalf("abort left %v", entries)
	}
}

func TestCacheTamperIsIntegrityFailure(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	k := Key{Input: "sha256:ab"}
	p, _ := c.Begin(k)
	p.Write([]byte("good output"))
	if err := p.Commit(Stderr{}); err != nil {
		t.Fatal(err)
	}
	e, _ := c.Lookup(k)
	if err := os.WriteFile(e.Output, []byte("evil output"), 0o600); err != nil {
		t.Fatal(err)
	}
	vr, _ := e.Open()
	io.ReadAll(vr)
	wantFailure(t, vr.Verify(), evidence.CodeIntegrity)
}

func TestCacheSecondCommitKeepsFirst(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	k := Key{Input: "sha256:ab"}
	p1, _ := c.Begin(k)
	p2, _ := c.Begin(k)
	p1.Write([]byte("one"))
	p2.Write([]byte("one"))
	if err := p1.Commit(Stderr{}); err != nil {
		t.Fatal(err)
	}
	if err := p2.Commit(Stderr{}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(c.Dir)
	if len(entries) != 1 {
		t.Fatalf("cache dir holds %v", entries)
	}
}

func TestSessionCache(t *testing.T) {
	t.Setenv(ScratchEnv, "")
	if SessionCache() != nil {
		t.Fatal("cache without a session scratch")
	}
	t.Setenv(ScratchEnv, "/scratch/s1")
	if c := SessionCache(); c == nil || c.Dir != "/scratch/s1/conversions" {
		t.Fatalf("cache %+v", c)
	}
}
