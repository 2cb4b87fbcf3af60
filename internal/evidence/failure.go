package evidence

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flameox/flameox/internal/jsonscan"
)

// Code is a typed failure code. Every command maps its failure to the same
// exit status (see ExitCode), so a pipeline can tell failures apart.
type Code string

const (
	CodeInvalidArgument     Code = "INVALID_ARGUMENT"
	CodeUnsupportedFormat   Code = "UNSUPPORTED_FORMAT"
	CodeDecodeFailure       Code = "DECODE_FAILURE"
	CodeLimitExceeded       Code = "LIMIT_EXCEEDED"
	CodeProviderUnavailable Code = "PROVIDER_UNAVAILABLE"
	CodeCaptureFailed       Code = "CAPTURE_FAILED"
	CodeIOFailure           Code = "IO_FAILURE"
	CodeIntegrity           Code = "INTEGRITY_FAILURE"
	CodeCancelled           Code = "CANCELLED"
	CodeInternal            Code = "INTERNAL"
)

// Codes lists every failure code with its exit status and meaning; the
// documentation table is generated from it.
var Codes = []struct {
	Code    Code
	Exit    int
	Meaning string
}{
	{"", 0, "success: all evidence was produced (a summary may still say `complete: false`)"},
	{CodeInternal, 1, "a defect in flameox itself; please report it"},
	{CodeInvalidArgument, 2, "a flag, argument or input block is invalid; nothing ran"},
	{CodeUnsupportedFormat, 3, "the input is not in a format the requested operation accepts"},
	{CodeDecodeFailure, 4, "the native artifact is malformed, truncated or internally inconsistent"},
	{CodeLimitExceeded, 5, "a parser ceiling or a workload budget was crossed"},
	{CodeProviderUnavailable, 6, "the collector or its binding is missing; see the retry action or guidance"},
	{CodeCaptureFailed, 7, "the workload failed, or exited without its declared outputs"},
	{CodeIOFailure, 8, "a file could not be read or written"},
	{CodeIntegrity, 9, "native bytes do not match their recorded digest or size"},
	{CodeCancelled, 130, "interrupted by a signal or an MCP cancellation"},
}

// ExitCode returns the process exit status for a failure code.
func ExitCode(c Code) int {
	for _, e := range Codes {
		if e.Code == c {
			return e.Exit
		}
	}
	return 1
}

// Location says where in a native artifact or input stream a failure is.
type Location struct {
	Path       string `json:"path,omitempty"`
	ArtifactID string `json:"artifact_id,omitempty"`
	Line       int    `json:"line,omitempty"`
	Column     int    `json:"column,omitempty"`
	Offset     int64  `json:"offset,omitempty"`
	Field      string `json:"field,omitempty"`
}

func (l Location) value() Object {
	o := Object{}
	if l.Path != "" {
		o["path"] = l.Path
	}
	if l.ArtifactID != "" {
		o["artifact_id"] = l.ArtifactID
	}
	if l.Line > 0 {
		o["line"] = l.Line
	}
	if l.Column > 0 {
		o["column"] = l.Column
	}
	if l.Offset > 0 {
		o["offset"] = l.Offset
	}
	if l.Field != "" {
		o["field"] = l.Field
	}
	return o
}

func (l Location) String() string {
	var parts []string
	if l.Path != "" {
		parts = append(parts, l.Path)
	}
	if l.Line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", l.Line))
	}
	if l.Offset > 0 {
		parts = append(parts, fmt.Sprintf("byte %d", l.Offset))
	}
	if l.Field != "" {
		parts = append(parts, "field "+l.Field)
	}
	return strings.Join(parts, ", ")
}

// Retry is an exact action that can make a failed request succeed.
type Retry struct {
	Action string   // what to do, in words
	Argv   []string // the command to run, when there is one
}

// Failure is a typed, user-facing failure. It is an error; callers find it
// with errors.As.
type Failure struct {
	Code     Code
	Message  string
	Location Location
	Details  Object
	Retry    *Retry
	Err      error // the cause, for %w chains; not serialized
}

func (f *Failure) Error() string {
	s := string(f.Code) + ": " + f.Message
	if loc := f.Location.String(); loc != "" {
		s += " (" + loc + ")"
	}
	return s
}

func (f *Failure) Unwrap() error { return f.Err }

// Kind implements Block.
func (f *Failure) Kind() string { return KindFailure }

// CanonicalValue implements Marshaler.
func (f *Failure) CanonicalValue() any {
	o := Object{
		"schema":   Schema,
		"kind":     KindFailure,
		"code":     string(f.Code),
		"message":  f.Message,
		"location": f.Location.value(),
	}
	if f.Details != nil {
		o["details"] = f.Details
	} else {
		o["details"] = Object{}
	}
	if f.Retry != nil {
		r := Object{"action": f.Retry.Action}
		if len(f.Retry.Argv) > 0 {
			r["argv"] = f.Retry.Argv
		}
		o["retry"] = r
	}
	return o
}

// Failf builds a Failure with a formatted message.
func Failf(code Code, format string, args ...any) *Failure {
	return &Failure{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap builds a Failure around a cause. When err already is (or wraps) a
// Failure, that failure is returned unchanged, so the most specific code
// wins. A jsonscan error contributes its line and byte offset, and a
// crossed token bound makes the failure LIMIT_EXCEEDED.
func Wrap(code Code, err error, format string, args ...any) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	if errors.Is(err, context.Canceled) {
		code = CodeCancelled
	}
	msg := fmt.Sprintf(format, args...)
	if err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += err.Error()
	}
	out := &Failure{Code: code, Message: msg, Err: err}
	var se *jsonscan.Error
	if errors.As(err, &se) {
		out.Location.Line = se.Line
		out.Location.Offset = se.Offset
		if errors.Is(se, jsonscan.ErrTokenTooLong) && code != CodeCancelled {
			// A crossed token bound is a parser ceiling, whichever decoder
			// met it: LIMIT_EXCEEDED with its receipt, never a malformed
			// document.
			out.Code = CodeLimitExceeded
			r := LimitReceipt{Name: jsonscan.TokenLimit, Value: se.Bound, Unit: "bytes"}
			out.Details = Object{"limit": r.value()}
		}
	}
	return out
}

// AsFailure returns err as a Failure, classifying unknown errors as code.
func AsFailure(err error, code Code) *Failure {
	if err == nil {
		return nil
	}
	return Wrap(code, err, "")
}

// At sets the location's path and artifact id when they are unset.
func (f *Failure) At(path, artifactID string) *Failure {
	if f.Location.Path == "" {
		f.Location.Path = path
	}
	if f.Location.ArtifactID == "" {
		f.Location.ArtifactID = artifactID
	}
	return f
}

// LimitExceeded is the one LIMIT_EXCEEDED failure shape: details.limit is
// the receipt (name, value, observed, unit), the same object a capture
// block records for a crossed workload budget.
func LimitExceeded(r LimitReceipt, format string, args ...any) *Failure {
	return &Failure{Code: CodeLimitExceeded, Message: fmt.Sprintf(format, args...),
		Details: Object{"limit": r.value()}}
}

// CodeOf is the code of the failure err is or wraps, or "" when err is not
// a Failure (nil included).
func CodeOf(err error) Code {
	var f *Failure
	if errors.As(err, &f) {
		return f.Code
	}
	return ""
}
