// Package pstats decodes the statistics files that Python's cProfile and
// profile modules write (`python -m cProfile -o out.pstats`,
// Stats.dump_stats): a marshalled dict mapping each function
// (file, line, name) to (primitive calls, calls, tottime, cumtime, callers).
//
// Decoding is native Go: no Python runs at analysis time. The file is read
// as a stream; memory grows with the number of functions and caller edges.
// Every caller must itself be a function of the file, or the file is
// corrupt (DECODE_FAILURE).
package pstats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/pstats/marshal"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Limit names.
const (
	LimitBytes     = "max_bytes"
	LimitDepth     = "max_depth"
	LimitObjects   = "max_objects"
	LimitFunctions = "max_functions"
	LimitEdges     = "max_edges"
)

var limits = []formats.Limit{
	{Name: LimitBytes, Default: marshal.DefaultMaxBytes, Unit: "bytes", Doc: "bytes read from the file"},
	{Name: LimitDepth, Default: marshal.DefaultMaxDepth, Unit: "levels", Doc: "nesting of marshal containers"},
	{Name: LimitObjects, Default: marshal.DefaultMaxObjects, Unit: "objects", Doc: "marshal objects decoded"},
	{Name: LimitFunctions, Default: 1_000_000, Unit: "functions", Doc: "functions (entries of the stats dict)"},
	{Name: LimitEdges, Default: 10_000_000, Unit: "edges", Doc: "caller entries over all functions"},
}

// Spec is the pstats format.
var Spec = &formats.Spec{
	Name:     "pstats",
	Title:    "cProfile/profile pstats",
	Family:   "CPU profiles",
	Suffixes: []string{".pstats", ".prof", ".cprofile"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.CPUFrames.Schema, table.CPUEdges.Schema},
	Limits:   limits,
	Caps:     formats.Caps{CallCounts: true},
	Producer: "Python cProfile / profile",
	Version:  "1",
	Decoder:  formats.DecoderFunc(decode),
}

// funcKey is a function's identity as pstats writes it. A pure-Python
// profile dump names the profiled statement by a code object; such a name
// is described (without its memory address, which the file lacks) and
// flagged.
type funcKey struct {
	file   string
	line   int64
	name   string
	isCode bool
}

// caller is one entry of a function's callers dict. cProfile writes
// (calls, primitive calls, tottime, cumtime) per caller; the pure-Python
// profile module writes only a call count (timed=false).
type caller struct {
	key    funcKey
	nc, cc int64
	tt, ct float64
	timed  bool
}

type entry struct {
	key     funcKey
	off     int64 // byte offset of the key
	cc, nc  int64
	tt, ct  float64
	callers []caller
}

func limit(in *formats.Input, name string) int64 {
	if v := in.Limit(name); v > 0 {
		return v
	}
	for _, l := range limits {
		if l.Name == name {
			return l.Default
		}
	}
	return 0
}

// stats is a whole decoded file.
type stats struct {
	entries []entry
	index   map[funcKey]int
	edges   int64
	untimed bool // some caller entries carry only a call count
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	st, err := read(ctx, in)
	if err != nil {
		return err
	}
	return emit(in, st, out)
}

