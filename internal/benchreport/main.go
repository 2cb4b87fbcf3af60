// Command benchreport measures the flameox binaries end to end on large
// generated inputs: wall time, throughput (MB/s), CPU seconds and peak
// RSS. With -base it runs the same cases with the binaries built from an
// earlier commit, interleaved run by run so that both sets see the same
// machine load, and prints them side by side with the speedup. `make
// bench` builds the base (BENCH_BASE) and runs it after the Go
// benchmarks.
//
// It imports nothing of flameox: it runs the binaries.
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
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/flameox/flameox/internal/lines"
)

// benchCase is one measured command over one generated input.
type benchCase struct {
	name  string
	input string // file name under -dir, or a path relative to it
	size  int64  // generate when the file is smaller
	gen   func(out string, size int64) error
	argv  func(bin, input string) []string
	// target is the speedup over the base that the case must reach (0:
	// none); the report says whether it did.
	target float64
	// new marks a case the base binaries cannot run (a format or
	// operation added since the base): only this tree's binaries run it.
	new bool
	// peer is the tool a user would pick instead, run on the same input
	// in the same run, interleaved with flameox; nil when there is none.
	peer *peer
}

// peer is another tool measured beside a case: its name and version as
// the report prints them, and its command line for the case's input.
// A peer that is not installed is reported as missing, not skipped
// silently.
type peer struct {
	name string
	argv func(input string) []string
}

func decodeArgv(bin, in string) []string { return []string{filepath.Join(bin, "flameox-decode"), in} }

func rankArgv(bin, in string) []string {
	return []string{filepath.Join(bin, "flameox-rank"), "--format", "jsonl", "--top", "20", in}
}

// cases lists what is measured. A case is one line here; its input
// generator lives in a file of its own (v8gen.go; the perf script input
// comes from tools/perfbench).
func cases() []benchCase {
	v8 := func(out string, size int64) error { return genV8("testdata/v8/recursive-worker.cpuprofile", out, size) }
	// tools/perfbench builds the perf script input from real perf output
	// (make bench runs it first); it is only looked for here.
	perf := func(out string, _ int64) error {
		return fmt.Errorf("%s is missing: run `go run ./tools/perfbench` first", out)
	}
	const perfInput = "../../testdata/perf/big-200mb.perf.txt"
	cs := []benchCase{
		{"v8 decode 10 MiB", "v8-10MiB.cpuprofile", 10 << 20, v8, decodeArgv, 0, false, nil},
		{"v8 decode 100 MiB", "v8-100MiB.cpuprofile", 100 << 20, v8, decodeArgv, 0, false, nil},
		{"v8 decode+rank 100 MiB", "v8-100MiB.cpuprofile", 100 << 20, v8, rankArgv, 1.2, false, nodeV8},
		{"perf-script decode 200 MB", perfInput, 200e6, perf, decodeArgv, 0, false, nil},
		{"perf-script decode+rank 200 MB", perfInput, 200e6, perf, rankArgv, 1.4, false, nil},
	}
	// Each family's cases, from its own file.
	cs = append(cs, pstatsCases()...)
	cs = append(cs, picturesCases(v8, perf, perfInput)...)
	cs = append(cs, benchCases()...)
	cs = append(cs, memrayCases()...)
	cs = append(cs, fleetCase())
	cs = append(cs, traceCases()...)
	cs = append(cs, rocprofCases()...)
	cs = append(cs, inferenceCases()...)
	cs = append(cs, otlpCases()...)
	cs = append(cs, xctraceCases()...)
	cs = append(cs, sanitizerCases()...)
	cs = append(cs, linesCases(v8)...)
	cs = append(cs, pprofCases()...)
	cs = append(cs, perfettoCases()...)
	return cs
}

// nodeV8 is node parsing the profile whole and summing self samples
// (internal/benchreport/peers/v8-top.js).
var nodeV8 = &peer{name: "node " + version("node", "--version"), argv: func(in string) []string {
	return []string{"node", "internal/benchreport/peers/v8-top.js", in}
}}

