// Package kernelvalidation is flameox's kernel validation receipt: the
// record a validation command writes for each case it checks (a kernel's
// output against a reference), and the grammar flameox's decoder holds
// every line to (docs/validation.md).
//
// A receipt file is JSONL, one receipt per line, each opening with the
// schema marker {"schema":"flameox.kernel-validation","v":1,...}. The
// bounds are the observations SDK's (pkg/observe): a line is at most
// observe.MaxLine bytes, labels have 1 to observe.MaxLabel characters,
// text is valid UTF-8, numbers are finite, JSON is strict. ParseReceipt is
// what the decoder applies and what Writer checks before it writes, so a
// receipt the SDK writes is one the decoder reads, and the other way
// round. The Python SDK (sdk/python/flameox_validate.py) enforces the
// same rules.
//
//	w, err := kernelvalidation.Open(path, kernelvalidation.Producer{Name: "gemm-check", Version: "1.2"})
//	r := kernelvalidation.CompareFloat64("gemm/fp32/256", want, got, kernelvalidation.Tolerance{Atol: 1e-5, Rtol: 1e-4})
//	r.Device, r.DType, r.Shape = "cuda:0", "float32", []int64{256, 256}
//	err = w.Write(r)
//
// It imports internal/jsonscan and pkg/observe only.
package kernelvalidation

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/pkg/observe"
)

// The receipt grammar.
const (
	Schema    = "flameox.kernel-validation"
	Version   = 1
	EnvVar    = "FLAMEOX_KERNEL_VALIDATION" // the receipt file a capture names
	MaxLine   = observe.MaxLine             // bytes of one receipt line, newline included
	MaxLabel  = observe.MaxLabel            // characters of a case id, producer, dtype, device
	MaxText   = 4096                        // characters of a reason, a string value, a console path
	MaxShape  = observe.MaxEntries          // dimensions of a shape
	digestLen = len("sha256:") + 64
)

// Statuses.
const (
	Pass         = "pass"
	Fail         = "fail"
	Inconclusive = "inconclusive" // the check could not decide (a reference missing, a timeout)
	Unsupported  = "unsupported"  // the case does not apply here (dtype, device)
)

// Statuses lists them in order.
var Statuses = []string{Pass, Fail, Inconclusive, Unsupported}

// ErrBounds is wrapped by every violation of the grammar.
var ErrBounds = errors.New("kernel validation receipt outside the grammar")

func boundsf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBounds}, args...)...)
}

// Producer names the validation command.
type Producer struct {
	Name    string
	Version string // "" when unknown
}

// Digest stands for a value too large to inline: its SHA-256 and size.
type Digest struct {
	SHA256 string // "sha256:" and 64 lowercase hex digits
	Bytes  int64  // -1 when unknown
}

// Tolerance is the comparison's tolerance; a negative field is unset.
type Tolerance struct {
	Atol, Rtol float64
}

// Console refers to the validation command's console (stdout and stderr),
// kept whole in its own file as oracle input.
type Console struct {
	Path   string
	SHA256 string // 64 lowercase hex digits
	Bytes  int64
}

// Receipt is one validated case.
type Receipt struct {
	Producer Producer
	Case     string
	Status   string
	Reason   string // "" when none
	// Expected and Observed are nil, a bool, a finite number (float64,
	// an integer type or json.Number), a string, or a Digest.
	Expected, Observed any
	MaxAbsError        *float64
	MaxRelError        *float64
	Tolerance          *Tolerance
	DType              string  // "" when unknown
	Shape              []int64 // nil when unknown
	Device             string  // "" when unknown
	Console            *Console
	TS                 int64 // nanoseconds since the Unix epoch
	PID                int64
}

// F returns a pointer to v, for the error fields.
func F(v float64) *float64 { return &v }

func checkText(what, s string, min, max int) error {
	if !utf8.ValidString(s) {
		return boundsf("%s is not valid UTF-8", what)
	}
	if n := utf8.RuneCountInString(s); n < min || n > max {
		return boundsf("%s has %d characters; it must have %d to %d", what, n, min, max)
	}
	return nil
}