func read(ctx context.Context, in *formats.Input) (*stats, error) {
	d := marshal.NewDecoder(in.R, marshal.Limits{
		MaxBytes:   limit(in, LimitBytes),
		MaxDepth:   int(limit(in, LimitDepth)),
		MaxObjects: limit(in, LimitObjects),
	})
	maxFuncs, maxEdges := limit(in, LimitFunctions), limit(in, LimitEdges)
	if err := d.BeginDict(); err != nil {
		return nil, failure(err, "the file is not a pstats dict")
	}
	st := &stats{index: map[funcKey]int{}}
	for i := 0; ; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, evidence.Wrap(evidence.CodeCancelled, err, "pstats")
			}
		}
		off := d.Offset()
		kv, end, err := d.NextKey()
		if err != nil {
			return nil, failure(err, "entry %d", i)
		}
		if end {
			break
		}
		if int64(i) >= maxFuncs {
			return nil, located(evidence.Failf(evidence.CodeLimitExceeded, "pstats: more than %s %d functions", LimitFunctions, maxFuncs), off)
		}
		key, err := parseKey(kv)
		if err != nil {
			return nil, located(evidence.Failf(evidence.CodeDecodeFailure, "pstats: entry %d: key: %v", i, err), off)
		}
		vv, err := d.Value()
		if err != nil {
			return nil, failure(err, "entry %d (%s)", i, key)
		}
		e, err := parseEntry(vv)
		if err != nil {
			return nil, located(evidence.Failf(evidence.CodeDecodeFailure, "pstats: entry %d (%s): %v", i, key, err), off)
		}
		if _, dup := st.index[key]; dup {
			return nil, located(evidence.Failf(evidence.CodeDecodeFailure, "pstats: entry %d: function %s appears twice", i, key), off)
		}
		st.edges += int64(len(e.callers))
		if st.edges > maxEdges {
			return nil, located(evidence.Failf(evidence.CodeLimitExceeded, "pstats: more than %s %d caller entries", LimitEdges, maxEdges), off)
		}
		for _, c := range e.callers {
			if !c.timed {
				st.untimed = true
			}
		}
		e.key, e.off = key, off
		st.index[key] = len(st.entries)
		st.entries = append(st.entries, e)
	}
	if err := d.CheckEnd(); err != nil {
		return nil, failure(err, "after the stats dict")
	}
	// Check every reference before anything is emitted.
	for i := range st.entries {
		e := &st.entries[i]
		for _, c := range e.callers {
			if _, ok := st.index[c.key]; !ok {
				return nil, located(evidence.Failf(evidence.CodeDecodeFailure,
					"pstats: caller %s of %s is not a function of this file", c.key, e.key), e.off)
			}
		}
	}
	return st, nil
}

// failure types an error from the marshal reader.
func failure(err error, format string, args ...any) error {
	code := evidence.CodeDecodeFailure
	switch {
	case errors.Is(err, marshal.ErrLimit):
		code = evidence.CodeLimitExceeded
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code = evidence.CodeCancelled
	default:
		var me *marshal.Error
		if errors.As(err, &me) && me.Err != nil && !errors.Is(err, marshal.ErrTruncated) {
			code = evidence.CodeIOFailure // the reader failed, not the data
		}
	}
	f := evidence.Wrap(code, err, "pstats: "+format, args...)
	var me *marshal.Error
	if errors.As(err, &me) {
		f.Location.Offset = me.Offset
	}
	return f
}

func located(f *evidence.Failure, off int64) *evidence.Failure {
	f.Location.Offset = off
	return f
}

func (k funcKey) String() string {
	// pstats' own notation, file:line(name).
	return fmt.Sprintf("%s:%d(%s)", k.file, k.line, k.name)
}

func parseKey(v marshal.Value) (funcKey, error) {
	t, ok := v.(marshal.Tuple)
	if !ok || len(t) != 3 {
		return funcKey{}, fmt.Errorf("want a (file, line, name) tuple, found %s", describe(v))
	}
	var k funcKey
	if k.file, ok = t[0].(string); !ok {
		return funcKey{}, fmt.Errorf("file is %s, not str", marshal.TypeName(t[0]))
	}
	line, err := asInt(t[1], "line")
	if err != nil {
		return funcKey{}, err
	}
	k.line = line
	switch n := t[2].(type) {
	case string:
		k.name = n
	case *marshal.Code:
		k.name = fmt.Sprintf("<code object %s, file %q, line %d>", n.Name, n.Filename, n.FirstLineNo)
		k.isCode = true
	default:
		return funcKey{}, fmt.Errorf("name is %s, not str", marshal.TypeName(t[2]))
	}
	return k, nil
}

func describe(v marshal.Value) string {
	if t, ok := v.(marshal.Tuple); ok {
		return fmt.Sprintf("a tuple of %d", len(t))
	}
	return marshal.TypeName(v)
}

func asInt(v marshal.Value, what string) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case *big.Int:
		return 0, fmt.Errorf("%s %s is out of range", what, n)
	}
	return 0, fmt.Errorf("%s is %s, not int", what, marshal.TypeName(v))
}

func asCount(v marshal.Value, what string) (int64, error) {
	n, err := asInt(v, what)
	if err == nil && n < 0 {
		err = fmt.Errorf("%s %d is negative", what, n)
	}
	return n, err
}

