// Command benchreport measures the flameox binaries end to end on large
// generated inputs and prints throughput (MB/s, rows/s) and peak RSS.
// `make bench` runs it after the Go benchmarks.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/flameox/flameox/internal/lines"
)

// benchCase is one measured command over one generated input.
type benchCase struct {
	name  string
	input string
	size  int64
	gen   func(out string, size int64) error
	argv  func(bin, input string) []string
}

func main() {
	dir := flag.String("dir", ".cache/bench", "where generated inputs live (reused when present)")
	bin := flag.String("bin", "bin", "directory holding the flameox binaries")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err)
	}
	v8seed := "testdata/v8/recursive-worker.cpuprofile"
	v8 := func(out string, size int64) error { return genV8(v8seed, out, size) }
	decode := func(bin, in string) []string { return []string{filepath.Join(bin, "flameox-decode"), in} }
	rank := func(bin, in string) []string {
		return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "20", in}
	}
	// tools/perfbench builds the perf script input from real perf output
	// (make bench runs it first); it is only looked for here.
	perfInput := func(out string, _ int64) error {
		return fmt.Errorf("%s is missing: run `go run ./tools/perfbench` first", out)
	}
	cases := []benchCase{
		{"v8 decode 10 MiB", "v8-10MiB.cpuprofile", 10 << 20, v8, decode},
		{"v8 decode 100 MiB", "v8-100MiB.cpuprofile", 100 << 20, v8, decode},
		{"v8 decode+rank 100 MiB", "v8-100MiB.cpuprofile", 100 << 20, v8, rank},
		{"perf-script decode 200 MB", "../../testdata/perf/big-200mb.perf.txt", 200e6, perfInput, decode},
		{"perf-script decode+rank 200 MB", "../../testdata/perf/big-200mb.perf.txt", 200e6, perfInput, rank},
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tinput MB\twall s\tMB/s\toutput rows\trows/s\tpeak RSS MiB\t")
	for _, c := range cases {
		in := filepath.Join(*dir, c.input)
		if st, err := os.Stat(in); err != nil || st.Size() < c.size {
			fmt.Fprintf(os.Stderr, "generating %s ...\n", in)
			if err := c.gen(in, c.size); err != nil {
				fail(fmt.Errorf("%s: %w", c.name, err))
			}
		}
		st, err := os.Stat(in)
		if err != nil {
			fail(err)
		}
		wall, rows, rss, err := measure(c.argv(*bin, in))
		if err != nil {
			fail(fmt.Errorf("%s: %w", c.name, err))
		}
		mb := float64(st.Size()) / 1e6
		fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.0f\t%d\t%.0f\t%.1f\t\n", c.name, mb, wall.Seconds(), mb/wall.Seconds(), rows, float64(rows)/wall.Seconds(), float64(rss)/1024)
	}
	tw.Flush()
}

// measure runs argv, counts output lines, and returns wall time and the
// child's peak resident set (KiB, from getrusage).
func measure(argv []string) (time.Duration, int64, int64, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	var rows int64
	// A canonical block starts with its kind: a line's first bytes tell.
	lr := lines.NewReader(out, 64)
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, 0, err
		}
		if bytes.HasPrefix(l.Bytes, []byte(`{"kind":"row"`)) {
			rows++
		}
	}
	if err := cmd.Wait(); err != nil {
		return 0, 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return wall, rows, ru.Maxrss, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchreport:", err)
	os.Exit(1)
}
