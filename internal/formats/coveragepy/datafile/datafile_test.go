package datafile

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/coveragepy"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

const testdata = "../../../../testdata/coverage"

type (
	sink     = formatstest.Sink
	recorded = formatstest.Table
)

func decodeFile(t testing.TB, spec *formats.Spec, path string, over map[string]int64) (*sink, error) {
	t.Helper()
	return formatstest.DecodeFile(t, spec, path, over, nil)
}

func one(t *testing.T, s *sink, err error) *recorded {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tables) != 1 || s.Tables[0].Summary == nil {
		t.Fatalf("want one closed table, got %d", len(s.Tables))
	}
	return s.Tables[0]
}

func intOf(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := evidence.AsInt(v)
	if !ok {
		t.Fatalf("%v (%T) is not an integer", v, v)
	}
	return n
}

// The data-file decoder's executed-line counts equal coverage.py's own
// CoverageData.lines for every measured file (recorded by regen.sh).
func TestSQLiteMatchesCoverageAPI(t *testing.T) {
	for _, name := range []string{"branch", "contexts", "textxtract"} {
		t.Run(name, func(t *testing.T) {
			var want map[string]int64
			b, err := os.ReadFile(filepath.Join(testdata, name+".lines.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			s, err := decodeFile(t, Spec, filepath.Join(testdata, name+".coverage"), nil)
			tb := one(t, s, err)
			got := map[string]int64{}
			for _, r := range tb.Rows {
				got[r["file"].(string)] = intOf(t, r["executed_lines"])
				for _, c := range []string{"statements", "missing_lines", "percent_covered", "num_branches"} {
					if r[c] != nil {
						t.Fatalf("%s must be null from the data file, got %v", c, r[c])
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("executed lines differ from CoverageData.lines:\n got %v\nwant %v", got, want)
			}
			if !slices.ContainsFunc(tb.Summary.Limitations, func(l string) bool { return strings.Contains(l, "statements") }) {
				t.Fatal("the missing statement data is not stated as a limitation")
			}
		})
	}
}

func TestSQLiteArcsAndContexts(t *testing.T) {
	s, err := decodeFile(t, Spec, filepath.Join(testdata, "branch.coverage"), nil)
	tb := one(t, s, err)
	if tb.Summary.Coverage["has_arcs"] != true {
		t.Fatal("branch data not recognized as arcs")
	}
	for _, r := range tb.Rows {
		if intOf(t, r["executed_arcs"]) <= 0 {
			t.Fatalf("no arcs counted: %v", r)
		}
	}
	s, err = decodeFile(t, Spec, filepath.Join(testdata, "contexts.coverage"), nil)
	tb = one(t, s, err)
	var app evidence.Object
	for _, r := range tb.Rows {
		if strings.HasSuffix(r["file"].(string), "/app.py") {
			app = r
		}
	}
	names := fmt.Sprint(app["contexts"])
	if !strings.Contains(names, "__main__.test_shapes") || !strings.Contains(names, "__main__.test_parity") || intOf(t, app["context_count"]) != 3 {
		t.Fatalf("contexts of app.py: %v (%v)", app["contexts"], app["context_count"])
	}
	if app["executed_arcs"] != nil {
		t.Fatal("line data has no arcs")
	}
}

// Reading the data file creates nothing beside it and changes no byte.
func TestSQLiteLeavesNoTrace(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(testdata, "branch.coverage"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".coverage")
	if err := os.WriteFile(p, src, 0o444); err != nil {
		t.Fatal(err)
	}
	st0, _ := os.Stat(p)
	s, err := decodeFile(t, Spec, p, nil)
	one(t, s, err)
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("decoding left files beside the data file: %v", names)
	}
	after, _ := os.ReadFile(p)
	st1, _ := os.Stat(p)
	if !bytes.Equal(src, after) || !st0.ModTime().Equal(st1.ModTime()) {
		t.Fatal("the data file changed")
	}
}

// mutate copies a fixture into a temp dir and applies SQL to the copy.
func mutate(t *testing.T, fixture string, stmts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, fixture))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bad.coverage")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return p
}

func TestSQLiteHostile(t *testing.T) {
	notDB := filepath.Join(t.TempDir(), "x.coverage")
	os.WriteFile(notDB, bytes.Repeat([]byte("not a database "), 500), 0o644)
	full, _ := os.ReadFile(filepath.Join(testdata, "textxtract.coverage"))
	cut := filepath.Join(t.TempDir(), "cut.coverage")
	os.WriteFile(cut, full[:4096+100], 0o644)
	cases := []struct {
		name string
		path func() string
		lim  map[string]int64
		code evidence.Code
	}{
		{"not a database", func() string { return notDB }, nil, evidence.CodeUnsupportedFormat},
		{"truncated database", func() string { return cut }, nil, evidence.CodeDecodeFailure},
		{"old schema", func() string { return mutate(t, "branch.coverage", "UPDATE coverage_schema SET version = 6") }, nil, evidence.CodeUnsupportedFormat},
		{"missing table", func() string { return mutate(t, "branch.coverage", "DROP TABLE tracer") }, nil, evidence.CodeUnsupportedFormat},
		{"dangling file id", func() string {
			return mutate(t, "contexts.coverage", "INSERT INTO line_bits (file_id, context_id, numbits) VALUES (99, 1, x'02')")
		}, nil, evidence.CodeDecodeFailure},
		{"dangling context id", func() string {
			return mutate(t, "branch.coverage", "INSERT INTO arc (file_id, context_id, fromno, tono) VALUES (1, 42, 3, 4)")
		}, nil, evidence.CodeDecodeFailure},
		{"lines in arc data", func() string {
			return mutate(t, "branch.coverage", "INSERT INTO line_bits (file_id, context_id, numbits) VALUES (1, 1, x'02')")
		}, nil, evidence.CodeDecodeFailure},
		{"bad has_arcs", func() string {
			return mutate(t, "branch.coverage", "UPDATE meta SET value = 'yes' WHERE key = 'has_arcs'")
		}, nil, evidence.CodeDecodeFailure},
		{"line beyond the limit", func() string { return mutate(t, "contexts.coverage") }, map[string]int64{coveragepy.LimitLines: 10}, evidence.CodeLimitExceeded},
		{"too many files", func() string { return mutate(t, "textxtract.coverage") }, map[string]int64{coveragepy.LimitFiles: 3}, evidence.CodeLimitExceeded},
		{"dangling tracer", func() string {
			return mutate(t, "branch.coverage", "INSERT INTO tracer (file_id, tracer) VALUES (77, 'plugin')")
		}, nil, evidence.CodeDecodeFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := decodeFile(t, Spec, c.path(), c.lim)
			if evidence.CodeOf(err) != c.code {
				t.Fatalf("error %v, want %s", err, c.code)
			}
			for name, v := range c.lim {
				// The one receipt shape: the limit that was set, and what
				// crossed it.
				var f *evidence.Failure
				errors.As(err, &f)
				r, _ := f.Details["limit"].(evidence.Object)
				l, _ := Spec.Limit(name)
				if len(r) != 4 || r["name"] != name || r["value"] != v || r["unit"] != l.Unit {
					t.Fatalf("details.limit = %v, want %s=%d %s", f.Details["limit"], name, v, l.Unit)
				}
				if n, ok := r["observed"].(int64); name == coveragepy.LimitLines && (!ok || n <= v) {
					t.Fatalf("observed line %v is not beyond the limit %d", r["observed"], v)
				}
			}
			if len(s.Tables) != 0 {
				t.Fatal("a rejected data file produced a table")
			}
		})
	}
}

