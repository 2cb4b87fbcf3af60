package perfscript

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// lineKey is a (function, file, line) of cpu.lines; line -1 and no file
// for a frame whose line perf did not resolve.
type lineKey struct {
	fn, file string
	line     int64
}

var srclineRe = regexp.MustCompile(`^(.+):([0-9]+)$`)

// reportLines reads `perf report --sort sym,srcline -F sample,sym,srcline
// -t '|'`: samples per symbol and srcline.
func reportLines(t *testing.T, text string) map[lineKey]int64 {
	t.Helper()
	out := map[lineKey]int64{}
	for _, ln := range strings.Split(text, "\n") {
		if ln == "" || strings.HasPrefix(ln, "#") {
			continue
		}
		f := strings.Split(ln, "|")
		if len(f) != 3 {
			t.Fatalf("report line %q", ln)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
		if err != nil {
			t.Fatalf("report line %q: %v", ln, err)
		}
		sym := strings.TrimSpace(f[1])
		sym = strings.TrimSpace(sym[strings.IndexByte(sym, ']')+1:])
		k := lineKey{sym, "", -1}
		if m := srclineRe.FindStringSubmatch(strings.TrimSpace(f[2])); m != nil {
			line, _ := strconv.ParseInt(m[2], 10, 64)
			k = lineKey{sym, m[1], line}
		}
		out[k] += n
	}
	return out
}

// linesOf sums a decode's cpu.lines self weights per (function, file,
// line).
func linesOf(t *testing.T, s *formatstest.Sink) (map[lineKey]int64, int64) {
	t.Helper()
	tabs := s.Named(table.CPULines.Name)
	if len(tabs) != 1 {
		t.Fatalf("%d cpu.lines tables", len(tabs))
	}
	got := map[lineKey]int64{}
	var sum int64
	for _, r := range tabs[0].Rows {
		file, _ := r["file"].(string)
		w := intOf(t, r["self_weight"])
		got[lineKey{r["function"].(string), file, intOf(t, r["line"])}] += w
		sum += w
	}
	if !table.SampledLines(tabs[0].Header) {
		t.Error("cpu.lines header does not state sampled lines")
	}
	return got, sum
}

// perf script's srcline lines are the lines of the frames above them:
// per function and line, our cpu.lines self weights equal perf report's
// samples sorted by symbol and srcline (regen.sh stored it from the same
// perf.data), with and without callchains; the lines add up to the
// samples; and a srcline is never a frame of its own.
func TestSrclineMatchesReport(t *testing.T) {
	for _, name := range []string{"lines", "flat"} {
		t.Run(name, func(t *testing.T) {
			sink, err := decodeFile(t, ScriptSpec, testdata("perf/"+name+".srcline.perf.txt"), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := os.ReadFile(testdata("perf/" + name + ".srcline.report.txt"))
			if err != nil {
				t.Fatal(err)
			}
			want := reportLines(t, string(rep))
			got, sum := linesOf(t, sink)
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%v: decoded %d, perf report %d", k, got[k], n)
				}
			}
			for k, n := range got {
				if _, ok := want[k]; !ok && n != 0 {
					t.Errorf("%v: decoded %d self samples, absent from perf report", k, n)
				}
			}
			frames := sink.Named(table.CPUFrames.Name)[0]
			if n := intOf(t, frames.Summary.Metrics["samples"].Value); n != sum {
				t.Errorf("lines weigh %d, the script has %d samples", sum, n)
			}
			for _, r := range frames.Rows {
				if fn := r["function"].(string); strings.Contains(fn, "lines.c:") || r["line"] != int64(-1) {
					t.Errorf("frame %q line %v", fn, r["line"])
				}
			}
			if got[lineKey{"mix", "lines.c", 10}] == 0 {
				t.Error("no samples on mix's loop line")
			}
		})
	}
}

