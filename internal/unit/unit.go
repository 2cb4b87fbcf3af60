// Package unit normalizes measurement units. Each unit has a dimension and
// an exact factor to its dimension's output unit; values of different
// dimensions never pool (bytes and seconds never share a total). It
// imports nothing of flameox's.
package unit

import (
	"fmt"
	"strings"
)

// Dimension is what a unit measures.
type Dimension string

const (
	Time   Dimension = "time"
	Memory Dimension = "memory"
	Count  Dimension = "count"
	Ratio  Dimension = "ratio"
)

// Output units: every dimension normalizes to exactly one of these.
const (
	Seconds = "s"
	Bytes   = "bytes"
	Samples = "samples"
	Calls   = "calls"
	Events  = "events"
	Lines   = "lines"
	Ratio1  = "ratio"
	// Unstated is the unit of weights whose producer states none (folded
	// stacks): shown as written, pooled with nothing else.
	Unstated = "unstated"
)

// Unit is one known unit.
type Unit struct {
	Name      string
	Dimension Dimension
	Output    string  // the normalized unit for this unit's values
	Factor    float64 // value × Factor = value in Output
	Aliases   []string
}

// Table lists every unit flameox normalizes. Counts keep their own output
// unit because samples, calls and events are different things even though
// each is a count.
var Table = []Unit{
	{"s", Time, Seconds, 1, []string{"seconds", "second", "sec"}},
	{"ms", Time, Seconds, 1e-3, []string{"milliseconds", "millisecond", "msec"}},
	{"us", Time, Seconds, 1e-6, []string{"microseconds", "microsecond", "µs", "usec"}},
	{"ns", Time, Seconds, 1e-9, []string{"nanoseconds", "nanosecond", "nsec"}},
	{"bytes", Memory, Bytes, 1, []string{"byte", "b"}},
	{"KiB", Memory, Bytes, 1 << 10, []string{"kilobytes"}},
	{"MiB", Memory, Bytes, 1 << 20, []string{"megabytes"}},
	{"GiB", Memory, Bytes, 1 << 30, []string{"gigabytes"}},
	{"samples", Count, Samples, 1, []string{"sample", "none", "count"}},
	{"calls", Count, Calls, 1, []string{"call"}},
	{"events", Count, Events, 1, []string{"event"}},
	{"lines", Count, Lines, 1, []string{"line"}},
	{"unstated", Count, Unstated, 1, nil},
	{"ratio", Ratio, Ratio1, 1, nil},
	{"percent", Ratio, Ratio1, 0.01, []string{"%"}},
}

// Lookup finds a unit by name or alias, ignoring case (so the table lists
// no alias that differs from its name only in case).
func Lookup(name string) (Unit, error) {
	n := strings.TrimSpace(name)
	for _, u := range Table {
		if strings.EqualFold(u.Name, n) {
			return u, nil
		}
		for _, a := range u.Aliases {
			if strings.EqualFold(a, n) {
				return u, nil
			}
		}
	}
	return Unit{}, fmt.Errorf("unknown unit %q", name)
}

// Common returns the output unit shared by all the named units, or an error
// naming the first pair that cannot be pooled.
func Common(names ...string) (string, error) {
	out := ""
	first := ""
	for _, n := range names {
		u, err := Lookup(n)
		if err != nil {
			return "", err
		}
		if out == "" {
			out, first = u.Output, n
			continue
		}
		if u.Output != out {
			return "", fmt.Errorf("incompatible units %q and %q cannot share a total", first, n)
		}
	}
	return out, nil
}
