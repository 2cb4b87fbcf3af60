package unit

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		in     string
		name   string
		output string
		factor float64
	}{
		{"s", "s", Seconds, 1},
		{"milliseconds", "ms", Seconds, 1e-3},
		{" µs ", "us", Seconds, 1e-6},
		{"NSEC", "ns", Seconds, 1e-9},
		{"kib", "KiB", Bytes, 1024},
		{"GiB", "GiB", Bytes, 1 << 30},
		{"none", "samples", Samples, 1},
		{"call", "calls", Calls, 1},
		{"%", "percent", Ratio1, 0.01},
	} {
		u, err := Lookup(tc.in)
		if err != nil || u.Name != tc.name || u.Output != tc.output || u.Factor != tc.factor {
			t.Errorf("Lookup(%q) = %+v, %v; want %s → %s ×%g", tc.in, u, err, tc.name, tc.output, tc.factor)
		}
	}
	for _, bad := range []string{"", "parsecs", "k i b"} {
		if _, err := Lookup(bad); err == nil || !strings.Contains(err.Error(), "unknown unit") {
			t.Errorf("Lookup(%q) = %v, want an unknown-unit error", bad, err)
		}
	}
}

// Every name and alias means one unit, and every output unit is itself a
// unit of factor 1 in the same dimension, so normalizing is idempotent.
func TestTableConsistent(t *testing.T) {
	seen := map[string]string{}
	for _, u := range Table {
		for _, n := range append([]string{u.Name}, u.Aliases...) {
			k := strings.ToLower(n)
			if prev, dup := seen[k]; dup {
				t.Errorf("%q names both %s and %s", n, prev, u.Name)
			}
			seen[k] = u.Name
		}
		out, err := Lookup(u.Output)
		if err != nil || out.Factor != 1 || out.Dimension != u.Dimension || out.Output != u.Output {
			t.Errorf("unit %s: output %q is %+v, %v", u.Name, u.Output, out, err)
		}
		if u.Factor <= 0 {
			t.Errorf("unit %s: factor %g", u.Name, u.Factor)
		}
	}
}

func TestCommon(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"ms"}, Seconds},
		{[]string{"ms", "us", "seconds"}, Seconds},
		{[]string{"KiB", "bytes"}, Bytes},
		{[]string{"ratio", "percent"}, Ratio1},
	} {
		if got, err := Common(tc.in...); err != nil || got != tc.want {
			t.Errorf("Common(%v) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range [][]string{
		{"s", "bytes"},
		// Counts of different things never pool.
		{"samples", "calls"},
		{"ms", "events", "s"},
	} {
		_, err := Common(tc...)
		if err == nil || !strings.Contains(err.Error(), "incompatible units") {
			t.Errorf("Common(%v) = %v, want an incompatible-units error", tc, err)
		}
	}
	if _, err := Common("s", "fortnights"); err == nil || !strings.Contains(err.Error(), "fortnights") {
		t.Errorf("an unknown unit: %v", err)
	}
	_, err := Common("ms", "us", "KiB")
	if err == nil || !strings.Contains(err.Error(), `"ms" and "KiB"`) {
		t.Errorf("error %v, want it to name the first unit and the one that does not pool", err)
	}
}
