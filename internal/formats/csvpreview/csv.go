// Package csvpreview previews CSV (and TSV) artifacts with encoding/csv:
// the header as preview.fields and the first rows as preview.records, each
// with its exact line and byte offset. Rows whose field count differs from
// the header's are reported ragged, not padded or dropped.
//
// It imports evidence, formats, formats/preview, param and table.
package csvpreview

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/preview"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Version is the decoder's version.
const Version = "1"

// limitRecord is the parser ceiling on one record: encoding/csv holds a
// whole record in memory, so a longer one is LIMIT_EXCEEDED.
var limitRecord = formats.Limit{Name: "max_parse_record_bytes", Default: 16 << 20, Unit: "bytes",
	Doc: "longest CSV record (quoted newlines included) the parser holds"}

var options = []param.Param{
	preview.Option(preview.MaxRows, "rows emitted; later rows in the read region are parsed and counted"),
	preview.Option(preview.MaxBytes, "bytes read from the start; reading stops at the first record boundary at or past it"),
	preview.Option(preview.MaxRecordBytes, "native size of a row beyond which it is reported oversized, without its value"),
	{Name: "header", Type: param.Bool, Default: true,
		Doc: "the first record names the columns"},
	{Name: "delimiter", Type: param.String, Default: "",
		Doc: "field delimiter, one character or \"tab\"; empty: tab for .tsv files, else comma"},
	{Name: "lazy_quotes", Type: param.Bool, Default: false,
		Doc: "accept a quote inside an unquoted field (encoding/csv LazyQuotes)"},
}

// Spec is the generic CSV preview. Its sniffer never says Yes; a CSV file
// reaches it by suffix or --format csv.
var Spec = preview.Spec(formats.Spec{
	Name:     "csv",
	Title:    "CSV table (preview)",
	Suffixes: []string{".csv", ".tsv"},
	Sniff:    formats.SniffText,
	Limits:   []formats.Limit{limitRecord},
	Caps:     formats.Caps{FieldPositions: true},
	Producer: "any CSV writer",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
	Options:  options,
})

func delimiter(opt, name string) (rune, error) {
	switch {
	case opt == "tab" || opt == "\t":
		return '\t', nil
	case opt == "":
		if strings.HasSuffix(strings.ToLower(name), ".tsv") {
			return '\t', nil
		}
		return ',', nil
	}
	r, n := utf8.DecodeRuneInString(opt)
	if n != len(opt) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n' {
		return 0, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("decoder option delimiter: %q is not one character other than a quote or newline", opt),
			Location: evidence.Location{Field: "delimiter"}}
	}
	return r, nil
}

// errRecordTooLong is returned by the guard when a record outgrows the
// parser ceiling, before encoding/csv can buffer more of it.
var errRecordTooLong = errors.New("record longer than max_parse_record_bytes")

// lineStart is the offset where a line begins and how the line before it
// ended.
type lineStart struct {
	line   int64
	offset int64
	crlf   bool // the previous line ended with \r\n
}

// guard sits under encoding/csv's buffer: it indexes line starts, so each
// record gets its exact offset and size, and it stops a runaway record.
type guard struct {
	r           io.Reader
	pos         int64 // stream offset of the next byte
	line        int64
	starts      []lineStart
	prevCR      bool
	recordStart int64
	ceiling     int64
}

func (g *guard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	b := p[:n]
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			break
		}
		at := i + j
		crlf := at > 0 && b[at-1] == '\r' || at == 0 && g.prevCR
		g.line++
		g.starts = append(g.starts, lineStart{line: g.line, offset: g.pos + int64(at) + 1, crlf: crlf})
		i = at + 1
	}
	if n > 0 {
		g.prevCR = b[n-1] == '\r'
	}
	g.pos += int64(n)
	if err == nil && g.pos-g.recordStart > g.ceiling+readBuffer {
		err = errRecordTooLong
	}
	return n, err
}

// start returns the offset of a line still indexed.
func (g *guard) start(line int64) (lineStart, bool) {
	return g.find(func(s lineStart) bool { return s.line == line })
}

// at finds the line that begins at offset, if one does.
func (g *guard) at(offset int64) (lineStart, bool) {
	return g.find(func(s lineStart) bool { return s.offset == offset })
}

// find returns the first indexed line start that matches. prune keeps the
// record being read at the front of the index, where the lines sought are.
func (g *guard) find(match func(lineStart) bool) (lineStart, bool) {
	if i := slices.IndexFunc(g.starts, match); i >= 0 {
		return g.starts[i], true
	}
	return lineStart{}, false
}

