// Package jsonpreview previews JSON documents and JSONL streams: a bounded
// structural outline, the fields of their records and the first records,
// read with internal/jsonscan (JSONL lines with internal/lines) so that a
// multi-gigabyte file is never loaded.
//
// It imports evidence, formats, formats/preview, jsonscan, lines, param
// and table.
package jsonpreview

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/preview"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Version is the decoders' version, part of table headers and cache keys.
const Version = "1"

// Raw parser ceilings. Crossing one is LIMIT_EXCEEDED, never a silent cut.
var (
	limitDepth = formats.Limit{Name: "max_depth", Default: 512, Unit: "levels",
		Doc: "deepest nesting the JSON scanner accepts"}
	limitToken = formats.Limit{Name: formats.LimitToken, Default: 16 << 20, Unit: "bytes",
		Doc: "longest single string or number token the JSON scanner buffers"}
)

var jsonOptions = []param.Param{
	preview.Option(preview.MaxRows, "records emitted from the records array; later ones in the read region are counted"),
	preview.Option(preview.MaxBytes, "bytes read from the start; content after the bound is reported unobserved"),
	preview.Option(preview.MaxRecordBytes, "native size of one record beyond which it is reported oversized, without its value"),
	preview.Option(preview.MaxFields, "distinct record keys tracked in preview.fields"),
	{Name: "records", Type: param.String, Default: "",
		Doc: "RFC 6901 pointer of the array whose elements are the records; empty: the document if it is an array, else its first array-valued member"},
	{Name: "outline_depth", Type: param.Int, Default: int64(2), Min: param.F(0), Max: param.F(64),
		Doc: "deepest level described in preview.outline (arrays are described through their first element)"},
	{Name: "max_outline_nodes", Type: param.Int, Default: int64(200), Min: param.F(1), Max: param.F(100000),
		Doc: "nodes emitted in preview.outline"},
}

// JSON is the generic JSON document preview. Its sniffer never says Yes:
// specific JSON formats (speedscope, SARIF, coverage JSON...) must win,
// and a JSON file reaches this decoder by its suffix or --format json.
var JSON = preview.Spec(formats.Spec{
	Name:     "json",
	Title:    "JSON document (preview)",
	Suffixes: []string{".json"},
	Sniff:    sniffJSON,
	Tables:   []*table.Schema{table.PreviewOutline.Schema},
	Limits:   []formats.Limit{limitDepth, limitToken},
	Producer: "any JSON writer",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeJSON),
	Options:  jsonOptions,
})

// sniffJSON answers No when the prefix cannot start a JSON value, else
// NeedMore: a generic preview must not claim a file by content.
func sniffJSON(prefix []byte) formats.Verdict {
	for _, c := range bytes.TrimPrefix(prefix, formats.BOM) {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[', '"', '-', 't', 'f', 'n', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return formats.NeedMore
		}
		return formats.No
	}
	return formats.NeedMore
}

func readFailure(err error, offset int64) *evidence.Failure {
	f := evidence.Wrap(evidence.CodeIOFailure, err, "read")
	f.Location.Offset = offset
	return f
}

// scanFailure types a scanner error: a parser ceiling is the spec's
// LIMIT_EXCEEDED, a reader error IO_FAILURE, the rest DECODE_FAILURE. base
// shifts the offset past a skipped BOM.
func scanFailure(in *formats.Input, err error, base int64) *evidence.Failure {
	var f *evidence.Failure
	if errors.As(err, &f) {
		return f
	}
	var se *jsonscan.Error
	errors.As(err, &se)
	switch {
	case errors.Is(err, jsonscan.ErrDepth):
		f = in.Exceeded(limitDepth.Name, nil)
	case errors.Is(err, jsonscan.ErrTokenTooLong):
		f = in.Exceeded(limitToken.Name, nil)
	case errors.Is(err, jsonscan.ErrRead):
		f = evidence.Wrap(evidence.CodeIOFailure, err, "")
	default:
		f = evidence.Wrap(evidence.CodeDecodeFailure, err, "")
	}
	f.Err = err
	if se != nil {
		f.Location.Line, f.Location.Offset = se.Line, se.Offset+base
	}
	return f
}

// errStop ends a walk at the max_bytes bound.
var errStop = errors.New("max_bytes reached")

// node is one row of preview.outline while its container is read.
type node struct {
	table.OutlineNode
	members int64
	elems   [len(typeNames)]int64
}

