// Package pyperf decodes pyperf result files (JSON, or JSON compressed
// with gzip as pyperf writes for a .json.gz name) into the bench.series
// and bench.samples tables: one series per benchmark, one sample row per
// value, warmup and calibration value of every run.
//
// The model follows pyperf's own loader (pyperf/_bench.py, 2.10): format
// versions 5, 6 and "1.0"; metadata merged suite → benchmark → run;
// a run without values is a calibration run; warmups before format 1.0
// are raw (loops × inner_loops) values and are divided here as pyperf
// divides them; values are per inner-loop iteration. Units second, byte
// and integer become ns, bytes and count. pyperf writes keys sorted, so
// the format version and the suite metadata come after the benchmarks:
// the document is read whole into that model (bounded by max_values)
// before any row is written.
//
// It imports formats, jsonscan, evidence and table.
package pyperf

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// FormatName is the registry name.
const FormatName = "pyperf"

// Limit names.
const (
	LimitValues = "max_values"
	LimitJSON   = "max_json_bytes"
)

// Spec is the pyperf format.
var Spec = &formats.Spec{
	Name:     FormatName,
	Title:    "pyperf result (JSON, .json.gz)",
	Family:   formats.FamilyBenchmarks,
	Suffixes: []string{".pyperf.json", ".pyperf.json.gz"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.BenchSeries.Schema, table.BenchSamples.Schema},
	Limits: []formats.Limit{
		{Name: LimitJSON, Default: 4 << 30, Unit: "bytes", Doc: "bytes of JSON text (after gzip decompression)"},
		{Name: LimitValues, Default: 20_000_000, Unit: "values", Doc: "values and warmups in the file"},
		{Name: formats.LimitToken, Default: 1 << 20, Unit: "bytes", Doc: "longest single JSON string or number"},
	},
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "pyperf 1.x-2.x (JSON format versions 5, 6 and 1.0)",
	Version:  "1",
	Decoder:  formats.DecoderFunc(Decode),
}

var gzipMagic = []byte{0x1f, 0x8b}

// Sniff says Yes for a JSON object (or a gzip stream of one) whose first
// member is "benchmarks", an array whose first element opens with one of
// the keys pyperf writes first in a benchmark (it sorts keys: metadata,
// or runs when a benchmark has no metadata of its own; common_metadata
// in format 5).
func Sniff(prefix []byte) formats.Verdict {
	if bytes.HasPrefix(prefix, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(prefix))
		if err != nil {
			return formats.NeedMore
		}
		var buf bytes.Buffer
		_, _ = io.CopyN(&buf, zr, formats.SniffBytes) // a cut stream ends early: judge what came out
		v := sniffJSON(buf.Bytes(), buf.Len() < formats.SniffBytes && len(prefix) < formats.SniffBytes)
		return v
	}
	return sniffJSON(prefix, len(prefix) < formats.SniffBytes)
}

func sniffJSON(p []byte, whole bool) formats.Verdict {
	v := formats.SniffObject(p, false, func(doc []byte) formats.Verdict {
		s := jsonscan.NewBytes(doc)
		want := []func(jsonscan.Token) bool{
			func(t jsonscan.Token) bool { return t.Kind == jsonscan.ObjectStart },
			func(t jsonscan.Token) bool { return t.Kind == jsonscan.String && string(t.Bytes) == "benchmarks" },
			func(t jsonscan.Token) bool { return t.Kind == jsonscan.ArrayStart },
			func(t jsonscan.Token) bool { return t.Kind == jsonscan.ObjectStart },
			func(t jsonscan.Token) bool {
				switch string(t.Bytes) {
				case "metadata", "runs", "common_metadata":
					return t.Kind == jsonscan.String
				}
				return false
			},
		}
		for _, ok := range want {
			t, err := s.Next()
			if err != nil {
				return formats.NeedMore
			}
			if !ok(t) {
				return formats.No
			}
		}
		return formats.Yes
	})
	if v == formats.NeedMore && whole {
		return formats.No
	}
	return v
}

// version is a pyperf JSON format version as a comparable number.
type version int