// A line's inclusive weight counts each sample once however often the
// line is on its stack; a frame without a srcline (or ??:0) is its
// function's row, line -1; samples parsed before the first srcline (in
// any block) count there too; a script without srcline has no cpu.lines.
func TestSrclineRows(t *testing.T) {
	script := "a 1 e:\n" +
		"\t1 leaf (m)\n  x.c:3\n\t2 mid (m)\n  ??:0\n\t3 mid (m)\n  x.c:9\n\n" +
		"a 1 e:\n\t1 leaf (m)\n  x.c:3 (discriminator 2)\n\t3 mid (m)\n  x.c:9\n\t3 mid (m)\n  x.c:9\n\n" +
		"a 1 e:\n\t4 other (m)\n\n"
	for _, chunk := range []int{0, 16} {
		sink, err := decodeString(t, script, chunk)
		if err != nil {
			t.Fatal(err)
		}
		tabs := sink.Named(table.CPULines.Name)
		if len(tabs) != 1 {
			t.Fatalf("chunk %d: %d cpu.lines tables", chunk, len(tabs))
		}
		var rows []string
		for _, r := range tabs[0].Rows {
			rows = append(rows, fmt.Sprintf("%s %v:%v %v/%v", r["function"], r["file"], r["line"], r["self_weight"], r["inclusive_weight"]))
		}
		want := "leaf x.c:3 2/2 mid <nil>:-1 0/1 mid x.c:9 0/2 other <nil>:-1 1/1"
		if got := strings.Join(rows, " "); got != want {
			t.Errorf("chunk %d: rows\n%s\nwant\n%s", chunk, got, want)
		}
	}
	sink, err := decodeString(t, "a 1 e:\n\t1 leaf (m)\n\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sink.Named(table.CPULines.Name)); n != 0 {
		t.Errorf("%d cpu.lines tables without srcline", n)
	}
}

func TestIsSrcline(t *testing.T) {
	for ln, want := range map[string]bool{
		"  lines.c:12":                          true,
		"  ??:0":                                true,
		"  [kernel.kallsyms][ffffffff81000e46]": true,
		"  /a b/c.c:3":                          true,
		"  116a mix (/bin/x)":                   false,
		"    116a mix (/bin/x)":                 false,
		" x":                                    false,
	} {
		if got := isSrcline([]byte(ln)); got != want {
			t.Errorf("isSrcline(%q) = %v", ln, got)
		}
	}
}

// decodeString parses a script in blocks of chunk bytes (0: the
// default) with two workers and emits its tables.
func decodeString(t *testing.T, script string, chunk int) (*formatstest.Sink, error) {
	t.Helper()
	r := strings.NewReader(script)
	in, err := formatstest.Input(ScriptSpec, nil, r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Parse(context.Background(), in, r, Options{Workers: 2, ChunkBytes: chunk})
	if err != nil {
		return nil, err
	}
	sink := &formatstest.Sink{}
	return sink, emit(in, sink, res, nil, nil)
}

// perf.data with the srcline option: perf script prints the lines, and
// cpu.lines equals perf report's samples per symbol and srcline, run now
// on the same file (both resolve against this host); without the option
// there is no cpu.lines table.
func TestDataSrclineMatchesPerfReport(t *testing.T) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not on PATH; install linux-perf to run the perf.data comparison")
	}
	formatstest.InstallPerfBinary(t, "flameox-lines")
	path := testdata("perf/lines.perf.data")
	sink, err := decodeFile(t, DataSpec, path, nil, evidence.Object{OptionSrcline: true})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(perf, "report", "-i", path, "--stdio", "--no-children", "-g", "none", "--sort", "sym,srcline", "-F", "sample,sym,srcline", "-t", "|")
	cmd.Env = append(os.Environ(), "PERF_CONFIG=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perf report: %v", err)
	}
	want := reportLines(t, string(out))
	got, _ := linesOf(t, sink)
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%v: decoded %d, perf report %d", k, got[k], n)
		}
	}
	if got[lineKey{"mix", "lines.c", 10}] == 0 {
		t.Error("no samples on mix's loop line")
	}
	plain, err := decodeFile(t, DataSpec, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(plain.Named(table.CPULines.Name)); n != 0 {
		t.Errorf("%d cpu.lines tables without the srcline option", n)
	}
}
