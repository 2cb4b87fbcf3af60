package schema

import "github.com/flameox/flameox/internal/evidence"

// PytestOutcomes is the table of test and collector outcomes that the
// pytest-events decoder emits: one row per test run, one per collection
// report, one per collected item that never ran.
const PytestOutcomes = "pytest.outcomes"

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

// PytestOutcomeColumns are the columns of pytest.outcomes.
func PytestOutcomeColumns() []evidence.Column {
	return []evidence.Column{
		{Name: "artifact_id", Type: evidence.TypeString, Description: "event stream the row was read from"},
		{Name: "nodeid", Type: evidence.TypeString, Description: "pytest node id of the test or collector"},
		{Name: "kind", Type: evidence.TypeString, Description: "test or collector"},
		{Name: "outcome", Type: evidence.TypeString, Description: "passed, failed, error, skipped, xfailed, xpassed, crashed, interrupted or unexecuted"},
		{Name: "phase", Type: evidence.TypeString, Description: "setup, call, teardown, collect or crash: the phase that decided the outcome; for interrupted tests the phase in progress; null for unexecuted tests"},
		{Name: "duration", Type: evidence.TypeDouble, Unit: "s", Description: "sum of the reported phase durations; null when no phase was reported"},
		{Name: "file", Type: evidence.TypeString, Description: "file of the test as pytest reports its location; null when not reported"},
		{Name: "line", Type: evidence.TypeInt, Description: "pytest's native zero-based line of the test definition; -1 when unavailable"},
		{Name: "worker", Type: evidence.TypeString, Description: "xdist worker id (gw0, gw1…); null without xdist"},
		{Name: "message", Type: evidence.TypeString, Description: "short failure message, skip or xfail reason (bounded); null when none"},
		{Name: "longrepr", Type: evidence.TypeString, Description: "failure text of the deciding phase, as bounded by the plugin; null when none"},
		{Name: "longrepr_truncated", Type: evidence.TypeBool, Description: "the plugin cut longrepr at its stated bound"},
	}
}

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
)