const (
	v083 version = 5 // pyperf 0.8.3
	v096 version = 6 // pyperf 0.9.6: common_metadata → metadata, samples → values
	v100 version = 7 // pyperf 1.0: warmups per loop iteration
)

// metadata keeps the metadata pyperf's model reads; the rest is skipped.
type metadata struct {
	name, unit        *string
	loops, innerLoops *int64
	// all is every scalar entry (strings, numbers as their literal text,
	// booleans), for the benchmark's common metadata.
	all map[string]string
}

// merge returns m overridden by o (pyperf: dict(m, **o)).
func (m metadata) merge(o metadata) metadata {
	if o.name != nil {
		m.name = o.name
	}
	if o.unit != nil {
		m.unit = o.unit
	}
	if o.loops != nil {
		m.loops = o.loops
	}
	if o.innerLoops != nil {
		m.innerLoops = o.innerLoops
	}
	if len(o.all) > 0 {
		all := make(map[string]string, len(m.all)+len(o.all))
		for k, v := range m.all {
			all[k] = v
		}
		for k, v := range o.all {
			all[k] = v
		}
		m.all = all
	}
	return m
}

type warmup struct {
	loops int64
	value float64
}

type run struct {
	meta    metadata
	values  []float64
	samples []float64 // format 5 calls the values samples
	warmups []warmup
	off     int64
}

type benchmark struct {
	meta, common metadata // format 5 calls the metadata common_metadata
	runs         []*run
	off          int64
}

type document struct {
	benchmarks []*benchmark
	suite      metadata
	version    version
	values     int64
}

// Decode reads a pyperf file and emits bench.series and bench.samples.
func Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	br := bufio.NewReaderSize(in.R, 64<<10)
	var src io.Reader = br
	compressed := false
	if p, _ := br.Peek(2); bytes.Equal(p, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return evidence.Wrap(evidence.CodeDecodeFailure, err, "pyperf: gzip")
		}
		src, compressed = zr, true
	}
	lim := &limited{r: src, max: in.Limit(LimitJSON)}
	d := &decoder{ctx: ctx, in: in, lim: in.Limit(LimitValues)}
	doc, err := d.read(lim)
	if err != nil {
		if lim.over {
			return in.Exceeded(LimitJSON, nil)
		}
		return typed(err)
	}
	return d.emit(doc, out, compressed, lim.n)
}

// limited counts the JSON bytes read and stops past max.
type limited struct {
	r    io.Reader
	n    int64
	max  int64
	over bool
}

func (l *limited) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		l.over = true
		return n, errors.New("pyperf: more JSON text than max_json_bytes")
	}
	return n, err
}

// typed makes a read error IO_FAILURE (a gzip error is malformed input)
// and anything else DECODE_FAILURE; typed failures keep their code.
func typed(err error) error {
	code := evidence.CodeDecodeFailure
	if errors.Is(err, jsonscan.ErrRead) && !errors.Is(err, gzip.ErrChecksum) && !errors.Is(err, gzip.ErrHeader) &&
		!errors.Is(err, io.ErrUnexpectedEOF) {
		code = evidence.CodeIOFailure
	}
	return evidence.Wrap(code, err, "pyperf")
}

type decoder struct {
	ctx  context.Context
	in   *formats.Input
	lim  int64
	w    *jsonscan.Walker
	work int
}

// maxNesting bounds JSON nesting: pyperf nests five levels (suite,
// benchmarks, runs, warmups, pairs); metadata values are scalars.
const maxNesting = 32