// prune forgets lines before line. It drops from the front and compacts
// only when the dropped part dominates, so a record costs O(1) amortized.
func (g *guard) prune(line int64) {
	i := 0
	for i < len(g.starts) && g.starts[i].line < line {
		i++
	}
	g.starts = g.starts[i:]
	if cap(g.starts) > 4096 && len(g.starts) < cap(g.starts)/4 {
		g.starts = append([]lineStart(nil), g.starts...)
	}
}

const readBuffer = 64 << 10

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	opts := in
	comma, err := delimiter(opts.String("delimiter"), in.Artifact.Name)
	if err != nil {
		return err
	}
	maxBytes, maxRecord := opts.Int(preview.MaxBytes), opts.Int(preview.MaxRecordBytes)
	ceiling := in.Limit(limitRecord.Name)
	g := &guard{r: in.R, line: 1, ceiling: ceiling, starts: []lineStart{{line: 1}}}
	br := bufio.NewReaderSize(g, readBuffer)
	base, err := formats.SkipBOM(br)
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "read csv")
	}
	g.starts[0].offset = base // after a byte order mark

	cr := csv.NewReader(br) // uses br as its buffer
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = opts.Bool("lazy_quotes")
	cr.ReuseRecord = true // values are copied out of kept rows
	useHeader := opts.Bool("header")

	res := preview.NewResult(in, out)
	res.FieldsDeclared = useHeader
	region := &preview.Region{Total: in.Artifact.Size, Bound: maxBytes}
	var header []*table.Field
	var fail *evidence.Failure
	offset := func() int64 { return base + cr.InputOffset() }
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if offset() >= maxBytes {
			region.EndReached = offset() == in.Artifact.Size
			break
		}
		end := offset()
		g.recordStart = end
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			region.EndReached = true
			break
		}
		if err != nil {
			fail = csvFailure(in, err, end)
			var pe *csv.ParseError
			if errors.As(err, &pe) && (header != nil || !useHeader) {
				// The row that does not parse is part of the preview.
				st, _ := g.start(int64(pe.StartLine))
				r := table.Record{Index: res.Observed, Line: table.Some(int64(pe.StartLine)), Offset: table.Some(st.offset),
					Status: table.StatusInvalid, Error: table.NonEmpty(pe.Error())}
				if res.Keep() {
					res.Records = append(res.Records, r)
				}
				res.Count(r.Status)
			}
			region.Stop = "stopped by " + fail.Message
			break
		}
		line, _ := cr.FieldPos(0)
		st, _ := g.start(int64(line))
		size := offset() - st.offset
		if next, ok := g.at(offset()); ok {
			size-- // the newline ending the record
			if next.crlf {
				size--
			}
		}
		g.prune(int64(line))
		if size > ceiling {
			fail = in.Exceeded(limitRecord.Name, size)
			fail.Message = fmt.Sprintf("a CSV record is %d bytes, more than max_parse_record_bytes=%d", size, ceiling)
			fail.Location = evidence.Location{Line: line, Offset: st.offset}
			region.Stop = "stopped by " + fail.Message
			break
		}
		if useHeader && header == nil {
			if header, err = headerFields(rec); err != nil {
				return err
			}
			continue
		}
		for i := len(header); i < len(rec) && !useHeader; i++ {
			header = append(header, &table.Field{Position: int64(i), Path: []string{}, Type: "string"})
		}
		for i := range min(len(rec), len(header)) {
			header[i].Observed++
		}
		r := table.Record{Index: res.Observed, Line: table.Some(int64(line)), Offset: table.Some(st.offset), Bytes: table.Some(size), Status: table.StatusOK}
		keep := res.Keep()
		classify(&r, rec, len(header), useHeader, maxRecord, cr, keep)
		res.Count(r.Status)
		if keep {
			res.Records = append(res.Records, r)
		}
	}
	region.Read = offset()
	res.Region = region
	res.Fields = header
	res.Coverage = evidence.Object{"delimiter": string(comma), "header": useHeader}
	if base > 0 {
		res.Limitations = append(res.Limitations, "a UTF-8 byte order mark precedes the header; it was skipped")
	}
	res.Limitations = append(res.Limitations, "CSV has no types: every value is the field's text; blank lines are skipped as encoding/csv does")
	ev := evidence.Observed
	if !useHeader {
		ev = evidence.Derived
	}
	if err := res.Write(out, ev); err != nil {
		return err
	}
	if fail != nil {
		return fail
	}
	return nil
}

