// Package preview holds what the generic preview decoders (JSON, JSONL, CSV,
// Parquet) share: the tables they emit, their option model and the honest
// accounting of a bounded read.
//
// A preview never claims more than it read. Every decoder reads a bounded
// region of the artifact, counts the records it saw there, emits the first
// few, and says in its summary how far it read, what it left out, and that
// content past the region was not observed.
package preview

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// Table names (row schemas), declared in package table.
var (
	Outline = table.PreviewOutline.Name
	Fields  = table.PreviewFields.Name
	Records = table.PreviewRecords.Name
)

// Record statuses.
const (
	StatusOK        = table.StatusOK
	StatusInvalid   = table.StatusInvalid
	StatusOversized = table.StatusOversized
	StatusRagged    = table.StatusRagged
)

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