// The decoder reads the verified descriptor: bytes that no longer match
// the artifact's digest are refused before SQLite sees them.
func TestSQLiteVerifiesDigest(t *testing.T) {
	art, err := formats.ArtifactFromPath(filepath.Join(testdata, "branch.coverage"), "explicit")
	if err != nil {
		t.Fatal(err)
	}
	art.ID = "sha256:" + strings.Repeat("0", 64)
	lim, _ := formats.EffectiveLimits(Spec, nil)
	s := &sink{}
	err = formats.Run(context.Background(), Spec, art, lim, nil, s)
	if evidence.CodeOf(err) != evidence.CodeIntegrity || len(s.Tables) != 0 {
		t.Fatalf("got %v with %d tables, want INTEGRITY_FAILURE and none", err, len(s.Tables))
	}
}

func TestSniff(t *testing.T) {
	for name, want := range map[string]formats.Verdict{"branch.coverage": formats.Yes, "branch.coverage.json": formats.No, "textxtract.coverage": formats.Yes} {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > formats.SniffBytes {
			b = b[:formats.SniffBytes]
		}
		if got := Sniff(b); got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
}

func TestNumbits(t *testing.T) {
	cases := []struct {
		blob []byte
		want []int64
	}{
		{nil, nil},
		{[]byte{0}, nil},
		{[]byte{0x01}, []int64{0}},
		{[]byte{0x82}, []int64{1, 7}},
		{[]byte{0x00, 0x01, 0x00, 0x00}, []int64{8}},
		{[]byte{0xff}, []int64{0, 1, 2, 3, 4, 5, 6, 7}},
		{[]byte{0x04, 0x00, 0x80}, []int64{2, 23}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%x", c.blob), func(t *testing.T) {
			var got []int64
			numbits(c.blob, func(n int64) { got = append(got, n) })
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			max := int64(-1)
			if len(c.want) > 0 {
				max = c.want[len(c.want)-1]
			}
			if m := numbitsMax(c.blob); m != max {
				t.Fatalf("highest number %d, want %d", m, max)
			}
		})
	}
	// The limit check sees the highest number; trailing zero bytes name none.
	if m := numbitsMax([]byte{0, 0, 0x01}); m != 16 {
		t.Fatalf("line 16 read as %d", m)
	}
	if m := numbitsMax([]byte{0x80, 0, 0, 0, 0}); m != 7 {
		t.Fatalf("trailing zero bytes name no line: got %d", m)
	}
}

