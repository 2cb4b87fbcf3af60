// Package pytestevents decodes the JSONL event stream written by flameox's
// pytest plugin (docs/pytest-events.md) into the pytest.outcomes table.
//
// Every line is bounded at MaxLine bytes (lines.Reader) before it is
// parsed. A stream cut
// off mid-line (a killed run) keeps its complete lines and says it is
// truncated; it is not a decode failure. Everything else that does not fit
// the schema is a DECODE_FAILURE at its line.
//
// It imports formats, lines, jsonscan, table and evidence.
package pytestevents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/table"
)

const (
	// FormatName is the registry name.
	FormatName = "pytest-events"
	// StreamFormat and StreamVersion identify the stream in its run_start
	// event; other versions are refused, not guessed at.
	StreamFormat  = "flameox-pytest-events"
	StreamVersion = 1
	// MaxLine bounds one event line, newline included.
	MaxLine = 64 << 10
	// LimitItems bounds the distinct node ids the decoder tracks.
	LimitItems = "max_items"
	// DefaultItems is LimitItems' default.
	DefaultItems = 2_000_000
)

// Spec is the pytest-events format.
var Spec = &formats.Spec{
	Name:     FormatName,
	Title:    "pytest event stream (flameox plugin)",
	Family:   formats.FamilyReliability,
	Suffixes: []string{".pytest-events.jsonl"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.PytestOutcomes.Schema},
	Limits: []formats.Limit{{Name: LimitItems, Default: DefaultItems, Unit: "items",
		Doc: "distinct test node ids (collected or reported) the decoder tracks"}},
	Producer: "pytest with the flameox_pytest plugin",
	Version:  "1",
	Decoder:  formats.DecoderFunc(Decode),
}

// Sniff recognizes a stream by its first event: run_start naming the
// stream format, after a UTF-8 byte order mark if one leads (the decoder
// skips it). It reads keys in order and stops as soon as it knows, so a
// long first line needs no more than its start. It says Yes or NeedMore,
// never No: a file named *.pytest-events.jsonl is this format whatever it
// holds, and fails as it when malformed; without that name NeedMore claims
// nothing.
func Sniff(prefix []byte) formats.Verdict {
	if first(bytes.TrimPrefix(prefix, formats.BOM)) {
		return formats.Yes
	}
	return formats.NeedMore
}

// first reports whether p opens with a run_start event of this format.
func first(p []byte) bool {
	s := jsonscan.NewBytes(p)
	if tok, err := s.Next(); err != nil || tok.Kind != jsonscan.ObjectStart {
		return false
	}
	var event, format bool
	for {
		k, err := s.Next()
		if err != nil || k.Kind != jsonscan.String {
			return false
		}
		key := string(k.Bytes)
		v, err := s.Next()
		if err != nil {
			return false
		}
		switch key {
		case "event":
			if v.Kind != jsonscan.String || string(v.Bytes) != "run_start" {
				return false
			}
			event = true
		case "format":
			if v.Kind != jsonscan.String || string(v.Bytes) != StreamFormat {
				return false
			}
			format = true
		default:
			if err := s.Skip(v); err != nil {
				return false
			}
		}
		if event && format {
			return true
		}
	}
}

// Decode reads the stream and emits pytest.outcomes.
func Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	tw, err := out.Begin(table.PytestOutcomes.Header(""))
	if err != nil {
		return err
	}
	d := &decoder{
		tw:       tw,
		in:       in,
		maxItems: in.Limit(LimitItems),
		inflight: map[key]*test{},
		starts:   map[string]int{},
		ids:      map[string]uint8{},
		counts:   map[string]int64{},
		workers:  map[string]bool{},
	}
	// MaxLine counts the newline. The plugin never writes a longer line,
	// so one is a malformed stream, refused as soon as it is seen.
	lr := lines.NewStrictFunc(in.R, MaxLine-1, func(l *lines.Line) *evidence.Failure {
		return evidence.Failf(evidence.CodeDecodeFailure, "line %d is longer than %d bytes", l.Number, MaxLine)
	})
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return d.finish()
		}
		if err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "read line %d", lr.Lines()+1)
		}
		if l.Term == lines.None {
			// A writer cut off mid-line: the line is not an event.
			d.unterminated = l.Size
			return d.finish()
		}
		d.line, d.lineOffset = int(l.Number), l.Offset
		b := l.Bytes
		// The plugin writes no byte order mark, but JSON readers may ignore
		// one (RFC 8259 §8.1), and so does this decoder; offsets stay those
		// of the file. (Cut from the line, not by wrapping in.R, which
		// would cost the line reader its small-input buffer.)
		if d.line == 1 && bytes.HasPrefix(b, formats.BOM) {
			b, d.lineOffset = b[len(formats.BOM):], l.Offset+int64(len(formats.BOM))
		}
		if d.line%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := d.event(b); err != nil {
			return err
		}
	}
}

