package aiperf

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"

	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/inference"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/table"
)

// sniffCSV says Yes to AIPerf's CSV, whose first line is the statistics
// header "Metric,avg,min,max,…".
func sniffCSV(prefix []byte) formats.Verdict {
	sc := lines.Split(prefix)
	l, err := sc.Next()
	if err != nil {
		return formats.NeedMore
	}
	if bytes.HasPrefix(l.Bytes, []byte("Metric,avg,min,max,")) {
		return formats.Yes
	}
	return formats.No
}

// csvUnits are the units AIPerf puts in parentheses after a header.
func csvUnit(u string) bool {
	switch u {
	case "ms", "ns", "us", "sec", "s", "tokens", "requests", "%", "KB", "MB", "GB", "B", "ratio", "count", "W", "J", "MHz", "C":
		return true
	}
	return strings.Contains(u, "/")
}

// splitHeader splits "Time to First Token (ms)" into its name and unit.
func splitHeader(h string) (name, unit string) {
	h = strings.TrimSpace(h)
	if strings.HasSuffix(h, ")") {
		if i := strings.LastIndex(h, " ("); i > 0 && csvUnit(h[i+2:len(h)-1]) {
			return h[:i], h[i+2 : len(h)-1]
		}
	}
	return h, ""
}

func decodeCSV(ctx context.Context, in *formats.Input, out formats.Sink) error {
	vals, ledger := in.Values(), inference.NewLedger()
	lr := lines.NewStrict(in.R, int(in.Limit(inference.LimitLine)), inference.LimitLine)
	var stats []table.InferenceStat
	var cols []string // the current section's header; nil between sections
	section := ""
	var rows, metrics int64
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return lr.Errorf(evidence.CodeIOFailure, err, "read the CSV")
		}
		if rows%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if len(bytes.TrimSpace(l.Bytes)) == 0 {
			cols, section = nil, ""
			continue
		}
		if !utf8.Valid(l.Bytes) {
			return lr.Err(evidence.CodeDecodeFailure, "AIPerf CSV line %d is not UTF-8", l.Number)
		}
		rec, err := csv.NewReader(bytes.NewReader(l.Bytes)).Read()
		if err != nil {
			return lr.Errorf(evidence.CodeDecodeFailure, err, "AIPerf CSV line %d", l.Number)
		}
		if cols == nil {
			cols = rec
			switch {
			case len(rec) > 1 && rec[0] == "Metric" && rec[1] == "avg":
				section = "stats"
			case len(rec) == 2 && rec[0] == "Metric" && rec[1] == "Value":
				section = "values"
			case len(rec) > 0 && rec[0] == "Endpoint":
				// GPU telemetry: its rows name the telemetry endpoints.
				section = "telemetry"
			default:
				section = "unknown"
			}
			if l.Number == 1 && section != "stats" {
				return lr.Err(evidence.CodeDecodeFailure, "AIPerf CSV: the first line must be the statistics header Metric,avg,…")
			}
			continue
		}
		rows++
		switch section {
		case "telemetry":
			ledger.Omit("gpu_telemetry rows")
			continue
		case "unknown":
			ledger.Unknowns()
			continue
		}
		if len(rec) != len(cols) {
			return lr.Err(evidence.CodeDecodeFailure, "AIPerf CSV line %d has %d fields; its header has %d", l.Number, len(rec), len(cols))
		}
		name, unit := splitHeader(rec[0])
		metric := headerMetric(name)
		metrics++
		for i := 1; i < len(rec); i++ {
			if rec[i] == "" {
				continue
			}
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil || !inference.Finite(v) {
				return lr.Err(evidence.CodeDecodeFailure, "AIPerf CSV line %d field %d: %q is not a number", l.Number, i+1, rec[i])
			}
			st := "value"
			if section == "stats" {
				var ok bool
				if st, ok = statName(cols[i]); !ok {
					ledger.Unknowns()
					continue
				}
			}
			nv, nu := inference.Normalize(v, unit)
			stats = append(stats, table.InferenceStat{Metric: metric, Native: vals.Bound(rec[0]), Stat: st, Value: nv, Unit: nu})
		}
	}
	if metrics == 0 {
		return evidence.Failf(evidence.CodeDecodeFailure, "AIPerf CSV: no metrics")
	}
	run := table.InferenceRun{Producer: inference.AIPerf}
	derive(&run, stats)
	run.UnknownKeys, run.OmittedFields = ledger.UnknownCount(), ledger.OmittedCount()
	s := &evidence.Summary{RowsObserved: int64(len(stats)), Complete: true,
		Metrics: map[string]evidence.Metric{"metrics": {Value: metrics, Unit: "metrics"}}}
	s.Limit("AIPerf's CSV rounds every value to 2 decimals; the JSON export has them whole")
	ledger.Summarize(s)
	vals.Summarize(s)
	return emit(out, &run, stats, s)
}
