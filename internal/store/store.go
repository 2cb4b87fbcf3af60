// Package store is the layout of an evidence store that many processes and
// hosts share, and its append-only index of bundles.
//
//	STORE/bundles/<hex>/…                 published bundles (package bundle)
//	STORE/bundles/*/tables/<name>/*.parquet  one glob per table name
//	STORE/index/<entry>.json              one file per preserve: the index
//	STORE/tmp/                            work in progress; never read
//
// The index is a set of immutable entries, one per publication, each one
// canonical JSON line naming a bundle, when and where it was preserved,
// what it holds and the labels the user gave. An entry is written to tmp/,
// synced and linked into index/ under a name derived from its bytes, so
// writers never share a file: concurrent preserves from any number of
// processes or hosts cannot corrupt the index, a crash leaves at most a
// file in tmp/, and recording the same entry twice is harmless. The
// bundles directory stays the truth: a bundle whose entry was lost to a
// crash between publication and indexing is still listed (unindexed).
//
// It imports bundle, durable and evidence.
package store

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/durable"
	"github.com/flameox/flameox/internal/evidence"
)

// IndexLayout names the index entry format; a reader refuses others.
const IndexLayout = "flameox-index/1"

// Directories of a store.
const (
	IndexDir   = "index"
	bundlesDir = "bundles"
	tmpDir     = "tmp"
)

// maxEntry bounds an index entry file a reader loads.
const maxEntry = 1 << 20

// Label bounds.
const (
	MaxLabels     = 64
	maxLabelValue = 256
)