type key struct{ nodeid, worker string }

// What the stream said about a node id.
const (
	idCollected uint8 = 1 << iota
	idRan             // started or reported
)

type phaseReport struct {
	seen     bool
	outcome  string
	wasxfail bool
	xreason  string
	message  *string
	longrepr *string
	trunc    bool
}

type test struct {
	nodeid    string
	worker    *string
	firstLine int
	file      *string
	line      int64
	duration  float64
	setup     phaseReport
	call      phaseReport
}

type decoder struct {
	tw           formats.TableWriter
	in           *formats.Input // for its limits
	maxItems     int64
	line         int
	lineOffset   int64
	unterminated int64

	started, sessionStarted, sessionFinished, runFinished bool
	exitStatus                                            *int64
	testsCollected, testsFailed                           int64 // session_finish's own counts
	failedReports                                         int64 // failed reports pytest counts in testsfailed
	interrupts                                            []string
	internalErrors                                        int64
	crashed                                               []string
	workers                                               map[string]bool
	listed                                                bool // the item list has been written
	order                                                 []string
	deselected                                            int64
	deselectedUnknown                                     bool
	inflight                                              map[key]*test
	starts                                                map[string]int
	ids                                                   map[string]uint8 // node id → idCollected|idRan
	fixtures                                              int64
	fixtureSeconds                                        float64
	sessionStart                                          float64
	sessionSeconds                                        *float64 // session_finish time - session_start time
	passedBeforeTeardown                                  int64    // passed calls whose teardown then failed
	counts                                                map[string]int64
	rows                                                  int64
	keys                                                  []string // reused by fields
}

func (d *decoder) failf(format string, args ...any) error {
	return &evidence.Failure{Code: evidence.CodeDecodeFailure,
		Message:  fmt.Sprintf("line %d: ", d.line) + fmt.Sprintf(format, args...),
		Location: evidence.Location{Line: d.line, Offset: d.lineOffset}}
}

