package registry

import (
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/capture/providers/perf"
	"github.com/flameox/flameox/pkg/formats"
	"github.com/flameox/flameox/pkg/formats/collapsed"
	"github.com/flameox/flameox/pkg/formats/perfscript"
)

// formatList is every native format flameox decodes, in detection order.
var formatList = []*formats.Spec{
	perfscript.DataSpec,
	perfscript.ScriptSpec,
	collapsed.Spec,
}

// operationList is every analysis operation.
var operationList = []*Operation{}

// providerList is every capture provider.
var providerList = []*capture.Provider{
	perf.Provider,
}
