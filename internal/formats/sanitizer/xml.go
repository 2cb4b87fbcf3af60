package sanitizer

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// The XML report (--xml --save FILE) is a boost property tree written as
// <ComputeSanitizerOutput> holding one <record> per finding: <kind> (the
// record type: Precise, Api, Hazard...), <what> (its text and values),
// <who> (threadIdx, blockIdx), <where>, and <deviceStack>/<hostStack> of
// <frame> elements. NVIDIA publishes no schema for it, so the decoder
// reads each record as a bounded tree of elements and maps the names the
// tool is known to write (the guide's example and the element names in
// the compute-sanitizer binary), with the accepted synonyms below; every
// other leaf is kept in details as "path: value", never dropped.

const (
	limitRecordBytes = "max_record_bytes"
	limitRecordNodes = "max_record_elements"
	xmlRoot          = "ComputeSanitizerOutput"
	maxXMLDepth      = 64
	maxSessionLeaves = 64
)

// XMLSpec is the compute-sanitizer XML report.
var XMLSpec = &formats.Spec{
	Name:     "compute-sanitizer-xml",
	Title:    "NVIDIA Compute Sanitizer XML report",
	Family:   formats.FamilyGPU,
	Suffixes: []string{".sanitizer.xml"},
	Sniff:    sniffXML,
	Tables:   []*table.Schema{table.SanitizerFindings.Schema},
	Limits: []formats.Limit{
		{Name: limitRecordBytes, Default: 16 << 20, Unit: "bytes", Doc: "bytes of one <record> element (its text included)"},
		{Name: limitRecordNodes, Default: 1 << 16, Unit: "elements", Doc: "elements of one <record> (frames and their fields included)"},
	},
	Options: []param.Param{
		formats.ValueBytesParam,
		{Name: optTool, Type: param.Enum, Enum: append([]string{""}, Tools...), Default: "",
			Doc: "the --tool the report was made with; empty: implied by each record's kind where it can be"},
	},
	Producer: "NVIDIA compute-sanitizer --xml --save FILE",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeXML),
}

