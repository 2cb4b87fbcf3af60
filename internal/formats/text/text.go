// Package text decodes a bounded window of a text artifact into
// text.lines rows: the lines of a byte window (offset, max_bytes) or of a
// line window (start_line, max_lines), each with its exact native location,
// read through internal/lines. It reads any bytes: invalid UTF-8 is shown
// escaped with a flag, never replaced.
//
// It imports evidence, formats, lines, param and table.
package text

import (
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Version is the decoder's version.
const Version = "1"

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
	Family:   formats.FamilyPreviews,
	Suffixes: []string{".txt", ".log", ".md", ".out", ".err"},
	Sniff:    formats.SniffText,
	Tables:   []*table.Schema{table.TextLines.Schema},
	Producer: "any program writing text (console output, logs)",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
	Options:  options,
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

// Show sets the text of a row from the native bytes it shows: as they
// are when they are valid UTF-8, else escaped (Escape).
func Show(r *table.TextLine, shown []byte) {
	r.Text, r.Escaped = Escape(shown)
	r.TextBytes = int64(len(shown))
}

// Shown returns the native bytes a row shows, checking them against its
// text_bytes.
func Shown(r *table.TextLine) ([]byte, error) {
	b, err := Unescape(r.Text, r.Escaped)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != r.TextBytes {
		return nil, fmt.Errorf("text.lines row: text holds %d bytes, text_bytes says %d", len(b), r.TextBytes)
	}
	return b, nil
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

// position is where the next unread byte is: its line and byte column,
// after the last line read (nil: none).
func position(last *lines.Line) (line, column int64) {
	switch {
	case last == nil:
		return 1, 0
	case last.Term == lines.LF || last.Term == lines.CRLF:
		return last.Number + 1, 0
	}
	return last.Number, last.End() - last.Start // inside the line, or at the end of input
}

// skip reads up to the window start, counting lines: to offset, or to
// the start of line start_line. last keeps the last line read.
func skip(lr *lines.Reader, offset, startLine int64, last *lines.Line) (seen bool, err error) {
	for lr.Offset() < offset || lr.Lines() < startLine-1 {
		var l *lines.Line
		if offset > 0 {
			l, err = lr.NextWithin(offset)
		} else {
			l, err = lr.Next()
		}
		if errors.Is(err, io.EOF) {
			return seen, nil
		}
		if err != nil {
			return seen, err
		}
		*last, seen = *l, true
	}
	return seen, nil
}

func terminator(t lines.Terminator) table.Null[string] {
	switch t {
	case lines.LF:
		return table.Some(table.LF)
	case lines.CRLF:
		return table.Some(table.CRLF)
	case lines.None:
		return table.Some(table.EOF)
	}
	return table.Null[string]{} // the window ends inside the line
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	opts := in
	if opts.Given("offset") && opts.Given("start_line") {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: "decoder options offset and start_line both set a window start; give one", Location: evidence.Location{Field: "start_line"}}
	}
	maxLines, maxBytes, maxLine := opts.Int("max_lines"), opts.Int("max_bytes"), opts.Int("max_line_bytes")
	// Keep a few bytes more than shown, so a cut can back up to a
	// character boundary.
	lr := lines.NewReader(in.R, int(maxLine)+utf8.UTFMax)
	var lastLine lines.Line // the last line read, for positions
	var last *lines.Line
	seen, err := skip(lr, opts.Int("offset"), opts.Int("start_line"), &lastLine)
	if seen {
		last = &lastLine
	}
	if err != nil {
		return readFailure(err, lr, last)
	}
	win := Window{Offset: lr.Offset(), Total: in.Artifact.Size}
	win.Line, win.Column = position(last)
	want := out.Wants(table.TextLines.Schema)
	tw, err := out.Begin(table.TextLines.Header(""))
	if err != nil {
		return err
	}
	end := win.Offset + maxBytes
	var observed, escapedLines, cutLines int64
	var fail *evidence.Failure
	clipped := false
	for {
		if observed&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if lr.Offset() >= end {
			// Bytes clipped off the last line were read but not observed.
			p, perr := lr.Peek(1)
			win.EndReached = !clipped && len(p) == 0 && perr == nil
			break
		}
		l, err := lr.NextWithin(end)
		if errors.Is(err, io.EOF) {
			win.EndReached = true
			break // nothing left: the input ended after a newline
		}
		if err != nil {
			fail = readFailure(err, lr, last)
			break
		}
		lastLine, last = *l, &lastLine
		clipped = l.Term == lines.Bound
		observed++
		shown := cut(l.Bytes, maxLine)
		if int64(len(shown)) < l.Size {
			cutLines++
		}
		if !utf8.Valid(shown) {
			escapedLines++
		}
		if want && observed <= maxLines {
			row := &table.TextLine{Line: l.Number, Offset: l.Offset, Column: l.Offset - l.Start, Bytes: l.Size, Terminator: terminator(l.Term)}
			Show(row, shown)
			if err := tw.Row(row); err != nil {
				return err
			}
		}
		if l.Term == lines.None {
			win.EndReached = true
			break
		}
	}
	win.Read = lr.Offset() - win.Offset
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

// readFailure locates a read error at the next unread byte.
func readFailure(err error, lr *lines.Reader, last *lines.Line) *evidence.Failure {
	f := evidence.Wrap(evidence.CodeIOFailure, err, "read text")
	line, _ := position(last)
	f.Location.Offset, f.Location.Line = lr.Offset(), int(line)
	return f
}
