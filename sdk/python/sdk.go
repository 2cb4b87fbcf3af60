// Package python embeds flameox's Python observations SDK
// (flameox_observe.py, standard library only), so that provider
// observations can put it on a Python workload's import path.
package python

import _ "embed"

// ModuleName is the SDK's import name.
const ModuleName = "flameox_observe"

//go:embed flameox_observe.py
var module []byte

// Module returns the SDK's source.
func Module() []byte { return append([]byte(nil), module...) }
