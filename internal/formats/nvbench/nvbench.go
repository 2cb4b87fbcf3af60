// Package nvbench decodes NVBench JSON results (`--json`, json format
// 1.x) into bench.series rows: one series per state and timing
// measurement (cold GPU time by CUDA events, cold CPU time by the host
// clock, batch GPU time), with the state's axis values as dimensions and
// NVBench's own statistics (sample size, mean, relative stdev, min, max)
// as the native summary. NVBench writes no samples into the JSON (their
// times go to separate files with --jsonbin, not read here), so it
// emits no bench.samples and the statistics are the producer's.
//
// A state's composite label ("Device=0 BlockSize=2^6 T=F32") is
// decomposed against the native axis values: each key=value must name
// the device or an axis and agree with its native value (2^k for a pow2
// axis, a float label is the native value rounded to the label's
// digits). When any component cannot be decoded, repeats a key or
// conflicts, the raw label stays a dimension ("state"); it also stays
// when two states would otherwise share an identity, so they remain
// distinct.
//
// It imports formats, jsonscan, evidence and table.
package nvbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// FormatName is the registry name.
const FormatName = "nvbench-json"

// Limit names.
const (
	LimitStates    = "max_states"
	LimitSummaries = "max_summaries"
)

// Spec is the NVBench JSON format.
var Spec = &formats.Spec{
	Name:     FormatName,
	Title:    "NVBench JSON result (--json)",
	Family:   formats.FamilyBenchmarks,
	Suffixes: []string{".nvbench.json"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.BenchSeries.Schema},
	Limits: []formats.Limit{
		{Name: formats.LimitBytes, Default: 2 << 30, Unit: "bytes", Doc: "bytes of the file"},
		{Name: LimitStates, Default: 1_000_000, Unit: "states", Doc: "benchmark states in the file"},
		{Name: LimitSummaries, Default: 256, Unit: "summaries", Doc: "summaries of one state"},
		{Name: formats.LimitToken, Default: 1 << 20, Unit: "bytes", Doc: "longest single JSON string or number"},
	},
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "NVBench (json format 1.x)",
	Version:  "1",
	Decoder:  formats.DecoderFunc(Decode),
}

// Sniff says Yes for a JSON object whose first member is meta, holding a
// version object with an nvbench member: what NVBench's JSON printer
// writes first.
func Sniff(prefix []byte) formats.Verdict {
	return formats.SniffObject(prefix, false, func(doc []byte) formats.Verdict {
		s := jsonscan.NewBytes(doc)
		if t, err := s.Next(); err != nil || t.Kind != jsonscan.ObjectStart {
			return formats.No
		}
		if k, err := s.Next(); err != nil {
			return formats.NeedMore
		} else if string(k.Bytes) != "meta" {
			return formats.No
		}
		if t, err := s.Next(); err != nil {
			return formats.NeedMore
		} else if t.Kind != jsonscan.ObjectStart {
			return formats.No
		}
		for {
			k, err := s.Next()
			if err != nil {
				return formats.NeedMore
			}
			if k.Kind == jsonscan.ObjectEnd {
				return formats.No
			}
			v, err := s.Next()
			if err != nil {
				return formats.NeedMore
			}
			if string(k.Bytes) != "version" {
				if err := s.Skip(v); err != nil {
					return formats.NeedMore
				}
				continue
			}
			if v.Kind != jsonscan.ObjectStart {
				return formats.No
			}
			for {
				vk, err := s.Next()
				if err != nil {
					return formats.NeedMore
				}
				if vk.Kind == jsonscan.ObjectEnd {
					return formats.No
				}
				if string(vk.Bytes) == "nvbench" {
					return formats.Yes
				}
				vv, err := s.Next()
				if err != nil {
					return formats.NeedMore
				}
				if err := s.Skip(vv); err != nil {
					return formats.NeedMore
				}
			}
		}
	})
}

type axisValue struct {
	name, typ, value string
}

type axis struct {
	name, typ, flags string
}

type summary struct {
	tag   string
	value string // the "value" datum, as written
	typ   string
}

