// Package text decodes a bounded window of a text artifact into lines:
// the lines of a byte window (offset, max_bytes) or of a line window
// (start_line, max_lines), each with its exact native location. It reads
// any bytes: invalid UTF-8 is shown escaped with a flag, never replaced.
package text

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Lines is the row schema of the decoder's table, one row per line (or
// the part of a line inside the window).
var Lines = table.TextLines.Name

// Version is the decoder's version.
const Version = "1"

// Terminators.
const (
	LF   = table.LF
	CRLF = table.CRLF
	EOF  = table.EOF
)

var options = []param.Param{
	{Name: "offset", Type: param.Int, Default: int64(0), Min: param.F(0), Max: param.F(1 << 50),
		Doc: "byte offset where the window starts (line numbers are still counted from the start)"},
	{Name: "start_line", Type: param.Int, Default: int64(1), Min: param.F(1), Max: param.F(1 << 50),
		Doc: "1-based line where the window starts; not with offset"},
	{Name: "max_lines", Type: param.Int, Default: int64(1000), Min: param.F(0), Max: param.F(1000000),
		Doc: "lines emitted; later lines inside the byte window are counted"},
	{Name: "max_bytes", Type: param.Int, Default: int64(1 << 20), Min: param.F(1), Max: param.F(1 << 40),
		Doc: "bytes of the window, from its start"},
	{Name: "max_line_bytes", Type: param.Int, Default: int64(4096), Min: param.F(1), Max: param.F(16 << 20),
		Doc: "bytes of one line shown in text; the rest is counted in bytes"},
}

// Spec is the text format. Its sniffer never says Yes (almost anything is
// text); it says No for a prefix with NUL bytes, which text never has.
var Spec = &formats.Spec{
	Name:     "text",
	Title:    "Text (lines)",
	Family:   "Generic previews",
	Suffixes: []string{".txt", ".log", ".md", ".out", ".err"},
	Sniff:    sniff,
	Tables:   []*table.Schema{table.TextLines.Schema},
	Producer: "any program writing text (console output, logs)",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
	Options:  options,
}

func sniff(prefix []byte) formats.Verdict {
	if bytes.IndexByte(prefix, 0) >= 0 {
		return formats.No
	}
	return formats.NeedMore
}

// Window is where a decode started and how far it read.
type Window struct {
	Offset     int64 // first byte
	Line       int64 // line of that byte
	Column     int64 // its byte column in that line
	Read       int64 // bytes observed from Offset
	Total      int64 // artifact size
	EndReached bool
}

// Coverage renders the window for a summary.
func (w Window) Coverage() evidence.Object {
	return evidence.Object{"window_offset": w.Offset, "window_line": w.Line, "window_column": w.Column,
		"bytes_read": w.Read, "bytes_total": w.Total, "end_reached": w.EndReached}
}

// WindowFrom reads a window back from a text.lines summary's coverage.
func WindowFrom(c evidence.Object) (Window, bool) {
	var w Window
	var ok [5]bool
	w.Offset, ok[0] = evidence.AsInt(c["window_offset"])
	w.Line, ok[1] = evidence.AsInt(c["window_line"])
	w.Column, ok[2] = evidence.AsInt(c["window_column"])
	w.Read, ok[3] = evidence.AsInt(c["bytes_read"])
	w.Total, ok[4] = evidence.AsInt(c["bytes_total"])
	w.EndReached, _ = c["end_reached"].(bool)
	return w, ok == [5]bool{true, true, true, true, true}
}

// Row is one row of text.lines.
type Row struct {
	Line       int64
	Offset     int64
	Column     int64
	Bytes      int64
	Shown      []byte // native bytes shown; Text escapes them
	Terminator string
}

// Values renders the row.
func (r *Row) Values() evidence.Object {
	txt, esc := Escape(r.Shown)
	var term any
	if r.Terminator != "" {
		term = r.Terminator
	}
	return evidence.Object{"line": r.Line, "offset": r.Offset, "column": r.Column, "bytes": r.Bytes,
		"text": txt, "text_bytes": int64(len(r.Shown)), "escaped": esc, "terminator": term}
}

