package bundle

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
)

// Layout names this on-disk model. It is part of every manifest, so a
// reader never mistakes another layout for this one. Layout 2 keeps each
// table at tables/<name>/<n>.parquet, so that one glob per table name
// reads it across bundles (docs/fleet.md); layout 1 (tables/<n>-<name>.parquet)
// is still read.
const (
	Layout   = "flameox-bundle/2"
	layoutV1 = "flameox-bundle/1"
)

// tablePath is where table n of the given name lives in a bundle of layout.
func tablePath(layout string, n int, name string) string {
	if layout == layoutV1 {
		return tablesDir + "/" + strconv.Itoa(n) + "-" + fileSafe(name) + ".parquet"
	}
	return tablesDir + "/" + fileSafe(name) + "/" + strconv.Itoa(n) + ".parquet"
}

// maxManifest bounds the manifest a reader loads: it grows with artifacts,
// tables and failures, never with rows.
const maxManifest = 64 << 20

// Manifest is a bundle's table of contents. Its canonical encoding is
// manifest.json, and the SHA-256 of those bytes is the bundle id.
type Manifest struct {
	Layout    string
	Writer    map[string]string    // library versions whose bytes the bundle holds
	Captures  []evidence.Object    // capture blocks, bundle_id null
	Artifacts []*evidence.Artifact // artifact blocks; Path is "native/<hex>"
	Tables    []TableEntry
	Failures  []FailureEntry
	Members   []evidence.Member // every file but manifest.json, by path
}

// TableEntry is one derived table.
type TableEntry struct {
	Header  *evidence.Table
	Summary *evidence.Summary // nil when the table never ended
	Path    string            // "tables/<name>/<n>.parquet" (layout 1: "tables/<n>-<name>.parquet")
	Rows    int64
}

// FailureEntry is a preserved failure.
type FailureEntry struct {
	Failure *evidence.Failure
	Native  string // "native/<hex>" of the artifact it concerns; "" when none is in the bundle
}

func writerVersions() map[string]string {
	return map[string]string{
		"parquet": parquetModule + " " + parquetVersion,
		"zstd":    zstdModule + " " + zstdVersion,
	}
}

func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (m *Manifest) value() evidence.Object {
	caps := make([]any, len(m.Captures))
	for i, c := range m.Captures {
		caps[i] = c
	}
	arts := make([]any, len(m.Artifacts))
	for i, a := range m.Artifacts {
		arts[i] = a
	}
	tables := make([]any, len(m.Tables))
	for i, t := range m.Tables {
		var s any
		if t.Summary != nil {
			s = t.Summary
		}
		tables[i] = evidence.Object{"header": t.Header, "summary": s, "path": t.Path, "rows": t.Rows}
	}
	fails := make([]any, len(m.Failures))
	for i, f := range m.Failures {
		fails[i] = evidence.Object{"failure": f.Failure, "native": orNull(f.Native)}
	}
	members := make([]any, len(m.Members))
	for i, mb := range m.Members {
		members[i] = evidence.Object{"path": mb.Path, "sha256": mb.SHA256, "size": mb.Size, "role": mb.Role}
	}
	return evidence.Object{
		"layout":    m.Layout,
		"writer":    m.Writer,
		"captures":  caps,
		"artifacts": arts,
		"tables":    tables,
		"failures":  fails,
		"members":   members,
	}
}

// encode returns the canonical manifest bytes.
func (m *Manifest) encode() ([]byte, error) { return evidence.Canonical(m.value()) }

// block returns the bundle block announcing this manifest's bundle.
func (m *Manifest) block(id ID, dir string) *evidence.Bundle {
	data, _ := m.encode() // encoded before, when the id was computed
	members := append([]evidence.Member{{Path: manifestName, SHA256: id.Hex(), Size: int64(len(data)), Role: roleManifest}}, m.Members...)
	return &evidence.Bundle{ID: id.String(), Path: dir, Members: members}
}

