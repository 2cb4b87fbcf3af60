package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flameox/flameox/internal/evidence"
)

// native writes data to dir/name and returns its artifact block.
func native(t testing.TB, dir, name string, data []byte) *evidence.Artifact {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return &evidence.Artifact{
		ID: "sha256:" + hex.EncodeToString(sum[:]), Path: p, Size: int64(len(data)),
		Name: name, Role: "cpu-profile", Format: "v8-cpuprofile",
		Producer: evidence.Producer{Name: "node", Version: "20.20.2"}, CaptureID: "cap-1",
	}
}

// allTypes is a header with one column of every type.
func allTypes(artifactID string) *evidence.Table {
	return &evidence.Table{
		ID: "t.frames", Name: "cpu.frames", Operation: "decode", Format: "v8-cpuprofile",
		Columns: []evidence.Column{
			{Name: "function", Type: evidence.TypeString, Description: "function name"},
			{Name: "self_weight", Type: evidence.TypeDouble, Unit: "s"},
			{Name: "calls", Type: evidence.TypeInt, Unit: "calls"},
			{Name: "attrs", Type: evidence.TypeJSON},
			{Name: "inlined", Type: evidence.TypeBool},
		},
		Evidence: evidence.Observed, ArtifactIDs: []string{artifactID},
		Decoder:   evidence.Producer{Name: "v8-cpuprofile", Version: "1"},
		Arguments: evidence.Object{"max_nodes": 1000},
	}
}

// sampleRows covers nulls, empty strings, non-finite doubles, integers
// beyond 2^53 (exact strings on the wire), nested JSON and non-ASCII text.
func sampleRows() []evidence.Object {
	return []evidence.Object{
		{"function": "main", "self_weight": 1.5, "calls": 3, "attrs": evidence.Object{"k": []any{1, "x", nil}}, "inlined": true},
		{"function": "", "self_weight": 0.0, "calls": 0, "attrs": "text", "inlined": false},
		{"function": nil, "self_weight": nil, "calls": nil, "attrs": nil, "inlined": nil},
		{"function": "ƒ 名前 😀", "self_weight": math.NaN(), "calls": "9007199254740993", "attrs": 2.5, "inlined": true},
		{"function": "neg", "self_weight": math.Inf(-1), "calls": -7, "attrs": []any{}, "inlined": false},
		{"function": "big", "self_weight": math.Inf(1), "calls": int64(math.MinInt64), "attrs": evidence.Object{}, "inlined": false},
		{"function": "json-number", "self_weight": json.Number("1e-7"), "calls": json.Number("42"), "attrs": json.Number("1"), "inlined": true},
	}
}

type evidenceSet struct {
	capture  *evidence.Capture
	artifact *evidence.Artifact
	table    *evidence.Table
	rows     []evidence.Object
	failure  *evidence.Failure
}

func sampleEvidence(t testing.TB, dir string) *evidenceSet {
	code := 0
	a := native(t, dir, "CPU.20260101.cpuprofile", []byte(`{"nodes":[],"samples":[],"timeDeltas":[]}`))
	return &evidenceSet{
		capture: &evidence.Capture{
			ID: "cap-1", Provider: evidence.Producer{Name: "node-cpu-profile", Version: "1"},
			Argv: []string{"node", "app.js"}, Command: []string{"node", "--cpu-prof", "app.js"}, Cwd: "/work",
			StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), EndedAt: time.Date(2026, 1, 1, 0, 0, 2, 500, time.UTC),
			ExitCode: &code, Outcome: evidence.OutcomeCompleted,
			Console:  map[string]*evidence.ConsoleStream{"stdout": {Mode: "bounded", Observed: 3, Retained: 3, Text: "ok\n"}},
			BundleID: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
		},
		artifact: a,
		table:    allTypes(a.ID),
		rows:     sampleRows(),
		failure: &evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "sample refers to node 9, which does not exist",
			Location: evidence.Location{ArtifactID: a.ID, Offset: 17, Field: "samples[0]"},
			Details:  evidence.Object{"node": 9}},
	}
}