func (d *decoder) event(line []byte) error {
	v, err := evidence.ParseValue(line, 4)
	if err != nil {
		f := &evidence.Failure{Code: evidence.CodeDecodeFailure,
			Message:  fmt.Sprintf("line %d: %v", d.line, err),
			Location: evidence.Location{Line: d.line, Offset: d.lineOffset}, Err: err}
		var se *jsonscan.Error
		if errors.As(err, &se) {
			f.Location.Offset = d.lineOffset + se.Offset
		}
		return f
	}
	o, ok := v.(evidence.Object)
	if !ok {
		return d.failf("an event must be a JSON object")
	}
	f := &fields{d: d, o: o, read: d.keys[:0]}
	defer func() { d.keys = f.read }()
	ev := f.str("event")
	seq := f.integer("seq")
	tm := f.number("time")
	if f.err != nil {
		return f.err
	}
	if seq != int64(d.line-1) {
		return d.failf("event seq %d where %d was expected: the stream has a gap or is out of order", seq, d.line-1)
	}
	if !d.started && ev != "run_start" {
		return d.failf("the stream must start with run_start, found %q", ev)
	}
	if d.runFinished {
		return d.failf("%s after run_finish", ev)
	}
	switch ev {
	case "run_start":
		err = d.runStart(f)
	case "session_start":
		// pytest starts one session per process, and the plugin writes one
		// stream per session: a second is not the stream it claims to be.
		if d.sessionStarted {
			return d.failf("a second session_start")
		}
		d.sessionStarted, d.sessionStart = true, tm
	case "collect_report":
		err = d.collectReport(f)
	case "collect_item":
		err = d.collectItem(f)
	case "collection_finish":
		err = d.collectionFinish(f)
	case "test_start":
		nodeid := f.str("nodeid")
		if f.err == nil {
			if err := d.track(nodeid); err != nil {
				return err
			}
			d.starts[nodeid]++
			d.ids[nodeid] |= idRan
		}
	case "fixture_setup":
		f.str("nodeid")
		f.str("fixture")
		f.str("scope")
		dur := f.number("duration")
		f.enum("outcome", "passed", "failed", "skipped")
		f.optStr("worker")
		if f.err == nil && dur < 0 {
			return d.failf("negative duration %v", dur)
		}
		d.fixtures++
		d.fixtureSeconds += dur
	case "test_report":
		err = d.testReport(f)
	case "test_crash":
		err = d.testCrash(f)
	case "worker_ready":
		if w := f.str("worker"); f.err == nil {
			d.workers[w] = true
		}
		f.optStr("python")
	case "worker_down":
		w := f.str("worker")
		crashed := f.boolean("crashed")
		msg, _ := f.optStr("error")
		if f.err == nil && crashed {
			d.crashed = append(d.crashed, fmt.Sprintf("xdist worker %s crashed: %s", w, msg))
		}
	case "interrupt":
		exc := f.str("exception")
		msg := f.str("message")
		d.interrupts = append(d.interrupts, exc+": "+msg)
	case "internal_error":
		f.str("text")
		f.boolean("text_truncated")
		d.internalErrors++
	case "session_finish":
		if !d.sessionStarted || d.sessionFinished {
			return d.failf("session_finish without a matching session_start")
		}
		st := f.integer("exit_status")
		d.testsCollected = f.integer("tests_collected")
		d.testsFailed = f.integer("tests_failed")
		d.exitStatus = &st
		d.sessionFinished = true
		if secs := tm - d.sessionStart; secs >= 0 {
			d.sessionSeconds = &secs
		}
	case "run_finish":
		d.runFinished = true
	default:
		return d.failf("unknown event %q", ev)
	}
	if err != nil {
		return err
	}
	return f.done(ev)
}

func (d *decoder) runStart(f *fields) error {
	if d.started {
		return d.failf("a second run_start")
	}
	if fm := f.str("format"); f.err == nil && fm != StreamFormat {
		return d.failf("format %q is not %q", fm, StreamFormat)
	}
	if v := f.integer("version"); f.err == nil && v != StreamVersion {
		return d.failf("stream version %d is not supported (this decoder reads version %d)", v, StreamVersion)
	}
	f.integer("pid")
	f.str("pytest")
	f.str("python")
	f.str("platform")
	f.optStr("xdist")
	f.array("args")
	f.integer("args_omitted")
	f.str("rootdir")
	f.str("invocation_dir")
	f.object("limits")
	d.started = true
	return nil
}

func (d *decoder) track(nodeid string) error {
	if _, known := d.ids[nodeid]; known {
		return nil
	}
	if int64(len(d.ids)) >= d.maxItems {
		f := d.in.Exceeded(LimitItems, nil)
		f.Location = evidence.Location{Line: d.line, Offset: d.lineOffset}
		return f
	}
	return nil
}

func (d *decoder) collectReport(f *fields) error {
	nodeid := f.str("nodeid")
	outcome := f.enum("outcome", "passed", "failed", "skipped")
	msg, hasMsg := f.optStr("message")
	lr, hasLR := f.optStr("longrepr")
	trunc := f.boolean("longrepr_truncated")
	if f.err != nil {
		return f.err
	}
	switch outcome {
	case "failed":
		outcome = table.OutcomeError
		d.counts[table.MetricCollectionErrors]++
		d.failedReports++
	case "skipped":
		d.counts[table.MetricCollectionSkipped]++
	}
	return d.emit(&table.PytestOutcome{
		NodeID: nodeid, Kind: table.KindCollector, Outcome: outcome, Phase: table.Some(table.PhaseCollect), Line: -1,
		Message: opt(msg, hasMsg), Longrepr: opt(lr, hasLR), LongreprTruncated: trunc,
	})
}

func (d *decoder) collectItem(f *fields) error {
	nodeid := f.str("nodeid")
	if f.err != nil {
		return f.err
	}
	if d.listed {
		return d.failf("collect_item after the item list was finished")
	}
	if err := d.track(nodeid); err != nil {
		return err
	}
	d.order = append(d.order, nodeid)
	d.ids[nodeid] |= idCollected
	return nil
}

