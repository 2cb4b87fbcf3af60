package capture

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/flameox/flameox/internal/evidence"
)

// HostTool is a collector installed on the host (a system package, a
// vendor toolkit) rather than in the workload or a managed environment:
// found on PATH, else where its installations put it, and identified by
// its digest and its own version output.
type HostTool struct {
	Name     string // the program looked up on PATH ("perf")
	Fallback string // where installations put it off PATH, or ""
	Missing  string // the failure's message when neither has it
	Guidance string // the retry action when it is missing
}

// Look finds the tool and returns its absolute path and SHA-256. Every
// failure is PROVIDER_UNAVAILABLE.
func (t *HostTool) Look() (path, digest string, err error) {
	path, err = exec.LookPath(t.Name)
	if err != nil && t.Fallback != "" {
		if st, serr := os.Stat(t.Fallback); serr == nil && st.Mode().IsRegular() {
			path, err = t.Fallback, nil
		}
	}
	if err != nil {
		return "", "", &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: t.Missing, Retry: &evidence.Retry{Action: t.Guidance}, Err: err}
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", "", evidence.Wrap(evidence.CodeProviderUnavailable, err, "resolve %s", t.Name)
	}
	if digest, err = FileSHA256(path); err != nil {
		return "", "", evidence.Wrap(evidence.CodeProviderUnavailable, err, "read %s", path)
	}
	return path, digest, nil
}

// HostVersion runs `path --version` bounded by timeout, in a fixed
// environment (PATH=/usr/bin:/bin, LC_ALL=C, then env) so the caller's
// locale and settings cannot change the answer, and returns its stdout.
func HostVersion(ctx context.Context, path string, timeout time.Duration, env ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return hostCommand(ctx, []string{path, "--version"}, env).Output()
}

// HostProbe runs argv like HostVersion and returns stdout and stderr
// together, for tools that print their version on either.
func HostProbe(ctx context.Context, argv []string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return hostCommand(ctx, argv, nil).CombinedOutput()
}

func hostCommand(ctx context.Context, argv, env []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "LC_ALL=C"}, env...)
	// A child that keeps stdout open does not hold the answer past the timeout.
	cmd.WaitDelay = time.Second
	return cmd
}
