package perfscript

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

// FuzzDecode feeds arbitrary text to the parser with small blocks, with
// one worker or two: it must never panic, every failure must be typed,
// and a success must be self-consistent.
//
// Each seed is one sample of a real fixture, cut to a few frames, with the
// fixture's perf version comment: the fuzzer minimizes every new input
// with a number of executions quadratic in its length, so seeds of a few
// hundred bytes (not whole fixtures) keep it fuzzing instead of
// minimizing.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"perf/hot.perf.txt", "perf/tmpl.perf.txt", "perf/simple-with-header.linux-perf.txt", "perf/rust-mangled.linux-perf.txt", "perf/two.perf.txt"} {
		b, err := os.ReadFile(testdata(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seedSample(b, 3))
	}
	// srcline: the first sample of each srcline fixture, with its lines.
	for _, name := range []string{"perf/lines.srcline.perf.txt", "perf/flat.srcline.perf.txt"} {
		b, err := os.ReadFile(testdata(name))
		if err != nil {
			f.Fatal(err)
		}
		if i := bytes.Index(b, []byte("\n\n")); name == "perf/lines.srcline.perf.txt" && i > 0 {
			b = b[:i+2]
		} else {
			b = b[:bytes.IndexByte(b, '\n')+1]
			b = append(b, "  lines.c:10\n"...)
		}
		f.Add(b)
	}
	f.Add([]byte("a 1 e:\n\t1 leaf (m)\n  x.c:3\n\t2 mid (m)\n  ??:0\n\t3 mid (m)\n  x.c:9 (discriminator 1)\n\n"))
	f.Add([]byte("a 1 c: \n\t1 f (/b (deleted))\n\t2 [unknown] ([unknown])\n\n"))
	f.Add([]byte("     Web Content 10/11 [001] 5.5: 100 cycles:u:  abc render (/lib/xul.so)\n"))
	f.Add([]byte("a 1 1.0: 1 cycles: \n\t1 f (/b)\n\na 1 1.1: 1 cycles: \n\t1 f (/b)\n\t2 g (/b)\n\na 1 1.2: 1 instructions: \n\t1 f (/b)\n\n"))
	lims := map[string]int64{collapsed.LimitLineBytes: 4096, collapsed.LimitStack: 64, collapsed.LimitFrames: 256}
	f.Fuzz(func(t *testing.T, data []byte) {
		Sniff(data[:min(len(data), formats.SniffBytes)])
		res, err := parse(t, bytes.NewReader(data), lims, nil, Options{Workers: 1 + len(data)%2, ChunkBytes: 64})
		if err != nil {
			var fl *evidence.Failure
			if !errors.As(err, &fl) {
				t.Fatalf("untyped failure %T: %v", err, err)
			}
			return
		}
		sink := &formatstest.Sink{}
		if err := emit(nil, sink, res, nil, nil); err != nil {
			t.Fatal(err)
		}
		for _, tb := range sink.Named("cpu.frames") {
			total := intOf(t, tb.Summary.Metrics["total_weight"].Value)
			var self int64
			for _, r := range tb.Rows {
				s, i := intOf(t, r["self_weight"]), intOf(t, r["inclusive_weight"])
				if s < 0 || s > i || i > total {
					t.Fatalf("row breaks 0 <= self <= inclusive <= total=%d: %v", total, r)
				}
				self += s
			}
			if self > total {
				t.Fatalf("self sums to %d > total %d", self, total)
			}
		}
		// The lines split the samples the frames hold, none lost.
		frames, lines := sink.Named("cpu.frames"), sink.Named("cpu.lines")
		if len(lines) > 0 && len(lines) != len(frames) {
			t.Fatalf("%d cpu.lines tables for %d cpu.frames tables", len(lines), len(frames))
		}
		for i, tb := range lines {
			var self, fself int64
			for _, r := range tb.Rows {
				self += intOf(t, r["self_weight"])
			}
			for _, r := range frames[i].Rows {
				fself += intOf(t, r["self_weight"])
			}
			if self != fself {
				t.Fatalf("lines hold %d self samples, frames %d", self, fself)
			}
		}
	})
}

// seedSample is the perf version comment of a fixture, if it has one,
// and its first sample cut to at most frames callchain lines.
func seedSample(b []byte, frames int) []byte {
	var out []byte
	inSample := false
	for _, ln := range bytes.SplitAfter(b, []byte("\n")) {
		switch {
		case bytes.HasPrefix(ln, []byte("# perf version")):
			out = append(out, ln...)
		case len(ln) == 0 || ln[0] == '#':
		case ln[0] == '\t':
			if inSample && frames > 0 {
				out = append(out, ln...)
				frames--
			}
		case len(bytes.TrimSpace(ln)) == 0:
			if inSample {
				return append(out, '\n')
			}
		default:
			if inSample {
				return append(out, '\n')
			}
			out, inSample = append(out, ln...), true
		}
	}
	return out
}

// BenchmarkDecode runs the public path (formats.Run: open, SHA-256,
// parse, rows) on the committed fixtures.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"perf/hot.perf.txt", "perf/rust-mangled.linux-perf.txt"} {
		b.Run(name, func(b *testing.B) {
			path := testdata(name)
			art, err := formats.ArtifactFromPath(path, "explicit")
			if err != nil {
				b.Fatal(err)
			}
			lims, _ := formats.EffectiveLimits(ScriptSpec, nil)
			b.SetBytes(art.Size)
			b.ReportAllocs()
			for range b.N {
				if err := formats.Run(context.Background(), ScriptSpec, art, lims, nil, &formatstest.Sink{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeBig decodes the generated 200 MB input when it exists
// (go run ./tools/perfbench writes it).
func BenchmarkDecodeBig(b *testing.B) {
	path := testdata("perf/big-200mb.perf.txt")
	if _, err := os.Stat(path); err != nil {
		b.Skip("no generated input: go run ./tools/perfbench")
	}
	art, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		b.Fatal(err)
	}
	lims, _ := formats.EffectiveLimits(ScriptSpec, nil)
	b.SetBytes(art.Size)
	b.ReportAllocs()
	cpu0 := cpuTime()
	for range b.N {
		if err := formats.Run(context.Background(), ScriptSpec, art, lims, nil, &formatstest.Sink{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0, art.Size*int64(b.N))
}
