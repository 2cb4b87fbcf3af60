// Package sanitizer decodes the text report of NVIDIA's compute-sanitizer
// (memcheck, racecheck, initcheck, synccheck): one gpu.sanitizer_findings
// row per record, with its kernel location, thread and block, address,
// device frames and saved host backtrace, and the run's ERROR SUMMARY.
//
// A record is the lines prefixed "=========" from its first (unindented)
// line to the bare "=========" line that ends it; unprefixed lines are the
// program's own output, interleaved. Coverage says separately when host
// backtraces are missing (--show-backtrace off or cut) and when the
// summary counts more errors than were printed (--print-limit).
//
// It imports evidence, formats, lines, param and table.
package sanitizer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Version is the decoder's version.
const Version = "1"

// Tools are the sanitizer tools whose reports this reads.
var Tools = []string{"memcheck", "racecheck", "initcheck", "synccheck"}

const (
	limitLine = "max_line_bytes"
	optTool   = "tool"
	prefix    = "========="
)

// Spec is the compute-sanitizer text report.
var Spec = &formats.Spec{
	Name:     "compute-sanitizer",
	Title:    "NVIDIA Compute Sanitizer text report",
	Family:   formats.FamilyGPU,
	Suffixes: []string{".sanitizer.log", ".sanitizer.txt"},
	Sniff:    sniff,
	Tables:   []*table.Schema{table.SanitizerFindings.Schema},
	Limits: []formats.Limit{
		{Name: limitLine, Default: 64 << 10, Unit: "bytes", Doc: "bytes kept of one log line; a longer line is cut and the table is incomplete"},
	},
	Options: []param.Param{
		formats.ValueBytesParam,
		{Name: optTool, Type: param.Enum, Enum: append([]string{""}, Tools...), Default: "",
			Doc: "the --tool the report was made with (the text does not say it); empty: implied by each record's kind where it can be"},
	},
	Producer: "NVIDIA compute-sanitizer (its stdout/stderr, or --log-file)",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
}

func sniff(p []byte) formats.Verdict {
	if formats.SniffText(p) == formats.No {
		return formats.No
	}
	for _, marker := range []string{prefix + " COMPUTE-SANITIZER", prefix + " ERROR SUMMARY: "} {
		if i := bytes.Index(p, []byte(marker)); i == 0 || i > 0 && p[i-1] == '\n' {
			return formats.Yes
		}
	}
	return formats.NeedMore
}

type decoder struct {
	in     *formats.Input
	values *formats.Values
	tool   string
	tw     *formats.LazyTable
	cur    *table.SanitizerFinding
	open   bool // cur has not seen its closing line
	stack  int  // 1: in a host backtrace
	index  int64

	banner        bool
	summaryErrors int64
	summarySeen   bool
	displayed     int64
	byKind        map[string]int64
	hostOmitted   int64
	hostCut       int64
	programLines  int64
	cutLines      int64
	orphans       int64
	leakSummary   string
	raceErrors    int64
	raceSeen      bool
	raceSummary   string
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	d := &decoder{in: in, values: in.Values(), tool: in.String(optTool), byKind: map[string]int64{},
		tw: formats.NewLazyTable(out, table.SanitizerFindings.HeaderBased("", 1))}
	lr := lines.NewReader(in.R, int(in.Limit(limitLine)))
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return d.tw.Abort(err, &evidence.Summary{RowsObserved: d.index, Limitations: []string{"reading the log failed part way"}})
		}
		if l.Number%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if l.Cut() {
			d.cutLines++
		}
		if !utf8.Valid(l.Bytes) { // evidence strings are UTF-8; the native bytes stay in the artifact
			return d.tw.Abort(&evidence.Failure{Code: evidence.CodeDecodeFailure,
				Message:  fmt.Sprintf("compute-sanitizer report line %d is not valid UTF-8", l.Number),
				Location: evidence.Location{Line: int(l.Number), Offset: l.Offset}},
				&evidence.Summary{RowsObserved: d.index, Limitations: []string{"decoding stopped at a line that is not valid UTF-8"}})
		}
		if err := d.line(l.Number, string(l.Bytes)); err != nil {
			return d.tw.Abort(err, &evidence.Summary{RowsObserved: d.index})
		}
	}
	cutRecord := d.cur != nil && d.open
	if err := d.flush(); err != nil {
		return err
	}
	return d.tw.End(d.summary(cutRecord))
}

