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
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/coveragepy"
	"github.com/flameox/flameox/internal/table"
)

// LimitValueBytes bounds one SQLite value before it is read.
const LimitValueBytes = "max_sqlite_value_bytes"

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
		{Name: LimitValueBytes, Default: 4 << 20, Unit: "bytes", Doc: "bytes in one SQLite value (a path, context, meta value or numbits blob; line 10,000,000 needs a 1.25 MB blob)"},
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
	lines    lineSet // executed line numbers
	arcs     map[[2]int64]struct{}
	contexts map[int64]struct{}
	tracer   string
	hasData  bool
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
	d := &sqliteRead{ctx: ctx, db: db, in: in, files: map[int64]*fileAcc{}, contexts: map[int64]string{}, maxValue: in.Limit(LimitValueBytes)}
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
	maxValue int64 // max_sqlite_value_bytes
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

// columns is coverage.py's schema 7: the tables this decoder reads and
// the columns it reads of each.
var columns = []struct {
	table string
	cols  []string
}{
	{"coverage_schema", []string{"version"}},
	{"meta", []string{"key", "value"}},
	{"file", []string{"id", "path"}},
	{"context", []string{"id", "context"}},
	{"line_bits", []string{"file_id", "context_id", "numbits"}},
	{"arc", []string{"file_id", "context_id", "fromno", "tono"}},
	{"tracer", []string{"file_id", "tracer"}},
}

// checkSchema refuses a layout coverage.py never writes whose reading
// could cost more than the file holds: a virtual table, or a generated
// column, is computed by SQLite on every read (a 48 KB file can define a
// 400 MB path). Stored values are bounded per value when they are read.
func (d *sqliteRead) checkSchema() error {
	defs := map[string]string{}
	err := d.query("SELECT name, sql FROM sqlite_master WHERE type = 'table'", func(r *sql.Rows) error {
		var n, q sql.NullString
		if err := r.Scan(&n, &q); err != nil {
			return sqliteErr(err, "sqlite_master")
		}
		defs[n.String] = q.String
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
	for _, t := range columns {
		def, ok := defs[t.table]
		if !ok {
			return evidence.Failf(evidence.CodeUnsupportedFormat, "not a coverage.py schema-%d data file: table %s is missing", SchemaVersion, t.table)
		}
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(def)), "CREATE VIRTUAL") {
			return evidence.Failf(evidence.CodeUnsupportedFormat, "not a coverage.py data file: table %s is a virtual table, which coverage.py never creates", t.table)
		}
		hidden := map[string]int64{}
		// table_xinfo lists generated columns too: hidden 2 (virtual) or
		// 3 (stored); 0 is an ordinary column.
		if err := d.query("SELECT name, hidden FROM pragma_table_xinfo('"+t.table+"')", func(r *sql.Rows) error {
			var n string
			var h int64
			if err := r.Scan(&n, &h); err != nil {
				return sqliteErr(err, "table_xinfo")
			}
			hidden[strings.ToLower(n)] = h
			return nil
		}); err != nil {
			return err
		}
		for _, c := range t.cols {
			h, ok := hidden[c]
			if !ok {
				return evidence.Failf(evidence.CodeUnsupportedFormat, "not a coverage.py schema-%d data file: column %s.%s is missing", SchemaVersion, t.table, c)
			}
			if h != 0 {
				return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
					Message:  fmt.Sprintf("not a coverage.py data file: column %s.%s is a generated column, which coverage.py never writes and SQLite would compute on every read", t.table, c),
					Location: evidence.Location{Field: t.table + "." + c},
					Details:  evidence.Object{"table": t.table, "column": c, "hidden": h}}
			}
		}
	}
	return nil
}

// cell selects a column bounded: its type and size come first, and the
// value itself only when it is of the expected type and within the
// max_sqlite_value_bytes limit, so no value is materialised before it is checked.
func (d *sqliteRead) cell(col, typ string) string {
	return fmt.Sprintf("typeof(%[1]s), octet_length(%[1]s), CASE WHEN typeof(%[1]s) = '%[2]s' AND octet_length(%[1]s) <= %[3]d THEN %[1]s END", col, typ, d.maxValue)
}

// value is one bounded cell as read: its SQLite type, size and (when it
// passed the bound) its bytes.
type value struct {
	typ string
	n   sql.NullInt64
	v   any
}

func (c *value) dest() []any { return []any{&c.typ, &c.n, &c.v} }

// at is a failure located at a table's row.
func at(code evidence.Code, tbl string, rowid int64, col, format string, args ...any) *evidence.Failure {
	return &evidence.Failure{Code: code,
		Message:  fmt.Sprintf("coverage data: %s row %d: %s: ", tbl, rowid, col) + fmt.Sprintf(format, args...),
		Location: evidence.Location{Field: tbl + "." + col},
		Details:  evidence.Object{"table": tbl, "rowid": rowid, "column": col}}
}