type state struct {
	name      string
	device    int64
	hasDevice bool
	typeIndex int64
	axes      []axisValue
	summaries []summary
	skipped   bool
	off       int64
}

type bench struct {
	name   string
	index  int
	axes   []axis
	states []*state
}

type decoder struct {
	ctx     context.Context
	in      *formats.Input
	w       *jsonscan.Walker
	devices map[int64]string
	benches []*bench
	states  int64
	work    int
	json    string
	nvbench string
}

const maxNesting = 32

// Decode reads an NVBench JSON file and emits bench.series.
func Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	d := &decoder{ctx: ctx, in: in, devices: map[int64]string{}}
	d.w = &jsonscan.Walker{S: in.JSONScanner(in.R, maxNesting, formats.LimitToken)}
	if err := d.read(); err != nil {
		return typed(err)
	}
	return d.emit(out)
}

func typed(err error) error {
	code := evidence.CodeDecodeFailure
	if errors.Is(err, jsonscan.ErrRead) {
		code = evidence.CodeIOFailure
	}
	return evidence.Wrap(code, err, "nvbench")
}

func at(err error, path string) error {
	f := evidence.AsFailure(typed(err), evidence.CodeDecodeFailure)
	if f.Location.Field == "" {
		f.Location.Field = path
	} else {
		f.Location.Field = path + "." + f.Location.Field
	}
	return f
}

func (d *decoder) tick() error {
	d.work++
	if d.work%1024 == 0 {
		if err := d.ctx.Err(); err != nil {
			return evidence.Wrap(evidence.CodeCancelled, err, "nvbench")
		}
	}
	return nil
}

func (d *decoder) read() error {
	w := d.w
	var hasMeta, hasBenchmarks bool
	err := w.Document("an NVBench result", func(key []byte) error {
		switch string(key) {
		case "meta":
			hasMeta = true
			return d.meta()
		case "devices":
			return w.Array("devices", func(i int, tok jsonscan.Token) error {
				if tok.Kind != jsonscan.ObjectStart {
					return w.S.Errorf(tok, "device %d must be an object, found %s", i, tok.Kind)
				}
				var id int64 = -1
				var name string
				err := w.Members(tok, "a device", func(k []byte) error {
					var err error
					switch string(k) {
					case "id":
						id, err = w.Int("device id")
					case "name":
						name, err = w.String("device name")
					default:
						err = w.SkipValue()
					}
					return err
				})
				if err != nil {
					return at(err, fmt.Sprintf("devices[%d]", i))
				}
				if id < 0 {
					return w.S.Errorf(tok, "device %d has no id", i)
				}
				if _, dup := d.devices[id]; dup {
					return w.S.Errorf(tok, "device id %d appears twice", id)
				}
				d.devices[id] = name
				return nil
			})
		case "benchmarks":
			hasBenchmarks = true
			return w.Array("benchmarks", func(i int, tok jsonscan.Token) error {
				b, err := d.benchmark(i, tok)
				if err != nil {
					return at(err, fmt.Sprintf("benchmarks[%d]", i))
				}
				d.benches = append(d.benches, b)
				return nil
			})
		}
		return w.SkipValue()
	})
	if err != nil {
		return err
	}
	end := jsonscan.Token{Offset: w.S.Offset()}
	if !hasMeta || !hasBenchmarks {
		return w.S.Errorf(end, "an NVBench result has meta and benchmarks")
	}
	if major, _, _ := strings.Cut(d.json, "."); major != "1" {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("nvbench: json format version %q is not 1.x, the one this decoder reads", d.json)}
	}
	for _, b := range d.benches {
		for _, s := range b.states {
			if !s.hasDevice {
				return failAt(s.off, "benchmark %q state %q has no device", b.name, s.name)
			}
			if _, ok := d.devices[s.device]; !ok {
				return failAt(s.off, "benchmark %q state %q runs on device %d, which devices does not list", b.name, s.name, s.device)
			}
		}
	}
	return nil
}

