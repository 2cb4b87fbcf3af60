package kernelvalidation

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Writer appends receipts to a receipt file. A nil *Writer validates
// every receipt and writes nothing, so code can record unconditionally.
type Writer struct {
	mu       sync.Mutex
	f        *os.File
	producer Producer
}

// Open opens path for appending receipts of producer. Each receipt is one
// write(2) on an O_APPEND descriptor, so processes sharing the file do
// not interleave within a line.
func Open(path string, producer Producer) (*Writer, error) {
	if err := checkText("producer name", producer.Name, 1, MaxLabel); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f, producer: producer}, nil
}

// FromEnv opens the file FLAMEOX_KERNEL_VALIDATION names; nil (and no
// error) when it is unset.
func FromEnv(producer Producer) (*Writer, error) {
	path := os.Getenv(EnvVar)
	if path == "" {
		return nil, nil
	}
	return Open(path, producer)
}

// Close closes the file.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Close()
}

// Write validates r and appends it. The writer's producer, the time (when
// r.TS is 0) and the pid are filled in. A receipt outside the grammar is
// an error wrapping ErrBounds, and nothing is written.
func (w *Writer) Write(r Receipt) error {
	if w != nil && r.Producer.Name == "" {
		r.Producer = w.producer
	}
	if r.TS == 0 {
		r.TS = time.Now().UnixNano()
	}
	if r.PID == 0 {
		r.PID = int64(os.Getpid())
	}
	line, err := Marshal(r)
	if err != nil {
		return err
	}
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.f.Write(line)
	return err
}

