package mcpserver

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/wire"
)

// Response bounds.
const (
	// DefaultTextBound bounds the JSONL text content. Rows are dropped from
	// its end first; the text says what it omitted, and structuredContent
	// keeps every row.
	DefaultTextBound = 64 << 10
	// DefaultResultBound bounds the evidence one response retains. A result
	// beyond it is a LIMIT_EXCEEDED failure (lower top), never a silent cut.
	DefaultResultBound = 32 << 20
)

// table is one result table as it arrived. An operation emits one table
// per input series where series must not blend (a preview of two console
// streams is two tables).
type resultTable struct {
	header  evidence.Object
	rows    []evidence.Object
	summary evidence.Object
}

func (t *resultTable) value() evidence.Object {
	rows := make([]any, len(t.rows))
	for i, r := range t.rows {
		rows[i] = r
	}
	return evidence.Object{"header": t.header, "rows": rows, "summary": nullable(t.summary)}
}

func nullable(o evidence.Object) any {
	if o == nil {
		return nil
	}
	return o
}

// collector keeps the blocks of one request: from the last stage's output
// and, for a capture, from the capture stage as they pass to decode. The
// same block seen on both paths is kept once.
type collector struct {
	mu        sync.Mutex
	bound     int64
	size      int64
	overflow  int64 // rows not retained beyond the bound
	capture   evidence.Object
	artifacts []evidence.Object
	bundles   []evidence.Object
	failures  []evidence.Object
	tables    []*resultTable
	byID      map[string]*resultTable
	seen      map[string]bool
	bad       *evidence.Failure
	// sources are the capture stage's capture and artifact lines, in
	// order: what a session handle replays to analyze them again.
	sources [][]byte
	// dropTables: keep provenance blocks only.
	dropTables bool
}

func newCollector(bound int64) *collector {
	return &collector{bound: bound, byID: map[string]*resultTable{}, seen: map[string]bool{}}
}

// teeLine takes one line of the capture stage's output.
func (c *collector) teeLine(line []byte, tooLong bool) {
	if tooLong {
		c.malformed(evidence.Failf(evidence.CodeInternal, "a capture output line exceeds %d bytes", wire.DefaultMaxLine))
		return
	}
	v, err := evidence.ParseValue(line, 64)
	if err != nil {
		c.malformed(evidence.Wrap(evidence.CodeInternal, err, "capture output"))
		return
	}
	if o, ok := v.(evidence.Object); ok && o["schema"] == evidence.Schema {
		if k := o["kind"]; k == evidence.KindCapture || k == evidence.KindArtifact {
			c.mu.Lock()
			c.sources = append(c.sources, append(slices.Clone(line), '\n'))
			c.mu.Unlock()
		}
		c.add(o, true)
	}
}

func (c *collector) malformed(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bad == nil {
		f := evidence.AsFailure(err, evidence.CodeInternal)
		c.bad = &evidence.Failure{Code: evidence.CodeInternal, Message: "a stage wrote output that is not a flameox/1 block stream: " + f.Message,
			Location: f.Location}
	}
}

// add keeps one block. Blocks from the tee are provenance only (capture,
// artifact, failure, bundle); tables come from the last stage.
func (c *collector) add(o evidence.Object, fromTee bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kind, _ := o["kind"].(string)
	key := ""
	switch kind {
	case evidence.KindCapture:
		key = fmt.Sprint("capture\x00", o["capture_id"])
	case evidence.KindArtifact:
		key = fmt.Sprint("artifact\x00", o["artifact_id"], "\x00", o["path"])
	case evidence.KindFailure, evidence.KindBundle:
		b, _ := evidence.Canonical(o)
		key = kind + "\x00" + string(b)
	}
	if key != "" {
		if c.seen[key] {
			return
		}
		c.seen[key] = true
	}
	switch kind {
	case evidence.KindCapture:
		if c.capture == nil {
			c.capture = o
		}
		return
	case evidence.KindArtifact:
		c.artifacts = append(c.artifacts, o)
		return
	case evidence.KindFailure:
		c.failures = append(c.failures, o)
		return
	case evidence.KindBundle:
		c.bundles = append(c.bundles, o)
		return
	}
	if fromTee || c.dropTables {
		return
	}
	id, _ := o["table_id"].(string)
	switch kind {
	case evidence.KindTable:
		// Tables arrive one after another; a header opens a new table even
		// when its id repeats an earlier one's, and later rows are its.
		t := &resultTable{header: o}
		c.byID[id] = t
		c.tables = append(c.tables, t)
	case evidence.KindRow:
		t := c.byID[id]
		values, ok := o["values"].(evidence.Object)
		if t == nil || !ok {
			c.bad = evidence.Failf(evidence.CodeInternal, "flameox-rank wrote a row of table %q without its header", id)
			return
		}
		b, _ := evidence.Canonical(values)
		if c.size+int64(len(b)) > c.bound || c.overflow > 0 {
			c.overflow++
			return
		}
		c.size += int64(len(b))
		t.rows = append(t.rows, values)
	case evidence.KindSummary:
		if t := c.byID[id]; t != nil {
			t.summary = o
		}
	}
}