func (d *decoder) read(r io.Reader) (*document, error) {
	s := d.in.JSONScanner(r, maxNesting, formats.LimitToken)
	d.w = &jsonscan.Walker{S: s}
	w := d.w
	doc := &document{}
	var ver string
	var hasVersion, hasBenchmarks bool
	var rawSuite metadata
	err := w.Document("a pyperf result", func(key []byte) error {
		switch string(key) {
		case "version":
			tok, err := w.Value()
			if err != nil {
				return err
			}
			switch tok.Kind {
			case jsonscan.String, jsonscan.Number:
				ver, hasVersion = string(tok.Bytes), true
				if tok.Kind == jsonscan.String {
					ver = strconv.Quote(ver)
				}
			default:
				return w.S.Errorf(tok, "version must be a string or a number, found %s", tok.Kind)
			}
			return nil
		case "benchmarks":
			hasBenchmarks = true
			return w.Array("benchmarks", func(i int, tok jsonscan.Token) error {
				b, err := d.benchmark(i, tok, doc)
				if err != nil {
					return err
				}
				doc.benchmarks = append(doc.benchmarks, b)
				return nil
			})
		case "metadata":
			_, err := d.w.ObjectOrNull("metadata", func(key []byte) error { return d.member(key, &rawSuite) })
			return err
		}
		return w.SkipValue()
	})
	if err != nil {
		return nil, err
	}
	end := jsonscan.Token{Offset: w.S.Offset()}
	switch {
	case !hasVersion:
		return nil, w.S.Errorf(end, "version is missing")
	case !hasBenchmarks:
		return nil, w.S.Errorf(end, "benchmarks is missing")
	}
	switch ver {
	case "5":
		doc.version = v083
	case "6":
		doc.version = v096
	case `"1.0"`:
		doc.version = v100
	default:
		return nil, &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("pyperf: file format version %s is not one pyperf 2.10 reads (5, 6 or \"1.0\")", ver)}
	}
	if doc.version >= v096 {
		doc.suite = rawSuite
	}
	if len(doc.benchmarks) == 0 {
		return nil, w.S.Errorf(end, "the file holds no benchmark")
	}
	return doc, d.resolve(doc)
}

// resolve applies what the version and the suite metadata, read last,
// decide: the merged metadata of every run, warmups as per-loop values,
// names and units.
func (d *decoder) resolve(doc *document) error {
	names := map[string]bool{}
	for i, b := range doc.benchmarks {
		own := b.meta
		if doc.version < v096 {
			own = b.common
		}
		bm := doc.suite.merge(own)
		for j, r := range b.runs {
			if doc.version < v096 {
				r.values = r.samples
			}
			r.samples = nil
			if len(r.values) == 0 && len(r.warmups) == 0 {
				return failAt(r.off, "benchmark %d run %d has neither values nor warmups", i+1, j+1)
			}
			r.meta = bm.merge(r.meta)
			if doc.version < v100 {
				inner := int64(1)
				if r.meta.innerLoops != nil {
					inner = *r.meta.innerLoops
				}
				for k := range r.warmups {
					r.warmups[k].value /= float64(r.warmups[k].loops) * float64(inner)
				}
			}
			if j == 0 && r.meta.name == nil {
				return failAt(b.off, "benchmark %d: a benchmark must have a name: its first run has no name metadata", i+1)
			}
		}
		first := b.runs[0].meta
		name := *first.name
		if names[name] {
			return failAt(b.off, "benchmark %d: the suite already has a benchmark called %q", i+1, name)
		}
		names[name] = true
		for j, r := range b.runs[1:] {
			if !sameString(r.meta.unit, first.unit) {
				return failAt(r.off, "benchmark %q run %d: unit %s differs from the first run's %s", name, j+2, show(r.meta.unit), show(first.unit))
			}
			if !sameInt(r.meta.innerLoops, first.innerLoops) {
				return failAt(r.off, "benchmark %q run %d: inner_loops differs from the first run's", name, j+2)
			}
		}
		if _, _, err := unitOf(first.unit); err != nil {
			return failAt(b.off, "benchmark %q: %v", name, err)
		}
	}
	return nil
}