func failAt(off int64, format string, args ...any) *evidence.Failure {
	return &evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "nvbench: " + fmt.Sprintf(format, args...),
		Location: evidence.Location{Offset: off}}
}

// meta reads meta.version.json.string and meta.version.nvbench.string.
func (d *decoder) meta() error {
	w := d.w
	return w.Object("meta", func(key []byte) error {
		if string(key) != "version" {
			return w.SkipValue()
		}
		return w.Object("meta.version", func(k []byte) error {
			var dst *string
			switch string(k) {
			case "json":
				dst = &d.json
			case "nvbench":
				dst = &d.nvbench
			default:
				return w.SkipValue()
			}
			return w.Object("meta.version."+string(k), func(f []byte) error {
				if string(f) != "string" {
					return w.SkipValue()
				}
				s, err := w.String("version string")
				*dst = s
				return err
			})
		})
	})
}

func (d *decoder) benchmark(i int, tok jsonscan.Token) (*bench, error) {
	w := d.w
	if tok.Kind != jsonscan.ObjectStart {
		return nil, w.S.Errorf(tok, "benchmark %d must be an object, found %s", i, tok.Kind)
	}
	b := &bench{index: i}
	named := false
	err := w.Members(tok, "a benchmark", func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			b.name, err = w.String("benchmark name")
			named = true
		case "axes":
			_, err = w.ArrayOrNull("axes", func(j int, tok jsonscan.Token) error {
				if tok.Kind != jsonscan.ObjectStart {
					return w.S.Errorf(tok, "axis %d must be an object, found %s", j, tok.Kind)
				}
				var a axis
				err := w.Members(tok, "an axis", func(k []byte) error {
					var err error
					switch string(k) {
					case "name":
						a.name, err = w.String("axis name")
					case "type":
						a.typ, err = w.String("axis type")
					case "flags":
						a.flags, err = w.String("axis flags")
					default:
						err = w.SkipValue()
					}
					return err
				})
				for _, o := range b.axes {
					if err == nil && o.name == a.name {
						err = w.S.Errorf(tok, "axis %q appears twice", a.name)
					}
				}
				b.axes = append(b.axes, a)
				return err
			})
		case "states":
			_, err = w.ArrayOrNull("states", func(j int, tok jsonscan.Token) error {
				s, err := d.state(j, tok)
				if err != nil {
					return at(err, fmt.Sprintf("states[%d]", j))
				}
				b.states = append(b.states, s)
				return nil
			})
		default:
			err = w.SkipValue()
		}
		return err
	})
	if err == nil && !named {
		err = w.S.Errorf(tok, "benchmark %d has no name", i)
	}
	return b, err
}

func (d *decoder) state(j int, tok jsonscan.Token) (*state, error) {
	w := d.w
	if err := d.tick(); err != nil {
		return nil, err
	}
	if tok.Kind != jsonscan.ObjectStart {
		return nil, w.S.Errorf(tok, "state %d must be an object, found %s", j, tok.Kind)
	}
	d.states++
	if d.states > d.in.Limit(LimitStates) {
		return nil, d.in.ExceededAt(LimitStates, nil, tok.Offset)
	}
	s := &state{off: tok.Offset}
	named := false
	err := w.Members(tok, "a state", func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			s.name, err = w.String("state name")
			named = true
		case "device":
			s.device, err = w.Int("state device")
			s.hasDevice = true
		case "type_config_index":
			s.typeIndex, err = w.Int("type_config_index")
		case "is_skipped":
			s.skipped, err = w.Bool("is_skipped")
		case "axis_values":
			_, err = w.ArrayOrNull("axis_values", func(k int, tok jsonscan.Token) error {
				var a axisValue
				if tok.Kind != jsonscan.ObjectStart {
					return w.S.Errorf(tok, "axis value %d must be an object, found %s", k, tok.Kind)
				}
				err := w.Members(tok, "an axis value", func(f []byte) error {
					var err error
					switch string(f) {
					case "name":
						a.name, err = w.String("axis value name")
					case "type":
						a.typ, err = w.String("axis value type")
					case "value":
						a.value, err = scalar(w, "axis value")
					default:
						err = w.SkipValue()
					}
					return err
				})
				s.axes = append(s.axes, a)
				return err
			})
		case "summaries":
			_, err = w.ArrayOrNull("summaries", func(k int, tok jsonscan.Token) error {
				if int64(k) >= d.in.Limit(LimitSummaries) {
					return d.in.ExceededAt(LimitSummaries, nil, tok.Offset)
				}
				sm, err := d.summary(k, tok)
				s.summaries = append(s.summaries, sm)
				return err
			})
		default:
			err = w.SkipValue()
		}
		return err
	})
	if err == nil && !named {
		err = w.S.Errorf(tok, "state %d has no name", j)
	}
	return s, err
}