func (d *decoder) summary(cutRecord bool) *evidence.Summary {
	s := &evidence.Summary{RowsObserved: d.index, Complete: true, Metrics: map[string]evidence.Metric{}}
	kinds := evidence.Object{}
	for k, n := range d.byKind {
		kinds[k] = n
	}
	s.Coverage = evidence.Object{"banner": d.banner, "records_by_kind": kinds, "program_output_lines": d.programLines}
	if d.leakSummary != "" {
		s.Coverage["leak_summary"] = d.leakSummary
	}
	if d.raceSummary != "" {
		s.Coverage["racecheck_summary"] = d.raceSummary
	}
	s.Metrics["errors_displayed"] = evidence.Metric{Value: d.displayed, Unit: "count"}
	s.Metrics["host_backtraces_omitted"] = evidence.Metric{Value: d.hostOmitted, Unit: "count"}
	if !d.summarySeen && d.raceSeen {
		// racecheck's own summary counts the errors it displayed.
		d.summaryErrors, d.summarySeen = d.raceErrors, true
	}
	if d.summarySeen {
		s.Coverage["error_summary"] = d.summaryErrors
		s.Metrics["errors_reported"] = evidence.Metric{Value: d.summaryErrors, Unit: "count"}
		if d.summaryErrors > d.displayed {
			s.Complete = false
			s.Metrics["errors_not_displayed"] = evidence.Metric{Value: d.summaryErrors - d.displayed, Unit: "count"}
			s.Limit(fmt.Sprintf("the ERROR SUMMARY counts %d errors but %d were printed: the rest were not displayed (--print-limit, default 100)",
				d.summaryErrors, d.displayed))
		} else if d.summaryErrors < d.displayed {
			s.Limit(fmt.Sprintf("the ERROR SUMMARY counts %d errors, fewer than the %d error records printed", d.summaryErrors, d.displayed))
		}
	} else {
		s.Complete = false
		s.Limit("the log has no ERROR SUMMARY line: it was cut, or the run did not finish, so records after the cut are missing")
	}
	if cutRecord {
		s.Complete = false
		s.Limit("the log ends inside a record: its last row may lack lines")
	}
	if d.hostOmitted > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d records have no saved host backtrace: host-stack frames were omitted (--show-backtrace device or no)", d.hostOmitted))
	}
	if d.hostCut > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d host backtraces were cut short ([...]): their outer frames are missing", d.hostCut))
	}
	if d.cutLines > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d log lines were longer than %s=%d bytes and were cut", d.cutLines, limitLine, d.in.Limit(limitLine)))
	}
	if d.orphans > 0 {
		s.Limit(fmt.Sprintf("%d indented report lines belong to no record and were not read", d.orphans))
	}
	d.values.Summarize(s)
	return s
}

// line reads one log line.
func (d *decoder) line(n int64, text string) error {
	t := strings.TrimLeft(text, " \t")
	if !strings.HasPrefix(t, prefix) {
		d.programLines++
		return nil
	}
	body := strings.TrimPrefix(t, prefix)
	if body != "" && body[0] != ' ' {
		d.programLines++ // "==========" is not the report's prefix
		return nil
	}
	indent := len(body) - len(strings.TrimLeft(body, " "))
	body = strings.TrimSpace(body)
	switch {
	case body == "":
		if d.cur != nil {
			d.open = false
			return d.flush()
		}
		return nil
	case indent <= 2:
		// A record's first line. "=========  Unused" has two spaces.
		if err := d.flush(); err != nil {
			return err
		}
		return d.header(n, body)
	}
	if d.cur == nil {
		d.orphans++
		return nil
	}
	d.continuation(body)
	return nil
}

