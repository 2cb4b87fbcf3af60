package failures

import (
	"fmt"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// Failure kinds beside pytest's test and collector: a row of these kinds
// is one failure identity of a compute-sanitizer report or of a kernel
// validation receipt, in the same table, ranked and filtered by the same
// rules (outcome rank, then first appearance; nodeid_glob on the
// identity; outcomes).
const (
	KindSanitizer        = "sanitizer"
	KindKernelValidation = "kernel-validation"
)

// maxIdentities bounds the distinct finding identities held while the
// inputs are read; findings of identities beyond it are counted, not
// listed, and the result says so.
const maxIdentities = 1 << 16

// longreprBytes bounds the text assembled for one identity, as pytest's
// plugin bounds longrepr.
const longreprBytes = 16 << 10

// group is one failure identity of a findings input: its first row and
// how many findings share it.
type group struct {
	row      table.PytestOutcome
	artifact string
	rank     int
	seq      int64
	count    int64
}

// findings holds what non-pytest inputs contribute.
type findings struct {
	groups  map[string]*group
	order   []*group
	dropped int64
	metrics map[string]int64 // counted per kind, named below
	seen    map[string]bool  // the kinds of inputs admitted
}

// Metric names of the findings inputs; each is a count.
const (
	metricSanitizerFindings   = "sanitizer_findings"
	metricSanitizerErrors     = "sanitizer_errors"
	metricSanitizerWarnings   = "sanitizer_warnings"
	metricSanitizerIdentities = "sanitizer_identities"
	metricIdentitiesDropped   = "identities_not_listed"
	metricValidationCases     = "kernel_validation_cases"
)

func (f *findings) add(key string, g group) {
	if f.groups == nil {
		f.groups = map[string]*group{}
	}
	if have := f.groups[key]; have != nil {
		have.count++
		return
	}
	if len(f.groups) >= maxIdentities {
		f.dropped++
		return
	}
	g.count = 1
	f.groups[key] = &g
	f.order = append(f.order, &g)
}

func (f *findings) count(name string, n int64) {
	if f.metrics == nil {
		f.metrics = map[string]int64{}
	}
	f.metrics[name] += n
}

// sanitizerIdentity names a finding by what locates its defect: tool,
// kind, faulting kernel and source line (the pc without line
// information). Threads, blocks and addresses vary between repeats of
// the same defect and are not part of it.
func sanitizerIdentity(s *table.SanitizerFinding) string {
	tool := "compute-sanitizer"
	if s.Tool.Valid {
		tool = s.Tool.V
	}
	id := tool + "::" + s.Kind
	if s.Kernel.Valid {
		id += "::" + s.Kernel.V
	}
	switch {
	case s.File.Valid && s.SourceLine.Valid:
		id += fmt.Sprintf(" at %s:%d", s.File.V, s.SourceLine.V)
	case s.PC.Valid:
		id += "+" + s.PC.V
	case s.API.Valid:
		id += "::" + s.API.V
	case !s.Kernel.Valid:
		id += "::" + s.Message // a tool message is its own identity
	}
	return id
}

// sanitizer reads a gpu.sanitizer_findings row. Errors are failures;
// warnings (potential hazards, unused memory) are counted only. A tool
// message or internal error is the run's own failure: outcome error.
func (p *projector) sanitizer(s *table.SanitizerFinding, artifact string) {
	p.found.count(metricSanitizerFindings, 1)
	if s.Severity != "error" {
		p.found.count(metricSanitizerWarnings, 1)
		return
	}
	p.found.count(metricSanitizerErrors, 1)
	outcome := table.OutcomeFailed
	if s.Kind == "tool_message" || s.Kind == "internal_error" {
		outcome = table.OutcomeError
	}
	id := sanitizerIdentity(s)
	if !p.admits(id, outcome) {
		return
	}
	row := table.PytestOutcome{NodeID: id, Kind: KindSanitizer, Outcome: outcome, File: s.File, Line: -1,
		Message: table.Some(s.Message)}
	if s.SourceLine.Valid {
		row.Line = s.SourceLine.V - 1 // the column is 0-based, as pytest's
	}
	row.Longrepr, row.LongreprTruncated = sanitizerText(s)
	p.seq++
	p.found.add(artifact+"\x00"+id, group{row: row, artifact: artifact, rank: rankOf(outcome), seq: p.seq})
}

// admits applies the outcome and identity filters.
func (p *projector) admits(id, outcome string) bool {
	if !containsString(p.outcomes, outcome) {
		return false
	}
	return p.glob == nil || p.glob.MatchString(id)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func rankOf(outcome string) int {
	for i, o := range rankOrder {
		if o == outcome {
			return i
		}
	}
	return len(rankOrder)
}

// sanitizerText is the first finding of an identity as compute-sanitizer
// prints it, bounded.
func sanitizerText(s *table.SanitizerFinding) (table.Null[string], bool) {
	var b strings.Builder
	b.WriteString(s.Message)
	if s.Kernel.Valid || s.PC.Valid {
		b.WriteString("\n    at " + s.Kernel.V)
		if s.PC.Valid {
			b.WriteString("+" + s.PC.V)
		}
		if s.File.Valid && s.SourceLine.Valid {
			fmt.Fprintf(&b, " in %s:%d", s.File.V, s.SourceLine.V)
		}
	}
	if s.ThreadX.Valid || s.BlockX.Valid {
		fmt.Fprintf(&b, "\n    by thread (%s) in block (%s)", dim3(s.ThreadX, s.ThreadY, s.ThreadZ), dim3(s.BlockX, s.BlockY, s.BlockZ))
	}
	if s.Address.Valid {
		b.WriteString("\n    Address " + s.Address.V)
	}
	for _, fr := range s.DeviceStack {
		b.WriteString("\n        Device Frame: " + frameText(fr))
	}
	for _, fr := range s.HostStack {
		b.WriteString("\n        Host Frame: " + frameText(fr))
	}
	text := b.String()
	if len(text) > longreprBytes {
		n := longreprBytes
		for n > 0 && text[n]&0xC0 == 0x80 {
			n--
		}
		return table.Some(text[:n]), true
	}
	return table.Some(text), false
}

func dim3(x, y, z table.Null[int64]) string {
	part := func(v table.Null[int64]) string {
		if !v.Valid {
			return "?"
		}
		return fmt.Sprint(v.V)
	}
	return part(x) + "," + part(y) + "," + part(z)
}

func frameText(fr any) string {
	o, ok := fr.(evidence.Object)
	if !ok {
		return fmt.Sprint(fr)
	}
	if t, ok := o["text"].(string); ok && t != "" {
		return t
	}
	return fmt.Sprint(o["function"])
}

// validation reads a validation.receipts row: fail is a failure,
// inconclusive an error (the check could not decide); pass and
// unsupported are counted only. The identity is the case on its device.
func (p *projector) validation(k *table.KernelValidation, artifact string) {
	p.found.count(metricValidationCases, 1)
	p.found.count("kernel_validation_"+k.Status, 1)
	var outcome string
	switch k.Status {
	case "fail":
		outcome = table.OutcomeFailed
	case "inconclusive":
		outcome = table.OutcomeError
	default:
		return
	}
	id := k.Case
	if k.Device.Valid {
		id += " on " + k.Device.V
	}
	if !p.admits(id, outcome) {
		return
	}
	row := table.PytestOutcome{NodeID: id, Kind: KindKernelValidation, Outcome: outcome, Line: -1, Message: k.Reason}
	if !row.Message.Valid {
		row.Message = table.Some(k.Status)
	}
	row.Longrepr = table.Some(validationText(k))
	p.seq++
	p.found.add(artifact+"\x00"+id, group{row: row, artifact: artifact, rank: rankOf(outcome), seq: p.seq})
}

// validationText states a receipt's measurements in one line each.
func validationText(k *table.KernelValidation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s (%s)", k.Case, k.Status, k.Producer)
	opt := func(name string, v table.Null[float64]) {
		if v.Valid {
			fmt.Fprintf(&b, "\n    %s %g", name, v.V)
		}
	}
	opt("max_abs_error", k.MaxAbsError)
	opt("max_rel_error", k.MaxRelError)
	opt("atol", k.Atol)
	opt("rtol", k.Rtol)
	if k.DType.Valid {
		b.WriteString("\n    dtype " + k.DType.V)
	}
	if k.Shape != nil {
		fmt.Fprintf(&b, "\n    shape %v", k.Shape)
	}
	if k.Expected != nil || k.Observed != nil {
		fmt.Fprintf(&b, "\n    expected %s\n    observed %s", valueText(k.Expected), valueText(k.Observed))
	}
	if k.ConsolePath.Valid {
		fmt.Fprintf(&b, "\n    console %s (sha256 %s)", k.ConsolePath.V, k.ConsoleSHA256.V)
	}
	return b.String()
}

// valueText is an expected or observed value: a digest as its hash and
// size, a scalar as written.
func valueText(v any) string {
	if o, ok := v.(evidence.Object); ok {
		if n, ok := evidence.AsInt(o["bytes"]); ok {
			return fmt.Sprintf("%v (%d bytes)", o["digest"], n)
		}
		return fmt.Sprint(o["digest"])
	}
	return fmt.Sprint(v)
}

// finishFindings adds the identities to the ranking, in first-seen order.
func (p *projector) finishFindings() {
	for _, g := range p.found.order {
		r := g.row
		if g.count > 1 {
			r.Message = table.Some(fmt.Sprintf("%s (%d findings with this identity)", r.Message.V, g.count))
		}
		p.top.Add(item{row: r, artifact: g.artifact, rank: g.rank, seq: g.seq})
	}
}

// summarizeFindings states the findings inputs' counts.
func (p *projector) summarizeFindings(s *evidence.Summary) {
	f := &p.found
	if f.seen[KindSanitizer] {
		for _, m := range []string{metricSanitizerFindings, metricSanitizerErrors, metricSanitizerWarnings} {
			s.Metrics[m] = evidence.Metric{Value: f.metrics[m], Unit: "findings"}
		}
		var ids int64
		for _, g := range f.order {
			if g.row.Kind == KindSanitizer {
				ids++
			}
		}
		s.Metrics[metricSanitizerIdentities] = evidence.Metric{Value: ids, Unit: "identities"}
	}
	if f.seen[KindKernelValidation] {
		for _, m := range []string{metricValidationCases, "kernel_validation_pass", "kernel_validation_fail",
			"kernel_validation_inconclusive", "kernel_validation_unsupported"} {
			s.Metrics[m] = evidence.Metric{Value: f.metrics[m], Unit: "receipts"}
		}
	}
	if f.dropped > 0 {
		s.Complete = false
		s.Metrics[metricIdentitiesDropped] = evidence.Metric{Value: f.dropped, Unit: "findings"}
		s.Limit(fmt.Sprintf("more than %d distinct finding identities: %d findings of further identities were counted but not listed", maxIdentities, f.dropped))
	}
}