// scalar reads a string, number or boolean value as its text.
func scalar(w *jsonscan.Walker, what string) (string, error) {
	tok, err := w.Value()
	if err != nil {
		return "", err
	}
	switch tok.Kind {
	case jsonscan.String, jsonscan.Number:
		return string(tok.Bytes), nil
	case jsonscan.True:
		return "true", nil
	case jsonscan.False:
		return "false", nil
	}
	return "", w.S.Errorf(tok, "%s must be a string or a number, found %s", what, tok.Kind)
}

func (d *decoder) summary(k int, tok jsonscan.Token) (summary, error) {
	w := d.w
	var sm summary
	if tok.Kind != jsonscan.ObjectStart {
		return sm, w.S.Errorf(tok, "summary %d must be an object, found %s", k, tok.Kind)
	}
	err := w.Members(tok, "a summary", func(key []byte) error {
		switch string(key) {
		case "tag":
			var err error
			sm.tag, err = w.String("summary tag")
			return err
		case "data":
			return w.Array("summary data", func(e int, tok jsonscan.Token) error {
				if tok.Kind != jsonscan.ObjectStart {
					return w.S.Errorf(tok, "summary datum %d must be an object, found %s", e, tok.Kind)
				}
				var name, typ, val string
				err := w.Members(tok, "a summary datum", func(f []byte) error {
					var err error
					switch string(f) {
					case "name":
						name, err = w.String("datum name")
					case "type":
						typ, err = w.String("datum type")
					case "value":
						val, err = scalar(w, "datum value")
					default:
						err = w.SkipValue()
					}
					return err
				})
				if name == "value" {
					sm.value, sm.typ = val, typ
				}
				return err
			})
		}
		return w.SkipValue()
	})
	return sm, err
}

// measurement is one timing series of a state.
type measurement struct {
	scope, clock string // cold|batch, gpu|cpu
}

// measurements lists a state's timing series: every tag
// nv/<scope>/time/<clock>/mean.
func measurements(s *state) []measurement {
	var out []measurement
	for _, sm := range s.summaries {
		parts := strings.Split(sm.tag, "/")
		if len(parts) == 5 && parts[0] == "nv" && parts[2] == "time" && parts[4] == "mean" {
			out = append(out, measurement{parts[1], parts[3]})
		}
	}
	return out
}

func (s *state) find(tag string) (summary, bool) {
	for _, sm := range s.summaries {
		if sm.tag == tag {
			return sm, true
		}
	}
	return summary{}, false
}

// number reads a summary's value as a finite double.
func number(sm summary) (float64, error) {
	f, err := strconv.ParseFloat(sm.value, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("summary %s value %q is not a finite number", sm.tag, sm.value)
	}
	return f, nil
}

// clocks names NVBench's timers.
var clocks = map[string]string{"gpu": "cuda_event", "cpu": "host"}

// syncs says how each scope times its launches (NVBench's measure_cold
// synchronizes around every sample and flushes L2; measure_hot/batch
// times many launches back to back between two events).
var syncs = map[string]string{"cold": "per_sample", "batch": "per_batch"}

type row struct {
	series *table.BenchSeriesRow
	label  string
	key    string
}