func sniffXML(p []byte) formats.Verdict {
	if formats.SniffText(p) == formats.No {
		return formats.No
	}
	t := bytes.TrimLeft(bytes.TrimPrefix(p, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(t) == 0 {
		return formats.NeedMore
	}
	if t[0] != '<' {
		return formats.No
	}
	if bytes.Contains(p, []byte("<"+xmlRoot)) {
		return formats.Yes
	}
	// The root follows the declaration within a few dozen bytes.
	if len(p) >= 512 {
		return formats.No
	}
	return formats.NeedMore
}

// guard fails a read once a record has taken more than limit bytes, so
// that encoding/xml never buffers an unbounded token.
type guard struct {
	r     io.Reader
	n     int64 // bytes read so far
	mark  int64 // n when the current record began; -1 outside a record
	limit int64
	err   error // the reader's own failure, passed through untyped
}

var errRecordTooLarge = errors.New("record too large")

func (g *guard) Read(p []byte) (int, error) {
	if g.mark >= 0 && g.n-g.mark > g.limit {
		return 0, errRecordTooLarge
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	if err != nil && err != io.EOF {
		g.err = err
	}
	return n, err
}

// node is a record's element: its name, its text when it is a leaf, and
// its children in document order.
type node struct {
	name     string
	text     string
	children []*node
}

func (n *node) child(names ...string) *node {
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		for _, name := range names {
			if strings.EqualFold(c.name, name) {
				return c
			}
		}
	}
	return nil
}

// leaf is the text of the leaf at path (each step one of its synonyms,
// separated by |), "" when absent.
func (n *node) leaf(path ...string) string {
	for _, step := range path {
		n = n.child(strings.Split(step, "|")...)
		if n == nil {
			return ""
		}
	}
	if len(n.children) > 0 {
		return ""
	}
	return strings.TrimSpace(n.text)
}

type xmlDecoder struct {
	*decoder
	g         *guard
	xd        *xml.Decoder
	nodes     int64
	launches  int64
	native    map[string]int64
	session   evidence.Object
	rootSeen  bool
	rootEnded bool
	recLine   int64 // the line the current record began on
	recStart  int64 // its offset
}

func decodeXML(ctx context.Context, in *formats.Input, out formats.Sink) error {
	d := &xmlDecoder{decoder: &decoder{in: in, values: in.Values(), tool: in.String(optTool), byKind: map[string]int64{},
		tw: formats.NewLazyTable(out, table.SanitizerFindings.HeaderBased("", 1))},
		native: map[string]int64{}, session: evidence.Object{}}
	d.g = &guard{r: in.R, mark: -1, limit: in.Limit(limitRecordBytes)}
	d.xd = xml.NewDecoder(d.g)
	d.xd.Strict = true
	var partial *node
	err := d.run(ctx, &partial)
	if err == nil {
		return d.tw.End(d.xmlSummary(false))
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) && se.Msg == "unexpected EOF" && d.rootSeen {
		// Cut: the rows so far stand, the last record as far as it got.
		cut := false
		if partial != nil && partial.child("kind") != nil {
			cut = true
			if rerr := d.record(partial, d.recLine); rerr != nil {
				return d.tw.Abort(rerr, &evidence.Summary{RowsObserved: d.index})
			}
		}
		return d.tw.End(d.xmlSummary(cut))
	}
	return d.tw.Abort(d.typed(err), &evidence.Summary{RowsObserved: d.index,
		Limitations: []string{"decoding stopped part way: the rows before the failure are shown"}})
}

func (d *xmlDecoder) typed(err error) error {
	line, _ := d.xd.InputPos()
	loc := evidence.Location{Line: line, Offset: d.xd.InputOffset()}
	switch {
	case errors.Is(err, errRecordTooLarge):
		return d.in.ExceededAt(limitRecordBytes, nil, d.recStart)
	case errors.Is(err, errTooManyNodes):
		return d.in.ExceededAt(limitRecordNodes, d.nodes, d.g.mark)
	}
	var se *xml.SyntaxError
	var f *evidence.Failure
	switch {
	case errors.As(err, &f):
		return f
	case errors.As(err, &se):
		return &evidence.Failure{Code: evidence.CodeDecodeFailure, Location: loc,
			Message: fmt.Sprintf("compute-sanitizer XML report line %d: %s", se.Line, se.Msg)}
	}
	if d.g.err != nil && errors.Is(err, d.g.err) {
		return err // the reader's own error
	}
	// encoding/xml's other errors (a bad declaration, charset) are
	// malformed documents too.
	return &evidence.Failure{Code: evidence.CodeDecodeFailure, Location: loc, Message: "compute-sanitizer XML report: " + d.values.Bound(err.Error())}
}

var errTooManyNodes = errors.New("too many elements")

// run reads the document; partial is the record open at a cut.
func (d *xmlDecoder) run(ctx context.Context, partial **node) error {
	depth := 0
	var stack []*node  // the open elements of the current record
	var names []string // every open element's name: RawToken does not match them
	for {
		// RawToken, several times faster than Token: names are matched
		// here, and the report uses no namespaces.
		tok, err := d.xd.RawToken()
		if errors.Is(err, io.EOF) {
			if !d.rootSeen {
				return &evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "compute-sanitizer XML report: the file holds no <" + xmlRoot + "> element"}
			}
			if !d.rootEnded {
				return &xml.SyntaxError{Msg: "unexpected EOF"}
			}
			return nil
		}
		if err != nil {
			return err
		}
		if depth >= 2 && d.xd.InputOffset()-d.recStart > d.g.limit {
			return errRecordTooLarge
		}
		switch t := tok.(type) {
		case xml.StartElement:
			names = append(names, t.Name.Space+":"+t.Name.Local)
			depth++
			if depth > maxXMLDepth {
				return &xml.SyntaxError{Msg: fmt.Sprintf("elements nest deeper than %d levels", maxXMLDepth), Line: d.line()}
			}
			switch {
			case depth == 1:
				if t.Name.Local != xmlRoot {
					return &evidence.Failure{Code: evidence.CodeDecodeFailure, Location: evidence.Location{Line: d.line()},
						Message: fmt.Sprintf("compute-sanitizer XML report: the root element is <%s>, not <%s>", d.values.Bound(t.Name.Local), xmlRoot)}
				}
				d.rootSeen = true
			case depth == 2:
				if d.index%1024 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				n := &node{name: t.Name.Local}
				stack = append(stack[:0], n)
				d.nodes = 1
				d.g.mark = d.g.n
				d.recStart = d.xd.InputOffset()
				d.recLine = int64(d.line())
				*partial = n
			default:
				d.nodes++
				if d.nodes > d.in.Limit(limitRecordNodes) {
					return errTooManyNodes
				}
				n := &node{name: t.Name.Local}
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, n)
				stack = append(stack, n)
			}
		case xml.CharData:
			if depth >= 2 && len(stack) > 0 {
				top := stack[len(stack)-1]
				top.text += string(t)
			}
		case xml.EndElement:
			if n := len(names); n == 0 || names[n-1] != t.Name.Space+":"+t.Name.Local {
				return &xml.SyntaxError{Msg: fmt.Sprintf("unexpected end element </%s>", d.values.Bound(t.Name.Local)), Line: d.line()}
			}
			names = names[:len(names)-1]
			depth--
			switch {
			case depth == 0:
				d.rootEnded = true
			case depth == 1:
				n := stack[0]
				stack = stack[:0]
				*partial = nil
				d.g.mark = -1
				if err := d.element(n); err != nil {
					return err
				}
			default:
				stack = stack[:len(stack)-1]
			}
		}
	}
}

