package python

import _ "embed"

// BenchModuleName is the benchmark-samples SDK's import name.
const BenchModuleName = "flameox_bench"

//go:embed flameox_bench.py
var benchModule []byte

// BenchModule returns the benchmark-samples SDK's source
// (flameox_bench.py, standard library only).
func BenchModule() []byte { return append([]byte(nil), benchModule...) }
