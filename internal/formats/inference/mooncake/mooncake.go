// Package mooncake decodes Mooncake request traces (the FAST'25 traces
// kvcache-ai/Mooncake publishes): one JSON object per line with the
// arrival timestamp in ms, input_length and output_length in tokens, and
// hash_ids, the ids of the request's KV-cache blocks, each a hash of the
// prompt prefix up to that block.
//
// The hash values are never emitted. Each request row carries only how
// many blocks it has and how many of them an earlier request in the file
// already had (reused_blocks); the prefix-reuse ratio of the trace is
// reused blocks / blocks, summed over requests in file order: the share of
// block lookups a cache holding every earlier request's blocks would hit.
//
// It imports evidence, formats, formats/inference, jsonscan, lines and table.
package mooncake

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/inference"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/table"
)

// LimitBlocks names the bound on the distinct block hashes a trace may
// hold: the reader keeps the set of those seen to count reuse.
const LimitBlocks = "max_distinct_blocks"

// Spec is the Mooncake trace format.
var Spec = &formats.Spec{
	Name:   "mooncake-trace",
	Title:  "Mooncake request trace (JSONL: timestamp, input_length, output_length, hash_ids)",
	Family: inference.Family,
	Sniff:  sniff,
	Tables: []*table.Schema{table.InferenceRuns.Schema, table.InferenceRequests.Schema},
	Limits: []formats.Limit{inference.LineLimit(16<<20, "one trace record"), inference.TokenLimit,
		{Name: LimitBlocks, Default: 1 << 26, Unit: "blocks", Doc: "distinct hash_ids in the trace"}},
	Options:  inference.Options,
	Producer: "Mooncake trace (kvcache-ai/Mooncake FAST25-release)",
	Version:  "1",
	Decoder:  formats.DecoderFunc(decode),
}

// sniff says Yes to a first line whose object has the trace's keys.
func sniff(prefix []byte) formats.Verdict {
	sc := lines.Split(prefix)
	l, err := sc.Next()
	if err != nil {
		return formats.NeedMore
	}
	keys, _, ok := inference.TopKeys(l.Bytes)
	if !ok {
		return formats.No
	}
	if keys["timestamp"] && keys["input_length"] && (keys["output_length"] || keys["hash_ids"]) {
		return formats.Yes
	}
	return formats.No
}

type reader struct {
	in              *formats.Input
	ledger          *inference.Ledger
	seen            map[int64]struct{}
	blocks, reused  int64
	row             table.InferenceRequest
	ids             []int64
	first, last     int64
	unordered       int64
	has             bool
	inputs, outputs int64
	maxDistinct     int64
	line            *lines.Line
	scan            *jsonscan.Scanner // reused line after line
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	r := &reader{in: in, ledger: inference.NewLedger(), seen: map[int64]struct{}{}, maxDistinct: in.Limit(LimitBlocks)}
	lr := lines.NewStrict(in.R, int(in.Limit(inference.LimitLine)), inference.LimitLine)
	reqs := formats.NewLazyTable(out, table.InferenceRequests.Header(""))
	keep := out.Wants(table.InferenceRequests.Schema)
	vals := in.Values()
	var n int64
	fail := func(err error) error {
		s := r.summary(n, vals)
		s.Complete = false
		s.Truncation = &evidence.Truncation{Reason: "document_incomplete"}
		s.Limit(fmt.Sprintf("decoding stopped after %d requests: %v", n, err))
		return reqs.Abort(err, s)
	}
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(lr.Errorf(evidence.CodeIOFailure, err, "read the trace"))
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return fail(ctx.Err())
		}
		if len(l.Bytes) == 0 {
			continue
		}
		r.line = l
		if err := r.parse(l.Bytes, n, l.Offset); err != nil {
			var f *evidence.Failure
			if !errors.As(err, &f) {
				f = l.Malformed(err, fmt.Sprintf("Mooncake trace line %d", l.Number))
			}
			return fail(l.At(f))
		}
		n++
		if keep {
			if err := reqs.Row(&r.row); err != nil {
				return err
			}
		}
	}
	if err := reqs.End(r.summary(n, vals)); err != nil {
		return err
	}
	tw, err := out.Begin(table.InferenceRuns.Header(""))
	if err != nil {
		return err
	}
	run := &table.InferenceRun{Producer: inference.Mooncake, Requests: table.Some(n),
		InputTokens: table.Some(r.inputs), OutputTokens: table.Some(r.outputs),
		UnknownKeys: r.ledger.UnknownCount(), OmittedFields: r.ledger.OmittedCount()}
	if r.has {
		run.Duration = table.Some(r.last - r.first)
	}
	if err := tw.Row(run); err != nil {
		return err
	}
	return tw.End(&evidence.Summary{RowsObserved: 1, Complete: true})
}

