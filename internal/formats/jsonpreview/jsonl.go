package jsonpreview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/preview"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

var jsonlOptions = []param.Param{
	preview.Option(preview.MaxRows, "records emitted; later ones in the read region are parsed and counted"),
	preview.Option(preview.MaxBytes, "bytes read from the start (a line in progress at the bound is finished when it fits max_record_bytes)"),
	preview.Option(preview.MaxRecordBytes, "bytes one line may hold before parsing; a longer line is reported oversized and skipped to its end"),
	preview.Option(preview.MaxFields, "distinct record keys tracked in preview.fields"),
}

// JSONL is the generic JSON Lines preview. Like JSON, it never claims a
// file by content: specific line formats (pytest events, observations)
// must win.
var JSONL = preview.Spec(formats.Spec{
	Name:     "jsonl",
	Title:    "JSON Lines (preview)",
	Suffixes: []string{".jsonl", ".ndjson"},
	Sniff:    sniffJSON,
	Limits:   []formats.Limit{limitDepth},
	Producer: "any JSON Lines writer",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeJSONL),
	Options:  jsonlOptions,
})

func decodeJSONL(ctx context.Context, in *formats.Input, out formats.Sink) error {
	opts := in
	maxBytes, maxRecord := opts.Int(preview.MaxBytes), opts.Int(preview.MaxRecordBytes)
	maxDepth := int(in.Limit(limitDepth.Name))
	lr := lines.NewReader(in.R, int(maxRecord))
	var base int64
	if p, err := lr.Peek(3); err != nil {
		return readFailure(err, 0)
	} else if bytes.Equal(p, formats.BOM) {
		_ = lr.Discard(len(formats.BOM))
		base = int64(len(formats.BOM))
	}
	res := preview.NewResult(in, out)
	fields := newFieldStats(opts.Int(preview.MaxFields), res.WantFields)
	region := &preview.Region{Total: in.Artifact.Size, Bound: maxBytes}
	var line, blank, read int64
	eof := false
	var fail *evidence.Failure
	for {
		if line&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		start := lr.Offset()
		read = start
		if start >= maxBytes {
			p, err := lr.Peek(1)
			eof = len(p) == 0 && err == nil
			break
		}
		// A line in progress at max_bytes is finished when it fits
		// max_record_bytes; one longer than that is read no further than
		// it takes to know it is oversized.
		l, err := lr.NextWithin(max(maxBytes, start+maxRecord+1))
		if errors.Is(err, io.EOF) {
			eof = true
			break
		}
		if err != nil {
			fail = readFailure(err, lr.Offset())
			fail.Location.Line = int(line + 1)
			region.Stop = "stopped by a read error"
			break
		}
		n := l.Size // native bytes of the record: a CRLF's '\r' counts, as JSON whitespace
		if l.Term == lines.CRLF {
			n++
		}
		cut := l.Term == lines.Bound
		if cut && n <= maxRecord {
			break // a line cut by the read bound is not a record we observed
		}
		line = l.Number
		read = lr.Offset()
		if !cut && len(bytes.TrimSpace(l.Bytes)) == 0 {
			blank++
			continue
		}
		rec := table.Record{Index: res.Observed, Line: table.Some(line), Offset: table.Some(start), Bytes: table.Some(n), Status: table.StatusOK}
		switch {
		case cut:
			rec.Status, rec.Bytes = table.StatusOversized, table.Null[int64]{}
			rec.Error = table.NonEmpty(fmt.Sprintf("line is longer than max_record_bytes=%d and continues past the read bound", maxRecord))
		case n > maxRecord:
			rec.Status = table.StatusOversized
			rec.Error = table.NonEmpty(fmt.Sprintf("line is %d bytes, more than max_record_bytes=%d", n, maxRecord))
		default:
			parseRecord(l.Bytes, maxDepth, fields, &rec, res.Keep())
		}
		keep := res.Keep()
		res.Count(rec.Status)
		if keep {
			res.Records = append(res.Records, rec)
		}
		if cut {
			break
		}
	}
	region.Read = read
	region.EndReached = eof && fail == nil
	res.Region = region
	res.Metrics = map[string]evidence.Metric{"blank_lines": {Value: blank, Unit: "lines"}}
	res.Coverage = evidence.Object{"lines_read": line}
	if base > 0 {
		res.Limitations = append(res.Limitations, "a UTF-8 byte order mark precedes the first line; it was skipped")
	}
	if res.ByStatus[table.StatusInvalid] > 0 {
		res.Limitations = append(res.Limitations, "lines that are not one JSON value are reported as invalid records with their line numbers")
	}
	fields.result(res)
	if err := res.Write(out, evidence.Derived); err != nil {
		return err
	}
	if fail != nil {
		return fail
	}
	return nil
}

// parseRecord parses one line into rec: its value (built only when the
// record is kept), or why it is invalid. Only valid records feed the field
// statistics, in key order.
func parseRecord(data []byte, maxDepth int, fields *fieldStats, rec *table.Record, keep bool) {
	s := jsonscan.NewBytes(data)
	s.MaxDepth = maxDepth
	b := &builder{s: s}
	members := fields.pending[:0]
	v, err := func() (any, error) {
		tok, err := s.Next()
		if err != nil {
			return nil, err
		}
		if tok.Kind != jsonscan.ObjectStart {
			if !keep {
				return nil, s.Skip(tok)
			}
			return b.build(tok)
		}
		var obj evidence.Object
		if keep {
			obj = evidence.Object{}
		}
		for {
			t, err := s.Next()
			if err != nil {
				return nil, err
			}
			if t.Kind == jsonscan.ObjectEnd {
				return obj, nil
			}
			key := fields.intern(t.Bytes)
			vt, err := s.Next()
			if err != nil {
				return nil, err
			}
			members = append(members, member{key, typeOf(vt.Kind)})
			if !keep {
				if err := s.Skip(vt); err != nil {
					return nil, err
				}
				continue
			}
			if obj[key], err = b.build(vt); err != nil {
				return nil, err
			}
		}
	}()
	fields.pending = members
	if err == nil {
		err = s.CheckEnd()
	}
	if err != nil {
		rec.Status = table.StatusInvalid
		rec.Error = table.NonEmpty(lineError(err))
		return
	}
	rec.Value = v
	for _, m := range members {
		fields.add(m.key, m.typ)
	}
}

// lineError words a scanner error relative to its line.
func lineError(err error) string {
	var se *jsonscan.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("not a JSON value: %s at byte %d of the line", se.Msg, se.Offset)
	}
	return "not a JSON value: " + err.Error()
}