func checkHex(what, s string, n int) error {
	if len(s) != n {
		return boundsf("%s must be %d lowercase hex digits", what, n)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return boundsf("%s must be %d lowercase hex digits", what, n)
		}
	}
	return nil
}

// number reads a finite number literal.
func number(lit []byte) (any, error) {
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, boundsf("number %s is not finite as a double", lit)
	}
	return json.Number(lit), nil
}

func asFloat(what string, v any, nonNegative bool) (*float64, error) {
	if v == nil {
		return nil, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, boundsf("%s must be a number or null", what)
	}
	f, _ := n.Float64()
	if nonNegative && f < 0 {
		return nil, boundsf("%s %s is negative", what, n)
	}
	return &f, nil
}

func asInt(what string, v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, boundsf("%s must be an integer", what)
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, boundsf("%s must be a 64-bit integer, not %s", what, n)
	}
	if i < 0 {
		return 0, boundsf("%s %d is negative", what, i)
	}
	return i, nil
}

func optLabel(what string, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", boundsf("%s must be a string or null", what)
	}
	return s, checkText(what, s, 1, MaxLabel)
}

func fields(what string, v any, allowed ...string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, boundsf("%s must be an object", what)
	}
	for k := range m {
		found := false
		for _, a := range allowed {
			found = found || k == a
		}
		if !found {
			return nil, boundsf("%s has no field %q", what, k)
		}
	}
	return m, nil
}

// value reads expected or observed.
func value(what string, v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, json.Number:
		return x, nil
	case string:
		return x, checkText(what, x, 0, MaxText)
	case map[string]any:
		m, err := fields(what, x, "digest", "bytes")
		if err != nil {
			return nil, err
		}
		d, _ := m["digest"].(string)
		if len(d) != digestLen || d[:7] != "sha256:" || checkHex(what, d[7:], 64) != nil {
			return nil, boundsf("%s digest must be \"sha256:\" and 64 lowercase hex digits", what)
		}
		out := Digest{SHA256: d, Bytes: -1}
		if b, ok := m["bytes"]; ok && b != nil {
			n, err := asInt(what+" bytes", b)
			if err != nil {
				return nil, err
			}
			out.Bytes = n
		}
		return out, nil
	}
	return nil, boundsf("%s must be null, a boolean, a number, a string or a digest object", what)
}

var receiptFields = []string{"schema", "v", "producer", "case", "status", "reason", "expected", "observed",
	"max_abs_error", "max_rel_error", "tolerance", "dtype", "shape", "device", "console", "ts", "pid"}

