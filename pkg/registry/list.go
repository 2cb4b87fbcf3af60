package registry

import (
	"github.com/flameox/flameox/pkg/capture"
	coverageprovider "github.com/flameox/flameox/pkg/capture/providers/coverage"
	"github.com/flameox/flameox/pkg/formats"
	"github.com/flameox/flameox/pkg/formats/coveragepy"
	"github.com/flameox/flameox/pkg/formats/coveragepy/datafile"
	"github.com/flameox/flameox/pkg/formats/sarif"
)

// formatList is every native format flameox decodes, in detection order.
var formatList = []*formats.Spec{
	datafile.Spec,
	coveragepy.JSONSpec,
	sarif.Spec,
}

// operationList is every analysis operation.
var operationList = []*Operation{
	summarizeCoverage,
	inspectStaticCandidates,
}

// providerList is every capture provider.
var providerList = []*capture.Provider{
	coverageprovider.Provider,
}