func (d *xmlDecoder) line() int {
	l, _ := d.xd.InputPos()
	return l
}

// element handles a child of the root: a record, or session details.
func (d *xmlDecoder) element(n *node) error {
	if n.name == "record" {
		return d.record(n, d.recLine)
	}
	// Session details (--save-session-details) and anything else at the
	// top level: kept, bounded, in the summary's coverage.
	flatten(n, n.name, func(path, v string) {
		if len(d.session) < maxSessionLeaves {
			d.session[d.values.Bound(path)] = d.values.Bound(v)
		}
	})
	return nil
}

// flatten calls f for every leaf under n with its slash-separated path.
func flatten(n *node, path string, f func(path, v string)) {
	if len(n.children) == 0 {
		f(path, strings.TrimSpace(n.text))
		return
	}
	for _, c := range n.children {
		flatten(c, path+"/"+c.name, f)
	}
}

// nativeKinds maps the record kinds the tool writes (compared without
// case, spaces or dashes) to finding kinds, with the tool each implies.
var nativeKinds = map[string][2]string{
	"precise":           {"invalid_access", "memcheck"},
	"imprecise":         {"device_exception", "memcheck"},
	"syscall":           {"malloc_free_error", "memcheck"},
	"leak":              {"leak", "memcheck"},
	"leakcheck":         {"leak", "memcheck"},
	"optixleak":         {"leak", "memcheck"},
	"stackoverflow":     {"stack_overflow", "memcheck"},
	"streamordered":     {"race", "memcheck"},
	"streamorderedrace": {"race", "memcheck"},
	"api":               {"api_error", ""},
	"driver":            {"api_error", ""},
	"initcheck":         {"uninitialized_access", "initcheck"},
	"initcheckapierror": {"uninitialized_access", "initcheck"},
	"unusedmemory":      {"unused_memory", "initcheck"},
	"hazard":            {"hazard", "racecheck"},
	"globalhazard":      {"hazard", "racecheck"},
	"analysis":          {"race", "racecheck"},
	"clusterentryexit":  {"race", "racecheck"},
	"synccheck":         {"barrier_error", "synccheck"},
	"synclog":           {"other", "racecheck"},
	"cudaapilog":        {"tool_message", ""},
}

func kindKey(s string) string {
	return strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(s))
}

// dim reads x, y, z of an index element (threadIdx, blockIdx).
func dim(n *node) (x, y, z table.Null[int64]) {
	if n == nil {
		return
	}
	return some(n.leaf("x")), some(n.leaf("y")), some(n.leaf("z"))
}

