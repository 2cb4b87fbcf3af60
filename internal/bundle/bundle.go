// Package bundle writes and reads immutable, content-addressed evidence
// bundles: native artifacts copied byte-for-byte, derived tables streamed to
// Parquet, and a canonical manifest whose SHA-256 is the bundle's id.
// docs/bundles.md describes the on-disk model.
//
// It imports evidence, wire, durable and formats (the one path check).
package bundle

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/flameox/flameox/internal/durable"
	"github.com/flameox/flameox/internal/evidence"
)

// Store layout.
const (
	bundlesDir   = "bundles" // published bundles, one directory per id
	tmpDir       = "tmp"     // builders' work directories; never bundles
	manifestName = "manifest.json"
	nativeDir    = "native"
	tablesDir    = "tables"
)

// Member roles.
const (
	roleNative   = "native"
	roleTable    = "table"
	roleManifest = "manifest"
)

// Dir returns the directory of bundle id in store.
func Dir(store string, id ID) string { return filepath.Join(store, bundlesDir, id.Hex()) }

// Builder collects one bundle's members and publishes them atomically.
// Native bytes and table rows go to disk as they arrive; only the manifest
// entries stay in memory. A Builder is not safe for concurrent use.
type Builder struct {
	store     string // absolute
	tmp       string // this builder's work directory, under store/tmp
	captures  []evidence.Object
	artifacts []*evidence.Artifact        // Path relative to the bundle
	natives   map[string]*evidence.Member // by hex digest
	// companions are the files kept with directory artifacts (companions.go).
	companions []*evidence.Member
	tables     []*TableWriter
	tableIDs   map[string]bool
	failures   []*evidence.Failure
	done       bool
	published  *Manifest // the manifest Publish wrote, once it did
	// ctx, when set (WithContext), ends a native copy part way: a large
	// artifact must not keep an interrupted preserve running.
	ctx context.Context
}

// WithContext makes the builder's native copies stop when ctx ends.
func (b *Builder) WithContext(ctx context.Context) *Builder { b.ctx = ctx; return b }

// NewBuilder starts a bundle in store (created if absent).
func NewBuilder(store string) (*Builder, error) {
	abs, err := filepath.Abs(store)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "store %s", store)
	}
	for _, d := range []string{abs, filepath.Join(abs, bundlesDir), filepath.Join(abs, tmpDir)} {
		if err := mkdirSynced(d); err != nil {
			return nil, (&evidence.Failure{Code: evidence.CodeIOFailure, Message: "create store directory: " + err.Error(), Err: err}).At(d, "")
		}
	}
	tmp, err := os.MkdirTemp(filepath.Join(abs, tmpDir), "build-")
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "create work directory in %s", abs).At(filepath.Join(abs, tmpDir), "")
	}
	for _, d := range []string{nativeDir, tablesDir} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			os.RemoveAll(tmp)
			return nil, evidence.Wrap(evidence.CodeIOFailure, err, "create work directory").At(filepath.Join(tmp, d), "")
		}
	}
	return &Builder{
		store:    abs,
		tmp:      tmp,
		natives:  map[string]*evidence.Member{},
		tableIDs: map[string]bool{},
	}, nil
}

func (b *Builder) usable() error {
	if b.done {
		return evidence.Failf(evidence.CodeInternal, "bundle builder used after Publish or Abort")
	}
	return nil
}

// AddCapture records execution provenance. A capture's bundle_id is a
// back-reference written after publication, so the preserved block carries
// null there; Reader.Captures fills in the id of the bundle it came from.
func (b *Builder) AddCapture(c *evidence.Capture) error {
	if c == nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "nil capture")
	}
	cc := *c
	cc.BundleID = ""
	o, ok := cc.CanonicalValue().(evidence.Object)
	if !ok {
		return evidence.Failf(evidence.CodeInternal, "capture block is not an object")
	}
	return b.AddCaptureBlock(o)
}

// AddCaptureBlock records a capture block read from a stream, as it came
// (bar its bundle_id, as for AddCapture).
func (b *Builder) AddCaptureBlock(o evidence.Object) error {
	if err := b.usable(); err != nil {
		return err
	}
	if k, _ := o["kind"].(string); k != evidence.KindCapture {
		return evidence.Failf(evidence.CodeInvalidArgument, "not a capture block (kind %q)", o["kind"])
	}
	if id, _ := o["capture_id"].(string); id == "" {
		return evidence.Failf(evidence.CodeInvalidArgument, "capture block: field \"capture_id\" must be a non-empty string")
	}
	c := make(evidence.Object, len(o))
	for k, v := range o {
		c[k] = v
	}
	c["bundle_id"] = nil
	if _, err := evidence.Canonical(c); err != nil {
		return evidence.Wrap(evidence.CodeInvalidArgument, err, "capture block")
	}
	b.captures = append(b.captures, c)
	return nil
}

