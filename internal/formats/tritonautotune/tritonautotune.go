// Package tritonautotune decodes Triton's autotune cache files, the
// <kernel>.autotune.json that Autotuner.check_disk_cache writes when a
// kernel is autotuned with cache_results=True (or TRITON_CACHE_AUTOTUNING=1):
// {"key": tuning key, "configs_timings": [[config.__dict__, timings], ...]},
// written by Python's json module, so a failed config's timings are the
// non-JSON literal Infinity. Every configuration becomes a row of
// gpu.autotune_configs in producer order with its timings as written; the
// best one is derived as Triton derives it (builtins.min over the
// configurations by their timings), never averaged.
//
// It imports evidence, formats, jsonscan, param and table.
package tritonautotune

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Version is the decoder's version.
const Version = "1"

// Suffix is the cache file's suffix.
const Suffix = ".autotune.json"

// Spec is the Triton autotune cache format.
var Spec = &formats.Spec{
	Name:     "triton-autotune",
	Title:    "Triton autotune cache (cache_results=True)",
	Family:   formats.FamilyGPU,
	Suffixes: []string{Suffix},
	Sniff:    sniff,
	Tables:   []*table.Schema{table.AutotuneConfigs.Schema},
	Limits: []formats.Limit{
		{Name: formats.LimitBytes, Default: 64 << 20, Unit: "bytes", Doc: "bytes of the cache file"},
		{Name: formats.LimitToken, Default: 1 << 20, Unit: "bytes", Doc: "bytes of one JSON string or number"},
	},
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "Triton's autotuner (triton.autotune(..., cache_results=True), Triton 3.x)",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
}

func sniff(p []byte) formats.Verdict {
	return formats.SniffObject(p, false, func(doc []byte) formats.Verdict {
		if bytes.Contains(doc, []byte(`"configs_timings"`)) {
			return formats.Yes
		}
		if len(doc) > 4096 {
			return formats.No
		}
		return formats.NeedMore
	})
}

