// Package parquetpreview previews Parquet files with parquet-go: the schema
// the footer declares (column paths, physical and logical types), the row
// count it declares, and the first rows rebuilt from their columns.
//
// Parquet needs random access, so the decoder verifies the file's digest
// (Input.VerifyFile) and reads the open file rather than the stream.
//
// It imports evidence, formats, formats/preview, param, table and
// parquet-go.
package parquetpreview

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/preview"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Version is the decoder's version.
const Version = "1"

// Parser ceilings, checked against the footer before anything is
// allocated from it.
var (
	limitFooter = formats.Limit{Name: "max_footer_bytes", Default: 64 << 20, Unit: "bytes",
		Doc: "largest footer (file metadata) read"}
	limitChunk = formats.Limit{Name: "max_column_chunk_bytes", Default: 512 << 20, Unit: "bytes",
		Doc: "largest uncompressed column chunk of a row group that rows are read from"}
	// Reading rows holds buffers for every column (about 20 KB each in
	// parquet-go), and its footer model about 1.5 KB each: 60,000 one-row
	// columns took 1.46 GB. The count is read from the footer's schema
	// list header before parquet-go decodes anything.
	limitSchema = formats.Limit{Name: "max_schema_elements", Default: 4096, Unit: "elements",
		Doc: "schema elements the footer declares: the root, each group (struct, list, map) and each leaf column"}
)

var options = []param.Param{
	preview.Option(preview.MaxRows, "rows read and emitted, from the first row group on"),
	preview.Option(preview.MaxRecordBytes, "canonical size of a row beyond which it is reported oversized, without its value"),
}

// Spec is the Parquet preview. It has no sniffer: Parquet files reach it
// by suffix or --format parquet, so a specific format written as Parquet
// (an Nsight export directory, say) is never previewed by accident.
var Spec = preview.Spec(formats.Spec{
	Name:     "parquet",
	Title:    "Parquet table (preview)",
	Suffixes: []string{".parquet"},
	Limits:   []formats.Limit{limitFooter, limitChunk, limitSchema},
	Producer: "any Parquet writer (Arrow, DuckDB, Spark, parquet-go...)",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
	Options:  options,
})

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if in.File == nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "the parquet decoder needs the artifact's file for random access")
	}
	if err := in.VerifyFile(); err != nil {
		return err
	}
	return decodeFrom(ctx, in.File, in.Artifact.Size, in, out)
}

// recorder remembers the first read error, so a failure inside parquet-go
// caused by the disk is IO_FAILURE, not DECODE_FAILURE.
type recorder struct {
	r   io.ReaderAt
	err error
}

func (rc *recorder) ReadAt(p []byte, off int64) (int, error) {
	n, err := rc.r.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) && rc.err == nil {
		rc.err = err
	}
	return n, err
}

// decodeFrom previews a Parquet file of size bytes read through ra, with
// in's options and limits.
func decodeFrom(ctx context.Context, ra io.ReaderAt, size int64, in *formats.Input, out formats.Sink) error {
	rc := &recorder{r: ra}
	if err := decodeAt(ctx, rc, size, in, out); err != nil {
		if rc.err != nil && ctx.Err() == nil {
			return evidence.Wrap(evidence.CodeIOFailure, rc.err, "read parquet")
		}
		return err
	}
	return nil
}

