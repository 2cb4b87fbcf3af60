package bundle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// Reader is an opened, verified bundle.
type Reader struct {
	Dir      string // absolute
	ID       ID
	Manifest *Manifest
	size     int64 // of manifest.json
}

// Open verifies the bundle in dir and returns its manifest: the manifest's
// digest must be the directory's name, every member's size and digest must
// match, and nothing else may be in the directory. Any mismatch is an
// INTEGRITY_FAILURE located at the offending file.
func Open(dir string) (*Reader, error) { return open(dir, false) }

// OpenTables verifies the manifest of the bundle in dir (its digest is the
// directory's name, its structure is this layout's) but not the members:
// a reader of tables alone (flameox-rank --bundles) need not hash native
// bytes it never reads, and Rows checks each table file's digest as it
// opens it.
func OpenTables(dir string) (*Reader, error) { return open(dir, true) }

func open(dir string, manifestOnly bool) (*Reader, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "bundle %s", dir)
	}
	// A path that names nothing is a wrong argument to read, not a damaged
	// bundle: IO_FAILURE, as for any file that cannot be opened.
	st, err := os.Stat(abs)
	if err != nil {
		return nil, (&evidence.Failure{Code: evidence.CodeIOFailure, Message: "bundle: " + err.Error(), Err: err}).At(abs, "")
	}
	if !st.IsDir() {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "%s is not a bundle directory: not a directory", abs).At(abs, "")
	}
	id, err := ParseID(filepath.Base(abs))
	if err != nil {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "%s is not a bundle directory: a bundle's directory is named by its 64-hex id", abs).At(abs, "")
	}
	mpath := filepath.Join(abs, manifestName)
	data, err := readManifest(mpath)
	if err != nil {
		return nil, err
	}
	if got := Hash(data); got != id {
		return nil, integrity(mpath, "manifest digest %s does not match the bundle's id %s", got, id)
	}
	m, err := decodeManifest(data)
	if err != nil {
		var f *evidence.Failure
		if errors.As(err, &f) && f.Code == evidence.CodeUnsupportedFormat {
			return nil, f.At(mpath, "")
		}
		return nil, integrity(mpath, "malformed manifest: %v", err)
	}
	r := &Reader{Dir: abs, ID: id, Manifest: m, size: int64(len(data))}
	if manifestOnly {
		return r, nil
	}
	if err := r.verifyTree(); err != nil {
		return nil, err
	}
	for _, mb := range m.Members {
		p := filepath.Join(abs, filepath.FromSlash(mb.Path))
		if err := verifyFile(p, mb.Size, mb.SHA256); err != nil {
			f := integrity(p, "bundle member %s: %v", mb.Path, err)
			if mb.Role == roleNative {
				f.Location.ArtifactID = "sha256:" + mb.SHA256
			}
			return nil, f
		}
	}
	return r, nil
}

// OpenID opens bundle id (with or without "sha256:") in store.
func OpenID(store, id string) (*Reader, error) {
	bid, err := ParseID(id)
	if err != nil {
		return nil, err
	}
	return Open(Dir(store, bid))
}

func integrity(path, format string, args ...any) *evidence.Failure {
	return evidence.Failf(evidence.CodeIntegrity, format, args...).At(path, "")
}

func readManifest(path string) ([]byte, error) {
	f, _, err := formats.OpenRegular(path, "")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, integrity(path, "bundle has no manifest")
	case evidence.CodeOf(err) == evidence.CodeInvalidArgument:
		return nil, integrity(path, "the manifest is not a regular file")
	case err != nil:
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read manifest").At(path, "")
	}
	if len(data) > maxManifest {
		return nil, evidence.Failf(evidence.CodeLimitExceeded, "manifest larger than %d bytes", maxManifest).At(path, "")
	}
	return data, nil
}

// verifyTree refuses any file or directory the manifest does not list:
// an added file is tampering as much as a changed one.
func (r *Reader) verifyTree() error {
	listed := map[string]bool{manifestName: true}
	dirs := map[string]bool{nativeDir: true, tablesDir: true}
	for _, mb := range r.Manifest.Members {
		listed[mb.Path] = true
		if d := path.Dir(mb.Path); mb.Role == roleTable {
			dirs[d] = true // layout 2: tables/<name>/
		} else if mb.Role == roleCompanion {
			for ; d != nativeDir && d != "."; d = path.Dir(d) {
				dirs[d] = true // native/<hex>.dir/ and below
			}
		}
	}
	return filepath.WalkDir(r.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "list bundle").At(p, "")
		}
		rel, _ := filepath.Rel(r.Dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
			return nil
		case d.IsDir() && dirs[rel]:
			return nil
		case listed[rel] && d.Type().IsRegular():
			return nil
		case listed[rel]:
			return integrity(p, "bundle member %s is not a regular file", rel)
		}
		return integrity(p, "bundle holds %s, which its manifest does not list", rel)
	})
}

// Block returns the bundle block announcing this bundle.
func (r *Reader) Block() *evidence.Bundle {
	members := append([]evidence.Member{{Path: manifestName, SHA256: r.ID.Hex(), Size: r.size, Role: roleManifest}}, r.Manifest.Members...)
	return &evidence.Bundle{ID: r.ID.String(), Path: r.Dir, Members: members}
}

// Artifacts returns the preserved artifacts with absolute paths to their
// native copies, ready to decode again without recapturing. The decoder
// runner still checks each file's digest while it reads it.
func (r *Reader) Artifacts() []*evidence.Artifact {
	out := make([]*evidence.Artifact, len(r.Manifest.Artifacts))
	for i, a := range r.Manifest.Artifacts {
		c := *a
		c.Path = filepath.Join(r.Dir, filepath.FromSlash(r.Manifest.artifactPath(a)))
		out[i] = &c
	}
	return out
}

