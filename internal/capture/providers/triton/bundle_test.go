package triton

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/tritonautotune"
)

// TestCacheBundle: an autotune file staged by this provider is preserved
// with the whole request-owned cache (compilation artifacts of other
// kernels included, paths kept); the same file given by path is one file.
func TestCacheBundle(t *testing.T) {
	spec := *tritonautotune.Spec
	spec.Companions = CacheBundle
	old := bundle.Formats
	bundle.Formats = func(n string) (*formats.Spec, bool) { return &spec, n == spec.Name }
	defer func() { bundle.Formats = old }()

	src, err := os.ReadFile("../../../../testdata/triton/cache/WVRLVEBEWKVGPZGKUWAXOIH54E5BDO4EYLX4HENMH37FQASZ2LOQ/matmul_kernel.autotune.json")
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "triton", CacheDir)
	files := map[string]string{
		"WVRL/matmul_kernel.autotune.json": string(src),
		"K7QX/matmul_kernel.cubin":         "\x7fELF cubin",
		"K7QX/matmul_kernel.ptx":           "// ptx",
		"K7QX/matmul_kernel.json":          `{"name":"matmul_kernel"}`,
		"K7QX/__grp__matmul_kernel.json":   `{"child_paths":{}}`,
	}
	for n, b := range files {
		p := filepath.Join(cache, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	art, err := formats.ArtifactFromPath(filepath.Join(cache, "WVRL", "matmul_kernel.autotune.json"), RoleAutotune)
	if err != nil {
		t.Fatal(err)
	}
	art.Format, art.CaptureID = spec.Name, "cap-1"
	preserve := func() (*bundle.Reader, int) {
		b, err := bundle.NewBuilder(t.TempDir())
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
		r, err := bundle.Open(bl.Path)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range bl.Members {
			if m.Role == "companion" {
				n++
			}
		}
		return r, n
	}
	r, n := preserve()
	if n != len(files) {
		t.Fatalf("%d companions, want the %d cache files", n, len(files))
	}
	p := r.Artifacts()[0].Path
	root := filepath.Dir(filepath.Dir(p))
	for f, want := range files {
		if got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f))); err != nil || string(got) != want {
			t.Fatalf("%s: %q %v", f, got, err)
		}
	}
	if !strings.HasSuffix(p, filepath.Join("WVRL", "matmul_kernel.autotune.json")) {
		t.Fatalf("artifact path %s", p)
	}
	art.Role, art.CaptureID = formats.RoleExplicit, ""
	if _, n := preserve(); n != 0 {
		t.Fatalf("an explicit autotune file took %d companions", n)
	}
}
