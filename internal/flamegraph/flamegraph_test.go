package flamegraph_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/flamegraph"
	"github.com/flameox/flameox/internal/rank"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
)

func fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...)
}

// summaryOf keeps the result's summary as the writer ends.
type summaryOf struct {
	*flamegraph.Writer
	sum *evidence.Summary
}

func (s *summaryOf) End(sm *evidence.Summary) error { s.sum = sm; return s.Writer.End(sm) }

// draw runs flameox-rank's in-process path with a picture output.
func draw(t *testing.T, format string, icicle bool, baseline []string, paths ...string) (string, *evidence.Summary) {
	t.Helper()
	var buf bytes.Buffer
	w := &summaryOf{Writer: &flamegraph.Writer{W: &buf, Format: format, Icicle: icicle}}
	req := rank.Request{Decode: decode.Options{Specs: registry.Formats()}, Output: format, Baseline: baseline}
	if err := rank.Paths(context.Background(), req, paths, w); err != nil {
		t.Fatal(err)
	}
	if w.sum == nil {
		t.Fatal("no summary")
	}
	return buf.String(), w.sum
}

func metric(t *testing.T, s *evidence.Summary, name string) float64 {
	t.Helper()
	v, ok := evidence.AsFloat(s.Metrics[name].Value)
	if !ok {
		t.Fatalf("no metric %s in %+v", name, s.Metrics)
	}
	return v
}

// foldedLines parses folded text: stack → count.
func foldedLines(t *testing.T, text string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, ln := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		i := strings.LastIndexByte(ln, ' ')
		n, err := strconv.ParseInt(ln[i+1:], 10, 64)
		if i <= 0 || err != nil {
			t.Fatalf("folded line %q", ln)
		}
		out[ln[:i]] += n
	}
	return out
}

func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

var stackFixtures = [][]string{
	{"diff", "slow.cpuprofile"},
	{"perf", "hot.perf.txt"},
	{"perf", "tmpl.perf.txt"},
	{"pprof", "cpu.pb.gz"},
	{"collapsed", "perf-vertx-stacks-01-collapsed-all.txt"},
}

// lookTool finds a peer tool on PATH or in cargo's bin directory.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, ".cargo", "bin", name); fileExists(p) {
			return p
		}
	}
	t.Skipf("%s is not on PATH: cargo install inferno (crates.io); .ci/run installs it", name)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// The folded output holds every stacked sample: its counts sum to the
// stacked weight (the total, for these profiles), and inferno-flamegraph
// reads it with the same total.
func TestFoldedTotals(t *testing.T) {
	inferno := lookTool(t, "inferno-flamegraph")
	for _, fx := range stackFixtures {
		t.Run(fx[len(fx)-1], func(t *testing.T) {
			text, s := draw(t, flamegraph.Folded, false, nil, fixture(fx...))
			lines := foldedLines(t, text)
			scale, _ := flamegraph.FoldedScale(s.Metrics[table.MetricTotalWeight].Unit)
			want := int64(math.Round(metric(t, s, "stacked_weight") * scale))
			if got := sum(lines); got != want || want == 0 {
				t.Fatalf("folded counts sum to %d, stacked weight %d", got, want)
			}
			if total := int64(math.Round(metric(t, s, table.MetricTotalWeight) * scale)); total != want {
				t.Errorf("total %d, stacked %d: this fixture has samples on no stack", total, want)
			}
			cmd := exec.Command(inferno)
			cmd.Stdin = strings.NewReader(text)
			svg, err := cmd.Output()
			if err != nil {
				t.Fatalf("inferno-flamegraph: %v", err)
			}
			m := regexp.MustCompile(`total_samples="(\d+)"`).FindSubmatch(svg)
			if m == nil || string(m[1]) != strconv.FormatInt(want, 10) {
				t.Fatalf("inferno-flamegraph total %q, want %d", m, want)
			}
		})
	}
}

// On perf script, the folded stacks are inferno-collapse-perf's own, line
// for line; inferno weighs by the sample period, flameox counts samples
// (as its hotspots do), so each inferno count is flameox's times the one
// period of the recording. (inferno also tidies C++ names, dropping
// "()" from operator(), and keeps only a recording's first event; the
// fixtures compared have plain C names and one event.)
func TestFoldedMatchesInfernoCollapsePerf(t *testing.T) {
	collapse := lookTool(t, "inferno-collapse-perf")
	for _, name := range []string{"hot.perf.txt"} {
		t.Run(name, func(t *testing.T) {
			path := fixture("perf", name)
			text, _ := draw(t, flamegraph.Folded, false, nil, path)
			ours := foldedLines(t, text)
			out, err := exec.Command(collapse, path).Output()
			if err != nil {
				t.Fatalf("inferno-collapse-perf: %v", err)
			}
			theirs := foldedLines(t, string(out))
			if len(ours) != len(theirs) {
				t.Fatalf("%d stacks, inferno %d", len(ours), len(theirs))
			}
			var period int64
			for st, n := range ours {
				m, ok := theirs[st]
				if !ok {
					t.Fatalf("stack %q is not inferno's", st)
				}
				if period == 0 {
					period = m / n
				}
				if m != n*period {
					t.Fatalf("stack %q: inferno %d, flameox %d samples × period %d", st, m, n, period)
				}
			}
		})
	}
}