// unexpected are the failure blocks that arrived, less those the job
// replayed itself (a handle's failed analysis, preserved with it).
func (c *collector) unexpected(j *job) []evidence.Object {
	var out []evidence.Object
	for _, f := range c.failures {
		if !slices.ContainsFunc(j.replayed, func(r evidence.Object) bool { return sameBlock(r, f) }) {
			out = append(out, f)
		}
	}
	return out
}

// failureValue is a failure block as structured content: the block's
// fields less schema and kind.
func failureValue(o evidence.Object) evidence.Object {
	out := evidence.Object{}
	for k, v := range o {
		if k != "schema" && k != "kind" {
			out[k] = v
		}
	}
	if _, ok := out["retry"]; !ok {
		out["retry"] = nil
	}
	if _, ok := out["details"].(evidence.Object); !ok {
		out["details"] = evidence.Object{}
	}
	return out
}

func blockOf(f *evidence.Failure) evidence.Object {
	return f.CanonicalValue().(evidence.Object)
}

// codeOfExit maps a command's exit status back to its failure code.
func codeOfExit(status int) evidence.Code {
	for _, e := range evidence.Codes {
		if e.Exit == status && e.Code != "" {
			return e.Code
		}
	}
	return evidence.CodeInternal
}

// failure decides whether the request failed and why: a start failure, a
// cancellation, the first failure block, malformed output, the response
// bound, a stage's non-zero exit, or a missing result.
func (c *collector) failure(j *job, o *outcome) evidence.Object {
	switch {
	case o.start != nil:
		return blockOf(o.start)
	case o.cancelled:
		// By notifications/cancelled, a disconnect or the server's shutdown.
		msg := "the request was cancelled; every process it started was ended"
		if o.survivors > 0 {
			msg = fmt.Sprintf("the request was cancelled; %d processes it started survived SIGKILL", o.survivors)
		}
		return blockOf(&evidence.Failure{Code: evidence.CodeCancelled, Message: msg})
	case len(c.unexpected(j)) > 0:
		return c.unexpected(j)[0]
	case c.bad != nil:
		return blockOf(c.bad)
	case c.overflow > 0:
		return blockOf(&evidence.Failure{Code: evidence.CodeLimitExceeded,
			Message: fmt.Sprintf("the result exceeds the server's %d-byte response bound: %d rows were not retained; lower top", c.bound, c.overflow),
			Details: evidence.Object{"bound_bytes": c.bound, "rows_not_retained": c.overflow}})
	}
	for _, s := range o.stages {
		st := s.cmd.ProcessState
		if st == nil || st.Success() {
			continue
		}
		// flameox-preserve exits with the status of a failure it preserved;
		// a replayed one is what the bundle records, not this call's.
		if s.spec.bin == binPreserve && len(j.replayed) > 0 && len(c.bundles) > 0 &&
			st.ExitCode() == evidence.ExitCode(evidence.Code(fmt.Sprint(j.replayed[0]["code"]))) {
			continue
		}
		f := &evidence.Failure{Code: evidence.CodeInternal}
		if st.Exited() {
			f.Code = codeOfExit(st.ExitCode())
			f.Message = fmt.Sprintf("%s exited with status %d", s.spec.bin, st.ExitCode())
		} else {
			f.Message = fmt.Sprintf("%s ended abnormally: %s", s.spec.bin, st)
		}
		if l := s.stderr.lastLine(); l != "" {
			f.Message += ": " + l
		}
		return blockOf(f)
	}
	if j.operation != "" && len(c.tables) == 0 {
		return blockOf(evidence.Failf(evidence.CodeInternal, "flameox-rank exited successfully without a result table"))
	}
	if o.survivors > 0 {
		return blockOf(evidence.Failf(evidence.CodeInternal, "%d processes of the request survived SIGKILL", o.survivors))
	}
	return nil
}

