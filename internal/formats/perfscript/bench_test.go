package perfscript

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/lines"
)

// benchInput repeats the committed fixtures' samples to about n bytes.
func benchInput(b *testing.B, n int) []byte {
	b.Helper()
	var one bytes.Buffer
	for _, f := range []string{"perf/hot.perf.txt", "perf/tmpl.perf.txt", "perf/rust-mangled.linux-perf.txt", "perf/simple-with-header.linux-perf.txt"} {
		data, err := os.ReadFile(testdata(f))
		if err != nil {
			b.Fatal(err)
		}
		for _, ln := range bytes.SplitAfter(data, []byte("\n")) {
			if !bytes.HasPrefix(ln, []byte("#")) {
				one.Write(ln)
			}
		}
	}
	out := make([]byte, 0, n+one.Len())
	for len(out) < n {
		out = append(out, one.Bytes()...)
	}
	return out
}

func benchParse(b *testing.B, workers int) {
	data := benchInput(b, 32<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	in := formatstest.MustInput(b, ScriptSpec, nil, nil, nil)
	for range b.N {
		if _, err := Parse(context.Background(), in, bytes.NewReader(data), Options{Workers: workers}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0, int64(len(data))*int64(b.N))
}

// cpuTime is this process's user+system CPU time. Wall-clock MB/s depends
// on what else the machine runs; MB per CPU-second does much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, cpu0 time.Duration, bytes int64) {
	if d := cpuTime() - cpu0; d > 0 {
		b.ReportMetric(float64(bytes)/1e6/d.Seconds(), "MB/cpu-s")
	}
}

func BenchmarkParse1(b *testing.B) { benchParse(b, 1) }
func BenchmarkParse2(b *testing.B) { benchParse(b, 2) }

// BenchmarkShard measures the parse core alone: one shard over blocks
// already in memory, no reading, hashing or merging.
func BenchmarkShard(b *testing.B) {
	data := benchInput(b, 32<<20)
	in := formatstest.MustInput(b, ScriptSpec, nil, nil, nil)
	blocks := lines.NewBlocks(bytes.NewReader(data), lines.BlockOptions{MaxLine: int(in.Limit(collapsed.LimitLineBytes)), Limit: collapsed.LimitLineBytes, Boundary: startsRecord})
	var all []*lines.Block
	for {
		blk, err := blocks.Next(nil)
		if err != nil {
			break
		}
		all = append(all, blk)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		s := newShard(in)
		for _, blk := range all {
			if _, err := s.parseChunk(blk); err != nil {
				b.Fatal(err)
			}
		}
		s.fold()
	}
	reportCPU(b, cpu0, int64(len(data))*int64(b.N))
}

// BenchmarkParseSrcline parses perf script with srcline (the committed
// lines.srcline.perf.txt repeated to 32 MiB), beside BenchmarkParse's
// inputs without it: the cost of building the lines profile.
func BenchmarkParseSrcline(b *testing.B) {
	one, err := os.ReadFile(testdata("perf/lines.srcline.perf.txt"))
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 0, 32<<20+len(one))
	for len(data) < 32<<20 {
		data = append(data, one...)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	in := formatstest.MustInput(b, ScriptSpec, nil, nil, nil)
	b.ResetTimer()
	for range b.N {
		res, err := Parse(context.Background(), in, bytes.NewReader(data), Options{Workers: 2})
		if err != nil || res.Lines == nil {
			b.Fatal(err, "or no lines")
		}
	}
}
