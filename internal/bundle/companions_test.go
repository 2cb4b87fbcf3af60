package bundle

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// dirFormat is a directory format for the test: every other file of the
// artifact's directory belongs with it.
var dirFormat = &formats.Spec{Name: "test-dir", Companions: func(a *evidence.Artifact) (string, []string, error) {
	ents, err := os.ReadDir(filepath.Dir(a.Path))
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return filepath.Dir(a.Path), out, err
}}

// TestCompanions: a directory artifact is kept whole under
// native/<hex>.dir/, read back there with its own name; a file added to
// that directory, or a companion of no artifact, fails verification; a
// one-file artifact's bundle has no companions.
func TestCompanions(t *testing.T) {
	old := Formats
	Formats = func(n string) (*formats.Spec, bool) { return dirFormat, n == dirFormat.Name }
	defer func() { Formats = old }()
	src := t.TempDir()
	a := native(t, src, "main.json", []byte(`{"main":1}`))
	for n, b := range map[string]string{"a.bin": "aaa", "b.txt": "bbbb"} {
		must(t, os.WriteFile(filepath.Join(src, n), []byte(b), 0o644))
	}
	a.Format = dirFormat.Name
	b, err := NewBuilder(t.TempDir())
	must(t, err)
	must(t, b.AddArtifact(a))
	bl, err := b.Publish(context.Background())
	must(t, err)
	r, err := Open(bl.Path)
	must(t, err)
	p := r.Artifacts()[0].Path
	if filepath.Base(p) != "main.json" || filepath.Base(filepath.Dir(p)) != a.Digest()+".dir" {
		t.Fatalf("artifact path %s", p)
	}
	for n, want := range map[string]string{"a.bin": "aaa", "b.txt": "bbbb", "main.json": `{"main":1}`} {
		if got, err := os.ReadFile(filepath.Join(filepath.Dir(p), n)); err != nil || string(got) != want {
			t.Fatalf("%s: %q %v", n, got, err)
		}
	}
	must(t, os.Chmod(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(filepath.Join(filepath.Dir(p), "extra"), nil, 0o644))
	if _, err := Open(bl.Path); evidence.CodeOf(err) != evidence.CodeIntegrity {
		t.Fatalf("an added file: %v", err)
	}

	// The same bytes as a one-file format: no companions, native/<hex> only.
	plain := *a
	plain.Format = "json"
	b, err = NewBuilder(t.TempDir())
	must(t, err)
	must(t, b.AddArtifact(&plain))
	bl, err = b.Publish(context.Background())
	must(t, err)
	if len(bl.Members) != 2 {
		t.Fatalf("members %+v", bl.Members)
	}
}
