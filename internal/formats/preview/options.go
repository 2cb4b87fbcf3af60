package preview

import (
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Tables are the tables Result.Write emits, in that order.
var Tables = []*table.Schema{table.PreviewFields.Schema, table.PreviewRecords.Schema}

// Spec completes the spec of a record preview: it is listed under
// FamilyPreviews and emits the tables s names, then Tables.
func Spec(s formats.Spec) *formats.Spec {
	s.Family = formats.FamilyPreviews
	s.Tables = append(s.Tables, Tables...)
	return &s
}

// The bounds that record previews take as options.
const (
	MaxRows        = "max_rows"         // records a Result keeps
	MaxBytes       = "max_bytes"        // bytes read from the start: a Region's Bound
	MaxRecordBytes = "max_record_bytes" // size past which a record is oversized
	MaxFields      = "max_fields"       // distinct fields tracked
)

// bounds declare each bound once: one type, default and range in every
// preview.
var bounds = map[string]param.Param{
	MaxRows:        {Name: MaxRows, Type: param.Int, Default: int64(100), Min: param.F(0), Max: param.F(100000)},
	MaxBytes:       {Name: MaxBytes, Type: param.Int, Default: int64(8 << 20), Min: param.F(1), Max: param.F(1 << 40)},
	MaxRecordBytes: {Name: MaxRecordBytes, Type: param.Int, Default: int64(64 << 10), Min: param.F(16), Max: param.F(64 << 20)},
	MaxFields:      {Name: MaxFields, Type: param.Int, Default: int64(256), Min: param.F(1), Max: param.F(100000)},
}

// Option is the declaration of the named bound, with doc saying how the
// format applies it.
func Option(name, doc string) param.Param {
	p := bounds[name]
	p.Doc = doc
	return p
}
