// Package observe is flameox's Go SDK for workload observations: named
// values and phases that a program records into the file that capture
// provider `observations` names in FLAMEOX_OBSERVATIONS.
//
// It also owns the record grammar (docs/observations.md): ParseRecord is
// what the `observations` decoder applies to every line, with the same
// bounds the SDKs enforce when they write, so a record the SDK accepts is
// one the decoder accepts and the other way round.
//
//	rec, err := observe.FromEnv() // nil when not under capture; methods still validate
//	end, err := rec.Phase("warmup")
//	err = rec.Observe("loss", 0.25, observe.Unit("ratio"))
//	err = end()
//
// It imports internal/jsonscan only, so a workload that imports it pulls
// in nothing else of flameox.
package observe

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Record grammar bounds, shared by the SDKs and the decoder.
const (
	EnvVar     = "FLAMEOX_OBSERVATIONS"
	Version    = 1
	MaxLine    = 16 << 10 // bytes of one record line, newline included
	MaxLabel   = 200      // characters (code points) of a name, phase or unit; at least 1
	MaxDepth   = 8        // arrays and objects nested in one value
	MaxEntries = 256      // elements of one array, members of one object
)

// Record kinds.
const (
	KindObservation = "observation"
	KindPhaseStart  = "phase_start"
	KindPhaseEnd    = "phase_end"
)

// ErrBounds is wrapped by every violation of the record grammar, at write
// time and at decode time.
var ErrBounds = errors.New("observation outside the record bounds")

func boundsf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBounds}, args...)...)
}

// CheckLabel validates a name, phase or unit.
func CheckLabel(what, s string) error {
	if !utf8.ValidString(s) {
		return boundsf("%s is not valid UTF-8", what)
	}
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxLabel {
		return boundsf("%s has %d characters; it must have 1 to %d", what, n, MaxLabel)
	}
	return nil
}

// Recorder appends records to an observations file. A nil *Recorder
// validates every call and writes nothing, so code can record
// unconditionally.
type Recorder struct {
	mu  sync.Mutex
	f   *os.File
	pid int64
}

// Open opens path for appending records. Each record is one write(2) on an
// O_APPEND descriptor, so processes sharing the file do not interleave
// within a line.
func Open(path string) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	return &Recorder{f: f, pid: int64(os.Getpid())}, nil
}

// FromEnv opens the file named by FLAMEOX_OBSERVATIONS, or returns a nil
// Recorder when it is unset (the program is not under capture).
func FromEnv() (*Recorder, error) {
	p := os.Getenv(EnvVar)
	if p == "" {
		return nil, nil
	}
	return Open(p)
}

// Close closes the file.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

type options struct {
	phase, unit string
	ts          int64
	hasTS       bool
}

// Option qualifies an observation.
type Option func(*options)

// InPhase records the observation as part of a phase.
func InPhase(name string) Option { return func(o *options) { o.phase = name } }

// Unit names the value's unit, e.g. "s", "ms", "bytes".
func Unit(u string) Option { return func(o *options) { o.unit = u } }

// At sets the timestamp in nanoseconds since the Unix epoch (default: now).
func At(ns int64) Option { return func(o *options) { o.ts, o.hasTS = ns, true } }

// Observe records a named value. The value may be nil, a bool, a string,
// any integer, a finite float, a json.Number, or slices, arrays and
// string-keyed maps of those, nested at most MaxDepth levels with at most
// MaxEntries entries each.
func (r *Recorder) Observe(name string, value any, opts ...Option) error {
	b, o, err := begin(KindObservation, "name", name, opts)
	if err != nil {
		return err
	}
	b = append(b, `,"value":`...)
	if b, err = appendValue(b, reflect.ValueOf(value), 0); err != nil {
		return err
	}
	for _, f := range []struct{ key, val string }{{"phase", o.phase}, {"unit", o.unit}} {
		if f.val == "" {
			continue
		}
		if err := CheckLabel(f.key, f.val); err != nil {
			return err
		}
		b = append(b, `,"`+f.key+`":`...)
		b = appendString(b, f.val)
	}
	return r.write(b, o)
}

// StartPhase records the start of a phase.
func (r *Recorder) StartPhase(name string, opts ...Option) error {
	return r.phase(KindPhaseStart, name, opts)
}