var labelKey = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,62}$`)

// Fields are the index fields --where can test besides labels; a label
// may not take one of their names.
var Fields = []string{"bundle_id", "created", "host", "provider", "format", "outcome", "table"}

// Entry is one index entry: one publication of a bundle.
type Entry struct {
	BundleID  string            // "sha256:<hex>"
	Created   time.Time         // when it was preserved, UTC
	Host      string            // the preserving host's name
	Providers []string          // capture providers, sorted, each once
	Formats   []string          // artifact (else table) formats, sorted, each once
	Outcomes  []string          // capture outcomes, sorted, each once
	Tables    []string          // table names, sorted, each once
	Failures  int64             // failure blocks preserved
	Labels    map[string]string // set by the user (--label k=v)

	path string // the entry file it was read from
}

// CanonicalValue implements the canonical encoding of an entry.
func (e *Entry) CanonicalValue() any {
	labels := evidence.Object{}
	for k, v := range e.Labels {
		labels[k] = v
	}
	return evidence.Object{
		"layout":    IndexLayout,
		"bundle_id": e.BundleID,
		"created":   e.Created.UTC().Format(timeLayout),
		"host":      e.Host,
		"providers": strs(e.Providers),
		"formats":   strs(e.Formats),
		"outcomes":  strs(e.Outcomes),
		"tables":    strs(e.Tables),
		"failures":  e.Failures,
		"labels":    labels,
	}
}

// timeLayout is fixed-width, so that entries sort by time as text and an
// engine reads it as a timestamp.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func strs(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// CheckLabels refuses labels an engine or a --where could not use: keys
// are lower-case identifiers (dots and dashes allowed) that are not index
// field names, values are short printable UTF-8.
func CheckLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return evidence.LimitExceeded(evidence.LimitReceipt{Name: "max_labels", Value: MaxLabels, Observed: int64(len(labels)), Unit: "labels"},
			"at most %d labels per bundle", MaxLabels)
	}
	for k, v := range labels {
		if !labelKey.MatchString(k) {
			return label(k, "label name %q: want a lower-case letter, then letters, digits, '_', '.' or '-' (at most 63)", k)
		}
		if slices.Contains(Fields, k) {
			return label(k, "label name %q is an index field (%s); choose another name", k, strings.Join(Fields, ", "))
		}
		if len(v) > maxLabelValue || !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) {
			return label(k, "label %s: want at most %d bytes of printable UTF-8", k, maxLabelValue)
		}
	}
	return nil
}

func label(k, format string, args ...any) error {
	f := evidence.Failf(evidence.CodeInvalidArgument, format, args...)
	f.Location.Field = "label." + k
	return f
}

// EntryOf describes bundle id, of manifest m, for the index.
func EntryOf(id bundle.ID, m *bundle.Manifest, labels map[string]string, created time.Time, host string) *Entry {
	e := &Entry{BundleID: id.String(), Created: created.UTC(), Host: host, Labels: labels,
		Failures: int64(len(m.Failures))}
	for _, c := range m.Captures {
		if p, ok := c["provider"].(evidence.Object); ok {
			if n, ok := p["name"].(string); ok {
				e.Providers = append(e.Providers, n)
			}
		}
		if o, ok := c["outcome"].(string); ok {
			e.Outcomes = append(e.Outcomes, o)
		}
	}
	for _, a := range m.Artifacts {
		if a.Format != "" {
			e.Formats = append(e.Formats, a.Format)
		}
	}
	for _, t := range m.Tables {
		e.Tables = append(e.Tables, t.Header.Name)
		if len(m.Artifacts) == 0 && t.Header.Format != "" {
			e.Formats = append(e.Formats, t.Header.Format)
		}
	}
	for _, s := range []*[]string{&e.Providers, &e.Formats, &e.Outcomes, &e.Tables} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	if e.Labels == nil {
		e.Labels = map[string]string{}
	}
	return e
}

// Record appends e to the index of store: the entry is written whole to
// tmp/, synced, then linked into index/ under a name made of its time,
// bundle and digest, and the directory synced. Recording an identical
// entry again changes nothing.
func Record(store string, e *Entry) error {
	if err := CheckLabels(e.Labels); err != nil {
		return err
	}
	data, err := evidence.Canonical(e)
	if err != nil {
		return evidence.Wrap(evidence.CodeInternal, err, "index entry")
	}
	data = append(data, '\n')
	id, err := bundle.ParseID(e.BundleID)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	name := e.Created.UTC().Format("20060102T150405.000000000Z") + "-" + id.Hex()[:16] + "-" + hex.EncodeToString(sum[:8]) + ".json"
	idx := filepath.Join(store, IndexDir)
	tmp := filepath.Join(store, tmpDir)
	for _, d := range []string{idx, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "create index directory").At(d, "")
		}
	}
	f, err := os.CreateTemp(tmp, "index-*.json")
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "write index entry").At(tmp, "")
	}
	staged := f.Name()
	defer os.Remove(staged)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return evidence.Wrap(evidence.CodeIOFailure, err, "write index entry").At(staged, "")
	}
	if err := f.Chmod(0o444); err != nil {
		f.Close()
		return evidence.Wrap(evidence.CodeIOFailure, err, "write index entry").At(staged, "")
	}
	if err := durable.SyncClose(f); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "write index entry").At(staged, "")
	}
	// A link, not a rename: it never replaces an entry already there,
	// and one already there with this name holds these bytes.
	final := filepath.Join(idx, name)
	if err := os.Link(staged, final); err != nil && !errors.Is(err, fs.ErrExist) {
		return evidence.Wrap(evidence.CodeIOFailure, err, "record index entry").At(final, "")
	}
	if err := durable.SyncDir(idx); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "record index entry").At(idx, "")
	}
	return nil
}

// ReadEntry reads and checks one index entry file.
func ReadEntry(path string) (*Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "index entry").At(path, "")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEntry+1))
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "index entry").At(path, "")
	}
	if len(data) > maxEntry {
		return nil, evidence.Failf(evidence.CodeLimitExceeded, "index entry larger than %d bytes", maxEntry).At(path, "")
	}
	e, err := parseEntry(data)
	if err != nil {
		return nil, evidence.Failf(evidence.CodeIntegrity, "index entry: %v", err).At(path, "")
	}
	e.path = path
	return e, nil
}

func parseEntry(data []byte) (*Entry, error) {
	line, ok := strings.CutSuffix(string(data), "\n")
	if !ok || strings.Contains(line, "\n") {
		return nil, fmt.Errorf("want one JSON line ending in a newline")
	}
	v, err := evidence.ParseValue([]byte(line), 0)
	if err != nil {
		return nil, err
	}
	o, ok := v.(evidence.Object)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	if l, _ := o["layout"].(string); l != IndexLayout {
		return nil, fmt.Errorf("layout %q is not %q", o["layout"], IndexLayout)
	}
	e := &Entry{Labels: map[string]string{}}
	var okAll bool
	e.BundleID, okAll = o["bundle_id"].(string)
	if _, err := bundle.ParseID(e.BundleID); !okAll || err != nil || !strings.HasPrefix(e.BundleID, "sha256:") {
		return nil, fmt.Errorf("bundle_id %v: want sha256:<64 hex digits>", o["bundle_id"])
	}
	c, _ := o["created"].(string)
	if e.Created, err = time.Parse(timeLayout, c); err != nil {
		return nil, fmt.Errorf("created %q: want %s", c, timeLayout)
	}
	if e.Host, ok = o["host"].(string); !ok {
		return nil, fmt.Errorf("host: want a string")
	}
	for name, dst := range map[string]*[]string{"providers": &e.Providers, "formats": &e.Formats, "outcomes": &e.Outcomes, "tables": &e.Tables} {
		list, ok := o[name].([]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an array of strings", name)
		}
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s: want an array of strings", name)
			}
			*dst = append(*dst, s)
		}
	}
	if e.Failures, ok = evidence.AsInt(o["failures"]); !ok || e.Failures < 0 {
		return nil, fmt.Errorf("failures: want a non-negative integer")
	}
	lo, ok := o["labels"].(evidence.Object)
	if !ok {
		return nil, fmt.Errorf("labels: want an object")
	}
	for k, x := range lo {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("label %s: want a string", k)
		}
		e.Labels[k] = s
	}
	if err := CheckLabels(e.Labels); err != nil {
		return nil, err
	}
	if len(o) != 10 {
		return nil, fmt.Errorf("unknown fields")
	}
	if canon, err := evidence.Canonical(e); err != nil || string(canon) != line {
		return nil, fmt.Errorf("not the canonical encoding of its fields")
	}
	return e, nil
}

// Entries reads every index entry of store, in name order (time first).
// A store without an index has no entries.
func Entries(store string) ([]*Entry, error) {
	idx := filepath.Join(store, IndexDir)
	des, err := os.ReadDir(idx)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read the index").At(idx, "")
	}
	var out []*Entry
	for _, d := range des {
		if !strings.HasSuffix(d.Name(), ".json") || !d.Type().IsRegular() {
			return nil, evidence.Failf(evidence.CodeIntegrity, "the index holds %s, which is not an entry", d.Name()).At(filepath.Join(idx, d.Name()), "")
		}
		e, err := ReadEntry(filepath.Join(idx, d.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Bundles lists the ids of the published bundles of store, sorted. Only
// directories named by a bundle id count; anything else there is refused,
// since a store holds nothing else.
func Bundles(store string) ([]bundle.ID, error) {
	dir := filepath.Join(store, bundlesDir)
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "list bundles").At(dir, "")
	}
	out := make([]bundle.ID, 0, len(des))
	for _, d := range des {
		id, err := bundle.ParseID(d.Name())
		if err != nil || !d.IsDir() {
			return nil, evidence.Failf(evidence.CodeIntegrity, "%s is not a bundle directory", d.Name()).At(filepath.Join(dir, d.Name()), "")
		}
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b bundle.ID) int { return cmp.Compare(a.Hex(), b.Hex()) })
	return out, nil
}
