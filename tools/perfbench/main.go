// Command perfbench measures perf-script decoding end to end on a large
// input: it builds (once) a perf script file of at least -size bytes by
// repeating the samples of the committed real fixtures, then decodes it
// the way flameox-decode decodes a path (one open, detection from the
// peeked prefix, parse and SHA-256 in the same read, cpu.frames and
// cpu.edges rows) in a child process and prints MB/s and that process's
// peak RSS. -runs 0 only generates the input.
//
//	go run ./tools/perfbench                 # 200 MB, testdata/perf/big-200mb.perf.txt
//	go run ./tools/perfbench -size 1000 -runs 3
//
// The generated file matches /testdata/**/big-* in .gitignore and is never
// committed.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/perfscript"
	"github.com/flameox/flameox/internal/table"
)

// sources are real perf script outputs; only their samples are repeated.
var sources = []string{
	"testdata/perf/hot.perf.txt",
	"testdata/perf/tmpl.perf.txt",
	"testdata/perf/rust-mangled.linux-perf.txt",
	"testdata/perf/simple-with-header.linux-perf.txt",
}

func main() {
	size := flag.Int("size", 200, "input size in MB (10^6 bytes)")
	runs := flag.Int("runs", 1, "decodes to time")
	path := flag.String("file", "", "input file (default testdata/perf/big-<size>mb.perf.txt)")
	child := flag.Bool("decode", false, "internal: decode -file once and report")
	flag.Parse()
	if *path == "" {
		*path = filepath.Join("testdata", "perf", fmt.Sprintf("big-%dmb.perf.txt", *size))
	}
	if *child {
		if err := decode(*path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := generate(*path, int64(*size)*1e6); err != nil {
		fmt.Fprintln(os.Stderr, "perfbench:", err)
		os.Exit(1)
	}
	for range *runs {
		cmd := exec.Command(os.Args[0], "-decode", "-file", *path)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "perfbench:", err)
			os.Exit(1)
		}
	}
}

// generate writes the repeated samples unless a large enough file exists.
func generate(path string, size int64) error {
	if st, err := os.Stat(path); err == nil && st.Size() >= size {
		return nil
	}
	var samples bytes.Buffer
	for _, src := range sources {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		for _, ln := range bytes.SplitAfter(b, []byte("\n")) {
			if !bytes.HasPrefix(ln, []byte("#")) {
				samples.Write(ln)
			}
		}
		if !bytes.HasSuffix(samples.Bytes(), []byte("\n\n")) {
			samples.WriteByte('\n')
		}
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for n < size {
		k, err := w.Write(samples.Bytes())
		if err != nil {
			f.Close()
			return err
		}
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

type discard struct{ rows int64 }

func (d *discard) Wants(*table.Schema) bool                           { return true }
func (d *discard) Begin(*evidence.Table) (formats.TableWriter, error) { return d, nil }
func (d *discard) Row(any) error                                      { d.rows++; return nil }
func (d *discard) End(*evidence.Summary) error                        { return nil }

func decode(path string) error {
	lims, err := formats.EffectiveLimits(perfscript.ScriptSpec, nil)
	if err != nil {
		return err
	}
	d := &discard{}
	cpu0 := cpuTime()
	t0 := time.Now()
	src, err := formats.Open(path, "explicit")
	if err != nil {
		return err
	}
	defer src.Close()
	prefix, err := src.Prefix()
	if err != nil {
		return err
	}
	if _, err := formats.Detect([]*formats.Spec{perfscript.ScriptSpec}, path, prefix, ""); err != nil {
		return err
	}
	h := src.Hold(d, func() error { return nil }, 0)
	if err := src.Run(context.Background(), perfscript.ScriptSpec, lims, nil, h); err != nil {
		return err
	}
	el := time.Since(t0)
	cpu := cpuTime() - cpu0
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	runRSS := float64(ru.Maxrss) / 1024
	mb := float64(src.Artifact.Size) / 1e6
	held, _ := h.Held()
	fmt.Printf("perf-script %.0f MB, GOMAXPROCS=%d, load average %s\n", mb, runtime.GOMAXPROCS(0), loadavg())
	fmt.Printf("  one read (open, fstat, sniff, parse + sha256, %d rows, %d bytes held): %6.3f s wall = %5.0f MB/s; %.3f CPU-s = %5.0f MB per CPU-second; peak RSS %.1f MiB\n",
		d.rows, held, el.Seconds(), mb/el.Seconds(), cpu.Seconds(), mb/cpu.Seconds(), runRSS)

	// The parser alone, reading the file without the runner's digest.
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	in, err := formats.NewInput(perfscript.ScriptSpec, lims, nil)
	if err != nil {
		return err
	}
	cpu0 = cpuTime()
	t0 = time.Now()
	if _, err := perfscript.Parse(context.Background(), in, f, perfscript.Options{}); err != nil {
		return err
	}
	el, cpu = time.Since(t0), cpuTime()-cpu0
	fmt.Printf("  perfscript.Parse alone (read, parse):                      %6.3f s wall = %5.0f MB/s; %.3f CPU-s = %5.0f MB per CPU-second\n",
		el.Seconds(), mb/el.Seconds(), cpu.Seconds(), mb/cpu.Seconds())
	return nil
}

// cpuTime is the process's user+system CPU time: on a busy machine wall
// time measures the neighbours too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