// asTime reads a time: a float, or an int (the profile module writes 0 for
// functions it never timed). Ints beyond 2^53 have no exact double.
func asTime(v marshal.Value, what string) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case int64:
		if n > 1<<53 || n < -(1<<53) {
			return 0, fmt.Errorf("%s %d has no exact double", what, n)
		}
		return float64(n), nil
	}
	return 0, fmt.Errorf("%s is %s, not a number", what, marshal.TypeName(v))
}

func parseEntry(v marshal.Value) (entry, error) {
	t, ok := v.(marshal.Tuple)
	if !ok || len(t) != 5 {
		return entry{}, fmt.Errorf("want a (primitive calls, calls, tottime, cumtime, callers) tuple, found %s", describe(v))
	}
	var e entry
	var err error
	if e.cc, err = asCount(t[0], "primitive calls"); err != nil {
		return entry{}, err
	}
	if e.nc, err = asCount(t[1], "calls"); err != nil {
		return entry{}, err
	}
	if e.tt, err = asTime(t[2], "tottime"); err != nil {
		return entry{}, err
	}
	if e.ct, err = asTime(t[3], "cumtime"); err != nil {
		return entry{}, err
	}
	cs, ok := t[4].(marshal.Dict)
	if !ok {
		return entry{}, fmt.Errorf("callers is %s, not dict", marshal.TypeName(t[4]))
	}
	seen := make(map[funcKey]bool, len(cs))
	for i, it := range cs {
		c, err := parseCaller(it)
		if err != nil {
			return entry{}, fmt.Errorf("caller %d: %w", i, err)
		}
		if seen[c.key] {
			return entry{}, fmt.Errorf("caller %s appears twice", c.key)
		}
		seen[c.key] = true
		e.callers = append(e.callers, c)
	}
	return e, nil
}

func parseCaller(it marshal.Item) (caller, error) {
	k, err := parseKey(it.Key)
	if err != nil {
		return caller{}, err
	}
	c := caller{key: k}
	switch v := it.Value.(type) {
	case int64:
		// profile module: calls from this caller, nothing else.
		if c.nc, err = asCount(v, "calls"); err != nil {
			return caller{}, err
		}
		return c, nil
	case marshal.Tuple:
		if len(v) != 4 {
			break
		}
		c.timed = true
		if c.nc, err = asCount(v[0], "calls"); err != nil {
			return caller{}, err
		}
		if c.cc, err = asCount(v[1], "primitive calls"); err != nil {
			return caller{}, err
		}
		if c.tt, err = asTime(v[2], "tottime"); err != nil {
			return caller{}, err
		}
		if c.ct, err = asTime(v[3], "cumtime"); err != nil {
			return caller{}, err
		}
		return c, nil
	}
	return caller{}, fmt.Errorf("%s: want (calls, primitive calls, tottime, cumtime) or a call count, found %s", k, describe(it.Value))
}

// frameID is a function's identity: the canonical JSON of its key, which
// is stable across runs of the same code and unambiguous.
func frameID(k funcKey) (string, error) {
	b, err := evidence.Canonical([]any{k.file, k.line, k.name})
	if err != nil {
		// Keys hold valid UTF-8 (the marshal reader rejects anything
		// else), so this is a defect, not bad input.
		return "", evidence.Wrap(evidence.CodeInternal, err, "pstats: frame id of %s", k)
	}
	return string(b), nil
}

// classify maps a key to its file column and symbolization. cProfile names
// built-in (C) functions ('~', 0, name); the profile module names them
// (”, 0, name) and adds a fake frame ('profile', 0, 'profiler') and one
// for the profiled statement. None of those "files" is a file.
func classify(k funcKey) (file any, sym string) {
	switch {
	case k.isCode, k.file == "profile" && k.line == 0 && k.name == "profiler":
		return nil, table.Synthetic
	case k.line == 0 && (k.file == "~" || k.file == ""):
		return nil, table.Symbolized
	case k.name == "<lambda>":
		return k.file, table.Anonymous
	}
	return k.file, table.Symbolized
}