var (
	reErrorSummary = regexp.MustCompile(`^ERROR SUMMARY: ([0-9,]+) errors?\b`)
	reInvalid      = regexp.MustCompile(`^(Potential )?[Ii]nvalid (__\w+__) (read|write|atomic\w*)\w* of size ([0-9,]+) bytes?`)
	reUninit       = regexp.MustCompile(`^Uninitialized (__\w+__) memory (read|write|access) of size ([0-9,]+) bytes?`)
	reMalloc       = regexp.MustCompile(`^Malloc/Free error encountered ?: ?(.*)$`)
	reLeakBytes    = regexp.MustCompile(`^Leaked ([0-9,]+) bytes at (0x[0-9a-fA-F]+)`)
	reAPI          = regexp.MustCompile(`^Program hit (.+?) \(error (\d+)\)(?: due to "(.*)")? on CUDA API call to ([^\s.]+)\.?$`)
	reRace         = regexp.MustCompile(`^(Error|ERROR|Warning|WARNING): Race reported between (\w+) access at (.*)$`)
	reHazard       = regexp.MustCompile(`^(Error|ERROR|Warning|WARNING): (\(Warp Level Programming\) )?Potential (\w+) hazard detected at (__\w+__) (0x[0-9a-fA-F]+) in block \((\d+), ?(\d+), ?(\d+)\)`)
	reBarrierCall  = regexp.MustCompile(`^(?:Barrier|Syncwarp) called by threads starting at \((\d+),(\d+),(\d+)\) in block \((\d+),(\d+),(\d+)\)`)
	reAt           = regexp.MustCompile(`^at (.*)$`)
	reBy           = regexp.MustCompile(`^by thread \((\d+),(\d+),(\d+)\) in block \((\d+),(\d+),(\d+)\)`)
	reAddress      = regexp.MustCompile(`^Address (0x[0-9a-fA-F]+)`)
	reSaved        = regexp.MustCompile(`^Saved host backtrace up to driver entry point(?: at (.*?))?\.?$`)
	reAndAccess    = regexp.MustCompile(`^and (\w+) access at (.*?)(?: \[([0-9,]+) hazards?\])?$`)
	reThread       = regexp.MustCompile(`^(?:Read|Write|Atomic)\w* Thread \((\d+), ?(\d+), ?(\d+)\) at `)
	reBracketPC    = regexp.MustCompile(`^(.+?) \[(0x[0-9a-fA-F]+)\]$`)
	rePC           = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	reRaceSummary  = regexp.MustCompile(`^RACECHECK SUMMARY: .*\(([0-9,]+) errors?, ([0-9,]+) warnings?\)`)
	reInFileLine   = regexp.MustCompile(`^(.*?) in (.+):(\d+)$`)
	reFuncOffset   = regexp.MustCompile(`^(.*?)(?:\+|:)(0x[0-9a-fA-F]+)$`)
	reHostNew      = regexp.MustCompile(`^(.*?) ?\[(0x[0-9a-fA-F]+)\] in (.+)$`)
	reHostLegacy   = regexp.MustCompile(`^(.+?)(?: \((.*) \+ (0x[0-9a-fA-F]+)\))? \[(0x[0-9a-fA-F]+)\]$`)
)

func num(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	return n, err == nil
}

func some(s string) table.Null[int64] {
	n, ok := num(s)
	return table.Null[int64]{V: n, Valid: ok}
}

