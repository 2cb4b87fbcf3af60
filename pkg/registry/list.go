package registry

import (
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/capture/providers/pyspy"
	"github.com/flameox/flameox/pkg/formats"
	"github.com/flameox/flameox/pkg/formats/pstats"
	"github.com/flameox/flameox/pkg/formats/speedscope"
)

// formatList is every native format flameox decodes, in detection order.
var formatList = []*formats.Spec{
	pstats.Spec,
	speedscope.Spec,
}

// operationList is every analysis operation.
var operationList = []*Operation{}

// providerList is every capture provider.
var providerList = []*capture.Provider{
	pyspy.Provider,
}
