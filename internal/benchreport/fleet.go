package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/store"
	"github.com/flameox/flameox/internal/wire"
)

// fleetBundles is the size of the store the fleet case ranks across.
const fleetBundles = 1000

// fleetCase ranks the top 20 frames by self weight across a store of 1,000
// bundles (flameox-rank --bundles), beside DuckDB running the same query
// over the same Parquet files. The input is the store directory, so the
// input MB column is not meaningful for it; rows/s and wall are.
func fleetCase() benchCase {
	argv := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "20", "--bundles", in}
	}
	return benchCase{"rank --bundles 1000 bundles", "fleet-1000", 1, genFleet, argv, 0, true, duckdbPeer}
}

// venvPython is the project venv's interpreter (FLAMEOX_VENV, else .venv).
func venvPython() string {
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = ".venv"
	}
	return filepath.Join(venv, "bin", "python")
}

// duckdbTop is the query of the DuckDB engine test (internal/rank), over
// every bundle: the top 20 frames in flameox-rank's order.
const duckdbTop = `
import duckdb, json, sys
q = """SELECT artifact_id, frame_id, function, self_weight
FROM read_parquet('%s/bundles/*/tables/cpu.frames/*.parquet', filename = true)
ORDER BY self_weight DESC, inclusive_weight DESC, artifact_id, frame_id, thread NULLS FIRST, process NULLS FIRST
LIMIT 20""" % sys.argv[1]
for row in duckdb.connect().execute(q).fetchall():
    print(json.dumps({"kind": "row", "values": list(row)}, separators=(",", ":")))
`

var duckdbPeer = &peer{
	name: "duckdb " + version(venvPython(), "-c", "import duckdb; print(duckdb.__version__)"),
	argv: func(in string) []string { return []string{venvPython(), "-c", duckdbTop, in} },
}

// fleetProfiles runs a small workload N times under CPython's cProfile, a
// different amount of work each time, one pstats file per run.
const fleetProfiles = `
import cProfile, json, sys
out, n = sys.argv[1], int(sys.argv[2])
def hot(k):
    t = 0
    for i in range(k):
        t += i * i
    return t
def fib(k):
    return k if k < 2 else fib(k - 1) + fib(k - 2)
def words(k):
    return sorted(str(i) for i in range(k))
for i in range(n):
    p = cProfile.Profile()
    p.enable()
    hot(3000 + 97 * i)
    fib(8 + i % 7)
    json.dumps(words(200 + 13 * i))
    p.disable()
    p.dump_stats("%s/run-%04d.pstats" % (out, i))
`

// genFleet builds a store of fleetBundles bundles, each one real cProfile
// run decoded and preserved as flameox-decode | flameox-preserve --label
// would, in process (the measured command is the ranking, not this). It
// builds in a scratch directory and renames it into place, so a store that
// is there is whole.
func genFleet(out string, _ int64) error {
	tmp := out + ".tmp"
	os.RemoveAll(tmp)
	prof := filepath.Join(tmp, "profiles")
	if err := os.MkdirAll(prof, 0o755); err != nil {
		return err
	}
	py := os.Getenv("PYTHON")
	if py == "" {
		py = "python3"
	}
	var stderr bytes.Buffer
	cmd := exec.Command(py, "-c", fleetProfiles, prof, strconv.Itoa(fleetBundles))
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cProfile runs: %v: %s", err, stderr.Bytes())
	}
	dir := filepath.Join(tmp, "store")
	host, _ := os.Hostname()
	ctx := context.Background()
	for i := range fleetBundles {
		var stream bytes.Buffer
		w := wire.NewWriter(&stream)
		run := &decode.Run{Opts: decode.Options{Specs: registry.Formats()}}
		if err := run.Path(ctx, filepath.Join(prof, fmt.Sprintf("run-%04d.pstats", i)), decode.StreamTarget{W: w}); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		labels := map[string]string{"service": []string{"api", "web"}[i%2], "run": strconv.Itoa(i)}
		index := func(id bundle.ID, m *bundle.Manifest) error {
			return store.Record(dir, store.EntryOf(id, m, labels, time.Now(), host))
		}
		if _, _, err := bundle.PreserveThen(ctx, dir, &stream, wire.NewWriter(io.Discard), index); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(prof); err != nil {
		return err
	}
	if err := os.Rename(dir, out); err != nil {
		return err
	}
	return os.RemoveAll(tmp)
}