// ParseReceipt parses and validates one receipt line (its newline may be
// included). Syntax errors are *jsonscan.Error; everything outside the
// grammar wraps ErrBounds. The line length bound is the caller's.
func ParseReceipt(line []byte) (*Receipt, error) {
	s := jsonscan.NewBytes(line)
	s.MaxDepth = 4
	tok, err := s.Next()
	if err != nil {
		return nil, err
	}
	if tok.Kind != jsonscan.ObjectStart {
		return nil, boundsf("a receipt must be a JSON object")
	}
	v, err := s.Value(tok, jsonscan.ValueLimits{MaxDepth: 3, MaxEntries: MaxShape, Number: number})
	var be *jsonscan.BoundError
	if errors.As(err, &be) {
		return nil, boundsf("a receipt nests deeper than its fields allow or has more than %d entries in one collection", MaxShape)
	}
	if err != nil {
		return nil, err
	}
	if err := s.CheckEnd(); err != nil {
		return nil, err
	}
	m, err := fields("the receipt", v, receiptFields...)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"schema", "v", "producer", "case", "status", "ts", "pid"} {
		if _, ok := m[k]; !ok {
			return nil, boundsf("field %q is missing", k)
		}
	}
	if m["schema"] != Schema {
		return nil, boundsf("schema must be %q", Schema)
	}
	if n, err := asInt("v", m["v"]); err != nil || n != Version {
		return nil, boundsf("receipt version must be %d", Version)
	}
	r := &Receipt{}
	p, err := fields("producer", m["producer"], "name", "version")
	if err != nil {
		return nil, err
	}
	name, _ := p["name"].(string)
	if err := checkText("producer name", name, 1, MaxLabel); err != nil {
		return nil, err
	}
	r.Producer.Name = name
	if r.Producer.Version, err = optLabel("producer version", p["version"]); err != nil {
		return nil, err
	}
	c, ok := m["case"].(string)
	if !ok {
		return nil, boundsf("case must be a string")
	}
	if err := checkText("case", c, 1, MaxLabel); err != nil {
		return nil, err
	}
	r.Case = c
	st, _ := m["status"].(string)
	switch st {
	case Pass, Fail, Inconclusive, Unsupported:
		r.Status = st
	default:
		return nil, boundsf("status must be pass, fail, inconclusive or unsupported")
	}
	if rs := m["reason"]; rs != nil {
		s, ok := rs.(string)
		if !ok {
			return nil, boundsf("reason must be a string or null")
		}
		if err := checkText("reason", s, 1, MaxText); err != nil {
			return nil, err
		}
		r.Reason = s
	}
	if r.Reason == "" && (r.Status == Inconclusive || r.Status == Unsupported) {
		return nil, boundsf("an %s receipt needs a reason", r.Status)
	}
	if r.Expected, err = value("expected", m["expected"]); err != nil {
		return nil, err
	}
	if r.Observed, err = value("observed", m["observed"]); err != nil {
		return nil, err
	}
	if r.MaxAbsError, err = asFloat("max_abs_error", m["max_abs_error"], true); err != nil {
		return nil, err
	}
	if r.MaxRelError, err = asFloat("max_rel_error", m["max_rel_error"], true); err != nil {
		return nil, err
	}
	if t := m["tolerance"]; t != nil {
		tm, err := fields("tolerance", t, "atol", "rtol")
		if err != nil {
			return nil, err
		}
		r.Tolerance = &Tolerance{Atol: -1, Rtol: -1}
		if a, err := asFloat("tolerance atol", tm["atol"], true); err != nil {
			return nil, err
		} else if a != nil {
			r.Tolerance.Atol = *a
		}
		if a, err := asFloat("tolerance rtol", tm["rtol"], true); err != nil {
			return nil, err
		} else if a != nil {
			r.Tolerance.Rtol = *a
		}
	}
	if r.DType, err = optLabel("dtype", m["dtype"]); err != nil {
		return nil, err
	}
	if r.Device, err = optLabel("device", m["device"]); err != nil {
		return nil, err
	}
	if sh := m["shape"]; sh != nil {
		list, ok := sh.([]any)
		if !ok {
			return nil, boundsf("shape must be an array of integers or null")
		}
		r.Shape = make([]int64, len(list))
		for i, d := range list {
			if r.Shape[i], err = asInt("shape dimension", d); err != nil {
				return nil, err
			}
		}
	}
	if co := m["console"]; co != nil {
		cm, err := fields("console", co, "path", "sha256", "bytes")
		if err != nil {
			return nil, err
		}
		path, _ := cm["path"].(string)
		if err := checkText("console path", path, 1, MaxText); err != nil {
			return nil, err
		}
		sum, _ := cm["sha256"].(string)
		if err := checkHex("console sha256", sum, 64); err != nil {
			return nil, err
		}
		n, err := asInt("console bytes", cm["bytes"])
		if err != nil {
			return nil, err
		}
		r.Console = &Console{Path: path, SHA256: sum, Bytes: n}
	}
	if r.TS, err = asInt("ts", m["ts"]); err != nil {
		return nil, err
	}
	if r.PID, err = asInt("pid", m["pid"]); err != nil {
		return nil, err
	}
	return r, nil
}
