// Package inference holds what the readers of inference-benchmark exports
// (AIPerf, vLLM bench serve, SGLang bench_serving, Mooncake traces) share:
// their family and tables, the line bound, unit normalization (times to
// ns, rates to "/s"), the top-level key sniffer that tells vLLM from
// SGLang, and the ledger of omitted and unknown fields every summary
// states. The readers live in its subpackages.
//
// What every reader omits, by construction: prompts, generated text,
// error text, endpoint addresses, tool definitions, request payloads,
// prefix-hash values and free-form metadata. Their values are skipped by
// the tokenizer without being kept; only their presence is counted.
//
// It imports evidence, formats, jsonscan, param and table.
package inference

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Family is the evidence family of the inference readers.
const Family = "Inference exports"

// Tables are the tables every inference reader may emit.
var Tables = []*table.Schema{table.InferenceRuns.Schema, table.InferenceRequests.Schema, table.InferenceStats.Schema}

// Producers, as the producer column spells them.
const (
	AIPerf   = "aiperf"
	VLLM     = "vllm"
	SGLang   = "sglang"
	Mooncake = "mooncake"
)

// PercentileMethod is how all three benchmark tools compute percentiles
// (numpy.percentile's default, and AIPerf's own vectorized copy of it).
const PercentileMethod = "linear interpolation between closest ranks (numpy default); population std"

// LimitLine names the bound on one line of a line-oriented export.
const LimitLine = "max_line_bytes"

// LineLimit declares it: a per-request line longer than this is refused
// (LIMIT_EXCEEDED at its line), never cut, since a cut record would lose
// its metrics.
func LineLimit(def int64, what string) formats.Limit {
	return formats.Limit{Name: LimitLine, Default: def, Unit: "bytes", Doc: "bytes in one line (" + what + ")"}
}

// TokenLimit is the JSON token bound the readers declare.
var TokenLimit = formats.Limit{Name: formats.LimitToken, Default: 1 << 20, Unit: "bytes",
	Doc: "bytes in one JSON string or number (omitted texts count: a longer one is refused, not kept)"}

// Options are the decoder options every reader takes.
var Options = []param.Param{formats.ValueBytesParam}

// TimeFactor returns the factor that converts a time in unit to ns.
func TimeFactor(unit string) (float64, bool) {
	switch strings.ToLower(unit) {
	case "ns", "nanoseconds":
		return 1, true
	case "us", "µs", "microseconds":
		return 1e3, true
	case "ms", "milliseconds":
		return 1e6, true
	case "s", "sec", "seconds":
		return 1e9, true
	}
	return 0, false
}

// Normalize converts value in unit to flameox's unit: times to ns, "/sec"
// rates to "/s"; other units are kept as written.
func Normalize(value float64, unit string) (float64, string) {
	if f, ok := TimeFactor(unit); ok {
		return value * f, "ns"
	}
	return value, strings.ReplaceAll(unit, "/sec", "/s")
}

// Ledger counts what a reader did not emit: fields it omits on purpose
// (by name) and keys it does not know (by count only: vLLM's --metadata
// makes top-level keys of whatever a user typed, so even a key's name may
// be a secret).
type Ledger struct {
	Omitted map[string]int64
	unknown int64
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{Omitted: map[string]int64{}} }

// Omit records an omitted field, by the reader's own name for it.
func (l *Ledger) Omit(field string) { l.Omitted[field]++ }

// Unknowns records an unknown key.
func (l *Ledger) Unknowns() { l.unknown++ }

// UnknownCount is the number of unknown keys seen.
func (l *Ledger) UnknownCount() int64 { return l.unknown }

// OmittedCount is the number of omitted fields seen.
func (l *Ledger) OmittedCount() int64 {
	var n int64
	for _, c := range l.Omitted {
		n += c
	}
	return n
}

// Summarize states the ledger in s: counts as metrics, and limitations
// naming the omitted fields.
func (l *Ledger) Summarize(s *evidence.Summary) {
	if s.Metrics == nil {
		s.Metrics = map[string]evidence.Metric{}
	}
	s.Metrics["omitted_fields"] = evidence.Metric{Value: l.OmittedCount(), Unit: "fields"}
	s.Metrics["unknown_keys"] = evidence.Metric{Value: l.unknown, Unit: "keys"}
	if len(l.Omitted) > 0 {
		names := make([]string, 0, len(l.Omitted))
		for n := range l.Omitted {
			names = append(names, n)
		}
		sort.Strings(names)
		s.Limit("omitted by design (values never read into rows): " + strings.Join(names, ", "))
	}
	if l.unknown > 0 {
		s.Limit(fmt.Sprintf("%d keys this reader does not know were skipped and counted, not emitted", l.unknown))
	}
}

// Finite reports whether f is a usable number.
func Finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Number reads a JSON number, or null (ok false), as a float64.
func Number(w *jsonscan.Walker, what string) (v float64, ok bool, err error) {
	tok, err := w.Value()
	if err != nil || tok.Kind == jsonscan.Null {
		return 0, false, err
	}
	v, err = w.FloatOf(tok, what)
	return v, err == nil, err
}

// TopKeys returns the keys of the top-level object that begins prefix,
// as far as the prefix holds them, with whether the object closed within
// it. Values are skipped, never kept. ok is false when the prefix does not
// open an object or is malformed before it is cut.
func TopKeys(prefix []byte) (keys map[string]bool, closed, ok bool) {
	s := jsonscan.NewBytes(prefix)
	s.AllowTrailing, s.AllowNonFinite = true, true
	w := jsonscan.Walker{S: s}
	tok, err := w.Value()
	if err != nil || tok.Kind != jsonscan.ObjectStart {
		return nil, false, false
	}
	keys = map[string]bool{}
	err = w.Members(tok, "object", func(k []byte) error {
		keys[string(k)] = true
		return w.SkipValue()
	})
	if err != nil {
		// A prefix cut inside the object is what sniffers see of big
		// files: the keys read so far stand.
		return keys, false, len(keys) > 0
	}
	return keys, true, true
}

// HasAny reports whether keys holds any of names.
func HasAny(keys map[string]bool, names ...string) bool {
	for _, n := range names {
		if keys[n] {
			return true
		}
	}
	return false
}

// Strings bounds s for a row (nil bound keeps it), or null when empty.
func Strings(v *formats.Values, s string) table.Null[string] {
	if s == "" {
		return table.Null[string]{}
	}
	return table.Some(v.Bound(s))
}

// Fail types a decoding error: a failure stays as it is, a read error is
// IO_FAILURE, anything else (a syntax error located by the scanner, a
// structure the reader refuses) DECODE_FAILURE, prefixed with what.
func Fail(err error, what string) *evidence.Failure {
	code := evidence.CodeDecodeFailure
	if errors.Is(err, jsonscan.ErrRead) {
		code = evidence.CodeIOFailure
	}
	return evidence.Wrap(code, err, "%s", what)
}

// Add adds o's counts to l (a worker's ledger into the decoder's).
func (l *Ledger) Add(o *Ledger) {
	for k, n := range o.Omitted {
		l.Omitted[k] += n
	}
	l.unknown += o.unknown
}
