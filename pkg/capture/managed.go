package capture

import (
	"context"
	"errors"
	"io"
)

// (API fixed; the implementation is being written.)
var errManagedTODO = errors.New("capture: managed collectors not implemented yet")

// Managed describes a version-pinned collector that `flameox-capture setup
// --provider NAME` installs from PyPI into a flameox-owned environment. It
// is never resolved from the request's PATH.
type Managed struct {
	Provider      string   // provider name, for the retry action
	Package       string   // PyPI package, e.g. "py-spy"
	Version       string   // pinned version, e.g. "0.4.2"
	Executable    string   // console script or binary in the environment's bin/
	VersionArgs   []string // e.g. ["--version"]
	VersionPrefix string   // expected output prefix, e.g. "py-spy 0.4.2"
}

// SetupManaged prepares the pinned environment, checks the collector's
// version and returns its bound identity (path and SHA-256).
func SetupManaged(ctx context.Context, m Managed, log io.Writer) (*Resolved, error) {
	return nil, errManagedTODO
}

// ResolveManaged finds a prepared collector and re-checks its identity.
// A missing or changed collector is a PROVIDER_UNAVAILABLE failure whose
// retry action is `flameox-capture setup --provider NAME`.
func ResolveManaged(ctx context.Context, m Managed) (*Resolved, error) {
	return nil, errManagedTODO
}
