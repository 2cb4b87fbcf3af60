package registry

import "github.com/flameox/flameox/internal/bundle"

// A bundle asks a directory artifact's format for the files that belong
// with it (formats.Spec.Companions); the registry is where formats are
// found by name.
func init() { bundle.Formats = Format }