func (e *evidenceSet) build(t testing.TB, store string) *evidence.Bundle {
	t.Helper()
	b, err := NewBuilder(store)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	must(t, b.AddCapture(e.capture))
	must(t, b.AddArtifact(e.artifact))
	w, err := b.BeginTable(e.table)
	must(t, err)
	for _, r := range e.rows {
		must(t, w.Row(r))
	}
	must(t, w.End(&evidence.Summary{RowsObserved: int64(len(e.rows)), Complete: true,
		Metrics: map[string]evidence.Metric{"total_weight": {Value: 2.5, Unit: "s"}}}))
	must(t, b.AddFailure(e.failure))
	bl, err := b.Publish(context.Background())
	must(t, err)
	return bl
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func canon(t testing.TB, v any) string {
	t.Helper()
	b, err := evidence.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// failureOf asserts err is a Failure with code.
func failureOf(t testing.TB, err error, code evidence.Code) *evidence.Failure {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) {
		t.Fatalf("error %v is not a *evidence.Failure", err)
	}
	if f.Code != code {
		t.Fatalf("code %s, want %s: %v", f.Code, code, f)
	}
	return f
}

func TestRoundTrip(t *testing.T) {
	src, store := t.TempDir(), t.TempDir()
	e := sampleEvidence(t, src)
	bl := e.build(t, store)

	r, err := Open(bl.Path)
	must(t, err)
	if r.ID.String() != bl.ID || canon(t, r.Block()) != canon(t, bl) {
		t.Fatalf("Open block %s differs from Publish block %s", canon(t, r.Block()), canon(t, bl))
	}

	t.Run("rows", func(t *testing.T) {
		var got []evidence.Object
		for row, err := range r.Rows(0) {
			must(t, err)
			got = append(got, row)
		}
		if len(got) != len(e.rows) {
			t.Fatalf("%d rows, want %d", len(got), len(e.rows))
		}
		for i := range got {
			if canon(t, got[i]) != canon(t, e.rows[i]) {
				t.Errorf("row %d: got %s, want %s", i, canon(t, got[i]), canon(t, e.rows[i]))
			}
		}
	})

	t.Run("parquet", func(t *testing.T) {
		p := filepath.Join(bl.Path, "tables", "cpu.frames", "0.parquet")
		f, err := os.Open(p)
		must(t, err)
		defer f.Close()
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		must(t, err)
		units, _ := pf.Lookup(MetaUnits)
		if want := `{"attrs":null,"calls":"calls","function":null,"inlined":null,"self_weight":"s"}`; units != want {
			t.Errorf("units metadata %s, want %s", units, want)
		}
		header, _ := pf.Lookup(MetaTable)
		if header != canon(t, e.table) {
			t.Errorf("table metadata %s, want %s", header, canon(t, e.table))
		}
		if pf.NumRows() != int64(len(e.rows)) {
			t.Errorf("%d rows in the file, want %d", pf.NumRows(), len(e.rows))
		}
		for _, rg := range pf.Metadata().RowGroups {
			for _, c := range rg.Columns {
				if c.MetaData.Codec != format.Zstd {
					t.Errorf("column %v compressed with %v, want ZSTD", c.MetaData.PathInSchema, c.MetaData.Codec)
				}
			}
		}
		// Read back with plain parquet-go, independent of Reader.Rows.
		leaf, ok := pf.Schema().Lookup("calls")
		if !ok {
			t.Fatal("no calls column")
		}
		rows := make([]parquet.Row, 16)
		n, _ := pf.RowGroups()[0].Rows().ReadRows(rows)
		var calls []string
		for _, row := range rows[:n] {
			v := row[leaf.ColumnIndex]
			if v.IsNull() {
				calls = append(calls, "null")
			} else {
				calls = append(calls, v.String())
			}
		}
		if want := "3 0 null 9007199254740993 -7 -9223372036854775808 42"; strings.Join(calls, " ") != want {
			t.Errorf("calls column %q, want %q", strings.Join(calls, " "), want)
		}
	})

	t.Run("natives", func(t *testing.T) {
		arts := r.Artifacts()
		if len(arts) != 1 {
			t.Fatalf("%d artifacts, want 1", len(arts))
		}
		a := arts[0]
		want := *e.artifact
		want.Path = filepath.Join(bl.Path, "native", e.artifact.Digest())
		if *a != want {
			t.Errorf("artifact %+v, want %+v", *a, want)
		}
		got, err := os.ReadFile(a.Path)
		must(t, err)
		orig, _ := os.ReadFile(e.artifact.Path)
		if !bytes.Equal(got, orig) {
			t.Error("native copy differs from the original bytes")
		}
		for _, m := range bl.Members {
			st, err := os.Stat(filepath.Join(bl.Path, m.Path))
			must(t, err)
			if st.Mode().Perm()&0o222 != 0 {
				t.Errorf("%s is writable (%v)", m.Path, st.Mode())
			}
		}
	})

	t.Run("provenance", func(t *testing.T) {
		caps := r.Captures()
		if len(caps) != 1 {
			t.Fatalf("%d captures, want 1", len(caps))
		}
		want := *e.capture
		want.BundleID = bl.ID
		if canon(t, caps[0]) != canon(t, &want) {
			t.Errorf("capture %s, want %s", canon(t, caps[0]), canon(t, &want))
		}
		fs := r.Failures()
		if len(fs) != 1 || canon(t, fs[0]) != canon(t, e.failure) {
			t.Fatalf("failures %v, want %s", fs, canon(t, e.failure))
		}
		if got := r.Manifest.Failures[0].Native; got != "native/"+e.artifact.Digest() {
			t.Errorf("failure linked to %q, want the artifact's native file", got)
		}
		tab := r.Manifest.Tables[0]
		if canon(t, tab.Header) != canon(t, e.table) || tab.Summary == nil || tab.Summary.RowsEmitted != int64(len(e.rows)) || tab.Summary.TableID != e.table.ID {
			t.Errorf("table entry %s / %+v", canon(t, tab.Header), tab.Summary)
		}
	})
}

func TestDeterministic(t *testing.T) {
	// The same evidence from two different scratch directories, into two
	// stores, with the artifacts added in different orders.
	build := func(reverse bool) (*evidence.Bundle, map[string][]byte) {
		src, store := t.TempDir(), t.TempDir()
		e := sampleEvidence(t, src)
		other := native(t, src, "heap.heapprofile", []byte("second artifact"))
		b, err := NewBuilder(store)
		must(t, err)
		defer b.Abort()
		arts := []*evidence.Artifact{e.artifact, other}
		if reverse {
			slices.Reverse(arts)
		}
		for _, a := range arts {
			must(t, b.AddArtifact(a))
		}
		must(t, b.AddCapture(e.capture))
		w, err := b.BeginTable(e.table)
		must(t, err)
		// Enough rows for two row groups.
		for i := range groupMaxRows + 100 {
			must(t, w.Row(evidence.Object{"function": "f" + string(rune('a'+i%26)), "self_weight": float64(i) / 7,
				"calls": i, "attrs": evidence.Object{"i": i % 5}, "inlined": i%3 == 0}))
		}
		must(t, w.End(&evidence.Summary{Complete: true}))
		bl, err := b.Publish(context.Background())
		must(t, err)
		files := map[string][]byte{}
		for _, m := range bl.Members {
			data, err := os.ReadFile(filepath.Join(bl.Path, m.Path))
			must(t, err)
			files[m.Path] = data
		}
		return bl, files
	}
	b1, f1 := build(false)
	b2, f2 := build(true)
	if b1.ID != b2.ID {
		t.Fatalf("same evidence gave ids %s and %s", b1.ID, b2.ID)
	}
	if len(f1) != len(f2) {
		t.Fatalf("member counts %d and %d", len(f1), len(f2))
	}
	for p, d := range f1 {
		if !bytes.Equal(d, f2[p]) {
			t.Errorf("%s differs between the two bundles", p)
		}
	}
	r, err := Open(b1.Path)
	must(t, err)
	f, _ := os.Open(filepath.Join(b1.Path, r.Manifest.Tables[0].Path))
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	must(t, err)
	if len(pf.RowGroups()) != 2 {
		t.Errorf("%d row groups, want 2 (bounded row groups)", len(pf.RowGroups()))
	}
}

func TestTamper(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, dir string, r *Reader) string // returns the path the failure must name
		code   evidence.Code
	}{
		{"native byte flipped", func(t *testing.T, dir string, r *Reader) string {
			p := filepath.Join(dir, r.Manifest.Artifacts[0].Path)
			flip(t, p, 3)
			return p
		}, evidence.CodeIntegrity},
		{"native truncated", func(t *testing.T, dir string, r *Reader) string {
			p := filepath.Join(dir, r.Manifest.Artifacts[0].Path)
			must(t, os.Chmod(p, 0o644))
			must(t, os.Truncate(p, 5))
			return p
		}, evidence.CodeIntegrity},
		{"native grown", func(t *testing.T, dir string, r *Reader) string {
			p := filepath.Join(dir, r.Manifest.Artifacts[0].Path)
			appendTo(t, p, "x")
			return p
		}, evidence.CodeIntegrity},
		{"table byte flipped", func(t *testing.T, dir string, r *Reader) string {
			p := filepath.Join(dir, r.Manifest.Tables[0].Path)
			flip(t, p, 100)
			return p
		}, evidence.CodeIntegrity},
		{"manifest edited", func(t *testing.T, dir string, r *Reader) string {
			p := filepath.Join(dir, manifestName)
			data, _ := os.ReadFile(p)
			must(t, os.Chmod(p, 0o644))
			must(t, os.WriteFile(p, bytes.Replace(data, []byte(`"complete":true`), []byte(`"complete":false`), 1), 0o644))
			return p
		}, evidence.CodeIntegrity},
		{"member removed", func(t *testing.T, dir string, r *Reader) string {
			p := filepath.Join(dir, r.Manifest.Tables[0].Path)
			must(t, os.Remove(p))
			return p
		}, evidence.CodeIntegrity},
		{"manifest removed", func(t *testing.T, dir string, r *Reader) string {
			p := filepath.Join(dir, manifestName)
			must(t, os.Remove(p))
			return p
		}, evidence.CodeIntegrity},
		{"file added", func(t *testing.T, dir string, r *Reader) string {
			p := filepath.Join(dir, "native", "extra")
			must(t, os.WriteFile(p, nil, 0o644))
			return p
		}, evidence.CodeIntegrity},
		{"native replaced by a symlink to the same bytes", func(t *testing.T, dir string, r *Reader) string {
			p := filepath.Join(dir, r.Manifest.Artifacts[0].Path)
			data, _ := os.ReadFile(p)
			elsewhere := filepath.Join(t.TempDir(), "same")
			must(t, os.WriteFile(elsewhere, data, 0o644))
			must(t, os.Remove(p))
			must(t, os.Symlink(elsewhere, p))
			return p
		}, evidence.CodeIntegrity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, store := t.TempDir(), t.TempDir()
			bl := sampleEvidence(t, src).build(t, store)
			r, err := Open(bl.Path)
			must(t, err)
			want := tt.tamper(t, bl.Path, r)
			_, err = Open(bl.Path)
			f := failureOf(t, err, tt.code)
			if f.Location.Path != want {
				t.Errorf("failure located at %q, want %q (%v)", f.Location.Path, want, f)
			}
		})
	}

	t.Run("directory renamed", func(t *testing.T) {
		src, store := t.TempDir(), t.TempDir()
		bl := sampleEvidence(t, src).build(t, store)
		other := filepath.Join(store, "bundles", strings.Repeat("0", 64))
		must(t, os.Rename(bl.Path, other))
		_, err := Open(other)
		failureOf(t, err, evidence.CodeIntegrity)
		_, err = Open(filepath.Join(store, "bundles"))
		failureOf(t, err, evidence.CodeInvalidArgument)
	})

	t.Run("table changed after Open", func(t *testing.T) {
		src, store := t.TempDir(), t.TempDir()
		bl := sampleEvidence(t, src).build(t, store)
		r, err := Open(bl.Path)
		must(t, err)
		flip(t, filepath.Join(bl.Path, r.Manifest.Tables[0].Path), 200)
		for _, err := range r.Rows(0) {
			if err != nil {
				failureOf(t, err, evidence.CodeIntegrity)
				return
			}
		}
		t.Fatal("rows of a changed table file read without failure")
	})
}

