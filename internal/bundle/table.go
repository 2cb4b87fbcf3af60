package bundle

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/flameox/flameox/internal/durable"
	"github.com/flameox/flameox/internal/evidence"
)

// Versions of the libraries whose output bytes are part of a bundle's
// identity: they are recorded in every manifest and pinned by go.mod (a test
// fails when the two disagree, because an upgrade can change encoded bytes
// and so the id of newly written bundles).
const (
	parquetModule  = "github.com/parquet-go/parquet-go"
	parquetVersion = "v0.32.0"
	zstdModule     = "github.com/klauspost/compress"
	zstdVersion    = "v1.20.4"
)

// Parquet key-value metadata keys.
const (
	MetaTable = "flameox.table" // the canonical table header block
	MetaUnits = "flameox.units" // canonical {"column": unit or null}
)

// Row-group bounds: a writer buffers one row group in memory, so these
// bound memory per open table. Both are functions of the rows alone, which
// keeps the file bytes deterministic.
const (
	batchRows     = 64 // rows handed to the Parquet writer at once
	groupMaxRows  = 1 << 17
	groupMaxBytes = 32 << 20 // approximate value bytes
)

// zstdCodec is shared: the codec pools its encoders, and a fixed level keeps
// output deterministic.
var zstdCodec = &zstd.Codec{Level: zstd.SpeedDefault, Concurrency: 1}

// column maps a header column to its Parquet leaf.
type column struct {
	name string
	typ  string
	leaf int // Parquet orders a group's leaves by name
}

// TableWriter streams one table's rows to a Parquet file in the bundle.
type TableWriter struct {
	header *evidence.Table
	rel    string // path relative to the bundle directory
	file   *os.File
	out    *durable.Writer // hashes and counts what reaches the file
	pw     *parquet.GenericWriter[any]
	cols   []column
	batch  []parquet.Row
	flat   []parquet.Value
	// scratch holds the string and JSON bytes of the pending batch. The
	// Parquet writer copies values when a batch is written, so it is reused
	// afterwards; values made before an append moved it stay valid.
	scratch []byte

	rows, groupRows, groupBytes int64

	summary *evidence.Summary
	member  *evidence.Member // set once the file is closed
	err     error            // sticky: a writer that failed stays failed
}

// checkColumns rejects headers whose rows could not round-trip.
func checkColumns(t *evidence.Table) error {
	if len(t.Columns) == 0 {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s: no columns", t.ID)
	}
	if len(t.Columns) > parquet.MaxColumnIndex {
		return evidence.Failf(evidence.CodeLimitExceeded, "table %s: %d columns, at most %d fit a Parquet file", t.ID, len(t.Columns), parquet.MaxColumnIndex)
	}
	seen := make(map[string]bool, len(t.Columns))
	for _, c := range t.Columns {
		if c.Name == "" {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s: a column has no name", t.ID)
		}
		if seen[c.Name] {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s: column %q appears twice", t.ID, c.Name)
		}
		seen[c.Name] = true
		if _, err := leafNode(c.Type); err != nil {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s: column %q: %v", t.ID, c.Name, err)
		}
	}
	return nil
}

func leafNode(typ string) (parquet.Node, error) {
	switch typ {
	case evidence.TypeString:
		return parquet.String(), nil
	case evidence.TypeInt:
		return parquet.Int(64), nil
	case evidence.TypeDouble:
		return parquet.Leaf(parquet.DoubleType), nil
	case evidence.TypeBool:
		return parquet.Leaf(parquet.BooleanType), nil
	case evidence.TypeJSON:
		return parquet.JSON(), nil
	}
	return nil, fmt.Errorf("unknown column type %q", typ)
}

// ParquetType names the Parquet leaf a column of evidence type typ is
// stored as: its physical type and its logical annotation ("" for none).
// Every leaf is OPTIONAL. docs/tables.md states it for every column, and a
// test checks it against the files bundles write.
func ParquetType(typ string) (physical, logical string, err error) {
	n, err := leafNode(typ)
	if err != nil {
		return "", "", err
	}
	if lt := n.Type().LogicalType(); lt != nil {
		logical = lt.String()
	}
	return n.Type().Kind().String(), logical, nil
}

// tableSchema builds the Parquet schema of a header: one optional leaf per
// column, so that null stays distinct from every value.
func tableSchema(t *evidence.Table) (*parquet.Schema, []column) {
	g := make(parquet.Group, len(t.Columns))
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		n, _ := leafNode(c.Type) // checked by checkColumns
		g[c.Name] = parquet.Optional(n)
		names[i] = c.Name
	}
	slices.Sort(names) // the leaf order parquet.Group uses
	cols := make([]column, len(t.Columns))
	for i, c := range t.Columns {
		leaf, _ := slices.BinarySearch(names, c.Name)
		cols[i] = column{name: c.Name, typ: c.Type, leaf: leaf}
	}
	return parquet.NewSchema("row", g), cols
}

