package render

import (
	"fmt"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// pytestLines are the header lines of pytest failures: the outcome line
// as pytest's terminal summary writes it ("8 failed, 7 passed, 4 skipped,
// 1 xfailed, 1 xpassed, 4 errors"), then the session facts in one line.
// Outcomes pytest has no word for (crashed, interrupted, unexecuted)
// follow its own.
func pytestLines(s *evidence.Summary) []string {
	findings := findingLines(s)
	if _, ok := s.Metrics[table.OutcomePassed]; !ok && len(findings) > 0 {
		return findings // no pytest session among the inputs
	}
	return append(pytestSession(s), findings...)
}

// findingLines state the failures of compute-sanitizer reports and kernel
// validation receipts that summarize_failures lists beside tests.
func findingLines(s *evidence.Summary) []string {
	var out []string
	if _, ok := s.Metrics["sanitizer_findings"]; ok {
		n := func(m string) int64 { v, _ := evidence.AsInt(s.Metrics[m].Value); return v }
		out = append(out, fmt.Sprintf("sanitizer: %d errors (%d identities), %d warnings",
			n("sanitizer_errors"), n("sanitizer_identities"), n("sanitizer_warnings")))
	}
	if _, ok := s.Metrics["kernel_validation_cases"]; ok {
		n := func(m string) int64 { v, _ := evidence.AsInt(s.Metrics[m].Value); return v }
		out = append(out, fmt.Sprintf("kernel validation: %d cases: %d pass, %d fail, %d inconclusive, %d unsupported",
			n("kernel_validation_cases"), n("kernel_validation_pass"), n("kernel_validation_fail"),
			n("kernel_validation_inconclusive"), n("kernel_validation_unsupported")))
	}
	return out
}

func pytestSession(s *evidence.Summary) []string {
	count := func(names ...string) int64 {
		var n int64
		for _, name := range names {
			if v, ok := evidence.AsInt(s.Metrics[name].Value); ok {
				n += v
			}
		}
		return n
	}
	// pytest counts a skipped module among the skipped, a collection
	// error among the errors, and a test whose call passed before its
	// teardown failed both as passed and as an error.
	passed := table.OutcomePassed
	if _, ok := s.Metrics[table.MetricPytestPassed]; ok {
		passed = table.MetricPytestPassed
	}
	var parts []string
	for _, p := range []struct {
		n          int64
		one, other string
	}{
		{count(table.OutcomeFailed), "failed", "failed"},
		{count(passed), "passed", "passed"},
		{count(table.OutcomeSkipped, table.MetricCollectionSkipped), "skipped", "skipped"},
		{count(table.MetricDeselected), "deselected", "deselected"},
		{count(table.OutcomeXFailed), "xfailed", "xfailed"},
		{count(table.OutcomeXPassed), "xpassed", "xpassed"},
		{count(table.OutcomeError, table.MetricCollectionErrors), "error", "errors"},
		{count(table.OutcomeCrashed), "crashed", "crashed"},
		{count(table.OutcomeInterrupted), "interrupted", "interrupted"},
		{count(table.OutcomeUnexecuted), "unexecuted", "unexecuted"},
	} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, plural(int(p.n), p.one, p.other)))
		}
	}
	line := strings.Join(parts, ", ")
	if line == "" {
		line = "no tests ran"
	}
	if d, ok := evidence.AsFloat(s.Metrics[table.MetricSessionSeconds].Value); ok {
		line += fmt.Sprintf(" in %.2fs", d)
	}

	var facts []string
	if v, ok := evidence.AsInt(s.Metrics[table.MetricCollected].Value); ok {
		facts = append(facts, fmt.Sprintf("collected %d %s", v, plural(int(v), "item", "items")))
	}
	if v, ok := evidence.AsInt(s.Metrics[table.MetricExitStatus].Value); ok {
		facts = append(facts, fmt.Sprintf("exit status %d", v))
	} else {
		facts = append(facts, "exit status unknown")
	}
	if b, _ := s.Metrics[table.MetricSessionFinished].Value.(bool); !b {
		facts = append(facts, "session not finished")
	}
	if b, _ := s.Metrics[table.MetricSessionInterrupt].Value.(bool); b {
		facts = append(facts, "session interrupted")
	}
	for _, m := range []string{table.MetricWorkers, table.MetricCrashedWorkers, table.MetricInternalErrors} {
		if v, ok := evidence.AsInt(s.Metrics[m].Value); ok && v > 0 {
			facts = append(facts, fmt.Sprintf("%s: %d", strings.ReplaceAll(m, "_", " "), v))
		}
	}
	if v, ok := evidence.AsInt(s.Metrics["artifacts"].Value); ok && v > 1 {
		facts = append(facts, fmt.Sprintf("%d artifacts", v))
	}
	return []string{line, strings.Join(facts, "; ")}
}
