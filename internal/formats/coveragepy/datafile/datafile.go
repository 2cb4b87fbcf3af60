// Package datafile decodes coverage.py's native `.coverage` data file
// (SQLite, schema 7) into coverage.files rows. It is apart from package
// coveragepy so that the JSON report decoder does not link SQLite.
//
// The data file records what executed (lines, or arcs with --branch) per
// file and context; it does not record which lines are statements, which
// coverage.py derives by parsing the source. Statement, missing, excluded,
// branch and percent columns are therefore null and stated as a limitation.
//
// It imports formats, evidence, table, coveragepy (the format names, limit
// names and spec completion it shares with the JSON report) and the
// modernc.org/sqlite driver.
package datafile

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/coveragepy"
	"github.com/flameox/flameox/internal/table"
)

// Spec is the registry entry for coverage.py data files.
var Spec = coveragepy.Spec(formats.Spec{
	Name:     coveragepy.FormatSQLite,
	Title:    "coverage.py data file (.coverage, SQLite)",
	Suffixes: []string{".coverage"},
	Sniff:    Sniff,
	Limits: []formats.Limit{
		{Name: coveragepy.LimitFiles, Default: 200_000, Unit: "files", Doc: "rows of the file table"},
		{Name: coveragepy.LimitLines, Default: 10_000_000, Unit: "lines", Doc: "highest line number a numbits blob or arc may name"},
		{Name: coveragepy.LimitContexts, Default: 1_000_000, Unit: "contexts", Doc: "rows of the context table"},
	},
	Producer: "coverage.py 7.x (schema 7)",
	Version:  "1",
	Decoder:  sqliteDecoder{},
})

var sqliteMagic = []byte("SQLite format 3\x00")

// Sniff says Yes for an SQLite database whose schema (stored in its
// first page) creates coverage.py's coverage_schema table.
func Sniff(prefix []byte) formats.Verdict {
	if len(prefix) < len(sqliteMagic) {
		if bytes.HasPrefix(sqliteMagic, prefix) {
			return formats.NeedMore
		}
		return formats.No
	}
	if !bytes.HasPrefix(prefix, sqliteMagic) {
		return formats.No
	}
	if bytes.Contains(prefix, []byte("CREATE TABLE coverage_schema")) {
		return formats.Yes
	}
	if len(prefix) < formats.SniffBytes {
		return formats.No
	}
	return formats.NeedMore
}

// noStatements is the limitation every data-file table states.
const noStatements = "the coverage.py data file records executed lines and arcs only: statements, missing and excluded lines, branch counts and percentages are null because coverage.py derives them by parsing the source files, which flameox does not read; decode the `coverage json` report (the coverage capture provider writes one) for them"

// SchemaVersion is the coverage.py data schema this decoder reads (7 since
// coverage.py 5.x's line_bits table; current in 7.x).
const SchemaVersion = 7

// sqliteNotADB is SQLite's primary result code for a file that is not a
// database (SQLITE_NOTADB).
const sqliteNotADB = 26

type sqliteDecoder struct{}

// dsn opens path read-only and immutable: SQLite takes no locks, writes no
// journal and creates no file next to the database.
func dsn(path string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&immutable=1"
}

// openPath prefers the descriptor the runner verified, so the database
// SQLite reads is the inode whose digest was checked.
func openPath(in *formats.Input) string {
	if in.File != nil {
		p := "/proc/self/fd/" + strconv.Itoa(int(in.File.Fd()))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return in.Artifact.Path
}

type fileAcc struct {
	id       int64
	path     string
	lines    []uint64 // bitset of executed line numbers
	arcs     map[[2]int64]struct{}
	contexts map[int64]struct{}
	tracer   string
	hasData  bool
}

func (f *fileAcc) setLine(n int64) {
	w := int(n / 64)
	if w >= len(f.lines) {
		f.lines = append(f.lines, make([]uint64, w+1-len(f.lines))...)
	}
	f.lines[w] |= 1 << (uint(n) % 64)
}

func (f *fileAcc) count() int64 {
	var n int
	for _, w := range f.lines {
		n += bits.OnesCount64(w)
	}
	return int64(n)
}

func (sqliteDecoder) Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.VerifyFile(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", dsn(openPath(in)))
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "open coverage data")
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// Sorting or grouping never spills to a temporary file.
	if _, err := db.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		return sqliteErr(err, "PRAGMA temp_store")
	}
	d := &sqliteRead{ctx: ctx, db: db, in: in, files: map[int64]*fileAcc{}, contexts: map[int64]string{}}
	if err := d.read(); err != nil {
		return err
	}
	return d.emit(out)
}