const maxOutlineKeys = 32

// row completes the node's row: containers carry their member count and
// keys or element types; a scalar is complete and has neither.
func (n *node) row() *table.OutlineNode {
	switch n.Type {
	case "object":
		n.Members = table.Some(n.members)
		if n.Keys == nil {
			n.Keys = []string{}
		}
	case "array":
		n.Members = table.Some(n.members)
		et := evidence.Object{}
		for i, c := range n.elems {
			if c > 0 {
				et[typeNames[i]] = c
			}
		}
		n.ElementTypes = et
	default:
		n.Complete = true
	}
	return &n.OutlineNode
}

// walker streams one JSON document: it outlines the shallow structure,
// finds the records array and reads its elements as records.
type walker struct {
	ctx       context.Context
	s         *jsonscan.Scanner
	base      int64 // bytes before the scanner's first byte (a BOM)
	maxBytes  int64
	maxRecord int64
	maxDepth  int // outline_depth
	maxNodes  int64
	target    string // records pointer; "" with auto
	auto      bool
	found     bool
	foundPtr  string
	foundType string // the type found at an explicit target, when not an array
	nodes     []*node
	nodesSeen int64
	res       *preview.Result
	fields    *fieldStats
	tokens    int
}

func (w *walker) offset() int64 { return w.s.Offset() + w.base }

// next reads a token, checking cancellation now and then.
func (w *walker) next() (jsonscan.Token, error) {
	w.tokens++
	if w.tokens&4095 == 0 && w.ctx.Err() != nil {
		return jsonscan.Token{}, w.ctx.Err()
	}
	return w.s.Next()
}

func (w *walker) budget() error {
	if w.offset() >= w.maxBytes {
		return errStop
	}
	return nil
}

// step reads the next token within the byte bound.
func (w *walker) step() (jsonscan.Token, error) {
	if err := w.budget(); err != nil {
		return jsonscan.Token{}, err
	}
	return w.next()
}