func (d *decoder) emit(out formats.Sink) error {
	vals := d.in.Values()
	var rows []*row
	var skipped, kept, other, rawLabels int64
	for bi, b := range d.benches {
		for si, s := range b.states {
			if s.skipped {
				skipped++
				continue
			}
			dims, raw := decompose(b, s)
			ms := measurements(s)
			other += int64(len(s.summaries) - used(s, ms))
			for _, m := range ms {
				r, err := seriesOf(b, s, m, vals)
				if err != nil {
					return failAt(s.off, "benchmark %q state %q: %v", b.name, s.name, err)
				}
				r.SeriesID = fmt.Sprintf("%d.%d.%s.%s", bi+1, si+1, m.scope, m.clock)
				r.Dimensions = evidence.Object{}
				for k, v := range dims {
					r.Dimensions[k] = vals.Bound(v)
				}
				if raw {
					r.Dimensions["state"] = vals.Bound(s.name)
				}
				rows = append(rows, &row{series: r, label: s.name})
			}
		}
	}
	// States whose decoded identities coincide keep their raw labels, so
	// that no two series blend.
	seen := map[string][]*row{}
	for _, r := range rows {
		r.key = identity(r.series)
		seen[r.key] = append(seen[r.key], r)
	}
	for _, group := range seen {
		if len(group) < 2 {
			continue
		}
		for _, r := range group {
			if _, ok := r.series.Dimensions["state"]; !ok {
				r.series.Dimensions["state"] = vals.Bound(r.label)
			}
		}
	}
	tw, err := out.Begin(table.BenchSeries.Header(""))
	if err != nil {
		return err
	}
	for _, r := range rows {
		kept++
		if _, ok := r.series.Dimensions["state"]; ok {
			rawLabels++
		}
		if err := tw.Row(r.series); err != nil {
			return err
		}
	}
	sum := &evidence.Summary{RowsObserved: kept, Complete: true, Metrics: map[string]evidence.Metric{
		"benchmarks":      {Value: int64(len(d.benches)), Unit: "benchmarks"},
		"states":          {Value: d.states, Unit: "states"},
		"skipped_states":  {Value: skipped, Unit: "states"},
		"raw_labels_kept": {Value: rawLabels, Unit: "series"},
		"other_summaries": {Value: other, Unit: "summaries"},
		"devices":         {Value: int64(len(d.devices)), Unit: "devices"},
	}, Coverage: evidence.Object{"json_version": d.json, "nvbench_version": d.nvbench, "devices": d.deviceList(vals)}}
	sum.Limit("NVBench writes statistics, not samples, into its JSON (sample times go to --jsonbin files, not read): each series carries the producer's summary (native_*); median and percentiles are not available, and native_stdev is NVBench's relative stdev times its mean")
	if other > 0 {
		sum.Limit(fmt.Sprintf("%d summaries that are not timings (bandwidth, utilization, element counts, walltime) are not series", other))
	}
	if skipped > 0 {
		sum.Limit(fmt.Sprintf("%d states were skipped by the benchmark and have no series", skipped))
	}
	vals.Summarize(sum)
	return tw.End(sum)
}

// used counts the summaries of s that its timing series read.
func used(s *state, ms []measurement) int {
	n := 0
	for _, sm := range s.summaries {
		for _, m := range ms {
			if strings.HasPrefix(sm.tag, "nv/"+m.scope+"/time/"+m.clock+"/") || sm.tag == "nv/"+m.scope+"/sample_size" {
				n++
				break
			}
		}
	}
	return n
}

func identity(r *table.BenchSeriesRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%d|", r.Benchmark, r.Scope.V, r.Clock.V, r.DeviceIndex.V)
	keys := make([]string, 0, len(r.Dimensions))
	for k := range r.Dimensions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%v|", k, r.Dimensions[k])
	}
	return b.String()
}