// AddArtifact copies a native file byte-for-byte, verifying its digest and
// size while copying; a mismatch is INTEGRITY_FAILURE. Identical bytes are
// stored once however many artifact blocks name them.
func (b *Builder) AddArtifact(a *evidence.Artifact) error {
	if err := b.usable(); err != nil {
		return err
	}
	if a == nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "nil artifact")
	}
	if err := a.Check(); err != nil {
		return err
	}
	digest := a.Digest()
	if m, ok := b.natives[digest]; ok {
		if m.Size != a.Size {
			return (&evidence.Failure{Code: evidence.CodeIntegrity,
				Message: "two artifact blocks give one digest different sizes",
				Details: evidence.Object{"sizes": []int64{m.Size, a.Size}}}).At(a.Path, a.ID)
		}
	} else {
		rel := nativeDir + "/" + digest
		if err := copyNative(b.ctx, a, filepath.Join(b.tmp, filepath.FromSlash(rel))); err != nil {
			return err
		}
		b.natives[digest] = &evidence.Member{Path: rel, SHA256: digest, Size: a.Size, Role: roleNative}
		if err := b.addCompanions(a, digest); err != nil {
			return err
		}
	}
	c := *a
	c.Path = nativeDir + "/" + digest
	if !slices.ContainsFunc(b.artifacts, func(x *evidence.Artifact) bool { return *x == c }) {
		b.artifacts = append(b.artifacts, &c)
	}
	return nil
}

// artifactDigest returns the hex digest of a well-formed artifact id.
func artifactDigest(id string) (string, error) {
	h, ok := strings.CutPrefix(id, "sha256:")
	if !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", evidence.Failf(evidence.CodeInvalidArgument, "artifact id %q: want sha256:<64 lower-case hex digits>", id)
	}
	return h, nil
}

// AddFailure records a typed analysis failure beside the native bytes. A
// failure whose location names an artifact of this bundle is linked to that
// artifact's native file in the manifest.
func (b *Builder) AddFailure(f *evidence.Failure) error {
	if err := b.usable(); err != nil {
		return err
	}
	if f == nil || f.Code == "" {
		return evidence.Failf(evidence.CodeInvalidArgument, "failure without a code")
	}
	// Keep the block as it reads back from JSON, so that the manifest
	// written now and the one a reader decodes are the same.
	data, err := evidence.Canonical(f)
	if err != nil {
		return evidence.Wrap(evidence.CodeInvalidArgument, err, "failure block")
	}
	v, err := evidence.ParseValue(data, 0)
	if err != nil {
		return evidence.Wrap(evidence.CodeInternal, err, "failure block")
	}
	o, _ := v.(evidence.Object)
	kept, err := evidence.FailureFrom(o)
	if err != nil {
		return err
	}
	b.failures = append(b.failures, kept)
	return nil
}

// BeginTable starts a derived table, streamed to Parquet. Table ids are
// unique within a bundle.
func (b *Builder) BeginTable(t *evidence.Table) (*TableWriter, error) {
	if err := b.usable(); err != nil {
		return nil, err
	}
	if t == nil || t.ID == "" || t.Name == "" {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "a table needs an id and a name")
	}
	if b.tableIDs[t.ID] {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "table %s: header seen twice", t.ID)
	}
	if err := checkColumns(t); err != nil {
		return nil, err
	}
	h := *t
	h.Columns = slices.Clone(t.Columns)
	h.ArtifactIDs = slices.Clone(t.ArtifactIDs)
	w, err := newTableWriter(b.tmp, &h, len(b.tables))
	if err != nil {
		return nil, err
	}
	b.tableIDs[t.ID] = true
	b.tables = append(b.tables, w)
	return w, nil
}