func (r *reader) summary(n int64, vals *formats.Values) *evidence.Summary {
	s := &evidence.Summary{RowsObserved: n, Complete: true, Metrics: map[string]evidence.Metric{
		"requests":        {Value: n, Unit: "requests"},
		"blocks":          {Value: r.blocks, Unit: "blocks"},
		"reused_blocks":   {Value: r.reused, Unit: "blocks"},
		"distinct_blocks": {Value: int64(len(r.seen)), Unit: "blocks"},
		"input_tokens":    {Value: r.inputs, Unit: "tokens"},
		"output_tokens":   {Value: r.outputs, Unit: "tokens"},
		"line_bound":      {Value: r.in.Limit(inference.LimitLine), Unit: "bytes"},
	}}
	if r.blocks > 0 {
		s.Metrics["prefix_reuse_ratio"] = evidence.Metric{Value: float64(r.reused) / float64(r.blocks), Unit: "ratio"}
	}
	if r.unordered > 0 {
		s.Limit(fmt.Sprintf("%d requests arrive before the one above them: inter-arrival gaps follow file order", r.unordered))
	}
	s.Limit("hash_ids are counted (blocks, reused_blocks) and never emitted")
	r.ledger.Summarize(s)
	vals.Summarize(s)
	return s
}

func (r *reader) parse(line []byte, index, at int64) error {
	r.scan = r.in.JSONLineScanner(r.scan, line, at, 16, formats.LimitToken)
	w := jsonscan.Walker{S: r.scan}
	r.row = table.InferenceRequest{Request: index, OK: true}
	r.ids = r.ids[:0]
	var ts, in, out int64
	var hasTS, hasIn, hasIDs bool
	err := w.Document("a Mooncake trace record", func(key []byte) error {
		var err error
		switch string(key) {
		case "timestamp":
			ts, err = w.Int("timestamp")
			hasTS = true
		case "input_length":
			in, err = w.Int("input_length")
			hasIn = true
		case "output_length":
			out, err = w.Int("output_length")
			r.row.OutputTokens = table.Some(out)
		case "hash_ids":
			hasIDs = true
			err = w.Ints("hash_ids", func(v int64) error {
				r.ids = append(r.ids, v)
				return nil
			})
		default:
			r.ledger.Unknowns()
			err = w.SkipValue()
		}
		return err
	})
	if err != nil {
		return err
	}
	if !hasTS || !hasIn {
		return fmt.Errorf("a record needs timestamp and input_length")
	}
	if ts < 0 || in < 0 || out < 0 {
		return fmt.Errorf("negative timestamp or length")
	}
	start := ts * 1_000_000 // ms
	r.row.Start, r.row.InputTokens = table.Some(start), table.Some(in)
	if r.has && start < r.last {
		r.unordered++
	}
	if !r.has {
		r.first = start
	}
	r.has, r.last = true, max(r.last, start)
	r.inputs += in
	r.outputs += out
	if hasIDs {
		var reused int64
		for _, id := range r.ids {
			if _, ok := r.seen[id]; ok {
				reused++
			}
		}
		for _, id := range r.ids {
			if _, ok := r.seen[id]; !ok {
				if int64(len(r.seen)) >= r.maxDistinct {
					return r.in.Exceeded(LimitBlocks, nil)
				}
				r.seen[id] = struct{}{}
			}
		}
		r.blocks += int64(len(r.ids))
		r.reused += reused
		r.row.Blocks, r.row.ReusedBlocks = table.Some(int64(len(r.ids))), table.Some(reused)
	}
	return nil
}