func seriesOf(b *bench, s *state, m measurement, vals *formats.Values) (*table.BenchSeriesRow, error) {
	r := &table.BenchSeriesRow{BenchIdentity: table.BenchIdentity{Benchmark: vals.Bound(b.name), Unit: table.BenchNs,
		Scope: table.Some(m.scope), DeviceType: table.Some("cuda"), DeviceIndex: table.Some(s.device)}}
	if c, ok := clocks[m.clock]; ok {
		r.Clock = table.Some(c)
	} else {
		r.Clock = table.Some(m.clock)
	}
	if sy, ok := syncs[m.scope]; ok {
		r.Synchronization = table.Some(sy)
	}
	base := "nv/" + m.scope + "/time/" + m.clock + "/"
	meanS, _ := s.find(base + "mean")
	mean, err := number(meanS)
	if err != nil {
		return nil, err
	}
	r.NativeMean = table.Some(mean * 1e9)
	if sm, ok := s.find("nv/" + m.scope + "/sample_size"); ok {
		n, err := strconv.ParseInt(sm.value, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("summary %s value %q is not a count", sm.tag, sm.value)
		}
		r.NativeCount = table.Some(n)
	}
	if sm, ok := s.find(base + "stdev/relative"); ok {
		rel, err := number(sm)
		if err != nil {
			return nil, err
		}
		r.NativeStdev = table.Some(rel * mean * 1e9)
	}
	for tag, dst := range map[string]*table.Null[float64]{"min": &r.NativeMin, "max": &r.NativeMax, "median": &r.NativeMedian} {
		if sm, ok := s.find(base + tag); ok {
			v, err := number(sm)
			if err != nil {
				return nil, err
			}
			*dst = table.Some(v * 1e9)
		}
	}
	return r, nil
}

// decompose returns a state's dimensions (axis name → native value) and
// whether its raw label must stay: a component
// that is not key=value, names neither the device nor an axis, repeats a
// key, or disagrees with the native value.
func decompose(b *bench, s *state) (map[string]string, bool) {
	dims := map[string]string{}
	native := map[string]axisValue{}
	for _, a := range s.axes {
		native[a.name] = a
		dims[a.name] = a.value
	}
	flags := map[string]string{}
	for _, a := range b.axes {
		flags[a.name] = a.flags
	}
	raw := false
	seen := map[string]bool{}
	for _, part := range strings.Fields(s.name) {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" || seen[k] {
			raw = true
			continue
		}
		seen[k] = true
		if k == "Device" {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n != s.device {
				raw = true
			}
			continue
		}
		a, ok := native[k]
		if !ok || !agrees(v, a, flags[k]) {
			raw = true
		}
	}
	return dims, raw
}

// agrees reports whether label text v shows native axis value a.
func agrees(v string, a axisValue, flags string) bool {
	if v == a.value {
		return true
	}
	switch a.typ {
	case "int64":
		n, err := strconv.ParseInt(a.value, 10, 64)
		if err != nil {
			return false
		}
		if strings.Contains(flags, "pow2") {
			if e, ok := strings.CutPrefix(v, "2^"); ok {
				k, err := strconv.Atoi(e)
				return err == nil && k >= 0 && k < 63 && int64(1)<<k == n
			}
		}
		m, err := strconv.ParseInt(v, 10, 64)
		return err == nil && m == n
	case "float64":
		n, err1 := strconv.ParseFloat(a.value, 64)
		l, err2 := strconv.ParseFloat(v, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		// The label is the native value rounded to the label's digits.
		digits := significant(v)
		r, err := strconv.ParseFloat(strconv.FormatFloat(n, 'g', digits, 64), 64)
		return err == nil && r == l
	}
	return false
}

// significant counts the significant digits of a decimal literal.
func significant(v string) int {
	mant, _, _ := strings.Cut(strings.ToLower(v), "e")
	mant = strings.TrimLeft(strings.ReplaceAll(strings.TrimLeft(mant, "+-"), ".", ""), "0")
	if mant == "" {
		return 1
	}
	return len(mant)
}

// deviceList names the devices by index, for the summary.
func (d *decoder) deviceList(vals *formats.Values) []any {
	ids := make([]int64, 0, len(d.devices))
	for id := range d.devices {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = evidence.Object{"index": id, "name": vals.Bound(d.devices[id])}
	}
	return out
}