func (d *decoder) collectionFinish(f *fields) error {
	count := f.integer("count")
	desel, hasDesel := f.optInt("deselected")
	w, hasW := f.optStr("worker")
	if f.err != nil {
		return f.err
	}
	if hasW {
		d.workers[w] = true
	}
	if d.listed {
		// Another xdist worker's collection: same items, counted only.
		if count != int64(len(d.order)) {
			return d.failf("worker %s collected %d items, the first collection listed %d", w, count, len(d.order))
		}
		return nil
	}
	if count != int64(len(d.order)) {
		return d.failf("collection_finish counts %d items but %d were listed", count, len(d.order))
	}
	d.listed = true
	if hasDesel {
		d.deselected = desel
	} else {
		d.deselectedUnknown = true
	}
	return nil
}

func (d *decoder) testReport(f *fields) error {
	nodeid := f.str("nodeid")
	when := f.enum("when", table.PhaseSetup, table.PhaseCall, table.PhaseTeardown)
	outcome := f.enum("outcome", "passed", "failed", "skipped")
	dur := f.number("duration")
	file, hasFile := f.optStr("file")
	line := f.integer("line")
	worker, hasWorker := f.optStr("worker")
	xreason, xfail := f.optStr("wasxfail")
	msg, hasMsg := f.optStr("message")
	lr, hasLR := f.optStr("longrepr")
	trunc := f.boolean("longrepr_truncated")
	if f.err != nil {
		return f.err
	}
	if dur < 0 {
		return d.failf("negative duration %v", dur)
	}
	if outcome == "failed" && !xfail {
		d.failedReports++ // as pytest's Session counts testsfailed
	}
	k := key{nodeid, worker}
	t := d.inflight[k]
	if when == table.PhaseSetup {
		if t != nil {
			return d.failf("setup report for %q while its previous run has not finished", nodeid)
		}
		if err := d.track(nodeid); err != nil {
			return err
		}
		t = &test{nodeid: nodeid, worker: ptr(worker, hasWorker), firstLine: d.line, line: -1}
		d.inflight[k] = t
		d.ids[nodeid] |= idRan
		if d.starts[nodeid] > 0 {
			d.starts[nodeid]--
		}
	} else if t == nil {
		return d.failf("%s report for %q without its setup report", when, nodeid)
	}
	t.duration += dur
	if hasFile {
		t.file = &file
	}
	t.line = line
	r := phaseReport{seen: true, outcome: outcome, wasxfail: xfail, xreason: xreason, message: ptr(msg, hasMsg), longrepr: ptr(lr, hasLR), trunc: trunc}
	switch when {
	case table.PhaseSetup:
		t.setup = r
	case table.PhaseCall:
		if t.call.seen {
			return d.failf("a second call report for %q", nodeid)
		}
		t.call = r
	case table.PhaseTeardown:
		delete(d.inflight, k)
		return d.finishTest(t, r)
	}
	return nil
}

// finishTest decides a finished test's outcome the way pytest's JUnit XML
// counts it: one row per test, plus an error row when teardown fails after
// the test already failed or errored.
func (d *decoder) finishTest(t *test, teardown phaseReport) error {
	outcome, phase, deciding := decide(t)
	if teardown.outcome == "failed" {
		if outcome == table.OutcomeFailed || outcome == table.OutcomeError {
			if err := d.testRow(t, outcome, phase, deciding); err != nil {
				return err
			}
		}
		if outcome == table.OutcomePassed && phase == table.PhaseCall {
			d.passedBeforeTeardown++
		}
		outcome, phase, deciding = table.OutcomeError, table.PhaseTeardown, teardown
	}
	return d.testRow(t, outcome, phase, deciding)
}