func decodeAt(ctx context.Context, ra io.ReaderAt, size int64, in *formats.Input, out formats.Sink) error {
	if err := checkFooter(in, ra, size); err != nil {
		return err
	}
	var f *parquet.File
	if err := guarded("open", func() (err error) {
		f, err = parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		return err
	}); err != nil {
		return err
	}
	md := f.Metadata()
	// Checked again on the decoded footer: the pre-check reads only a
	// footer laid out in field order, as every writer lays it out.
	if err := checkSchemaElements(in, int64(len(md.Schema))); err != nil {
		return err
	}
	root, leaves, err := buildSchema(md.Schema)
	if err != nil {
		return evidence.Wrap(evidence.CodeDecodeFailure, err, "parquet schema")
	}
	var sum int64
	for i, rg := range md.RowGroups {
		if rg.NumRows < 0 || len(rg.Columns) != len(leaves) {
			return evidence.Failf(evidence.CodeDecodeFailure, "parquet row group %d declares %d rows over %d columns for a schema of %d columns", i, rg.NumRows, len(rg.Columns), len(leaves))
		}
		sum += rg.NumRows
	}
	if sum != md.NumRows {
		return evidence.Failf(evidence.CodeDecodeFailure, "parquet footer declares %d rows but its row groups hold %d", md.NumRows, sum)
	}

	maxRecord := in.Int(preview.MaxRecordBytes)
	fields := make([]*table.Field, len(leaves))
	for i, l := range leaves {
		fields[i] = &table.Field{Position: int64(i), Name: l.dotted(), Path: l.path, Type: l.physical(),
			LogicalType: table.NonEmpty(l.logical()), Repetition: table.NonEmpty(l.repetition().String()), Nulls: table.Some(int64(0))}
	}
	res := preview.NewResult(in, out)
	res.Fields, res.FieldsDeclared = fields, true
	asm := &assembler{root: root}
	groupsRead := 0
	err = guarded("read rows", func() error {
		for gi, rg := range f.RowGroups() {
			if res.Observed >= res.MaxRows {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := checkChunks(in, ra, md.RowGroups[gi], gi, size); err != nil {
				return err
			}
			groupsRead++
			if err := readGroup(rg, asm, res, fields, maxRecord); err != nil {
				return fmt.Errorf("row group %d: %w", gi, err)
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	read := res.Observed
	if md.NumRows > read {
		res.Truncation = &evidence.Truncation{Reason: "row_limit", Limit: res.MaxRows, Omitted: md.NumRows - read}
		res.Limitations = append(res.Limitations,
			fmt.Sprintf("the footer declares %d rows; only the first %d were read, and the omitted count is the footer's, not a count of rows read", md.NumRows, read))
	}
	res.Coverage = evidence.Object{"rows_declared": md.NumRows, "rows_read": read,
		"row_groups": len(md.RowGroups), "row_groups_read": groupsRead, "created_by": nullable(md.CreatedBy)}
	res.Metrics = map[string]evidence.Metric{"rows_declared": {Value: md.NumRows, Unit: "count"}}
	res.Limitations = append(res.Limitations,
		"values are native: timestamps, dates and times stay integers in the unit logical_type names; DECIMAL values are exact decimal strings; binary values are {\"type\":\"bytes\",\"base64\":...}")
	if asm.invalidText > 0 {
		res.Limitations = append(res.Limitations,
			fmt.Sprintf("%d values annotated as text are not valid UTF-8 and are shown as tagged bytes", asm.invalidText))
	}
	if kv := keyValueKeys(md); len(kv) > 0 {
		res.Coverage["key_value_metadata_keys"] = kv
	}
	return res.Write(out, evidence.Observed)
}

// readGroup reads rows of one row group until max_rows.
func readGroup(rg parquet.RowGroup, asm *assembler, res *preview.Result, fields []*table.Field, maxRecord int64) error {
	rows := rg.Rows()
	defer rows.Close()
	buf := make([]parquet.Row, 16)
	cols := make([][]parquet.Value, len(fields))
	for res.Observed < res.MaxRows {
		n, err := rows.ReadRows(buf[:min(int64(len(buf)), res.MaxRows-res.Observed)])
		for _, row := range buf[:n] {
			for i := range cols {
				cols[i] = nil
			}
			row.Range(func(ci int, vals []parquet.Value) bool {
				if ci < len(cols) {
					cols[ci] = vals
				}
				return true
			})
			for i, vals := range cols {
				fields[i].Observed += int64(len(vals))
				for _, v := range vals {
					if v.DefinitionLevel() < leafDef(asm.root, i) {
						fields[i].Nulls.V++
					}
				}
			}
			// Not byte-addressed: line, offset and bytes are null.
			rec := table.Record{Index: res.Observed, Status: table.StatusOK}
			// Assembled even when the records are declined, so a malformed
			// row fails the same way whoever reads the preview.
			obj, aerr := asm.row(cols)
			if aerr != nil {
				return evidence.Wrap(evidence.CodeDecodeFailure, aerr, "row %d", rec.Index)
			}
			if !res.Keep() {
				res.Count(rec.Status)
				continue
			}
			enc, cerr := evidence.AppendCanonical(nil, obj)
			switch {
			case cerr != nil:
				return evidence.Wrap(evidence.CodeDecodeFailure, cerr, "row %d", rec.Index)
			case int64(len(enc)) > maxRecord:
				rec.Status = table.StatusOversized
				rec.Error = table.NonEmpty(fmt.Sprintf("row is %d bytes as canonical JSON, more than max_record_bytes=%d", len(enc), maxRecord))
			default:
				rec.Value = obj
			}
			res.Records = append(res.Records, rec)
			res.Count(rec.Status)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("the row reader made no progress")
		}
	}
	return nil
}

// leafDef returns the maximum definition level of leaf column i.
func leafDef(root *node, i int) int {
	var find func(n *node) int
	find = func(n *node) int {
		if n.leaf() {
			if n.column == i {
				return n.maxDef
			}
			return -1
		}
		for _, c := range n.children {
			if d := find(c); d >= 0 {
				return d
			}
		}
		return -1
	}
	return find(root)
}

// checkFooter validates the magic bytes and the footer length before
// parquet-go allocates a buffer of that length.
func checkFooter(in *formats.Input, ra io.ReaderAt, size int64) error {
	if size < 12 {
		return evidence.Failf(evidence.CodeDecodeFailure, "not a Parquet file: %d bytes is shorter than the 12 bytes of magic and footer length", size)
	}
	var head [4]byte
	var tail [8]byte
	if _, err := ra.ReadAt(head[:], 0); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "read parquet header")
	}
	if _, err := ra.ReadAt(tail[:], size-8); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "read parquet footer")
	}
	switch {
	case string(tail[4:]) == "PARE":
		return evidence.Failf(evidence.CodeDecodeFailure, "the Parquet footer is encrypted (magic PARE); encrypted files are not previewed")
	case !bytes.Equal(head[:], []byte("PAR1")) || string(tail[4:]) != "PAR1":
		f := evidence.Failf(evidence.CodeDecodeFailure, "not a Parquet file: magic bytes are %q at the start and %q at the end, not \"PAR1\"", head[:], tail[4:])
		f.Location.Offset = size - 4
		return f
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		f := evidence.Failf(evidence.CodeDecodeFailure, "corrupt Parquet footer: its length %d exceeds the %d bytes before it", n, size-12)
		f.Location.Offset = size - 8
		return f
	}
	if max := in.Limit(limitFooter.Name); n > max {
		f := in.Exceeded(limitFooter.Name, n)
		f.Message = fmt.Sprintf("the Parquet footer is %d bytes, more than max_footer_bytes=%d", n, max)
		f.Location.Offset = size - 8
		return f
	}
	var head16 [16]byte
	at := size - 8 - n
	k, err := ra.ReadAt(head16[:min(int64(len(head16)), n)], at)
	if err != nil && !errors.Is(err, io.EOF) {
		return evidence.Wrap(evidence.CodeIOFailure, err, "read parquet footer")
	}
	if count, ok := schemaCount(head16[:k]); ok {
		if err := checkSchemaElements(in, count); err != nil {
			f := err.(*evidence.Failure)
			f.Location.Offset = at
			return f
		}
	}
	return nil
}

// schemaCount reads the number of schema elements from the start of a
// footer (thrift compact FileMetaData) laid out in field order: field 1,
// version (i32), then field 2, schema (list of structs). ok is false for
// any other layout.
func schemaCount(b []byte) (int64, bool) {
	if len(b) < 1 || b[0] != 0x15 { // field delta 1, type i32
		return 0, false
	}
	_, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return 0, false
	}
	b = b[1+n:]
	if len(b) < 2 || b[0] != 0x19 || b[1]&0x0f != 0x0c { // field delta 1, type list; of structs
		return 0, false
	}
	if c := int64(b[1] >> 4); c != 15 {
		return c, true
	}
	c, n := binary.Uvarint(b[2:])
	if n <= 0 || c > 1<<40 {
		return 0, false
	}
	return int64(c), true
}