func (c *collector) tablesValue() []any {
	tables := make([]any, len(c.tables))
	for i, t := range c.tables {
		tables[i] = t.value()
	}
	return tables
}

// evidenceValue is every block that arrived, as structured content.
func (c *collector) evidenceValue() evidence.Object {
	return evidence.Object{
		"capture":   nullable(c.capture),
		"artifacts": objects(c.artifacts),
		"bundles":   objects(c.bundles),
		"tables":    c.tablesValue(),
	}
}

func objects(os []evidence.Object) []any {
	out := make([]any, len(os))
	for i, o := range os {
		out[i] = o
	}
	return out
}

// textJSONL renders the blocks as canonical JSONL within bound bytes.
// Every non-row line goes first into the budget, then rows in order, so a
// cut drops rows from the end of a table rather than its header or summary.
func (c *collector) textJSONL(failure evidence.Object, bound int) (string, evidence.Object) {
	type line struct {
		b   []byte
		row bool
	}
	var lines []line
	push := func(o evidence.Object, row bool) {
		b, err := evidence.Canonical(o)
		if err == nil {
			lines = append(lines, line{append(b, '\n'), row})
		}
	}
	if c.capture != nil {
		push(c.capture, false)
	}
	for _, a := range c.artifacts {
		push(a, false)
	}
	for _, b := range c.bundles {
		push(b, false)
	}
	if failure != nil {
		push(failure, false)
	}
	for _, f := range c.failures {
		if failure == nil || !sameBlock(f, failure) {
			push(f, false)
		}
	}
	for _, t := range c.tables {
		push(t.header, false)
		id := t.header["table_id"]
		for _, r := range t.rows {
			push(evidence.Object{"schema": evidence.Schema, "kind": evidence.KindRow, "table_id": id, "values": r}, true)
		}
		if t.summary != nil {
			push(t.summary, false)
		}
	}
	fixed, total := 0, 0
	for _, l := range lines {
		total += len(l.b)
		if !l.row {
			fixed += len(l.b)
		}
	}
	rowBudget := bound - fixed
	budget := bound
	var b strings.Builder
	omittedRows, omittedLines := 0, 0
	for _, l := range lines {
		switch {
		case l.row && len(l.b) > rowBudget:
			omittedRows++
			rowBudget = -1
		case !l.row && len(l.b) > budget:
			omittedLines++
			budget = -1
		default:
			b.Write(l.b)
			budget -= len(l.b)
			if l.row {
				rowBudget -= len(l.b)
			}
		}
	}
	info := evidence.Object{
		"bound_bytes":   bound,
		"total_bytes":   total,
		"text_bytes":    b.Len(),
		"truncated":     omittedRows+omittedLines > 0,
		"omitted_rows":  omittedRows,
		"omitted_lines": omittedLines,
	}
	return b.String(), info
}

func sameBlock(a, b evidence.Object) bool {
	x, _ := evidence.Canonical(a)
	y, _ := evidence.Canonical(b)
	return string(x) == string(y)
}

