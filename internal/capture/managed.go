package capture

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/worker"
)

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

// EnvHome overrides the flameox home, where managed environments live.
const EnvHome = "FLAMEOX_HOME"

// versionTimeout bounds a collector's version probe.
const versionTimeout = 30 * time.Second

var (
	pkgName    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	pkgVersion = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+!_-]*$`)
	nameRun    = regexp.MustCompile(`[-_.]+`)
)

// normalize is PEP 503 name normalization.
func normalize(name string) string { return strings.ToLower(nameRun.ReplaceAllString(name, "-")) }

// Home returns the flameox home: $FLAMEOX_HOME, else flameox under the
// user cache directory (~/.cache/flameox).
func Home() (string, error) {
	if h := os.Getenv(EnvHome); h != "" {
		return filepath.Abs(h)
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", evidence.Wrap(evidence.CodeIOFailure, err, "flameox home: set %s", EnvHome)
	}
	return filepath.Join(c, "flameox"), nil
}

// ManagedDir is the environment that holds exactly m's pinned version.
func ManagedDir(m Managed) (string, error) {
	if !pkgName.MatchString(m.Package) || !pkgVersion.MatchString(m.Version) || m.Executable == "" ||
		strings.ContainsRune(m.Executable, '/') {
		return "", evidence.Failf(evidence.CodeInternal, "managed collector %q: invalid pin %s==%s (executable %q)",
			m.Provider, m.Package, m.Version, m.Executable)
	}
	h, err := Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(h, "managed", normalize(m.Package)+"-"+m.Version), nil
}

// SetupManaged prepares the pinned environment, checks the collector's
// version and returns its bound identity (path and SHA-256). It replaces
// any previous environment of the same pin; it records nothing else.
// python3 comes from PATH; pip honours its own configuration (PIP_INDEX_URL,
// PIP_FIND_LINKS, the pip cache).
func SetupManaged(ctx context.Context, m Managed, log io.Writer) (*Resolved, error) {
	dir, err := ManagedDir(m)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "setup %s", m.Provider)
	}
	// One setup of a pin at a time.
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "setup %s", m.Provider)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "setup %s: lock", m.Provider)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "setup %s: remove old environment", m.Provider)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("setup %s: python3 is not on PATH; it is needed to create the managed environment", m.Provider),
			Retry:   &evidence.Retry{Action: "install Python 3 with the venv module (Debian: apt-get install python3-venv), then run setup again"}}
	}
	install := []string{"install", "--disable-pip-version-check", "--no-input", "--no-warn-script-location", m.Package + "==" + m.Version}
	var steps [][]string
	if hostPipTargets(ctx, python) {
		// Seeding the environment with its own pip (ensurepip) is the
		// slow part of venv; the host's pip installs into it instead.
		steps = [][]string{
			{python, "-m", "venv", "--without-pip", dir},
			append([]string{python, "-m", "pip", "--python", filepath.Join(dir, "bin", "python")}, install...),
		}
	} else {
		steps = [][]string{
			{python, "-m", "venv", dir},
			append([]string{filepath.Join(dir, "bin", "python"), "-m", "pip"}, install...),
		}
	}
	for _, s := range steps {
		fmt.Fprintf(log, "setup %s: %s\n", m.Provider, strings.Join(s, " "))
		cmd := exec.CommandContext(ctx, s[0], s[1:]...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			_ = os.RemoveAll(dir)
			if ctx.Err() != nil {
				return nil, evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "setup %s", m.Provider)
			}
			return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable, Err: err,
				Message: fmt.Sprintf("setup %s: %s failed: %v", m.Provider, strings.Join(s, " "), err),
				Details: evidence.Object{"package": m.Package, "version": m.Version}}
		}
	}
	r, err := ResolveManaged(ctx, m)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return r, nil
}

// hostPipTargets reports whether python's own pip can install into another
// environment (pip --python, pip 22.3 and later).
func hostPipTargets(ctx context.Context, python string) bool {
	out, err := exec.CommandContext(ctx, python, "-m", "pip", "--version").Output()
	if err != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(string(out), "pip %d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 22 || major == 22 && minor >= 3
}

// ResolveManaged finds a prepared collector and re-checks its identity.
// A missing or changed collector is a PROVIDER_UNAVAILABLE failure whose
// retry action is `flameox-capture setup --provider NAME`.
//
// The identity is pip's own: the executable's SHA-256 must equal its
// entry in the RECORD of the installed distribution of exactly the pinned
// name and version, and the collector must report the pinned version.
// flameox keeps no receipt of its own.
func ResolveManaged(ctx context.Context, m Managed) (*Resolved, error) {
	dir, err := ManagedDir(m)
	if err != nil {
		return nil, err
	}
	unavailable := func(format string, args ...any) error {
		return &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("%s: managed %s==%s: ", m.Provider, m.Package, m.Version) + fmt.Sprintf(format, args...),
			Details: evidence.Object{"package": m.Package, "version": m.Version, "environment": dir},
			Retry: &evidence.Retry{Action: "prepare the pinned collector",
				Argv: []string{"flameox-capture", "setup", "--provider", m.Provider}}}
	}
	exe := filepath.Join(dir, "bin", m.Executable)
	st, err := os.Lstat(exe)
	if err != nil {
		return nil, unavailable("not set up (%s is absent)", exe)
	}
	if !st.Mode().IsRegular() {
		return nil, unavailable("%s is not a regular file", exe)
	}
	site, record, err := findDist(dir, m)
	if err != nil {
		return nil, unavailable("%v", err)
	}
	want, err := recordDigest(site, record, exe)
	if err != nil {
		return nil, unavailable("%v", err)
	}
	got, err := FileSHA256(exe)
	if err != nil {
		return nil, unavailable("%v", err)
	}
	if got != want {
		return nil, unavailable("%s changed since it was installed (sha256 %s, pip's RECORD says %s)", exe, got, want)
	}
	pctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(pctx, exe, m.VersionArgs...).CombinedOutput()
	if ctx.Err() != nil {
		return nil, evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "%s: version probe", m.Provider)
	}
	line := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(line, m.VersionPrefix) {
		return nil, unavailable("%s %s printed %q (err %v), want a line starting %q", exe, strings.Join(m.VersionArgs, " "), clip(line, 200), err, m.VersionPrefix)
	}
	return &Resolved{Executable: &evidence.Executable{Path: exe, SHA256: got}, Version: m.Version}, nil
}

// findDist returns the site-packages directory and the RECORD path of the
// installed distribution whose METADATA names exactly the pinned package
// and version.
func findDist(dir string, m Managed) (string, string, error) {
	metas, _ := filepath.Glob(filepath.Join(dir, "lib", "python*", "site-packages", "*.dist-info", "METADATA"))
	for _, meta := range metas {
		name, version, err := readMetadata(meta)
		if err != nil {
			continue
		}
		if normalize(name) == normalize(m.Package) {
			if version != m.Version {
				return "", "", fmt.Errorf("installed version is %s", version)
			}
			info := filepath.Dir(meta)
			return filepath.Dir(info), filepath.Join(info, "RECORD"), nil
		}
	}
	return "", "", errors.New("the distribution is not installed in the managed environment")
}

// readMetadata reads Name and Version from a core-metadata header.
func readMetadata(path string) (name, version string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() && (name == "" || version == "") {
		line := sc.Text()
		if line == "" {
			break // end of the header; the body follows
		}
		if v, ok := strings.CutPrefix(line, "Name:"); ok {
			name = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "Version:"); ok {
			version = strings.TrimSpace(v)
		}
	}
	return name, version, sc.Err()
}

// recordDigest returns the hex SHA-256 that RECORD lists for exe.
func recordDigest(site, record, exe string) (string, error) {
	b, err := os.ReadFile(record)
	if err != nil {
		return "", fmt.Errorf("read RECORD: %w", err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", record, err)
	}
	for _, row := range rows {
		if len(row) < 2 || filepath.Join(site, row[0]) != exe {
			continue
		}
		enc, ok := strings.CutPrefix(row[1], "sha256=")
		if !ok {
			return "", fmt.Errorf("%s lists no sha256 for %s", record, row[0])
		}
		raw, err := base64.RawURLEncoding.DecodeString(enc)
		if err != nil || len(raw) != sha256.Size {
			return "", fmt.Errorf("%s: bad digest %q for %s", record, row[1], row[0])
		}
		return hex.EncodeToString(raw), nil
	}
	return "", fmt.Errorf("%s does not list %s", record, exe)
}

// FileSHA256 returns the hex SHA-256 of a file's bytes: the identity
// providers record for a collector executable (the decoders' converters
// record theirs the same way).
func FileSHA256(path string) (string, error) { return worker.FileSHA256(path) }

// clip bounds text for a message; canonical output needs valid UTF-8.
func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
