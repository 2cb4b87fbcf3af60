// Package preview is the projection behind preview_artifact: it passes a
// preview decoder's tables (JSON outline, fields, records; text lines)
// through a selection — records by status, record values by field name —
// and then bounds each table by rows and by canonical bytes. Selection
// comes first, so the counts describe the selected population. Rows are
// read as the typed rows of package table; the result tables keep the
// schemas of the tables they select from.
//
// It imports evidence, formats (capabilities), param, projection and table.
package preview

import (
	"fmt"
	"slices"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Name is the projection's name.
const Name = "preview"

// Selections of the status parameter.
const (
	All      = "all"
	Problems = "problems"
)

// Spec is the preview projection.
var Spec = &projection.Spec{
	Name:   Name,
	Tables: []*table.Schema{table.PreviewOutline.Schema, table.PreviewFields.Schema, table.PreviewRecords.Schema, table.TextLines.Schema},
	Params: []param.Param{
		{Name: "rows", Type: param.Int, Default: int64(20), Min: param.F(1), Max: param.F(10000),
			Doc: "rows shown per table (records, text lines, fields, outline nodes)"},
		{Name: "bytes", Type: param.Int, Default: int64(64 << 10), Min: param.F(256), Max: param.F(16 << 20),
			Doc: "canonical JSON bytes of the rows shown per table; the first row past the bound ends the table"},
		{Name: "status", Type: param.Enum, Enum: []string{All, Problems}, Default: All,
			Doc: "problems keeps only records that are not ok (invalid, oversized, ragged) and text lines that are escaped or cut"},
		{Name: "fields", Type: param.StringList,
			Doc: "keep only these fields: in record values (object keys, or CSV columns by header name) and in preview.fields"},
	},
	New: New,
}

// New starts a preview projection with validated arguments.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &projector{Each: projection.Each[stream, any]{Name: Name}, args: args, positions: map[string][]int{}}
	p.rows, _ = evidence.AsInt(args["rows"])
	p.bytes, _ = evidence.AsInt(args["bytes"])
	p.status, _ = args["status"].(string)
	if fs, ok := args["fields"].([]string); ok && given["fields"] {
		if len(fs) == 0 {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: "argument fields: name at least one field, or omit it", Location: evidence.Location{Field: "fields"}}
		}
		p.fields = fs
	}
	return p, nil
}

type projector struct {
	// The admitted tables, each with its kept rows (copies, of its
	// schema); Summary is theirs.
	projection.Each[stream, any]

	args   evidence.Object
	rows   int64
	bytes  int64
	status string
	fields []string
	// positions maps an artifact to the value positions the fields
	// selection keeps, learnt from its preview.fields table (which
	// precedes records) when the format's field positions index its
	// record values (a CSV header).
	positions map[string][]int
	seen      map[string]bool // selected field names found in a fields table
	buf       []byte
}

// stream is what the projection keeps of one table on its way through.
type stream struct {
	schema   *table.Schema
	caps     formats.Caps
	artifact string
	selected int64
	size     int64
	cut      string // the bound that first stopped keeping rows
	filtered bool   // selection dropped some rows
}

func (p *projector) Table(t *evidence.Table, caps formats.Caps) error {
	if !Spec.Consumes(t.Name) {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("the preview projection reads preview and text tables, not %s", t.Name)}
	}
	return p.Add(t, stream{schema: table.Lookup(t.Name), caps: caps, artifact: artifactOf(t)})
}

func artifactOf(t *evidence.Table) string {
	if len(t.ArtifactIDs) > 0 {
		return t.ArtifactIDs[0]
	}
	return ""
}

func (p *projector) Row(t *evidence.Table, row any) error {
	x, err := p.Of(t, "row")
	if err != nil {
		return err
	}
	s := &x.State
	kept, err := p.selectRow(s, row)
	if err != nil {
		return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s row", t.ID)
	}
	if kept == nil {
		s.filtered = true
		return nil
	}
	s.selected++
	if s.cut != "" {
		return nil
	}
	p.buf, err = s.schema.AppendValues(p.buf[:0], kept, s.artifact)
	if err != nil {
		return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s row", t.ID)
	}
	switch {
	case int64(len(x.Kept)) >= p.rows:
		s.cut = evidence.ReasonRowLimit
	case s.size+int64(len(p.buf)) > p.bytes:
		s.cut = evidence.ReasonByteLimit
	default:
		x.Kept = append(x.Kept, kept)
		s.size += int64(len(p.buf))
	}
	return nil
}