func sameString(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func sameInt(a, b *int64) bool     { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(s *string) string {
	if s == nil {
		return "(none: second)"
	}
	return strconv.Quote(*s)
}

func failAt(off int64, format string, args ...any) *evidence.Failure {
	return &evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "pyperf: " + fmt.Sprintf(format, args...),
		Location: evidence.Location{Offset: off}}
}

// unitOf maps pyperf's unit to the normalized one and its factor.
func unitOf(u *string) (string, float64, error) {
	name := "second" // pyperf's DEFAULT_UNIT
	if u != nil {
		name = *u
	}
	switch name {
	case "second":
		return table.BenchNs, 1e9, nil
	case "byte":
		return table.BenchBytes, 1, nil
	case "integer":
		return table.BenchCount, 1, nil
	}
	return "", 0, fmt.Errorf("unit %q is not one of pyperf's second, byte, integer", name)
}

func (d *decoder) tick() error {
	d.work++
	if d.work%4096 == 0 {
		if err := d.ctx.Err(); err != nil {
			return evidence.Wrap(evidence.CodeCancelled, err, "pyperf")
		}
	}
	return nil
}

func (d *decoder) benchmark(i int, tok jsonscan.Token, doc *document) (*benchmark, error) {
	w := d.w
	if tok.Kind != jsonscan.ObjectStart {
		return nil, w.S.Errorf(tok, "benchmark %d must be an object, found %s", i+1, tok.Kind)
	}
	b := &benchmark{off: tok.Offset}
	var hasRuns bool
	var meta, common metadata
	err := w.Members(tok, "a benchmark", func(key []byte) error {
		switch string(key) {
		case "metadata":
			return d.metadata("benchmark metadata", &meta)
		case "common_metadata":
			return d.metadata("benchmark common_metadata", &common)
		case "runs":
			hasRuns = true
			return w.Array("runs", func(j int, tok jsonscan.Token) error {
				r, err := d.run(j, tok, doc)
				if err != nil {
					return err
				}
				b.runs = append(b.runs, r)
				return nil
			})
		}
		return w.SkipValue()
	})
	if err != nil {
		return nil, at(err, fmt.Sprintf("benchmarks[%d]", i))
	}
	if !hasRuns || len(b.runs) == 0 {
		return nil, at(w.S.Errorf(tok, "benchmark %d has no runs", i+1), fmt.Sprintf("benchmarks[%d]", i))
	}
	// Which of the two counts depends on the version, read last: resolve
	// chooses, as pyperf does (metadata from 0.9.6 on, common_metadata
	// before).
	b.meta, b.common = meta, common
	return b, nil
}

func (d *decoder) run(j int, tok jsonscan.Token, doc *document) (*run, error) {
	w := d.w
	if tok.Kind != jsonscan.ObjectStart {
		return nil, w.S.Errorf(tok, "run %d must be an object, found %s", j+1, tok.Kind)
	}
	r := &run{off: tok.Offset}
	err := w.Members(tok, "a run", func(key []byte) error {
		switch string(key) {
		case "metadata":
			return d.metadata("run metadata", &r.meta)
		case "values", "samples":
			list := &r.values
			if string(key) == "samples" {
				list = &r.samples
			}
			return w.Array(string(key), func(k int, tok jsonscan.Token) error {
				if err := d.count(doc, tok); err != nil {
					return err
				}
				v, err := w.FloatOf(tok, "a value")
				if err != nil {
					return err
				}
				if !(v > 0) {
					return w.S.Errorf(tok, "value %d is %s: pyperf values are numbers > 0", k+1, tok.Bytes)
				}
				*list = append(*list, v)
				return nil
			})
		case "warmups":
			return w.Array("warmups", func(k int, tok jsonscan.Token) error {
				if err := d.count(doc, tok); err != nil {
					return err
				}
				if tok.Kind != jsonscan.ArrayStart {
					return w.S.Errorf(tok, "warmup %d must be a [loops, value] pair, found %s", k+1, tok.Kind)
				}
				var wu warmup
				n := 0
				err := w.Elements(tok, "a warmup", func(e int, el jsonscan.Token) error {
					var err error
					switch e {
					case 0:
						wu.loops, err = w.IntOf(el, "warmup loops")
						if err == nil && wu.loops < 1 {
							err = w.S.Errorf(el, "warmup loops %d is below 1", wu.loops)
						}
					case 1:
						wu.value, err = w.FloatOf(el, "warmup value")
						if err == nil && !(wu.value >= 0) {
							err = w.S.Errorf(el, "warmup value %s is negative", el.Bytes)
						}
					default:
						err = w.S.Errorf(el, "warmup %d has more than two elements", k+1)
					}
					n++
					return err
				})
				if err == nil && n != 2 {
					err = w.S.Errorf(tok, "warmup %d must be a [loops, value] pair", k+1)
				}
				r.warmups = append(r.warmups, wu)
				return err
			})
		}
		return w.SkipValue()
	})
	if err != nil {
		return nil, at(err, fmt.Sprintf("runs[%d]", j))
	}
	return r, nil
}

func (d *decoder) count(doc *document, tok jsonscan.Token) error {
	if err := d.tick(); err != nil {
		return err
	}
	doc.values++
	if doc.values > d.lim {
		return d.in.ExceededAt(LimitValues, nil, tok.Offset)
	}
	return nil
}

func (d *decoder) metadata(what string, m *metadata) error {
	return d.w.Object(what, func(key []byte) error { return d.member(key, m) })
}

// member reads one metadata entry: the few the model uses are typed as
// pyperf's parse_metadata requires; the rest are skipped.
func (d *decoder) member(key []byte, m *metadata) error {
	w := d.w
	if m.all == nil {
		m.all = map[string]string{}
	}
	if len(m.all) >= maxMetadata {
		return fmt.Errorf("pyperf: more than %d metadata entries in one object", maxMetadata)
	}
	switch k := string(key); k {
	case "name", "unit":
		s, err := w.String("metadata " + k)
		if err != nil {
			return err
		}
		if k == "name" {
			m.name = &s
		} else {
			m.unit = &s
		}
		m.all[k] = s
		return nil
	case "loops", "inner_loops":
		n, err := w.Int("metadata " + k)
		if err != nil {
			return err
		}
		if n < 1 {
			return fmt.Errorf("pyperf: metadata %s is %d, below 1", k, n)
		}
		if k == "loops" {
			m.loops = &n
		} else {
			m.innerLoops = &n
		}
		m.all[k] = strconv.FormatInt(n, 10)
		return nil
	}
	tok, err := w.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.ObjectStart, jsonscan.ArrayStart:
		return w.Skip(tok) // pyperf writes scalars only
	case jsonscan.String, jsonscan.Number:
		m.all[string(key)] = string(tok.Bytes)
	case jsonscan.True, jsonscan.False:
		m.all[string(key)] = tok.Kind.String()
	}
	return nil
}