// text checks a bounded text cell: within the limit, UTF-8 (coverage.py
// stores Python str values), and of type text or (when null is allowed)
// null. ok is false for a null.
func (d *sqliteRead) text(c *value, tbl string, rowid int64, col string, null bool) (string, bool, error) {
	if err := d.bounded(c, tbl, rowid, col); err != nil {
		return "", false, err
	}
	switch {
	case c.typ == "null" && null:
		return "", false, nil
	case c.typ != "text":
		return "", false, at(evidence.CodeDecodeFailure, tbl, rowid, col, "a %s value where coverage.py writes text", c.typ)
	}
	var s string
	switch v := c.v.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	}
	if !utf8.ValidString(s) {
		return "", false, at(evidence.CodeDecodeFailure, tbl, rowid, col, "the text is not valid UTF-8")
	}
	return s, true, nil
}

// bounded is the limit failure of a cell larger than
// max_sqlite_value_bytes (its value was not read), located at its row.
func (d *sqliteRead) bounded(c *value, tbl string, rowid int64, col string) error {
	if !c.n.Valid || c.n.Int64 <= d.maxValue {
		return nil
	}
	f := d.in.Exceeded(LimitValueBytes, c.n.Int64)
	f.Location = evidence.Location{Field: tbl + "." + col}
	f.Details["table"], f.Details["rowid"], f.Details["column"] = tbl, rowid, col
	return f
}

// idText reads the (id, text column) rows of a table, each checked and
// bounded, handing fn the id and the text (ok false for a null).
func (d *sqliteRead) idText(tbl, col string, fn func(rowid, id int64, text string, ok bool) error) error {
	return d.query("SELECT rowid, "+intCell("id")+", "+d.cell(col, "text")+" FROM "+tbl, func(r *sql.Rows) error {
		var rowid int64
		var typ string
		var idv sql.NullInt64
		var v value
		if err := r.Scan(append([]any{&rowid, &typ, &idv}, v.dest()...)...); err != nil {
			return sqliteErr(err, tbl)
		}
		id, err := integer(typ, idv, tbl, rowid, "id")
		if err != nil {
			return err
		}
		text, ok, err := d.text(&v, tbl, rowid, col, true)
		if err != nil {
			return err
		}
		return fn(rowid, id, text, ok)
	})
}

// integer checks an integer cell (selected as typeof(col), col).
func integer(typ string, v sql.NullInt64, tbl string, rowid int64, col string) (int64, error) {
	if typ != "integer" || !v.Valid {
		return 0, at(evidence.CodeDecodeFailure, tbl, rowid, col, "a %s value where coverage.py writes an integer", typ)
	}
	return v.Int64, nil
}

// intCell selects an integer column as its type and, when it is an
// integer, its value: a huge text or blob is never materialised.
func intCell(col string) string {
	return fmt.Sprintf("typeof(%[1]s), CASE WHEN typeof(%[1]s) = 'integer' THEN %[1]s END", col)
}