// configFields are the attributes of triton.Config that have a column.
var configFields = map[string]bool{"kwargs": true, "num_warps": true, "num_stages": true, "num_ctas": true, "maxnreg": true}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	s := in.JSONScanner(in.R, 64, formats.LimitToken)
	s.AllowNonFinite = true
	tok, err := s.Next()
	if err != nil {
		return evidence.Wrap(evidence.CodeDecodeFailure, err, "Triton autotune cache")
	}
	v, err := s.Value(tok, jsonscan.ValueLimits{})
	if err != nil {
		return evidence.Wrap(evidence.CodeDecodeFailure, err, "Triton autotune cache")
	}
	if err := s.CheckEnd(); err != nil {
		return evidence.Wrap(evidence.CodeDecodeFailure, err, "Triton autotune cache")
	}
	if _, err := io.Copy(io.Discard, in.R); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "read")
	}
	doc, ok := v.(evidence.Object)
	if !ok {
		return evidence.Failf(evidence.CodeDecodeFailure, "a Triton autotune cache is a JSON object, not %s", kind(v))
	}
	key, ok := doc["key"].([]any)
	if !ok {
		return withField(evidence.Failf(evidence.CodeDecodeFailure, "the cache has no key array (the autotuner's tuning key)"), "key")
	}
	entries, ok := doc["configs_timings"].([]any)
	if !ok {
		return withField(evidence.Failf(evidence.CodeDecodeFailure, "the cache has no configs_timings array"), "configs_timings")
	}
	if len(entries) == 0 {
		return withField(evidence.Failf(evidence.CodeDecodeFailure,
			"the cache records no autotune configurations (configs_timings is empty): there is nothing to inspect; rerun the tuning with TRITON_CACHE_AUTOTUNING=1 and a fresh TRITON_CACHE_DIR"), "configs_timings")
	}
	values := in.Values()
	keyVals := plain(key, values).([]any)
	keyText, err := evidence.Canonical(keyVals)
	if err != nil {
		return evidence.Wrap(evidence.CodeDecodeFailure, err, "tuning key")
	}
	kernel := strings.TrimSuffix(filepath.Base(in.Artifact.Path), Suffix)
	cacheKey := table.NonEmpty(values.Bound(filepath.Base(filepath.Dir(in.Artifact.Path))))
	if filepath.Base(in.Artifact.Path) == kernel { // not named <kernel>.autotune.json
		kernel = ""
	}
	rows := make([]*table.AutotuneConfig, 0, len(entries))
	times := make([][]float64, 0, len(entries))
	scalar := -1 // 1: timings are numbers, 0: lists
	for i, e := range entries {
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			return withField(evidence.Failf(evidence.CodeDecodeFailure, "configs_timings[%d] is not a [config, timings] pair", i), fmt.Sprintf("configs_timings[%d]", i))
		}
		cfg, ok := pair[0].(evidence.Object)
		if !ok {
			return withField(evidence.Failf(evidence.CodeDecodeFailure, "configs_timings[%d][0] is not a config object", i), fmt.Sprintf("configs_timings[%d]", i))
		}
		r := &table.AutotuneConfig{Kernel: values.Bound(kernel), CacheKey: cacheKey, TuningKey: keyVals, KeyText: string(keyText), Index: int64(i)}
		kw, ok := cfg["kwargs"].(evidence.Object)
		if !ok {
			return withField(evidence.Failf(evidence.CodeDecodeFailure, "configs_timings[%d]: the config has no kwargs object", i), fmt.Sprintf("configs_timings[%d]", i))
		}
		r.Kwargs = plain(kw, values).(evidence.Object)
		for name, dst := range map[string]*table.Null[int64]{"num_warps": &r.NumWarps, "num_stages": &r.NumStages, "num_ctas": &r.NumCTAs, "maxnreg": &r.MaxNReg} {
			switch x := cfg[name].(type) {
			case nil:
			case json.Number:
				n, err := strconv.ParseInt(string(x), 10, 64)
				if err != nil {
					return withField(evidence.Failf(evidence.CodeDecodeFailure, "configs_timings[%d]: %s is %s, not an integer", i, name, x), fmt.Sprintf("configs_timings[%d].%s", i, name))
				}
				*dst = table.Some(n)
			default:
				return withField(evidence.Failf(evidence.CodeDecodeFailure, "configs_timings[%d]: %s is %s, not an integer", i, name, kind(x)), fmt.Sprintf("configs_timings[%d].%s", i, name))
			}
		}
		other := map[string]any{}
		for k, x := range cfg {
			if !configFields[k] && x != nil {
				other[k] = x
			}
		}
		if len(other) > 0 {
			r.Other = evidence.Object{}
			formats.BoundInto(values, r.Other, other, func(x any) any { return plain(x, values) })
		}
		ts, isScalar, err := timings(pair[1])
		if err != nil {
			return withField(evidence.Wrap(evidence.CodeDecodeFailure, err, "configs_timings[%d][1]", i), fmt.Sprintf("configs_timings[%d]", i))
		}
		s := b2i(isScalar)
		if scalar >= 0 && s != scalar {
			return withField(evidence.Failf(evidence.CodeDecodeFailure, "configs_timings mixes number and list timings, which Triton cannot compare"), fmt.Sprintf("configs_timings[%d]", i))
		}
		scalar = s
		r.Timings = tagged(ts)
		if len(ts) > 0 && !math.IsInf(ts[0], 0) && !math.IsNaN(ts[0]) {
			r.FirstMS = table.Some(ts[0])
		}
		r.Failed = len(ts) > 0
		for _, t := range ts {
			if !math.IsInf(t, 1) {
				r.Failed = false
			}
		}
		rows = append(rows, r)
		times = append(times, ts)
	}
	best, dups := bestIndex(rows, times)
	rows[best].Best = true
	tw, err := out.Begin(table.AutotuneConfigs.Header(""))
	if err != nil {
		return err
	}
	var failed int64
	for _, r := range rows {
		if r.Failed {
			failed++
		}
		if err := tw.Row(r); err != nil {
			return err
		}
	}
	sum := &evidence.Summary{RowsObserved: int64(len(rows)), Complete: true,
		Coverage: evidence.Object{"kernel": nullable(kernel), "tuning_key": keyVals, "best_config_index": int64(best)},
		Metrics:  map[string]evidence.Metric{"configs": {Value: int64(len(rows)), Unit: "count"}, "failed_configs": {Value: failed, Unit: "count"}},
		Limitations: []string{
			"a cache file shows what one tuning run measured: not that later runs hit the cache, which device ran it, that the configs compute the same result, or that the best is faster in a real workload",
			"timings are kept as the benchmarker returned them (ms; quantiles 0.5, 0.2, 0.8 with Triton's default), never averaged",
		}}
	if kernel == "" {
		sum.Limit("the file is not named <kernel>" + Suffix + ": the kernel is unknown")
	}
	if dups > 0 {
		sum.Limit(fmt.Sprintf("%d configurations repeat an earlier one; as Triton does when it loads the cache, the best is chosen with the later timing at the first one's place", dups))
	}
	values.Summarize(sum)
	return tw.End(sum)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// identity is a configuration's identity as triton.Config's __eq__ sees