func decide(t *test) (outcome, phase string, r phaseReport) {
	switch {
	case t.setup.outcome == "failed":
		return table.OutcomeError, table.PhaseSetup, t.setup
	case t.setup.outcome == "skipped":
		if t.setup.wasxfail {
			return table.OutcomeXFailed, table.PhaseSetup, t.setup
		}
		return table.OutcomeSkipped, table.PhaseSetup, t.setup
	case !t.call.seen:
		// Setup passed and no call ran (--setup-only, --setup-plan).
		return table.OutcomePassed, table.PhaseSetup, t.setup
	}
	c := t.call
	switch c.outcome {
	case "failed":
		return table.OutcomeFailed, table.PhaseCall, c
	case "skipped":
		if c.wasxfail {
			return table.OutcomeXFailed, table.PhaseCall, c
		}
		return table.OutcomeSkipped, table.PhaseCall, c
	}
	if c.wasxfail {
		return table.OutcomeXPassed, table.PhaseCall, c
	}
	return table.OutcomePassed, table.PhaseCall, c
}

func (d *decoder) testRow(t *test, outcome, phase string, r phaseReport) error {
	msg := r.message
	if msg == nil && r.wasxfail && r.xreason != "" {
		msg = &r.xreason
	}
	return d.testRowValues(t, outcome, phase, msg, r.longrepr, r.trunc, table.Some(t.duration))
}

// testRowValues emits a test row; dur is the summed phase durations, null
// when no phase was reported.
func (d *decoder) testRowValues(t *test, outcome, phase string, msg, longrepr *string, trunc bool, dur table.Null[float64]) error {
	d.counts[outcome]++
	return d.emit(&table.PytestOutcome{
		NodeID: t.nodeid, Kind: table.KindTest, Outcome: outcome, Phase: table.NonEmpty(phase),
		Duration: dur, File: deref(t.file), Line: t.line, Worker: deref(t.worker),
		Message: deref(msg), Longrepr: deref(longrepr), LongreprTruncated: trunc,
	})
}

func (d *decoder) testCrash(f *fields) error {
	nodeid := f.str("nodeid")
	worker, hasWorker := f.optStr("worker")
	msg := f.str("message")
	if f.err != nil {
		return f.err
	}
	if err := d.track(nodeid); err != nil {
		return err
	}
	d.failedReports++ // xdist reports a crashed test as failed
	k := key{nodeid, worker}
	t := d.inflight[k]
	if t != nil {
		delete(d.inflight, k)
	} else {
		t = &test{nodeid: nodeid, worker: ptr(worker, hasWorker), line: -1}
		if d.starts[nodeid] > 0 {
			d.starts[nodeid]--
		}
	}
	d.ids[nodeid] |= idRan
	var dur table.Null[float64]
	if t.setup.seen {
		dur = table.Some(t.duration)
	}
	return d.testRowValues(t, table.OutcomeCrashed, table.PhaseCrash, &msg, nil, false, dur)
}

func (d *decoder) emit(row *table.PytestOutcome) error {
	d.rows++
	return d.tw.Row(row)
}