// unitsOf returns the canonical {"column": unit or null} object.
func unitsOf(t *evidence.Table) evidence.Object {
	u := make(evidence.Object, len(t.Columns))
	for _, c := range t.Columns {
		if c.Unit == "" {
			u[c.Name] = nil
		} else {
			u[c.Name] = c.Unit
		}
	}
	return u
}

func newTableWriter(tmp string, t *evidence.Table, index int) (*TableWriter, error) {
	header, err := evidence.Canonical(t)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s header", t.ID)
	}
	units, err := evidence.Canonical(unitsOf(t))
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s units", t.ID)
	}
	rel := tablePath(Layout, index, t.Name)
	if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, filepath.FromSlash(rel))), 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "create table directory")
	}
	f, err := os.OpenFile(filepath.Join(tmp, filepath.FromSlash(rel)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "create table file")
	}
	schema, cols := tableSchema(t)
	out := durable.NewWriter(f)
	pw := parquet.NewGenericWriter[any](out,
		schema,
		parquet.Compression(zstdCodec),
		// A fixed created_by: the default reads the binary's build info,
		// which differs between binaries and would make bytes drift.
		parquet.CreatedBy(parquetModule, parquetVersion[1:], "flameox"),
		parquet.KeyValueMetadata(MetaTable, string(header)),
		parquet.KeyValueMetadata(MetaUnits, string(units)),
	)
	// Sized for a whole batch, so rows already in the batch never move.
	return &TableWriter{header: t, rel: rel, file: f, out: out, pw: pw, cols: cols,
		batch: make([]parquet.Row, 0, batchRows), flat: make([]parquet.Value, 0, batchRows*len(cols))}, nil
}

// fileSafe keeps a table name readable in a file name without letting it
// name another directory.
func fileSafe(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
		if !ok {
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "" || s[0] == '.' {
		s = "_" + s
	}
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// Row appends a row. It must hold exactly the table's columns, each null or
// of the column's type; anything else is INVALID_ARGUMENT naming the column.
func (w *TableWriter) Row(values evidence.Object) error {
	if w.err != nil {
		return w.err
	}
	if w.summary != nil || w.member != nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s: row after the table was closed", w.header.ID)
	}
	if len(values) > len(w.cols) {
		return w.undeclared(values)
	}
	n := len(w.cols)
	start, bytesBefore := len(w.flat), w.groupBytes
	// A refused row leaves no trace, so row-group boundaries (and so the
	// file's bytes) depend on accepted rows only.
	refuse := func(err error) error {
		w.flat, w.groupBytes = w.flat[:start], bytesBefore
		return err
	}
	w.flat = slices.Grow(w.flat, n)[:start+n]
	row := w.flat[start : start+n]
	for _, c := range w.cols {
		v, ok := values[c.name]
		if !ok {
			if err := w.undeclared(values); err != nil {
				return refuse(err)
			}
			return refuse(w.rowFail(c.name, "row lacks column %q", c.name))
		}
		pv, err := w.value(c, v)
		if err != nil {
			return refuse(err)
		}
		row[c.leaf] = pv
	}
	w.batch = append(w.batch, row)
	w.rows++
	if len(w.batch) == batchRows {
		return w.flushBatch()
	}
	return nil
}

// undeclared reports a value for a column the header does not declare.
func (w *TableWriter) undeclared(values evidence.Object) error {
	keys := make([]string, 0, len(values))
	for k := range values {
		if _, ok := w.header.Column(k); !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	return w.rowFail(keys[0], "row has a value for column %q, which the table header does not declare", keys[0])
}

func (w *TableWriter) rowFail(col, format string, args ...any) error {
	f := evidence.Failf(evidence.CodeInvalidArgument, "table %s: "+format, append([]any{w.header.ID}, args...)...)
	f.Location.Field = col
	return f
}

// value converts a canonical value to a Parquet value of column c.
func (w *TableWriter) value(c column, v any) (parquet.Value, error) {
	if v == nil {
		return parquet.NullValue().Level(0, 0, c.leaf), nil
	}
	var pv parquet.Value
	switch c.typ {
	case evidence.TypeString:
		s, ok := v.(string)
		if !ok {
			return pv, w.rowFail(c.name, "column %q holds %s, want a string", c.name, describe(v))
		}
		if !utf8.ValidString(s) {
			return pv, w.rowFail(c.name, "column %q: %v", c.name, evidence.ErrInvalidUTF8)
		}
		start := len(w.scratch)
		w.scratch = append(w.scratch, s...)
		pv = parquet.ByteArrayValue(w.scratch[start:len(w.scratch):len(w.scratch)])
		w.groupBytes += int64(len(s))
	case evidence.TypeInt:
		n, err := intOf(v)
		if err != nil {
			return pv, w.rowFail(c.name, "column %q: %v", c.name, err)
		}
		pv = parquet.Int64Value(n)
		w.groupBytes += 8
	case evidence.TypeDouble:
		f, ok := evidence.AsFloat(v)
		if x, is32 := v.(float32); is32 {
			f, ok = float64(x), true
		}
		if !ok {
			return pv, w.rowFail(c.name, "column %q holds %s, want a double", c.name, describe(v))
		}
		pv = parquet.DoubleValue(f)
		w.groupBytes += 8
	case evidence.TypeBool:
		b, ok := v.(bool)
		if !ok {
			return pv, w.rowFail(c.name, "column %q holds %s, want a boolean", c.name, describe(v))
		}
		pv = parquet.BooleanValue(b)
		w.groupBytes++
	case evidence.TypeJSON:
		start := len(w.scratch)
		var err error
		w.scratch, err = evidence.AppendCanonical(w.scratch, v)
		if err != nil {
			w.scratch = w.scratch[:start]
			return pv, w.rowFail(c.name, "column %q: %v", c.name, err)
		}
		pv = parquet.ByteArrayValue(w.scratch[start:len(w.scratch):len(w.scratch)])
		w.groupBytes += int64(len(w.scratch) - start)
	}
	return pv.Level(0, 1, c.leaf), nil
}

// intOf reads an int column value. Integers beyond ±2^53-1 travel as exact
// decimal strings; a string holding a smaller integer is not canonical and
// would not read back as the same value, so it is refused.
func intOf(v any) (int64, error) {
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("string %q is not an int64", x)
		}
		if n >= -evidence.MaxSafeInteger && n <= evidence.MaxSafeInteger {
			return 0, fmt.Errorf("integer %d is written as a string, but only integers beyond ±2^53-1 are", n)
		}
		return n, nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("integer %d exceeds the int64 range", x)
		}
		return int64(x), nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, fmt.Errorf("integer %d exceeds the int64 range", x)
		}
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("number %s is not an int64", x)
		}
		return n, nil
	}
	if n, ok := evidence.AsInt(v); ok {
		return n, nil
	}
	return 0, fmt.Errorf("holds %s, want an integer", describe(v))
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + string(x)
	case evidence.Object:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

