// Package preview holds what the generic preview decoders (JSON, JSONL, CSV,
// Parquet) share: the tables they emit, their option model and the honest
// accounting of a bounded read.
//
// A preview never claims more than it read. Every decoder reads a bounded
// region of the artifact, counts the records it saw there, emits the first
// few, and says in its summary how far it read, what it left out, and that
// content past the region was not observed.
package preview

import "github.com/flameox/flameox/internal/evidence"

// Table names (row schemas).
const (
	Outline = "preview.outline" // containers and members of a JSON document
	Fields  = "preview.fields"  // record fields: CSV header, Parquet columns, JSON keys
	Records = "preview.records" // the first records, each with its native location
)

// Record statuses.
const (
	StatusOK        = "ok"        // the record parsed; value holds it
	StatusInvalid   = "invalid"   // the record is not valid in its format; error says why
	StatusOversized = "oversized" // the record is larger than max_record_bytes; value is null
	StatusRagged    = "ragged"    // a CSV row whose field count differs from the header's
)

// OutlineColumns are the columns of preview.outline.
func OutlineColumns() []evidence.Column {
	return []evidence.Column{
		{Name: "pointer", Type: evidence.TypeString, Description: "RFC 6901 JSON Pointer of the node (\"\" is the document)"},
		{Name: "depth", Type: evidence.TypeInt, Description: "nesting depth; 0 is the document"},
		{Name: "type", Type: evidence.TypeString, Description: "object, array, string, number, boolean or null"},
		{Name: "members", Type: evidence.TypeInt, Unit: "count", Description: "object members or array elements counted; null for scalars"},
		{Name: "complete", Type: evidence.TypeBool, Description: "the container's end was read, so members is its exact size"},
		{Name: "keys", Type: evidence.TypeJSON, Description: "the first keys of an object, in document order; null otherwise"},
		{Name: "element_types", Type: evidence.TypeJSON, Description: "counts of counted array elements by type; null otherwise"},
		{Name: "records", Type: evidence.TypeBool, Description: "this array's elements are the rows of preview.records"},
	}
}

// FieldColumns are the columns of preview.fields.
func FieldColumns() []evidence.Column {
	return []evidence.Column{
		{Name: "position", Type: evidence.TypeInt, Description: "0-based column index (CSV, Parquet) or order of first appearance (JSON keys)"},
		{Name: "name", Type: evidence.TypeString, Description: "header text, key, or Parquet column path joined with '.'"},
		{Name: "path", Type: evidence.TypeJSON, Description: "the exact path segments; disambiguates names that contain '.'"},
		{Name: "type", Type: evidence.TypeString, Description: "JSON types observed (joined with '|'), Parquet physical type, or string for CSV"},
		{Name: "logical_type", Type: evidence.TypeString, Description: "Parquet logical or converted type; null otherwise"},
		{Name: "repetition", Type: evidence.TypeString, Description: "Parquet repetition (required, optional, repeated); null otherwise"},
		{Name: "observed", Type: evidence.TypeInt, Unit: "count", Description: "records in which the field was present"},
		{Name: "nulls", Type: evidence.TypeInt, Unit: "count", Description: "null values observed; null where the format has no null (CSV)"},
	}
}

// RecordColumns are the columns of preview.records.
func RecordColumns() []evidence.Column {
	return []evidence.Column{
		{Name: "index", Type: evidence.TypeInt, Description: "0-based record index (CSV rows exclude the header)"},
		{Name: "line", Type: evidence.TypeInt, Description: "1-based line where the record starts; null for Parquet"},
		{Name: "offset", Type: evidence.TypeInt, Unit: "bytes", Description: "byte offset of the record's first byte; null for Parquet"},
		{Name: "bytes", Type: evidence.TypeInt, Unit: "bytes", Description: "native size of the record; null when not observed whole or not byte-addressed"},
		{Name: "status", Type: evidence.TypeString, Description: "ok, invalid, oversized or ragged"},
		{Name: "value", Type: evidence.TypeJSON, Description: "the record: a JSON value, an array of CSV fields, or a Parquet row object; null unless ok or ragged"},
		{Name: "error", Type: evidence.TypeString, Description: "why the record is not ok; null when ok"},
	}
}

// Field is one row of preview.fields.
type Field struct {
	Position    int64
	Name        string
	Path        []string
	Type        string
	LogicalType string
	Repetition  string
	Observed    int64
	Nulls       int64
	NullsKnown  bool // false where the format has no null
}

func (f *Field) values() evidence.Object {
	var nulls any
	if f.NullsKnown {
		nulls = f.Nulls
	}
	path := make([]any, len(f.Path))
	for i, p := range f.Path {
		path[i] = p
	}
	return evidence.Object{
		"position":     f.Position,
		"name":         f.Name,
		"path":         path,
		"type":         f.Type,
		"logical_type": nullable(f.LogicalType),
		"repetition":   nullable(f.Repetition),
		"observed":     f.Observed,
		"nulls":        nulls,
	}
}

// Record is one row of preview.records. Line, Offset and Bytes are -1 when
// unknown.
type Record struct {
	Index  int64
	Line   int64
	Offset int64
	Bytes  int64
	Status string
	Value  any
	Error  string
}

func (r *Record) values() evidence.Object {
	return evidence.Object{
		"index":  r.Index,
		"line":   known(r.Line),
		"offset": known(r.Offset),
		"bytes":  known(r.Bytes),
		"status": r.Status,
		"value":  r.Value,
		"error":  nullable(r.Error),
	}
}

func known(n int64) any {
	if n < 0 {
		return nil
	}
	return n
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