func flip(t *testing.T, p string, at int64) {
	t.Helper()
	must(t, os.Chmod(p, 0o644))
	data, err := os.ReadFile(p)
	must(t, err)
	data[at] ^= 0x20
	must(t, os.WriteFile(p, data, 0o644))
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	must(t, os.Chmod(p, 0o644))
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	f.WriteString(s)
	must(t, f.Close())
}

func TestCopyMismatch(t *testing.T) {
	src := t.TempDir()
	good := native(t, src, "p.cpuprofile", []byte("native bytes"))
	tests := []struct {
		name string
		edit func(a *evidence.Artifact)
	}{
		{"digest", func(a *evidence.Artifact) { a.ID = "sha256:" + strings.Repeat("ab", 32) }},
		{"size smaller than the file", func(a *evidence.Artifact) { a.Size-- }},
		{"size larger than the file", func(a *evidence.Artifact) { a.Size++ }},
		{"bytes changed after hashing", func(a *evidence.Artifact) {
			must(t, os.WriteFile(filepath.Join(src, "changed"), []byte("native bytez"), 0o644))
			a.Path = filepath.Join(src, "changed")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := t.TempDir()
			b, err := NewBuilder(store)
			must(t, err)
			defer b.Abort()
			a := *good
			tt.edit(&a)
			f := failureOf(t, b.AddArtifact(&a), evidence.CodeIntegrity)
			if f.Location.Path != a.Path || f.Location.ArtifactID != a.ID {
				t.Errorf("location %+v, want path %s and artifact %s", f.Location, a.Path, a.ID)
			}
			leftovers, _ := filepath.Glob(filepath.Join(b.tmp, "native", "*"))
			if len(leftovers) != 0 {
				t.Errorf("a rejected copy was left behind: %v", leftovers)
			}
		})
	}

	t.Run("hostile blocks", func(t *testing.T) {
		b, err := NewBuilder(t.TempDir())
		must(t, err)
		defer b.Abort()
		for _, a := range []*evidence.Artifact{
			{ID: "md5:abc", Path: good.Path, Size: good.Size},
			{ID: good.ID, Path: "relative/path", Size: good.Size},
			{ID: good.ID, Path: good.Path, Size: -1},
			{ID: strings.ToUpper(good.ID), Path: good.Path, Size: good.Size},
		} {
			failureOf(t, b.AddArtifact(a), evidence.CodeInvalidArgument)
		}
		dir := *good
		dir.Path = src
		failureOf(t, b.AddArtifact(&dir), evidence.CodeInvalidArgument)
		missing := *good
		missing.Path = filepath.Join(src, "absent")
		failureOf(t, b.AddArtifact(&missing), evidence.CodeIOFailure)
	})
}

