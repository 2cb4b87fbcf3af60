package table

import "github.com/flameox/flameox/internal/evidence"

// Row kinds of pytest.outcomes.
const (
	KindTest      = "test"
	KindCollector = "collector"
)

// Outcomes of pytest.outcomes rows. A test row has exactly one; a test
// whose teardown also fails after the test failed or errored has a second
// row with outcome error and phase teardown, as pytest itself counts it.
// Collector rows are passed, skipped or error.
const (
	OutcomePassed      = "passed"
	OutcomeFailed      = "failed"      // the call phase failed (including strict XPASS)
	OutcomeError       = "error"       // setup or teardown failed; a collector failed to collect
	OutcomeSkipped     = "skipped"     // skipped in setup or call
	OutcomeXFailed     = "xfailed"     // failed as an xfail mark expected
	OutcomeXPassed     = "xpassed"     // passed despite a non-strict xfail mark
	OutcomeCrashed     = "crashed"     // the xdist worker running it died
	OutcomeInterrupted = "interrupted" // started, never finished (interrupt, truncated stream)
	OutcomeUnexecuted  = "unexecuted"  // collected, but no report of it was ever written
)

// Phases of a pytest.outcomes row: the phase that decided the outcome.
const (
	PhaseSetup    = "setup"
	PhaseCall     = "call"
	PhaseTeardown = "teardown"
	PhaseCollect  = "collect"
	PhaseCrash    = "crash"
)

// PytestOutcome is a row of pytest.outcomes: one test run, one collection
// report, or one collected item that never ran.
type PytestOutcome struct {
	NodeID            string        `col:"nodeid" doc:"pytest node id of the test or collector"`
	Kind              string        `col:"kind" doc:"test or collector (pytest); sanitizer or kernel-validation in summarize_failures results"`
	Outcome           string        `col:"outcome" doc:"passed, failed, error, skipped, xfailed, xpassed, crashed, interrupted or unexecuted"`
	Phase             Null[string]  `col:"phase" doc:"setup, call, teardown, collect or crash: the phase that decided the outcome; for interrupted tests the phase in progress; null for unexecuted tests"`
	Duration          Null[float64] `col:"duration,unit=s" doc:"sum of the reported phase durations; null when no phase was reported"`
	File              Null[string]  `col:"file" doc:"file of the test as pytest reports its location; null when not reported"`
	Line              int64         `col:"line,base=0" doc:"pytest's native 0-based line of the test definition; -1 when unavailable"`
	Worker            Null[string]  `col:"worker" doc:"xdist worker id (gw0, gw1…); null without xdist"`
	Message           Null[string]  `col:"message" doc:"short failure message, skip or xfail reason (bounded); null when none"`
	Longrepr          Null[string]  `col:"longrepr,detail" doc:"failure text of the deciding phase, as bounded by the plugin; null when none"`
	LongreprTruncated bool          `col:"longrepr_truncated,detail" doc:"the plugin cut longrepr at its stated bound"`
}

// PytestOutcomes is the pytest.outcomes schema.
var PytestOutcomes = Define[PytestOutcome]("pytest.outcomes", "one row per test run, collection report, or collected item that never ran", FromArtifact)

// Summary metrics of pytest.outcomes, also used by summarize_failures.
const (
	MetricCollected         = "collected"           // collected items (after deselection)
	MetricDeselected        = "deselected"          // null when not observable (xdist)
	MetricExitStatus        = "exit_status"         // pytest's session exit status; null when the session did not finish
	MetricSessionFinished   = "session_finished"    // bool
	MetricSessionInterrupt  = "session_interrupted" // bool: KeyboardInterrupt or pytest's Interrupted
	MetricCrashedWorkers    = "crashed_workers"
	MetricWorkers           = "workers"
	MetricInternalErrors    = "internal_errors"
	MetricCollectionErrors  = "collection_errors"
	MetricCollectionSkipped = "collection_skipped"
	MetricTruncatedBytes    = "unterminated_bytes" // bytes of a discarded unterminated last line
	MetricFixtureSetups     = "fixture_setups"     // fixture setups the plugin timed
	MetricFixtureSeconds    = "fixture_setup_seconds"
	// MetricSessionSeconds is session_finish time minus session_start
	// time, as pytest reports "in 0.52s"; null when either is missing.
	MetricSessionSeconds = "session_seconds"
	// MetricPytestPassed counts passed tests as pytest's summary line
	// does: a test whose call passed and whose teardown then failed is
	// both passed and an error there, one error row here.
	MetricPytestPassed = "pytest_passed"
)

// MetricArtifacts counts the artifacts a failures summary pooled.
const MetricArtifacts = "artifacts"

// pytestUnits is the unit of every pytest summary metric, one table for
// the decoder and the failures projection: a count says what it counts.
var pytestUnits = map[string]string{
	OutcomePassed: "tests", OutcomeFailed: "tests", OutcomeError: "tests", OutcomeSkipped: "tests",
	OutcomeXFailed: "tests", OutcomeXPassed: "tests", OutcomeCrashed: "tests", OutcomeInterrupted: "tests",
	OutcomeUnexecuted: "tests", MetricPytestPassed: "tests",
	MetricCollectionErrors: "collectors", MetricCollectionSkipped: "collectors",
	MetricCollected: "items", MetricDeselected: "items",
	MetricExitStatus:      "exit_status",
	MetricSessionFinished: "boolean", MetricSessionInterrupt: "boolean",
	MetricCrashedWorkers: "workers", MetricWorkers: "workers",
	MetricInternalErrors: "errors",
	MetricTruncatedBytes: "bytes",
	MetricFixtureSetups:  "setups", MetricFixtureSeconds: "s", MetricSessionSeconds: "s",
	MetricArtifacts: "artifacts",
}

// PytestMetric is the metric name's value in its unit. A name without a
// unit here is a programming error: the tests of both users read every
// metric they write back through this table.
func PytestMetric(name string, v any) evidence.Metric {
	u, ok := pytestUnits[name]
	if !ok {
		panic("table: pytest metric " + name + " has no unit")
	}
	return evidence.Metric{Value: v, Unit: u}
}
