package triton

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
)

// RoleAutotune is the role of the autotune files this provider stages.
const RoleAutotune = "autotune-cache"

// maxCacheFiles bounds the cache files kept with one autotune artifact.
const maxCacheFiles = 100_000

// CacheBundle is the triton-autotune format's companions
// (formats.Spec.Companions): for an autotune file this provider staged, the
// whole request-owned TRITON_CACHE_DIR it lies in — every kernel's
// compilation artifacts (.cubin, .ptx, .ttir, .ttgir, .llir, .json and the
// rest) and the other autotune files — so a bundle keeps the cache bundle
// whole. An autotune file given by path, or one outside a capture's
// triton-cache directory, has none: a user's own cache is not swept into a
// bundle.
func CacheBundle(a *evidence.Artifact) (string, []string, error) {
	root := filepath.Dir(filepath.Dir(a.Path))
	if a.Role != RoleAutotune || a.CaptureID == "" || filepath.Base(root) != CacheDir {
		return "", nil, nil
	}
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil // directories are walked; links and the rest are not cache files
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if len(names) >= maxCacheFiles {
			return evidence.Failf(evidence.CodeLimitExceeded, "the Triton cache %s holds more than %d files", root, maxCacheFiles)
		}
		if strings.Count(rel, string(filepath.Separator)) < 8 {
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return "", nil, evidence.AsFailure(err, evidence.CodeIOFailure)
	}
	return root, names, nil
}
