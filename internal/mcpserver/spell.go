package mcpserver

import (
	"regexp"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
)

// The flameox commands say how to fix a failure or fill a gap in their own
// flags ("decode with --option max_lines=50", "preview it with
// --artifact-format text"). Through MCP the same advice names the tool's
// arguments; spell rewrites the flags the composed commands take into
// them. A capture's analysis arguments live in its analysis object.
var (
	flagOption = regexp.MustCompile(`--option[ =]([a-z][a-z0-9_]*)`)
	flagLimits = regexp.MustCompile(`--limits[ =]([a-z][a-z0-9_]*)`)
	flagWords  = strings.NewReplacer(
		"--artifact-format", "format",
		"--workload-budget", "budget",
		"--console-output", "console_output",
		"--top", "top",
		"--preserve", "preserve",
		"--cwd", "cwd",
		"--format jsonl", `detail "full"`,
	)
)

// spell rewrites s in MCP's argument names; nested prefixes the analysis
// arguments ("analysis.") where they are nested.
func spell(s, nested string) string {
	if !strings.Contains(s, "--") {
		return s
	}
	s = flagOption.ReplaceAllString(s, nested+"options.$1")
	s = flagLimits.ReplaceAllString(s, nested+"limits.$1")
	s = strings.ReplaceAll(s, "--option", nested+"options")
	s = strings.ReplaceAll(s, "--limits", nested+"limits")
	return flagWords.Replace(s)
}

// spellFailure rewrites a failure's message and retry action.
func spellFailure(f evidence.Object, nested string) {
	if m, ok := f["message"].(string); ok {
		f["message"] = spell(m, nested)
	}
	if r, ok := f["retry"].(evidence.Object); ok {
		if a, ok := r["action"].(string); ok {
			r["action"] = spell(a, nested)
		}
	}
}

// spellLimitations rewrites a compact summary's limitations.
func spellLimitations(summary evidence.Object, nested string) {
	ls, ok := summary["limitations"].([]any)
	if !ok {
		return
	}
	out := make([]any, len(ls))
	for i, l := range ls {
		if s, ok := l.(string); ok {
			out[i] = spell(s, nested)
		} else {
			out[i] = l
		}
	}
	summary["limitations"] = out
}
