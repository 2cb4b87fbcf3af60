// Package benchsamples writes and reads flameox benchmark-samples files:
// the flameox-owned JSONL schema in which a benchmark harness records its
// measured values so that flameox can summarize and compare them
// (docs/benchmarks.md). The first line is a header naming the schema and
// the producer; every further line is one series with its identity and
// its warmup and sample values:
//
//	{"schema":"flameox-bench-samples","version":1,"producer":{"name":"mybench","version":"1.2"}}
//	{"id":"s1","name":"matmul","unit":"ns","clock":"cuda_event","synchronization":"device",
//	 "device":{"type":"cuda","index":0},"dimensions":{"dtype":"fp16","n":"4096"},
//	 "loop_count":10,"warmups":[1510.5],"samples":[1402.25,1398.0,1405.75]}
//
// The Go writer is Writer; the Python one is sdk/python/flameox_bench.py.
// Parse is the one grammar, shared with flameox's decoder, so what the
// SDKs write is exactly what the decoder accepts.
package benchsamples

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/jsonscan"
)

// EnvVar names the file a capture (provider benchmark-samples) asks the
// workload to write.
const EnvVar = "FLAMEOX_BENCH_SAMPLES"

// Create writes a new file at path (replacing one there); Close it.
func Create(path string, producer Producer) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f, producer)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.c = f
	return w, nil
}

// FromEnv is Create at the path EnvVar names; with the variable unset
// the writer validates and writes nothing.
func FromEnv(producer Producer) (*Writer, error) {
	if p := os.Getenv(EnvVar); p != "" {
		return Create(p, producer)
	}
	return NewWriter(io.Discard, producer)
}

// Close flushes and closes a file made by Create or FromEnv.
func (w *Writer) Close() error {
	err := w.Flush()
	if w.c != nil {
		if cerr := w.c.Close(); err == nil {
			err = cerr
		}
		w.c = nil
	}
	return err
}

// Schema and Version name the format in the header line.
const (
	Schema  = "flameox-bench-samples"
	Version = 1
)

// Bounds of a file, checked by the writers and the decoder alike.
const (
	MaxLine       = 16 << 20 // bytes of one line, newline included
	MaxLabel      = 200      // bytes of a name, id, unit or attribute
	MaxDimensions = 32
	MaxValues     = 1 << 20 // warmups plus samples of one series
)

// Units a series may declare: values are already in it.
var Units = []string{"ns", "bytes", "count", "ratio"}

// ErrBounds wraps every violation of the grammar or its bounds.
var ErrBounds = errors.New("outside the benchmark-samples grammar")

func boundsf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBounds, fmt.Sprintf(format, args...))
}

// Producer is the tool that wrote a file.
type Producer struct {
	Name    string
	Version string // "" when not stated
}

// Device is where a series ran.
type Device struct {
	Type  string // cpu, cuda, rocm, xpu, ...
	Index int64  // -1 when not stated
	// Stream is the device stream, -1 when not stated.
	Stream int64
}

// Series is one benchmark series: its identity and its values, in Unit.
type Series struct {
	ID              string
	Name            string
	Unit            string // one of Units
	Clock           string // "" when not stated; device-event clocks end in "_event"
	Synchronization string // "" when not stated
	Scope           string
	Phase           string
	LoopCount       int64 // 0 when not stated
	Worker          string
	Trial           string
	Variant         string
	Device          *Device           // nil when not stated
	Dimensions      map[string]string // at most MaxDimensions
	Warmups         []float64
	Samples         []float64
}

// DeviceEvent reports whether a clock is a device-event timer.
func DeviceEvent(clock string) bool {
	return len(clock) > len("_event") && clock[len(clock)-len("_event"):] == "_event"
}

// CheckLabel checks a label: 1 to MaxLabel bytes of valid UTF-8.
func CheckLabel(what, s string) error {
	switch {
	case s == "":
		return boundsf("%s is empty", what)
	case len(s) > MaxLabel:
		return boundsf("%s is longer than %d bytes", what, MaxLabel)
	case !utf8.ValidString(s):
		return boundsf("%s is not valid UTF-8", what)
	}
	return nil
}