func (d *decoder) header(n int64, body string) error {
	switch {
	case body == "COMPUTE-SANITIZER":
		d.banner = true
		return nil
	case strings.HasPrefix(body, "ERROR SUMMARY:"):
		if m := reErrorSummary.FindStringSubmatch(body); m != nil {
			d.summaryErrors, _ = num(m[1])
			d.summarySeen = true
		}
		return nil
	case strings.HasPrefix(body, "LEAK SUMMARY:"):
		d.leakSummary = d.values.Bound(body)
		return nil
	case strings.HasPrefix(body, "RACECHECK SUMMARY:"):
		d.raceSummary = d.values.Bound(body)
		if m := reRaceSummary.FindStringSubmatch(body); m != nil {
			d.raceErrors, d.raceSeen = some(m[1]).V, true
		}
		return nil
	}
	f := &table.SanitizerFinding{Index: d.index, Line: n, Message: d.values.Bound(body), Severity: "error", Kind: "other",
		DeviceStack: []any{}, HostStack: []any{}, Details: []any{}}
	implied := ""
	switch m := (matcher{body: body}); {
	case m.is(reInvalid):
		f.Kind, implied = "invalid_access", "memcheck"
		f.MemorySpace, f.Access, f.SizeBytes = table.Some(m.g[2]), table.Some(accessWord(m.g[3])), some(m.g[4])
	case m.is(reUninit):
		f.Kind, implied = "uninitialized_access", "initcheck"
		f.MemorySpace, f.Access, f.SizeBytes = table.Some(m.g[1]), table.Some(m.g[2]), some(m.g[3])
	case m.is(reMalloc):
		f.Kind, implied = "malloc_free_error", "memcheck"
	case m.is(reLeakBytes):
		f.Kind, implied = "leak", "memcheck"
		f.SizeBytes, f.Address = some(m.g[1]), table.Some(m.g[2])
	case strings.HasPrefix(body, "Leaked "):
		f.Kind, implied = "leak", "memcheck"
	case m.is(reAPI):
		f.Kind = "api_error"
		f.APIError, f.APIResult, f.API = table.Some(d.values.Bound(m.g[1])), some(m.g[2]), table.Some(m.g[4])
	case m.is(reRace):
		f.Kind, implied = "race", "racecheck"
		f.Severity = severity(m.g[1])
		f.Access = table.Some(strings.ToLower(m.g[2]))
		d.at(f, m.g[3])
	case m.is(reHazard):
		f.Kind, implied = "hazard", "racecheck"
		f.Severity = severity(m.g[1])
		if m.g[2] != "" {
			f.Severity = "warning"
		}
		f.Access, f.MemorySpace, f.Address = table.Some(m.g[3]), table.Some(m.g[4]), table.Some(m.g[5])
		f.BlockX, f.BlockY, f.BlockZ = some(m.g[6]), some(m.g[7]), some(m.g[8])
	case strings.HasPrefix(body, "Barrier error detected"):
		f.Kind, implied = "barrier_error", "synccheck"
	case m.is(reBarrierCall):
		f.Kind, implied = "barrier_error", "synccheck"
		f.ThreadX, f.ThreadY, f.ThreadZ = some(m.g[1]), some(m.g[2]), some(m.g[3])
		f.BlockX, f.BlockY, f.BlockZ = some(m.g[4]), some(m.g[5]), some(m.g[6])
		if i := strings.LastIndex(body, ") at "); i >= 0 {
			d.at(f, body[i+5:])
		}
	case strings.HasPrefix(body, "Deadlock detected"):
		f.Kind, implied = "deadlock", "synccheck"
		if i := strings.LastIndex(body, " at "); i >= 0 {
			d.at(f, body[i+4:])
		}
	case strings.HasPrefix(body, "Unused "):
		f.Kind, implied, f.Severity = "unused_memory", "initcheck", "warning"
		if fs := strings.Fields(body); len(fs) > 1 {
			f.MemorySpace = table.Some(fs[1])
		}
	case strings.HasPrefix(body, "Internal Sanitizer Error"):
		f.Kind = "internal_error"
	case strings.HasPrefix(body, "Error: "), strings.HasPrefix(body, "Warning: "), strings.HasPrefix(body, "Target application"):
		f.Kind = "tool_message"
		if strings.HasPrefix(body, "Warning: ") {
			f.Severity = "warning"
		}
	}
	switch {
	case d.tool != "":
		f.Tool = table.Some(d.tool)
	case implied != "":
		f.Tool = table.Some(implied)
	}
	d.cur, d.open, d.stack = f, true, 0
	d.index++
	return nil
}

