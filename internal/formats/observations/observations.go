// Package observations decodes observation files written by flameox's
// SDKs (pkg/observe, sdk/python) into the observations.records table.
//
// Each line is bounded at observe.MaxLine bytes (lines.Reader) before it
// is parsed and then held to the SDK's own record grammar
// (observe.ParseRecord): any violation is a DECODE_FAILURE at its line,
// never a successful block. An
// unterminated last line is a workload cut off mid-write: the complete
// lines are kept and the summary says the file is truncated.
//
// It imports formats, lines, jsonscan, table, evidence, and pkg/observe for the record model it shares with the SDK.
package observations

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/pkg/observe"
)

// FormatName is the registry name.
const FormatName = "observations"

// Spec is the observations format.
var Spec = &formats.Spec{
	Name:     FormatName,
	Title:    "flameox observations (SDK JSONL)",
	Family:   formats.FamilyReliability,
	Suffixes: []string{".observations.jsonl"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.ObservationRecords.Schema},
	Producer: "flameox observations SDK (flameox_observe, pkg/observe)",
	Version:  "1",
	Decoder:  formats.DecoderFunc(Decode),
}

// Sniff says Yes when the first line is a record, or claims to be one: a
// JSON object whose first member is the record version "v", which both
// SDKs write first. Such a line that breaks the grammar then fails as this
// format instead of being previewed. Anything else is NeedMore, never No:
// a file named *.observations.jsonl is this format whatever it holds, and
// fails as it when malformed; without that name NeedMore claims nothing.
func Sniff(prefix []byte) formats.Verdict {
	sc := lines.Split(prefix)
	l, err := sc.Next()
	if err != nil { // empty
		return formats.NeedMore
	}
	if l.Term != lines.None {
		if _, err := observe.ParseRecord(l.Bytes); err == nil {
			return formats.Yes
		}
	}
	if bytes.HasPrefix(bytes.TrimLeft(l.Bytes, " \t"), []byte(`{"v":`)) {
		return formats.Yes
	}
	return formats.NeedMore
}

// Decode reads records and emits observations.records.
func Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	tw, err := out.Begin(table.ObservationRecords.Header(""))
	if err != nil {
		return err
	}
	// observe.MaxLine counts the newline. The SDK never writes a longer
	// line, so one is outside the grammar, refused as soon as it is seen.
	lr := lines.NewStrictFunc(in.R, observe.MaxLine-1, func(l *lines.Line) *evidence.Failure {
		return evidence.Failf(evidence.CodeDecodeFailure, "line %d is longer than %d bytes", l.Number, observe.MaxLine)
	})
	counts := map[string]int64{}
	pids := map[int64]bool{}
	var line int
	var unterminated int64
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "read line %d", line+1)
		}
		if l.Term == lines.None {
			unterminated = l.Size // a workload cut off mid-write
			break
		}
		line = int(l.Number)
		if line%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		r, perr := observe.ParseRecord(l.Bytes)
		if perr != nil {
			return l.Malformed(perr, fmt.Sprintf("line %d", line))
		}
		counts[r.Kind]++
		pids[r.PID] = true
		if err := tw.Row(&table.ObservationRecord{
			Line: int64(line), Kind: r.Kind, Name: table.NonEmpty(r.Name), Phase: table.NonEmpty(r.Phase),
			Unit: table.NonEmpty(r.Unit), Value: r.Value, TS: r.TS, PID: r.PID,
		}); err != nil {
			return err
		}
	}
	sum := &evidence.Summary{RowsObserved: int64(line), Complete: unterminated == 0, Metrics: map[string]evidence.Metric{
		"observations":       {Value: counts[observe.KindObservation], Unit: "records"},
		"phase_starts":       {Value: counts[observe.KindPhaseStart], Unit: "records"},
		"phase_ends":         {Value: counts[observe.KindPhaseEnd], Unit: "records"},
		"processes":          {Value: int64(len(pids)), Unit: "processes"},
		"unterminated_bytes": {Value: unterminated, Unit: "bytes"},
	}}
	if unterminated > 0 {
		sum.Limit(fmt.Sprintf("the file ends with an unterminated line of %d bytes after line %d: the writer was cut off; the line was discarded", unterminated, line))
	}
	return tw.End(sum)
}
