// Package observations decodes observation files written by flameox's
// SDKs (pkg/observe, sdk/python) into the observations.records table.
//
// Each line is bounded at observe.MaxLine bytes before it is parsed and
// then held to the SDK's own record grammar (observe.ParseRecord): any
// violation is a DECODE_FAILURE at its line, never a successful block. An
// unterminated last line is a workload cut off mid-write: the complete
// lines are kept and the summary says the file is truncated.
package observations

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/pkg/observe"
)

// FormatName is the registry name.
const FormatName = "observations"

// Spec is the observations format.
var Spec = &formats.Spec{
	Name:     FormatName,
	Title:    "flameox observations (SDK JSONL)",
	Family:   "Reliability",
	Suffixes: []string{".observations.jsonl"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.ObservationRecords.Schema},
	Producer: "flameox observations SDK (flameox_observe, pkg/observe)",
	Version:  "1",
	Decoder:  formats.DecoderFunc(Decode),
}

// Sniff accepts a prefix whose first line is a valid record.
func Sniff(prefix []byte) formats.Verdict {
	for i, c := range prefix {
		if c == '\n' {
			if _, err := observe.ParseRecord(prefix[:i+1]); err != nil {
				return formats.No
			}
			return formats.Yes
		}
	}
	if len(prefix) > 0 && prefix[0] != '{' {
		return formats.No
	}
	return formats.NeedMore
}

// Decode reads records and emits observations.records.
func Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	tw, err := out.Begin(&evidence.Table{Name: table.ObservationRecords.Name, Columns: table.ObservationRecords.EvidenceColumns("")})
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(in.R, observe.MaxLine)
	counts := map[string]int64{}
	pids := map[int64]bool{}
	var line int
	var offset, unterminated int64
	for {
		raw, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return &evidence.Failure{Code: evidence.CodeDecodeFailure,
				Message:  fmt.Sprintf("line %d is longer than %d bytes", line+1, observe.MaxLine),
				Location: evidence.Location{Line: line + 1, Offset: offset}}
		case err == io.EOF:
			unterminated = int64(len(raw))
		case err != nil:
			return evidence.Wrap(evidence.CodeIOFailure, err, "read line %d", line+1)
		}
		if err == io.EOF {
			break
		}
		line++
		if line%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		r, perr := observe.ParseRecord(raw)
		if perr != nil {
			f := &evidence.Failure{Code: evidence.CodeDecodeFailure, Err: perr,
				Message:  fmt.Sprintf("line %d: %v", line, perr),
				Location: evidence.Location{Line: line, Offset: offset}}
			var se *jsonscan.Error
			if errors.As(perr, &se) {
				f.Location.Offset = offset + se.Offset
			}
			return f
		}
		offset += int64(len(raw))
		counts[r.Kind]++
		pids[r.PID] = true
		if err := tw.Row(evidence.Object{
			"artifact_id": in.Artifact.ID, "line": int64(line), "kind": r.Kind,
			"name": orNil(r.Name), "phase": orNil(r.Phase), "unit": orNil(r.Unit), "value": r.Value,
			"ts": r.TS, "pid": r.PID,
		}); err != nil {
			return err
		}
	}
	sum := &evidence.Summary{RowsObserved: int64(line), Complete: unterminated == 0, Metrics: map[string]evidence.Metric{
		"observations":       {Value: counts[observe.KindObservation]},
		"phase_starts":       {Value: counts[observe.KindPhaseStart]},
		"phase_ends":         {Value: counts[observe.KindPhaseEnd]},
		"processes":          {Value: int64(len(pids))},
		"unterminated_bytes": {Value: unterminated, Unit: "bytes"},
	}}
	if unterminated > 0 {
		sum.Limit(fmt.Sprintf("the file ends with an unterminated line of %d bytes after line %d: the writer was cut off; the line was discarded", unterminated, line))
	}
	return tw.End(sum)
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
