// Package kernelvalidation decodes kernel validation receipt files
// written by flameox's SDKs (pkg/kernelvalidation, sdk/python
// flameox_validate.py) into the validation.receipts table.
//
// Each line is bounded at kernelvalidation.MaxLine bytes before it is
// parsed and then held to the receipt grammar (ParseReceipt, shared with
// the writers): any violation is a DECODE_FAILURE at its line. An
// unterminated last line is a writer cut off mid-write: the complete
// lines are kept and the summary says the file is incomplete.
//
// It imports formats, lines, jsonscan, table, evidence and
// pkg/kernelvalidation.
package kernelvalidation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	kv "github.com/flameox/flameox/pkg/kernelvalidation"
)

// marker opens every receipt line both writers write.
var marker = []byte(`{"schema":"` + kv.Schema + `"`)

// Spec is the kernel validation receipt format.
var Spec = &formats.Spec{
	Name:     "kernel-validation",
	Title:    "flameox kernel validation receipts (SDK JSONL)",
	Family:   formats.FamilyGPU,
	Suffixes: []string{".kernel-validation.jsonl"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.KernelValidations.Schema},
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "flameox kernel validation SDK (flameox_validate, pkg/kernelvalidation)",
	Version:  "1",
	Decoder:  formats.DecoderFunc(Decode),
}

// Sniff says Yes when the file opens with the schema marker, which both
// writers put first; anything else is NeedMore (a file named
// *.kernel-validation.jsonl is this format whatever it holds).
func Sniff(prefix []byte) formats.Verdict {
	if bytes.HasPrefix(bytes.TrimLeft(prefix, " \t"), marker) {
		return formats.Yes
	}
	return formats.NeedMore
}

// Decode reads receipts and emits validation.receipts.
func Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	tw, err := out.Begin(table.KernelValidations.Header(""))
	if err != nil {
		return err
	}
	values := in.Values()
	lr := lines.NewStrictFunc(in.R, kv.MaxLine-1, func(l *lines.Line) *evidence.Failure {
		return evidence.Failf(evidence.CodeDecodeFailure, "line %d is longer than %d bytes", l.Number, kv.MaxLine)
	})
	counts := map[string]int64{}
	var line int
	var unterminated, consoles int64
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "read line %d", line+1)
		}
		if l.Term == lines.None {
			unterminated = l.Size
			break
		}
		line = int(l.Number)
		if line%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		r, perr := kv.ParseReceipt(l.Bytes)
		if perr != nil {
			return l.Malformed(perr, fmt.Sprintf("kernel validation receipt line %d", line))
		}
		counts[r.Status]++
		row := &table.KernelValidation{Line: int64(line), Case: values.Bound(r.Case), Status: r.Status,
			Reason: table.NonEmpty(values.Bound(r.Reason)), Producer: values.Bound(r.Producer.Name),
			ProducerVersion: table.NonEmpty(values.Bound(r.Producer.Version)),
			Expected:        rowValue(values, r.Expected), Observed: rowValue(values, r.Observed),
			MaxAbsError: nullFloat(r.MaxAbsError), MaxRelError: nullFloat(r.MaxRelError),
			DType: table.NonEmpty(values.Bound(r.DType)), Device: table.NonEmpty(values.Bound(r.Device)),
			TS: r.TS, PID: r.PID}
		if t := r.Tolerance; t != nil {
			if t.Atol >= 0 {
				row.Atol = table.Some(t.Atol)
			}
			if t.Rtol >= 0 {
				row.Rtol = table.Some(t.Rtol)
			}
		}
		if r.Shape != nil {
			shape := make([]any, len(r.Shape))
			for i, d := range r.Shape {
				shape[i] = d
			}
			row.Shape = shape
		}
		if c := r.Console; c != nil {
			consoles++
			row.ConsolePath, row.ConsoleSHA256, row.ConsoleBytes = table.Some(values.Bound(c.Path)), table.Some(c.SHA256), table.Some(c.Bytes)
		}
		if err := tw.Row(row); err != nil {
			return err
		}
	}
	sum := &evidence.Summary{RowsObserved: int64(line), Complete: unterminated == 0, Metrics: map[string]evidence.Metric{
		"receipts":           {Value: int64(line), Unit: "receipts"},
		"consoles":           {Value: consoles, Unit: "files"},
		"unterminated_bytes": {Value: unterminated, Unit: "bytes"},
	}}
	for _, s := range kv.Statuses {
		sum.Metrics[s] = evidence.Metric{Value: counts[s], Unit: "receipts"}
	}
	if unterminated > 0 {
		sum.Limit(fmt.Sprintf("the file ends with an unterminated line of %d bytes after line %d: the writer was cut off; the line was discarded", unterminated, line))
	}
	if line == 0 && unterminated == 0 {
		sum.Limit("the file holds no receipt: no case was validated")
	}
	sum.Limit("console files are referenced by path and SHA-256 as the writer saw them; the decoder does not open them")
	values.Summarize(sum)
	return tw.End(sum)
}

func nullFloat(f *float64) table.Null[float64] {
	if f == nil {
		return table.Null[float64]{}
	}
	return table.Some(*f)
}

// rowValue is expected or observed as a row value: a digest becomes an
// object, strings are bounded, numbers stay exact.
func rowValue(values *formats.Values, v any) any {
	switch x := v.(type) {
	case kv.Digest:
		o := evidence.Object{"digest": x.SHA256, "bytes": nil}
		if x.Bytes >= 0 {
			o["bytes"] = x.Bytes
		}
		return o
	case string:
		return values.Bound(x)
	case json.Number, bool, nil:
		return x
	}
	return nil
}