// RowFrom reads a row back from its values.
func RowFrom(v evidence.Object) (*Row, error) {
	r := &Row{}
	var ok [5]bool
	r.Line, ok[0] = evidence.AsInt(v["line"])
	r.Offset, ok[1] = evidence.AsInt(v["offset"])
	r.Column, ok[2] = evidence.AsInt(v["column"])
	r.Bytes, ok[3] = evidence.AsInt(v["bytes"])
	txt, isStr := v["text"].(string)
	esc, isBool := v["escaped"].(bool)
	ok[4] = isStr && isBool
	if ok != [5]bool{true, true, true, true, true} {
		return nil, fmt.Errorf("text.lines row lacks a typed line, offset, column, bytes, text or escaped")
	}
	shown, err := Unescape(txt, esc)
	if err != nil {
		return nil, err
	}
	if n, _ := evidence.AsInt(v["text_bytes"]); n != int64(len(shown)) {
		return nil, fmt.Errorf("text.lines row: text holds %d bytes, text_bytes says %d", len(shown), n)
	}
	r.Shown = shown
	r.Terminator, _ = v["terminator"].(string)
	return r, nil
}

// cut returns the part of a line shown within max bytes, ending at a
// rune boundary when the cut would split a valid character.
func cut(b []byte, max int64) []byte {
	if int64(len(b)) <= max {
		return b
	}
	k := int(max)
	for back := 0; back < utf8.UTFMax-1 && k > 0 && !utf8.RuneStart(b[k]); back++ {
		k--
	}
	if k == 0 || !utf8.RuneStart(b[k]) {
		k = int(max) // not a split character: invalid bytes, cut exactly
	}
	return b[:k]
}

// reader tracks the stream position and line of a buffered reader.
type reader struct {
	br        *bufio.Reader
	pos       int64
	line      int64
	lineStart int64
}