// it: its kwargs and launch parameters.
func identity(r *table.AutotuneConfig) string {
	b, _ := evidence.Canonical(evidence.Object{"kwargs": r.Kwargs, "num_warps": r.NumWarps.Value(), "num_stages": r.NumStages.Value(),
		"num_ctas": r.NumCTAs.Value(), "maxnreg": r.MaxNReg.Value(), "other": r.Other})
	return string(b)
}

// bestIndex is Triton's choice: builtins.min over a dict built from the
// entries in order (a repeated config keeps its first place and takes the
// later timing), comparing timings as Python compares them.
func bestIndex(rows []*table.AutotuneConfig, times [][]float64) (best, dups int) {
	first := map[string]int{}
	value := make([][]float64, len(rows))
	var order []int
	for i, r := range rows {
		id := identity(r)
		if j, ok := first[id]; ok {
			value[j] = times[i]
			dups++
			continue
		}
		first[id] = i
		value[i] = times[i]
		order = append(order, i)
	}
	best = order[0]
	for _, i := range order[1:] {
		if pyLess(value[i], value[best]) {
			best = i
		}
	}
	return best, dups
}

// pyLess is Python's a < b for two timings: lists compare element by
// element at the first unequal pair (NaN is unequal to everything), then
// by length; a number is a list of one.
func pyLess(a, b []float64) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// timings reads a config's timings: a number or a list of numbers.
func timings(v any) ([]float64, bool, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := float(x)
		return []float64{f}, true, err
	case []any:
		out := make([]float64, len(x))
		for i, e := range x {
			n, ok := e.(json.Number)
			if !ok {
				return nil, false, fmt.Errorf("timing %d is %s, not a number", i, kind(e))
			}
			f, err := float(n)
			if err != nil {
				return nil, false, err
			}
			out[i] = f
		}
		return out, false, nil
	}
	return nil, false, fmt.Errorf("timings are %s, not a number or a list of numbers", kind(v))
}

func float(n json.Number) (float64, error) {
	switch string(n) {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, fmt.Errorf("timing %s: %w", n, err)
	}
	return f, nil
}

// tagged renders timings for a row: finite doubles as they are, the
// others as {"type":"double","value":"Infinity"}.
func tagged(ts []float64) []any {
	out := make([]any, len(ts))
	for i, t := range ts {
		out[i] = evidence.Double(t)
	}
	return out
}

// plain turns a parsed value into row values: integers exact, other
// numbers doubles (non-finite ones tagged), strings bounded.
func plain(v any, values *formats.Values) any {
	switch x := v.(type) {
	case string:
		return values.Bound(x)
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, err := float(x)
		if err != nil {
			return string(x)
		}
		return tagged([]float64{f})[0]
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e, values)
		}
		return out
	case evidence.Object:
		out := make(evidence.Object, len(x))
		formats.BoundInto(values, out, x, func(e any) any { return plain(e, values) })
		return out
	}
	return v
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case evidence.Object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// withField locates a failure at a field of the document.
func withField(f *evidence.Failure, name string) *evidence.Failure {
	f.Location.Field = name
	return f
}