// decodeManifest parses and checks manifest bytes. Anything but the exact
// encoding this package writes is refused, so a manifest cannot carry
// fields that a reader would silently ignore.
func decodeManifest(data []byte) (*Manifest, error) {
	v, err := evidence.ParseValue(data, 0)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	o, ok := v.(evidence.Object)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	layout, _ := o["layout"].(string)
	if layout != Layout && layout != layoutV1 {
		return nil, evidence.Failf(evidence.CodeUnsupportedFormat, "bundle layout %q is not %q or %q, the ones this reader knows", o["layout"], Layout, layoutV1)
	}
	m := &Manifest{Layout: layout, Writer: map[string]string{}}
	wr, ok := o["writer"].(evidence.Object)
	if !ok {
		return nil, fmt.Errorf("writer: want an object")
	}
	for k, v := range wr {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("writer.%s: want a string", k)
		}
		m.Writer[k] = s
	}
	if err := eachObject(o, "captures", func(i int, c evidence.Object) error {
		if k, _ := c["kind"].(string); k != evidence.KindCapture {
			return fmt.Errorf("not a capture block")
		}
		m.Captures = append(m.Captures, c)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachObject(o, "artifacts", func(i int, a evidence.Object) error {
		art, err := blockOf(a, evidence.KindArtifact, evidence.BundledArtifactFrom)
		if err != nil {
			return err
		}
		d, err := artifactDigest(art.ID)
		if err != nil {
			return err
		}
		if art.Path != nativeDir+"/"+d {
			return fmt.Errorf("path %q is not %s/<its digest>", art.Path, nativeDir)
		}
		m.Artifacts = append(m.Artifacts, art)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachObject(o, "tables", func(i int, t evidence.Object) error {
		e, err := tableEntryOf(layout, i, t)
		if err != nil {
			return err
		}
		m.Tables = append(m.Tables, e)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachObject(o, "failures", func(i int, f evidence.Object) error {
		fo, ok := f["failure"].(evidence.Object)
		if !ok {
			return fmt.Errorf("failure: want an object")
		}
		fail, err := blockOf(fo, evidence.KindFailure, evidence.FailureFrom)
		if err != nil {
			return err
		}
		native, _ := f["native"].(string)
		m.Failures = append(m.Failures, FailureEntry{Failure: fail, Native: native})
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachObject(o, "members", func(i int, mo evidence.Object) error {
		var mb evidence.Member
		mb.Path, _ = mo["path"].(string)
		mb.SHA256, _ = mo["sha256"].(string)
		mb.Role, _ = mo["role"].(string)
		var ok bool
		if mb.Size, ok = evidence.AsInt(mo["size"]); !ok || mb.Size < 0 {
			return fmt.Errorf("size: want a non-negative integer")
		}
		if len(mb.SHA256) != 64 || strings.Trim(mb.SHA256, "0123456789abcdef") != "" {
			return fmt.Errorf("sha256: want 64 lower-case hex digits")
		}
		m.Members = append(m.Members, mb)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	again, err := m.encode()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(again, data) {
		return nil, fmt.Errorf("manifest is not in the exact form this layout writes (unknown fields, or not canonical JSON)")
	}
	return m, nil
}

// blockOf reads a block that must be of kind.
func blockOf[T any](o evidence.Object, kind string, from func(evidence.Object) (T, error)) (T, error) {
	var zero T
	if k, _ := o["kind"].(string); k != kind {
		return zero, fmt.Errorf("not a %s block", kind)
	}
	if s, _ := o["schema"].(string); s != evidence.Schema {
		return zero, fmt.Errorf("block schema %q is not %q", o["schema"], evidence.Schema)
	}
	return from(o)
}

func eachObject(o evidence.Object, field string, fn func(int, evidence.Object) error) error {
	arr, ok := o[field].([]any)
	if !ok {
		return fmt.Errorf("%s: want an array", field)
	}
	for i, v := range arr {
		e, ok := v.(evidence.Object)
		if !ok {
			return fmt.Errorf("%s[%d]: want an object", field, i)
		}
		if err := fn(i, e); err != nil {
			return fmt.Errorf("%s[%d]: %w", field, i, err)
		}
	}
	return nil
}

func tableEntryOf(layout string, i int, o evidence.Object) (TableEntry, error) {
	var e TableEntry
	ho, ok := o["header"].(evidence.Object)
	if !ok {
		return e, fmt.Errorf("header: want an object")
	}
	h, err := blockOf(ho, evidence.KindTable, evidence.TableFrom)
	if err != nil {
		return e, err
	}
	if err := checkColumns(h); err != nil {
		return e, err
	}
	e.Header = h
	if so, ok := o["summary"].(evidence.Object); ok {
		if e.Summary, err = blockOf(so, evidence.KindSummary, evidence.SummaryFrom); err != nil {
			return e, err
		}
	}
	e.Path, _ = o["path"].(string)
	if want := tablePath(layout, i, h.Name); e.Path != want {
		return e, fmt.Errorf("path %q is not %q", e.Path, want)
	}
	if e.Rows, ok = evidence.AsInt(o["rows"]); !ok || e.Rows < 0 {
		return e, fmt.Errorf("rows: want a non-negative integer")
	}
	if e.Summary != nil && (e.Summary.TableID != h.ID || e.Summary.RowsEmitted != e.Rows) {
		return e, fmt.Errorf("summary of table %s, %d rows emitted, does not close table %s of %d rows", e.Summary.TableID, e.Summary.RowsEmitted, h.ID, e.Rows)
	}
	return e, nil
}

// check verifies that members and entries refer to each other exactly:
// every artifact and table has its file, every file belongs to one.
func (m *Manifest) check() error {
	byPath := make(map[string]evidence.Member, len(m.Members))
	used := make(map[string]bool, len(m.Members))
	for _, mb := range m.Members {
		if _, dup := byPath[mb.Path]; dup {
			return fmt.Errorf("member %s listed twice", mb.Path)
		}
		byPath[mb.Path] = mb
	}
	if !slices.IsSortedFunc(m.Members, func(x, y evidence.Member) int { return strings.Compare(x.Path, y.Path) }) {
		return fmt.Errorf("members are not sorted by path")
	}
	for _, a := range m.Artifacts {
		mb, ok := byPath[a.Path]
		if !ok || mb.Role != roleNative || mb.SHA256 != a.Digest() || mb.Size != a.Size {
			return fmt.Errorf("artifact %s: no native member %s of %d bytes with its digest", a.ID, a.Path, a.Size)
		}
		used[a.Path] = true
	}
	ids := map[string]bool{}
	for _, t := range m.Tables {
		if ids[t.Header.ID] {
			return fmt.Errorf("table %s listed twice", t.Header.ID)
		}
		ids[t.Header.ID] = true
		if mb, ok := byPath[t.Path]; !ok || mb.Role != roleTable {
			return fmt.Errorf("table %s: no table member %s", t.Header.ID, t.Path)
		}
		used[t.Path] = true
	}
	for i, f := range m.Failures {
		if f.Native == "" {
			continue
		}
		mb, ok := byPath[f.Native]
		if !ok || mb.Role != roleNative || f.Native != nativeDir+"/"+strings.TrimPrefix(f.Failure.Location.ArtifactID, "sha256:") {
			return fmt.Errorf("failures[%d]: native %s is not the member of the artifact it names", i, f.Native)
		}
	}
	digests := map[string]bool{}
	for _, a := range m.Artifacts {
		digests[a.Digest()] = true
	}
	for _, mb := range m.Members {
		if mb.Role == roleCompanion {
			// A companion belongs to the artifact its directory names.
			if h := companionOwner(mb.Path); h == "" || !digests[h] {
				return fmt.Errorf("companion %s belongs to no artifact of the bundle", mb.Path)
			}
			continue
		}
		if !used[mb.Path] {
			return fmt.Errorf("member %s belongs to no artifact or table", mb.Path)
		}
	}
	return nil
}