func emit(in *formats.Input, st *stats, out formats.Sink) error {
	artifactID := ""
	if in.Artifact != nil {
		artifactID = in.Artifact.ID
	}
	ids := make([]string, len(st.entries))
	var totalTT float64
	var calls, prim int64
	for i := range st.entries {
		e := &st.entries[i]
		id, err := frameID(e.key)
		if err != nil {
			return err
		}
		ids[i] = id
		// Summed in file order from zero, exactly as pstats computes
		// total_tt, so the two agree bit for bit.
		totalTT += e.tt
		calls += e.nc
		prim += e.cc
	}
	metrics := map[string]evidence.Metric{
		table.MetricTotalWeight: {Value: totalTT, Unit: unit.Seconds},
		"functions":             {Value: int64(len(st.entries))},
		"total_calls":           {Value: calls, Unit: unit.Calls},
		"primitive_calls":       {Value: prim, Unit: unit.Calls},
		"edges":                 {Value: st.edges},
	}

	tw, err := out.Begin(&evidence.Table{Name: table.CPUFrames.Name, Columns: table.CPUFrames.EvidenceColumns(unit.Seconds)})
	if err != nil {
		return err
	}
	for i := range st.entries {
		e := &st.entries[i]
		file, sym := classify(e.key)
		if err := tw.Row(evidence.Object{
			"artifact_id":      artifactID,
			"frame_id":         ids[i],
			"function":         e.key.name,
			"file":             file,
			"line":             e.key.line,
			"column":           int64(-1),
			"module":           nil,
			"symbolization":    sym,
			"thread":           nil,
			"process":          nil,
			"self_weight":      e.tt,
			"inclusive_weight": e.ct,
			"calls":            e.nc,
			"primitive_calls":  e.cc,
		}); err != nil {
			return err
		}
	}
	frameSum := &evidence.Summary{RowsObserved: int64(len(st.entries)), Complete: true, Metrics: metrics}
	frameSum.Limit("cumtime of a recursive function counts its outermost calls only, as pstats does")
	if err := tw.End(frameSum); err != nil {
		return err
	}

	tw, err = out.Begin(&evidence.Table{Name: table.CPUEdges.Name, Columns: table.CPUEdges.EvidenceColumns(unit.Seconds)})
	if err != nil {
		return err
	}
	for i := range st.entries {
		e := &st.entries[i]
		calleeFile, _ := classify(e.key)
		for _, c := range e.callers {
			callerFile, _ := classify(c.key)
			row := evidence.Object{
				"artifact_id":     artifactID,
				"caller_id":       ids[st.index[c.key]],
				"caller_function": c.key.name,
				"caller_file":     callerFile,
				"caller_line":     c.key.line,
				"callee_id":       ids[i],
				"callee_function": e.key.name,
				"callee_file":     calleeFile,
				"callee_line":     e.key.line,
				"thread":          nil,
				"process":         nil,
				"weight":          nil,
				"self_weight":     nil,
				"calls":           c.nc,
				"primitive_calls": nil,
			}
			if c.timed {
				row["weight"], row["self_weight"], row["primitive_calls"] = c.ct, c.tt, c.cc
			}
			if err := tw.Row(row); err != nil {
				return err
			}
		}
	}
	edgeSum := &evidence.Summary{RowsObserved: st.edges, Complete: true, Metrics: metrics}
	if st.untimed {
		edgeSum.Limit("this file (from the pure-Python profile module) records only call counts per caller: edge weights and primitive calls are null")
	}
	return tw.End(edgeSum)
}

// Sniff recognizes a marshalled dict whose first key is a
// (file, line, name) tuple. It runs the decoder's own parsing over the
// prefix, so detection and decoding cannot disagree. gzip and protobuf
// (pprof's .prof) start with bytes that are not a dict and get No.
func Sniff(prefix []byte) formats.Verdict {
	if len(prefix) == 0 {
		return formats.NeedMore
	}
	d := marshal.NewDecoder(bytes.NewReader(prefix), marshal.Limits{MaxBytes: formats.SniffBytes})
	truncated := func(err error) bool {
		return errors.Is(err, marshal.ErrTruncated) || errors.Is(err, marshal.ErrLimit)
	}
	if err := d.BeginDict(); err != nil {
		return formats.No
	}
	kv, end, err := d.NextKey()
	switch {
	case err != nil && truncated(err):
		return formats.NeedMore
	case err != nil:
		return formats.No
	case end:
		// An empty dict: a valid, empty profile, or anything else.
		return formats.NeedMore
	}
	if _, err := parseKey(kv); err != nil {
		return formats.No
	}
	vv, err := d.Value()
	switch {
	case err != nil && truncated(err):
		return formats.Yes
	case err != nil:
		return formats.No
	}
	if _, err := parseEntry(vv); err != nil {
		return formats.No
	}
	return formats.Yes
}
