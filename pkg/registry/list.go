package registry

import (
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/capture/providers/node"
	"github.com/flameox/flameox/pkg/formats"
)

// formatList is every native format flameox decodes, in detection order.
var formatList = []*formats.Spec{}

// operationList is every analysis operation.
var operationList = []*Operation{}

// providerList is every capture provider.
var providerList = []*capture.Provider{
	node.Provider,
}
