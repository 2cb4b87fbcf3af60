package evidence

import (
	"time"
)

// Capture outcomes.
const (
	OutcomeCompleted      = "completed"       // workload ran, declared outputs present
	OutcomeWorkloadFailed = "workload_failed" // non-accepted exit status or signal
	OutcomeOutputsMissing = "outputs_missing" // exited, but declared outputs are absent
	OutcomeLimitExceeded  = "limit_exceeded"  // a budget or output protection ended it
	OutcomeCancelled      = "cancelled"       // signal or MCP cancellation
	OutcomeStartFailed    = "start_failed"    // the collector could not be started
)

// Executable is a bound collector: its path and the SHA-256 of its bytes.
type Executable struct {
	Path   string
	SHA256 string
}

// LimitReceipt records which limit ended a workload.
type LimitReceipt struct {
	Name     string // "timeout_seconds", "max_memory_bytes", "max_output_bytes", "min_free_bytes"
	Value    any
	Observed any
	Unit     string
}

func (l *LimitReceipt) value() any {
	if l == nil {
		return nil
	}
	return Object{"name": l.Name, "value": l.Value, "observed": l.Observed, "unit": nullable(l.Unit)}
}

// ConsoleStream reports what happened to one console stream.
type ConsoleStream struct {
	Mode       string // "bounded" or "full"
	Observed   int64  // bytes the workload wrote
	Retained   int64  // bytes kept (in Text, or in the artifact)
	Omitted    int64  // bytes dropped; they cannot be recovered later
	Text       string // bounded mode: retained bytes, replacement-decoded
	ArtifactID string // full mode: the artifact holding the stream
}

func (c *ConsoleStream) value() Object {
	return Object{
		"mode":           c.Mode,
		"observed_bytes": c.Observed,
		"retained_bytes": c.Retained,
		"omitted_bytes":  c.Omitted,
		"text":           nullable(c.Text),
		"artifact_id":    nullable(c.ArtifactID),
	}
}

// Capture is the execution provenance of one collector run.
type Capture struct {
	ID         string
	Provider   Producer
	Executable *Executable
	Argv       []string // the workload argv as requested
	Command    []string // the full collector command line that ran
	Cwd        string
	StartedAt  time.Time
	EndedAt    time.Time
	ExitCode   *int
	Signal     string
	Outcome    string
	Limit      *LimitReceipt
	Budget     Object
	Console    map[string]*ConsoleStream
	Scratch    string
	BundleID   string
	Notes      []string
}

func (c *Capture) Kind() string { return KindCapture }

func (c *Capture) CanonicalValue() any {
	var exe any
	if c.Executable != nil {
		exe = Object{"path": c.Executable.Path, "sha256": c.Executable.SHA256}
	}
	var exit any
	switch {
	case c.ExitCode != nil:
		exit = Object{"code": *c.ExitCode}
	case c.Signal != "":
		exit = Object{"signal": c.Signal}
	}
	console := Object{}
	for k, s := range c.Console {
		console[k] = s.value()
	}
	o := Object{
		"schema":     Schema,
		"kind":       KindCapture,
		"capture_id": c.ID,
		"provider":   c.Provider.value(),
		"executable": exe,
		"argv":       emptyList(c.Argv),
		"command":    emptyList(c.Command),
		"cwd":        c.Cwd,
		"started_at": timestamp(c.StartedAt),
		"ended_at":   timestamp(c.EndedAt),
		"exit":       exit,
		"outcome":    c.Outcome,
		"limit":      c.Limit.value(),
		"budget":     emptyObject(c.Budget),
		"console":    console,
		"scratch":    nullable(c.Scratch),
		"bundle_id":  nullable(c.BundleID),
		"notes":      emptyList(c.Notes),
	}
	if !c.StartedAt.IsZero() && !c.EndedAt.IsZero() {
		o["duration_seconds"] = c.EndedAt.Sub(c.StartedAt).Seconds()
	}
	return o
}

func timestamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}