// finish emits the tests that never finished and the summary.
func (d *decoder) finish() error {
	sum := &evidence.Summary{Metrics: map[string]evidence.Metric{}}
	if d.unterminated > 0 {
		sum.Limit(fmt.Sprintf("the event stream ends with an unterminated line of %d bytes after line %d: the writer was cut off; the line was discarded", d.unterminated, d.line))
	}
	if !d.started {
		sum.Limit("the event stream holds no complete event")
	} else if !d.runFinished {
		sum.Limit("the event stream ends before run_finish")
	}
	if d.started && !d.sessionFinished {
		sum.Limit("the pytest session did not finish (no session_finish event)")
	}
	for _, i := range d.interrupts {
		sum.Limit("the session was interrupted: " + i)
	}
	for _, c := range d.crashed {
		sum.Limit(c)
	}
	if d.internalErrors > 0 {
		sum.Limit(fmt.Sprintf("pytest reported %d internal error(s)", d.internalErrors))
	}
	if d.deselectedUnknown {
		sum.Limit("the deselected count is not observable under xdist")
	}
	contradicted := d.contradictions(sum)

	// Tests that started or reported a phase but never finished.
	var open []*test
	for _, t := range d.inflight {
		open = append(open, t)
	}
	sort.Slice(open, func(i, j int) bool { return open[i].firstLine < open[j].firstLine })
	for _, t := range open {
		phase := table.PhaseCall
		switch {
		case t.setup.outcome != "passed":
			phase = table.PhaseTeardown
		case t.call.seen:
			phase = table.PhaseTeardown
		}
		// Keep a failure the test already reported before it was cut off.
		var msg, lr *string
		var trunc bool
		if _, _, r := decide(t); r.outcome == "failed" {
			msg, lr, trunc = r.message, r.longrepr, r.trunc
		}
		if err := d.testRowValues(t, table.OutcomeInterrupted, phase, msg, lr, trunc, table.Some(t.duration)); err != nil {
			return err
		}
	}
	starts := make([]string, 0, len(d.starts))
	for n, c := range d.starts {
		if c > 0 {
			starts = append(starts, n)
		}
	}
	sort.Strings(starts)
	for _, n := range starts {
		for range d.starts[n] {
			if err := d.testRowValues(&test{nodeid: n, line: -1}, table.OutcomeInterrupted, table.PhaseSetup, nil, nil, false, table.Null[float64]{}); err != nil {
				return err
			}
		}
	}
	for _, n := range d.order {
		if d.ids[n]&idRan == 0 {
			if err := d.testRowValues(&test{nodeid: n, line: -1}, table.OutcomeUnexecuted, "", nil, nil, false, table.Null[float64]{}); err != nil {
				return err
			}
		}
	}

	// Every metric states its unit: a count says what it counts.
	for _, o := range []string{table.OutcomePassed, table.OutcomeFailed, table.OutcomeError, table.OutcomeSkipped,
		table.OutcomeXFailed, table.OutcomeXPassed, table.OutcomeCrashed, table.OutcomeInterrupted, table.OutcomeUnexecuted} {
		sum.Metrics[o] = table.PytestMetric(o, d.counts[o])
	}
	for _, o := range []string{table.MetricCollectionErrors, table.MetricCollectionSkipped} {
		sum.Metrics[o] = table.PytestMetric(o, d.counts[o])
	}
	sum.Metrics[table.MetricCollected] = table.PytestMetric(table.MetricCollected, int64(len(d.order)))
	if d.deselectedUnknown {
		sum.Metrics[table.MetricDeselected] = table.PytestMetric(table.MetricDeselected, nil)
	} else {
		sum.Metrics[table.MetricDeselected] = table.PytestMetric(table.MetricDeselected, d.deselected)
	}
	if d.exitStatus != nil {
		sum.Metrics[table.MetricExitStatus] = table.PytestMetric(table.MetricExitStatus, *d.exitStatus)
	} else {
		sum.Metrics[table.MetricExitStatus] = table.PytestMetric(table.MetricExitStatus, nil)
	}
	sum.Metrics[table.MetricSessionFinished] = table.PytestMetric(table.MetricSessionFinished, d.sessionFinished)
	sum.Metrics[table.MetricSessionInterrupt] = table.PytestMetric(table.MetricSessionInterrupt, len(d.interrupts) > 0)
	sum.Metrics[table.MetricCrashedWorkers] = table.PytestMetric(table.MetricCrashedWorkers, int64(len(d.crashed)))
	sum.Metrics[table.MetricWorkers] = table.PytestMetric(table.MetricWorkers, int64(len(d.workers)))
	sum.Metrics[table.MetricInternalErrors] = table.PytestMetric(table.MetricInternalErrors, d.internalErrors)
	sum.Metrics[table.MetricTruncatedBytes] = table.PytestMetric(table.MetricTruncatedBytes, d.unterminated)
	sum.Metrics[table.MetricFixtureSetups] = table.PytestMetric(table.MetricFixtureSetups, d.fixtures)
	sum.Metrics[table.MetricFixtureSeconds] = table.PytestMetric(table.MetricFixtureSeconds, d.fixtureSeconds)
	sum.Metrics[table.MetricPytestPassed] = table.PytestMetric(table.MetricPytestPassed, d.counts[table.OutcomePassed]+d.passedBeforeTeardown)
	if d.sessionSeconds != nil {
		sum.Metrics[table.MetricSessionSeconds] = table.PytestMetric(table.MetricSessionSeconds, *d.sessionSeconds)
	} else {
		sum.Metrics[table.MetricSessionSeconds] = table.PytestMetric(table.MetricSessionSeconds, nil)
	}
	sum.RowsObserved = d.rows
	sum.Complete = d.runFinished && d.sessionFinished && len(d.interrupts) == 0 && len(d.crashed) == 0 &&
		d.internalErrors == 0 && d.unterminated == 0 && !contradicted
	sum.Coverage = evidence.Object{"events": int64(d.line)}
	return d.tw.End(sum)
}