// skipTo consumes bytes up to offset, counting lines.
func (r *reader) skipTo(offset int64) error {
	for r.pos < offset {
		n := int(min(offset-r.pos, int64(r.br.Size())))
		b, err := r.br.Peek(n)
		r.count(b)
		_, _ = r.br.Discard(len(b))
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return nil
}

// skipLines consumes whole lines until line is reached.
func (r *reader) skipLines(line int64) error {
	for r.line < line {
		frag, err := r.br.ReadSlice('\n')
		r.count(frag)
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return nil
}

func (r *reader) count(b []byte) {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		r.line += int64(bytes.Count(b, []byte{'\n'}))
		r.lineStart = r.pos + int64(i) + 1
	}
	r.pos += int64(len(b))
}

func (r *reader) atEOF() bool {
	_, err := r.br.Peek(1)
	return errors.Is(err, io.EOF)
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	opts := in
	if opts.Given("offset") && opts.Given("start_line") {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: "decoder options offset and start_line both set a window start; give one", Location: evidence.Location{Field: "start_line"}}
	}
	maxLines, maxBytes, maxLine := opts.Int("max_lines"), opts.Int("max_bytes"), opts.Int("max_line_bytes")
	r := &reader{br: bufio.NewReaderSize(in.R, 64<<10), line: 1}
	if err := r.skipTo(opts.Int("offset")); err != nil {
		return readFailure(err, r)
	}
	if err := r.skipLines(opts.Int("start_line")); err != nil {
		return readFailure(err, r)
	}
	win := Window{Offset: r.pos, Line: r.line, Column: r.pos - r.lineStart, Total: in.Artifact.Size}
	tw, err := out.Begin(&evidence.Table{Name: Lines, Columns: table.TextLines.EvidenceColumns("")})
	if err != nil {
		return err
	}
	end := win.Offset + maxBytes
	var observed, escapedLines, cutLines int64
	keep := make([]byte, 0, min(maxLine+utf8.UTFMax, 64<<10))
	var fail *evidence.Failure
	clipped := false
	for {
		if observed&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if r.pos >= end {
			// Bytes clipped off the last line were read but not observed.
			win.EndReached = !clipped && r.atEOF()
			break
		}
		row := Row{Line: r.line, Offset: r.pos, Column: r.pos - r.lineStart}
		keep = keep[:0]
		var last byte
		eof := false
		for {
			frag, err := r.br.ReadSlice('\n')
			clipped = int64(len(frag)) > end-r.pos
			if clipped {
				frag = frag[:end-r.pos] // the window ends inside this line
			}
			r.pos += int64(len(frag))
			nl := len(frag) > 0 && frag[len(frag)-1] == '\n'
			if nl {
				frag = frag[:len(frag)-1]
			}
			row.Bytes += int64(len(frag))
			if len(frag) > 0 {
				last = frag[len(frag)-1]
			}
			if room := maxLine + utf8.UTFMax - int64(len(keep)); room > 0 {
				keep = append(keep, frag[:min(int64(len(frag)), room)]...)
			}
			switch {
			case nl:
				row.Terminator = LF
				if last == '\r' {
					row.Terminator = CRLF
					row.Bytes--
				}
				r.line++
				r.lineStart = r.pos
			case clipped:
			case errors.Is(err, io.EOF):
				eof = true
				if row.Bytes > 0 {
					row.Terminator = EOF
				}
			case err != nil && !errors.Is(err, bufio.ErrBufferFull):
				fail = readFailure(err, r)
			case r.pos < end:
				continue // a long line: read its next fragment
			}
			break
		}
		if fail != nil {
			break
		}
		if row.Bytes == 0 && row.Terminator == "" {
			win.EndReached = eof
			break // nothing left: the input ended after a newline
		}
		observed++
		row.Shown = cut(keep[:min(int64(len(keep)), row.Bytes)], maxLine)
		if int64(len(row.Shown)) < row.Bytes {
			cutLines++
		}
		if !utf8.Valid(row.Shown) {
			escapedLines++
		}
		if observed <= maxLines {
			if err := tw.Row(row.Values()); err != nil {
				return err
			}
		}
		if eof {
			win.EndReached = true
			break
		}
	}
	win.Read = r.pos - win.Offset
	s := &evidence.Summary{RowsObserved: observed, Complete: true, Coverage: win.Coverage(),
		Metrics: map[string]evidence.Metric{
			"escaped_lines": {Value: escapedLines, Unit: "lines"},
			"cut_lines":     {Value: cutLines, Unit: "lines"},
		}}
	s.Coverage["max_line_bytes"] = maxLine
	switch {
	case observed > maxLines:
		s.Truncation = &evidence.Truncation{Reason: "row_limit", Limit: maxLines, Omitted: observed - maxLines}
	case !win.EndReached:
		s.Truncation = &evidence.Truncation{Reason: "byte_limit", Limit: maxBytes, Omitted: win.Total - win.Offset - win.Read}
	}
	if s.Truncation != nil {
		s.Complete = false
	}
	if win.Offset > 0 {
		s.Limit(fmt.Sprintf("the window starts at byte %d (line %d, column %d); earlier content was only scanned for line numbers", win.Offset, win.Line, win.Column))
	}
	if !win.EndReached {
		s.Complete = false
		s.Limit(fmt.Sprintf("the window ends at byte %d of %d; later content was not observed", win.Offset+win.Read, win.Total))
	}
	if fail != nil {
		s.Limit("reading stopped at a read error: " + fail.Message)
	}
	if cutLines > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d lines are longer than max_line_bytes=%d; text shows their first text_bytes only", cutLines, maxLine))
	}
	if escapedLines > 0 {
		s.Limit(fmt.Sprintf("%d lines are not valid UTF-8; their text is escaped (\\xHH for invalid bytes, \\\\ for backslash) and marked escaped=true", escapedLines))
	}
	if err := tw.End(s); err != nil {
		return err
	}
	if fail != nil {
		return fail
	}
	return nil
}

func readFailure(err error, r *reader) *evidence.Failure {
	f := evidence.Wrap(evidence.CodeIOFailure, err, "read text")
	f.Location.Offset = r.pos
	f.Location.Line = int(r.line)
	return f
}
