package registry

import (
	"github.com/flameox/flameox/pkg/capture"
	pytestprovider "github.com/flameox/flameox/pkg/capture/providers/pytest"
	"github.com/flameox/flameox/pkg/evidence"
	"github.com/flameox/flameox/pkg/formats"
	"github.com/flameox/flameox/pkg/formats/pytestevents"
	"github.com/flameox/flameox/pkg/projection/failures"
)

// formatList is every native format flameox decodes, in detection order.
var formatList = []*formats.Spec{
	pytestevents.Spec,
}

// operationList is every analysis operation.
var operationList = []*Operation{
	{
		Name:       "summarize_failures",
		Title:      "Failed, errored, interrupted and unexecuted tests",
		Family:     "Reliability",
		Projection: failures.Spec,
		Formats:    []string{"pytest-events"},
		Guidance: "Use after a pytest run to see which tests did not pass and why. It scans the complete bounded " +
			"event stream for aggregate outcomes (summary metrics), but lists only failure identities: failed " +
			"collectors (with their collector node id), crashed, interrupted, errored and failed tests, then tests " +
			"that were collected but never ran. Passing and skipped tests never consume the row budget.",
		Examples: []Example{
			{Title: "the first 20 failures", Args: evidence.Object{"top": 20}},
			{Title: "failures under one directory", Args: evidence.Object{"nodeid_glob": "tests/unit/*"}},
			{Title: "what never ran after an interruption", Args: evidence.Object{"outcomes": []string{"interrupted", "unexecuted"}}},
		},
		Overhead: "the pytest plugin writes one bounded line per event; the projection reads each row once",
		Limitations: []string{
			"complete requires a finished session that was not interrupted, lost no xdist worker, raised no internal error, was not truncated, and rows not cut by top",
			"failure text is pytest's longrepr cut at the plugin's 16 KiB bound; captured output sections are not recorded",
			"counts follow pytest's JUnit XML: a test whose call passed but whose teardown failed counts once, as error",
		},
	},
}

// providerList is every capture provider.
var providerList = []*capture.Provider{
	pytestprovider.Provider,
}