// EndPhase records the end of a phase.
func (r *Recorder) EndPhase(name string, opts ...Option) error {
	return r.phase(KindPhaseEnd, name, opts)
}

// Phase starts a phase and returns the function that ends it.
func (r *Recorder) Phase(name string) (end func() error, err error) {
	if err := r.StartPhase(name); err != nil {
		return nil, err
	}
	return func() error { return r.EndPhase(name) }, nil
}

func (r *Recorder) phase(kind, name string, opts []Option) error {
	b, o, err := begin(kind, "phase", name, opts)
	if err != nil {
		return err
	}
	return r.write(b, o)
}

// begin applies opts and opens a record of kind with its labelled field:
// `{"v":1,"kind":KIND,"KEY":NAME`.
func begin(kind, key, name string, opts []Option) ([]byte, options, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := CheckLabel(key, name); err != nil {
		return nil, o, err
	}
	b := append(make([]byte, 0, 128), `{"v":1,"kind":"`...)
	b = append(b, kind...)
	b = append(b, `","`...)
	b = append(b, key...)
	b = append(b, `":`...)
	return appendString(b, name), o, nil
}

// write adds the timestamp and pid, checks the line bound and appends.
func (r *Recorder) write(b []byte, o options) error {
	ts := o.ts
	if !o.hasTS {
		ts = time.Now().UnixNano()
	}
	if ts < 0 {
		return boundsf("timestamp %d is negative", ts)
	}
	pid := int64(os.Getpid())
	if r != nil {
		pid = r.pid
	}
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, "}\n"...)
	if len(b) > MaxLine {
		return boundsf("record is %d bytes; a line holds at most %d", len(b), MaxLine)
	}
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return errors.New("observe: recorder is closed")
	}
	if _, err := r.f.Write(b); err != nil {
		return fmt.Errorf("observe: %w", err)
	}
	return nil
}

// appendString writes s as a JSON string; s is valid UTF-8 (checked by
// the caller).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

var numberType = reflect.TypeFor[interface{ Float64() (float64, error) }]()

func appendValue(b []byte, v reflect.Value, depth int) ([]byte, error) {
	if !v.IsValid() {
		return append(b, "null"...), nil
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		if v.Kind() == reflect.Interface {
			return appendValue(b, v.Elem(), depth)
		}
		return nil, boundsf("unsupported value type %s", v.Type())
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, boundsf("value %v is not a finite number", f)
		}
		bits := 64
		if v.Kind() == reflect.Float32 {
			bits = 32
		}
		return strconv.AppendFloat(b, f, 'g', -1, bits), nil
	case reflect.String:
		s := v.String()
		if v.Type().Implements(numberType) { // json.Number
			if err := checkNumber(s); err != nil {
				return nil, err
			}
			return append(b, s...), nil
		}
		if !utf8.ValidString(s) {
			return nil, boundsf("string value is not valid UTF-8")
		}
		return appendString(b, s), nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return append(b, "null"...), nil
		}
		if err := checkContainer(depth, v.Len()); err != nil {
			return nil, err
		}
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, v.Index(i), depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, boundsf("map keys must be strings, not %s", v.Type().Key())
		}
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		if err := checkContainer(depth, v.Len()); err != nil {
			return nil, err
		}
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if !utf8.ValidString(k) {
				return nil, boundsf("object key is not valid UTF-8")
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())), depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, boundsf("unsupported value type %s", v.Type())
}

func checkContainer(depth, n int) error {
	if depth >= MaxDepth {
		return boundsf("value nests deeper than %d levels", MaxDepth)
	}
	if n > MaxEntries {
		return boundsf("a collection has %d entries; at most %d", n, MaxEntries)
	}
	return nil
}

// checkNumber accepts a JSON number literal whose value is finite.
func checkNumber(s string) error {
	if !jsonNumber(s) {
		return boundsf("%q is not a JSON number", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '.' || s[i] == 'e' || s[i] == 'E' {
			if f, err := strconv.ParseFloat(s, 64); err != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
				return boundsf("number %s is not finite as a double", s)
			}
			return nil
		}
	}
	return nil // integers of any size are exact and finite
}

func jsonNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
