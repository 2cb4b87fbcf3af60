package python

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/pkg/observe"
)

// python finds an interpreter: the project venv's, else python3 on PATH.
// The SDK needs only the standard library.
func python(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = "../../.venv"
	}
	if p, err := filepath.Abs(filepath.Join(venv, "bin", "python")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 (or the project venv) to test the Python SDK")
	}
	return p
}

// run executes a script with the SDK importable; out names the
// observations file ("" leaves FLAMEOX_OBSERVATIONS unset).
func run(t *testing.T, script, out string) []byte {
	t.Helper()
	dir, _ := filepath.Abs(".")
	cmd := exec.Command(python(t), "-c", script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1", observe.EnvVar+"="+out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	return stdout
}

func records(t *testing.T, path string) []*observe.Record {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*observe.Record
	for _, l := range bytes.SplitAfter(raw, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if len(l) > observe.MaxLine {
			t.Fatalf("the SDK wrote a %d-byte line", len(l))
		}
		r, err := observe.ParseRecord(l)
		if err != nil {
			t.Fatalf("the decoder refuses a record the SDK wrote: %v\n%.200s", err, l)
		}
		out = append(out, r)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "py.observations.jsonl")
	run(t, `
import flameox_observe as fo
assert fo.enabled()
def nest(n):
    v = 1
    for _ in range(n):
        v = [v]
    return v
with fo.phase("train"):
    fo.observe("loss", 0.25, unit="ratio")
    fo.observe("outside", 1, phase=None)
fo.observe("big", 2**70)
fo.observe("text", "naïve \"q\"\n\x01 😀")
fo.observe("depth8", nest(8))
fo.observe("list256", list(range(256)))
fo.observe("dict256", {"k%d" % i: i for i in range(256)})
fo.observe("tuple", (1, None, True))
fo.observe("é" * 200, 1, ts=7)
probe = '{"v":1,"kind":"observation","name":"s","value":"","ts":1,"pid":%d}\n' % __import__("os").getpid()
fo.observe("s", "x" * (16384 - len(probe.encode())), ts=1)
`, path)
	got := records(t, path)
	want := []struct{ name, phase, unit, value string }{
		{"", "train", "", ""},
		{"loss", "train", "ratio", `0.25`},
		{"outside", "", "", `1`},
		{"", "train", "", ""},
		{"big", "", "", `"1180591620717411303424"`},
		{"text", "", "", `"naïve \"q\"\n\u0001 😀"`},
		{"depth8", "", "", `[[[[[[[[1]]]]]]]]`},
		{"list256", "", "", ""},
		{"dict256", "", "", ""},
		{"tuple", "", "", `[1,null,true]`},
		{strings.Repeat("é", 200), "", "", `1`},
		{"s", "", "", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		r := got[i]
		if r.Name != w.name || r.Phase != w.phase || r.Unit != w.unit {
			t.Errorf("record %d: %+v, want %+v", i, r, w)
		}
		if w.value != "" {
			if c, _ := evidence.Canonical(r.Value); string(c) != w.value {
				t.Errorf("record %d value %s, want %s", i, c, w.value)
			}
		}
	}
	if got[0].Kind != observe.KindPhaseStart || got[3].Kind != observe.KindPhaseEnd || got[10].TS != 7 {
		t.Fatalf("phase records or timestamp: %+v %+v %+v", got[0], got[3], got[10])
	}
	if n := len(got[7].Value.([]any)); n != 256 {
		t.Fatalf("list256 has %d entries", n)
	}
	raw, _ := os.ReadFile(path)
	if lines := bytes.Split(raw, []byte("\n")); len(lines[len(lines)-2])+1 != observe.MaxLine {
		t.Fatalf("the boundary record is %d bytes, want exactly %d", len(lines[len(lines)-2])+1, observe.MaxLine)
	}
}

// hostile lists calls the SDK must refuse, in Python.
const hostile = `
import json, flameox_observe as fo
def nest(n):
    v = 1
    for _ in range(n):
        v = [v]
    return v
cases = {
    "NaN": lambda: fo.observe("x", float("nan")),
    "Infinity": lambda: fo.observe("x", float("inf")),
    "-Infinity in a list": lambda: fo.observe("x", [1.0, float("-inf")]),
    "nesting 9": lambda: fo.observe("x", nest(9)),
    "257 entries": lambda: fo.observe("x", list(range(257))),
    "257 members": lambda: fo.observe("x", {str(i): i for i in range(257)}),
    "boolean timestamp": lambda: fo.observe("x", 1, ts=True),
    "float timestamp": lambda: fo.observe("x", 1, ts=1.5),
    "negative timestamp": lambda: fo.observe("x", 1, ts=-1),
    "boolean phase timestamp": lambda: fo.start_phase("p", ts=False),
    "lone surrogate value": lambda: fo.observe("x", "a\udc80"),
    "lone surrogate key": lambda: fo.observe("x", {"\ud800": 1}),
    "lone surrogate name": lambda: fo.observe("\udfff", 1),
    "non-string key": lambda: fo.observe("x", {1: 1}),
    "empty name": lambda: fo.observe("", 1),
    "201-character name": lambda: fo.observe("n" * 201, 1),
    "201-character phase": lambda: fo.start_phase("p" * 201),
    "empty unit": lambda: fo.observe("x", 1, unit=""),
    "non-string name": lambda: fo.observe(3, 1),
    "unsupported type": lambda: fo.observe("x", {1, 2}),
    "16 KiB + 1 line": lambda: fo.observe("x", "y" * 16384),
}
refused = []
for name, call in cases.items():
    try:
        call()
    except fo.ObservationError:
        refused.append(name)
print(json.dumps({"cases": sorted(cases), "refused": sorted(refused), "enabled": fo.enabled()}))
`

func TestHostileRefused(t *testing.T) {
	for _, mode := range []string{"captured", "not captured"} {
		t.Run(mode, func(t *testing.T) {
			path := ""
			if mode == "captured" {
				path = filepath.Join(t.TempDir(), "o")
			}
			var res struct {
				Cases, Refused []string
				Enabled        bool
			}
			if err := json.Unmarshal(run(t, hostile, path), &res); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Cases, res.Refused) || len(res.Cases) != 21 {
				t.Fatalf("refused %q of %q", res.Refused, res.Cases)
			}
			if res.Enabled != (path != "") {
				t.Fatalf("enabled = %v", res.Enabled)
			}
			if path != "" {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Fatalf("refused records created or wrote the file: %v", err)
				}
			}
		})
	}
}