// A recording of two events pools them in one picture: the summary says
// so and is incomplete.
func TestFoldedPooledEvents(t *testing.T) {
	_, s := draw(t, flamegraph.Folded, false, nil, fixture("perf", "two.perf.txt"))
	if s.Complete || !slices.ContainsFunc(s.Limitations, func(l string) bool { return strings.Contains(l, "events") }) {
		t.Fatalf("summary %+v", s)
	}
}

// The same input draws the same bytes.
func TestDeterministic(t *testing.T) {
	for _, f := range []string{flamegraph.SVG, flamegraph.HTML, flamegraph.Folded} {
		a, _ := draw(t, f, false, nil, fixture("perf", "hot.perf.txt"))
		b, _ := draw(t, f, false, nil, fixture("perf", "hot.perf.txt"))
		if a != b {
			t.Fatalf("%s differs between two runs", f)
		}
	}
}

// The differential folded output is FlameGraph's difffolded: both
// weights on each line; the slower parse's grew.
func TestDiffFolded(t *testing.T) {
	text, _ := draw(t, flamegraph.Folded, false, []string{fixture("diff", "base.cpuprofile")}, fixture("diff", "slow.cpuprofile"))
	found := false
	for _, ln := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(ln)
		if !strings.HasSuffix(f[len(f)-3], ";parse") && !strings.HasSuffix(strings.Join(f[:len(f)-2], " "), ";parse") {
			continue
		}
		base, _ := strconv.Atoi(f[len(f)-2])
		nu, _ := strconv.Atoi(f[len(f)-1])
		if nu < 2*base || base == 0 {
			t.Fatalf("parse: %q", ln)
		}
		found = true
	}
	if !found {
		t.Fatalf("no parse stack in\n%s", text)
	}
}

// chromium finds Debian's headless browser.
func chromium(t *testing.T) string {
	t.Helper()
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skip("chromium is not on PATH: apt-get install chromium (.ci/run installs it)")
	return ""
}

// headless loads a page in Chromium and returns its DOM after the
// scripts ran, and the console messages it logged; a screenshot is left
// beside the page for a person to look at.
func headless(t *testing.T, browser, page, query string) (dom string, console []string) {
	t.Helper()
	profile := t.TempDir()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + profile,
		"--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"}
	url := "file://" + page + query
	cmd := exec.Command(browser, append(args, "--dump-dom", url)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	var out []byte
	go func() { var err error; out, err = cmd.Output(); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chromium: %v\n%s", err, stderr.String())
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatal("chromium did not finish in 90 s")
	}
	for _, ln := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(ln, "CONSOLE") || strings.Contains(ln, "Uncaught") {
			console = append(console, ln)
		}
	}
	shot := exec.Command(browser, append(args, "--screenshot="+page+".png", "--window-size=1200,900", url)...)
	shot.Dir = filepath.Dir(page)
	if err := shot.Run(); err != nil || !fileExists(page+".png") {
		t.Errorf("screenshot: %v", err)
	}
	return string(out), console
}

var frameRE = regexp.MustCompile(`<g class="f" data-n="([^"]*)" data-x="([^"]*)" data-w="([^"]*)" data-d="(\d+)"( data-match="1")?><title>[^<]*</title><rect x="([^"]*)" y="[^"]*" width="([^"]*)"`)

// The flame graph loads in Chromium with no console message, its root
// spans the width and weighs the total, and a search for the hot function
// highlights its frames and states their share.
func TestPicturesInChromium(t *testing.T) {
	browser := chromium(t)
	for _, c := range []struct {
		format, name string
		icicle       bool
		baseline     []string
	}{
		{flamegraph.SVG, "flame.svg", false, nil},
		{flamegraph.SVG, "icicle.svg", true, nil},
		{flamegraph.HTML, "page.html", false, nil},
		{flamegraph.SVG, "diff.svg", false, []string{fixture("diff", "base.cpuprofile")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			text, s := draw(t, c.format, c.icicle, c.baseline, fixture("diff", "slow.cpuprofile"))
			dir := t.TempDir()
			page := filepath.Join(dir, c.name)
			if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			dom, console := headless(t, browser, page, "?s=%5Eparse%24")
			if len(console) > 0 {
				t.Fatalf("console: %q", console)
			}
			frames := frameRE.FindAllStringSubmatch(dom, -1)
			if len(frames) == 0 {
				t.Fatalf("no frames in the DOM:\n%.2000s", dom)
			}
			root := frames[0]
			total := metric(t, s, table.MetricTotalWeight)
			if root[1] != "all" || root[3] != strconv.FormatFloat(total, 'f', -1, 64) || root[7] != "1180.00" {
				t.Fatalf("root %q, total %v", root[:8], total)
			}
			var parseW float64
			for _, f := range frames {
				matched := f[5] != ""
				if matched != (f[1] == "parse") {
					t.Fatalf("frame %s: matched %v", f[1], matched)
				}
				if matched {
					w, _ := strconv.ParseFloat(f[3], 64)
					parseW += w
				}
			}
			want := fmt.Sprintf("Matched: %.2f%%", 100*parseW/total)
			if parseW == 0 || !strings.Contains(dom, want) {
				t.Fatalf("want %q in the DOM", want)
			}
			if c.format == flamegraph.HTML && !strings.Contains(dom, `<table id="hotspots">`) {
				t.Fatal("the page has no hotspot table")
			}
			if c.baseline != nil && !slices.ContainsFunc(frames, func(f []string) bool { return f[1] == "parse" }) {
				t.Fatal("no parse frame in the differential graph")
			}
			t.Logf("screenshot: %s.png", page)
		})
	}
}