func TestExistingID(t *testing.T) {
	src, store := t.TempDir(), t.TempDir()
	e := sampleEvidence(t, src)
	first := e.build(t, store)
	manifest := filepath.Join(first.Path, manifestName)
	before, err := os.Stat(manifest)
	must(t, err)

	second := e.build(t, store)
	if canon(t, first) != canon(t, second) {
		t.Fatalf("second publish returned %s, want %s", canon(t, second), canon(t, first))
	}
	after, err := os.Stat(manifest)
	must(t, err)
	if !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) {
		t.Error("publishing an existing id replaced the bundle")
	}
	if tmp, _ := os.ReadDir(filepath.Join(store, "tmp")); len(tmp) != 0 {
		t.Errorf("work directories left behind: %v", tmp)
	}

	t.Run("existing but damaged", func(t *testing.T) {
		flip(t, filepath.Join(first.Path, "native", e.artifact.Digest()), 0)
		_, err := publishErr(t, e, store)
		failureOf(t, err, evidence.CodeIntegrity)
	})
}

// publishErr builds e in store and returns Publish's result.
func publishErr(t *testing.T, e *evidenceSet, store string) (*evidence.Bundle, error) {
	b, err := NewBuilder(store)
	must(t, err)
	defer b.Abort()
	must(t, b.AddCapture(e.capture))
	must(t, b.AddArtifact(e.artifact))
	w, err := b.BeginTable(e.table)
	must(t, err)
	for _, r := range e.rows {
		must(t, w.Row(r))
	}
	must(t, w.End(&evidence.Summary{RowsObserved: int64(len(e.rows)), Complete: true,
		Metrics: map[string]evidence.Metric{"total_weight": {Value: 2.5, Unit: "s"}}}))
	must(t, b.AddFailure(e.failure))
	return b.Publish(context.Background())
}