// contradictions compares session_finish's own counts with the stream and
// states each disagreement as a limitation: pytest counted items or failed
// reports the stream does not hold (events were lost, or the stream was
// edited), so its rows are not the whole session. It reports whether any
// was found.
func (d *decoder) contradictions(sum *evidence.Summary) bool {
	if !d.sessionFinished {
		return false
	}
	found := false
	// pytest sets testscollected after the collection hooks; an internal
	// error in them leaves it 0, so only a whole collection is compared.
	if d.listed && d.internalErrors == 0 && d.testsCollected != int64(len(d.order)) {
		sum.Limit(fmt.Sprintf("session_finish says %d tests were collected but the stream lists %d items: the stream does not hold the whole session", d.testsCollected, len(d.order)))
		found = true
	}
	// testsfailed counts failed collection and test reports (xfail
	// excluded) and, under xdist, crashed tests.
	if d.testsFailed != d.failedReports {
		sum.Limit(fmt.Sprintf("session_finish says %d reports failed but the stream holds %d failed reports: the stream does not hold the whole session", d.testsFailed, d.failedReports))
		found = true
	}
	return found
}

func ptr(s string, ok bool) *string {
	if !ok {
		return nil
	}
	return &s
}

// opt is a nullable column from an optional event field.
func opt(s string, ok bool) table.Null[string] { return table.Null[string]{V: s, Valid: ok} }

func deref(s *string) table.Null[string] {
	if s == nil {
		return table.Null[string]{}
	}
	return table.Some(*s)
}

// fields reads typed event fields, remembering the first problem and which
// keys were read, so that an unknown key is refused too.
type fields struct {
	d    *decoder
	o    evidence.Object
	read []string
	err  error
}

func (f *fields) get(k string) (any, bool) {
	if f.err != nil {
		return nil, false
	}
	v, ok := f.o[k]
	if !ok {
		f.err = f.d.failf("field %q is missing", k)
		return nil, false
	}
	f.read = append(f.read, k)
	return v, true
}

func (f *fields) fail(k, want string) {
	if f.err == nil {
		f.err = f.d.failf("field %q must be %s", k, want)
	}
}

// as reads field k as a T, failing as want says when it holds another
// type; ok is false when the field is missing or not a T.
func as[T any](f *fields, k, want string) (v T, ok bool) {
	x, ok := f.get(k)
	if !ok {
		return v, false
	}
	if v, ok = x.(T); !ok {
		f.fail(k, want)
	}
	return v, ok
}

func (f *fields) str(k string) string {
	s, _ := as[string](f, k, "a string")
	return s
}

func (f *fields) optStr(k string) (string, bool) {
	v, ok := f.get(k)
	if !ok || v == nil {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		f.fail(k, "a string or null")
	}
	return s, ok
}

func (f *fields) enum(k string, allowed ...string) string {
	s := f.str(k)
	if f.err == nil && !slices.Contains(allowed, s) {
		f.fail(k, fmt.Sprintf("one of %v, not %q", allowed, s))
	}
	return s
}

func (f *fields) integer(k string) int64 {
	n, ok := as[json.Number](f, k, "an integer")
	if !ok {
		return 0
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		f.fail(k, "an integer")
	}
	return i
}

func (f *fields) optInt(k string) (int64, bool) {
	v, ok := f.o[k]
	if ok && v == nil {
		f.read = append(f.read, k)
		return 0, false
	}
	return f.integer(k), true
}

func (f *fields) number(k string) float64 {
	n, ok := as[json.Number](f, k, "a number")
	if !ok {
		return 0
	}
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		f.fail(k, "a finite number")
	}
	return x
}

func (f *fields) boolean(k string) bool {
	b, _ := as[bool](f, k, "a boolean")
	return b
}

func (f *fields) array(k string) { as[[]any](f, k, "an array") }

func (f *fields) object(k string) { as[evidence.Object](f, k, "an object") }

// done refuses keys the schema does not define for the event.
func (f *fields) done(ev string) error {
	if f.err != nil {
		return f.err
	}
	if len(f.read) != len(f.o) {
		var extra []string
		for k := range f.o {
			if !slices.Contains(f.read, k) {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		return f.d.failf("%s event has fields outside schema version %d: %q", ev, StreamVersion, extra)
	}
	return nil
}