// numbits calls fn with each number in a numbits blob, in ascending
// order: coverage.py's numbits_to_nums, the reference the decoder's line
// set is checked against.
func numbits(b []byte, fn func(n int64)) {
	for j, c := range b {
		for i := range 8 {
			if c&(1<<i) != 0 {
				fn(int64(j)*8 + int64(i))
			}
		}
	}
}

// encodeNumbits is coverage.py's nums_to_numbits.
func encodeNumbits(nums []int64) []byte {
	var b []byte
	for _, n := range nums {
		for int64(len(b)) <= n/8 {
			b = append(b, 0)
		}
		b[n/8] |= 1 << (n % 8)
	}
	return b
}

func FuzzNumbits(f *testing.F) {
	f.Add([]byte{0x82, 0x00, 0x11})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var got []int64
		numbits(b, func(n int64) { got = append(got, n) })
		if !slices.IsSorted(got) {
			t.Fatal("numbers not ascending")
		}
		if m := numbitsMax(b); len(got) == 0 && m != -1 || len(got) > 0 && m != got[len(got)-1] {
			t.Fatalf("highest number %d for %v", m, got)
		}
		// The sparse line set holds the same numbers, whether added as a
		// blob or one by one.
		var blob, each lineSet
		blob.addNumbits(b)
		for _, n := range got {
			each.set(n)
		}
		if blob.count() != int64(len(got)) || each.count() != int64(len(got)) || len(blob.chunks) != len(each.chunks) {
			t.Fatalf("line set counts %d and %d (%d, %d chunks) for %d numbers", blob.count(), each.count(), len(blob.chunks), len(each.chunks), len(got))
		}
		for i, c := range blob.chunks {
			if *c != *each.chunks[i] {
				t.Fatalf("chunk %d differs", i)
			}
		}
		again := encodeNumbits(got)
		trimmed := bytes.TrimRight(b, "\x00")
		if !bytes.Equal(again, trimmed) {
			t.Fatalf("round trip %x -> %v -> %x", b, got, again)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	p := filepath.Join(testdata, "textxtract.coverage")
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeFile(b, Spec, p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// allocated is the heap fn allocates, in bytes.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The hostile data files of testdata/coverage/hostile (regen.py): small
// files that made the decoder allocate hundreds of megabytes, or fail as
// INTERNAL without a location. Memory follows the data, every bound is
// declared, and bad values are DECODE_FAILUREs at their row.
func TestSQLiteHostileFixtures(t *testing.T) {
	hostile := filepath.Join(testdata, "hostile")
	t.Run("arcs at high lines", func(t *testing.T) {
		// 500 files, one arc each at line 9,999,999: a dense line index
		// took 1.25 MB per file (632 MB resident for a 100 KB file).
		var s *sink
		var err error
		n := allocated(func() { s, err = decodeFile(t, Spec, filepath.Join(hostile, "arcs-high-lines.coverage"), nil) })
		tb := one(t, s, err)
		if len(tb.Rows) != 500 || !tb.Summary.Complete {
			t.Fatalf("%d rows, complete %v", len(tb.Rows), tb.Summary.Complete)
		}
		for _, r := range tb.Rows {
			if intOf(t, r["executed_lines"]) != 1 || intOf(t, r["executed_arcs"]) != 1 {
				t.Fatalf("row %v", r)
			}
		}
		if n > 32<<20 {
			t.Fatalf("decoding a %d KB file allocated %d MB", 100, n>>20)
		}
	})
	t.Run("generated path", func(t *testing.T) {
		// A virtual generated column computed a 400 MB path per read.
		var s *sink
		var err error
		n := allocated(func() { s, err = decodeFile(t, Spec, filepath.Join(hostile, "generated-path.coverage"), nil) })
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeUnsupportedFormat || f.Location.Field != "file.path" || len(s.Tables) != 0 {
			t.Fatalf("got %v (%d tables), want UNSUPPORTED_FORMAT at file.path", err, len(s.Tables))
		}
		if n > 32<<20 {
			t.Fatalf("refusing the file allocated %d MB", n>>20)
		}
	})
	for _, c := range []struct{ file, table, column string }{
		{"bad-utf8-path.coverage", "file", "path"},
		{"bad-utf8-context.coverage", "context", "context"},
	} {
		t.Run(c.file, func(t *testing.T) {
			s, err := decodeFile(t, Spec, filepath.Join(hostile, c.file), nil)
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure || len(s.Tables) != 0 {
				t.Fatalf("got %v, want DECODE_FAILURE", err)
			}
			if f.Location.Field != c.table+"."+c.column || f.Details["table"] != c.table || f.Details["column"] != c.column || f.Details["rowid"] == nil {
				t.Fatalf("location %+v details %v, want row of %s.%s", f.Location, f.Details, c.table, c.column)
			}
		})
	}
}

// Every value is checked for type and size before it is read.
func TestSQLiteValueBounds(t *testing.T) {
	cases := []struct {
		name  string
		path  func() string
		lim   map[string]int64
		code  evidence.Code
		field string
	}{
		{"long path", func() string { return mutate(t, "branch.coverage") }, map[string]int64{LimitValueBytes: 16}, evidence.CodeLimitExceeded, "file.path"},
		{"long numbits", func() string {
			return mutate(t, "contexts.coverage", "UPDATE line_bits SET numbits = zeroblob(1000)")
		}, map[string]int64{LimitValueBytes: 500}, evidence.CodeLimitExceeded, "line_bits.numbits"},
		{"text line number", func() string {
			return mutate(t, "branch.coverage", "UPDATE arc SET fromno = 'x3' WHERE rowid = 1")
		}, nil, evidence.CodeDecodeFailure, "arc.fromno"},
		{"blob path", func() string { return mutate(t, "branch.coverage", "UPDATE file SET path = x'2f61' WHERE id = 1") }, nil, evidence.CodeDecodeFailure, "file.path"},
		{"text numbits", func() string { return mutate(t, "contexts.coverage", "UPDATE line_bits SET numbits = 'ab'") }, nil, evidence.CodeDecodeFailure, "line_bits.numbits"},
		{"virtual table", func() string {
			return mutate(t, "branch.coverage", "DROP TABLE tracer", "CREATE VIRTUAL TABLE tracer USING rtree(file_id, lo, hi)")
		}, nil, evidence.CodeUnsupportedFormat, "virtual table"},
		{"missing column", func() string {
			return mutate(t, "branch.coverage", "DROP TABLE tracer", "CREATE TABLE tracer (file_id integer)")
		}, nil, evidence.CodeUnsupportedFormat, "column tracer.tracer is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := decodeFile(t, Spec, c.path(), c.lim)
			var f *evidence.Failure
			field, says := c.field, ""
			if c.code == evidence.CodeUnsupportedFormat {
				field, says = "", c.field // c.field is what the message says
			}
			if !errors.As(err, &f) || f.Code != c.code || f.Location.Field != field || !strings.Contains(f.Message, says) || len(s.Tables) != 0 {
				t.Fatalf("got %v, want %s at %q", err, c.code, c.field)
			}
			if c.code == evidence.CodeLimitExceeded {
				r, _ := f.Details["limit"].(evidence.Object)
				if r["name"] != LimitValueBytes || r["unit"] != "bytes" {
					t.Fatalf("details.limit = %v", r)
				}
			}
		})
	}
}

// FuzzDecode puts fuzzed values into a real data file (a copy of
// contexts.coverage or branch.coverage) through SQL, so each execution
// reaches the decoder's value checks rather than SQLite's page checks:
// any path, context, numbits blob and line numbers, stored under any
// SQLite type. Every outcome is a closed table or a typed failure other
// than INTERNAL.
func FuzzDecode(f *testing.F) {
	lines, err := os.ReadFile(filepath.Join(testdata, "contexts.coverage"))
	if err != nil {
		f.Fatal(err)
	}
	arcs, err := os.ReadFile(filepath.Join(testdata, "branch.coverage"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(false, []byte("/tmp/flameox-coverage-fixture/app.py"), []byte("__main__.test_shapes"), []byte{0x82, 0x01}, int64(3), int64(4), uint8(0))
	f.Add(true, []byte("/p/\xff.py"), []byte(""), []byte{}, int64(9999999), int64(-9999999), uint8(1))
	f.Add(false, []byte("a"), []byte("b"), []byte{0, 0, 0x80}, int64(-1), int64(1), uint8(2))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, arc bool, path, ctx, nb []byte, from, to int64, kind uint8) {
		src := lines
		if arc {
			src = arcs
		}
		p := filepath.Join(dir, "fuzz.coverage")
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", p)
		if err != nil {
			t.Fatal(err)
		}
		// kind picks how the path is stored: text, blob, or integer.
		pathSQL := "CAST(? AS TEXT)"
		switch kind % 3 {
		case 1:
			pathSQL = "CAST(? AS BLOB)"
		case 2:
			pathSQL = "length(?)"
		}
		stmts := []struct {
			q    string
			args []any
		}{
			{"UPDATE OR IGNORE file SET path = " + pathSQL + " WHERE id = 1", []any{path}},
			{"UPDATE OR IGNORE context SET context = CAST(? AS TEXT) WHERE id = 1", []any{ctx}},
		}
		if arc {
			stmts = append(stmts, struct {
				q    string
				args []any
			}{"UPDATE arc SET fromno = ?, tono = ? WHERE rowid = (SELECT min(rowid) FROM arc)", []any{from, to}})
		} else {
			stmts = append(stmts, struct {
				q    string
				args []any
			}{"UPDATE line_bits SET numbits = ? WHERE rowid = (SELECT min(rowid) FROM line_bits)", []any{nb}})
		}
		// One unsynced transaction: the copy is scratch, and a journal
		// synced per statement made an execution take tens of milliseconds.
		db.SetMaxOpenConns(1)
		for _, q := range []string{"PRAGMA synchronous = OFF", "PRAGMA journal_mode = OFF", "BEGIN"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range stmts {
			// OR IGNORE: a path or context another row already has keeps
			// the fixture's value (unique columns).
			if _, err := db.Exec(s.q, s.args...); err != nil {
				t.Fatalf("%s: %v", s.q, err)
			}
		}
		if _, err := db.Exec("COMMIT"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		s, err := decodeFile(t, Spec, p, map[string]int64{LimitValueBytes: 1 << 16})
		if err != nil {
			var fl *evidence.Failure
			if !errors.As(err, &fl) || fl.Code == evidence.CodeInternal {
				t.Fatalf("untyped or internal failure: %v", err)
			}
			if len(s.Tables) != 0 {
				t.Fatal("a refused data file produced a table")
			}
			return
		}
		if len(s.Tables) != 1 || s.Tables[0].Summary == nil || !s.Tables[0].Summary.Complete {
			t.Fatal("a decoded data file without one complete table")
		}
	})
}