func TestConcurrentPublish(t *testing.T) {
	src, store := t.TempDir(), t.TempDir()
	e := sampleEvidence(t, src)
	const n = 8
	type result struct {
		bl  *evidence.Bundle
		err error
	}
	results := make(chan result, n)
	start := make(chan struct{})
	for range n {
		go func() {
			<-start
			b, err := NewBuilder(store)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer b.Abort()
			err = errors.Join(b.AddArtifact(e.artifact), b.AddCapture(e.capture), b.AddFailure(e.failure))
			if err == nil {
				var w *TableWriter
				if w, err = b.BeginTable(e.table); err == nil {
					for _, r := range e.rows {
						err = errors.Join(err, w.Row(r))
					}
					err = errors.Join(err, w.End(&evidence.Summary{Complete: true}))
				}
			}
			if err != nil {
				results <- result{err: err}
				return
			}
			bl, err := b.Publish(context.Background())
			results <- result{bl, err}
		}()
	}
	close(start)
	var ids []string
	for range n {
		r := <-results
		must(t, r.err)
		ids = append(ids, r.bl.ID)
	}
	slices.Sort(ids)
	if ids[0] != ids[n-1] {
		t.Fatalf("concurrent publishes gave different ids: %v", ids)
	}
	entries, _ := os.ReadDir(filepath.Join(store, "bundles"))
	if len(entries) != 1 {
		t.Errorf("%d bundles, want 1", len(entries))
	}
	if tmp, _ := os.ReadDir(filepath.Join(store, "tmp")); len(tmp) != 0 {
		t.Errorf("work directories left behind: %v", tmp)
	}
	_, err := OpenID(store, ids[0])
	must(t, err)
}

