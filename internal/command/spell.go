package command

import (
	"errors"
	"regexp"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
)

// Shared code names an argument in a failure's message as "argument NAME",
// NAME as the request model spells it (top, format, options.max_rows):
// that is already how MCP, whose arguments are those JSON properties,
// names it. A command line respells it as the flag that carries it, so a
// person reads the name they typed. The location keeps the model's name,
// for programs.

// Flag spells a request field as flameox-decode and flameox-rank take it:
// format is --artifact-format, options.X and limits.X are --option X and
// --limits X, and an operation argument is its own flag.
func Flag(field string) string {
	switch {
	case field == "format":
		return "--artifact-format"
	case strings.HasPrefix(field, "options."):
		return "--option " + strings.TrimPrefix(field, "options.")
	case strings.HasPrefix(field, "limits."):
		return "--limits " + strings.TrimPrefix(field, "limits.")
	}
	return "--" + strings.ReplaceAll(field, "_", "-")
}

var argumentRef = regexp.MustCompile(`\bargument ([a-z][a-z0-9_]*)\b`)

// Respell rewrites err's "argument NAME" references with spell, when err
// is a failure about arguments (INVALID_ARGUMENT, or UNSUPPORTED_FORMAT,
// which names the format argument). The failure is copied, not changed.
func Respell(err error, spell func(field string) string) error {
	var f *evidence.Failure
	if spell == nil || !errors.As(err, &f) || (f.Code != evidence.CodeInvalidArgument && f.Code != evidence.CodeUnsupportedFormat) {
		return err
	}
	g := *f
	// A decoder option's field is options.NAME, and its message says
	// "argument NAME" after the format.
	prefix := ""
	if i := strings.LastIndexByte(f.Location.Field, '.'); i >= 0 {
		prefix = f.Location.Field[:i+1]
	}
	g.Message = argumentRef.ReplaceAllStringFunc(f.Message, func(m string) string {
		name := argumentRef.FindStringSubmatch(m)[1]
		if prefix != "" && f.Location.Field == prefix+name {
			name = prefix + name
		}
		return spell(name)
	})
	return &g
}

// Respelled is the failure f with its argument references respelled.
func Respelled(f *evidence.Failure, spell func(field string) string) *evidence.Failure {
	return evidence.AsFailure(Respell(f, spell), f.Code)
}