// selectRow applies the status and fields selections to a row of the
// stream's table: it returns a copy of the typed row to keep (its value
// cut to the selected fields), or nil when the selection drops it.
func (p *projector) selectRow(s *stream, row any) (any, error) {
	switch s.schema {
	case table.PreviewRecords.Schema:
		r, err := table.PreviewRecords.Scan(row)
		if err != nil {
			return nil, err
		}
		if p.status == Problems && r.Status == table.StatusOK {
			return nil, nil
		}
		c := *r
		if p.fields != nil {
			c.Value = p.project(s.artifact, r.Value)
		}
		return &c, nil
	case table.PreviewFields.Schema:
		f, err := table.PreviewFields.Scan(row)
		if err != nil {
			return nil, err
		}
		if p.fields != nil {
			if !slices.Contains(p.fields, f.Name) {
				return nil, nil
			}
			if p.seen == nil {
				p.seen = map[string]bool{}
			}
			p.seen[f.Name] = true
			if s.caps.FieldPositions {
				p.positions[s.artifact] = append(p.positions[s.artifact], int(f.Position))
			}
		}
		c := *f
		return &c, nil
	case table.TextLines.Schema:
		l, err := table.TextLines.Scan(row)
		if err != nil {
			return nil, err
		}
		if p.status == Problems && !l.Escaped && l.TextBytes == l.Bytes {
			return nil, nil
		}
		c := *l
		return &c, nil
	}
	o, err := table.PreviewOutline.Scan(row)
	if err != nil {
		return nil, err
	}
	c := *o
	return &c, nil
}

// project keeps the selected fields of a record value: object keys by
// name, arrays (CSV rows) by the positions of those names.
func (p *projector) project(artifact string, v any) any {
	switch x := v.(type) {
	case evidence.Object:
		out := evidence.Object{}
		for _, f := range p.fields {
			if fv, ok := x[f]; ok {
				out[f] = fv
			}
		}
		return out
	case []any:
		pos := p.positions[artifact]
		out := make([]any, 0, len(pos))
		for _, i := range pos {
			if i < len(x) {
				out = append(out, x[i])
			}
		}
		return out
	}
	return v
}

func (p *projector) Finish(w projection.Emitter) error { return p.Each.Finish(w, p.args, p.summary) }

// summary states what the selection and the bounds left, on top of what
// the decoder already left.
func (p *projector) summary(x *projection.One[stream, any]) *evidence.Summary {
	s := &x.State
	sum := &evidence.Summary{RowsObserved: s.selected, RowsEmitted: int64(len(x.Kept)), Complete: true,
		Coverage: evidence.Object{}, Metrics: map[string]evidence.Metric{}}
	src := x.Summary
	if src == nil {
		sum.Complete = false
		sum.Limit("the decoder's table ended without a summary (its decode failed); rows shown are the ones it emitted")
		src = &evidence.Summary{}
	} else {
		for k, v := range src.Coverage {
			sum.Coverage[k] = v
		}
		for k, m := range src.Metrics {
			sum.Metrics[k] = m
		}
		for _, l := range src.Limitations {
			sum.Limit(l)
		}
		if !src.Complete {
			sum.Complete = false
		}
	}
	decoderOmitted := src.RowsObserved - src.RowsEmitted
	if decoderOmitted > 0 {
		if s.filtered || p.status == Problems || (p.fields != nil && s.schema == table.PreviewFields.Schema) {
			sum.Limit(fmt.Sprintf("the decoder emitted %d of the %d rows it observed; the selection saw only those, so rows_observed is a lower bound (decode with a larger max_rows)", src.RowsEmitted, src.RowsObserved))
		} else {
			sum.RowsObserved += decoderOmitted
		}
	}
	if omitted := sum.RowsObserved - sum.RowsEmitted; omitted > 0 {
		sum.Complete = false
		switch {
		case s.cut == evidence.ReasonRowLimit:
			sum.Truncation = &evidence.Truncation{Reason: evidence.ReasonRowLimit, Limit: p.rows, Omitted: omitted}
		case s.cut == evidence.ReasonByteLimit:
			sum.Truncation = &evidence.Truncation{Reason: evidence.ReasonByteLimit, Limit: p.bytes, Omitted: omitted}
		case src.Truncation != nil:
			sum.Truncation = &evidence.Truncation{Reason: src.Truncation.Reason, Limit: src.Truncation.Limit, Omitted: omitted}
		default:
			sum.Truncation = &evidence.Truncation{Reason: evidence.ReasonDecoderLimit, Limit: src.RowsEmitted, Omitted: omitted}
		}
	} else if src.Truncation != nil && src.Truncation.Reason == evidence.ReasonByteLimit {
		sum.Truncation = src.Truncation // the decoder stopped reading early
	}
	records := s.schema == table.PreviewRecords.Schema
	if p.status == Problems && (records || s.schema == table.TextLines.Schema) {
		sum.Limit("selection: only records that are not ok, and text lines that are escaped or cut")
	}
	if p.fields != nil && (records || s.schema == table.PreviewFields.Schema) {
		sum.Limit(fmt.Sprintf("selection: fields %v only", p.fields))
		var missing []string
		for _, f := range p.fields {
			if !p.seen[f] {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 && records {
			sum.Limit(fmt.Sprintf("fields %v were not among the fields observed", missing))
		}
	}
	if sum.Truncation != nil {
		sum.Complete = false
	}
	return sum
}