func TestCrashLeftovers(t *testing.T) {
	src, store := t.TempDir(), t.TempDir()
	e := sampleEvidence(t, src)
	// A builder that dies before Publish: its files stay under tmp/.
	b, err := NewBuilder(store)
	must(t, err)
	must(t, b.AddArtifact(e.artifact))
	if entries, _ := os.ReadDir(filepath.Join(store, "bundles")); len(entries) != 0 {
		t.Fatalf("an unpublished builder shows in bundles/: %v", entries)
	}
	_, err = Open(b.tmp)
	failureOf(t, err, evidence.CodeInvalidArgument)
	// The same evidence still publishes, and the leftovers stay apart.
	bl := e.build(t, store)
	_, err = Open(bl.Path)
	must(t, err)
}

func TestFailurePreservation(t *testing.T) {
	t.Run("failed capture without natives", func(t *testing.T) {
		store := t.TempDir()
		b, err := NewBuilder(store)
		must(t, err)
		defer b.Abort()
		c := &evidence.Capture{ID: "cap-9", Provider: evidence.Producer{Name: "perf"}, Argv: []string{"./bench"},
			Signal: "SIGKILL", Outcome: evidence.OutcomeLimitExceeded,
			Limit: &evidence.LimitReceipt{Name: "max_memory_bytes", Value: 1 << 30, Observed: int64(1<<30 + 4096), Unit: "bytes"}}
		must(t, b.AddCapture(c))
		must(t, b.AddFailure(&evidence.Failure{Code: evidence.CodeLimitExceeded, Message: "workload exceeded max_memory_bytes",
			Retry: &evidence.Retry{Action: "raise the budget", Argv: []string{"flameox-capture", "--workload-budget", "max_memory_bytes=2147483648"}}}))
		bl, err := b.Publish(context.Background())
		must(t, err)
		r, err := Open(bl.Path)
		must(t, err)
		if len(r.Artifacts()) != 0 || len(r.Captures()) != 1 || len(r.Failures()) != 1 {
			t.Fatalf("artifacts %d captures %d failures %d", len(r.Artifacts()), len(r.Captures()), len(r.Failures()))
		}
		f := r.Failures()[0]
		if f.Code != evidence.CodeLimitExceeded || f.Retry == nil || len(f.Retry.Argv) != 3 || r.Manifest.Failures[0].Native != "" {
			t.Errorf("failure read back as %s (native %q)", canon(t, f), r.Manifest.Failures[0].Native)
		}
		if got, _ := r.Captures()[0].Obj["outcome"].(string); got != evidence.OutcomeLimitExceeded {
			t.Errorf("capture outcome %q", got)
		}
	})
	t.Run("failure naming an artifact that is not preserved", func(t *testing.T) {
		b, err := NewBuilder(t.TempDir())
		must(t, err)
		defer b.Abort()
		must(t, b.AddFailure(&evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "bad",
			Location: evidence.Location{ArtifactID: "sha256:" + strings.Repeat("1", 64)}}))
		bl, err := b.Publish(context.Background())
		must(t, err)
		r, err := Open(bl.Path)
		must(t, err)
		if r.Manifest.Failures[0].Native != "" {
			t.Errorf("failure linked to %q", r.Manifest.Failures[0].Native)
		}
	})
	t.Run("nothing to preserve", func(t *testing.T) {
		b, err := NewBuilder(t.TempDir())
		must(t, err)
		_, err = b.Publish(context.Background())
		failureOf(t, err, evidence.CodeInvalidArgument)
	})
	t.Run("table never ended", func(t *testing.T) {
		src := t.TempDir()
		e := sampleEvidence(t, src)
		b, err := NewBuilder(t.TempDir())
		must(t, err)
		defer b.Abort()
		w, err := b.BeginTable(e.table)
		must(t, err)
		must(t, w.Row(e.rows[0]))
		bl, err := b.Publish(context.Background())
		must(t, err)
		r, err := Open(bl.Path)
		must(t, err)
		if tab := r.Manifest.Tables[0]; tab.Summary != nil || tab.Rows != 1 {
			t.Errorf("unfinished table kept as summary %+v, rows %d", tab.Summary, tab.Rows)
		}
		n := 0
		for _, err := range r.Rows(0) {
			must(t, err)
			n++
		}
		if n != 1 {
			t.Errorf("%d rows read back, want 1", n)
		}
	})
}

