package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The generator is deterministic and writes what CPython's own pstats
// reads; a small size keeps the check cheap (the bench sizes are made by
// benchreport, not by tests).
func TestGenPstats(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the generator runs CPython's cProfile")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pstats"), filepath.Join(dir, "b.pstats")
	const size = 40_000
	for _, p := range []string{a, b} {
		if err := genPstats(p, size); err != nil {
			t.Fatal(err)
		}
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if len(da) < size || !bytes.Equal(da, db) {
		t.Fatalf("%d and %d bytes, equal %v: want the same file of at least %d", len(da), len(db), bytes.Equal(da, db), size)
	}
	out, err := exec.Command(py, "-c", `
import pstats, sys
s = pstats.Stats(sys.argv[1])
print(len(s.stats), sum(len(v[4]) for v in s.stats.values()))`, a).Output()
	if err != nil {
		t.Fatal(err)
	}
	var funcs, edges int
	if f := strings.Fields(string(out)); len(f) == 2 {
		funcs, _ = strconv.Atoi(f[0])
		edges, _ = strconv.Atoi(f[1])
	}
	if funcs < 100 || edges < 3*funcs {
		t.Fatalf("pstats reads %q: want many functions with several callers each", out)
	}
}

func TestPstatsCases(t *testing.T) {
	cases := pstatsCases()
	if len(cases) != 6 {
		t.Fatalf("%d cases", len(cases))
	}
	for i, c := range cases {
		argv := strings.Join(c.argv("bin", c.input), " ")
		edges := strings.Contains(argv, "--operation summarize_cpu_caller_edges")
		if !strings.HasPrefix(argv, filepath.Join("bin", "flameox-rank")) || edges != (i%2 == 1) || c.size < 8_000_000 || c.gen == nil {
			t.Errorf("case %q: %s (size %d)", c.name, argv, c.size)
		}
	}
}
