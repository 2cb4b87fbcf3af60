package table

// Record statuses of preview.records.
const (
	StatusOK        = "ok"        // the record parsed; value holds it
	StatusInvalid   = "invalid"   // the record is not valid in its format; error says why
	StatusOversized = "oversized" // the record is larger than max_record_bytes; value is null
	StatusRagged    = "ragged"    // a CSV row whose field count differs from the header's
)

// OutlineNode is a row of preview.outline: a container or member of a
// JSON document.
type OutlineNode struct {
	Pointer      string         `col:"pointer" doc:"RFC 6901 JSON Pointer of the node (\"\" is the document)"`
	Depth        int64          `col:"depth" doc:"nesting depth; 0 is the document"`
	Type         string         `col:"type" doc:"object, array, string, number, boolean or null"`
	Members      Null[int64]    `col:"members,unit=count" doc:"object members or array elements counted; null for scalars"`
	Complete     bool           `col:"complete" doc:"the container's end was read, so members is its exact size"`
	Keys         []string       `col:"keys" doc:"the first keys of an object, in document order; null otherwise"`
	ElementTypes map[string]any `col:"element_types" doc:"counts of counted array elements by type; null otherwise"`
	Records      bool           `col:"records" doc:"this array's elements are the rows of preview.records"`
}

// PreviewOutline is the preview.outline schema.
var PreviewOutline = Define[OutlineNode]("preview.outline", "containers and members of a JSON document, as far as read")

// Field is a row of preview.fields: a CSV header cell, a Parquet column or
// a JSON key of the records.
type Field struct {
	Position    int64        `col:"position" doc:"0-based column index (CSV, Parquet) or order of first appearance (JSON keys)"`
	Name        string       `col:"name" doc:"header text, key, or Parquet column path joined with '.'"`
	Path        []string     `col:"path" doc:"the exact path segments; disambiguates names that contain '.'"`
	Type        string       `col:"type" doc:"JSON types observed (joined with '|'), Parquet physical type, or string for CSV"`
	LogicalType Null[string] `col:"logical_type" doc:"Parquet logical or converted type; null otherwise"`
	Repetition  Null[string] `col:"repetition" doc:"Parquet repetition (required, optional, repeated); null otherwise"`
	Observed    int64        `col:"observed,unit=count" doc:"records in which the field was present"`
	Nulls       Null[int64]  `col:"nulls,unit=count" doc:"null values observed; null where the format has no null (CSV)"`
}

// PreviewFields is the preview.fields schema.
var PreviewFields = Define[Field]("preview.fields", "record fields: CSV header, Parquet columns, JSON keys")

// Record is a row of preview.records: one of the first records, with its
// native location.
type Record struct {
	Index  int64        `col:"index" doc:"0-based record index (CSV rows exclude the header)"`
	Line   Null[int64]  `col:"line,base=1" doc:"1-based line where the record starts; null for Parquet"`
	Offset Null[int64]  `col:"offset,unit=bytes" doc:"byte offset of the record's first byte; null for Parquet"`
	Bytes  Null[int64]  `col:"bytes,unit=bytes" doc:"native size of the record; null when not observed whole or not byte-addressed"`
	Status string       `col:"status" doc:"ok, invalid, oversized or ragged"`
	Value  any          `col:"value" doc:"the record: a JSON value, an array of CSV fields, or a Parquet row object; null unless ok or ragged"`
	Error  Null[string] `col:"error" doc:"why the record is not ok; null when ok"`
}

// PreviewRecords is the preview.records schema.
var PreviewRecords = Define[Record]("preview.records", "the first records of a data artifact, each with its native location")

// Line terminators of text.lines rows.
const (
	LF   = "lf"   // the line ended with \n
	CRLF = "crlf" // the line ended with \r\n
	EOF  = "eof"  // the last line, without a newline
)

// TextLine is a row of text.lines: one line, or the part of it inside a
// window.
type TextLine struct {
	Line       int64        `col:"line,base=1" doc:"1-based line number"`
	Offset     int64        `col:"offset,unit=bytes" doc:"byte offset of the row's first byte"`
	Column     int64        `col:"column,unit=bytes,base=0" doc:"0-based byte column of that byte in its line (non-zero when the window starts mid-line)"`
	Bytes      int64        `col:"bytes,unit=bytes" doc:"bytes of the line from offset, inside the window, terminator excluded"`
	Text       string       `col:"text" doc:"the first text_bytes of them; escaped when they are not valid UTF-8"`
	TextBytes  int64        `col:"text_bytes,unit=bytes" doc:"native bytes text shows; less than bytes when max_line_bytes cut the line"`
	Escaped    bool         `col:"escaped" doc:"text writes invalid bytes as \\xHH and backslashes as \\\\"`
	Terminator Null[string] `col:"terminator" doc:"lf, crlf, or eof for a last line without newline; null when the window ends inside the line"`
}

// TextLines is the text.lines schema.
var TextLines = Define[TextLine]("text.lines", "lines of a text artifact inside a bounded window")