func TestRowValidation(t *testing.T) {
	base := func() evidence.Object {
		return evidence.Object{"function": "f", "self_weight": 1.0, "calls": 1, "attrs": nil, "inlined": false}
	}
	tests := []struct {
		name  string
		edit  func(evidence.Object)
		field string
	}{
		{"string column holds a number", func(o evidence.Object) { o["function"] = json.Number("1") }, "function"},
		{"double column holds a boolean", func(o evidence.Object) { o["self_weight"] = true }, "self_weight"},
		{"double column holds text", func(o evidence.Object) { o["self_weight"] = "fast" }, "self_weight"},
		{"int column holds a fraction", func(o evidence.Object) { o["calls"] = json.Number("1.5") }, "calls"},
		{"int column holds a safe integer as a string", func(o evidence.Object) { o["calls"] = "12" }, "calls"},
		{"int column beyond int64", func(o evidence.Object) { o["calls"] = "99999999999999999999" }, "calls"},
		{"int column holds uint64 beyond int64", func(o evidence.Object) { o["calls"] = uint64(math.MaxUint64) }, "calls"},
		{"bool column holds a string", func(o evidence.Object) { o["inlined"] = "yes" }, "inlined"},
		{"string column holds invalid UTF-8", func(o evidence.Object) { o["function"] = "a\xffb" }, "function"},
		{"json column holds invalid UTF-8", func(o evidence.Object) { o["attrs"] = "\xff" }, "attrs"},
		{"missing column", func(o evidence.Object) { delete(o, "calls") }, "calls"},
		{"undeclared column", func(o evidence.Object) { o["extra"] = 1 }, "extra"},
		{"undeclared column replacing one", func(o evidence.Object) { delete(o, "calls"); o["extra"] = 1 }, "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := NewBuilder(t.TempDir())
			must(t, err)
			defer b.Abort()
			w, err := b.BeginTable(allTypes("sha256:" + strings.Repeat("a", 64)))
			must(t, err)
			row := base()
			tt.edit(row)
			f := failureOf(t, w.Row(row), evidence.CodeInvalidArgument)
			if f.Location.Field != tt.field {
				t.Errorf("failure names field %q, want %q: %v", f.Location.Field, tt.field, f)
			}
			// The writer stays usable after a refused row.
			must(t, w.Row(base()))
			must(t, w.End(&evidence.Summary{Complete: true}))
		})
	}

	t.Run("headers", func(t *testing.T) {
		b, err := NewBuilder(t.TempDir())
		must(t, err)
		defer b.Abort()
		for name, cols := range map[string][]evidence.Column{
			"no columns":     nil,
			"unknown type":   {{Name: "a", Type: "decimal"}},
			"duplicate name": {{Name: "a", Type: "int"}, {Name: "a", Type: "string"}},
			"empty name":     {{Name: "", Type: "int"}},
		} {
			_, err := b.BeginTable(&evidence.Table{ID: name, Name: "x", Columns: cols})
			failureOf(t, err, evidence.CodeInvalidArgument)
		}
		_, err = b.BeginTable(&evidence.Table{ID: "ok", Name: "../../escape", Columns: []evidence.Column{{Name: "a", Type: "int"}}})
		must(t, err)
		if got := b.tables[0].rel; got != "tables/_.._.._escape/0.parquet" {
			t.Errorf("table file %q", got)
		}
		_, err = b.BeginTable(&evidence.Table{ID: "ok", Name: "x", Columns: []evidence.Column{{Name: "a", Type: "int"}}})
		failureOf(t, err, evidence.CodeInvalidArgument)
	})
}

