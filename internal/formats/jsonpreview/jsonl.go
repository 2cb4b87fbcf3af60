package jsonpreview

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/preview"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

var jsonlOptions = []param.Param{
	{Name: "max_rows", Type: param.Int, Default: int64(100), Min: param.F(0), Max: param.F(100000),
		Doc: "records emitted; later ones in the read region are parsed and counted"},
	{Name: "max_bytes", Type: param.Int, Default: int64(8 << 20), Min: param.F(1), Max: param.F(1 << 40),
		Doc: "bytes read from the start (a line in progress at the bound is finished when it fits max_record_bytes)"},
	{Name: "max_record_bytes", Type: param.Int, Default: int64(64 << 10), Min: param.F(16), Max: param.F(64 << 20),
		Doc: "bytes one line may hold before parsing; a longer line is reported oversized and skipped to its end"},
	{Name: "max_fields", Type: param.Int, Default: int64(256), Min: param.F(1), Max: param.F(100000),
		Doc: "distinct record keys tracked in preview.fields"},
}

// JSONL is the generic JSON Lines preview. Like JSON, it never claims a
// file by content: specific line formats (pytest events, observations)
// must win.
var JSONL = &formats.Spec{
	Name:     "jsonl",
	Title:    "JSON Lines (preview)",
	Family:   "Generic previews",
	Suffixes: []string{".jsonl", ".ndjson"},
	Sniff:    sniffJSON,
	Tables:   []*table.Schema{table.PreviewFields.Schema, table.PreviewRecords.Schema},
	Limits:   []formats.Limit{limitDepth},
	Producer: "any JSON Lines writer",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeJSONL),
	Options:  jsonlOptions,
}

// lineReader reads lines with a bound on what it keeps of each.
type lineReader struct {
	br  *bufio.Reader
	off int64 // stream offset of the next unread byte
	buf []byte
	eof bool
}

// next reads one line, keeping at most keep bytes of it (terminator
// excluded). It stops inside the line once the offset reaches stop. n
// counts the line's bytes read; ended says its newline or the end of input
// was reached. At the end of input with nothing left, n is 0 and eof set.
func (lr *lineReader) next(keep int64, stop int64) (kept []byte, n int64, ended bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		frag, err := lr.br.ReadSlice('\n')
		lr.off += int64(len(frag))
		nl := len(frag) > 0 && frag[len(frag)-1] == '\n'
		if nl {
			frag = frag[:len(frag)-1]
		}
		n += int64(len(frag))
		if room := keep + 1 - int64(len(lr.buf)); room > 0 {
			lr.buf = append(lr.buf, frag[:min(int64(len(frag)), room)]...)
		}
		switch {
		case nl:
			return lr.buf, n, true, nil
		case errors.Is(err, io.EOF):
			lr.eof = true
			return lr.buf, n, n > 0, nil
		case err != nil && !errors.Is(err, bufio.ErrBufferFull):
			return nil, n, false, err
		case lr.off >= stop:
			return lr.buf, n, false, nil
		}
	}
}

func decodeJSONL(ctx context.Context, in *formats.Input, out formats.Sink) error {
	opts := in
	maxBytes, maxRecord := opts.Int("max_bytes"), opts.Int("max_record_bytes")
	maxDepth := int(preview.LimitOf(in, limitDepth))
	br := bufio.NewReaderSize(in.R, 64<<10)
	base, err := skipBOM(br)
	if err != nil {
		return err
	}
	lr := &lineReader{br: br, off: base}
	res := &preview.Result{MaxRows: opts.Int("max_rows")}
	fields := newFieldStats(opts.Int("max_fields"))
	region := &preview.Region{Total: in.Artifact.Size, Bound: maxBytes}
	var line, blank int64
	var fail *evidence.Failure
	for {
		if line&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if lr.off >= maxBytes {
			if _, err := br.Peek(1); errors.Is(err, io.EOF) {
				lr.eof = true
			}
			break
		}
		start := lr.off
		data, n, ended, err := lr.next(maxRecord, max(maxBytes, start+maxRecord+1))
		if err != nil {
			fail = readFailure(err, lr.off)
			fail.Location.Line = int(line + 1)
			region.Stop = "stopped by a read error"
			break
		}
		if n == 0 && lr.eof {
			break
		}
		if !ended && n <= maxRecord {
			// A line cut by the read bound is not a record we observed.
			lr.off = start
			break
		}
		line++
		if ended && len(bytes.TrimSpace(data)) == 0 {
			blank++
			continue
		}
		rec := preview.Record{Index: res.Observed, Line: line, Offset: start, Bytes: n, Status: preview.StatusOK}
		switch {
		case !ended:
			rec.Status, rec.Bytes = preview.StatusOversized, -1
			rec.Error = fmt.Sprintf("line is longer than max_record_bytes=%d and continues past the read bound", maxRecord)
		case n > maxRecord:
			rec.Status = preview.StatusOversized
			rec.Error = fmt.Sprintf("line is %d bytes, more than max_record_bytes=%d", n, maxRecord)
		default:
			parseRecord(data, maxDepth, fields, &rec, res.Keep())
		}
		keep := res.Keep()
		res.Count(rec.Status)
		if keep {
			res.Records = append(res.Records, rec)
		}
		if !ended {
			break
		}
	}
	region.Read = lr.off
	region.EndReached = lr.eof && fail == nil
	res.Region = region
	res.Metrics = map[string]evidence.Metric{"blank_lines": {Value: blank, Unit: "lines"}}
	res.Coverage = evidence.Object{"lines_read": line}
	if base > 0 {
		res.Limitations = append(res.Limitations, "a UTF-8 byte order mark precedes the first line; it was skipped")
	}
	if res.ByStatus[preview.StatusInvalid] > 0 {
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
func parseRecord(data []byte, maxDepth int, fields *fieldStats, rec *preview.Record, keep bool) {
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
		rec.Status = preview.StatusInvalid
		rec.Error = lineError(err)
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