// Check validates a series against the grammar.
func (s *Series) Check() error {
	for _, l := range []struct{ what, v string }{{"id", s.ID}, {"name", s.Name}} {
		if err := CheckLabel(l.what, l.v); err != nil {
			return err
		}
	}
	known := false
	for _, u := range Units {
		known = known || s.Unit == u
	}
	if !known {
		return boundsf("unit %q is not one of ns, bytes, count, ratio", s.Unit)
	}
	for _, l := range []struct{ what, v string }{{"clock", s.Clock}, {"synchronization", s.Synchronization},
		{"scope", s.Scope}, {"phase", s.Phase}, {"worker", s.Worker}, {"trial", s.Trial}, {"variant", s.Variant}} {
		if l.v != "" {
			if err := CheckLabel(l.what, l.v); err != nil {
				return err
			}
		}
	}
	if s.LoopCount < 0 {
		return boundsf("loop_count %d is negative", s.LoopCount)
	}
	if d := s.Device; d != nil {
		if err := CheckLabel("device.type", d.Type); err != nil {
			return err
		}
		if d.Index < -1 || d.Stream < -1 {
			return boundsf("device index and stream are non-negative")
		}
	}
	if len(s.Dimensions) > MaxDimensions {
		return boundsf("%d dimensions, more than %d", len(s.Dimensions), MaxDimensions)
	}
	for k, v := range s.Dimensions {
		if err := CheckLabel("dimension name", k); err != nil {
			return err
		}
		if k == "worker" || k == "trial" {
			return boundsf("dimension %q is reserved: use the series' %s field", k, k)
		}
		if err := CheckLabel("dimension "+k, v); err != nil {
			return err
		}
	}
	if len(s.Warmups)+len(s.Samples) > MaxValues {
		return boundsf("%d values, more than %d", len(s.Warmups)+len(s.Samples), MaxValues)
	}
	for _, list := range [][]float64{s.Warmups, s.Samples} {
		for _, v := range list {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return boundsf("values must be finite, found %v", v)
			}
		}
	}
	return nil
}

// Writer writes a benchmark-samples file: the header, then one line per
// series. It is not safe for concurrent use.
type Writer struct {
	w   *bufio.Writer
	c   io.Closer // the file of Create
	ids map[string]bool
	err error
}

// NewWriter writes the header for producer to w.
func NewWriter(w io.Writer, producer Producer) (*Writer, error) {
	if err := CheckLabel("producer name", producer.Name); err != nil {
		return nil, err
	}
	if producer.Version != "" {
		if err := CheckLabel("producer version", producer.Version); err != nil {
			return nil, err
		}
	}
	bw := bufio.NewWriter(w)
	b := []byte(`{"schema":"` + Schema + `","version":` + strconv.Itoa(Version) + `,"producer":{"name":`)
	b = appendString(b, producer.Name)
	if producer.Version != "" {
		b = append(b, `,"version":`...)
		b = appendString(b, producer.Version)
	}
	b = append(b, "}}\n"...)
	if _, err := bw.Write(b); err != nil {
		return nil, err
	}
	return &Writer{w: bw, ids: map[string]bool{}}, nil
}

// Series validates s and writes its line; an invalid series writes
// nothing.
func (w *Writer) Series(s *Series) error {
	if w.err != nil {
		return w.err
	}
	if err := s.Check(); err != nil {
		return err
	}
	if w.ids[s.ID] {
		return boundsf("series id %q written twice", s.ID)
	}
	b := Append(nil, s)
	if len(b) > MaxLine {
		return boundsf("the series' line is %d bytes, more than %d", len(b), MaxLine)
	}
	w.ids[s.ID] = true
	if _, err := w.w.Write(b); err != nil {
		w.err = err
	}
	return w.err
}

