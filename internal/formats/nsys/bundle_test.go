package nsys

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// TestBundleKeepsTheWholeExport: a preserved parquetdir artifact keeps
// every table file of its directory (companions, with size and digest),
// the preserved artifact decodes into the same rows, and a companion
// changed or added after publication fails the bundle's verification.
func TestBundleKeepsTheWholeExport(t *testing.T) {
	old := bundle.Formats
	bundle.Formats = func(name string) (*formats.Spec, bool) { return Spec, name == Spec.Name }
	defer func() { bundle.Formats = old }()
	src := copyDir(t, "META_DATA_EXPORT", "StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "ENUM_NSYS_EVENT_TYPE")
	meta := filepath.Join(src, "META_DATA_EXPORT.parquet")
	art, err := formats.ArtifactFromPath(meta, formats.RoleExplicit)
	if err != nil {
		t.Fatal(err)
	}
	art.Format = Spec.Name
	store := t.TempDir()
	b, err := bundle.NewBuilder(store)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddArtifact(art); err != nil {
		t.Fatal(err)
	}
	bl, err := b.Publish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var companions int
	for _, m := range bl.Members {
		if m.Role == "companion" {
			companions++
			if !strings.HasPrefix(m.Path, "native/"+strings.TrimPrefix(art.ID, "sha256:")+".dir/") || m.Size <= 0 || len(m.SHA256) != 64 {
				t.Errorf("companion %+v", m)
			}
		}
	}
	if companions != 6 {
		t.Fatalf("%d companions, want the 6 files of the export", companions)
	}
	r, err := bundle.Open(bl.Path)
	if err != nil {
		t.Fatal(err)
	}
	arts := r.Artifacts()
	if len(arts) != 1 || filepath.Base(arts[0].Path) != "META_DATA_EXPORT.parquet" {
		t.Fatalf("artifacts %+v", arts)
	}
	want, _ := traceTables(t, meta)
	got, _ := traceTables(t, arts[0].Path)
	if len(got.Rows) != len(want.Rows) || len(got.Rows) != 19+968+652 {
		t.Fatalf("%d slices from the bundle, %d from the export", len(got.Rows), len(want.Rows))
	}
	// Without companions the same bundle id would differ: the id covers them.
	dir := filepath.Dir(arts[0].Path)
	strs := filepath.Join(dir, "StringIds.parquet")
	if err := os.Chmod(strs, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(strs, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Open(bl.Path); evidence.CodeOf(err) != evidence.CodeIntegrity {
		t.Fatalf("a changed companion: %v", err)
	}
}