// Marshal encodes r as its receipt line (newline included), checked by
// ParseReceipt: what it returns, the decoder reads.
func Marshal(r Receipt) ([]byte, error) {
	texts := []string{r.Producer.Name, r.Producer.Version, r.Case, r.Status, r.Reason, r.DType, r.Device}
	if s, ok := r.Expected.(string); ok {
		texts = append(texts, s)
	}
	if s, ok := r.Observed.(string); ok {
		texts = append(texts, s)
	}
	if r.Console != nil {
		texts = append(texts, r.Console.Path)
	}
	for _, s := range texts {
		if !utf8.ValidString(s) {
			return nil, boundsf("text %q is not valid UTF-8", s)
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"schema":"` + Schema + `","v":` + strconv.Itoa(Version) + `,"producer":{"name":`)
	str(&b, r.Producer.Name)
	b.WriteString(`,"version":`)
	optStr(&b, r.Producer.Version)
	b.WriteString(`},"case":`)
	str(&b, r.Case)
	b.WriteString(`,"status":`)
	str(&b, r.Status)
	b.WriteString(`,"reason":`)
	optStr(&b, r.Reason)
	for _, kv := range []struct {
		key string
		v   any
	}{{"expected", r.Expected}, {"observed", r.Observed}} {
		b.WriteString(`,"` + kv.key + `":`)
		if err := val(&b, kv.key, kv.v); err != nil {
			return nil, err
		}
	}
	b.WriteString(`,"max_abs_error":`)
	if err := optNum(&b, "max_abs_error", r.MaxAbsError); err != nil {
		return nil, err
	}
	b.WriteString(`,"max_rel_error":`)
	if err := optNum(&b, "max_rel_error", r.MaxRelError); err != nil {
		return nil, err
	}
	b.WriteString(`,"tolerance":`)
	if t := r.Tolerance; t == nil {
		b.WriteString("null")
	} else {
		b.WriteString(`{"atol":`)
		if err := tol(&b, t.Atol); err != nil {
			return nil, err
		}
		b.WriteString(`,"rtol":`)
		if err := tol(&b, t.Rtol); err != nil {
			return nil, err
		}
		b.WriteString("}")
	}
	b.WriteString(`,"dtype":`)
	optStr(&b, r.DType)
	b.WriteString(`,"shape":`)
	if r.Shape == nil {
		b.WriteString("null")
	} else {
		b.WriteString("[")
		for i, d := range r.Shape {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.FormatInt(d, 10))
		}
		b.WriteString("]")
	}
	b.WriteString(`,"device":`)
	optStr(&b, r.Device)
	b.WriteString(`,"console":`)
	if c := r.Console; c == nil {
		b.WriteString("null")
	} else {
		b.WriteString(`{"path":`)
		str(&b, c.Path)
		b.WriteString(`,"sha256":`)
		str(&b, c.SHA256)
		b.WriteString(`,"bytes":` + strconv.FormatInt(c.Bytes, 10) + "}")
	}
	b.WriteString(`,"ts":` + strconv.FormatInt(r.TS, 10) + `,"pid":` + strconv.FormatInt(r.PID, 10) + "}\n")
	if b.Len() > MaxLine {
		return nil, boundsf("receipt is %d bytes; a line holds at most %d", b.Len(), MaxLine)
	}
	if _, err := ParseReceipt(b.Bytes()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func str(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // Marshal checked that every string is UTF-8
	b.Write(enc)
}

func optStr(b *bytes.Buffer, s string) {
	if s == "" {
		b.WriteString("null")
		return
	}
	str(b, s)
}

func num(b *bytes.Buffer, what string, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return boundsf("%s %v is not a finite number", what, f)
	}
	b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return nil
}

func optNum(b *bytes.Buffer, what string, f *float64) error {
	if f == nil {
		b.WriteString("null")
		return nil
	}
	return num(b, what, *f)
}

func tol(b *bytes.Buffer, f float64) error {
	if f < 0 {
		b.WriteString("null")
		return nil
	}
	return num(b, "tolerance", f)
}

func val(b *bytes.Buffer, what string, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		str(b, x)
	case json.Number:
		b.WriteString(x.String())
	case float32:
		return num(b, what, float64(x))
	case float64:
		return num(b, what, x)
	case Digest:
		b.WriteString(`{"digest":`)
		str(b, x.SHA256)
		b.WriteString(`,"bytes":`)
		if x.Bytes < 0 {
			b.WriteString("null")
		} else {
			b.WriteString(strconv.FormatInt(x.Bytes, 10))
		}
		b.WriteString("}")
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			b.WriteString(strconv.FormatInt(rv.Int(), 10))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			b.WriteString(strconv.FormatUint(rv.Uint(), 10))
		default:
			return boundsf("%s of type %T: give a bool, number, string or Digest (DigestOf for arrays)", what, v)
		}
	}
	return nil
}

// DigestOf is the digest of a value's bytes (an array's raw buffer).
func DigestOf(data []byte) Digest {
	sum := sha256.Sum256(data)
	return Digest{SHA256: "sha256:" + hex.EncodeToString(sum[:]), Bytes: int64(len(data))}
}

// ConsoleFile refers to a console file by its path, SHA-256 and size.
func ConsoleFile(path string) (*Console, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, err
	}
	return &Console{Path: path, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n}, nil
}

// CompareFloat64 checks observed against expected element by element as
// numpy.allclose does (|o-e| <= atol + rtol*|e|, NaN never close): status
// pass or fail, the largest absolute and relative errors (relative to
// |e|, over elements where e is not 0), and both arrays as digests of
// their little-endian float64 bytes. Arrays of different lengths are
// fail with that reason.
func CompareFloat64(caseID string, expected, observed []float64, t Tolerance) Receipt {
	r := Receipt{Case: caseID, Tolerance: &t, DType: "float64", Shape: []int64{int64(len(expected))},
		Expected: DigestOf(le(expected)), Observed: DigestOf(le(observed))}
	if len(expected) != len(observed) {
		r.Status, r.Reason = Fail, fmt.Sprintf("observed has %d elements, expected %d", len(observed), len(expected))
		return r
	}
	atol, rtol := math.Max(t.Atol, 0), math.Max(t.Rtol, 0)
	var maxAbs, maxRel float64
	bad, nan := 0, 0
	for i, e := range expected {
		o := observed[i]
		if math.IsNaN(o) || math.IsNaN(e) {
			nan++
			bad++
			continue
		}
		d := math.Abs(o - e)
		maxAbs = math.Max(maxAbs, d)
		if e != 0 {
			maxRel = math.Max(maxRel, d/math.Abs(e))
		}
		if d > atol+rtol*math.Abs(e) {
			bad++
		}
	}
	r.MaxAbsError, r.MaxRelError = F(maxAbs), F(maxRel)
	r.Status = Pass
	if bad > 0 {
		r.Status = Fail
		r.Reason = fmt.Sprintf("%d of %d elements outside the tolerance", bad, len(expected))
		if nan > 0 {
			r.Reason += fmt.Sprintf(" (%d NaN)", nan)
		}
	}
	return r
}

func le(v []float64) []byte {
	out := make([]byte, 8*len(v))
	for i, f := range v {
		bits := math.Float64bits(f)
		for j := 0; j < 8; j++ {
			out[8*i+j] = byte(bits >> (8 * j))
		}
	}
	return out
}