func checkSchemaElements(in *formats.Input, count int64) error {
	if max := in.Limit(limitSchema.Name); count > max {
		f := in.Exceeded(limitSchema.Name, count)
		f.Message = fmt.Sprintf("the Parquet footer declares %d schema elements, more than max_schema_elements=%d; a preview reads every column's pages", count, max)
		return f
	}
	return nil
}

// checkChunks refuses a row group whose column chunks declare more
// uncompressed bytes than the ceiling, or pages outside the file. The
// offsets are checked here, against the column that declares them:
// parquet-go would read at them and fail as if the disk had (a negative
// offset), or name another column.
func checkChunks(in *formats.Input, ra io.ReaderAt, rg format.RowGroup, gi int, size int64) error {
	max := in.Limit(limitChunk.Name)
	for ci, c := range rg.Columns {
		md := &c.MetaData
		name := strings.Join(md.PathInSchema, ".")
		if sz := md.TotalUncompressedSize; sz > max || sz < 0 {
			f := in.Exceeded(limitChunk.Name, sz)
			f.Message = fmt.Sprintf("parquet row group %d column %d (%s) declares %d uncompressed bytes, more than max_column_chunk_bytes=%d", gi, ci, name, sz, max)
			return f
		}
		start := md.DataPageOffset
		if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
			start = md.DictionaryPageOffset
		}
		// Pages lie after the leading magic and before the footer.
		if start < 4 || md.TotalCompressedSize < 0 || start > size-12 || md.TotalCompressedSize > size-12-start {
			f := evidence.Failf(evidence.CodeDecodeFailure,
				"corrupt Parquet metadata: row group %d column %d (%s) declares pages at byte %d of %d compressed bytes, outside the %d-byte file",
				gi, ci, name, start, md.TotalCompressedSize, size)
			f.Location.Field = name
			return f
		}
		if err := checkPages(ra, md, start, name, gi, ci); err != nil {
			return err
		}
	}
	return nil
}

// guarded runs a parquet-go call, turning its errors and panics on
// malformed input into typed failures.
func guarded(what string, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = evidence.Failf(evidence.CodeDecodeFailure, "parquet %s: the reader failed on malformed input: %v", what, p)
		}
	}()
	if err = fn(); err != nil {
		var f *evidence.Failure
		if errors.As(err, &f) || errors.Is(err, context.Canceled) {
			return err
		}
		return evidence.Wrap(evidence.CodeDecodeFailure, err, "parquet %s", what)
	}
	return nil
}

func keyValueKeys(md *format.FileMetaData) []string {
	var keys []string
	for _, kv := range md.KeyValueMetadata {
		if utf8.ValidString(kv.Key) {
			keys = append(keys, kv.Key)
		}
	}
	sort.Strings(keys)
	return keys
}

func nullable(s string) any {
	if s == "" || !utf8.ValidString(s) {
		return nil
	}
	return s
}
