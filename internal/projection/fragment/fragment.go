// Package fragment is the text-fragment projection behind
// preview_text_fragment: an exact byte window (offset, length) or line
// window (start_line, lines) of decoded text lines, clipped to the window,
// with the window recorded and anything it could not show stated. It
// reads text.lines rows as typed rows and writes text.fragment_lines.
//
// It imports evidence, formats (capabilities), formats/text (escaping and
// the decoded window), param, projection and table.
package fragment

import (
	"fmt"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/text"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Name is the projection's name.
const Name = "text-fragment"

// Defaults of a window whose size is not given.
const (
	DefaultLength = 4096
	DefaultLines  = 50
)

// Spec is the text-fragment projection.
var Spec = &projection.Spec{
	Name:   Name,
	Tables: []*table.Schema{table.TextLines.Schema},
	Params: []param.Param{
		{Name: "offset", Type: param.Int, Min: param.F(0), Doc: "byte window: first byte (default 0)"},
		{Name: "length", Type: param.Int, Min: param.F(1), Max: param.F(16 << 20), Doc: fmt.Sprintf("byte window: bytes from offset (default %d)", DefaultLength)},
		{Name: "start_line", Type: param.Int, Min: param.F(1), Doc: "line window: first line, 1-based (default 1)"},
		{Name: "lines", Type: param.Int, Min: param.F(1), Max: param.F(100000), Doc: fmt.Sprintf("line window: lines from start_line (default %d)", DefaultLines)},
		{Name: "bytes", Type: param.Int, Default: int64(64 << 10), Min: param.F(1), Max: param.F(16 << 20),
			Doc: "text bytes shown; rows past the bound are omitted and counted"},
	},
	New: New,
}

// Window is a requested fragment.
type Window struct {
	Bytes         bool // a byte window; else a line window
	Offset, End   int64
	Line, EndLine int64 // [Line, EndLine)
}

// WindowFrom reads the window from validated arguments: a byte window when
// offset or length is given, else a line window. Giving both kinds is an
// INVALID_ARGUMENT failure.
func WindowFrom(args evidence.Object, given map[string]bool) (Window, error) {
	byteWin := given["offset"] || given["length"]
	if byteWin && (given["start_line"] || given["lines"]) {
		return Window{}, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  "give a byte window (offset, length) or a line window (start_line, lines), not both",
			Location: evidence.Location{Field: "start_line"}}
	}
	get := func(name string, def int64) int64 {
		if n, ok := evidence.AsInt(args[name]); ok && given[name] {
			return n
		}
		return def
	}
	if byteWin {
		o := get("offset", 0)
		return Window{Bytes: true, Offset: o, End: o + get("length", DefaultLength)}, nil
	}
	l := get("start_line", 1)
	return Window{Line: l, EndLine: l + get("lines", DefaultLines)}, nil
}

func (w Window) value() evidence.Object {
	if w.Bytes {
		return evidence.Object{"kind": "bytes", "offset": w.Offset, "length": w.End - w.Offset}
	}
	return evidence.Object{"kind": "lines", "start_line": w.Line, "lines": w.EndLine - w.Line}
}

// New starts a fragment projection.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	win, err := WindowFrom(args, given)
	if err != nil {
		return nil, err
	}
	budget, _ := evidence.AsInt(args["bytes"])
	return &projector{Each: projection.Each[stream, *table.TextLine]{Name: Name, Result: table.TextFragmentLines.Schema}, args: args, win: win, budget: budget}, nil
}

type projector struct {
	// The admitted tables, each with its kept rows; Summary is theirs.
	projection.Each[stream, *table.TextLine]

	args   evidence.Object
	win    Window
	budget int64
}

// row is a text line with the native bytes it shows.
type row struct {
	table.TextLine
	shown []byte
}

// stream is what the projection keeps of one table.
type stream struct {
	selected int64
	shown    int64
	cut      bool  // the bytes bound stopped keeping rows
	partial  int64 // rows in the window shown in part (max_line_bytes)
	// Line window: lines of the window seen whole, and the highest line seen.
	whole    int64
	lastLine int64
	firstCol int64 // column of the first row of the window's first line
	firstOK  bool
	maxEnd   int64 // end offset (terminator included) of the last row seen
}