// version is a peer's version as its own flag prints it, or "(missing)".
func version(argv ...string) string {
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		return "(missing)"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

func main() {
	dir := flag.String("dir", ".cache/bench", "where generated inputs live (reused when present)")
	bin := flag.String("bin", "bin", "directory holding the flameox binaries")
	base := flag.String("base", "", "directory holding the binaries to compare with (built from an earlier commit)")
	baseName := flag.String("base-name", "base", "what -base was built from, for the report")
	runs := flag.Int("runs", 3, "runs of each case and binary set; the median is reported")
	only := flag.String("only", "", "run only the cases whose name contains this")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err)
	}
	sets := []string{*bin}
	if *base != "" {
		sets = append(sets, *base)
	}
	fmt.Printf("benchreport: %d run(s) per case and binary set, interleaved; median wall and CPU; load average %s at start\n", *runs, loadavg())
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	if *base == "" {
		fmt.Fprintln(tw, "case\tinput MB\twall s\tMB/s\tCPU s\toutput rows\tpeak RSS MiB\t")
	} else {
		fmt.Fprintf(tw, "case\tinput MB\t%s wall s\tnew wall s\tspeedup\tbest-run speedup\ttarget\t%[1]s MB/s\tnew MB/s\t%[1]s CPU s\tnew CPU s\t%[1]s RSS MiB\tnew RSS MiB\t\n", *baseName)
	}
	var peers []peerRow
	var floors []goalRow
	for _, c := range cases() {
		if *only != "" && !strings.Contains(c.name, *only) {
			continue
		}
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
		run := sets
		if c.new {
			run = sets[:1]
		}
		ms := make([][]measurement, len(run))
		var pm []measurement
		var peerErr error
		for range *runs {
			for i, set := range run {
				m, err := measure(c.argv(set, in))
				if err != nil {
					fail(fmt.Errorf("%s (%s): %w", c.name, set, err))
				}
				ms[i] = append(ms[i], m)
			}
			if c.peer != nil && peerErr == nil {
				m, err := measure(c.peer.argv(in))
				if err != nil {
					peerErr = err
					continue
				}
				pm = append(pm, m)
			}
		}
		mb := float64(st.Size()) / 1e6
		now := summarize(ms[0])
		if c.peer != nil {
			peers = append(peers, peerRow{c, mb, now, pm, peerErr})
		}
		if r, ok := goalRowFor(c.name, in, mb, now); ok {
			floors = append(floors, r)
		}
		if *base == "" || c.new {
			if *base != "" {
				fmt.Fprintf(tw, "%s\t%.1f\t-\t%.2f\t-\t-\tnew\t-\t%.0f\t-\t%.2f\t-\t%.1f\t\n", c.name, mb, now.wall, mb/now.wall, now.cpu, now.rss)
				continue
			}
			fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.0f\t%.2f\t%d\t%.1f\t\n", c.name, mb, now.wall, mb/now.wall, now.cpu, now.rows, now.rss)
			continue
		}
		was := summarize(ms[1])
		speedup := was.wall / now.wall
		target := "-"
		if c.target > 0 {
			verdict := "met"
			if speedup < c.target {
				verdict = "MISSED"
			}
			target = fmt.Sprintf("≥%.1f %s", c.target, verdict)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.2f\t%.2f×\t%.2f×\t%s\t%.0f\t%.0f\t%.2f\t%.2f\t%.1f\t%.1f\t\n", c.name, mb,
			was.wall, now.wall, speedup, was.best/now.best, target, mb/was.wall, mb/now.wall, was.cpu, now.cpu, was.rss, now.rss)
	}
	tw.Flush()
	printPeers(peers)
	printGoals(floors)
	fmt.Printf("load average %s at end; the speedup and target are on median wall; the best run is the least disturbed by other load;\nCPU s is user+system of the command, steadier than wall on a shared machine\n", loadavg())
}

// peerRow is a case measured beside its peer.
type peerRow struct {
	c   benchCase
	mb  float64
	now summary
	pm  []measurement
	err error
}

// printPeers prints each case beside the tool a user would pick instead:
// both walls, throughputs and peak RSS, and the ratios.
func printPeers(rows []peerRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Println("\nbeside the peer a user would pick instead (same input, same run, interleaved):")
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tpeer\tinput MB\tflameox wall s\tpeer wall s\tpeer/flameox wall\tflameox MB/s\tpeer MB/s\tflameox RSS MiB\tpeer RSS MiB\t")
	for _, r := range rows {
		if r.err != nil || len(r.pm) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.2f\tfailed: %s\t\t\t\t\t\t\n", r.c.name, r.c.peer.name, r.mb, r.now.wall, oneLine(r.err))
			continue
		}
		p := summarize(r.pm)
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.2f\t%.2f\t%.2f×\t%.0f\t%.0f\t%.1f\t%.1f\t\n", r.c.name, r.c.peer.name, r.mb,
			r.now.wall, p.wall, p.wall/r.now.wall, r.mb/r.now.wall, r.mb/p.wall, r.now.rss, p.rss)
	}
	tw.Flush()
}

func oneLine(err error) string {
	if err == nil {
		return "no run"
	}
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// measurement is one run of one command.
type measurement struct {
	wall, cpu time.Duration
	rows      int64
	rss       int64 // KiB
}

// summary is the medians of a case's runs (best: the shortest wall; peak
// RSS: the largest).
type summary struct {
	wall, cpu, best float64 // seconds
	rows            int64
	rss             float64 // MiB
}

func summarize(ms []measurement) summary {
	median := func(get func(measurement) time.Duration) float64 {
		xs := make([]time.Duration, len(ms))
		for i, m := range ms {
			xs[i] = get(m)
		}
		slices.Sort(xs)
		return xs[len(xs)/2].Seconds()
	}
	s := summary{wall: median(func(m measurement) time.Duration { return m.wall }),
		cpu: median(func(m measurement) time.Duration { return m.cpu }), rows: ms[0].rows}
	s.best = ms[0].wall.Seconds()
	for _, m := range ms {
		s.rss = max(s.rss, float64(m.rss)/1024)
		s.best = min(s.best, m.wall.Seconds())
	}
	return s
}

// measure runs argv, counts output rows, and returns wall time, the
// child's CPU time and its peak resident set (from getrusage).
func measure(argv []string) (measurement, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return measurement{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return measurement{}, err
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
			return measurement{}, err
		}
		if bytes.HasPrefix(l.Bytes, []byte(`{"kind":"row"`)) {
			rows++
		}
	}
	if err := cmd.Wait(); err != nil {
		return measurement{}, fmt.Errorf("%v: %s", err, stderr.String())
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return measurement{wall: wall, cpu: cpu, rows: rows, rss: ru.Maxrss}, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchreport:", err)
	os.Exit(1)
}