// record turns one <record> into a row.
func (d *xmlDecoder) record(n *node, line int64) error {
	native := n.leaf("kind")
	if kindKey(native) == "launchinfo" {
		d.launches++ // a kernel launch the tool logged, not a finding
		return nil
	}
	if _, ok := d.native[native]; ok || len(d.native) < maxSessionLeaves {
		d.native[native]++ // bounded when the coverage is written
	} else {
		d.native["(other kinds)"]++
	}
	what := n.child("what")
	f := &table.SanitizerFinding{Index: d.index, Line: line, Severity: "error", Kind: "other",
		DeviceStack: []any{}, HostStack: []any{}, Details: []any{}}
	implied := ""
	if k, ok := nativeKinds[kindKey(native)]; ok {
		f.Kind, implied = k[0], k[1]
	}
	msg := what.leaf("text")
	if msg == "" {
		msg = native
	}
	f.Message = d.values.Bound(msg)
	switch lv := strings.ToLower(n.leaf("level|severity")); {
	case lv == "warning" || lv == "warn" || lv == "info":
		f.Severity = "warning"
	case lv == "" && f.Kind == "unused_memory":
		f.Severity = "warning"
	}
	if s := what.leaf("size|accessSize"); s != "" {
		f.SizeBytes = some(s)
	}
	if a := firstOf(what.leaf("address|accessAddress|errorAddress"), n.leaf("where", "address")); a != "" {
		f.Address = table.Some(d.values.Bound(a))
	}
	if sp := what.leaf("addressSpace|space|memorySpace"); sp != "" {
		f.MemorySpace = table.Some(d.values.Bound(sp))
	}
	if ac := firstOf(what.leaf("direction|access|accessType"), n.leaf("where", "direction")); ac != "" {
		f.Access = table.Some(d.values.Bound(strings.ToLower(ac)))
	}
	if api := what.leaf("api"); api != "" {
		f.API = table.Some(d.values.Bound(api))
	}
	if e := firstOf(what.leaf("error"), what.leaf("message")); e != "" && f.Kind == "api_error" {
		f.APIError = table.Some(d.values.Bound(e))
	}
	if r := what.leaf("result"); r != "" {
		f.APIResult = some(r)
	}
	if h := what.leaf("hazards|count"); h != "" && (f.Kind == "race" || f.Kind == "hazard") {
		f.Hazards = some(h)
	}
	who := n.child("who")
	f.ThreadX, f.ThreadY, f.ThreadZ = dim(who.child("threadIdx", "thread"))
	f.BlockX, f.BlockY, f.BlockZ = dim(who.child("blockIdx", "block"))
	if !f.ThreadX.Valid {
		f.ThreadX, f.ThreadY, f.ThreadZ = dim(n.child("threadIdx"))
	}
	if !f.BlockX.Valid {
		f.BlockX, f.BlockY, f.BlockZ = dim(n.child("blockIdx"))
	}
	if ds := n.child("deviceStack"); ds != nil {
		for _, fr := range ds.children {
			f.DeviceStack = append(f.DeviceStack, d.xmlFrame(fr, false))
		}
	}
	hs := n.child("hostStack")
	if hs != nil {
		f.HostStackAt = table.Some("saved")
		for _, fr := range hs.children {
			f.HostStack = append(f.HostStack, d.xmlFrame(fr, true))
		}
	}
	// The faulting location: <where>, else the innermost device frame.
	where := n.child("where")
	loc := d.xmlFrame(where, false)
	if where == nil && len(f.DeviceStack) > 0 {
		loc = f.DeviceStack[0].(evidence.Object)
	}
	if v, ok := loc["function"].(string); ok {
		f.Kernel = table.Some(v)
	}
	if v, ok := loc["offset"].(string); ok {
		f.PC = table.Some(v)
	}
	if v, ok := loc["file"].(string); ok {
		f.File = table.Some(v)
	}
	if v, ok := loc["line"].(int64); ok {
		f.SourceLine = table.Some(v)
	}
	if k := n.leaf("kernel"); k != "" && !f.Kernel.Valid {
		f.Kernel = table.Some(d.values.Bound(k))
	}
	// Every other leaf, as written.
	f.Details = append(f.Details, d.values.Bound("kind: "+native))
	used := map[*node]bool{}
	for _, c := range n.children {
		switch strings.ToLower(c.name) {
		case "kind", "level", "severity", "who", "where", "devicestack", "hoststack":
			used[c] = true
		}
	}
	for _, c := range n.children {
		if used[c] {
			continue
		}
		flatten(c, c.name, func(path, v string) {
			if path == "what/text" {
				return
			}
			f.Details = append(f.Details, d.values.Bound(path+": "+v))
		})
	}
	switch {
	case d.tool != "":
		f.Tool = table.Some(d.tool)
	case implied != "":
		f.Tool = table.Some(implied)
	}
	d.index++
	if expectsHost(f.Kind) && hs == nil && !strings.Contains(strings.ToLower(native+msg), "device heap") {
		d.hostOmitted++
	}
	d.byKind[f.Kind]++
	if f.Severity == "error" && f.Kind != "tool_message" && f.Kind != "internal_error" {
		d.displayed++
	}
	return d.tw.Row(f)
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// xmlFrame reads a <frame> (or <where>): function, offset, module, file,
// line under the names the tool may use, and its leaves as text.
func (d *xmlDecoder) xmlFrame(n *node, host bool) evidence.Object {
	fr := evidence.Object{"function": nil, "offset": nil, "file": nil, "line": nil, "text": ""}
	if host {
		fr["module"] = nil
	}
	if n == nil {
		return fr
	}
	if len(n.children) == 0 {
		// A frame written as one text: parse it as the text report's.
		s := strings.TrimSpace(n.text)
		if host {
			return d.hostFrame(s)
		}
		return d.frame(s)
	}
	set := func(key, v string) {
		if v != "" {
			fr[key] = d.values.Bound(v)
		}
	}
	set("function", n.leaf("function|func|name|functionName|kernel"))
	set("offset", n.leaf("pc|offset|basePc|address"))
	set("file", n.leaf("file|fileName"))
	if host {
		set("module", n.leaf("module|moduleName"))
	}
	if l, ok := num(n.leaf("line")); ok {
		fr["line"] = l
	}
	var parts []string
	flatten(n, "", func(path, v string) { parts = append(parts, strings.TrimPrefix(path, "/")+"="+v) })
	sort.Strings(parts)
	fr["text"] = d.values.Bound(strings.Join(parts, " "))
	return fr
}

func (d *xmlDecoder) xmlSummary(cutRecord bool) *evidence.Summary {
	s := &evidence.Summary{RowsObserved: d.index, Complete: true, Metrics: map[string]evidence.Metric{}}
	kinds, native := evidence.Object{}, evidence.Object{}
	for k, n := range d.byKind {
		kinds[k] = n
	}
	for k, n := range d.native {
		// Kinds cut to one bounded key add up, whatever the map's order.
		b := d.values.Bound(k)
		prev, _ := native[b].(int64)
		native[b] = prev + n
	}
	s.Coverage = evidence.Object{"records_by_kind": kinds, "native_kinds": native, "launch_records": d.launches}
	if len(d.session) > 0 {
		s.Coverage["session"] = d.session
	}
	s.Metrics["errors_displayed"] = evidence.Metric{Value: d.displayed, Unit: "count"}
	s.Metrics["host_backtraces_omitted"] = evidence.Metric{Value: d.hostOmitted, Unit: "count"}
	s.Limit("the XML report carries no ERROR SUMMARY: errors the tool did not save (--print-limit) cannot be counted from it")
	if !d.rootEnded {
		s.Complete = false
		s.Limit("the XML report ends before </" + xmlRoot + ">: it was cut, or the run did not finish, so records after the cut are missing")
	}
	if cutRecord {
		s.Complete = false
		s.Limit("the XML report ends inside a <record>: its last row may lack fields")
	}
	if d.hostOmitted > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d records have no <hostStack>: host-stack frames were omitted (--show-backtrace device or no)", d.hostOmitted))
	}
	d.values.Summarize(s)
	return s
}