func (p *projector) Table(t *evidence.Table, _ formats.Caps) error {
	if t.Name != table.TextLines.Name {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("the text-fragment projection reads %s tables, not %s (decode the artifact with --artifact-format text)", table.TextLines.Name, t.Name)}
	}
	return p.Add(t, stream{})
}

// termLen is the native length of a row's terminator.
func termLen(t table.Null[string]) int64 {
	switch t.V {
	case table.LF:
		return 1
	case table.CRLF:
		return 2
	}
	return 0
}

func (p *projector) Row(t *evidence.Table, v any) error {
	x, err := p.Of(t, "row")
	if err != nil {
		return err
	}
	s := &x.State
	l, err := table.TextLines.Scan(v)
	if err != nil {
		return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s", t.ID)
	}
	shown, err := text.Shown(l)
	if err != nil {
		return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s", t.ID)
	}
	r := &row{TextLine: *l, shown: shown}
	s.maxEnd = max(s.maxEnd, r.Offset+r.Bytes+termLen(r.Terminator))
	var out *row
	if p.win.Bytes {
		out = clip(r, p.win)
	} else if r.Line >= p.win.Line && r.Line < p.win.EndLine {
		out = r
		if r.Line == p.win.Line {
			s.firstCol, s.firstOK = r.Column, true
		}
		if r.Column == 0 && r.Terminator.Valid {
			s.whole++
		}
	}
	s.lastLine = max(s.lastLine, r.Line)
	if out == nil {
		return nil
	}
	s.selected++
	if int64(len(out.shown)) < out.Bytes {
		s.partial++
	}
	if s.cut || s.shown+int64(len(out.shown)) > p.budget {
		s.cut = true
		return nil
	}
	text.Show(&out.TextLine, out.shown)
	x.Kept = append(x.Kept, &out.TextLine)
	s.shown += int64(len(out.shown))
	return nil
}

// clip returns the part of a row inside a byte window, or nil. The row's
// shown bytes are cut to the window exactly, even inside a character (the
// result is then escaped, never widened) or inside a CRLF: a window that
// ends after the '\r' shows it as text, with no terminator, and one that
// starts after it holds the "\n" alone, as an lf row, which is how the
// text decoder reports a window cut there.
func clip(r *row, w Window) *row {
	contentEnd := r.Offset + r.Bytes
	termEnd := contentEnd + termLen(r.Terminator)
	crlf := r.Terminator.V == table.CRLF
	if crlf && w.Offset == contentEnd+1 {
		return &row{TextLine: table.TextLine{Line: r.Line, Offset: w.Offset, Column: r.Column + (w.Offset - r.Offset), Terminator: table.Some(table.LF)}}
	}
	start, end := max(w.Offset, r.Offset), min(w.End, contentEnd)
	term := r.Terminator.Valid && termEnd > contentEnd && w.Offset <= contentEnd && termEnd <= w.End
	cr := crlf && w.Offset <= contentEnd && w.End == contentEnd+1 // the '\r' without its '\n'
	if start >= end && !term && !cr {
		return nil
	}
	out := &row{TextLine: table.TextLine{Line: r.Line, Offset: start, Column: r.Column + (start - r.Offset), Bytes: max(0, end-start)}}
	shownEnd := r.Offset + int64(len(r.shown))
	if s, e := start-r.Offset, min(end, shownEnd)-r.Offset; e > s {
		out.shown = r.shown[s:e]
	}
	switch {
	case term:
		out.Terminator = r.Terminator
	case cr:
		out.Bytes++
		if shownEnd == contentEnd { // not cut by max_line_bytes: the '\r' is shown too
			out.shown = append(out.shown[:len(out.shown):len(out.shown)], '\r')
		}
	}
	return out
}

func (p *projector) Finish(w projection.Emitter) error { return p.Each.Finish(w, p.args, p.summary) }