// Captures returns the preserved capture blocks, their bundle_id set to
// this bundle.
func (r *Reader) Captures() []*evidence.Raw {
	out := make([]*evidence.Raw, len(r.Manifest.Captures))
	for i, c := range r.Manifest.Captures {
		o := make(evidence.Object, len(c))
		for k, v := range c {
			o[k] = v
		}
		o["bundle_id"] = r.ID.String()
		out[i] = &evidence.Raw{Obj: o}
	}
	return out
}

// Failures returns the preserved failures.
func (r *Reader) Failures() []*evidence.Failure {
	out := make([]*evidence.Failure, len(r.Manifest.Failures))
	for i, f := range r.Manifest.Failures {
		c := *f.Failure
		out[i] = &c
	}
	return out
}

// Rows streams the rows of table i (an index into Manifest.Tables) back
// from Parquet as canonical values. The file's digest is checked again as
// it is opened, since it may have changed after Open. Errors are typed:
// INTEGRITY_FAILURE when the file does not hold what the manifest says.
func (r *Reader) Rows(i int) iter.Seq2[evidence.Object, error] {
	return func(yield func(evidence.Object, error) bool) {
		if i < 0 || i >= len(r.Manifest.Tables) {
			yield(nil, evidence.Failf(evidence.CodeInvalidArgument, "bundle %s has no table %d", r.ID, i))
			return
		}
		t := r.Manifest.Tables[i]
		p := filepath.Join(r.Dir, filepath.FromSlash(t.Path))
		var mb evidence.Member
		for _, m := range r.Manifest.Members {
			if m.Path == t.Path {
				mb = m
			}
		}
		f, _, err := formats.OpenRegular(p, "")
		if err != nil {
			yield(nil, evidence.AsFailure(err, evidence.CodeIOFailure))
			return
		}
		defer f.Close()
		if err := verifyOpen(f, mb.Size, mb.SHA256); err != nil {
			yield(nil, integrity(p, "bundle member %s: %v", t.Path, err))
			return
		}
		n, err := readRows(f, mb.Size, t, yield)
		switch {
		case err != nil:
			var ff *evidence.Failure
			if !errors.As(err, &ff) {
				ff = integrity(p, "table %s: %v", t.Header.ID, err)
			}
			yield(nil, ff.At(p, ""))
		case n != t.Rows:
			yield(nil, integrity(p, "table %s holds %d rows, the manifest says %d", t.Header.ID, n, t.Rows))
		}
	}
}

// readRows decodes a table file, yielding each row. A verified file can
// still be hostile (its bytes are only as good as the manifest that names
// them), so a panic inside the Parquet reader becomes an error.
func readRows(f *os.File, size int64, t TableEntry, yield func(evidence.Object, error) bool) (n int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquet reader: %v", p)
		}
	}()
	pf, err := parquet.OpenFile(f, size)
	if err != nil {
		return 0, err
	}
	cols, err := fileColumns(pf, t.Header)
	if err != nil {
		return 0, err
	}
	buf := make([]parquet.Row, 128)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			k, rerr := rows.ReadRows(buf)
			for _, row := range buf[:k] {
				o, err := rowObject(row, cols)
				if err != nil {
					rows.Close()
					return n, fmt.Errorf("row %d: %w", n, err)
				}
				n++
				if !yield(o, nil) {
					rows.Close()
					return n, nil
				}
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				rows.Close()
				return n, rerr
			}
		}
		if err := rows.Close(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// fileColumns maps the file's leaves to the header's columns, refusing a
// file whose schema is not the one the header implies.
func fileColumns(pf *parquet.File, h *evidence.Table) ([]column, error) {
	want, cols := tableSchema(h)
	if !parquet.EqualNodes(want, pf.Schema()) {
		return nil, fmt.Errorf("the Parquet schema %s is not the schema of its header", pf.Schema())
	}
	byLeaf := make([]column, len(cols))
	for _, c := range cols {
		byLeaf[c.leaf] = c
	}
	return byLeaf, nil
}

// rowObject converts a Parquet row of optional leaves to a canonical row.
func rowObject(row parquet.Row, byLeaf []column) (evidence.Object, error) {
	if len(row) != len(byLeaf) {
		return nil, fmt.Errorf("%d values for %d columns", len(row), len(byLeaf))
	}
	o := make(evidence.Object, len(byLeaf))
	for _, v := range row {
		leaf := v.Column()
		if leaf < 0 || leaf >= len(byLeaf) {
			return nil, fmt.Errorf("value of column %d", leaf)
		}
		c := byLeaf[leaf]
		if v.IsNull() {
			o[c.name] = nil
			continue
		}
		switch c.typ {
		case evidence.TypeString:
			if !utf8.Valid(v.ByteArray()) {
				return nil, fmt.Errorf("column %q: %w", c.name, evidence.ErrInvalidUTF8)
			}
			o[c.name] = string(v.ByteArray())
		case evidence.TypeInt:
			o[c.name] = v.Int64()
		case evidence.TypeDouble:
			o[c.name] = v.Double()
		case evidence.TypeBool:
			o[c.name] = v.Boolean()
		case evidence.TypeJSON:
			j, err := evidence.ParseValue(v.ByteArray(), 0)
			if err != nil {
				return nil, fmt.Errorf("column %q: %w", c.name, err)
			}
			o[c.name] = j
		}
	}
	if len(o) != len(byLeaf) {
		return nil, fmt.Errorf("a column appears twice")
	}
	return o, nil
}