// Publish writes the manifest and publishes the bundle atomically. The same
// evidence gives the same bundle id; publishing an existing id verifies the
// bundle already there and returns it unchanged. Tables not yet ended are
// closed with a null summary. Publish or its failure ends the builder: its
// work directory is gone afterwards.
func (b *Builder) Publish(ctx context.Context) (*evidence.Bundle, error) {
	if err := b.usable(); err != nil {
		return nil, err
	}
	defer b.Abort()
	if len(b.captures)+len(b.artifacts)+len(b.tables)+len(b.failures) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "nothing to preserve: no capture, artifact, table or failure was added")
	}
	for _, t := range b.tables {
		if err := t.close(); err != nil {
			return nil, err
		}
	}
	m := b.manifest()
	b.published = m
	data, err := m.encode()
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInternal, err, "encode manifest")
	}
	id := Hash(data)
	if err := durable.WriteFile(filepath.Join(b.tmp, manifestName), data, 0o644); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "write manifest").At(filepath.Join(b.tmp, manifestName), "")
	}
	if err := b.seal(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, evidence.Wrap(evidence.CodeCancelled, err, "publish")
	}
	target := Dir(b.store, id)
	if _, err := os.Lstat(target); err == nil {
		return existing(target, id)
	}
	if err := os.Rename(b.tmp, target); err != nil {
		if errors.Is(err, os.ErrExist) || errors.Is(err, syscall.ENOTEMPTY) {
			return existing(target, id) // a concurrent publish of the same evidence won
		}
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "publish bundle %s", id).At(target, "")
	}
	if err := durable.SyncDir(filepath.Dir(target)); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "publish bundle %s", id).At(filepath.Dir(target), "")
	}
	return m.block(id, target), nil
}

// Manifest returns the manifest Publish wrote (that of the bundle it
// returned), or nil before a Publish.
func (b *Builder) Manifest() *Manifest { return b.published }

// seal makes the work directory's files read-only and its directories
// durable, so that the rename publishes complete bytes.
func (b *Builder) seal() error {
	files := []string{manifestName}
	for _, n := range b.natives {
		files = append(files, n.Path)
	}
	for _, t := range b.tables {
		files = append(files, t.rel)
	}
	for _, c := range b.companions {
		files = append(files, c.Path)
	}
	for _, f := range files {
		if err := os.Chmod(filepath.Join(b.tmp, filepath.FromSlash(f)), 0o444); err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "seal %s", f).At(filepath.Join(b.tmp, filepath.FromSlash(f)), "")
		}
	}
	// MkdirTemp made the work directory private; a bundle is readable.
	if err := os.Chmod(b.tmp, 0o755); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "seal bundle directory").At(b.tmp, "")
	}
	dirs := append(companionDirs(b.companions), nativeDir) // native/<hex>.dir/..., before native itself
	for _, t := range b.tables {
		if d := path.Dir(t.rel); !slices.Contains(dirs, d) {
			dirs = append(dirs, d) // tables/<name>, before tables itself
		}
	}
	for _, d := range append(dirs, tablesDir, ".") {
		if err := durable.SyncDir(filepath.Join(b.tmp, filepath.FromSlash(d))); err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "sync bundle directory")
		}
	}
	return nil
}

// existing verifies the bundle already published at dir and returns it.
func existing(dir string, id ID) (*evidence.Bundle, error) {
	r, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if r.ID != id {
		return nil, evidence.Failf(evidence.CodeIntegrity, "bundle directory holds %s, want %s", r.ID, id).At(dir, "")
	}
	return r.Block(), nil
}

// Abort removes the builder's temporary files. It is safe to call more
// than once and after Publish.
func (b *Builder) Abort() {
	if b == nil || b.done {
		return
	}
	b.done = true
	for _, t := range b.tables {
		t.abort()
	}
	// After a successful rename the work directory no longer exists.
	os.RemoveAll(b.tmp)
}

// manifest assembles the manifest of what was added.
func (b *Builder) manifest() *Manifest {
	m := &Manifest{Layout: Layout, Writer: writerVersions(), Captures: b.captures}
	m.Artifacts = slices.Clone(b.artifacts)
	// Artifacts are a set of inputs; a fixed order keeps the id independent
	// of the order in which they were added.
	slices.SortFunc(m.Artifacts, func(x, y *evidence.Artifact) int {
		cx, _ := evidence.Canonical(x)
		cy, _ := evidence.Canonical(y)
		return bytes.Compare(cx, cy)
	})
	for _, t := range b.tables {
		m.Tables = append(m.Tables, TableEntry{Header: t.header, Summary: t.summary, Path: t.rel, Rows: t.rows})
		m.Members = append(m.Members, *t.member)
	}
	for _, n := range b.natives {
		m.Members = append(m.Members, *n)
	}
	for _, c := range b.companions {
		m.Members = append(m.Members, *c)
	}
	for _, f := range b.failures {
		e := FailureEntry{Failure: f}
		if d, err := artifactDigest(f.Location.ArtifactID); err == nil && b.natives[d] != nil {
			e.Native = b.natives[d].Path
		}
		m.Failures = append(m.Failures, e)
	}
	slices.SortFunc(m.Members, func(x, y evidence.Member) int { return strings.Compare(x.Path, y.Path) })
	return m
}
