package sarif

import (
	"errors"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/flameox/flameox/internal/evidence"
)

// Root is the directory that SARIF locations and path filters are scoped
// to. Paths are checked lexically; where a path (or a prefix of it) exists,
// its symlinks are also evaluated so an existing link cannot lead out of the
// root. Only directory entries are examined, never file contents.
type Root struct {
	Path string // absolute and clean, as given
	real string // Path with the symlinks of its existing prefix evaluated
	memo map[string]string
}

// NewRoot checks that dir is absolute and prepares it. The directory need
// not exist: a report exported elsewhere is normalized lexically.
func NewRoot(dir string) (*Root, error) {
	if !filepath.IsAbs(dir) {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "option %s must be an absolute path, got %q", OptSourceRoot, dir)
	}
	if strings.ContainsRune(dir, 0) {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "option %s holds a NUL byte", OptSourceRoot)
	}
	clean := filepath.Clean(dir)
	real, err := evalExisting(clean)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "source root %s", clean)
	}
	return &Root{Path: clean, real: real, memo: map[string]string{}}, nil
}

// evalExisting evaluates the symlinks of the longest existing prefix of an
// absolute clean path and appends the rest unchanged.
func evalExisting(p string) (string, error) {
	rest := ""
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether abs (clean, absolute) is root or below it.
func within(root, abs string) bool {
	return abs == root || strings.HasPrefix(abs, root+string(filepath.Separator)) || root == string(filepath.Separator)
}

// Rel maps an absolute clean path to its slash-separated path relative to
// the root, or reports the status that rejects it.
func (r *Root) Rel(abs string, fromFileURI bool) (string, string) {
	if !within(r.Path, abs) {
		if fromFileURI {
			return "", StatusFileOutsideRoot
		}
		return "", StatusOutsideRoot
	}
	real, ok := r.memo[abs]
	if !ok {
		var err error
		real, err = evalExisting(abs)
		if err != nil {
			// A path that cannot be examined cannot be shown to stay inside.
			real = ""
		}
		r.memo[abs] = real
	}
	if real == "" || !within(r.real, real) {
		return "", StatusSymlink
	}
	rel, err := filepath.Rel(r.Path, abs)
	if err != nil {
		return "", StatusOutsideRoot
	}
	return filepath.ToSlash(rel), StatusOK
}

func hasDotDot(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// target is where a location URI points before root checks.
type target struct {
	abs      string // absolute clean path, when resolved to one
	rel      string // root-relative slash path, when relative to the root
	fromFile bool   // came from a file:// URI
	status   string // non-empty when already rejected
}

// parseRef classifies a URI reference. It returns the decoded path and
// whether it was a file URI; a non-empty status rejects it.
func parseRef(ref string) (p string, isFile bool, status string) {
	if ref == "" || len(ref) > uriBytes || strings.ContainsRune(ref, 0) {
		return "", false, StatusInvalidURI
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", false, StatusInvalidURI
	}
	if strings.ContainsRune(u.Path, 0) {
		return "", false, StatusInvalidURI
	}
	switch {
	case u.Scheme == "":
		if u.Host != "" {
			// A network-path reference ("//host/x") names another machine.
			return "", false, StatusRemote
		}
		return u.Path, false, ""
	case strings.EqualFold(u.Scheme, "file"):
		if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
			return "", true, StatusRemote
		}
		if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
			return "", true, StatusInvalidURI
		}
		return u.Path, true, ""
	case u.Host != "" || u.User != nil || strings.HasPrefix(u.Opaque, "//"):
		return "", false, StatusRemote
	}
	return "", false, StatusScheme
}

// resolve turns a location's URI and uriBaseId into a target. bases maps
// the run's originalUriBaseIds; basesSeen says whether the run had them.
func resolve(ref, baseID string, bases map[string]artifactLoc) target {
	p, isFile, st := parseRef(ref)
	if st != "" {
		return target{status: st, fromFile: isFile}
	}
	if hasDotDot(p) {
		return target{status: StatusTraversal, fromFile: isFile}
	}
	if strings.HasPrefix(p, "/") {
		// Absolute: a base does not apply (RFC 3986 resolution).
		return target{abs: filepath.Clean(filepath.FromSlash(p)), fromFile: isFile}
	}
	if baseID == "" {
		return target{rel: p}
	}
	b := resolveBase(baseID, bases, 0)
	if b.status != "" {
		return b
	}
	if b.abs != "" {
		return target{abs: filepath.Join(b.abs, filepath.FromSlash(p)), fromFile: b.fromFile}
	}
	return target{rel: path.Join(b.rel, p)}
}

// resolveBase resolves a uriBaseId through originalUriBaseIds. A base the
// log does not define, defines without a URI, or defines in a cycle is
// unsupported: flameox does not guess what a producer meant by it.
func resolveBase(id string, bases map[string]artifactLoc, depth int) target {
	def, ok := bases[id]
	if !ok || def.uri == "" || depth > 8 {
		return target{status: StatusUnsupportedBase}
	}
	p, isFile, st := parseRef(def.uri)
	if st != "" {
		return target{status: st, fromFile: isFile}
	}
	if hasDotDot(p) {
		return target{status: StatusTraversal}
	}
	if strings.HasPrefix(p, "/") {
		return target{abs: filepath.Clean(filepath.FromSlash(p)), fromFile: isFile}
	}
	if def.base == "" {
		return target{rel: p}
	}
	parent := resolveBase(def.base, bases, depth+1)
	if parent.status != "" {
		return parent
	}
	if parent.abs != "" {
		return target{abs: filepath.Join(parent.abs, filepath.FromSlash(p)), fromFile: parent.fromFile}
	}
	return target{rel: path.Join(parent.rel, p)}
}

// locate maps a target to a root-relative path and status.
func (r *Root) locate(t target) (string, string) {
	if t.status != "" {
		return "", t.status
	}
	abs := t.abs
	if abs == "" {
		abs = filepath.Join(r.Path, filepath.FromSlash(t.rel))
	}
	return r.Rel(abs, t.fromFile)
}