// maxMetadata bounds the entries of one metadata object (pyperf writes a
// few dozen).
const maxMetadata = 4096

// commonMetadata is the metadata every run of b has with one value
// (pyperf's Benchmark.get_metadata), bounded.
func commonMetadata(b *benchmark, vals *formats.Values) evidence.Object {
	first := b.runs[0].meta.all
	common := make(map[string]string, len(first))
	for k, v := range first {
		same := true
		for _, r := range b.runs[1:] {
			if w, ok := r.meta.all[k]; !ok || w != v {
				same = false
				break
			}
		}
		if same {
			common[k] = v
		}
	}
	out := make(evidence.Object, len(common))
	formats.BoundInto(vals, out, common, func(v string) any { return vals.Bound(v) })
	return out
}

// at gives a failure the JSON path it happened at, keeping a deeper one.
func at(err error, path string) error {
	f := evidence.AsFailure(typed(err), evidence.CodeDecodeFailure)
	if f.Location.Field == "" {
		f.Location.Field = path
	} else {
		f.Location.Field = path + "." + f.Location.Field
	}
	return f
}

// emit writes the model's tables.
func (d *decoder) emit(doc *document, out formats.Sink, compressed bool, jsonBytes int64) error {
	vals := d.in.Values()
	var runs, calibration, values, warmups int64
	if out.Wants(table.BenchSeries.Schema) {
		tw, err := out.Begin(table.BenchSeries.Header(""))
		if err != nil {
			return err
		}
		for i, b := range doc.benchmarks {
			if err := tw.Row(seriesRow(i, b, vals)); err != nil {
				return err
			}
		}
		sum := &evidence.Summary{RowsObserved: int64(len(doc.benchmarks)), Complete: true}
		vals.Summarize(sum)
		if err := tw.End(sum); err != nil {
			return err
		}
	}
	tw, err := out.Begin(table.BenchSamples.Header(""))
	if err != nil {
		return err
	}
	want := out.Wants(table.BenchSamples.Schema)
	for i, b := range doc.benchmarks {
		_, factor, _ := unitOf(b.runs[0].meta.unit)
		id := strconv.Itoa(i + 1)
		for j, r := range b.runs {
			runs++
			inner := int64(1)
			if r.meta.innerLoops != nil {
				inner = *r.meta.innerLoops
			}
			kind := table.BenchWarmup
			if len(r.values) == 0 {
				kind = table.BenchCalibrate
				calibration++
			}
			for k, wu := range r.warmups {
				warmups++
				if !want {
					continue
				}
				if err := d.tick(); err != nil {
					return err
				}
				row := &table.BenchSample{SeriesID: id, Kind: kind, Run: int64(j + 1), Index: int64(k + 1),
					Loops: table.Some(wu.loops * inner), Value: float64(wu.value * factor)}
				if err := tw.Row(row); err != nil {
					return err
				}
			}
			loops := runLoops(r)
			for k, v := range r.values {
				values++
				if !want {
					continue
				}
				if err := d.tick(); err != nil {
					return err
				}
				row := &table.BenchSample{SeriesID: id, Kind: table.BenchSampleKind, Run: int64(j + 1), Index: int64(k + 1),
					Loops: table.Some(loops), Value: float64(v * factor)}
				if err := tw.Row(row); err != nil {
					return err
				}
			}
		}
	}
	enc := "json"
	if compressed {
		enc = "json.gz"
	}
	sum := &evidence.Summary{RowsObserved: values + warmups, Complete: true, Metrics: map[string]evidence.Metric{
		"benchmarks":       {Value: int64(len(doc.benchmarks)), Unit: "benchmarks"},
		"runs":             {Value: runs, Unit: "runs"},
		"calibration_runs": {Value: calibration, Unit: "runs"},
		"values":           {Value: values, Unit: "values"},
		"warmups":          {Value: warmups, Unit: "values"},
		"json_bytes":       {Value: jsonBytes, Unit: "bytes"},
	}, Coverage: evidence.Object{"encoding": enc, "format_version": versionText(doc.version)}}
	vals.Summarize(sum)
	return tw.End(sum)
}