// headerFields turns the header record into declared fields.
func headerFields(rec []string) ([]*table.Field, error) {
	fields := make([]*table.Field, len(rec))
	for i, name := range rec {
		if !utf8.ValidString(name) {
			return nil, &evidence.Failure{Code: evidence.CodeDecodeFailure,
				Message:  fmt.Sprintf("CSV header field %d is not valid UTF-8; preview the file with --artifact-format text", i+1),
				Location: evidence.Location{Line: 1}}
		}
		fields[i] = &table.Field{Position: int64(i), Name: name, Path: []string{name}, Type: "string"}
	}
	return fields, nil
}

// classify sets a row's status, and its value when it is kept.
func classify(r *table.Record, rec []string, width int, useHeader bool, maxRecord int64, cr *csv.Reader, keep bool) {
	for i, f := range rec {
		if !utf8.ValidString(f) {
			line, col := cr.FieldPos(i)
			r.Status = table.StatusInvalid
			r.Error = table.NonEmpty(fmt.Sprintf("field %d (line %d, column %d) is not valid UTF-8", i+1, line, col))
			return
		}
	}
	if r.Bytes.V > maxRecord {
		r.Status = table.StatusOversized
		r.Error = table.NonEmpty(fmt.Sprintf("row is %d bytes, more than max_record_bytes=%d", r.Bytes.V, maxRecord))
		return
	}
	if keep {
		vals := make([]any, len(rec))
		for i, f := range rec {
			vals[i] = f
		}
		r.Value = vals
	}
	if useHeader && len(rec) != width {
		r.Status = table.StatusRagged
		r.Error = table.NonEmpty(fmt.Sprintf("row has %d fields, the header has %d", len(rec), width))
	}
}

// csvFailure types a reader or parser error; offset is where the record
// being read starts.
func csvFailure(in *formats.Input, err error, offset int64) *evidence.Failure {
	var pe *csv.ParseError
	switch {
	case errors.Is(err, errRecordTooLong):
		f := in.Exceeded(limitRecord.Name, nil)
		f.Message = fmt.Sprintf("a CSV record is longer than max_parse_record_bytes=%d", in.Limit(limitRecord.Name))
		f.Location.Offset, f.Err = offset, err
		return f
	case errors.As(err, &pe):
		return &evidence.Failure{Code: evidence.CodeDecodeFailure, Message: pe.Error(),
			Location: evidence.Location{Line: pe.Line, Column: pe.Column}, Err: err}
	}
	f := evidence.Wrap(evidence.CodeIOFailure, err, "read csv")
	f.Location.Offset = offset
	return f
}

// LimitRecord is the record ceiling every decoder reading CSV through
// Reader declares on its spec.
var LimitRecord = limitRecord

// Reader reads CSV records one at a time with their exact line and byte
// offset, under the record ceiling (LimitRecord): the one CSV reader of
// the formats that are CSV (rocprofv3's outputs), so they share the
// preview's guard, locations and typed failures.
type Reader struct {
	in   *formats.Input
	g    *guard
	cr   *csv.Reader
	base int64
}

// NewReader reads src (in.R, or the verified file) as comma-separated
// records under in's limits. A leading UTF-8 byte order mark is skipped.
// Records are reused between calls: copy what is kept.
func NewReader(in *formats.Input, src io.Reader) (*Reader, error) {
	ceiling := in.Limit(limitRecord.Name)
	g := &guard{r: src, line: 1, ceiling: ceiling, starts: []lineStart{{line: 1}}}
	br := bufio.NewReaderSize(g, readBuffer)
	base, err := formats.SkipBOM(br)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read csv")
	}
	g.starts[0].offset = base
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return &Reader{in: in, g: g, cr: cr, base: base}, nil
}

// Read returns the next record, the line it starts on (1-based) and its
// byte offset; io.EOF at the end. Any other error is a typed failure:
// DECODE_FAILURE (malformed CSV), LIMIT_EXCEEDED (a record past the
// ceiling) or IO_FAILURE.
func (r *Reader) Read() (rec []string, line, offset int64, err error) {
	start := r.base + r.cr.InputOffset()
	r.g.recordStart = start
	rec, err = r.cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, 0, 0, io.EOF
	}
	if err != nil {
		return nil, 0, 0, csvFailure(r.in, err, start)
	}
	l, _ := r.cr.FieldPos(0)
	st, _ := r.g.start(int64(l))
	r.g.prune(int64(l))
	end := r.base + r.cr.InputOffset()
	if size := end - st.offset; size > r.g.ceiling+2 {
		f := r.in.Exceeded(limitRecord.Name, size)
		f.Message = fmt.Sprintf("a CSV record is %d bytes, more than max_parse_record_bytes=%d", size, r.g.ceiling)
		f.Location = evidence.Location{Line: l, Offset: st.offset}
		return nil, 0, 0, f
	}
	return rec, int64(l), st.offset, nil
}