type matcher struct {
	body string
	g    []string
}

func (m *matcher) is(re *regexp.Regexp) bool {
	m.g = re.FindStringSubmatch(m.body)
	return m.g != nil
}

func severity(word string) string {
	if strings.EqualFold(word, "warning") {
		return "warning"
	}
	return "error"
}

func accessWord(w string) string {
	if strings.HasPrefix(w, "atomic") {
		return "atomic"
	}
	return w
}

// at reads a location: "FUNC+0xOFF in FILE:LINE", "FUNC():0xOFF in
// FILE:LINE", "0xPC in FILE:LINE:FUNC" (older releases), or "0xPC".
func (d *decoder) at(f *table.SanitizerFinding, loc string) {
	fr := d.frame(loc)
	if v, ok := fr["function"].(string); ok {
		f.Kernel = table.Some(v)
	}
	if v, ok := fr["offset"].(string); ok {
		f.PC = table.Some(v)
	}
	if v, ok := fr["file"].(string); ok {
		f.File = table.Some(v)
	}
	if v, ok := fr["line"].(int64); ok {
		f.SourceLine = table.Some(v)
	}
}

// frame parses a device location or frame.
func (d *decoder) frame(loc string) evidence.Object {
	fr := evidence.Object{"function": nil, "offset": nil, "file": nil, "line": nil, "text": d.values.Bound(loc)}
	rest := loc
	if m := reInFileLine.FindStringSubmatch(rest); m != nil {
		if n, ok := num(m[3]); ok {
			fr["file"], fr["line"] = d.values.Bound(m[2]), n
			rest = m[1]
		}
	} else if i := strings.Index(rest, " in "); i >= 0 {
		// "0x1f0 in divergent.cu:4:kernel()", the older order.
		tail := rest[i+4:]
		if parts := strings.SplitN(tail, ":", 3); len(parts) == 3 {
			if n, ok := num(parts[1]); ok {
				fr["file"], fr["line"], fr["function"] = d.values.Bound(parts[0]), n, d.values.Bound(parts[2])
				rest = rest[:i]
			}
		}
	}
	if m := reBracketPC.FindStringSubmatch(rest); m != nil {
		fr["function"], fr["offset"] = d.values.Bound(m[1]), m[2]
	} else if rePC.MatchString(rest) {
		fr["offset"] = rest
	} else if m := reFuncOffset.FindStringSubmatch(rest); m != nil {
		if m[1] != "" {
			fr["function"] = d.values.Bound(m[1])
		}
		fr["offset"] = m[2]
	} else if rest != "" && fr["function"] == nil {
		fr["function"] = d.values.Bound(rest)
	}
	return fr
}

