package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
)

// pprofCases: real Go profiles (a labelled CPU profile and a heap
// profile that go test wrote) grown to 100 MB of uncompressed
// profile.proto by repeating their samples, ranked by flameox beside
// go tool pprof -top on the same file.
func pprofCases() []benchCase {
	memOp := registry.OperationsForTables([]string{table.MemoryFrames.Name})[0].Name
	heap := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "20", "--operation", memOp, in}
	}
	return []benchCase{
		{"pprof cpu rank 64 MB", "pprof-cpu-64MB.pprof", 64e6, grownPprof("testdata/pprof/cpu-labels.pb.gz"), rankArgv, 0, false, pprofTop("cpu")},
		{"pprof heap rank 32 MB", "pprof-heap-32MB.pprof", 32e6, grownPprof("testdata/pprof/heap-allocs.pb.gz"), heap, 0, true, pprofTop("alloc_space")},
	}
}

// pprofTop is go tool pprof -top of one sample type, the tool a Go user
// would run on the same file.
func pprofTop(index string) *peer {
	return &peer{name: "go tool pprof -top (" + version("go", "version") + ")", argv: func(in string) []string {
		return []string{"go", "tool", "pprof", "-top", "-nodecount=20", "-sample_index=" + index, in}
	}}
}

// grownPprof writes seed's profile with its samples repeated until the
// uncompressed profile.proto holds at least size bytes; the repeats'
// values are scaled by 1 to 7 so that totals are not one sample's
// multiple.
func grownPprof(seed string) func(out string, size int64) error {
	return func(out string, size int64) error {
		raw, err := os.ReadFile(seed)
		if err != nil {
			return err
		}
		p, err := profile.Parse(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("%s: %v", seed, err)
		}
		orig := p.Sample
		repeat := func(from, to int) {
			for i := from; i < to; i++ {
				for _, s := range orig {
					c := *s
					c.Value = slices.Clone(s.Value)
					for j := range c.Value {
						c.Value[j] *= int64(1 + i%7)
					}
					p.Sample = append(p.Sample, &c)
				}
			}
		}
		// Size one repeat of the samples: the profile once and twice.
		var one, two bytes.Buffer
		if err := p.WriteUncompressed(&one); err != nil {
			return err
		}
		repeat(1, 2)
		if err := p.WriteUncompressed(&two); err != nil {
			return err
		}
		per := int64(max(1, two.Len()-one.Len()))
		repeat(2, int(max(0, size-int64(one.Len()))/per)+2)
		f, err := os.Create(out + ".tmp")
		if err != nil {
			return err
		}
		if err := p.WriteUncompressed(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Rename(out+".tmp", out)
	}
}