// result builds the tool result of a finished request, at the job's
// detail level.
func (c *collector) result(j *job, o *outcome, textBound int) *mcp.CallToolResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	full := j.detail == DetailFull
	sc := evidence.Object{"ok": true, "operation": nil}
	if j.operation != "" {
		sc["operation"] = j.operation
	}
	if j.provider != "" {
		sc["provider"] = j.provider
	}
	fb := c.failure(j, o)
	var text string
	var info evidence.Object
	if full {
		text, info = c.textJSONL(fb, textBound)
		sc["text"] = info
	} else {
		text = boundText(c.compactText(j.nested), textBound)
	}
	var content []mcp.Content
	if fb == nil {
		var ev evidence.Object
		if full {
			ev = c.evidenceValue()
		} else {
			ev = c.compactValue(j.nested)
		}
		for k, v := range ev {
			sc[k] = v
		}
	} else {
		f := failureValue(fb)
		details := evidence.Object{}
		for k, v := range f["details"].(evidence.Object) {
			details[k] = v
		}
		if full {
			details["partial_evidence"] = c.evidenceValue()
		} else {
			details["partial_evidence"] = c.compactValue(j.nested)
		}
		if len(c.failures) > 1 {
			details["failures"] = objects(c.failures)
		}
		var stages []any
		for _, s := range o.stages {
			if s.cmd == nil {
				continue
			}
			if full {
				stages = append(stages, s.report())
			} else {
				stages = append(stages, evidence.Object{"stage": s.spec.bin, "exit": s.exit(), "stderr_last_line": s.stderr.lastLine()})
			}
		}
		if len(stages) > 0 {
			details["stages"] = stages
		}
		f["details"] = details
		f["limit"] = nil
		if c.capture != nil {
			f["limit"] = c.capture["limit"]
		}
		spellFailure(f, j.nested)
		if j.respell != nil {
			j.respell(f)
		}
		sc["ok"] = false
		sc["failure"] = f
		content = append(content, mcp.NewTextContent(failureLine(j, f)))
	}
	for k, v := range j.extra {
		sc[k] = v
	}
	if j.note != "" {
		content = append(content, mcp.NewTextContent(j.note))
	}
	content = append(content, j.links...)
	if text != "" {
		content = append(content, mcp.NewTextContent(text))
	}
	if full && info["truncated"] == true {
		content = append(content, mcp.NewTextContent(fmt.Sprintf(
			"The JSONL text above is bounded to %d bytes: %d rows and %d other lines were left out of it; "+
				"structuredContent holds every retained block.", textBound, info["omitted_rows"], info["omitted_lines"])))
	}
	raw, err := evidence.Canonical(sc)
	if err != nil {
		return mcp.NewToolResultError("flameox-mcp: encode result: " + err.Error())
	}
	return &mcp.CallToolResult{Content: content, RawStructuredContent: raw, StructuredContent: sc, IsError: fb != nil}
}

// boundText cuts a compact text over bound at its last whole line within
// the bound, and says so.
func boundText(s string, bound int) string {
	if len(s) <= bound {
		return s
	}
	cut := strings.LastIndexByte(s[:bound], '\n') + 1
	omitted := strings.Count(s[cut:], "\n")
	return s[:cut] + fmt.Sprintf("… %d more lines left out of this %d-byte text; structuredContent holds every row\n", omitted, bound)
}

// failureLine says in one line what failed and how to retry.
func failureLine(j *job, f evidence.Object) string {
	what := j.operation
	if j.provider != "" {
		what = j.provider + " capture"
		if j.operation != "" {
			what += " + " + j.operation
		}
	}
	if what == "" {
		what = "call"
	}
	s := fmt.Sprintf("%s failed: %v: %v", what, f["code"], f["message"])
	if loc, ok := f["location"].(evidence.Object); ok && len(loc) > 0 {
		var parts []string
		for _, k := range sortedNames(loc) {
			parts = append(parts, fmt.Sprintf("%s=%v", k, loc[k]))
		}
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if r, ok := f["retry"].(evidence.Object); ok {
		s += ". To fix: " + fmt.Sprint(r["action"])
	}
	if l, ok := f["limit"].(evidence.Object); ok {
		s += fmt.Sprintf(". Limit: %v=%v (observed %v)", l["name"], l["value"], l["observed"])
	}
	if pe, ok := f["details"].(evidence.Object)["partial_evidence"].(evidence.Object); ok {
		if pe["capture"] != nil || len(pe["artifacts"].([]any)) > 0 {
			s += ". The capture and artifacts that completed are in details.partial_evidence"
		}
	}
	return s
}