// hostFrame parses "FUNC [0xOFF] in MODULE" (empty FUNC allowed; FUNC may
// end in " in FILE:LINE"), or the older "MODULE (FUNC + 0xOFF) [0xADDR]".
func (d *decoder) hostFrame(s string) evidence.Object {
	s = strings.TrimSpace(s)
	fr := evidence.Object{"function": nil, "offset": nil, "module": nil, "file": nil, "line": nil, "text": d.values.Bound(s)}
	if m := reHostNew.FindStringSubmatch(s); m != nil {
		fn := strings.TrimSpace(m[1])
		if fm := reInFileLine.FindStringSubmatch(fn); fm != nil {
			if n, ok := num(fm[3]); ok {
				fr["file"], fr["line"], fn = d.values.Bound(fm[2]), n, fm[1]
			}
		}
		if fn != "" {
			fr["function"] = d.values.Bound(fn)
		}
		fr["offset"], fr["module"] = m[2], d.values.Bound(m[3])
	} else if m := reHostLegacy.FindStringSubmatch(s); m != nil {
		fr["module"] = d.values.Bound(m[1])
		if m[2] != "" {
			fr["function"] = d.values.Bound(m[2])
			fr["offset"] = m[3]
		} else {
			fr["offset"] = m[4]
		}
	}
	return fr
}

func (d *decoder) continuation(body string) {
	f := d.cur
	switch m := (matcher{body: body}); {
	case strings.HasPrefix(body, "Host Frame:"):
		f.HostStack = append(f.HostStack, d.hostFrame(strings.TrimPrefix(body, "Host Frame:")))
	case strings.HasPrefix(body, "Device Frame:"):
		f.DeviceStack = append(f.DeviceStack, d.frame(strings.TrimSpace(strings.TrimPrefix(body, "Device Frame:"))))
	case strings.HasPrefix(body, "Saved host") && m.is(reSaved):
		at := m.g[1]
		if at == "" {
			at = "unknown"
		}
		f.HostStackAt = table.Some(d.values.Bound(at))
		d.stack = 1
	case body == "[...]" || body == "...":
		if d.stack == 1 {
			d.hostCut++
		}
		f.Details = append(f.Details, body)
	case strings.HasPrefix(body, "at ") && !f.Kernel.Valid && !f.PC.Valid && m.is(reAt):
		d.at(f, m.g[1])
	case strings.HasPrefix(body, "by thread") && m.is(reBy):
		f.ThreadX, f.ThreadY, f.ThreadZ = some(m.g[1]), some(m.g[2]), some(m.g[3])
		f.BlockX, f.BlockY, f.BlockZ = some(m.g[4]), some(m.g[5]), some(m.g[6])
	case strings.HasPrefix(body, "Address ") && !f.Address.Valid && m.is(reAddress):
		f.Address = table.Some(m.g[1])
		f.Details = append(f.Details, d.values.Bound(body))
	case strings.HasPrefix(body, "and ") && m.is(reAndAccess):
		f.Details = append(f.Details, d.values.Bound(body))
		if m.g[3] != "" {
			f.Hazards = some(m.g[3])
		}
	case strings.Contains(body, " Thread (") && m.is(reThread):
		if !f.ThreadX.Valid {
			f.ThreadX, f.ThreadY, f.ThreadZ = some(m.g[1]), some(m.g[2]), some(m.g[3])
			if i := strings.Index(body, ") at "); i >= 0 && !f.Kernel.Valid {
				d.at(f, body[i+5:])
			}
		}
		f.Details = append(f.Details, d.values.Bound(body))
	default:
		f.Details = append(f.Details, d.values.Bound(body))
	}
}

// expectsHost: records raised at a kernel launch, an allocation or an API
// call carry a saved host backtrace unless --show-backtrace leaves it out.
func expectsHost(kind string) bool {
	switch kind {
	case "invalid_access", "uninitialized_access", "malloc_free_error", "leak", "api_error":
		return true
	}
	return false
}

func (d *decoder) flush() error {
	f := d.cur
	if f == nil {
		return nil
	}
	d.cur = nil
	d.byKind[f.Kind]++
	if f.Severity == "error" && f.Kind != "tool_message" && f.Kind != "internal_error" {
		d.displayed++
	}
	// A leak on the device heap has no host backtrace to save.
	if expectsHost(f.Kind) && !f.HostStackAt.Valid && !strings.Contains(f.Message, "device heap") {
		d.hostOmitted++
	}
	return d.tw.Row(f)
}