func TestEmptyTable(t *testing.T) {
	b, err := NewBuilder(t.TempDir())
	must(t, err)
	defer b.Abort()
	w, err := b.BeginTable(allTypes("sha256:" + strings.Repeat("c", 64)))
	must(t, err)
	must(t, w.End(&evidence.Summary{Complete: true}))
	bl, err := b.Publish(context.Background())
	must(t, err)
	r, err := Open(bl.Path)
	must(t, err)
	for row, err := range r.Rows(0) {
		t.Fatalf("an empty table yields %v, %v", row, err)
	}
	if s := r.Manifest.Tables[0].Summary; s == nil || s.RowsEmitted != 0 || !s.Complete {
		t.Errorf("summary %+v", s)
	}
}

// TestOpenWrongPath: a bundle path that names nothing is IO_FAILURE (the
// argument is wrong, no bundle was damaged), a file is INVALID_ARGUMENT,
// and a manifest that is a FIFO is refused without blocking.
func TestOpenWrongPath(t *testing.T) {
	store := t.TempDir()
	id := strings.Repeat("a", 64)
	file := filepath.Join(store, "file")
	must(t, os.WriteFile(file, nil, 0o644))
	cases := []struct {
		name, dir string
		code      evidence.Code
	}{
		{"missing, named like a bundle", filepath.Join(store, "bundles", id), evidence.CodeIOFailure},
		{"missing, any name", filepath.Join(store, "nope"), evidence.CodeIOFailure},
		{"a file", file, evidence.CodeInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(c.dir)
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != c.code || f.Location.Path != c.dir {
				t.Fatalf("got %v, want %s located at %s", err, c.code, c.dir)
			}
		})
	}
	dir := filepath.Join(store, id)
	must(t, os.Mkdir(dir, 0o755))
	must(t, syscall.Mkfifo(filepath.Join(dir, manifestName), 0o600))
	done := make(chan error, 1)
	go func() { _, err := Open(dir); done <- err }()
	select {
	case err := <-done:
		if evidence.CodeOf(err) != evidence.CodeIntegrity {
			t.Fatalf("manifest FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open blocked on a manifest FIFO")
	}
}

// TestUnwritableStoreLocated: a store where no work directory can be made
// (read-only for other users; here a procfs directory, which refuses even
// root) fails with IO_FAILURE located at the directory, not with an empty
// location (9.21).
func TestUnwritableStoreLocated(t *testing.T) {
	store := t.TempDir()
	must(t, os.Mkdir(filepath.Join(store, bundlesDir), 0o755))
	if err := os.Symlink("/proc/self/fdinfo", filepath.Join(store, tmpDir)); err != nil {
		t.Fatal(err)
	}
	_, err := NewBuilder(store)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeIOFailure || f.Location.Path != filepath.Join(store, tmpDir) {
		t.Fatalf("got %v, want IO_FAILURE located at the work directory", err)
	}
}

// TestCopyStopsWhenCancelled (9.3): an interrupted preserve stops copying
// a native artifact part way instead of finishing a large copy, and
// leaves no partial copy behind.
func TestCopyStopsWhenCancelled(t *testing.T) {
	a := native(t, t.TempDir(), "big.cpuprofile", bytes.Repeat([]byte("x"), 3*copyBuffer))
	b, err := NewBuilder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.WithContext(ctx).AddArtifact(a); evidence.CodeOf(err) != evidence.CodeCancelled {
		t.Fatalf("got %v, want CANCELLED", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(b.tmp, nativeDir)); len(entries) != 0 {
		t.Fatalf("a cancelled copy left %v", entries)
	}
}