func (w *TableWriter) flushBatch() error {
	if len(w.batch) > 0 {
		if _, err := w.pw.WriteRows(w.batch); err != nil {
			return w.fail(evidence.Wrap(evidence.CodeIOFailure, err, "table %s: write rows", w.header.ID))
		}
		w.groupRows += int64(len(w.batch))
		clear(w.flat) // drop references into the scratch
		w.batch, w.flat, w.scratch = w.batch[:0], w.flat[:0], w.scratch[:0]
	}
	if w.groupRows >= groupMaxRows || w.groupBytes >= groupMaxBytes {
		if err := w.pw.Flush(); err != nil {
			return w.fail(evidence.Wrap(evidence.CodeIOFailure, err, "table %s: write row group", w.header.ID))
		}
		w.groupRows, w.groupBytes = 0, 0
	}
	return nil
}

func (w *TableWriter) fail(err error) error {
	w.err = err
	return err
}

// End closes the table with its summary. Like formats.StreamSink, it stamps
// the summary with the table id and the number of rows written; the caller's
// summary is copied, not kept.
func (w *TableWriter) End(s *evidence.Summary) error {
	if w.err != nil {
		return w.err
	}
	if s == nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s: End needs a summary", w.header.ID)
	}
	if w.summary != nil || w.member != nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s: closed twice", w.header.ID)
	}
	if err := w.close(); err != nil {
		return err
	}
	c := *s
	c.TableID = w.header.ID
	c.RowsEmitted = w.rows
	w.summary = &c
	return nil
}

// close writes the footer and syncs the file. A table closed without End
// keeps a null summary in the manifest: its rows are preserved, and the
// missing summary says the table never finished.
func (w *TableWriter) close() error {
	if w.member != nil {
		return nil
	}
	if err := w.flushBatch(); err != nil {
		return err
	}
	if err := w.pw.Close(); err != nil {
		return w.fail(evidence.Wrap(evidence.CodeIOFailure, err, "table %s: close Parquet writer", w.header.ID))
	}
	if err := durable.SyncClose(w.file); err != nil {
		return w.fail(evidence.Wrap(evidence.CodeIOFailure, err, "table %s", w.header.ID))
	}
	w.member = &evidence.Member{Path: w.rel, SHA256: w.out.Sum(), Size: w.out.Size(), Role: "table"}
	return nil
}

// abort releases the file of an unfinished table.
func (w *TableWriter) abort() {
	if w.member == nil {
		w.file.Close()
	}
}
