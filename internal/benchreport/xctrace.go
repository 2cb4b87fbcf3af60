package main

import (
	"github.com/flameox/flameox/internal/formats/xctrace"
)

// xctraceSeed is the schema-built time-profile export the inputs grow
// from (Apple's xctrace cannot run here; see testdata/xctrace).
const xctraceSeed = "testdata/xctrace/time-profile.xml"

// xctraceCases: an xctrace time-profile export grown to 100 MB, decoded,
// and ranked by self weight beside Python's xml.etree iterparse summing
// the leaf frames' weights with its own id/ref resolution.
func xctraceCases() []benchCase {
	gen := seeded(xctraceSeed, xctrace.Generate)
	return []benchCase{
		{"xctrace time-profile decode 100 MB", "xctrace-100MB-time-profile.xml", 100e6, gen, decodeArgv, 0, true, nil},
		{"xctrace time-profile decode+rank 100 MB", "xctrace-100MB-time-profile.xml", 100e6, gen, rankArgv, 0, true, pythonXctrace},
	}
}

// pythonXctrace is xml.etree's iterparse over the export
// (internal/benchreport/peers/xctrace-top.py).
var pythonXctrace = &peer{name: "python3 xml.etree " + version("python3", "--version"), argv: func(in string) []string {
	return []string{"python3", "internal/benchreport/peers/xctrace-top.py", in}
}}
