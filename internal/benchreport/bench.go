package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// benchCases are the benchmark-result cases: a pyperf suite built from a
// real pyperf result (testdata/pyperf/pyperf-telco.json, 41 runs of 3
// values and a warmup each) copied into as many benchmarks as the size
// needs, summarized by flameox beside `pyperf stats` on the same file,
// and compared against a second copy of itself.
func benchCases() []benchCase {
	summarize := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "100000", in}
	}
	// --baseline infers compare_benchmarks from the tables.
	compare := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "100000",
			"--resamples", "200", "--baseline", in, in + ".new.json"}
	}
	const input, size = "pyperf-50MB.json", 50_000_000
	return []benchCase{
		{"pyperf summarize 50 MB", input, size, genPyperf, summarize, 0, true, pyperfStats},
		{"pyperf compare 2x50 MB", input, size, genPyperf, compare, 0, true, nil},
	}
}

// pyperfStats is `python -m pyperf stats`, pyperf's own reader and
// statistics over every benchmark of the file.
var pyperfStats = &peer{name: "pyperf stats " + version(python(), "-c", "import pyperf; print(pyperf.__version__)"), argv: func(in string) []string {
	return []string{python(), "-m", "pyperf", "stats", in}
}}

func python() string {
	if v := os.Getenv("FLAMEOX_VENV"); v != "" {
		return filepath.Join(v, "bin", "python")
	}
	if _, err := os.Stat(".venv/bin/python"); err == nil {
		return ".venv/bin/python"
	}
	return "python3"
}

// genPyperf writes a pyperf suite of at least size bytes from the real
// telco result: its benchmark is copied under new names (telco-1,
// telco-2, ...), each copy's values scaled by a per-copy factor so that
// the series differ, and a second file (out + ".new.json") holds the same
// suite 0.3% slower (under the 2% threshold: no regression, exit 0) for
// the compare case. pyperf loads both (`pyperf
// stats` is the peer), so they are valid pyperf results.
func genPyperf(out string, size int64) error {
	script := `
import json, sys
src, out, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
doc = json.load(open(src))
one = len(json.dumps(doc["benchmarks"][0], separators=(",", ":")))
n = size // one + 1
name = doc["metadata"].pop("name")
def suite(slow):
    benches = []
    for i in range(n):
        f = (1 + (i % 97) / 100.0) * slow
        runs = []
        for r in doc["benchmarks"][0]["runs"]:
            r = dict(r)
            if "values" in r:
                r["values"] = [v * f for v in r["values"]]
            if "warmups" in r:
                r["warmups"] = [[l, v * f] for l, v in r["warmups"]]
            runs.append(r)
        benches.append({"metadata": {"name": "%s-%d" % (name, i + 1)}, "runs": runs})
    return {"benchmarks": benches, "metadata": doc["metadata"], "version": doc["version"]}
for path, slow in ((out, 1.0), (out + ".new.json", 1.003)):
    with open(path + ".tmp", "w") as f:
        json.dump(suite(slow), f, separators=(",", ":"), sort_keys=True)
`
	cmd := exec.Command(python(), "-c", script, "testdata/pyperf/pyperf-telco.json", out, strconv.FormatInt(size, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pyperf generator: %v: %s", err, stderr.Bytes())
	}
	if err := os.Rename(out+".new.json.tmp", out+".new.json"); err != nil {
		return err
	}
	return os.Rename(out+".tmp", out)
}