func versionText(v version) string {
	switch v {
	case v083:
		return "5"
	case v096:
		return "6"
	}
	return "1.0"
}

// runLoops is the loop iterations one value of r averages over: pyperf's
// Run.get_total_loops.
func runLoops(r *run) int64 {
	loops, inner := int64(1), int64(1)
	if r.meta.loops != nil {
		loops = *r.meta.loops
	}
	if r.meta.innerLoops != nil {
		inner = *r.meta.innerLoops
	}
	return loops * inner
}

func seriesRow(i int, b *benchmark, vals *formats.Values) *table.BenchSeriesRow {
	first := b.runs[0].meta
	u, _, _ := unitOf(first.unit)
	row := &table.BenchSeriesRow{SeriesID: strconv.Itoa(i + 1),
		BenchIdentity: table.BenchIdentity{Benchmark: vals.Bound(*first.name), Unit: u, Dimensions: evidence.Object{}},
		Metadata:      commonMetadata(b, vals)}
	if u == table.BenchNs {
		row.Clock = table.Some("wall") // pyperf times with time.perf_counter
	}
	var loops int64 = -1
	uniform := true
	for _, r := range b.runs {
		row.Warmups += int64(len(r.warmups))
		if len(r.values) == 0 {
			continue
		}
		row.Samples += int64(len(r.values))
		l := runLoops(r)
		if loops >= 0 && l != loops {
			uniform = false
		}
		loops = l
	}
	if uniform && loops >= 0 {
		row.LoopCount = table.Some(loops)
	}
	return row
}