// sqliteErr classifies a database error: a file that is not a database is
// UNSUPPORTED_FORMAT, other errors are DECODE_FAILURE.
func sqliteErr(err error, where string) error {
	var f *evidence.Failure
	if errors.As(err, &f) || errors.Is(err, context.Canceled) {
		return err
	}
	return evidence.Wrap(evidence.CodeDecodeFailure, err, "coverage data: %s", where)
}

type sqliteRead struct {
	ctx      context.Context
	db       *sql.DB
	in       *formats.Input
	version  string // coverage.py version in meta
	hasArcs  bool
	files    map[int64]*fileAcc
	contexts map[int64]string
	lineRows int64
	arcRows  int64
}

func (d *sqliteRead) query(q string, each func(*sql.Rows) error) error {
	rows, err := d.db.QueryContext(d.ctx, q)
	if err != nil {
		return sqliteErr(err, q)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return sqliteErr(err, q)
	}
	return nil
}

func (d *sqliteRead) read() error {
	var tables []string
	err := d.query("SELECT name FROM sqlite_master WHERE type = 'table'", func(r *sql.Rows) error {
		var n string
		if err := r.Scan(&n); err != nil {
			return sqliteErr(err, "sqlite_master")
		}
		tables = append(tables, n)
		return nil
	})
	if err != nil {
		var f *evidence.Failure
		var coded interface{ Code() int }
		if errors.As(err, &f) && errors.As(err, &coded) && coded.Code()&0xff == sqliteNotADB {
			f.Code = evidence.CodeUnsupportedFormat
		}
		return err
	}
	for _, t := range []string{"coverage_schema", "meta", "file", "context", "line_bits", "arc", "tracer"} {
		if !slices.Contains(tables, t) {
			return evidence.Failf(evidence.CodeUnsupportedFormat, "not a coverage.py schema-%d data file: table %s is missing", SchemaVersion, t)
		}
	}
	var schemaVersions []int64
	if err := d.query("SELECT version FROM coverage_schema", func(r *sql.Rows) error {
		var v int64
		if err := r.Scan(&v); err != nil {
			return sqliteErr(err, "coverage_schema")
		}
		schemaVersions = append(schemaVersions, v)
		return nil
	}); err != nil {
		return err
	}
	if len(schemaVersions) != 1 || schemaVersions[0] != SchemaVersion {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("coverage.py data schema %v is not supported (want %d, written by coverage.py 5.x to 7.x)", schemaVersions, SchemaVersion),
			Details: evidence.Object{"schema_versions": schemaVersions}}
	}
	if err := d.query("SELECT key, value FROM meta", func(r *sql.Rows) error {
		var k, v sql.NullString
		if err := r.Scan(&k, &v); err != nil {
			return sqliteErr(err, "meta")
		}
		switch k.String {
		case "version":
			d.version = v.String
		case "has_arcs":
			n, err := strconv.Atoi(v.String)
			if err != nil {
				return evidence.Failf(evidence.CodeDecodeFailure, "coverage data: meta has_arcs = %q is not an integer", v.String)
			}
			d.hasArcs = n != 0
		}
		return nil
	}); err != nil {
		return err
	}
	maxFiles := d.in.Limit(coveragepy.LimitFiles)
	if err := d.query("SELECT id, path FROM file", func(r *sql.Rows) error {
		var id int64
		var p sql.NullString
		if err := r.Scan(&id, &p); err != nil {
			return sqliteErr(err, "file")
		}
		if !p.Valid {
			return evidence.Failf(evidence.CodeDecodeFailure, "coverage data: file %d has a null path", id)
		}
		if int64(len(d.files)) >= maxFiles {
			return d.in.Exceeded(coveragepy.LimitFiles, nil)
		}
		d.files[id] = &fileAcc{id: id, path: p.String}
		return nil
	}); err != nil {
		return err
	}
	maxCtx := d.in.Limit(coveragepy.LimitContexts)
	if err := d.query("SELECT id, context FROM context", func(r *sql.Rows) error {
		var id int64
		var c sql.NullString
		if err := r.Scan(&id, &c); err != nil {
			return sqliteErr(err, "context")
		}
		if int64(len(d.contexts)) >= maxCtx {
			return d.in.Exceeded(coveragepy.LimitContexts, nil)
		}
		d.contexts[id] = c.String
		return nil
	}); err != nil {
		return err
	}
	maxLine := d.in.Limit(coveragepy.LimitLines)
	if err := d.query("SELECT file_id, context_id, numbits FROM line_bits", func(r *sql.Rows) error {
		var fid, cid int64
		var nb []byte
		if err := r.Scan(&fid, &cid, &nb); err != nil {
			return sqliteErr(err, "line_bits")
		}
		f, err := d.ref("line_bits", fid, cid)
		if err != nil {
			return err
		}
		d.lineRows++
		if m := numbitsMax(nb); m > maxLine {
			return d.in.Exceeded(coveragepy.LimitLines, m)
		}
		numbits(nb, f.setLine)
		return nil
	}); err != nil {
		return err
	}
	if err := d.query("SELECT file_id, context_id, fromno, tono FROM arc", func(r *sql.Rows) error {
		var fid, cid, from, to int64
		if err := r.Scan(&fid, &cid, &from, &to); err != nil {
			return sqliteErr(err, "arc")
		}
		f, err := d.ref("arc", fid, cid)
		if err != nil {
			return err
		}
		d.arcRows++
		if f.arcs == nil {
			f.arcs = map[[2]int64]struct{}{}
		}
		f.arcs[[2]int64{from, to}] = struct{}{}
		for _, n := range [2]int64{from, to} {
			if n > maxLine || -n > maxLine {
				return d.in.Exceeded(coveragepy.LimitLines, max(n, -n))
			}
			if n > 0 {
				f.setLine(n)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if d.hasArcs && d.lineRows > 0 || !d.hasArcs && d.arcRows > 0 {
		return evidence.Failf(evidence.CodeDecodeFailure, "coverage data: meta has_arcs=%v but the file holds %d line_bits and %d arc rows: line and arc data cannot be mixed", d.hasArcs, d.lineRows, d.arcRows)
	}
	return d.query("SELECT file_id, tracer FROM tracer", func(r *sql.Rows) error {
		var fid int64
		var t sql.NullString
		if err := r.Scan(&fid, &t); err != nil {
			return sqliteErr(err, "tracer")
		}
		f, ok := d.files[fid]
		if !ok {
			return evidence.Failf(evidence.CodeDecodeFailure, "coverage data: tracer row names file id %d, which the file table lacks", fid)
		}
		f.tracer = t.String
		return nil
	})
}

// ref resolves a data row's file and context ids; an id that does not
// resolve is corrupt data, not an ignorable row.
func (d *sqliteRead) ref(table string, fid, cid int64) (*fileAcc, error) {
	if err := d.ctx.Err(); err != nil {
		return nil, err
	}
	f, ok := d.files[fid]
	if !ok {
		return nil, evidence.Failf(evidence.CodeDecodeFailure, "coverage data: %s row names file id %d, which the file table lacks", table, fid)
	}
	if _, ok := d.contexts[cid]; !ok {
		return nil, evidence.Failf(evidence.CodeDecodeFailure, "coverage data: %s row names context id %d, which the context table lacks", table, cid)
	}
	f.hasData = true
	if f.contexts == nil {
		f.contexts = map[int64]struct{}{}
	}
	f.contexts[cid] = struct{}{}
	return f, nil
}

func (d *sqliteRead) emit(out formats.Sink) error {
	files := make([]*fileAcc, 0, len(d.files))
	for _, f := range d.files {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	tw, err := out.Begin(&evidence.Table{Name: table.CoverageFiles.Name, Columns: table.CoverageFiles.EvidenceColumns(""), Evidence: evidence.Observed})
	if err != nil {
		return err
	}
	var lines, arcs, unexecuted int64
	// One backing array: a sink may keep the rows it is handed.
	rows := make([]table.CoverageFile, len(files))
	for i, f := range files {
		n := f.count()
		lines += n
		row := &rows[i]
		*row = table.CoverageFile{File: f.path, ExecutedLines: table.Some(n), Tracer: table.NonEmpty(f.tracer)}
		if d.hasArcs {
			row.ExecutedArcs = table.Some(int64(len(f.arcs)))
			arcs += int64(len(f.arcs))
		}
		if !f.hasData {
			unexecuted++
		} else {
			names := make([]string, 0, len(f.contexts))
			for id := range f.contexts {
				names = append(names, d.contexts[id])
			}
			sort.Strings(names)
			row.ContextCount = table.Some(int64(len(names)))
			row.Contexts = names[:min(len(names), table.CoverageContextNames)]
		}
		if err := tw.Row(row); err != nil {
			return err
		}
	}
	s := &evidence.Summary{RowsObserved: int64(len(files)), Complete: true}
	s.Coverage = evidence.Object{"coverage_version": table.NonEmpty(d.version).Value(), "has_arcs": d.hasArcs, "schema_version": SchemaVersion}
	s.Metrics = map[string]evidence.Metric{
		"files":          {Value: int64(len(files)), Unit: "files"},
		"executed_lines": {Value: lines, Unit: "lines"},
		"contexts":       {Value: int64(len(d.contexts)), Unit: "contexts"},
	}
	if d.hasArcs {
		s.Metrics["executed_arcs"] = evidence.Metric{Value: arcs, Unit: "arcs"}
	}
	s.Limit(noStatements)
	if unexecuted > 0 {
		s.Limit(fmt.Sprintf("%d measured files have no line or arc rows: coverage.py recorded them but nothing in them executed", unexecuted))
	}
	return tw.End(s)
}
