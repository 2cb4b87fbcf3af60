package registry

import (
	"github.com/flameox/flameox/internal/bundle"
	tritonprovider "github.com/flameox/flameox/internal/capture/providers/triton"
	"github.com/flameox/flameox/internal/formats/tritonautotune"
)

// A bundle asks a directory artifact's format for the files that belong
// with it (formats.Spec.Companions); the registry is where formats are
// found by name. A Triton autotune file staged by the triton provider
// belongs with the whole request-owned cache (compilation artifacts
// included), which the provider knows.
func init() {
	bundle.Formats = Format
	tritonautotune.Spec.Companions = tritonprovider.CacheBundle
}
