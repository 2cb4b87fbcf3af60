package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/store"
	"github.com/flameox/flameox/internal/table"
)

// --label records the bundle in the store's index with its labels, host
// and contents; the same evidence preserved again is one bundle with two
// entries.
func TestLabelsIndex(t *testing.T) {
	in, a := profileStream(t)
	dir := t.TempDir()
	for _, l := range []string{"ci-1", "ci-2"} {
		r := runBinary(t, in, "--store", dir, "--label", "service=api", "--label", "run="+l)
		if r.code != evidence.ExitCode(evidence.CodeDecodeFailure) {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	}
	entries, err := store.Entries(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := store.Bundles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || len(entries) != 2 {
		t.Fatalf("%d bundles, %d entries; want 1 and 2", len(ids), len(entries))
	}
	host, _ := os.Hostname()
	for _, e := range entries {
		if e.BundleID != ids[0].String() || e.Host != host || e.Labels["service"] != "api" ||
			strings.Join(e.Providers, ",") != "node-cpu-profile" || strings.Join(e.Formats, ",") != a.Format ||
			strings.Join(e.Outcomes, ",") != evidence.OutcomeCompleted || strings.Join(e.Tables, ",") != table.CPUFrames.Name || e.Failures != 1 {
			t.Fatalf("entry %+v", e)
		}
	}
	sel, err := store.Select(dir, []store.Cond{{Key: "run", Value: "ci-2"}})
	if err != nil || len(sel.IDs) != 1 {
		t.Fatalf("select run=ci-2: %v %v", sel, err)
	}
	sel, err = store.Select(dir, []store.Cond{{Key: "run", Value: "ci-3"}})
	if err != nil || len(sel.IDs) != 0 {
		t.Fatalf("select run=ci-3: %v %v", sel, err)
	}
	for _, bad := range [][]string{{"--label", "Service=x"}, {"--label", "host=x"}, {"--label", "a=1", "--label", "a=2"}, {"--label", "novalue"}} {
		r := runBinary(t, in, append([]string{"--store", t.TempDir()}, bad...)...)
		if r.code != evidence.ExitCode(evidence.CodeInvalidArgument) || !strings.Contains(r.stderr, "label") {
			t.Errorf("%v: exit %d, stderr %q", bad, r.code, r.stderr)
		}
	}
}

// bigStream is a stream whose native file is large enough (4 MiB) that a
// preserve is still copying when it is killed.
func bigStream(t *testing.T, dir string, n int) []byte {
	t.Helper()
	data := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	path := filepath.Join(dir, fmt.Sprintf("native-%d.bin", n))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	a := &evidence.Artifact{ID: "sha256:" + hex.EncodeToString(sum[:]), Path: path, Size: int64(len(data)),
		Name: filepath.Base(path), Role: "cpu-profile", Format: "v8-cpuprofile"}
	tab := &evidence.Table{ID: a.Digest()[:12] + ".cpu.frames", Name: table.CPUFrames.Name, Operation: "decode", Format: "v8-cpuprofile",
		Columns: table.CPUFrames.EvidenceColumns("samples"), Evidence: evidence.Observed, ArtifactIDs: []string{a.ID},
		Decoder: evidence.Producer{Name: "v8-cpuprofile", Version: "1"}, Arguments: evidence.Object{}}
	blocks := []evidence.Marshaler{a, tab}
	const rows = 3000
	for i := range rows {
		blocks = append(blocks, &evidence.Row{TableID: tab.ID, Values: evidence.Object{
			"artifact_id": a.ID, "frame_id": fmt.Sprint(i), "function": fmt.Sprintf("f%d_%d", n, i), "file": "app.js", "line": i, "column": 1,
			"module": nil, "symbolization": table.Symbolized, "thread": nil, "process": nil,
			"self_weight": float64(i % 17), "inclusive_weight": float64(i), "inclusive_occurrence_weight": nil, "calls": nil, "primitive_calls": nil}})
	}
	blocks = append(blocks, &evidence.Summary{TableID: tab.ID, RowsObserved: rows, RowsEmitted: rows, Complete: true})
	return encode(t, blocks...)
}

// Many processes preserve into one store at once, different evidence and
// the same evidence, and some are killed with SIGKILL part way. Whatever
// the timing, the store stays consistent: every bundle verifies, every
// index entry reads and names a published bundle, and every preserve that
// reported success is published and indexed. Rerunning the killed ones
// completes the store.
func TestConcurrentPreservesAndKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 24 processes")
	}
	src, dir := t.TempDir(), t.TempDir()
	const kinds, procs = 4, 24
	streams := make([][]byte, kinds)
	for i := range streams {
		streams[i] = bigStream(t, src, i)
	}
	start := func(n int) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(binary, "--store", dir, "--label", fmt.Sprintf("run=r%d", n))
		cmd.Stdin = bytes.NewReader(streams[n%kinds])
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var wg sync.WaitGroup
	killed := make([]bool, procs)
	ok := make([]string, procs) // bundle id reported by a successful run
	var mu sync.Mutex
	for n := range procs {
		cmd, out := start(n)
		kill := n%3 == 0
		delay := time.Duration(rng.IntN(80)) * time.Millisecond
		wg.Add(1)
		go func() {
			defer wg.Done()
			if kill {
				time.Sleep(delay)
				cmd.Process.Signal(syscall.SIGKILL)
			}
			err := cmd.Wait()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if !kill {
					t.Errorf("run %d: %v", n, err)
				}
				killed[n] = true
				return
			}
			ok[n] = bundleID(t, out.String())
		}()
	}
	wg.Wait()
	check := func() map[string]bool {
		sel, err := store.Select(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range sel.IDs {
			if _, err := bundle.Open(bundle.Dir(dir, id)); err != nil {
				t.Fatalf("bundle %s: %v", id, err)
			}
		}
		entries, err := store.Entries(dir)
		if err != nil {
			t.Fatal(err)
		}
		runs := map[string]bool{}
		for _, e := range entries {
			runs[e.Labels["run"]+" "+e.BundleID] = true
		}
		return runs
	}
	runs := check()
	for n, id := range ok {
		if id != "" && !runs[fmt.Sprintf("r%d %s", n, id)] {
			t.Errorf("run %d reported bundle %s, which the index does not record for it", n, id)
		}
	}
	var rerun int
	for n := range procs {
		if killed[n] {
			rerun++
			cmd, out := start(n)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("rerun %d: %v", n, err)
			}
			ok[n] = bundleID(t, out.String())
		}
	}
	runs = check()
	ids, err := store.Bundles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != kinds {
		t.Fatalf("%d bundles, want %d (one per distinct evidence)", len(ids), kinds)
	}
	for n, id := range ok {
		if id == "" || !runs[fmt.Sprintf("r%d %s", n, id)] {
			t.Errorf("run %d (bundle %q) is not indexed", n, id)
		}
		if id != ok[n%kinds] {
			t.Errorf("run %d: bundle %s, but the same evidence gave %s", n, id, ok[n%kinds])
		}
	}
	t.Logf("%d of %d runs killed and rerun", rerun, procs)
}

// bundleID is the id of the bundle block a preserve printed last.
func bundleID(t *testing.T, stdout string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	v, err := evidence.ParseValue([]byte(lines[len(lines)-1]), 0)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := v.(evidence.Object)
	if o["kind"] != evidence.KindBundle {
		t.Fatalf("last block is not a bundle: %s", lines[len(lines)-1])
	}
	id, _ := o["bundle_id"].(string)
	return id
}
