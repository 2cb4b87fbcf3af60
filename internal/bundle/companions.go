package bundle

import (
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
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
// role "companion" at native/<hex>.dir/<name>, with its size and digest,
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
	names, err := spec.Companions(a.Path)
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
	own := a.Name
	if !safeName(own) {
		return evidence.Failf(evidence.CodeInvalidArgument, "directory artifact name %q is not a plain file name", own).At(a.Path, a.ID)
	}
	// The artifact's own copy, verified against its id like native/<hex>.
	if err := copyNative(b.ctx, a, filepath.Join(b.tmp, filepath.FromSlash(rel), own)); err != nil {
		return err
	}
	b.companions = append(b.companions, &evidence.Member{Path: rel + "/" + own, SHA256: hex, Size: a.Size, Role: roleCompanion})
	dir := filepath.Dir(a.Path)
	for _, n := range names {
		if n == own {
			continue
		}
		if !safeName(n) {
			return evidence.Failf(evidence.CodeInternal, "format %s names companion %q of %s: not a plain file name", a.Format, n, a.Name)
		}
		m, err := copyCompanion(b.ctx, filepath.Join(dir, n), filepath.Join(b.tmp, filepath.FromSlash(rel), n))
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
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\\\x00") && n != manifestName
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
	d, name := path.Split(p)
	d = strings.TrimSuffix(d, "/")
	hex, ok := strings.CutPrefix(d, nativeDir+"/")
	if !ok || !safeName(name) {
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
	own := companionDir(a.Digest()) + "/" + a.Name
	for _, mb := range m.Members {
		if mb.Path == own && mb.Role == roleCompanion && mb.SHA256 == a.Digest() && mb.Size == a.Size {
			return own
		}
	}
	return a.Path
}