func (d *sqliteRead) read() error {
	if err := d.checkSchema(); err != nil {
		return err
	}
	var schemaVersions []int64
	if err := d.query("SELECT rowid, "+intCell("version")+" FROM coverage_schema", func(r *sql.Rows) error {
		var rowid int64
		var typ string
		var v sql.NullInt64
		if err := r.Scan(&rowid, &typ, &v); err != nil {
			return sqliteErr(err, "coverage_schema")
		}
		n, err := integer(typ, v, "coverage_schema", rowid, "version")
		if err != nil {
			return err
		}
		schemaVersions = append(schemaVersions, n)
		return nil
	}); err != nil {
		return err
	}
	if len(schemaVersions) != 1 || schemaVersions[0] != SchemaVersion {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("coverage.py data schema %v is not supported (want %d, written by coverage.py 5.x to 7.x)", schemaVersions, SchemaVersion),
			Details: evidence.Object{"schema_versions": schemaVersions}}
	}
	if err := d.query("SELECT rowid, "+d.cell("key", "text")+", "+d.cell("value", "text")+" FROM meta", func(r *sql.Rows) error {
		var rowid int64
		var k, v value
		if err := r.Scan(append(append([]any{&rowid}, k.dest()...), v.dest()...)...); err != nil {
			return sqliteErr(err, "meta")
		}
		key, _, err := d.text(&k, "meta", rowid, "key", true)
		if err != nil {
			return err
		}
		val, _, err := d.text(&v, "meta", rowid, "value", true)
		if err != nil {
			return err
		}
		switch key {
		case "version":
			d.version = val
		case "has_arcs":
			n, err := strconv.Atoi(val)
			if err != nil {
				return at(evidence.CodeDecodeFailure, "meta", rowid, "value", "has_arcs = %q is not an integer", val)
			}
			d.hasArcs = n != 0
		}
		return nil
	}); err != nil {
		return err
	}
	maxFiles := d.in.Limit(coveragepy.LimitFiles)
	if err := d.idText("file", "path", func(rowid, id int64, path string, ok bool) error {
		if !ok {
			return at(evidence.CodeDecodeFailure, "file", rowid, "path", "file %d has a null path", id)
		}
		if int64(len(d.files)) >= maxFiles {
			return d.in.Exceeded(coveragepy.LimitFiles, nil)
		}
		d.files[id] = &fileAcc{id: id, path: path}
		return nil
	}); err != nil {
		return err
	}
	maxCtx := d.in.Limit(coveragepy.LimitContexts)
	if err := d.idText("context", "context", func(_, id int64, name string, _ bool) error {
		if int64(len(d.contexts)) >= maxCtx {
			return d.in.Exceeded(coveragepy.LimitContexts, nil)
		}
		d.contexts[id] = name
		return nil
	}); err != nil {
		return err
	}
	maxLine := d.in.Limit(coveragepy.LimitLines)
	if err := d.query("SELECT rowid, "+intCell("file_id")+", "+intCell("context_id")+", "+d.cell("numbits", "blob")+" FROM line_bits", func(r *sql.Rows) error {
		var rowid int64
		var ft, ct string
		var fv, cv sql.NullInt64
		var nb value
		if err := r.Scan(append([]any{&rowid, &ft, &fv, &ct, &cv}, nb.dest()...)...); err != nil {
			return sqliteErr(err, "line_bits")
		}
		fid, err := integer(ft, fv, "line_bits", rowid, "file_id")
		if err != nil {
			return err
		}
		cid, err := integer(ct, cv, "line_bits", rowid, "context_id")
		if err != nil {
			return err
		}
		if err := d.bounded(&nb, "line_bits", rowid, "numbits"); err != nil {
			return err
		}
		if nb.typ != "blob" {
			return at(evidence.CodeDecodeFailure, "line_bits", rowid, "numbits", "a %s value where coverage.py writes a numbits blob", nb.typ)
		}
		bits, _ := nb.v.([]byte)
		f, err := d.ref("line_bits", fid, cid)
		if err != nil {
			return err
		}
		d.lineRows++
		if m := numbitsMax(bits); m > maxLine {
			return d.in.Exceeded(coveragepy.LimitLines, m)
		}
		f.lines.addNumbits(bits)
		return nil
	}); err != nil {
		return err
	}
	if err := d.query("SELECT rowid, "+intCell("file_id")+", "+intCell("context_id")+", "+intCell("fromno")+", "+intCell("tono")+" FROM arc", func(r *sql.Rows) error {
		var rowid int64
		var typs [4]string
		var vals [4]sql.NullInt64
		if err := r.Scan(&rowid, &typs[0], &vals[0], &typs[1], &vals[1], &typs[2], &vals[2], &typs[3], &vals[3]); err != nil {
			return sqliteErr(err, "arc")
		}
		var n [4]int64
		for i, col := range [4]string{"file_id", "context_id", "fromno", "tono"} {
			var err error
			if n[i], err = integer(typs[i], vals[i], "arc", rowid, col); err != nil {
				return err
			}
		}
		from, to := n[2], n[3]
		for _, x := range [2]int64{from, to} {
			if x > maxLine || -x > maxLine {
				return d.in.Exceeded(coveragepy.LimitLines, max(x, -x))
			}
		}
		f, err := d.ref("arc", n[0], n[1])
		if err != nil {
			return err
		}
		d.arcRows++
		if f.arcs == nil {
			f.arcs = map[[2]int64]struct{}{}
		}
		f.arcs[[2]int64{from, to}] = struct{}{}
		for _, x := range [2]int64{from, to} {
			if x > 0 {
				f.lines.set(x)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if d.hasArcs && d.lineRows > 0 || !d.hasArcs && d.arcRows > 0 {
		return evidence.Failf(evidence.CodeDecodeFailure, "coverage data: meta has_arcs=%v but the file holds %d line_bits and %d arc rows: line and arc data cannot be mixed", d.hasArcs, d.lineRows, d.arcRows)
	}
	return d.query("SELECT rowid, "+intCell("file_id")+", "+d.cell("tracer", "text")+" FROM tracer", func(r *sql.Rows) error {
		var rowid int64
		var typ string
		var fv sql.NullInt64
		var t value
		if err := r.Scan(append([]any{&rowid, &typ, &fv}, t.dest()...)...); err != nil {
			return sqliteErr(err, "tracer")
		}
		fid, err := integer(typ, fv, "tracer", rowid, "file_id")
		if err != nil {
			return err
		}
		name, _, err := d.text(&t, "tracer", rowid, "tracer", true)
		if err != nil {
			return err
		}
		f, ok := d.files[fid]
		if !ok {
			return at(evidence.CodeDecodeFailure, "tracer", rowid, "file_id", "names file id %d, which the file table lacks", fid)
		}
		f.tracer = name
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
		n := f.lines.count()
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
