package bundle

import (
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/durable"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// Directory artifacts. Some formats are a directory whose one named file is
// the artifact (an Nsight Systems parquetdir's META_DATA_EXPORT.parquet, a
// Triton cache entry's .autotune.json): the decoder reads the files beside
// it. A bundle keeps such an artifact whole: besides native/<hex>, every
// file of its directory (the artifact's own name included) is a member of
// role "companion" at native/<hex>.dir/<path>, with its size and digest,
// and Reader.Artifacts names the artifact inside that directory, so the
// decoder finds its tables again. A bundle without directory artifacts is
// byte for byte what it was before companions existed.

const (
	roleCompanion = "companion"
	companionExt  = ".dir"
	// maxCompanions bounds the files kept with one artifact.
	maxCompanions = 100_000
)

// Formats finds a format by name, so that AddArtifact can ask a format for
// its artifact's companions (formats.Spec.Companions). The registry sets
// it; nil keeps every artifact a single file.
var Formats func(name string) (*formats.Spec, bool)

// companionDir is where the companions of the artifact with digest hex live.
func companionDir(hex string) string { return nativeDir + "/" + hex + companionExt }

// addCompanions copies the files that belong with artifact a, when its
// format says it is a directory artifact. Called once per digest.
func (b *Builder) addCompanions(a *evidence.Artifact, hex string) error {
	if Formats == nil || a.Format == "" {
		return nil
	}
	spec, ok := Formats(a.Format)
	if !ok || spec.Companions == nil {
		return nil
	}
	root, names, err := spec.Companions(a)
	if err != nil {
		return evidence.AsFailure(err, evidence.CodeIOFailure)
	}
	if len(names) == 0 {
		return nil
	}
	if len(names) > maxCompanions {
		return evidence.Failf(evidence.CodeLimitExceeded, "artifact %s has %d files beside it, more than the %d a bundle keeps", a.Name, len(names), maxCompanions).At(a.Path, a.ID)
	}
	rel := companionDir(hex)
	if err := os.Mkdir(filepath.Join(b.tmp, filepath.FromSlash(rel)), 0o755); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "create companion directory").At(a.Path, a.ID)
	}
	own, err := filepath.Rel(root, a.Path)
	if err != nil || !safeRel(filepath.ToSlash(own)) || path.Base(filepath.ToSlash(own)) != a.Name {
		return evidence.Failf(evidence.CodeInternal, "format %s puts artifact %s outside its directory %s", a.Format, a.Path, root).At(a.Path, a.ID)
	}
	own = filepath.ToSlash(own)
	mkdir := func(p string) error {
		if err := os.MkdirAll(filepath.Join(b.tmp, filepath.FromSlash(path.Dir(p))), 0o755); err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "create companion directory").At(a.Path, a.ID)
		}
		return nil
	}
	// The artifact's own copy, verified against its id like native/<hex>.
	if err := mkdir(rel + "/" + own); err != nil {
		return err
	}
	if err := copyNative(b.ctx, a, filepath.Join(b.tmp, filepath.FromSlash(rel+"/"+own))); err != nil {
		return err
	}
	b.companions = append(b.companions, &evidence.Member{Path: rel + "/" + own, SHA256: hex, Size: a.Size, Role: roleCompanion})
	for _, n := range names {
		if n == own {
			continue
		}
		if !safeRel(n) {
			return evidence.Failf(evidence.CodeInternal, "format %s names companion %q of %s: not a relative path inside its directory", a.Format, n, a.Name)
		}
		if err := mkdir(rel + "/" + n); err != nil {
			return err
		}
		m, err := copyCompanion(b.ctx, filepath.Join(root, filepath.FromSlash(n)), filepath.Join(b.tmp, filepath.FromSlash(rel+"/"+n)))
		if err != nil {
			return err
		}
		m.Path, m.Role = rel+"/"+n, roleCompanion
		b.companions = append(b.companions, m)
	}
	return nil
}

// safeName is a file name that stays in its directory.
func safeName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\\\x00")
}

// safeRel is a slash-separated relative path of safe names, at most 8 deep.
func safeRel(p string) bool {
	parts := strings.Split(p, "/")
	if len(parts) > 8 {
		return false
	}
	for _, s := range parts {
		if !safeName(s) {
			return false
		}
	}
	return true
}

// companionDirs are the directories companion members need, deepest
// first (so that each is synced before its parent).
func companionDirs(members []*evidence.Member) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range members {
		for d := path.Dir(m.Path); d != nativeDir && d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(x, y string) int {
		if c := strings.Count(y, "/") - strings.Count(x, "/"); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	return out
}

// copyCompanion copies a regular file, hashing what it copies.
func copyCompanion(ctx context.Context, src, dst string) (_ *evidence.Member, err error) {
	in, size, err := formats.OpenRegular(src, "")
	if err != nil {
		f := evidence.AsFailure(err, evidence.CodeIOFailure)
		f.Message = "companion file: " + f.Message
		return nil, f
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "create companion copy").At(src, "")
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(dst)
		}
	}()
	dw := durable.NewWriter(out)
	var r io.Reader = io.LimitReader(in, size+1)
	if ctx != nil {
		r = &ctxReader{ctx: ctx, r: r}
	}
	n, err := io.CopyBuffer(dw, r, make([]byte, copyBuffer))
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "copy companion file").At(src, "")
	}
	if n != size {
		return nil, evidence.Failf(evidence.CodeIntegrity, "companion file changed while it was copied (%d bytes, %d at open)", n, size).At(src, "")
	}
	if err := durable.SyncClose(out); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "write companion copy").At(src, "")
	}
	return &evidence.Member{SHA256: dw.Sum(), Size: n}, nil
}

// companionOwner is the artifact digest a companion member belongs to, or
// "" when its path is not native/<hex>.dir/<name>.
func companionOwner(p string) string {
	rest, ok := strings.CutPrefix(p, nativeDir+"/")
	if !ok {
		return ""
	}
	hex, name, ok := strings.Cut(rest, "/")
	if !ok || !safeRel(name) {
		return ""
	}
	hex, ok = strings.CutSuffix(hex, companionExt)
	if !ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		return ""
	}
	return hex
}

// artifactPath is where Reader.Artifacts names a preserved artifact: in
// its companion directory when it has one holding its own copy, else its
// native file.
func (m *Manifest) artifactPath(a *evidence.Artifact) string {
	dir := companionDir(a.Digest()) + "/"
	for _, mb := range m.Members { // sorted by path: the first copy wins
		if mb.Role == roleCompanion && strings.HasPrefix(mb.Path, dir) && path.Base(mb.Path) == a.Name &&
			mb.SHA256 == a.Digest() && mb.Size == a.Size {
			return mb.Path
		}
	}
	return a.Path
}