func escapePointer(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// isRecords decides whether the container starting at ptr holds the
// records, noting the type found at an explicit target that is no array.
func (w *walker) isRecords(tok jsonscan.Token, ptr string, depth int) bool {
	if !w.isRecordsCandidate(tok, ptr, depth) {
		return false
	}
	if tok.Kind != jsonscan.ArrayStart {
		w.foundType = typeNames[typeOf(tok.Kind)]
		return false
	}
	return true
}

// toward reports whether an explicit records pointer lies below ptr.
func (w *walker) toward(ptr string) bool {
	return !w.auto && !w.found && strings.HasPrefix(w.target, ptr+"/")
}

// walk reads the value starting at tok. outline says whether the value
// is described in preview.outline.
func (w *walker) walk(tok jsonscan.Token, ptr string, depth int, outline bool) error {
	var n *node
	if outline {
		w.nodesSeen++
		if int64(len(w.nodes)) < w.maxNodes {
			n = &node{OutlineNode: table.OutlineNode{Pointer: ptr, Depth: int64(depth), Type: typeNames[typeOf(tok.Kind)]}}
			w.nodes = append(w.nodes, n)
		}
	}
	records := w.isRecords(tok, ptr, depth)
	switch tok.Kind {
	case jsonscan.ObjectStart:
		for {
			t, err := w.step()
			if err != nil {
				return err
			}
			if t.Kind == jsonscan.ObjectEnd {
				break
			}
			key := string(t.Bytes)
			if n != nil {
				n.members++
				if len(n.Keys) < maxOutlineKeys {
					n.Keys = append(n.Keys, key)
				}
			}
			vt, err := w.next()
			if err != nil {
				return err
			}
			if err := w.child(vt, ptr+"/"+escapePointer(key), depth+1, outline && depth+1 <= w.maxDepth); err != nil {
				return err
			}
		}
	case jsonscan.ArrayStart:
		if records {
			w.found = true
			w.foundPtr = ptr
			if n != nil {
				n.Records = true
			}
			return w.records(n)
		}
		for i := 0; ; i++ {
			t, err := w.step()
			if err != nil {
				return err
			}
			if t.Kind == jsonscan.ArrayEnd {
				break
			}
			if err := w.child(t, ptr+"/"+strconv.Itoa(i), depth+1, outline && depth+1 <= w.maxDepth && i == 0); err != nil {
				return err
			}
			if n != nil {
				n.members++
				n.elems[typeOf(t.Kind)]++
			}
		}
	}
	if n != nil {
		n.Complete = true
	}
	return nil
}

// child reads a member or element: walked when it is outlined or may hold
// the records, else skipped.
func (w *walker) child(tok jsonscan.Token, ptr string, depth int, outline bool) error {
	if outline || w.toward(ptr) || w.isRecordsCandidate(tok, ptr, depth) {
		return w.walk(tok, ptr, depth, outline)
	}
	return w.skip(tok)
}

// isRecordsCandidate is isRecords without its side effect, for deciding
// whether to descend into a member or element that is not outlined.
func (w *walker) isRecordsCandidate(tok jsonscan.Token, ptr string, depth int) bool {
	if w.found {
		return false
	}
	if !w.auto {
		return ptr == w.target
	}
	return tok.Kind == jsonscan.ArrayStart && depth <= 1
}

// skip consumes the rest of a value, stopping at the byte bound.
func (w *walker) skip(tok jsonscan.Token) error {
	if tok.Kind != jsonscan.ObjectStart && tok.Kind != jsonscan.ArrayStart {
		return nil
	}
	return w.skipTo(w.s.Depth() - 1)
}

// records reads the elements of the records array.
func (w *walker) records(n *node) error {
	for i := int64(0); ; i++ {
		t, err := w.step()
		if err != nil {
			return err
		}
		if t.Kind == jsonscan.ArrayEnd {
			if n != nil {
				n.Complete = true
			}
			return nil
		}
		start := t.Offset + w.base
		rec := table.Record{Index: i, Line: table.Some(int64(w.s.Line())), Offset: table.Some(start), Status: table.StatusOK}
		keep := w.res.Keep()
		if err := w.record(t, keep, &rec); err != nil {
			return err
		}
		rec.Bytes = table.Some(w.offset() - start)
		w.res.Count(rec.Status)
		if keep {
			w.res.Records = append(w.res.Records, rec)
		}
		if n != nil {
			n.members++
			n.elems[typeOf(t.Kind)]++
		}
	}
}

// record reads one element. Object keys feed the field statistics; the
// value is built only for kept records and only up to max_record_bytes.
func (w *walker) record(tok jsonscan.Token, keep bool, rec *table.Record) error {
	b := &builder{s: w.s, start: tok.Offset, limit: w.maxRecord}
	if tok.Kind != jsonscan.ObjectStart {
		if !keep {
			return w.skip(tok)
		}
		if w.s.Offset()-b.start > b.limit { // one long scalar
			w.oversized(rec)
			return nil
		}
		outer := w.s.Depth()
		if tok.Kind == jsonscan.ArrayStart {
			outer--
		}
		v, err := b.build(tok)
		if errors.Is(err, jsonscan.ErrBound) {
			w.oversized(rec)
			return w.skipTo(outer)
		}
		rec.Value = v
		return err
	}
	depth := w.s.Depth() // inside the record object
	obj := evidence.Object{}
	for {
		if !keep || rec.Status != table.StatusOK {
			if err := w.budget(); err != nil {
				return err
			}
		}
		t, err := w.next()
		if err != nil {
			return err
		}
		if t.Kind == jsonscan.ObjectEnd {
			break
		}
		key := w.fields.intern(t.Bytes)
		vt, err := w.next()
		if err != nil {
			return err
		}
		w.fields.add(key, typeOf(vt.Kind))
		if !keep || rec.Status != table.StatusOK {
			if err := w.skip(vt); err != nil {
				return err
			}
			continue
		}
		if w.s.Offset()-b.start > b.limit {
			w.oversized(rec)
			if err := w.skip(vt); err != nil {
				return err
			}
			continue
		}
		v, err := b.build(vt)
		if errors.Is(err, jsonscan.ErrBound) {
			w.oversized(rec)
			if err := w.skipTo(depth); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		obj[key] = v
	}
	if keep && rec.Status == table.StatusOK {
		rec.Value = obj
	}
	return nil
}

func (w *walker) oversized(rec *table.Record) {
	rec.Status = table.StatusOversized
	rec.Value = nil
	rec.Error = table.NonEmpty(fmt.Sprintf("record is larger than max_record_bytes=%d", w.maxRecord))
}

// skipTo consumes tokens until the scanner is back at depth.
func (w *walker) skipTo(depth int) error {
	for w.s.Depth() > depth {
		if _, err := w.step(); err != nil {
			return err
		}
	}
	return nil
}

// validPointer checks RFC 6901 syntax.
func validPointer(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 >= len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

func decodeJSON(ctx context.Context, in *formats.Input, out formats.Sink) error {
	opts := in
	target := opts.String("records")
	if !validPointer(target) {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("decoder option records: %q is not an RFC 6901 JSON Pointer (e.g. /traceEvents)", target),
			Location: evidence.Location{Field: "records"}}
	}
	br := bufio.NewReaderSize(in.R, 64<<10)
	base, err := formats.SkipBOM(br)
	if err != nil {
		return readFailure(err, 0)
	}
	s := jsonscan.New(br)
	s.MaxDepth = int(in.Limit(limitDepth.Name))
	s.MaxToken = int(in.Limit(limitToken.Name))
	res := preview.NewResult(in, out)
	w := &walker{
		ctx: ctx, s: s, base: base, res: res,
		maxBytes:  opts.Int(preview.MaxBytes),
		maxRecord: opts.Int(preview.MaxRecordBytes),
		maxDepth:  int(opts.Int("outline_depth")),
		maxNodes:  opts.Int("max_outline_nodes"),
		target:    target,
		auto:      target == "",
		fields:    newFieldStats(opts.Int(preview.MaxFields), res.WantFields),
	}
	if !out.Wants(table.PreviewOutline.Schema) {
		w.maxNodes = 0 // walked all the same, to find the records; no row built
	}
	tok, err := s.Next()
	if err != nil {
		return scanFailure(in, err, base)
	}
	err = w.walk(tok, "", 0, true)
	if err == nil {
		err = s.CheckEnd()
	}
	region := &preview.Region{Read: w.offset(), Total: in.Artifact.Size, Bound: w.maxBytes}
	var fail *evidence.Failure
	switch {
	case err == nil:
		region.EndReached = true
	case errors.Is(err, errStop):
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		fail = scanFailure(in, err, base)
		region.Stop = "stopped by " + fail.Message
	}
	if !w.auto && !w.found {
		switch {
		case w.foundType != "":
			return &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  fmt.Sprintf("decoder option records: %q names a %s, not an array", target, w.foundType),
				Location: evidence.Location{Field: "records"}}
		case region.EndReached:
			return &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  fmt.Sprintf("decoder option records: %q is not in this document", target),
				Location: evidence.Location{Field: "records"}}
		}
	}
	res.Region = region
	res.Coverage = evidence.Object{"records_pointer": nil}
	if w.found {
		res.Coverage["records_pointer"] = w.foundPtr
	} else if region.EndReached {
		res.Limitations = append(res.Limitations, "the document has no array at its top level or among its top-level members, so it has no records; name one with the records option")
	} else {
		res.Incomplete = append(res.Incomplete, "no records array was reached within the bytes read")
	}
	if base > 0 {
		res.Limitations = append(res.Limitations, "a UTF-8 byte order mark precedes the JSON text; it was skipped")
	}
	w.fields.result(res)
	if err := w.writeOutline(out, region); err != nil {
		return err
	}
	if err := res.Write(out, evidence.Derived); err != nil {
		return err
	}
	if fail != nil {
		return fail
	}
	return nil
}

func (w *walker) writeOutline(out formats.Sink, region *preview.Region) error {
	tw, err := out.Begin(table.PreviewOutline.Header(""))
	if err != nil {
		return err
	}
	for _, n := range w.nodes {
		if err := tw.Row(n.row()); err != nil {
			return err
		}
	}
	s := &evidence.Summary{RowsObserved: w.nodesSeen, Complete: region.EndReached, Coverage: region.Coverage()}
	s.Coverage["outline_depth"] = w.maxDepth
	if omitted := w.nodesSeen - int64(len(w.nodes)); omitted > 0 {
		s.Complete = false
		s.Truncation = &evidence.Truncation{Reason: "node_limit", Limit: w.maxNodes, Omitted: omitted}
	}
	s.Limit(fmt.Sprintf("the outline descends %d levels and into the first element of each array only", w.maxDepth))
	if !region.EndReached {
		s.Limit(fmt.Sprintf("reading stopped at byte %d of %d; containers still open there have complete=false and members counts only what was read", region.Read, region.Total))
	}
	return tw.End(s)
}
