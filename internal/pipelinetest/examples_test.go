package pipelinetest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The examples people copy — README.md's code blocks and the Examples of
// every --help — are checked against the binaries: each flameox command
// in them must parse with the current flags, and every README example
// that can run here runs and succeeds on fixtures named as the README
// names them. A renamed flag or a pipeline that never reaches flameox
// fails here instead of in a user's shell.

// shellLine is one command line split into its pipeline and list
// segments (|, ||, &&, ;), each a list of words with quotes removed.
// It knows enough shell for examples: quotes, backslashes, comments.
func shellLine(line string) [][]string {
	var segs [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	cut := func() {
		flush()
		if len(words) > 0 {
			segs = append(segs, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				w.WriteByte(line[i])
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			cut()
			return segs
		case c == '|' || c == ';' || c == '&':
			cut()
			if i+1 < len(line) && (line[i+1] == '|' || line[i+1] == '&') {
				i++
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	cut()
	return segs
}

// readmeLines returns the command lines of README.md's code blocks,
// continuation lines joined.
func readmeLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in, cont := false, ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cont += s
			continue
		}
		out = append(out, cont+l)
		cont = ""
	}
	return out
}

// helpExamples returns the example lines of a command's --help.
func helpExamples(t *testing.T, argv ...string) []string {
	t.Helper()
	out, err := exec.Command(filepath.Join(binDir, argv[0]), append(argv[1:], "--help")...).Output()
	if err != nil {
		t.Fatalf("%v --help: %v", argv, err)
	}
	var lines []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.TrimSpace(l) == "Examples:":
			in = true
		case in && l != "" && !strings.HasPrefix(l, " "):
			in = false
		case in && strings.TrimSpace(l) != "":
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) == 0 {
		t.Errorf("%v --help has no examples", argv)
	}
	return lines
}

// parses runs a flameox command of an example with --help added (before
// its "--", if it has one): kong refuses unknown flags, bad values and
// misplaced arguments before it prints help, so exit 0 means the example
// parses with the current flags.
func parses(t *testing.T, src string, seg []string) {
	t.Helper()
	args := append([]string(nil), seg[1:]...)
	at := len(args)
	for i, a := range args {
		if a == "--" {
			at = i
			break
		}
	}
	args = append(args[:at], append([]string{"--help"}, args[at:]...)...)
	cmd := exec.Command(filepath.Join(binDir, seg[0]), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("%s: %s does not parse with the current flags: %v\n%s", src, strings.Join(seg, " "), err, stderr.String())
	}
	for _, w := range seg {
		if strings.Contains(w, "ARGV") || w == "NAME" || w == "PROVIDER" {
			t.Errorf("%s: %s has a placeholder (%s), not a real command", src, strings.Join(seg, " "), w)
		}
	}
}

func TestHelpExamplesParse(t *testing.T) {
	srcs := [][]string{{"flameox-decode"}, {"flameox-rank"}, {"flameox-preserve"}, {"flameox-mcp"}, {"flameox-capture"}}
	out, _ := exec.Command(filepath.Join(binDir, "flameox-capture"), "--help").Output()
	for _, l := range strings.Split(string(out), "\n") {
		// Provider commands are listed as "  NAME  Title" under Providers.
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(l, "  ") && !strings.HasPrefix(f[0], "-") && !strings.HasPrefix(f[0], "flameox") && f[0] != "setup" {
			if exec.Command(filepath.Join(binDir, "flameox-capture"), f[0], "--help").Run() == nil {
				srcs = append(srcs, []string{"flameox-capture", f[0]})
			}
		}
	}
	if len(srcs) < 8 {
		t.Fatalf("found %d commands and provider commands, want the five and every provider", len(srcs))
	}
	for _, src := range srcs {
		for _, l := range helpExamples(t, src...) {
			for _, seg := range shellLine(l) {
				if strings.HasPrefix(seg[0], "flameox-") {
					parses(t, strings.Join(src, " ")+" --help", seg)
				}
			}
		}
	}
}

// runnable are the programs a README example may use to be run here, not
// only parsed: flameox's own, and producers present on this machine.
func runnable(seg []string) bool {
	switch seg[0] {
	case "flameox-rank", "flameox-decode", "flameox-preserve":
		return true
	case "python3":
		_, err := exec.LookPath("python3")
		return err == nil
	case "flameox-capture":
		if len(seg) > 1 && seg[1] == "node-cpu-profile" {
			_, err := exec.LookPath("node")
			return err == nil
		}
	}
	return false
}

func TestReadmeExamples(t *testing.T) {
	dir := t.TempDir()
	root, _ := filepath.Abs("../..")
	for name, src := range map[string]string{
		"app.cpuprofile": "testdata/v8/hotspot.cpuprofile",
		"stacks.folded":  "testdata/collapsed/hot.folded",
		"out.perf.txt":   "testdata/perf/hot.perf.txt",
		"app.js":         "examples/hotspot/app.js",
		"app.py":         "testdata/pstats/workload.py",
		// Two runs of one workload, one function made 3x slower.
		"before.cpuprofile":       "testdata/diff/base.cpuprofile",
		"after.cpuprofile":        "testdata/diff/slow.cpuprofile",
		"cpu.pprof":               "testdata/pprof/cpu.pb.gz",
		"mutex.pprof":             "testdata/pprof/mutex.pb.gz",
		"mem.pprof":               "testdata/pprof/heap-allocs.pb.gz",
		"memray-app.1234.bin":     "testdata/memray/lz4-pyalloc.bin",
		"profile.speedscope.json": "testdata/speedscope/pyspy-0.4.1-two-threads.speedscope.json",
	} {
		b, err := os.ReadFile(filepath.Join(root, src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	for i := range 5000 {
		log.WriteString("build step " + strings.Repeat("x", i%70) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "big.log"), []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ran, parsed := 0, 0
	for _, line := range readmeLines(t) {
		// Analysers exit 1 when they find something, the very run worth
		// ranking; `&&` would then never run flameox.
		for _, a := range []struct{ tool, keep string }{{"gosec ", "-no-fail"}, {"eslint ", "|| true"}} {
			if strings.Contains(line, a.tool) && strings.Contains(line, "&&") && !strings.Contains(line, a.keep) {
				t.Errorf("README.md: %q skips flameox whenever %sfinds issues (use %s)", line, a.tool, a.keep)
			}
		}
		segs := shellLine(line)
		all, any := true, false
		for _, seg := range segs {
			if strings.HasPrefix(seg[0], "flameox-") {
				any = true
				parses(t, "README.md", seg)
				parsed++
			}
			all = all && runnable(seg) && !strings.ContainsAny(strings.Join(seg, " "), "<>")
		}
		if !any || !all {
			continue
		}
		t.Run(line, func(t *testing.T) {
			cmd := exec.Command("bash", "-o", "pipefail", "-c", line)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+dir)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if code := runWithin(t, 120*time.Second, cmd); code != 0 {
				t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
			}
			if stdout.Len() == 0 {
				t.Errorf("no output")
			}
		})
		ran++
	}
	// The README has a dozen flameox examples that can run here; a
	// tokenizer that stopped finding them must not pass quietly.
	if ran < 8 || parsed < 20 {
		t.Errorf("ran %d README examples and parsed %d flameox commands; the README has more", ran, parsed)
	}
}