// summary records the exact window, what was shown of it, and whether the
// decoded lines covered it.
func (p *projector) summary(x *projection.One[stream, *table.TextLine]) *evidence.Summary {
	s, kept, src := &x.State, x.Kept, x.Summary
	sum := &evidence.Summary{RowsObserved: s.selected, RowsEmitted: int64(len(kept)), Complete: true,
		Coverage: evidence.Object{"window": p.win.value()}}
	if len(kept) > 0 {
		first, last := kept[0], kept[len(kept)-1]
		sum.Coverage["shown"] = evidence.Object{"first_line": first.Line, "last_line": last.Line,
			"first_offset": first.Offset, "end_offset": last.Offset + last.Bytes + termLen(last.Terminator)}
	}
	if s.selected > int64(len(kept)) {
		sum.Truncation = &evidence.Truncation{Reason: evidence.ReasonByteLimit, Limit: p.budget, Omitted: s.selected - int64(len(kept))}
		sum.Complete = false
	}
	if s.partial > 0 {
		sum.Complete = false
		sum.Limit(fmt.Sprintf("%d lines of the window are longer than the decoder's max_line_bytes and are shown in part (text_bytes < bytes); decode with a larger --option max_line_bytes", s.partial))
	}
	if src == nil {
		sum.Complete = false
		sum.Limit("the decoder's table ended without a summary (its decode failed); the window may be covered in part")
		return sum
	}
	sum.Coverage["decoded"] = src.Coverage
	dw, ok := text.WindowFrom(src.Coverage)
	allEmitted := src.RowsEmitted == src.RowsObserved
	if !ok {
		sum.Complete = false
		sum.Limit("the decoded table does not record its window, so coverage of the fragment cannot be established")
		return sum
	}
	if note, covered := p.covered(s, dw, allEmitted); note != "" {
		sum.Limit(note)
		if !covered {
			sum.Complete = false
		}
	}
	for _, l := range src.Limitations {
		if s.partial > 0 || len(kept) > 0 {
			sum.Limit("decoder: " + l)
		}
	}
	return sum
}

// covered tells whether the decoded lines cover the window. The note says
// how they fall short, with the decoder options that would cover it, or
// that the artifact itself ends inside the window.
func (p *projector) covered(s *stream, dw text.Window, allEmitted bool) (string, bool) {
	if p.win.Bytes {
		if dw.Offset > p.win.Offset {
			return fmt.Sprintf("the decoded window starts at byte %d, after the fragment's start %d; decode with --option offset=%d --option max_bytes=%d", dw.Offset, p.win.Offset, p.win.Offset, p.win.End-p.win.Offset), false
		}
		if s.maxEnd >= p.win.End {
			return "", true
		}
		if dw.EndReached && allEmitted {
			return fmt.Sprintf("the artifact ends at byte %d, inside the window; the fragment is shorter than requested", dw.Total), true
		}
		return fmt.Sprintf("the decoded lines end at byte %d, before the fragment's end %d; decode with --option offset=%d --option max_bytes=%d", s.maxEnd, p.win.End, p.win.Offset, p.win.End-p.win.Offset), false
	}
	n := p.win.EndLine - p.win.Line
	if dw.Line > p.win.Line || (s.firstOK && s.firstCol > 0) {
		return fmt.Sprintf("the decoded window starts at line %d, column %d, after the start of line %d; decode with --option start_line=%d --option max_lines=%d", dw.Line, dw.Column, p.win.Line, p.win.Line, n), false
	}
	if s.whole == n {
		return "", true
	}
	if dw.EndReached && allEmitted && s.lastLine < p.win.EndLine && s.whole == max(0, s.lastLine-p.win.Line+1) {
		if s.lastLine < p.win.Line {
			return fmt.Sprintf("the artifact has %d lines; the window starts after its end", s.lastLine), true
		}
		return fmt.Sprintf("the artifact ends at line %d, inside the window; the fragment is shorter than requested", s.lastLine), true
	}
	return fmt.Sprintf("the decoded lines do not reach the end of line %d; decode with --option start_line=%d --option max_lines=%d", p.win.EndLine-1, p.win.Line, n), false
}
