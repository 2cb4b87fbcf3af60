package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A layout-1 bundle (tables/<n>-<name>.parquet) written before layout 2
// still opens and reads back: stores keep their old bundles.
func TestLayout1StillReads(t *testing.T) {
	dir := t.TempDir()
	e := sampleEvidence(t, dir)
	store := filepath.Join(dir, "store")
	bl := e.build(t, store)
	r, err := Open(bl.Path)
	must(t, err)
	if r.Manifest.Layout != Layout || r.Manifest.Tables[0].Path != "tables/cpu.frames/0.parquet" {
		t.Fatalf("layout %s, table path %s", r.Manifest.Layout, r.Manifest.Tables[0].Path)
	}
	// Rewrite it as layout 1 would have written it.
	old := bl.Path + ".v1"
	must(t, os.MkdirAll(filepath.Join(old, tablesDir), 0o755))
	must(t, os.Rename(filepath.Join(bl.Path, nativeDir), filepath.Join(old, nativeDir)))
	must(t, os.Rename(filepath.Join(bl.Path, "tables", "cpu.frames", "0.parquet"), filepath.Join(old, "tables", "0-cpu.frames.parquet")))
	m := *r.Manifest
	m.Layout = layoutV1
	m.Tables[0].Path = "tables/0-cpu.frames.parquet"
	for i := range m.Members {
		if m.Members[i].Role == roleTable {
			m.Members[i].Path = m.Tables[0].Path
		}
	}
	data, err := m.encode()
	must(t, err)
	must(t, os.WriteFile(filepath.Join(old, manifestName), data, 0o444))
	v1 := Dir(store, Hash(data))
	must(t, os.Rename(old, v1))
	r1, err := Open(v1)
	must(t, err)
	n := 0
	for o, err := range r1.Rows(0) {
		must(t, err)
		if got, want := canon(t, o), canon(t, e.rows[n]); got != want {
			t.Fatalf("row %d: %s, want %s", n, got, want)
		}
		n++
	}
	if n != len(e.rows) {
		t.Fatalf("%d rows, want %d", n, len(e.rows))
	}
	// A layout-2 path in a layout-1 manifest is refused.
	m.Tables[0].Path = "tables/cpu.frames/0.parquet"
	if _, err := decodeManifestChecked(t, &m); err == nil || !strings.Contains(err.Error(), "is not") {
		t.Fatalf("mixed layout accepted: %v", err)
	}
}

func decodeManifestChecked(t *testing.T, m *Manifest) (*Manifest, error) {
	t.Helper()
	data, err := m.encode()
	must(t, err)
	return decodeManifest(data)
}
