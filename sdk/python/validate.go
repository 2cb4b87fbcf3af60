package python

import _ "embed"

// ValidateModuleName is the kernel validation SDK's import name.
const ValidateModuleName = "flameox_validate"

//go:embed flameox_validate.py
var validateModule []byte

// ValidateModule returns the kernel validation SDK's source
// (flameox_validate.py, standard library only; numpy when present).
func ValidateModule() []byte { return append([]byte(nil), validateModule...) }