// Flush writes what is buffered.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// Append appends the line of a checked series, newline included.
func Append(b []byte, s *Series) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, s.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"unit":`...)
	b = appendString(b, s.Unit)
	for _, f := range []struct{ k, v string }{{"clock", s.Clock}, {"synchronization", s.Synchronization},
		{"scope", s.Scope}, {"phase", s.Phase}, {"worker", s.Worker}, {"trial", s.Trial}, {"variant", s.Variant}} {
		if f.v != "" {
			b = append(b, `,"`+f.k+`":`...)
			b = appendString(b, f.v)
		}
	}
	if s.LoopCount > 0 {
		b = append(b, `,"loop_count":`...)
		b = strconv.AppendInt(b, s.LoopCount, 10)
	}
	if d := s.Device; d != nil {
		b = append(b, `,"device":{"type":`...)
		b = appendString(b, d.Type)
		if d.Index >= 0 {
			b = append(b, `,"index":`...)
			b = strconv.AppendInt(b, d.Index, 10)
		}
		if d.Stream >= 0 {
			b = append(b, `,"stream":`...)
			b = strconv.AppendInt(b, d.Stream, 10)
		}
		b = append(b, '}')
	}
	if len(s.Dimensions) > 0 {
		b = append(b, `,"dimensions":{`...)
		keys := make([]string, 0, len(s.Dimensions))
		for k := range s.Dimensions {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, s.Dimensions[k])
		}
		b = append(b, '}')
	}
	for _, l := range []struct {
		k string
		v []float64
	}{{"warmups", s.Warmups}, {"samples", s.Samples}} {
		b = append(b, `,"`+l.k+`":[`...)
		for i, v := range l.v {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, fmt.Sprintf(`\u%04x`, c)...)
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// ParseHeader parses the header line.
func ParseHeader(line []byte) (Producer, error) {
	var p Producer
	w := &jsonscan.Walker{S: jsonscan.NewBytes(line)}
	w.S.MaxDepth = 4
	var schema string
	var version int64
	var hasVersion, hasProducer bool
	err := w.Document("a benchmark-samples header", func(key []byte) error {
		var err error
		switch string(key) {
		case "schema":
			schema, err = w.String("schema")
		case "version":
			version, err = w.Int("version")
			hasVersion = true
		case "producer":
			hasProducer = true
			err = w.Object("producer", func(k []byte) error {
				var err error
				switch string(k) {
				case "name":
					p.Name, err = w.String("producer name")
				case "version":
					p.Version, err = w.String("producer version")
				default:
					err = boundsf("producer field %q is not part of the schema", k)
				}
				return err
			})
		default:
			err = boundsf("header field %q is not part of the schema", key)
		}
		return err
	})
	if err != nil {
		return p, err
	}
	switch {
	case schema != Schema:
		return p, boundsf("the header's schema is %q, not %q", schema, Schema)
	case !hasVersion || version != Version:
		return p, boundsf("the header's version is %d, not %d", version, Version)
	case !hasProducer:
		return p, boundsf("the header names no producer")
	}
	if err := CheckLabel("producer name", p.Name); err != nil {
		return p, err
	}
	return p, nil
}

// ParseSeries parses and checks one series line.
func ParseSeries(line []byte) (*Series, error) {
	s := &Series{}
	w := &jsonscan.Walker{S: jsonscan.NewBytes(line)}
	w.S.MaxDepth = 4
	seen := map[string]bool{}
	str := func(dst *string, what string) error {
		v, err := w.String(what)
		*dst = v
		return err
	}
	values := func(dst *[]float64, what string) error {
		return w.Array(what, func(i int, tok jsonscan.Token) error {
			if len(s.Warmups)+len(s.Samples) >= MaxValues {
				return boundsf("more than %d values", MaxValues)
			}
			v, err := w.FloatOf(tok, what+" value")
			*dst = append(*dst, v)
			return err
		})
	}
	err := w.Document("a benchmark series", func(key []byte) error {
		k := string(key)
		seen[k] = true
		switch k {
		case "id":
			return str(&s.ID, k)
		case "name":
			return str(&s.Name, k)
		case "unit":
			return str(&s.Unit, k)
		case "clock":
			return str(&s.Clock, k)
		case "synchronization":
			return str(&s.Synchronization, k)
		case "scope":
			return str(&s.Scope, k)
		case "phase":
			return str(&s.Phase, k)
		case "worker":
			return str(&s.Worker, k)
		case "trial":
			return str(&s.Trial, k)
		case "variant":
			return str(&s.Variant, k)
		case "loop_count":
			n, err := w.Int(k)
			if err == nil && n < 1 {
				err = boundsf("loop_count %d is below 1", n)
			}
			s.LoopCount = n
			return err
		case "device":
			d := &Device{Index: -1, Stream: -1}
			s.Device = d
			return w.Object("device", func(f []byte) error {
				var err error
				switch string(f) {
				case "type":
					d.Type, err = w.String("device.type")
				case "index", "stream":
					var n int64
					n, err = w.Int("device." + string(f))
					if err == nil && n < 0 {
						err = boundsf("device.%s %d is negative", f, n)
					}
					if string(f) == "index" {
						d.Index = n
					} else {
						d.Stream = n
					}
				default:
					err = boundsf("device field %q is not part of the schema", f)
				}
				return err
			})
		case "dimensions":
			s.Dimensions = map[string]string{}
			return w.Object("dimensions", func(f []byte) error {
				if len(s.Dimensions) >= MaxDimensions {
					return boundsf("more than %d dimensions", MaxDimensions)
				}
				v, err := w.String("dimension " + string(f))
				s.Dimensions[string(f)] = v
				return err
			})
		case "warmups":
			return values(&s.Warmups, k)
		case "samples":
			return values(&s.Samples, k)
		}
		return boundsf("series field %q is not part of the schema", k)
	})
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"id", "name", "unit", "samples"} {
		if !seen[k] {
			return nil, boundsf("a series needs %s", k)
		}
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	return s, nil
}
